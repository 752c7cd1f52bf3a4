"""Rank correlations of every pair of columns, and their map to a Gaussian copula's correlations.

The nonparanormal PC (Liu et al. 2012; Harris and Drton 2013) runs Fisher's z on the latent
Gaussian correlation of a copula model, estimated from ranks only, so that a strictly
increasing transform of any column changes nothing and no bounds are needed.

**The statistic**: Kendall's tau-a of each pair, ``tau = S / (n (n - 1) / 2)`` with
``S = sum_{i<i'} sign(x_i - x_i') sign(y_i - y_i')`` (a tie gives 0). A missing value is tied
with every other row in its column (its pairs give 0); n counts every row.

**Why Kendall, not Spearman** (per entry, replace-one, n public;
:mod:`privgraph.stats.sensitivity`): tau-a moves by at most ``4 / n`` (tight), Spearman's
rho-a by up to ``18 / n`` (a bound; priv-pc.txt's constants are 2 / (n - 1) for Kendall,
false, and 30 / n for Spearman). Both have null variance near ``1/n`` times a constant that
the maps below turn into the same ``pi^2 / (9 n)`` on the correlation scale, while the maps'
slopes at 0 are ``pi / 2`` (Kendall) and ``pi / 3`` (Spearman): the noise on a correlation
is ``2 pi / n`` against up to ``6 pi / n``. tau-a's bound also holds with ties, which
ordinal columns have.

**The vector's L2 sensitivity** (:func:`kendall_matrix_l2_sensitivity`): ``2 d / n`` over
the ``d (d - 1) / 2`` pairs of d columns (the per-entry bound alone gives
``(4 / n) sqrt(d (d - 1) / 2)``, about ``1.41`` times more).

**The map** (:func:`pearson_from_kendall`): under a Gaussian copula ``r = sin(pi tau / 2)``
(Kruskal 1958; Spearman's is ``2 sin(pi rho / 6)``). Its slope ``(pi / 2) cos(pi tau / 2)``
carries a released noise's sd to the correlation scale (:func:`pearson_noise_sd`).

**Effective n** (:data:`KENDALL_VARIANCE_RATIO`): under independence ``Var(tau-a) =
2 (2n + 5) / (9 n (n - 1)) ~ 4 / (9 n)``, so ``Var(sin(pi tau / 2)) ~ pi^2 / (9 n)``,
``pi^2 / 9 = 1.097`` times Pearson's ``1 / n``: Fisher's z is run with
``n_eff = floor(9 n / pi^2)`` rows, which keeps its level near alpha at the null (where
the test decides). Away from the null the rank estimate's variance differs from Pearson's
(Harris and Drton 2013, Sec. 3); PC's decisions are made near the null.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import kendalltau

from privgraph.stats.kendall import MAX_RAW_ROWS
from privgraph.validation import InvalidInput, positive_int

#: ``Var(sin(pi tau / 2)) / Var(Pearson's r)`` under independence, to first order: ``pi^2 / 9``.
KENDALL_VARIANCE_RATIO = math.pi**2 / 9


def kendall_matrix_l2_sensitivity(n: int, d: int) -> float:
    """``2 d / n``: L2 sensitivity of the vector of tau-a over all pairs of d columns when
    one of n rows is replaced (replace-one, n public). Ties allowed (missing values too).

    Derivation. Let row k be replaced. Against any other row i, write
    ``a_j = sign(x'_kj - x_ij)`` and ``b_j = sign(x_kj - x_ij)`` in ``{-1, 0, 1}`` (new and
    old row; 0 for a tie). Pair (j, l)'s S moves by ``sum_i (a^i_j a^i_l - b^i_j b^i_l)``:
    the vector over pairs is a sum over the n - 1 other rows of ``v_i`` with
    ``||v_i||^2 = sum_{j<l} (a_j a_l - b_j b_l)^2 = (||a a^T - b b^T||_F^2 - sum_j
    (a_j^2 - b_j^2)^2) / 2 <= (|a|^4 + |b|^4 - 2 (a.b)^2) / 2 <= d^2`` (``|a|^2``, ``|b|^2``
    count non-zeros, at most d). By the triangle inequality ``||dS|| <= (n - 1) d`` and
    ``||d tau|| <= 2 (n - 1) d / (n (n - 1)) = 2 d / n``.
    Tight for even d: n - 1 distinct rows, the old row above all of them in every column
    (``b = 1``), the new one above them in half the columns and below in the other half
    (``a.b = 0``), so every ``v_i`` is the same vector of norm d. For d = 2 it is the
    per-entry ``4 / n`` of :func:`~privgraph.stats.sensitivity.kendall_tau_a_sensitivity_replace_one`.

    >>> kendall_matrix_l2_sensitivity(100, 2), kendall_matrix_l2_sensitivity(10_000, 20)
    (0.04, 0.004)
    """
    n, d = positive_int("n", n, 2), positive_int("d", d, 2)
    return 2.0 * d / n


def kendall_tau_a_matrix(values: np.ndarray) -> np.ndarray:
    """Kendall's tau-a of every pair of columns of an (n, d) float array, NaN for a missing
    value (tied with every row: its pairs give 0; n counts every row). O(n log n) a pair
    (scipy's tau-b on the rows where both are present, its S recovered exactly from the
    tie counts, :func:`~privgraph.stats.kendall.kendall_tau_a_raw`'s method).

    >>> x = np.array([[1.0, 1.0, 3.0], [2.0, 3.0, 2.0], [3.0, 2.0, np.nan]])
    >>> kendall_tau_a_matrix(x).round(4).tolist()
    [[1.0, 0.3333, -0.3333], [0.3333, 1.0, -0.3333], [-0.3333, -0.3333, 1.0]]
    """
    values = np.asarray(values, dtype=np.float64)
    n, d = values.shape
    if n < 2:
        raise InvalidInput(f"Kendall's tau needs at least 2 rows, got {n}")
    if n > MAX_RAW_ROWS:
        raise InvalidInput(f"the rank test computes tau exactly up to {MAX_RAW_ROWS} rows, got {n}")
    present = np.isfinite(values)
    tau = np.eye(d)
    for j in range(d):
        for k in range(j + 1, d):
            ok = present[:, j] & present[:, k]
            tau[j, k] = tau[k, j] = concordance_raw(values[ok, j], values[ok, k]) / (n * (n - 1) / 2)
    return tau


def concordance_raw(x: np.ndarray, y: np.ndarray) -> int:
    """``S = C - D`` of paired values, exactly, in O(n log n).

    >>> concordance_raw(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]))
    1
    """
    m = x.size
    if m < 2:
        return 0
    tot = m * (m - 1) // 2
    xtie, ytie = _tied_pairs(x), _tied_pairs(y)
    if xtie == tot or ytie == tot:
        return 0
    tau_b = kendalltau(x, y).statistic
    return int(round(float(tau_b) * math.sqrt(tot - xtie) * math.sqrt(tot - ytie)))


def pearson_from_kendall(tau: np.ndarray) -> np.ndarray:
    """``sin(pi tau / 2)``: the Gaussian copula's correlation from Kendall's tau.

    >>> pearson_from_kendall(np.array([0.0, 1 / 3, 1.0])).round(6).tolist()
    [0.0, 0.5, 1.0]
    """
    return np.sin(np.pi * np.clip(tau, -1.0, 1.0) / 2)


def pearson_noise_sd(tau: np.ndarray, tau_sd: float) -> np.ndarray:
    """The sd a noise of sd ``tau_sd`` on tau has on ``sin(pi tau / 2)``, to first order (the
    slope ``(pi / 2) cos(pi tau / 2)`` at the released tau): at most ``(pi / 2) tau_sd``.

    >>> pearson_noise_sd(np.array([0.0, 1.0]), 0.1).round(6).tolist()
    [0.15708, 0.0]
    """
    return (math.pi / 2) * np.abs(np.cos(np.pi * np.clip(tau, -1.0, 1.0) / 2)) * tau_sd


def effective_n(n: float) -> float:
    """``floor(9 n / pi^2)``: the rows Fisher's z is run with on a Kendall-mapped correlation
    (module docstring).

    >>> effective_n(10_000)
    9118.0
    """
    return float(math.floor(n / KENDALL_VARIANCE_RATIO))


def _tied_pairs(v: np.ndarray) -> int:
    counts = np.unique(v, return_counts=True)[1].astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


__all__ = ["KENDALL_VARIANCE_RATIO", "concordance_raw", "effective_n", "kendall_matrix_l2_sensitivity",
           "kendall_tau_a_matrix", "pearson_from_kendall", "pearson_noise_sd"]
