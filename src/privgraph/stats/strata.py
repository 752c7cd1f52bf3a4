"""Contingency tables as strata, and the stratified z statistic shared by Kendall and Spearman.

A table for a conditional test has axes ``(x, y, s_1, ..., s_k)``: the conditioning
variables come last, and each of their cells is a *stratum* (a 2-D table over x and y).

**No information is not independence.** A stratum is *degenerate* when it cannot show a
dependence: x or y takes one value only in it, or it holds fewer rows than the statistic
uses (:data:`MIN_STRATUM` for the rank statistics, 2 for G and chi-square). A table whose
strata are all degenerate carries no information about x and y given S; the tests of
:mod:`privgraph.stats.ci_test` then say *dependent* (keep the edge) by default
(:data:`DEPENDENT`), or *independent* under causal-learn's convention
(:data:`INDEPENDENT`). :func:`degeneracy_distance` is the replace-one-Lipschitz count the
private deciders use to put this rule inside a statistic of sensitivity 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from privgraph.validation import InvalidInput, one_of

#: Strata with fewer rows than this are skipped by the stratified statistics (as in the
#: Priv-PC reference code, which skips strata of 2 rows or fewer).
MIN_STRATUM = 3

#: Convention for a table with no informative stratum: keep the edge (the default) ...
DEPENDENT = "dependent"
#: ... or call it independent (causal-learn's rule: zero degrees of freedom, p = 1).
INDEPENDENT = "independent"
CONVENTIONS = (DEPENDENT, INDEPENDENT)


def check_convention(degenerate: str) -> str:
    """``degenerate`` if it names a convention for tables with no information.

    >>> check_convention("independent")
    'independent'
    >>> check_convention("skip")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: degenerate must be one of ('dependent', 'independent'), got 'skip'
    """
    one_of("degenerate", degenerate, CONVENTIONS)
    return degenerate


def stratum_distances(strata: np.ndarray, min_rows: int) -> np.ndarray:
    """Rows to change in each stratum of a (K, r, c) array to make it degenerate.

    ``h_k = min(n_k - max_i r_ki, n_k - max_j c_kj, max(n_k - min_rows + 1, 0))``: move
    every row off the modal x value, or off the modal y value, or out of the stratum
    until fewer than ``min_rows`` remain. ``h_k = 0`` exactly when stratum k is degenerate.

    >>> stratum_distances(np.array([[[5, 1], [0, 0]], [[3, 2], [2, 3]]]), 3).tolist()
    [0, 5]
    """
    sizes = strata.sum(axis=(1, 2))
    off_x = sizes - strata.sum(axis=2).max(axis=1)
    off_y = sizes - strata.sum(axis=1).max(axis=1)
    return np.minimum(np.minimum(off_x, off_y), np.maximum(sizes - (min_rows - 1), 0))


def degeneracy_distance(table, min_rows: int = MIN_STRATUM) -> int:
    """``H = sum_k h_k`` (:func:`stratum_distances`): 0 exactly when every stratum is degenerate.

    **Replace-one sensitivity 1.** Replacing a row removes it from a stratum j and adds
    one to a stratum k (maybe j). Removing a row lowers ``n_j`` by 1 and each of
    ``max_i r_ji``, ``max_j c_ji`` by 0 or 1, so each of the three terms of ``h_j`` drops
    by 0 or 1, and so does their minimum; adding a row raises ``h_k`` by 0 or 1 the same
    way. Other strata do not change, so ``|H(D) - H(D')| <= 1``. (H is a proxy for, not
    the exact, replace-one distance to the degenerate tables; the bound is what matters.)

    >>> t = np.zeros((2, 2, 2), dtype=int)
    >>> t[:, :, 0] = [[5, 0], [0, 0]]; t[:, :, 1] = [[0, 4], [0, 0]]   # x constant everywhere
    >>> degeneracy_distance(t)
    0
    >>> t[1, 0, 1] = 1; degeneracy_distance(t)                        # one row makes it 1
    1
    """
    return int(stratum_distances(as_strata(table), min_rows).sum())


def has_information(table, min_rows: int = MIN_STRATUM) -> bool:
    """True if some stratum has at least ``min_rows`` rows and two values of x and of y.

    >>> has_information(np.array([[3, 0], [4, 0]])), has_information(np.array([[3, 1], [4, 0]]))
    (False, True)
    """
    return degeneracy_distance(table, min_rows) > 0


def as_strata(table, *, name: str = "table") -> np.ndarray:
    """A count table with axes (x, y, conditioning...) as an int64 array of shape (K, r, c).

    Examples
    --------
    >>> as_strata(np.ones((2, 3, 2, 2), dtype=int)).shape
    (4, 2, 3)
    >>> as_strata(np.array([1, 2]))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: table must have at least 2 axes (x, y, then conditioning variables), got shape (2,)
    """
    t = np.asarray(table)
    if t.ndim < 2:
        raise InvalidInput(
            f"{name} must have at least 2 axes (x, y, then conditioning variables), got shape {t.shape}"
        )
    check_counts(t, name)
    r, c = t.shape[:2]
    return t.reshape(r, c, -1).transpose(2, 0, 1).astype(np.int64, copy=False)


def two_d_strata(table, statistic: str) -> np.ndarray:
    """A 2-D table (x by y) of at least 2 rows as a single stratum, shape (1, r, c).

    >>> two_d_strata([[1, 0], [0, 0]], "Kendall's tau")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: Kendall's tau needs at least 2 rows, the table holds 1
    """
    t = np.asarray(table)
    if t.ndim != 2:
        raise InvalidInput(f"table must be 2-D (x by y), got shape {t.shape}")
    strata = as_strata(t)
    if (n := int(strata.sum())) < 2:
        raise InvalidInput(f"{statistic} needs at least 2 rows, the table holds {n}")
    return strata


def check_counts(t: np.ndarray, name: str = "table") -> None:
    """Raise ValueError unless ``t`` is a non-empty array of non-negative integer counts."""
    if t.size == 0:
        raise InvalidInput(f"{name} has no cells (shape {t.shape})")
    if not (np.issubdtype(t.dtype, np.integer) or np.issubdtype(t.dtype, np.bool_)):
        if not np.issubdtype(t.dtype, np.floating) or not np.array_equal(t, np.round(t)):
            raise InvalidInput(f"{name} must hold integer counts, got dtype {t.dtype}")
    if t.min() < 0:
        raise InvalidInput(f"{name} must hold non-negative counts, got min {t.min()}")


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
