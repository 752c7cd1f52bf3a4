"""Kendall's tau from contingency tables (O(cells)), on raw data (O(n log n)), and stratified.

With ``S = C - D`` (concordant minus discordant pairs) over ``n`` rows:

* tau-a ``= S / (n (n - 1) / 2)``: ties count as neither. Its sensitivity is bounded on any
  data (:mod:`privgraph.stats.sensitivity`), so it is the one to privatise.
* tau-b ``= S / sqrt((n0 - n1)(n0 - n2))`` with ``n0 = n(n-1)/2`` and ``n1``, ``n2`` the pairs
  tied in x and in y: scipy's default. It has no useful global sensitivity on tied data.

**Ties and the null variance.** The stratified z of priv-pc.txt Appendix D divides by tau-a's
null variance *without ties*. On categorical data that overstates the variance: for two
binary columns with rare levels (cancer's Pollution, 10% high, and Cancer, 1%) the true
null standard deviation of the numerator is a tenth of the assumed one, so a dependence
with z = 17 reads as z = 1.65 and the edge is removed. :func:`kendall_tie_scale` is the
ratio of the two standard deviations (large-sample, from each stratum's margins, pulled
towards 1 by a public pseudo-weight so that it has a small global sensitivity); the
tie-corrected test compares ``|z|`` with ``T * r`` instead of T
(:class:`~privgraph.stats.KendallTest` with ``tie_corrected=True``).

Axes of a table are ordered: row ``i`` of x is below row ``i + 1``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import kendalltau

from privgraph.stats.strata import MIN_STRATUM, StratifiedZ, as_strata, combine_z, two_d_strata
from privgraph.validation import InvalidInput

#: Largest n for which :func:`kendall_tau_a_raw` is exact (see its docstring).
MAX_RAW_ROWS = 10_000_000


def concordance(strata: np.ndarray) -> np.ndarray:
    """``S = C - D`` of each stratum of a (K, r, c) int array, exactly, in O(cells).

    Each cell meets the cells strictly above it in x: the concordant ones strictly above in
    y, the discordant ones strictly below; both sums come from cumulative sums.

    >>> concordance(np.array([[[2, 0], [0, 3]], [[0, 1], [1, 0]]])).tolist()
    [6, -1]
    """
    after_x = np.cumsum(strata[:, ::-1, :], axis=1)[:, ::-1, :]  # rows >= i
    after_x = np.concatenate([after_x[:, 1:, :], np.zeros_like(after_x[:, :1, :])], axis=1)
    above_y = np.cumsum(after_x[:, :, ::-1], axis=2)[:, :, ::-1] - after_x  # cols > j
    below_y = np.cumsum(after_x, axis=2) - after_x  # cols < j
    return (strata * (above_y - below_y)).sum(axis=(1, 2))


def kendall_tau_a(table) -> float:
    """Kendall's tau-a of a 2-D table of counts.

    Examples
    --------
    >>> kendall_tau_a([[2, 0], [0, 2]])  # 4 of 6 pairs concordant, 2 tied
    0.6666666666666666
    >>> kendall_tau_a([[1]])
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: Kendall's tau needs at least 2 rows, the table holds 1
    """
    strata = two_d_strata(table, "Kendall's tau")
    n = int(strata.sum())
    return float(concordance(strata)[0]) / (n * (n - 1) / 2)


def kendall_tau_b(table) -> float:
    """Kendall's tau-b of a 2-D table, equal to ``scipy.stats.kendalltau`` on the rows.

    A variable that takes one value only makes tau-b 0/0: that is an error, not a NaN.

    >>> kendall_tau_b([[2, 0], [0, 2]])
    1.0
    >>> kendall_tau_b([[2, 3]])
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: tau-b is undefined: x takes one value only in this table
    """
    strata = two_d_strata(table, "Kendall's tau")
    t = strata[0]
    n = int(t.sum())
    tot = n * (n - 1) // 2
    xtie, ytie = _tied_pairs(t.sum(axis=1)), _tied_pairs(t.sum(axis=0))
    for name, tie in (("x", xtie), ("y", ytie)):
        if tie == tot:
            raise InvalidInput(f"tau-b is undefined: {name} takes one value only in this table")
    s = int(concordance(strata)[0])
    tau = s / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)  # scipy's order of operations
    return float(min(1.0, max(-1.0, tau)))


def kendall_tau_a_raw(x, y) -> float:
    """Kendall's tau-a of paired raw values, in O(n log n).

    ``S`` is recovered from scipy's tau-b and the tie counts, rounded to the nearest
    integer: exact while ``n <= MAX_RAW_ROWS`` (the floating-point error of
    ``tau_b * sqrt(..) * sqrt(..)`` is below ``n^2 * 1e-15 / 2 < 0.5``).

    >>> kendall_tau_a_raw([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    0.3333333333333333
    """
    x, y = _paired(x, y)
    n = x.size
    if n < 2:
        raise InvalidInput(f"Kendall's tau needs at least 2 rows, got {n}")
    if n > MAX_RAW_ROWS:
        raise InvalidInput(f"kendall_tau_a_raw is exact up to {MAX_RAW_ROWS} rows, got {n}; bin the data")
    tot = n * (n - 1) // 2
    xtie, ytie = _tied_pairs(np.unique(x, return_counts=True)[1]), _tied_pairs(np.unique(y, return_counts=True)[1])
    if xtie == tot or ytie == tot:
        return 0.0
    tau_b = kendalltau(x, y).statistic
    s = round(float(tau_b) * math.sqrt(tot - xtie) * math.sqrt(tot - ytie))
    return s / tot


def conditional_kendall(table, *, min_stratum: int = MIN_STRATUM) -> StratifiedZ:
    """The stratified Kendall z of priv-pc.txt Appendix D, as the reference code computes it.

    For each stratum k (a cell of the conditioning variables) with ``n_k >= min_stratum``
    rows: tau-a ``tau_k``, null variance ``sigma_k^2 = (4 n_k + 10) / (9 n_k (n_k - 1))``,
    weight ``w_k = 1 / sigma_k^2``; then ``z = sum(w_k tau_k) / sqrt(sum(w_k))``, which is
    ``sum(9 S_k / (2 n_k + 5)) / sqrt(sum(w_k))``. The p-value is two-sided,
    ``P(|N(0,1)| >= |z|)`` (the reference code reports half of it). Strata with fewer rows
    are skipped; with no stratum left, z = 0 and p = 1.

    Examples
    --------
    >>> t = np.zeros((2, 2, 2), dtype=int)
    >>> t[:, :, 0] = [[30, 5], [5, 30]]   # dependent given s = 0
    >>> t[:, :, 1] = [[1, 0], [0, 1]]     # 2 rows: skipped
    >>> r = conditional_kendall(t)
    >>> r.strata, r.rows, round(r.z, 3), r.pvalue < 1e-4
    (1, 70, 4.436, True)
    """
    strata = as_strata(table)
    sizes = strata.sum(axis=(1, 2))
    keep = sizes >= min_stratum
    return combine_z(*kendall_terms(strata[keep]), sizes[keep])


def kendall_terms(strata: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each stratum's share of the stratified Kendall z, ``(9 S_k / (2 n_k + 5), w_k)``:
    ``z = sum(first) / sqrt(sum(second))`` over the strata that enter it.

    >>> a, w = kendall_terms(np.array([[[2, 0], [0, 3]]]))
    >>> round(float(a[0]), 4), round(float(w[0]), 4)
    (3.6, 6.0)
    """
    s, m = concordance(strata).astype(np.float64), strata.sum(axis=(1, 2)).astype(np.float64)
    return 9.0 * s / (2.0 * m + 5.0), kendall_weight(m)


#: Public pseudo-weight of :func:`kendall_tie_scale`, as a share of ``(9/4) n``, the most the
#: weights of n rows can sum to: it keeps ``r >= sqrt(TIE_PRIOR / (1 + TIE_PRIOR))`` (about
#: 0.0995) and the scale's sensitivity of order ``1 / n`` (see
#: :func:`privgraph.stats.sensitivity.kendall_tie_scale_sensitivity_add_remove`).
TIE_PRIOR = 0.01


def tie_factor(margins: np.ndarray) -> np.ndarray:
    """``1 - sum_i (u_i / m)^3`` for each row u of a (K, r) array of margins (m = sum u > 0):
    the large-sample factor by which ties in one variable shrink the null variance of
    Kendall's S (Kendall 1970, ch. 3: ``Var S ~ (n^3 / 9) (1 - sum p_i^3) (1 - sum q_j^3)``).

    >>> tie_factor(np.array([[5, 5], [10, 0], [1, 1]])).tolist()
    [0.75, 0.0, 0.75]
    """
    u = np.asarray(margins, dtype=np.float64)
    m = u.sum(axis=1)
    return 1.0 - (u**3).sum(axis=1) / m**3


def tie_terms(strata: np.ndarray) -> np.ndarray:
    """Each stratum's ``w_k rho_k``: its weight times its tie ratio
    ``rho_k = tie_factor(rows) * tie_factor(columns)``, the large-sample ratio of the null
    variance of ``S_k`` with ties to the one without.

    >>> tie_terms(np.array([[[5, 5], [5, 5]]])).round(4).tolist()
    [21.375]
    """
    rho = tie_factor(strata.sum(axis=2)) * tie_factor(strata.sum(axis=1))
    return kendall_weight(strata.sum(axis=(1, 2)).astype(np.float64)) * rho


def kendall_tie_scale(table, *, min_stratum: int = MIN_STRATUM) -> float:
    """``r = sqrt((sum w_k rho_k + w0) / (sum w_k + w0))`` over the strata that enter the
    stratified z, with ``w0 = TIE_PRIOR * (9/4) * n`` (n the table's rows: public under
    replace-one). Under independence ``z / r`` is asymptotically standard normal given the
    margins (``Var(sum a_k) ~ sum w_k rho_k``; the pseudo-weight only makes r larger, so the
    test is at most conservative). ``r`` lies in ``[sqrt(TIE_PRIOR / (1 + TIE_PRIOR)), 1]``
    (``sum w_k < (9/4) n``); with no stratum entering it is 1.

    >>> t = np.array([[900, 5], [9000, 95]])   # two binary columns with rare levels
    >>> round(kendall_tie_scale(t), 3), kendall_tie_scale(np.array([[1, 0], [0, 1]]))
    (0.131, 1.0)
    """
    strata = as_strata(table)
    return float(kendall_tie_scales(strata, np.zeros(len(strata), dtype=np.intp), 1, min_stratum=min_stratum)[0])


def kendall_tie_scales(strata: np.ndarray, owner: np.ndarray, count: int, *,
                       min_stratum: int = MIN_STRATUM) -> np.ndarray:
    """:func:`kendall_tie_scale` of each of ``count`` tables given as strata (K, r, c) and
    ``owner`` (K,), the table of each stratum (empty strata may be left out: they change
    neither sum nor n).

    >>> kendall_tie_scales(np.array([[[900, 5], [9000, 95]], [[1, 0], [0, 1]]]), np.array([0, 1]), 2).round(3).tolist()
    [0.131, 1.0]
    """
    sizes = strata.sum(axis=(1, 2))
    keep = sizes >= min_stratum
    weights = np.bincount(owner[keep], kendall_weight(sizes[keep].astype(np.float64)), count)
    phi = np.bincount(owner[keep], tie_terms(strata[keep]), count)
    w0 = TIE_PRIOR * 2.25 * np.bincount(owner, sizes, count)
    return np.sqrt(np.divide(phi + w0, weights + w0, out=np.ones(count), where=weights + w0 > 0))


def kendall_weight(m):
    """Inverse null variance of tau-a over m rows: ``9 m (m - 1) / (2 (2 m + 5))``.

    >>> kendall_weight(3.0)
    2.4545454545454546
    """
    return 9.0 * m * (m - 1.0) / (2.0 * (2.0 * m + 5.0))


def _tied_pairs(margin) -> int:
    margin = np.asarray(margin, dtype=np.int64)
    return int((margin * (margin - 1) // 2).sum())


def _paired(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 1 or x.shape != y.shape:
        raise InvalidInput(f"x and y must be 1-D of the same length, got shapes {x.shape} and {y.shape}")
    for name, v in (("x", x), ("y", y)):
        if np.issubdtype(v.dtype, np.floating) and not np.isfinite(v).all():
            raise InvalidInput(f"{name} holds NaN or infinite values")
    return x, y
