"""Releases calibrated to local sensitivity: propose-test-release and the smooth-sensitivity median.

Both release statistics with no useful global sensitivity (an IQR, the median of
subsample-and-aggregate block results) and both cost (epsilon, delta) with delta > 0.
"""

from __future__ import annotations

import math

import numpy as np

from privgraph.privacy.budget import Budget
from privgraph.privacy.calibration import grid_for, grid_shift
from privgraph.privacy.ledger import Charge
from privgraph.privacy.mechanisms import Release, as_array, check_pure_epsilon, pay, snap_to_grid
from privgraph.privacy.neighbours import (
    Neighbours,
    check_delta,
    check_sensitivity,
)
from privgraph.privacy.samplers import PURE_DP_SLACK, NoiseSampler
from privgraph.validation import InvalidInput, positive_int


def ptr_threshold(epsilon: float, delta: float) -> int:
    """Smallest integer T with P(Z > T) <= delta for Z discrete Laplace of scale 1/epsilon.

    ``P(Z > T) = a^(T+1) / (1 + a)`` with ``a = exp(-epsilon)``. (The test
    ``R > 1 + ln(1/delta)`` with Lap(1/epsilon) noise of private-anm.txt fails with
    probability ``delta^epsilon e^-epsilon / 2``, far above delta when epsilon < 1.)

    >>> ptr_threshold(1.0, 1e-6)
    13
    >>> ptr_threshold(0.1, 1e-6)
    131
    """
    a = math.exp(-epsilon)
    return max(0, math.ceil((math.log(delta) + math.log1p(a)) / -epsilon - 1))


def propose_test_release(
    value: float,
    *,
    distance: int,
    bound: float,
    epsilon: float,
    delta: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    budget: Budget | None = None,
) -> Release:
    """Propose a sensitivity bound, test it privately, release with noise if it holds.

    Dwork and Lei (2009); Vadhan (2017), Section 3.3. ``distance`` is the number of
    records that must change (under ``neighbours``) to reach a dataset whose local
    sensitivity exceeds ``bound`` (zero if the data itself exceeds it); as a function of
    the data it has sensitivity 1. The test ``distance + Z > T`` uses Z discrete Laplace
    of scale 1/epsilon and the threshold of :func:`ptr_threshold`, so an unstable dataset
    passes with probability at most delta. If it passes, ``value`` is released with
    Laplace noise for sensitivity ``bound`` (grid-safe, as :func:`laplace_mechanism`);
    otherwise ``None`` (bottom). Cost: (2 epsilon, delta) under ``neighbours``.

    >>> from privgraph.privacy import SeededSampler
    >>> rel = propose_test_release(2.0, distance=500, bound=0.1, epsilon=1.0, delta=1e-6,
    ...                            neighbours=Neighbours.REPLACE_ONE, sampler=SeededSampler(0))
    >>> rel.value is not None, rel.ledger.total().epsilon
    (True, 2.0)
    >>> propose_test_release(2.0, distance=0, bound=0.1, epsilon=1.0, delta=1e-6,
    ...     neighbours=Neighbours.REPLACE_ONE, sampler=SeededSampler(0)).value is None
    True
    """
    epsilon = check_pure_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise InvalidInput("delta must be positive for propose-test-release, got 0")
    bound = check_sensitivity(bound, "bound")
    if bound == 0:
        raise InvalidInput("bound must be positive, got 0")
    distance = positive_int("distance", distance, 0)
    x, _ = as_array(value)
    if x.ndim:
        raise InvalidInput(f"value must be a number, got shape {x.shape}")
    charge = Charge("propose_test_release", 2 * epsilon, delta, Neighbours.parse(neighbours),
                    sensitivity=bound, slack=2 * PURE_DP_SLACK, note="bound proposed")
    ledger = pay(charge, budget)
    eps = epsilon - PURE_DP_SLACK
    passed = distance + int(sampler.discrete_laplace(1 / eps, 1)[0]) > ptr_threshold(eps, delta)
    if not passed:
        return Release(None, ledger)
    grid = grid_for(bound)
    t = grid_shift(bound, grid) / eps
    return Release(float(snap_to_grid(x, grid) + sampler.laplace_on_grid(t * grid, grid, 1)[0]), ledger)


def smooth_sensitivity_of_median(values: np.ndarray, lower: float, upper: float, beta: float) -> float:
    """beta-smooth sensitivity of the median of values clamped to [lower, upper].

    Nissim, Raskhodnikova, Smith (2007), Proposition 3.4: with the sorted values padded
    by ``lower`` on the left and ``upper`` on the right and m the median index,
    ``S = max_k exp(-k beta) max_{0<=t<=k+1} (x_{m+t} - x_{m+t-k-1})``. Note ``beta``, not
    epsilon, in the exponent (the Priv-PC appendix writes e^(-k epsilon)). Odd n.

    >>> smooth_sensitivity_of_median(np.array([0.5, 0.5, 0.5]), 0.0, 1.0, 10.0) < 1e-4
    True
    """
    x = np.sort(np.clip(values, lower, upper))
    n = x.size
    m = (n - 1) // 2  # 0-based median index (n odd)
    padded = np.concatenate([np.full(n + 2, lower), x, np.full(n + 2, upper)])
    off = n + 2  # padded[off + i] == x[i]
    best = 0.0
    for k in range(n + 1):
        if math.exp(-k * beta) * (upper - lower) <= best:
            break
        t = np.arange(k + 2)
        width = padded[off + m + t] - padded[off + m + t - k - 1]
        best = max(best, math.exp(-k * beta) * float(width.max()))
    return best


def smooth_sensitivity_median(
    values,
    *,
    epsilon: float,
    delta: float,
    lower: float,
    upper: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    budget: Budget | None = None,
) -> Release:
    """Median of values clamped to [lower, upper], with noise scaled to its smooth sensitivity.

    For subsample-and-aggregate: ``values`` are the results on disjoint blocks, and
    ``neighbours`` is the record-level relation under which one record changes at most
    one value (the caller's claim; true for a fixed secret partition into blocks).
    Mechanism: ``median + (S / alpha) Z`` with S the beta-smooth sensitivity and Z
    standard Laplace, which is (epsilon, delta)-DP (NRS 2007, Theorem 2.6) when Laplace is
    (alpha, beta)-admissible. We derive (rather than copy the Priv-PC appendix, whose
    ``epsilon ln(1/delta)/2`` is not a valid beta): sliding by ``|D| <= alpha = epsilon/2``
    costs at most e^(epsilon/2); dilation by ``|lam| <= beta`` multiplies the density by at
    most ``exp(|lam| + (e^|lam| - 1)|z|)``, at most ``e^(epsilon/2)`` on ``|z| <= z0 = ln(2/delta)``
    when ``beta = epsilon / (2 (1 + 2 z0))`` (using ``e^b - 1 <= 2b`` for b <= 1), and the
    rest has mass ``e^-z0 = delta/2``. The Laplace draw is a fine lattice Laplace plus a
    uniform jitter (a continuous density within a factor ``e^(2**-20)`` of Laplace, covered
    by a slack of 2**-18 in epsilon), and the result is rounded to a public grid of
    ``(upper - lower) * 2**-24``, so its low-order bits carry nothing. Requires an odd
    number of values (an even count drops the last). With small beta the median is only
    stable once about ``1/beta`` values agree: expect to need thousands of blocks.

    >>> from privgraph.privacy import SeededSampler
    >>> rel = smooth_sensitivity_median([0.2] * 2001, epsilon=1.0, delta=1e-6, lower=0.0, upper=1.0,
    ...                                 neighbours=Neighbours.REPLACE_ONE, sampler=SeededSampler(0))
    >>> abs(rel.value - 0.2) < 0.05, rel.ledger.total().delta
    (True, 1e-06)
    """
    epsilon = check_pure_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise InvalidInput("delta must be positive for the smooth-sensitivity median, got 0")
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise InvalidInput(f"need finite lower < upper, got lower={lower!r}, upper={upper!r}")
    x, _ = as_array(values, "values")
    if x.ndim != 1 or x.size < 3:
        raise InvalidInput(f"values must be a 1-D sequence of at least 3 numbers, got shape {x.shape}")
    if x.size % 2 == 0:
        x = x[:-1]
    slack = 2.0**-18
    charge = Charge("smooth_sensitivity_median", epsilon, delta, Neighbours.parse(neighbours),
                    note=f"{x.size} blocks in [{lower:g}, {upper:g}]")
    ledger = pay(charge, budget)
    eps = epsilon - slack
    alpha, beta = eps / 2, eps / (2 * (1 + 2 * math.log(2 / delta)))
    s = smooth_sensitivity_of_median(x, lower, upper, beta)
    lattice = 2.0**-20
    z = sampler.laplace_on_grid(1.0, lattice, 1)[0] + lattice * (sampler.uniform(1)[0] - 0.5)
    med = float(np.median(np.clip(x, lower, upper)))
    out_grid = 2.0 ** math.floor(math.log2(upper - lower)) * 2.0**-24
    return Release(float(np.round((med + s / alpha * z) / out_grid) * out_grid), ledger)
