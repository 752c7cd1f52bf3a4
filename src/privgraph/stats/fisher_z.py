"""Fisher's z test of a partial correlation, from a correlation matrix, with or without noise in it.

For columns x, y and a set S, the partial correlation is read from the inverse ``P`` of the
correlation matrix of ``(x, y, S)``: ``r = -P_xy / sqrt(P_xx P_yy)``; Fisher's
``z = atanh(r)`` has variance ``1 / (n - |S| - 3)`` under a Gaussian model, and the test
rejects independence when ``sqrt(n - |S| - 3) |z|`` exceeds the normal quantile. Without
noise this is causal-learn's ``fisherz`` to the last operation (the same inverse, the same
clamp of ``|r| >= 1``, the same p-value), so non-private PC on it gives causal-learn's
skeleton exactly.

**Noise in the matrix** (:func:`partial_correlation_noise`). When the covariance ``C`` was
released with independent noise of standard deviation ``s`` on each entry of its upper
triangle (mirrored below), the partial correlation moves, to first order, by
``sum_{j<=k} dC_jk H_jk`` (halved on the diagonal) with ``H = G + G^T`` and
``G = p_x p_y^T / sqrt(P_xx P_yy) + (r / 2) (p_x p_x^T / P_xx + p_y p_y^T / P_yy)``
(``p_x``: column x of ``P``; from ``dP = -P dC P``). Written on the correlation matrix
(``R = D^-1/2 C D^-1/2``, the partial correlation being scale-free) each entry's noise has
standard deviation ``s / sqrt(C_jj C_kk)``, so with ``K = diag(a) H diag(a)``,
``a_j = 1 / sqrt(C_jj)``: ``Var(r) = s^2 (||K||_F^2 / 2 - sum_j K_jj^2 / 4)``. The noise-aware
test widens z's standard deviation to ``sqrt(1 / (n - |S| - 3) + Var(r) / (1 - r^2)^2)``
(the delta method through atanh). Everything here is post-processing of the released
matrix: no privacy cost.
"""

from __future__ import annotations

import math
from math import log, sqrt
from typing import Sequence

import numpy as np
from scipy.stats import norm
from privgraph.validation import InvalidInput


def partial_correlation(corr: np.ndarray, index: Sequence[int]) -> tuple[float, np.ndarray]:
    """``(r, P)``: the partial correlation of the first two of ``index`` given the rest, from
    ``corr``, and the inverse ``P`` of the sub-matrix (as causal-learn's fisherz computes it).

    >>> c = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.25], [0.5, 0.25, 1.0]])
    >>> abs(round(partial_correlation(c, [1, 2, 0])[0], 12))
    0.0
    """
    sub = corr[np.ix_(index, index)]
    try:
        inv = np.linalg.inv(sub)
    except np.linalg.LinAlgError:
        raise InvalidInput("the correlation matrix is singular: the Fisher-z test cannot run (a column is a "
                           "linear function of others, or constant)") from None
    r = -inv[0, 1] / sqrt(abs(inv[0, 0] * inv[1, 1]))
    if abs(r) >= 1:
        r = (1.0 - np.finfo(float).eps) * np.sign(r)
    return float(r), inv


def fisher_z_p_value(r: float, n: float, conditioning: int, noise_var: float = 0.0) -> float:
    """Two-sided p-value of Fisher's z for a partial correlation r given ``conditioning``
    columns on n rows; ``noise_var``: the variance the released matrix's noise adds to r.

    >>> round(fisher_z_p_value(0.0, 100, 0), 6), fisher_z_p_value(0.5, 100, 0) < 1e-6
    (1.0, True)
    >>> fisher_z_p_value(0.1, 1000, 1) < fisher_z_p_value(0.1, 1000, 1, noise_var=1e-3)
    True
    """
    dof = n - conditioning - 3
    if dof <= 0:
        return 1.0  # no degrees of freedom: no evidence against independence
    Z = 0.5 * log((1 + r) / (1 - r))
    if noise_var > 0:
        X = abs(Z) / sqrt(1.0 / dof + noise_var / (1 - r * r) ** 2)
    else:
        X = sqrt(dof) * abs(Z)
    return float(2 * (1 - norm.cdf(abs(X))))


def partial_correlation_noise(corr_inv: np.ndarray, r: float, variances: np.ndarray, noise_sd: float) -> float:
    """Var(r) from independent noise of sd ``noise_sd`` on each covariance entry (module
    docstring): ``corr_inv`` is the inverse of the sub-correlation matrix (x, y first),
    ``variances`` the columns' covariance diagonal in the same order. ``noise_sd`` may also
    be a symmetric matrix in that order: entry (j, k)'s own sd (0 on an exact diagonal).

    >>> inv = np.linalg.inv(np.eye(3))
    >>> round(partial_correlation_noise(inv, 0.0, np.ones(3), 0.1), 6)  # r = 0: the noise on R_xy alone
    0.01
    >>> round(partial_correlation_noise(inv, 0.0, np.ones(3), np.full((3, 3), 0.1)), 6)
    0.01
    """
    px, py = corr_inv[:, 0], corr_inv[:, 1]
    pxx, pyy = corr_inv[0, 0], corr_inv[1, 1]
    g = np.outer(px, py) / math.sqrt(abs(pxx * pyy)) + (r / 2) * (np.outer(px, px) / pxx + np.outer(py, py) / pyy)
    a = 1.0 / np.sqrt(variances)
    k = (g + g.T) * np.outer(a, a)
    if np.ndim(noise_sd):  # a sd for each entry (symmetric, same order): sum_{j<k} (s K)_jk^2 + sum_j (s K)_jj^2 / 4
        w = k * noise_sd
        return float(np.sum(w * w) / 2 - np.sum(np.diag(w) ** 2) / 4)
    return float(noise_sd**2 * (np.sum(k * k) / 2 - np.sum(np.diag(k) ** 2) / 4))


class FisherZTest:
    """The Fisher-z CI test on a (released) correlation matrix: ``p_value(x, y, S)``.

    ``noise_sd`` (covariance units; a scalar, or a matrix of each entry's sd) and
    ``variances`` (the covariance's diagonal) make the test noise-aware; without them it is
    the plain test.

    >>> c = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.25], [0.5, 0.25, 1.0]])
    >>> t = FisherZTest(c, 1000)
    >>> t.p_value(1, 2, (0,)) > 0.05, t.p_value(0, 1, ()) < 0.05
    (True, True)
    """

    name = "fisher-z"

    def __init__(self, corr: np.ndarray, n: float, *, noise_sd: float = 0.0, variances: np.ndarray | None = None):
        self.corr, self.n = np.asarray(corr, dtype=float), float(n)
        self.noise_sd = np.asarray(noise_sd, dtype=float) if np.ndim(noise_sd) else float(noise_sd)
        self.variances = variances

    def p_value(self, x: int, y: int, S: Sequence[int]) -> float:
        index = [x, y, *S]
        r, inv = partial_correlation(self.corr, index)
        noise = 0.0
        if np.ndim(self.noise_sd):
            noise = partial_correlation_noise(inv, r, self.variances[index], self.noise_sd[np.ix_(index, index)])
        elif self.noise_sd > 0:
            noise = partial_correlation_noise(inv, r, self.variances[index], self.noise_sd)
        return fisher_z_p_value(r, self.n, len(S), noise)


__all__ = ["FisherZTest", "fisher_z_p_value", "partial_correlation", "partial_correlation_noise"]
