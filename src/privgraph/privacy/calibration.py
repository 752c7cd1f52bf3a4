"""Noise calibration: grids, the analytic Gaussian, the discrete Gaussian, zCDP conversion.

Pure functions of public parameters; nothing here touches data or randomness.
"""

from __future__ import annotations

import math

import privgraph.caches as caches
from privgraph.privacy.samplers import power_of_two_at_most

#: Grid resolution: the grid is a power of two at most 2**-GRID_BITS of the (per-coordinate)
#: sensitivity, so rounding to it adds at most a relative 2**-GRID_BITS to the sensitivity,
#: and a query moves by between 2**GRID_BITS and 2**(GRID_BITS+1) grid units.
GRID_BITS = 12


def grid_for(sensitivity: float, dimension: int = 1) -> float:
    """Power-of-two grid for a release with this L1/L2 sensitivity and dimension.

    At most ``2**-GRID_BITS`` of ``sensitivity / sqrt(dimension)``, so that rounding a
    vector of ``dimension`` values adds at most that fraction of the L2 sensitivity. The
    grid depends only on public parameters, never on the data.

    >>> grid_for(1.0) == 2.0**-12
    True
    >>> grid_for(3.0) == 2.0**-11
    True
    """
    return power_of_two_at_most(sensitivity / math.sqrt(dimension)) * 2.0**-GRID_BITS


#: Finest L1 grid, relative to the sensitivity: ``2**-L1_GRID_MAX_BITS`` of it. Values are
#: carried as int64 grid units clamped to ``+-2**61``, so this keeps every value up to
#: ``2**30`` sensitivities representable (a count of 1e9 at sensitivity 1) at the price of
#: a slightly larger rounding overhead above a million coordinates (see :func:`l1_grid_for`).
L1_GRID_MAX_BITS = 31


def l1_grid_for(sensitivity: float, dimension: int = 1) -> float:
    """Power-of-two grid for an L1 (Laplace) release of ``dimension`` values.

    Rounding a vector of ``d`` values can move each coordinate that differs between
    neighbours by one extra unit, so the rounded L1 move is up to ``D/g + d`` units (see
    :func:`grid_shift`). The grid is ``power_of_two_at_most(D) * 2**-b`` with
    ``b = min(GRID_BITS + ceil(log2 d), L1_GRID_MAX_BITS)``, so ``D/g >= 2**b`` and the
    noise overhead ``(floor(D/g) + d) / (D/g)`` is at most ``1 + 2**-GRID_BITS`` for
    ``d <= 2**19`` and ``1 + d 2**-31`` beyond (1.0005 at a million coordinates, 1.005 at
    ten million). The grid depends only on public parameters, never on the data; for
    ``d = 1`` it is :func:`grid_for`'s.

    >>> l1_grid_for(1.0) == grid_for(1.0) == 2.0**-12
    True
    >>> l1_grid_for(1.0, 1000) == 2.0**-22
    True
    >>> l1_grid_for(1.0, 10**7) == 2.0**-31
    True
    """
    bits = min(GRID_BITS + (int(dimension) - 1).bit_length(), L1_GRID_MAX_BITS)
    return power_of_two_at_most(sensitivity) * 2.0**-bits


def grid_shift(sensitivity: float, grid: float, dimension: int = 1) -> int:
    """How many grid units (L1) two rounded query values can differ by: floor(D/g) + d.

    For one coordinate, rounding moves each value by at most half a unit, so two rounded
    values ``a, b`` differ by at most ``|a - b|/g + 1`` units. Summed over the ``d``
    coordinates of a vector of L1 sensitivity ``D`` (only coordinates that differ can
    move, each by at most one extra unit), the rounded vectors differ by at most
    ``D/g + d`` units, and being an integer by at most ``floor(D/g) + d``. The bound is
    attained: ``d`` coordinates each moving by ``D/d`` from just below half a unit.

    >>> grid_shift(1.0, 0.25)
    5
    >>> grid_shift(1.0, 0.25, dimension=3)
    7
    """
    return int(math.floor(sensitivity / grid)) + int(dimension)


def _gauss_delta(epsilon: float, sensitivity: float, sigma: float) -> float:
    """Exact delta(epsilon) of the continuous Gaussian mechanism (Balle and Wang 2018, Thm 8)."""
    from scipy.special import log_ndtr  # lazy: keeps import privgraph.audit free of scipy

    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    first = math.exp(log_ndtr(a - b))
    second = math.exp(epsilon + log_ndtr(-a - b))
    return max(0.0, first - second)


@caches.lru(4096)
def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest sigma for which N(0, sigma^2) noise is (epsilon, delta)-DP at this L2 sensitivity.

    The analytic Gaussian mechanism of Balle and Wang (2018), Theorem 8: the exact
    condition ``Phi(D/2s - e s/D) - e^eps Phi(-D/2s - e s/D) <= delta``, solved by
    bisection (valid for every epsilon > 0, unlike the classical ``sqrt(2 ln(1.25/d))``).

    >>> s = analytic_gaussian_sigma(1.0, 1e-5, 1.0)
    >>> round(s, 3)
    3.731
    """
    lo, hi = 1e-12 * sensitivity, sensitivity
    while _gauss_delta(epsilon, sensitivity, hi) > delta:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _gauss_delta(epsilon, sensitivity, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return hi


def discrete_gaussian_delta_bound(epsilon: float, sigma: float, shift: int) -> float:
    """An upper bound on delta(epsilon) of the 1-D discrete Gaussian for an integer shift.

    Canonne, Kamath and Steinke (2020), Theorem 7: for Y ~ N_Z(0, sigma^2),
    ``delta = P[Y > a] - e^eps P[Y > a + shift]`` with ``a = eps sigma^2/shift - shift/2``.
    Tails are bounded by Gaussian integrals: for an integer k >= 1 the density is
    decreasing on [k-1, inf), so ``Q(k/sigma) <= P[Y >= k] <= Q((k-1)/sigma)`` (Q the normal
    tail), using that the normaliser ``sum_j exp(-j^2/2 sigma^2)`` is ``sqrt(2 pi) sigma``
    times ``1 + 2 exp(-2 pi^2 sigma^2) + ...`` (Poisson summation; a relative error below
    1e-77 for sigma >= 3, which the callers guarantee). For k <= 0 use the complement.

    >>> d = discrete_gaussian_delta_bound(1.0, 4000.0, 1000)
    >>> bool(0 < d < 1e-3)
    True
    """
    from scipy.special import ndtr  # lazy: keeps import privgraph.audit free of scipy

    def at_least(k: int) -> tuple[float, float]:  # bounds on P[Y >= k]
        if k >= 1:
            return float(ndtr(-k / sigma)), float(ndtr(-(k - 1) / sigma))
        lo, hi = at_least(1 - k)
        return 1.0 - hi, 1.0 - lo

    a = epsilon * sigma**2 / shift - shift / 2
    first_hi = at_least(math.floor(a) + 1)[1]
    second_lo = at_least(math.floor(a + shift) + 1)[0]
    return max(0.0, first_hi - math.exp(epsilon) * second_lo)


@caches.lru(4096)
def discrete_gaussian_sigma(epsilon: float, delta: float, shift: int) -> float:
    """sigma (grid units) for the 1-D discrete Gaussian with an integer shift bound.

    Starts from the analytic Gaussian's sigma and grows it by a relative 2**-12 until
    :func:`discrete_gaussian_delta_bound` certifies delta.
    """
    sigma = analytic_gaussian_sigma(epsilon, delta, float(shift))
    while discrete_gaussian_delta_bound(epsilon, sigma, shift) > delta:
        sigma *= 1 + 2.0**-12
    return sigma


def zcdp_delta(rho: float, epsilon: float) -> float:
    """delta(epsilon) implied by rho-zCDP (Canonne, Kamath, Steinke 2020, Corollary 13).

    ``delta = inf_{a>1} exp((a-1)(a rho - eps)) / (a-1) * (1 - 1/a)^a``.
    """
    from scipy.optimize import minimize_scalar  # lazy: keeps import privgraph.audit free of scipy

    def log_delta(log_a_minus_1: float) -> float:
        a = 1 + math.exp(log_a_minus_1)
        return (a - 1) * (a * rho - epsilon) - math.log(a - 1) + a * math.log1p(-1 / a)

    res = minimize_scalar(log_delta, bounds=(-20, 20), method="bounded", options={"xatol": 1e-10})
    return min(1.0, math.exp(min(res.fun, log_delta(0.0))))


@caches.lru(4096)
def zcdp_sigma(epsilon: float, delta: float, l2_shift: float) -> float:
    """Smallest sigma (grid units) whose rho = shift^2 / (2 sigma^2) meets (epsilon, delta)."""
    lo, hi = 1e-9, max(1.0, l2_shift)
    while zcdp_delta(l2_shift**2 / (2 * hi**2), epsilon) > delta:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if zcdp_delta(l2_shift**2 / (2 * mid**2), epsilon) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi
