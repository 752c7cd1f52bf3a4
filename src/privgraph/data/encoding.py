"""From user data to a :class:`~privgraph.data.domain.Domain` and integer codes.

Rules (also in ``docs/data.md``):

* **Kinds.** A pandas ordered ``Categorical`` is ordinal in its categories' order; an
  unordered one is categorical in its categories' order. Integer columns are ordinal in
  numeric order, floats are continuous, booleans and strings are categorical. ``kinds=``
  overrides any of these.
* **Order.** Strings are never ordered alphabetically by accident: a string column declared
  ordinal needs its order (``levels={"age": ["young", "adult", "old"]}``) unless every value
  is a number written as text, in which case the numeric order is used ("2" before "10").
  A non-numeric value in such a column is an error that names it. A text column whose every
  level holds a number (``"before-1980"``, ``"1980-1984"``) is drafted in the numeric order of
  each level's first number, ties by its last, so a person reviewing the draft finds ranges in
  order; text without numbers is alphabetical (the order of a nominal column means nothing).
* **Missing values** (``None``, ``NaN``, ``pd.NA``) are an error by default. With
  ``missing="drop"`` every row that is incomplete in *any* column of the domain is dropped,
  so all tables count the same rows. Dropping is not free for privacy: see ``docs/data.md``.
* **Levels are public.** Levels inferred from the data reveal which values occur; for a
  private release give ``levels=`` (or use a domain fixed in advance).
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from privgraph.data.bins import bin_codes
from privgraph.data.domain import Domain, Kind
from privgraph.validation import InvalidInput, UnknownName, one_of

MISSING_POLICIES = ("error", "drop")


def check_missing_policy(missing: str) -> str:
    """Return ``missing`` if it is ``"error"`` or ``"drop"``, else raise ValueError.

    >>> check_missing_policy("drop")
    'drop'
    >>> check_missing_policy("ignore")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: missing must be one of ('error', 'drop'), got 'ignore'
    """
    one_of("missing", missing, MISSING_POLICIES)
    return missing


def infer_domain(
    frame: pd.DataFrame,
    *,
    kinds: Mapping[str, Kind | str] | None = None,
    levels: Mapping[str, Sequence] | None = None,
    missing: str = "error",
) -> Domain:
    """The domain of a DataFrame's columns (see the module docstring for the rules).

    Examples
    --------
    >>> df = pd.DataFrame({"age": ["old", "young", "adult"], "n": [3, 1, 2]})
    >>> d = infer_domain(df, kinds={"age": "ordinal"}, levels={"age": ["young", "adult", "old"]})
    >>> d.levels, [k.value for k in d.kinds]
    ((('young', 'adult', 'old'), (1, 2, 3)), ['ordinal', 'ordinal'])
    >>> infer_domain(df, kinds={"age": "ordinal"})
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: column 'age' is declared ordinal but holds the non-numeric value 'old'; give its order with levels={'age': [...]}
    """
    frame = complete_rows(frame, list(frame.columns), missing)
    kinds, levels = check_overrides(frame.columns, kinds or {}, levels or {})
    names = tuple(str(c) for c in frame.columns)
    cols = [infer_column(str(c), frame[c], kinds.get(c), levels.get(c)) for c in frame.columns]
    given = [c in levels or dtype_levels(frame[c]) is not None for c in frame.columns]
    return Domain(
        names,
        tuple(c[2] for c in cols),
        tuple(c[0] for c in cols),
        tuple(c[1] for c in cols),
        public=all(g or c[0] is Kind.CONTINUOUS for g, c in zip(given, cols)),
    )


def domain_of_array(
    array,
    names: Sequence[str],
    *,
    kinds: Mapping[str, Kind | str] | None = None,
    levels: Mapping[str, Sequence] | None = None,
    missing: str = "error",
) -> Domain:
    """The domain of a 2-D numpy array whose columns are named by ``names`` (as :func:`infer_domain`).

    Integer columns are ordinal in numeric order, floats continuous (NaN is missing).

    >>> domain_of_array(np.array([[0, 1], [1, 2], [0, 0]]), ["a", "b"]).shape
    (2, 3)
    >>> domain_of_array(np.zeros(3), ["a"])
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: array must be 2-D with one column per name (1), got shape (3,)
    """
    array = np.asarray(array)
    if array.ndim != 2 or array.shape[1] != len(names):
        raise InvalidInput(
            f"array must be 2-D with one column per name ({len(names)}), got shape {array.shape}"
        )
    return infer_domain(pd.DataFrame(array, columns=list(names)), kinds=kinds, levels=levels, missing=missing)


def dtype_levels(values: pd.Series) -> tuple | None:
    """The levels a column's dtype declares (a Categorical's categories, or a boolean's
    False/True), read without looking at its values; None for any other dtype.

    >>> dtype_levels(pd.Series(pd.Categorical(["b"], categories=["a", "b"]))), dtype_levels(pd.Series([1]))
    (('a', 'b'), None)
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        return tuple(values.cat.categories)
    if pd.api.types.is_bool_dtype(values.dtype):
        return (False, True)
    return None


def complete_rows(frame: pd.DataFrame, names: Sequence[str], missing: str) -> pd.DataFrame:
    """``frame`` unchanged if complete; its complete rows under ``missing="drop"``.

    >>> df = pd.DataFrame({"a": [1, None, 2]})
    >>> len(complete_rows(df, ["a"], "drop"))
    2
    >>> complete_rows(df, ["a"], "error")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: column 'a' has 1 missing value(s) (first at row 1); pass missing='drop' to drop incomplete rows (see docs/data.md for what that means for privacy)
    """
    check_missing_policy(missing)
    isna = frame[list(names)].isna()
    if not isna.to_numpy().any():
        return frame
    if missing == "drop":
        return frame.loc[~isna.any(axis=1).to_numpy()]
    name = next(c for c in isna.columns if isna[c].any())
    first = int(np.flatnonzero(isna[name].to_numpy())[0])
    raise InvalidInput(
        f"column {name!r} has {int(isna[name].sum())} missing value(s) (first at row {first}); "
        "pass missing='drop' to drop incomplete rows (see docs/data.md for what that means "
        "for privacy)"
    )


def infer_column(name: str, values: pd.Series, kind, levels) -> tuple[Kind, tuple, int]:
    """(kind, levels, size) of one complete column; ``kind``/``levels`` may be None."""
    kind = parse_kind(name, kind) if kind is not None else natural_kind(values)
    if levels is not None and kind is Kind.CONTINUOUS:
        raise InvalidInput(f"column {name!r} is continuous: it takes no levels (make it ordinal to give them)")
    if levels is not None:
        return kind, _check_given_levels(name, values, levels), len(levels)
    if kind is Kind.CONTINUOUS:
        _check_not_constant(name, values.unique())
        return kind, (), 0
    found = _natural_levels(name, values, kind)
    _check_not_constant(name, found)
    return kind, found, len(found)


def natural_kind(values: pd.Series) -> Kind:
    """A column's kind from its dtype alone (module docstring), its values unread.

    >>> natural_kind(pd.Series([1, None], dtype="Int64")).value, natural_kind(pd.Series([0.5])).value
    ('ordinal', 'continuous')
    """
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return Kind.ORDINAL if dtype.ordered else Kind.CATEGORICAL
    if pd.api.types.is_bool_dtype(dtype):
        return Kind.CATEGORICAL
    if pd.api.types.is_integer_dtype(dtype):
        return Kind.ORDINAL
    if pd.api.types.is_float_dtype(dtype):
        return Kind.CONTINUOUS
    return Kind.CATEGORICAL


def _natural_levels(name: str, values: pd.Series, kind: Kind) -> tuple:
    if isinstance(values.dtype, pd.CategoricalDtype):
        return tuple(values.cat.categories)
    unique = pd.unique(values.to_numpy())
    if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
        return tuple(np.sort(unique).tolist())
    if kind is Kind.ORDINAL:
        return _numeric_text_order(name, unique)
    if (numbered := _numbered_text_order(unique)) is not None:
        return numbered
    return tuple(sorted(unique, key=lambda v: (type(v).__name__, str(v))))


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _numbered_text_order(unique) -> tuple | None:
    """Text levels that each hold a number, in the numeric order of their first number, ties
    by their last (``"before-1980"``, ``"1980-1984"``, ``"1985-1989"``; ``"2"`` before
    ``"10"``), or None when a level holds no number (then the levels are alphabetical).

    >>> _numbered_text_order(["1985-1989", "before-1980", "1980-1984", "1990+"])
    ('before-1980', '1980-1984', '1985-1989', '1990+')
    >>> _numbered_text_order(["x", "1"]) is None
    True
    """
    numbers = [_NUMBER.findall(v) if isinstance(v, str) else [] for v in unique]
    if not len(unique) or not all(numbers):
        return None
    keys = [(float(found[0]), float(found[-1]), i) for i, found in enumerate(numbers)]
    return tuple(unique[i] for *_, i in sorted(keys))


def _numeric_text_order(name: str, unique) -> tuple:
    numbers = pd.to_numeric(pd.Series(unique, dtype=object), errors="coerce")
    if bad := [v for v, x in zip(unique, numbers) if pd.isna(x)]:
        raise InvalidInput(
            f"column {name!r} is declared ordinal but holds the non-numeric value {bad[0]!r}; "
            f"give its order with levels={{{name!r}: [...]}}"
        )
    return tuple(unique[i] for i in np.argsort(numbers.to_numpy(dtype=float), kind="stable"))


def _check_given_levels(name: str, values: pd.Series, levels: Sequence) -> tuple:
    levels = tuple(levels)
    if len(set(levels)) != len(levels):
        raise InvalidInput(f"levels of column {name!r} repeat a value: {list(levels)}")
    if not levels:
        raise InvalidInput(f"levels of column {name!r} are empty")
    known = set(levels)
    if unknown := [v for v in pd.unique(values.to_numpy()) if v not in known]:
        raise InvalidInput(
            f"column {name!r} holds value(s) {unknown[:5]} not among its levels {list(levels)}"
        )
    return levels


def _check_not_constant(name: str, found) -> None:
    if len(found) == 0:
        raise InvalidInput(f"column {name!r} has no values (no complete rows)")
    if len(found) == 1:
        only = found[0]
        raise InvalidInput(
            f"column {name!r} has one value only ({only!r}): it carries no information; "
            f"drop it, or give its levels with levels={{{name!r}: [...]}}"
        )


def parse_kind(name: str, kind) -> Kind:
    """A :class:`Kind` from itself or its value, naming the column if it is neither."""
    if isinstance(kind, Kind):
        return kind
    try:
        return Kind(str(kind).lower())
    except ValueError:
        raise InvalidInput(
            f"kind of column {name!r} must be one of {[k.value for k in Kind]}, got {kind!r}"
        ) from None


def check_overrides(columns, kinds: Mapping, levels: Mapping) -> tuple[dict, dict]:
    """``kinds`` and ``levels`` as dicts, if they name only columns in ``columns``."""
    cols = [str(c) for c in columns]
    for what, given in (("kinds", kinds), ("levels", levels)):
        if unknown := sorted(set(map(str, given)) - set(cols)):
            raise UnknownName(f"{what} names columns {unknown} not in the data {cols}")
    return dict(kinds), dict(levels)


def encode(frame: pd.DataFrame, domain: Domain, *, missing: str = "error") -> np.ndarray:
    """Integer codes of ``frame``'s discrete domain columns, shape (rows, columns).

    Codes follow the order of ``domain.levels``; the dtype is the smallest unsigned type
    that holds every size. Rows with a missing value in any domain column raise, or are
    dropped under ``missing="drop"``.

    Examples
    --------
    >>> df = pd.DataFrame({"s": ["b", "a", "b"], "k": [2, 1, 2]})
    >>> d = infer_domain(df)
    >>> encode(df, d)
    array([[1, 1],
           [0, 0],
           [1, 1]], dtype=uint8)
    """
    names = list(domain.names)
    if absent := [n for n in names if n not in frame.columns]:
        raise UnknownName(f"columns {absent} of the domain are not in the data {list(frame.columns)}")
    if continuous := list(domain.uncountable_names):
        raise InvalidInput(
            f"columns {continuous} are continuous with no public bins: counts need discrete or binned columns; "
            "leave them out with domain.project(domain.discrete_names)"
        )
    frame = complete_rows(frame, names, missing)
    out = np.empty((len(frame), len(names)), dtype=code_dtype(max(domain.sizes, default=1)), order="F")
    for j, (name, lv, bins) in enumerate(zip(names, domain.levels, domain.bins)):
        out[:, j] = _codes_of(name, frame[name], lv) if bins is None else _bin_codes_of(name, frame[name], bins)
    return out


def _bin_codes_of(name: str, values: pd.Series, bins) -> np.ndarray:

    codes = bin_codes(values, bins)
    if (codes < 0).any():
        bad = values.to_numpy()[np.flatnonzero(codes < 0)[0]]
        raise InvalidInput(f"column {name!r} holds value {bad!r}, which is not a finite number (its bins need one)")
    return codes


def _codes_of(name: str, values: pd.Series, levels: tuple) -> np.ndarray:
    if isinstance(values.dtype, pd.CategoricalDtype) and tuple(values.cat.categories) == levels:
        return values.cat.codes.to_numpy()
    codes = pd.Index(levels).get_indexer(values.to_numpy())
    if (codes < 0).any():
        bad = values.to_numpy()[np.flatnonzero(codes < 0)[0]]
        raise InvalidInput(f"column {name!r} holds value {bad!r} not among its levels {list(levels)}")
    return codes


def code_dtype(size: int) -> np.dtype:
    """The smallest unsigned integer dtype holding codes 0..size-1.

    >>> code_dtype(200), code_dtype(300)
    (dtype('uint8'), dtype('uint16'))
    """
    for dt in (np.uint8, np.uint16, np.uint32):
        if size - 1 <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.uint64)
