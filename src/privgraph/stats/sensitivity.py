"""Global sensitivities of the test statistics, one named function per statistic and relation.

Convention: **n is the number of rows of the smaller dataset of a neighbouring pair.**
Under replace-one both datasets have n rows. Under add/remove one has n and the other
n + 1; a mechanism applied to a dataset of N rows, whose neighbours have N - 1 or N + 1,
must use n = N - 1, and since N is itself private under add/remove, it should use a
public lower bound on it. (The Priv-PC reference code uses the full N.)

Each bound below was derived here and is checked by tests on random and adversarial
neighbouring datasets. Where the papers' constants differ, the docstring says why.

Statistics with no useful global bound (no function here, on purpose):

* **tau-b and rho-b** on tied data: their denominators count the untied pairs, which one
  row can change a lot. On binary data, n = 100 rows ``[[98, 1], [1, 0]]`` give
  tau-b = -0.0101; adding the row (1, 1) gives 0.4899.
* **G and chi-square**: unbounded (a cell expected near 0 can receive a row).
* **The IQR**: only a local sensitivity (propose-test-release; :mod:`privgraph.stats.iqr`).
* **HSIC under add/remove**: not derived (its normalisation depends on m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from privgraph.privacy.neighbours import check_sensitivity
from privgraph.stats.kendall import TIE_PRIOR, kendall_weight
from privgraph.stats.strata import MIN_STRATUM
from privgraph.validation import InvalidInput, positive_int


def kendall_tau_a_sensitivity_add_remove(n: int) -> float:
    """``4 / (n + 1)``: tight bound on |tau-a(D) - tau-a(D')|, |D| = n, |D'| = n + 1.

    Derivation. Let ``S`` be C - D on D and ``s`` the new row's contribution against the n
    old rows, ``|s| <= n``. Then
    ``tau' - tau = 2 (S + s) / (n (n + 1)) - 2 S / (n (n - 1))
    = 2 s / (n (n + 1)) - 4 S / ((n - 1) n (n + 1))``.
    With ``|S| <= n (n - 1) / 2`` both terms are at most ``2 / (n + 1)``, so
    ``|tau' - tau| <= 4 / (n + 1)``. Equality: n rows on an anti-diagonal (S = -n(n-1)/2)
    plus one row beyond both maxima (s = n). priv-pc.txt Theorem 6 (2 / (n - 1)) is false:
    its proof drops the second term.

    >>> kendall_tau_a_sensitivity_add_remove(99)
    0.04
    """
    n = positive_int("n", n)
    return 4.0 / (n + 1)


def kendall_tau_a_sensitivity_replace_one(n: int) -> float:
    """``4 / n``: tight bound on |tau-a(D) - tau-a(D')| when one of n rows is replaced.

    Derivation. The replaced row is in n - 1 pairs; each pair's sign term (+1, 0 or -1)
    changes by at most 2, so ``|S' - S| <= 2 (n - 1)`` and
    ``|tau' - tau| <= 2 (n - 1) / (n (n - 1) / 2) = 4 / n``. Equality: n - 1 rows on a
    diagonal, and the last row moved from beyond both maxima (concordant with all) to
    beyond the x maximum and below the y minimum (discordant with all).

    >>> kendall_tau_a_sensitivity_replace_one(100)
    0.04
    """
    n = positive_int("n", n, 2)
    return 4.0 / n


def spearman_rho_a_sensitivity_add_remove(n: int) -> float:
    """``12 n / ((n + 1)(n + 2)) < 12 / n`` for rho-a (mid-ranks; equals rho without ties).

    Derivation. Write ``rho = 12 Q / (n (n^2 - 1))``, ``Q = sum(u_i v_i)`` with centred
    mid-ranks, ``|u_i|, |v_i| <= (n - 1) / 2`` and ``|Q| <= n (n^2 - 1) / 12`` (Cauchy-
    Schwarz). Adding a row moves each old mid-rank by 0, 1/2 or 1 and the centre by 1/2,
    so each centred rank by at most 1/2, and each old term by at most
    ``(n - 1)/4 + n/4``; the new term is at most ``n^2 / 4``: ``|Q' - Q| <= n (3n - 1) / 4``.
    Then ``rho' - rho = 12 (Q' - Q) / (n (n+1)(n+2)) - 36 Q / ((n-1) n (n+1)(n+2))``, at
    most ``3 (3n - 1) / ((n+1)(n+2)) + 3 / (n + 2) = 12 n / ((n+1)(n+2))``. The papers'
    30 / n (d^2 form, no ties) also holds; this one is tighter and allows ties. Not tight.

    >>> round(spearman_rho_a_sensitivity_add_remove(100), 6)
    0.116482
    """
    n = positive_int("n", n)
    return 12.0 * n / ((n + 1.0) * (n + 2.0))


def spearman_rho_a_sensitivity_replace_one(n: int) -> float:
    """``18 (n - 1) / (n (n + 1)) < 18 / n`` for rho-a (mid-ranks; rho without ties).

    Derivation. Replacing a row moves every other mid-rank by at most 1 (the centre
    stays), so each other term of ``Q`` moves by at most ``(n - 1)/2 + (n - 1)/2`` and the
    replaced row's term by at most ``2 ((n - 1)/2)^2``: ``|Q' - Q| <= 3 (n - 1)^2 / 2`` and
    ``|rho' - rho| <= 18 (n - 1) / (n (n + 1))``. Kusner et al.'s 30 / n (no ties) also
    holds; this one is tighter and allows ties. Not tight.

    >>> round(spearman_rho_a_sensitivity_replace_one(100), 6)
    0.176436
    """
    n = positive_int("n", n, 2)
    return 18.0 * (n - 1.0) / (n * (n + 1.0))


def hsic_sensitivity_replace_one(m: int) -> float:
    """``(16 m - 8) / (m - 1)^2``: HSIC with kernels valued in [0, 1], one of m rows replaced.

    Derivation (private-anm.txt, Theorem 4, checked): ``|tr(KHLH) - tr(K'HL'H)|`` is at most
    ``||HLH||_max ||K - K'||_1 + ||HK'H||_max ||L - L'||_1``; a doubly centred matrix of
    entries in [0, 1] has entries in [-2, 2] (the paper uses 4), and K - K' is non-zero in
    one row and column only (``||.||_1 <= 2m - 1``). With the paper's 4 this gives
    ``2 * 4 (2m - 1) / (m - 1)^2``. The same argument with 2, and a unit diagonal
    (``k(a, a) = 1``, as for the Gaussian kernel), gives 8 / (m - 1): about half, not yet
    used here. The tighter (12m - 11)/(m - 1)^2 is claimed for an appendix we lack.

    >>> hsic_sensitivity_replace_one(11)
    1.68
    """
    m = positive_int("m", m, 2)
    return (16.0 * m - 8.0) / (m - 1.0) ** 2


def pvalue_sensitivity(z_sensitivity: float) -> float:
    """Sensitivity of the two-sided p-value ``P(|N(0,1)| >= |z|)`` given that of z.

    ``p = 2 (1 - Phi(|z|))`` and ``||z| - |z'|| <= dz``; ``Phi`` is steepest at 0, so
    ``|p - p'| <= 2 (Phi(dz) - 1/2) = erf(dz / sqrt(2))``. (The reference code's one-sided
    p-value has half this, ``Phi(dz) - 1/2``.)

    >>> round(pvalue_sensitivity(0.1), 6)
    0.079656
    """
    dz = check_sensitivity(z_sensitivity, "z_sensitivity")
    return math.erf(dz / math.sqrt(2.0))


# --- the stratified z statistics ------------------------------------------------------


@dataclass(frozen=True)
class _StratifiedBound:
    """What the bound on a stratified z needs (see :func:`conditional_kendall_sensitivity_add_remove`)."""

    weight: Callable  # w(m), for strata of m >= MIN_STRATUM rows
    step: Callable  # bound on |delta a| + (delta w) / 2 when a stratum of m >= 3 rows gains one
    limit: float  # sup over m of step(m)
    entry: float  # bound on |a'| + w(3) / 2 when a stratum enters (2 -> 3 rows)

    def global_bound(self) -> float:
        """Bound over all data: cases (a) and (b) with ``W' >= w(m + 1)``, ``W' >= w(3)``."""
        w3 = float(self.weight(MIN_STRATUM))
        best = max(math.sqrt(w3), self.entry / math.sqrt(2.0 * w3))
        m = MIN_STRATUM
        while self.limit / math.sqrt(self.weight(m + 1)) > best:
            best = max(best, self.step(m) / math.sqrt(self.weight(m + 1)))
            m += 1
        return best

    def add_remove(self, n: int, strata: int) -> float:
        w_min = min_total_weight(n, strata, self.weight)
        bound = self.global_bound()
        return bound if w_min <= 0 else min(bound, self.limit / math.sqrt(w_min))


def _kendall_step(m: int) -> float:
    delta_a = 9.0 * m * (3.0 * m + 4.0) / ((2.0 * m + 5.0) * (2.0 * m + 7.0))
    return delta_a + (kendall_weight(m + 1.0) - kendall_weight(float(m))) / 2.0


def _spearman_weight(m):
    return m - 1.0


def _spearman_step(m: int) -> float:
    return (11.0 * m * m - 3.0 * m - 2.0) / ((m + 1.0) * (m + 2.0)) + 0.5


_KENDALL = _StratifiedBound(kendall_weight, _kendall_step, 27 / 4 + 9 / 8, 27 / 11 + 27 / 22)
_SPEARMAN = _StratifiedBound(_spearman_weight, _spearman_step, 11.0 + 0.5, 2.0 + 1.0)


def min_total_weight(n: int, strata: int, weight: Callable) -> float:
    """Smallest ``W = sum(w(n_k))`` over strata with >= 3 rows, over all ways to put n rows in K strata.

    The minimum leaves j strata with 2 rows (skipped, weight 0) and spreads the other rows
    evenly over the other K - j strata (w is convex and increasing from 3 rows on); we
    take the best j. It is 0 when n <= 2K (every stratum can stay below 3 rows).

    >>> min_total_weight(10, 1, kendall_weight) == kendall_weight(10.0)
    True
    >>> min_total_weight(6, 3, kendall_weight)
    0.0
    """
    if n <= 2 * strata:
        return 0.0
    j = np.arange(strata)  # strata left with 2 rows
    r = strata - j
    total = np.maximum(3 * r, n - 2 * j)
    ok = total <= n
    q, extra = np.divmod(total[ok], r[ok])
    w = (r[ok] - extra) * weight(q.astype(np.float64)) + extra * weight(q + 1.0)
    return float(w.min())


def conditional_kendall_sensitivity_add_remove(n: int, strata: int) -> float:
    """Bound on |z(D) - z(D')| for :func:`~privgraph.stats.kendall.conditional_kendall`.

    ``n`` is the smaller dataset's size, ``strata`` the number of cells K of the
    conditioning variables (1 if none). Returns ``min(G, (63/8) / sqrt(W_min(n, K)))``.

    Derivation, for the statistic exactly as computed (tau-a per stratum, strata with
    fewer than 3 rows skipped, z = 0 if none is left). Write ``a_k = w_k tau_k
    = 9 S_k / (2 n_k + 5)``, ``A = sum a_k``, ``W = sum w_k``, ``z = A / sqrt(W)``; note
    ``|a_k| <= w_k`` so ``|A| <= W``. Adding a row to stratum j of m rows:

    (a) m >= 3: ``a_j`` moves by ``9 (s (2m+5) - 2 S) / ((2m+5)(2m+7))``, at most
        ``9 m (3m + 4) / ((2m+5)(2m+7)) < 27/4``; ``W`` grows by ``dw = w(m+1) - w(m) < 9/4``.
        Since ``z' - z = da / sqrt(W') + A (1/sqrt(W') - 1/sqrt(W))`` and
        ``|A| (1/sqrt(W) - 1/sqrt(W')) <= dw / (2 sqrt(W'))``,
        ``|z' - z| <= (|da| + dw / 2) / sqrt(W') < (63/8) / sqrt(W)``.
    (b) m = 2: the stratum enters with ``|a'| <= w(3) = 27/11``: the same argument gives
        ``(27/11 + 27/22) / sqrt(W')``, or ``sqrt(27/11)`` if no stratum was in before.
    (c) m < 2: nothing changes.

    W is data: the bound uses ``W >= W_min(n, K)`` (:func:`min_total_weight`). G is the
    bound over all data (W' at least ``w(m+1)`` in (a), ``w(3)`` in (b)): about 1.66,
    independent of n; it applies when ``n <= 2K`` leaves W_min = 0.

    Tightness: for K = 1, n rows on an anti-diagonal plus one beyond both maxima move z
    by about ``5.25 / sqrt(n)``, and the bound is ``(63/8) / sqrt(w(n)) ~ 5.25 / sqrt(n)``:
    asymptotically tight. priv-pc.txt Theorem 7 ("close to 9/2") omits the change of the
    denominator. The reference code's 6 / sqrt(n) lies above the K = 1 asymptote but
    ignores K: with K strata, ``W_min ~ (9/4)(n - 3.5 K)``, and when n <= 2K no bound
    decays with n.

    >>> round(conditional_kendall_sensitivity_add_remove(10_000, 1) * 100, 3)
    5.251
    >>> conditional_kendall_sensitivity_add_remove(10, 8) == conditional_kendall_sensitivity_add_remove(10, 100)
    True
    """
    n, strata = positive_int("n", n, 0), positive_int("strata", strata)
    return _KENDALL.add_remove(n, strata)


def conditional_kendall_sensitivity_replace_one(n: int, strata: int) -> float:
    """Bound on |z(D) - z(D')| for the stratified Kendall z when one of n rows is replaced.

    Derivation. A replacement is a removal then an addition through a dataset of n - 1
    rows (the smaller of both pairs), possibly in another stratum: at most
    ``2 * conditional_kendall_sensitivity_add_remove(n - 1, K)``. For K = 1 the row stays
    in the only stratum, W does not change and ``|S' - S| <= 2 (n - 1)``:
    ``|z' - z| <= 18 (n - 1) / ((2n + 5) sqrt(w(n)))`` (about 6 / sqrt(n), tight as for
    tau-a); the smaller of the two is returned. For K > 1 the triangle bound (about
    ``15.75 / sqrt(W)``) may be loose: a move between two large strata changes W by almost
    nothing, so the worst case we expect is nearer ``13.5 / sqrt(W)``.

    >>> round(conditional_kendall_sensitivity_replace_one(10_000, 1) * 100, 3)
    5.999
    """
    n, strata = positive_int("n", n), positive_int("strata", strata)
    bound = 2.0 * _KENDALL.add_remove(n - 1, strata)
    if strata == 1:
        within = 18.0 * (n - 1) / ((2.0 * n + 5.0) * math.sqrt(kendall_weight(n))) if n >= MIN_STRATUM else 0.0
        bound = min(bound, within)
    return bound


def kendall_tie_scale_sensitivity_add_remove(n: int, strata: int, floor: float = 0.0) -> float:
    """Bound on |g(D) - g(D')|, ``g = max(r, floor)`` with r the tie scale of
    :func:`~privgraph.stats.kendall.kendall_tie_scale` and ``floor`` public, when a row is
    added to a dataset D of n rows (K = ``strata`` cells of the conditioning variables).
    A floor of 1 or more makes g constant: 0.

    Derivation. Write ``Phi = sum w_k rho_k`` and ``W = sum w_k`` over the strata that
    enter (>= 3 rows), ``w0 = beta (9/4) n`` (beta = ``TIE_PRIOR``) and
    ``R^2 = (Phi + w0) / (W + w0)``. Then ``R'^2 - R^2 = (dPhi + dw0 - R^2 (dW + dw0)) /
    (W' + w0')``, with ``dw0 = 9 beta / 4`` and, for the stratum j of m rows that gains the row:

    * m >= 3: ``dW = w(m+1) - w(m)`` in ``[0, 9/4]``. Each tie factor
      ``f = 1 - P / m^3`` (``P = sum t_i^3``, t the counts of one margin) moves by
      ``(P D / m^3 - (3t^2 + 3t + 1)) / (m + 1)^3`` with ``D = 3m^2 + 3m + 1``, both terms in
      ``[0, D]``, so by less than ``3 / (m + 1)``; as ``f`` lies in [0, 1],
      ``|rho' - rho| < 6 / (m + 1)``, and ``dPhi = dW rho' + w(m) (rho' - rho)`` lies in
      ``(-13.5, 9/4 + 13.5)`` since ``w(m) < (9/4) m``. The numerator lies in
      ``(-15.75, 15.75 + 9 beta / 4)``.
    * m = 2: the stratum enters, ``dW = w(3) = 27/11`` and ``dPhi`` in ``[0, 27/11]``:
      the numerator is smaller. m < 2: ``dPhi = dW = 0``, the numerator is at most dw0.

    The denominator is at least ``W_min(n, K) + beta (9/4) (n + 1)``
    (:func:`min_total_weight`; W_min grows with n). Since ``W < (9/4) n`` for n rows,
    ``R^2 >= beta / (1 + beta)`` on both sides, and ``|r' - r| = |R'^2 - R^2| / (r + r')``.
    So ``|r' - r| <= (15.75 + 9 beta / 4) / (2 r_min (W_min(n, K) + beta (9/4) (n + 1)))``
    with ``r_min = sqrt(beta / (1 + beta))``: of order ``1 / n`` (about 3.5e-4 at n = 1e5,
    K = 1), against the stratified z's ``5.25 / sqrt(n)``. With a floor f: g is constant
    while both r, r' <= f; otherwise one of them exceeds f, and as max is 1-Lipschitz,
    ``|g' - g| <= |r' - r| <= |R'^2 - R^2| / (max(f, r_min) + r_min)``.

    >>> round(kendall_tie_scale_sensitivity_add_remove(100_000, 1) * 1e4, 2)
    3.49
    >>> kendall_tie_scale_sensitivity_add_remove(100_000, 1, floor=1.0)
    0.0
    """
    n, strata = positive_int("n", n, 0), positive_int("strata", strata)
    floor = float(floor)
    if not floor >= 0.0:
        raise InvalidInput(f"floor must be >= 0, got {floor!r}")
    if floor >= 1.0:
        return 0.0
    beta = TIE_PRIOR
    r_min = math.sqrt(beta / (1.0 + beta))
    weight = min_total_weight(n, strata, kendall_weight) + beta * 2.25 * (n + 1)
    return (15.75 + 2.25 * beta) / ((max(floor, r_min) + r_min) * weight)


def kendall_tie_scale_sensitivity_replace_one(n: int, strata: int, floor: float = 0.0) -> float:
    """Bound on |g(D) - g(D')| (``g = max(r, floor)``, the tie scale) when one of n rows is
    replaced: a removal then an addition through a dataset of n - 1 rows,
    ``2 * kendall_tie_scale_sensitivity_add_remove(n - 1, K, floor)``.

    >>> round(kendall_tie_scale_sensitivity_replace_one(100_000, 1) * 1e4, 2)
    6.98
    """
    n, strata = positive_int("n", n), positive_int("strata", strata)
    return 2.0 * kendall_tie_scale_sensitivity_add_remove(n - 1, strata, floor)


def conditional_spearman_sensitivity_add_remove(n: int, strata: int) -> float:
    """Bound on |z(D) - z(D')| for :func:`~privgraph.stats.spearman.conditional_spearman`.

    Same argument as :func:`conditional_kendall_sensitivity_add_remove`, with
    ``a_k = (n_k - 1) rho_k = 12 Q_k / (n_k (n_k + 1))`` (rho-a), ``w_k = n_k - 1``
    (``|a_k| <= w_k``). A row added to a stratum of m >= 3 rows moves ``a_k`` by at most
    ``(11 m^2 - 3m - 2) / ((m+1)(m+2)) < 11`` (from ``|Q' - Q| <= m (3m - 1) / 4`` and
    ``|Q| <= m (m^2 - 1) / 12``) and W by 1; a stratum entering has ``|a'| <= 2 = w(3)``.
    So ``|z' - z| <= min(G, 11.5 / sqrt(W_min(n, K)))``, with G (all data) about 2.97.
    priv-pc.txt Theorem 9 gives about 31 sqrt(k) / sqrt(n - k) for its no-ties rho.

    >>> round(conditional_spearman_sensitivity_add_remove(10_000, 1) * 100, 3)
    11.501
    """
    n, strata = positive_int("n", n, 0), positive_int("strata", strata)
    return _SPEARMAN.add_remove(n, strata)


def conditional_spearman_sensitivity_replace_one(n: int, strata: int) -> float:
    """Bound for the stratified Spearman z when one of n rows is replaced.

    Removal then addition: ``2 * conditional_spearman_sensitivity_add_remove(n - 1, K)``;
    for K = 1, ``sqrt(n - 1) * spearman_rho_a_sensitivity_replace_one(n)`` if smaller.

    >>> round(conditional_spearman_sensitivity_replace_one(10_000, 1) * 100, 3)
    17.996
    """
    n, strata = positive_int("n", n), positive_int("strata", strata)
    bound = 2.0 * _SPEARMAN.add_remove(n - 1, strata)
    if strata == 1:
        within = math.sqrt(n - 1) * spearman_rho_a_sensitivity_replace_one(n) if n >= MIN_STRATUM else 0.0
        bound = min(bound, within)
    return bound
