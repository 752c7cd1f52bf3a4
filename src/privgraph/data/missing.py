"""Missing values as data: the codebook's per-column ``"missing"`` key and the level it adds.

Each codebook column says how a missing value is treated (``docs/data.md``):

* ``"missing": "level"`` (the default when the key is absent): the column gets one more
  public level, :data:`MISSING` (written ``"(missing)"`` in reports and the model, last in
  the column's order; a binned continuous column's k bins then have code k for it). A
  missing value is coded to it by every engine, counted, modelled and synthesised like any
  other level, and a synthetic row at that level holds a missing value (an empty cell in
  CSV, null in Parquet), so the synthetic table keeps the data's missingness.
* ``"missing": "invalid"``: a missing value is an invalid value, handled by the command's
  policy for invalid records (dropped or recoded, :mod:`privgraph.data.frontdoor`).

**What is missing** (the same rule in numpy, DuckDB SQL and Spark SQL, tested against each
other): a NULL (``None``, ``NaN``, ``pd.NA``, an empty CSV field), text that is empty after
trimming spaces, the text ``nan`` (any case, a sign allowed) or ``NA`` (any case: R's
``write.csv`` and pandas write a missing value so); in a continuous column
also any non-finite number: ``inf``, ``-inf``, ``infinity`` (as a float or as text). A value
that matches one of the column's levels is that level (a level wins over this rule). Any
other value outside the domain is an invalid value, never missing.

**Privacy.** The level is public: the codebook fixes it before any data is read, so adding
it is a public fact, not a branch on the data. Each record still falls in exactly one cell
of every table (its missing value in the new level's), so every table's sensitivity is
unchanged (one record moves one count: L1 1 under add/remove, 2 under replace-one); only
the tables' shapes grow by one level per such column, a function of the codebook alone.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

import numpy as np
import pandas as pd

from privgraph.validation import one_of

#: The codebook's ``"missing"`` values and the default when a column has no such key.
MISSING_POLICIES = ("level", "invalid")
DEFAULT_MISSING = "level"
#: How the missing level is written in reports, the model file and labels.
MISSING_LABEL = "(missing)"


class MissingLevel(str):
    """The type of :data:`MISSING`: a level that no value matches by its text (only a
    missing value, by the module's rule). A ``str`` so that labels, JSON and sorting work."""

    __slots__ = ()

    def __reduce__(self):  # a pickled domain keeps the marker
        return (MissingLevel, (str(self),))


#: The missing level of a column (its label :data:`MISSING_LABEL`).
MISSING = MissingLevel(MISSING_LABEL)

#: Text that is missing in any column, and in a continuous one (module docstring; case-insensitive).
_TEXT = " *([-+]?nan|na)? *"
_CONTINUOUS_TEXT = " *([-+]?(nan|inf|infinity)|na)? *"


def check_missing_key(value, where: str) -> str:
    """A codebook column's ``"missing"`` value, checked.

    >>> check_missing_key("level", "column 'a'")
    'level'
    >>> check_missing_key("drop", "column 'a'")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: column 'a' "missing" must be one of ('level', 'invalid'), got 'drop'
    """
    one_of(f"{where} \"missing\"", value, MISSING_POLICIES)
    return value


def is_missing_level(level) -> bool:
    """Whether ``level`` is a column's missing level (:data:`MISSING`).

    >>> is_missing_level(MISSING), is_missing_level("(missing)")
    (True, False)
    """
    return isinstance(level, MissingLevel)


def missing_code(levels: Sequence) -> int | None:
    """The code of ``levels``' missing level, or None if the column has none.

    >>> missing_code(("a", "b", MISSING)), missing_code(("a", "b"))
    (2, None)
    """
    return next((i for i, v in enumerate(levels) if is_missing_level(v)), None)


def real_levels(levels: Sequence) -> tuple:
    """``levels`` without the missing level (what the codebook's ``"levels"`` lists).

    >>> real_levels(("a", MISSING))
    ('a',)
    """
    return tuple(v for v in levels if not is_missing_level(v))


def is_missing_value(value, *, continuous: bool = False) -> bool:
    """Whether one value is missing by the module's rule.

    >>> [is_missing_value(v) for v in (None, float("nan"), " ", "NaN", "NA", "inf", "x", "nab", 0)]
    [True, True, True, True, True, False, False, False, False]
    >>> is_missing_value("-Infinity", continuous=True), is_missing_value(float("inf"), continuous=True)
    (True, True)
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return False
    if isinstance(value, (float, np.floating)):
        return not math.isfinite(value) if continuous else math.isnan(value)
    pattern = _CONTINUOUS_TEXT if continuous else _TEXT
    return re.fullmatch(pattern, str(value), flags=re.IGNORECASE) is not None


def missing_mask(values, *, continuous: bool = False) -> np.ndarray:
    """Which of ``values`` (a Series or a sequence) are missing, as a boolean array: one
    test per distinct value (:func:`is_missing_value`).

    >>> missing_mask(["a", None, "", "nan", "inf"]).tolist()
    [False, True, True, True, False]
    >>> missing_mask(pd.Series([1.0, float("nan"), float("inf")]), continuous=True).tolist()
    [False, True, True]
    """
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    dtype = series.dtype
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        x = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return ~np.isfinite(x) if continuous else np.isnan(x)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    flags = np.array([is_missing_value(u, continuous=continuous) for u in uniques] + [True], dtype=bool)
    return flags[codes]


def missing_sql(column: str, style: str = "ansi", *, continuous: bool = False, integer: bool = False) -> str:
    """SQL: whether ``column``'s value is missing by the module's rule (DuckDB or Spark).
    ``integer``: the column has an integer SQL type (only NULL is missing).

    >>> missing_sql('"a"', integer=True)
    '"a" IS NULL'
    >>> missing_sql('"a"')
    '("a" IS NULL OR regexp_full_match(lower(CAST("a" AS VARCHAR)), \\' *([-+]?nan|na)? *\\'))'
    """
    if integer:
        return f"{column} IS NULL"
    pattern = _CONTINUOUS_TEXT if continuous else _TEXT
    if style == "ansi":
        test = f"regexp_full_match(lower(CAST({column} AS VARCHAR)), '{pattern}')"
    else:
        test = f"lower(CAST({column} AS STRING)) RLIKE '^{pattern}$'"
    return f"({column} IS NULL OR {test})"


__all__ = ["DEFAULT_MISSING", "MISSING", "MISSING_LABEL", "MISSING_POLICIES", "MissingLevel", "check_missing_key",
           "is_missing_level", "is_missing_value", "missing_code", "missing_mask", "missing_sql", "real_levels"]
