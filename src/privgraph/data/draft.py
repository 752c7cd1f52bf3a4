"""The draft of a domain codebook, READ FROM THE DATA for its owner to review (not private):
what ``privgraph domain DATA --out FILE`` writes (:func:`draft_with_notes`).

Every row is read, each column on its own, so a level that occurs only in rows with a
missing value elsewhere is kept, and a column is judged by all its values. The draft says,
per column, how its missing values are treated (:mod:`privgraph.data.missing`) and names the
columns a person should look at (identifier-like, very wide).
"""

from __future__ import annotations

import os
from typing import Mapping

import numpy as np
import pandas as pd

from privgraph.data.bins import make_bins
from privgraph.data.domain import Domain, Kind
from privgraph.data.encoding import check_overrides, infer_column, natural_kind, parse_kind
from privgraph.data.files import read_table
from privgraph.data.missing import MISSING, missing_mask
from privgraph.validation import InvalidInput

#: How many bins a draft gives a continuous column (equally wide over its bounds).
DRAFT_BINS = 10


def draft_codebook(data, *, columns=None, kinds=None, levels=None) -> Domain:
    """A draft domain READ FROM THE DATA, for a person to review: not private
    (:func:`draft_with_notes`'s domain: every row is read, and a column's missing values
    become its missing level).

    >>> import pandas as pd
    >>> d = draft_codebook(pd.DataFrame({"a": ["y", "x", None], "v": [0.5, 2.0, 1.0]}))
    >>> d.levels[0], d.bounds_of("v"), d.bins_of("v").count, d.public
    (('x', 'y', '(missing)'), (0.5, 2.0), 10, False)
    """
    return draft_with_notes(data, columns=columns, kinds=kinds, levels=levels)[0]


#: A drafted integer column with more distinct values than this is drafted as continuous
#: (observed bounds, :data:`DRAFT_BINS` bins), and any column with more levels is named.
WIDE_LEVELS = 100
#: A drafted column with at least this share of distinct values among its values (and more
#: than :data:`WIDE_LEVELS` of them) is named as an identifier.
IDENTIFIER_SHARE = 0.9


def draft_with_notes(data, *, columns=None, kinds=None, levels=None) -> tuple[Domain, list[str]]:
    """``(draft domain, notes)``: a domain READ FROM THE DATA, for a person to review (not
    private), and one line per column the person should look at.

    Every row is read, each column on its own: discrete columns get the levels that occur
    (in the data's natural order, see :mod:`privgraph.data.encoding`), continuous columns
    their observed minimum and maximum as bounds and :data:`DRAFT_BINS` equally wide bins;
    a column with missing values (:mod:`privgraph.data.missing`) gets ``"missing":
    "level"``, one without ``"missing": "invalid"``. An integer column with more than
    :data:`WIDE_LEVELS` distinct values is drafted as continuous (bins over its range). The
    notes name identifier-like columns (nearly every value distinct: drop them) and columns
    with more than :data:`WIDE_LEVELS` levels. All of it reveals the data: review the draft
    (widen the bounds to public limits, add levels the data lacks, remove rare ones only the
    data could tell) before using it as a public domain. The result has ``public=False``.

    ``data`` is a DataFrame or a CSV/Parquet path.

    >>> import pandas as pd
    >>> d, notes = draft_with_notes(pd.DataFrame({"id": [f"p{i}" for i in range(200)], "n": [i % 150 for i in range(200)],
    ...                                           "s": ["a", None] * 100}))
    >>> d.kinds[1].value, d.levels[2], d.missing_names
    ('continuous', ('a', '(missing)'), ('s',))
    >>> for note in notes:
    ...     print(note)
    column 'id' looks like an identifier (200 distinct values in 200 rows): leave it out (--columns), it says nothing a model can use
    column 'n' has 150 distinct integers: drafted as continuous with 10 bins over its observed range; give it public "bounds" and "bins" (or "edges")
    """
    if isinstance(data, (str, os.PathLike)):
        check_scalar_columns(_nested_file_columns(data, columns), data)  # the schema only, before reading
    frame = read_table(data, columns) if isinstance(data, (str, os.PathLike)) else data
    if columns is not None:
        frame = frame[list(columns)]
    check_scalar_columns({name: type(value).__name__ for name in frame.columns if frame[name].dtype == object
                          for value in frame[name].head(1000) if isinstance(value, _NESTED)}, "the DataFrame")
    kinds, levels = check_overrides(frame.columns, kinds or {}, levels or {})
    notes: list[str] = []
    specs = [_draft_column(str(c), frame[c], kinds.get(c), levels.get(c), notes) for c in frame.columns]
    bins = tuple(None if b is None else make_bins(b, DRAFT_BINS) for _, _, b, _ in specs)
    sizes = tuple(len(lv) if b is None else b.count + has for (_, lv, _, has), b in zip(specs, bins))
    return Domain(tuple(str(c) for c in frame.columns), sizes, tuple(k for k, _, _, _ in specs),
                  tuple(lv for _, lv, _, _ in specs), tuple(b for _, _, b, _ in specs), public=False, bins=bins), notes


def _draft_column(name: str, values, kind, levels, notes: list[str]):
    """``(kind, levels with the missing level, observed bounds or None, has a missing level)``
    of one column, every row read; ``notes`` gets a line where the column needs a look."""
    natural = parse_kind(name, kind) if kind is not None else natural_kind(values)
    missing = missing_mask(values, continuous=natural is Kind.CONTINUOUS)
    present = values[~missing]
    has = bool(missing.any())
    distinct = int(present.nunique())
    if distinct == 0:
        raise InvalidInput(f"column {name!r} has no values (every row is missing): leave it out (--columns)")
    if distinct > WIDE_LEVELS and distinct >= IDENTIFIER_SHARE * len(present) and natural is not Kind.CONTINUOUS:
        notes.append(f"column {name!r} looks like an identifier ({distinct} distinct values in {len(present)} rows): "
                     "leave it out (--columns), it says nothing a model can use")
    if kind is None and natural is Kind.ORDINAL and distinct > WIDE_LEVELS and pd.api.types.is_integer_dtype(present.dtype):
        natural = Kind.CONTINUOUS
        if not notes or f"column {name!r}" not in notes[-1]:
            notes.append(f"column {name!r} has {distinct} distinct integers: drafted as continuous with {DRAFT_BINS} "
                         "bins over its observed range; give it public \"bounds\" and \"bins\" (or \"edges\")")
    extra = (MISSING,) if has else ()
    if natural is Kind.CONTINUOUS:
        return natural, extra, _observed_bounds(pd.to_numeric(present)), has
    if distinct == 1 and not has and levels is None:
        raise InvalidInput(f"column {name!r} has one value only ({present.iloc[0]!r}) in every row: it carries no "
                           "information; leave it out (--columns), or write its entry in the codebook by hand")
    if distinct == 1 and levels is None:
        found = (present.iloc[0],)
    else:
        try:
            found = infer_column(name, present, natural, levels)[1]
        except InvalidInput as err:  # said for Python (levels={...}): say it for the codebook
            if "non-numeric value" not in str(err):
                raise
            raise InvalidInput(f"column {name!r} is drafted as ordinal but holds text that is not a number: draft it "
                               "as nominal (leave it out of --ordinal) and write its levels in order in the codebook, "
                               "with \"kind\": \"ordinal\"") from None
    if distinct > WIDE_LEVELS and (not notes or f"column {name!r}" not in notes[-1]):
        notes.append(f"column {name!r} has {distinct} levels: merge them into fewer, or leave it out (--columns)")
    return natural, tuple(found) + extra, None, has


#: Cell values no codebook column can hold: one cell, many values.
_NESTED = (list, tuple, dict, set, frozenset, np.ndarray)


def _nested_file_columns(path, columns=None) -> dict[str, str]:
    """The columns of a Parquet file whose type is nested (list, struct, map), by name, with
    that type as text: read from the schema, no value read. Other files have none."""
    if not str(path).lower().endswith(".parquet"):
        return {}
    import pyarrow as pa  # lazy: a Parquet schema only; the codebook module stays light for --help
    import pyarrow.parquet as pq  # lazy: as above

    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException):  # not a Parquet file: read_table names it
        return {}
    return {f.name: str(f.type) for f in schema
            if pa.types.is_nested(f.type) and (columns is None or f.name in columns)}


def check_scalar_columns(nested: Mapping[str, str], where) -> None:
    """Refuse the first of ``nested`` (column name to its type), naming it, its type and ``where``.

    >>> check_scalar_columns({}, "d.parquet")
    >>> check_scalar_columns({"tags": "list<element: string>"}, "d.parquet")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: column 'tags' of 'd.parquet' has the nested type list<element: string>: a codebook column holds one level or number a cell; leave it out (--columns)
    """
    for name, kind in nested.items():
        raise InvalidInput(f"column {name!r} of {str(where)!r} has the nested type {kind}: a codebook column holds one "
                           "level or number a cell; leave it out (--columns)")


def _observed_bounds(values) -> tuple[float, float]:
    values = values[np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))]
    lo, hi = float(values.min()), float(values.max())
    return (lo, hi) if lo < hi else (lo - 0.5, hi + 0.5)
