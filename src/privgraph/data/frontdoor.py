"""The front door: user data and a *public* domain in, something the estimators can count.

Every estimator and command reads a user's data through this module, and it enforces the
first rule of privgraph: **the domain is public**. A run needs one of

* a :class:`~privgraph.data.Domain` (by hand, or from a bundled network),
* a codebook file or dict (:mod:`privgraph.data.codebook`, ``--domain domain.json``),
* a DataFrame whose every column is a pandas ``Categorical`` (or boolean): the levels are
  then the dtype's, never the data's;

otherwise it refuses with :class:`DomainRequired` *before reading any value*, and says how
to get one. ``infer_domain=True`` (``--infer-domain``) reads the domain from the data
instead; the result is marked ``public=False`` and every ledger and output of the run then
says "domain read from the data: not private".

A continuous column with public bins (:mod:`privgraph.data.bins`) is coded by its bin: a
number is clipped to the bounds (below ``lo``: bin 0, above ``hi``: the last bin), never an
error; a missing or non-numeric value is an invalid value, like an out-of-domain level.

Values outside the public domain, and missing values of a column without a missing level
(a column whose codebook says ``"missing": "level"``, the default, codes them to that level:
:mod:`privgraph.data.missing`), are handled by a fixed per-record policy that never looks at
the rest of the data and never raises (``invalid=``):

* ``"drop"``: a row with any missing or out-of-domain value (in the columns used) is
  dropped. One record added or removed still changes the kept rows by at most one, so an
  add/remove guarantee on the kept rows holds for the input. Under replace-one it would
  not (a replaced record may become a dropped one, and the kept count is then private), so
  ``"drop"`` is refused there. The default under add/remove.
* ``"recode"``: each such value is replaced by the column's *first* level (list an
  "unknown" level first in the codebook to give such values their own cell); a continuous
  value is clipped to its public bounds and a missing one set to their midpoint; in a
  column read through its public bins a value that is not a number is recoded to bin 0. A fixed
  map of each record on its own: neighbours stay neighbours under both relations and the
  number of rows is unchanged. The default under replace-one; ``PrivateRelease`` uses it
  under both relations (docs/data.md, "What each command does with an invalid record").

How many values were dropped or recoded is private and is not reported; ``privgraph
domain DATA --check D.json`` (which says loudly that it reads the data; DuckDB or ``--engine
spark``) tells the data owner before a release.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from privgraph.data.bins import bin_codes
from privgraph.data.codebook import domain_from_codebook, level_text, read_codebook
from privgraph.data.domain import Domain, Kind, check_countable
from privgraph.data.encoding import dtype_levels
from privgraph.data.encoding import infer_domain as infer_frame_domain  # this module's resolve_domain has an argument infer_domain
from privgraph.data.missing import is_missing_level, missing_code, missing_mask
from privgraph.data.names import check_columns_present
from privgraph.data.engines import CountEngine, DuckDBEngine, NumpyEngine
from privgraph.data.engines.spark_engine import spark_session
from privgraph.data.files import check_path, domain_of_file, file_format, read_table
from privgraph.data.records import Dialect, header_of, spark_records
from privgraph.data.relation import RelationEngine, coded_spark_engine, is_duckdb_relation, is_spark_frame
from privgraph.privacy.neighbours import Neighbours
from privgraph.validation import InvalidInput, one_of

#: Policies for missing and out-of-domain values.
INVALID_POLICIES = ("drop", "recode")


class DomainRequired(InvalidInput):
    """A run was given data but no public domain (raised before any value is read)."""


def how_to_get_a_domain(what: str) -> str:
    """The refusal message: why a domain is needed and the three ways to give one."""
    return (
        f"{what} has no public domain: privgraph's guarantee holds only for levels and bounds "
        "fixed without looking at the data. Give one: a codebook (--domain domain.json, or "
        "domain=\"domain.json\"), a Domain, or pandas Categorical columns. To draft a codebook "
        "to review, run `privgraph domain DATA --out domain.json` (it reads the data: check it "
        "before use). Or pass --infer-domain / infer_domain=True to read the levels from the "
        "data (the output is then marked NOT private)."
    )


def check_invalid(invalid: str | None, neighbours) -> str:
    """The policy for missing/out-of-domain values: ``invalid`` or the relation's default.

    >>> from privgraph.privacy.neighbours import Neighbours
    >>> check_invalid(None, Neighbours.ADD_REMOVE), check_invalid(None, Neighbours.REPLACE_ONE)
    ('drop', 'recode')
    >>> check_invalid("drop", Neighbours.REPLACE_ONE)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: invalid='drop' changes the number of rows, which replace-one neighbours keep public; use invalid='recode' (or add/remove neighbours)
    """

    neighbours = Neighbours.parse(neighbours)
    if invalid is None:
        return "drop" if neighbours is Neighbours.ADD_REMOVE else "recode"
    one_of("invalid", invalid, INVALID_POLICIES)
    if invalid == "drop" and neighbours is Neighbours.REPLACE_ONE:
        raise InvalidInput("invalid='drop' changes the number of rows, which replace-one neighbours keep "
                           "public; use invalid='recode' (or add/remove neighbours)")
    return invalid


#: A column whose released model puts at least this share of rows at its first level, and at
#: most :data:`NEXT_LEVEL_SHARE` at any other, is named in a notice (:func:`first_level_notice`);
#: public, fixed before any data is read.
FIRST_LEVEL_SHARE = 0.97
#: The most a column's second most common level may hold for the notice to name it.
NEXT_LEVEL_SHARE = 0.01


def first_level_notice(domain: Domain, level_shares: Mapping[str, Sequence[float]]) -> str | None:
    """A notice naming the columns whose *released* model looks like a codebook that matched
    no value, or None.

    ``"recode"`` puts every value that does not match the codebook at the column's first
    level; a codebook whose levels match no value of a column (``True``/``False`` in the file
    against levels ``0``/``1``) recodes every row there, so the released one-way shape is one
    level at nearly 100% and every other near 0 (noise only). That shape is what the notice
    looks for: at least :data:`FIRST_LEVEL_SHARE` at the first level and at most
    :data:`NEXT_LEVEL_SHARE` at the second most common. A column that is merely skewed (92%
    zero, the rest spread over other levels) keeps a visible second level and is not named.

    ``level_shares`` maps a column to the share of rows at each of its levels *in a released
    model* (post-processing of the release: no data is read here and nothing is charged).
    A column's missing level (:mod:`privgraph.data.missing`) is no level a value is recoded
    to: its share is left out and the others are taken among the rows that are not missing.

    >>> d = Domain(("a", "b", "c"), (2, 2, 3), levels=(("0", "1"), ("x", "y"), ("0", "1", "2")))
    >>> first_level_notice(d, {"a": [0.995, 0.005], "b": [0.5, 0.5], "c": [0.92, 0.05, 0.03]})
    "note: the released model puts 99.5% of rows at the first level of column(s) a ('0'; the next level 0.5%), where values that do not match the codebook are recoded: unless the data is that skewed, check the codebook's levels against the file"
    >>> first_level_notice(d, {"a": [0.92, 0.08], "c": [0.98, 0.015, 0.005]}) is None
    True
    """
    level_shares = {n: _present_shares(shares, domain.levels[domain.index(n)]) for n, shares in level_shares.items()}
    named = [(n, shares[0], max(shares[1:], default=0.0)) for n, shares in level_shares.items()
             if len(shares) and shares[0] >= FIRST_LEVEL_SHARE and max(shares[1:], default=0.0) <= NEXT_LEVEL_SHARE]
    if not named:
        return None
    cols = ", ".join(f"{n} ({level_text(domain.levels[domain.index(n)][0])!r}; the next level {100 * nxt:.2g}%)"
                     for n, _, nxt in named)
    share = min(first for _, first, _ in named)
    at_least = "" if len(named) == 1 else "at least "
    return (f"note: the released model puts {at_least}{100 * share:.3g}% of rows at the first level of column(s) {cols}, "
            "where values that do not match the codebook are recoded: unless the data is that skewed, check the "
            "codebook's levels against the file")


def _present_shares(shares: Sequence[float], levels: Sequence) -> list[float]:
    """A column's level shares without its missing level's, renormalised over the rest.

    >>> from privgraph.data.missing import MISSING
    >>> _present_shares([0.2, 0.0, 0.8], ("a", "b", MISSING))
    [1.0, 0.0]
    """
    if (m := missing_code(levels)) is None:
        return list(shares)
    rest = [float(x) for i, x in enumerate(shares) if i != m]
    total = sum(rest)
    return [x / total for x in rest] if total > 0 else rest


def resolve_domain(X, domain=None, *, infer_domain: bool = False, names: Sequence[str] | None = None,
                   what: str = "the data") -> Domain:
    """The public domain of a run: given, from a codebook, from Categorical dtypes, or refused.

    ``domain`` is a :class:`Domain`, a codebook path (``.json``) or a codebook dict. Without
    one, a DataFrame of Categorical/boolean columns gives its dtypes' levels; otherwise
    ``infer_domain=True`` reads the levels from ``X`` (``public=False``) and anything else is
    refused with :class:`DomainRequired` before a value is read.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": pd.Categorical(["x"], categories=["x", "y"])})
    >>> resolve_domain(df).levels, resolve_domain(df).public
    ((('x', 'y'),), True)
    >>> resolve_domain(pd.DataFrame({"a": [1, 2]}))
    Traceback (most recent call last):
    ...
    privgraph.data.frontdoor.DomainRequired: the data has no public domain: ...
    >>> resolve_domain(pd.DataFrame({"a": [1, 2]}), infer_domain=True).public
    False
    """
    if domain is not None:
        if isinstance(domain, Domain):
            return domain
        if isinstance(domain, (str, os.PathLike)):
            return read_codebook(domain)
        if isinstance(domain, Mapping):
            return domain_from_codebook(domain)
        raise TypeError(f"domain must be a Domain, a codebook path or a codebook dict, got {type(domain).__name__}")
    frame = _as_frame_or_none(X, names)
    if frame is not None and len(frame.columns) and all(dtype_levels(frame[c]) is not None for c in frame.columns):
        return _domain_from_dtypes(frame)
    if not infer_domain:
        raise DomainRequired(how_to_get_a_domain(what))
    if isinstance(X, (str, os.PathLike)):
        return domain_of_file(X, missing="drop")
    if frame is None:
        raise InvalidInput("infer_domain works on a DataFrame, an array with names or a file; give this data a domain")
    return infer_frame_domain(frame, missing="drop")


def _as_frame_or_none(X, names):

    if isinstance(X, (str, os.PathLike)) or (names is None and not isinstance(X, pd.DataFrame)):
        return None
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        array = np.asarray(X)
        if array.ndim != 2 or array.shape[1] != len(names):
            raise InvalidInput(f"an array needs 2 dimensions and one name per column ({len(names)}), "
                               f"got shape {array.shape}")
        frame = pd.DataFrame(array, columns=[str(n) for n in names])
    if frame.columns.duplicated().any():
        raise InvalidInput(f"duplicate column names {sorted(set(map(str, frame.columns[frame.columns.duplicated()])))}")
    return frame


def _domain_from_dtypes(frame) -> Domain:
    """The domain declared by Categorical/boolean dtypes: no value of the data is read."""

    names, sizes, kinds, levels = [], [], [], []
    for c in frame.columns:
        lv = dtype_levels(frame[c])
        if not lv:
            raise InvalidInput(f"column {str(c)!r} is a Categorical with no categories")
        ordered = isinstance(frame[c].dtype, pd.CategoricalDtype) and frame[c].dtype.ordered
        names.append(str(c))
        sizes.append(len(lv))
        kinds.append(Kind.ORDINAL if ordered else Kind.CATEGORICAL)
        levels.append(lv)
    return Domain(tuple(names), tuple(sizes), tuple(kinds), tuple(levels))


def level_codes(values, levels: Sequence) -> np.ndarray:
    """Codes of ``values`` in ``levels`` (matched by text, :func:`level_text`); -1 if none.

    >>> level_codes([1, "2", 2.0, None, "x"], (1, 2)).tolist()
    [0, 1, 1, -1, -1]
    """

    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    if isinstance(series.dtype, pd.CategoricalDtype) and tuple(series.cat.categories) == tuple(levels) \
            and missing_code(levels) is None:
        return series.cat.codes.to_numpy().astype(np.int64)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    lookup = {level_text(v): i for i, v in enumerate(levels) if not is_missing_level(v)}  # no value spells it
    mapped = np.array([lookup.get(level_text(u), -1) for u in uniques] + [-1], dtype=np.int64)
    return mapped[codes]  # the sentinel -1 of a missing value picks the trailing -1


def clipped_values(values, bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """(values clipped to ``bounds``, which were valid): a missing or non-numeric value
    becomes the bounds' midpoint and is flagged invalid.

    >>> v, ok = clipped_values(["1.5", None, 9, -3], (0.0, 2.0))
    >>> v.tolist(), ok.tolist()
    ([1.5, 1.0, 2.0, 0.0], [True, False, True, True])
    """

    x = pd.to_numeric(pd.Series(list(values) if not isinstance(values, pd.Series) else values),
                      errors="coerce").to_numpy(dtype=np.float64)
    ok = ~np.isnan(x)
    lo, hi = bounds
    return np.where(ok, np.clip(np.nan_to_num(x, nan=0.0, posinf=hi, neginf=lo), lo, hi), (lo + hi) / 2), ok


def encode_public(frame, domain: Domain, invalid: str, *, return_kept: bool = False):
    """Integer codes of ``frame``'s discrete ``domain`` columns under the ``invalid`` policy.

    ``"recode"`` maps a missing or unknown value to code 0; ``"drop"`` drops its row. Never
    raises on a value (a missing column is a schema error, public). A binned continuous
    column is coded by its bin (:func:`column_codes`).

    >>> import pandas as pd
    >>> d = Domain(("a",), (2,), levels=(("no", "yes"),))
    >>> df = pd.DataFrame({"a": ["yes", "maybe", None, "no"]})
    >>> encode_public(df, d, "recode").ravel().tolist(), encode_public(df, d, "drop").ravel().tolist()
    ([1, 0, 0, 0], [1, 0])
    """
    check_columns_present(frame.columns, domain.names)
    discrete = domain.project(domain.discrete_names)
    codes = np.empty((len(frame), len(discrete.names)), dtype=np.int64)
    for j, name in enumerate(discrete.names):
        codes[:, j] = column_codes(frame[name], discrete, name)
    bad = codes < 0
    kept = ~bad.any(axis=1) if invalid == "drop" else np.ones(len(codes), dtype=bool)
    if invalid == "drop":
        codes = codes[kept]
    else:
        codes[bad] = 0
    return (codes, kept) if return_kept else codes


def column_codes(values, domain: Domain, name: str) -> np.ndarray:
    """The codes of one column's values in ``domain``, -1 where a value is invalid: its bin
    for a binned continuous column (:func:`~privgraph.data.bins.bin_codes`), its level's
    code otherwise (after the public dtype check, :func:`check_type_can_match`).

    >>> from privgraph.data.bins import make_bins
    >>> d = Domain(("x",), (2,), (Kind.CONTINUOUS,), bins=(make_bins((0.0, 1.0), 2),))
    >>> column_codes(["0.7", "x", -3], d, "x").tolist()
    [1, -1, 0]

    A column with a missing level (:mod:`privgraph.data.missing`) codes a missing value to it
    (a public level: each record still in one cell, the tables' sensitivities unchanged):

    >>> from privgraph.data.missing import MISSING
    >>> column_codes(["b", None, "", "?"], Domain(("a",), (3,), levels=(("a", "b", MISSING),)), "a").tolist()
    [1, 2, 2, -1]
    """
    bins = domain.bins_of(name)
    levels = domain.levels[domain.index(name)]
    if bins is not None:
        codes = bin_codes(values, bins)
    else:
        if hasattr(values, "dtype"):
            check_type_can_match(name, values.dtype, levels)
        codes = level_codes(values, levels)
    if (missing := missing_code(levels)) is None:
        return codes
    return np.where((codes < 0) & missing_mask(values, continuous=bins is not None), missing, codes)


def check_type_can_match(name: str, dtype, levels: Sequence) -> None:
    """A schema check (public: the column's dtype and the codebook, no value): refuse a
    numeric or boolean column none of whose possible values can spell a level, where every
    value would be invalid and silently recoded (or dropped). Integer codes against a
    codebook of labels are the usual cause.

    >>> import pandas as pd
    >>> check_type_can_match("s", pd.Series([0, 1]).dtype, ("low", "high"))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: column 's' holds int64 values, which can never spell one of its levels ['low', 'high']: give the column its labels (or a Categorical), or a codebook whose levels are those numbers
    >>> check_type_can_match("s", pd.Series([0, 1]).dtype, ("0", "1")), check_type_can_match("b", bool, ("True", "False"))
    (None, None)
    """

    dtype = pd.api.types.pandas_dtype(dtype)
    texts = [level_text(level) for level in levels]
    if pd.api.types.is_bool_dtype(dtype):
        possible = any(t in ("true", "false") for t in texts)
    elif pd.api.types.is_integer_dtype(dtype):
        possible = any(_is_number(t) and float(t).is_integer() for t in texts)
    elif pd.api.types.is_float_dtype(dtype):
        possible = any(_is_number(t) for t in texts)
    else:
        return
    if not possible:
        raise InvalidInput(f"column {name!r} holds {dtype} values, which can never spell one of its levels "
                           f"{list(levels)}: give the column its labels (or a Categorical), or a codebook whose "
                           "levels are those numbers")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def public_codes(codes, domain: Domain, invalid: str) -> np.ndarray:
    """Integer codes (one column per domain column) under the ``invalid`` policy: a code
    outside ``0..size-1`` is an out-of-domain value (its row dropped, or code 0), never an
    error. The shape is public and checked.

    >>> public_codes(np.array([[0, 1], [5, 1], [1, -1]]), Domain.of(a=2, b=2), "recode").tolist()
    [[0, 1], [0, 1], [1, 0]]
    >>> public_codes(np.array([[0, 1], [5, 1]]), Domain.of(a=2, b=2), "drop").tolist()
    [[0, 1]]
    """
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[1] != len(domain.names):
        raise InvalidInput(f"codes must have shape (rows, {len(domain.names)}) for domain {list(domain.names)}, "
                           f"got {codes.shape}")
    if not np.issubdtype(codes.dtype, np.integer):
        raise InvalidInput(f"codes must be integers, got dtype {codes.dtype}")
    codes = codes.astype(np.int64)
    bad = (codes < 0) | (codes >= np.asarray(domain.sizes, dtype=np.int64))
    if invalid == "drop":
        return codes[~bad.any(axis=1)]
    return np.where(bad, 0, codes)




def read_frame(path, domain: Domain, extra: Sequence[str] = ()) -> "pd.DataFrame":  # noqa: F821
    """The domain's columns (and ``extra`` ones) of a CSV/Parquet file, a CSV read by the
    domain's fixed dialect as text, so that no type is guessed from the data (a line that
    does not parse is a row of missing values: :mod:`privgraph.data.records`)."""

    return read_table(path, list(dict.fromkeys(list(domain.names) + list(extra))), as_text=True,
                      dialect=domain.dialect)


def open_engine(X, domain=None, *, names: Sequence[str] | None = None, neighbours, invalid: str | None = None,
                infer_domain: bool = False, columns: Sequence[str] | None = None, what: str = "the data"):
    """A count engine over ``X``'s discrete public-domain columns (the estimators' front door).

    ``X``: a DataFrame, a 2-D array with ``names``, a CSV/Parquet path (counted by DuckDB,
    never loaded whole), a DuckDB relation, a Spark DataFrame (both coded in SQL by the
    public domain), or a count engine (used as it is: its domain is its own). Returns
    the engine; its ``domain.public`` says whether the domain was public. ``columns``
    restricts the engine to those domain columns (the others are not read).

    >>> import pandas as pd
    >>> from privgraph.privacy.neighbours import Neighbours
    >>> d = Domain(("a", "b"), (2, 2), levels=(("n", "y"), (0, 1)))
    >>> e = open_engine(pd.DataFrame({"a": ["y", "?"], "b": [1, 1]}), d, neighbours=Neighbours.REPLACE_ONE)
    >>> e.counts(["a", "b"]).tolist()
    [[0, 1], [0, 1]]
    """

    return open_private(X, domain, names=names, neighbours=neighbours, invalid=invalid, infer_domain=infer_domain,
                        what=what).engine(columns)


@dataclass(frozen=True)
class PrivateData:
    """A private-data handle: the data as given, its resolved public domain, the relation and
    the invalid-value policy (:func:`open_private` makes it, once per fit). The data is not
    read when the handle is made; :meth:`engine` counts it, :meth:`encoded` codes it in memory.

    ``source``: what was given (DataFrame, 2-D array with ``names``, CSV/Parquet path, DuckDB
    relation, Spark DataFrame, count engine, or another estimator's records); ``frame``: an
    in-memory handle's records (a file read as text by the domain's dialect); ``codes``: its
    integer codes under the policy where they were given as codes.
    """

    source: object
    domain: Domain
    neighbours: Neighbours
    invalid: str
    names: tuple[str, ...] | None = None
    frame: object = None
    codes: np.ndarray | None = None

    @property
    def public(self) -> bool:
        """Whether the domain was fixed without reading the data."""
        return self.domain.public

    @property
    def dialect(self) -> Dialect | None:
        """The CSV dialect a file is read by (the codebook's)."""
        return self.domain.dialect

    def under(self, neighbours, invalid: str | None = None) -> "PrivateData":
        """This handle under ``neighbours`` with ``invalid`` or that relation's default policy
        (nothing re-read)."""
        neighbours = Neighbours.parse(neighbours)
        return replace(self, neighbours=neighbours, invalid=check_invalid(invalid, neighbours))

    def in_memory(self, extra: Sequence[str] = ()) -> "PrivateData":
        """This handle with its records in memory (a file read as text by the domain's dialect,
        with the ``extra`` columns); the data as given where it is a DataFrame or codes."""
        if self.frame is not None or self.codes is not None:
            return self
        if isinstance(self.source, (str, os.PathLike)):
            return replace(self, frame=read_frame(self.source, self.domain, extra=extra))
        if isinstance(self.source, pd.DataFrame):
            return replace(self, frame=self.source)
        return replace(self, codes=public_codes(self.source, self.domain, self.invalid))

    def engine(self, columns: Sequence[str] | None = None) -> CountEngine:
        """A count engine over the handle's discrete public-domain columns (``columns``: only
        those, the others not read); a count engine given is used as it is.

        >>> import pandas as pd
        >>> d = Domain(("a", "b"), (2, 2), levels=(("n", "y"), (0, 1)))
        >>> data = open_private(pd.DataFrame({"a": ["y", "?"], "b": [1, 1]}), d, neighbours="replace_one")
        >>> data.engine().counts(["a", "b"]).tolist()
        [[0, 1], [0, 1]]
        """
        if isinstance(self.source, CountEngine):
            return self.source
        if self.codes is not None:
            return NumpyEngine(self.domain, self.codes)
        domain = self.domain if columns is None else self.domain.project(list(dict.fromkeys(columns)))
        domain = check_countable(domain)  # bounds-only continuous columns: their public default bins
        X = self.source if self.frame is None else self.frame
        if isinstance(X, (str, os.PathLike)):
            return DuckDBEngine(Path(X), domain=domain, invalid=self.invalid)
        if is_duckdb_relation(X):
            return RelationEngine(X, domain, self.invalid)
        if is_spark_frame(X):
            return coded_spark_engine(X, domain, self.invalid)
        frame = _as_frame_or_none(X, self.names)
        if frame is None:
            raise InvalidInput("X must be a DataFrame, a 2-D array with names=[...], a CSV/Parquet path or a count "
                               "engine")
        return NumpyEngine(domain, encode_public(frame, domain, self.invalid))

    def encoded(self, domain: Domain, drop: Sequence[str] = ()):
        """``(codes, kept rows)`` of an in-memory handle's records over ``domain`` (a projection
        of the handle's) under the policy, ``drop`` columns left out; given codes as they are."""
        if self.codes is not None:
            return self.codes, None
        frame = self.frame.drop(columns=list(drop)) if drop else self.frame
        return encode_public(frame, domain, self.invalid, return_kept=True)


def open_private(X, domain=None, *, neighbours, invalid: str | None = None, infer_domain: bool = False,
                 names: Sequence[str] | None = None, what: str = "X", in_memory: bool = False,
                 extra: Sequence[str] = (), codes: bool = False, engine: str | None = None,
                 spark_master: str | None = None) -> PrivateData:
    """The one front door: ``X`` and its public ``domain`` opened once, as a :class:`PrivateData`.

    The policy is checked against the relation (:func:`check_invalid`), then the domain
    resolved once (:func:`resolve_domain`; a count engine's is its own, and ``domain=`` with
    one is refused). ``in_memory``: a file's records are read here as text by the domain's
    dialect (:func:`read_frame`, with the ``extra`` columns, e.g. an individual's id, that are
    no part of the domain, and dropped from a DataFrame before its domain is resolved).
    ``codes``: an array without ``names`` is integer codes of ``domain`` (a :class:`Domain`),
    out-of-domain codes under the policy (:func:`public_codes`). ``engine``: ``X`` is a file
    path, opened for that engine by the resolved domain's dialect (:func:`open_file`: the
    commands). A handle given is returned under this relation and policy (``domain=`` refused).

    >>> import pandas as pd
    >>> data = open_private(pd.DataFrame({"a": pd.Categorical(["x"], categories=["x", "y"])}), neighbours="add_remove")
    >>> data.domain.levels, data.invalid, data.public
    ((('x', 'y'),), 'drop', True)
    """
    if isinstance(X, PrivateData):
        if domain is not None:
            raise InvalidInput("opened data carries its own domain: do not pass domain= as well")
        X = X.under(neighbours, invalid)
        return X.in_memory(extra) if in_memory else X
    neighbours = Neighbours.parse(neighbours)
    if isinstance(X, CountEngine):
        if domain is not None:
            raise InvalidInput("a count engine carries its own domain: do not pass domain= as well")
        return PrivateData(X, X.domain, neighbours, check_invalid(invalid, neighbours))
    invalid = check_invalid(invalid, neighbours)
    names = None if names is None else tuple(names)
    as_codes = codes and isinstance(X, np.ndarray) and names is None
    if as_codes or (in_memory and not isinstance(X, (str, os.PathLike, pd.DataFrame))):
        if not isinstance(domain, Domain):
            raise InvalidInput("integer-coded data needs its domain; pass domain=Domain(...)")
        return PrivateData(X, domain, neighbours, invalid, codes=public_codes(X, domain, invalid))
    if in_memory and isinstance(X, pd.DataFrame):
        frame = X.drop(columns=list(extra)) if extra else X
        return PrivateData(X, resolve_domain(frame, domain, infer_domain=infer_domain, names=names, what=what),
                           neighbours, invalid, names, frame=X)
    public = resolve_domain(X, domain, infer_domain=infer_domain, names=names, what=what)
    if engine is not None:  # a command's file: the path checked, a Spark frame read by the dialect
        X = open_file(X, engine, public.dialect, spark_master=spark_master)
    data = PrivateData(X, public, neighbours, invalid, names)
    return data.in_memory(extra) if in_memory else data


ENGINES = ("duckdb", "spark")


def check_engine(engine: str) -> str:
    """``engine`` if it names a file engine of :data:`ENGINES`, else a one-line error.

    >>> check_engine("polars")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --engine must be one of ('duckdb', 'spark'), got 'polars'
    """
    one_of("--engine", engine, ENGINES)
    return engine


def open_file(path, engine: str = "duckdb", dialect=None, *, spark_master: str | None = None):
    """What the estimators take for a data file counted by ``engine``: the path itself
    (DuckDB, out of core) or a Spark DataFrame on the session
    :func:`~privgraph.data.engines.spark_engine.spark_session` gives (the active one, else
    ``spark_master``, ``$PRIVGRAPH_SPARK_MASTER`` or ``local[*]``): a CSV's records by the
    fixed ``dialect`` (:func:`privgraph.data.records.spark_records`, every value text, so no
    type is guessed from the data), a Parquet file with its types.
    """

    path = check_path(path)
    if check_engine(engine) == "duckdb":
        return path
    spark = spark_session(spark_master)
    if file_format(path) == "parquet":
        return spark.read.parquet(str(path))
    dialect = dialect or Dialect()
    return spark_records(spark, path, header_of(path, dialect), dialect)


__all__ = ["ENGINES", "DomainRequired", "PrivateData", "open_private", "check_engine", "open_file", "INVALID_POLICIES", "check_invalid", "clipped_values", "column_codes", "encode_public",
           "how_to_get_a_domain", "level_codes", "open_engine", "read_frame", "resolve_domain"]
