"""Contingency tables as strata, and the stratified z statistic shared by Kendall and Spearman.

A table for a conditional test has axes ``(x, y, s_1, ..., s_k)``: the conditioning
variables come last, and each of their cells is a *stratum* (a 2-D table over x and y).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Strata with fewer rows than this are skipped by the stratified statistics (as in the
#: Priv-PC reference code, which skips strata of 2 rows or fewer).
MIN_STRATUM = 3


def as_strata(table, *, name: str = "table") -> np.ndarray:
    """A count table with axes (x, y, conditioning...) as an int64 array of shape (K, r, c).

    Examples
    --------
    >>> as_strata(np.ones((2, 3, 2, 2), dtype=int)).shape
    (4, 2, 3)
    >>> as_strata(np.array([1, 2]))
    Traceback (most recent call last):
    ...
    ValueError: table must have at least 2 axes (x, y, then conditioning variables), got shape (2,)
    """
    t = np.asarray(table)
    if t.ndim < 2:
        raise ValueError(
            f"{name} must have at least 2 axes (x, y, then conditioning variables), got shape {t.shape}"
        )
    check_counts(t, name)
    r, c = t.shape[:2]
    return np.moveaxis(t.reshape(r, c, -1), -1, 0).astype(np.int64, copy=False)


def two_d_strata(table, statistic: str) -> np.ndarray:
    """A 2-D table (x by y) of at least 2 rows as a single stratum, shape (1, r, c).

    >>> two_d_strata([[1, 0], [0, 0]], "Kendall's tau")
    Traceback (most recent call last):
    ...
    ValueError: Kendall's tau needs at least 2 rows, the table holds 1
    """
    t = np.asarray(table)
    if t.ndim != 2:
        raise ValueError(f"table must be 2-D (x by y), got shape {t.shape}")
    strata = as_strata(t)
    if (n := int(strata.sum())) < 2:
        raise ValueError(f"{statistic} needs at least 2 rows, the table holds {n}")
    return strata


def check_counts(t: np.ndarray, name: str = "table") -> None:
    """Raise ValueError unless ``t`` is a non-empty array of non-negative integer counts."""
    if t.size == 0:
        raise ValueError(f"{name} has no cells (shape {t.shape})")
    if not (np.issubdtype(t.dtype, np.integer) or np.issubdtype(t.dtype, np.bool_)):
        if not np.issubdtype(t.dtype, np.floating) or not np.array_equal(t, np.round(t)):
            raise ValueError(f"{name} must hold integer counts, got dtype {t.dtype}")
    if t.min() < 0:
        raise ValueError(f"{name} must hold non-negative counts, got min {t.min()}")


@dataclass(frozen=True)
class StratifiedZ:
    """A stratified statistic combined into one z score, with its two-sided p-value.

    ``strata`` and ``rows`` count the strata (and their rows) that entered the sum; strata
    with fewer than :data:`MIN_STRATUM` rows are skipped. If none entered, ``z`` is 0 and
    ``pvalue`` 1 (no evidence against independence): a documented result, not NaN.
    """

    z: float
    pvalue: float
    strata: int
    rows: int


def combine_z(numerators: np.ndarray, weights: np.ndarray, sizes: np.ndarray) -> StratifiedZ:
    """``z = sum(a_k) / sqrt(sum(w_k))`` over the strata given (already filtered)."""
    total = float(weights.sum())
    z = float(numerators.sum()) / math.sqrt(total) if total > 0 else 0.0
    return StratifiedZ(z, two_sided_pvalue(z), int(len(sizes)), int(sizes.sum()))


def two_sided_pvalue(z: float) -> float:
    """``P(|N(0,1)| >= |z|)``.

    >>> round(two_sided_pvalue(1.959963984540054), 6)
    0.05
    """
    return math.erfc(abs(z) / math.sqrt(2.0))
