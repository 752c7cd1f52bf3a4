"""Dwork and Lei's release of the log interquartile range: propose-test-release on two bin grids.

private-anm.txt, Algorithm 4, after Dwork and Lei (2009), with three corrections:

* the second bin grid is the first shifted by half a bin, ``[e^(k2 - 1/2), e^(k2 + 1/2))``
  with ``k2 = floor(log IQR + 1/2)``, so that both bins contain the IQR (the text writes
  ``B2 = [e^(k - 0.5), e^(k + 0.5))`` with the first grid's k, which misses it half the time);
* the threshold is :func:`~privgraph.privacy.stability.ptr_threshold` (the text's
  ``1 + log(1/delta)`` fails with probability ``delta^epsilon / 2``, not delta);
* the cost is derived below: (epsilon, delta) in total for ``epsilon/3`` per step.

Quartiles are order statistics at public 1-based ranks ``a < b`` that depend on m only
(the caller passes them: ``ceil(m/4)`` and ``ceil(3m/4)`` for
:func:`privgraph.stats.iqr.iqr`); m is public (replace-one neighbours only).

Derivation
----------
Let ``x_(i)`` be the sorted sample, ``-inf`` for i < 1 and ``+inf`` for i > m. After k
replacements the IQR is at most ``U_k = max_{u+v=k} x_(b+u) - x_(a-v)`` and at least
``L_k = max(0, min_{u+v=k} x_(b-u) - x_(a+v))``: one replacement raises the rank of the
upper quartile (a point taken from below it and put above) or lowers that of the lower
quartile (taken from above it, put below), never both. For neighbours D, D' the same
argument gives ``U_k(D') <= U_(k+1)(D)`` and ``L_k(D') >= L_(k+1)(D)``.

For a bin ``B = [lo, hi)`` holding IQR(D), let ``A(D) = min{k >= 1: U_k >= hi or L_k < lo}``
(a lower bound on the number of changes that move the IQR out of B) and ``g = A - 1``.
Then (i) g is 1-sensitive: within one bin by the inequalities above; if D and D' have
their IQRs in different bins, ``U_1`` / ``L_1`` already reach the other IQR, so
``A(D) = A(D') = 1``; (ii) ``g(D) >= 1`` implies every neighbour's IQR is in B, so the
log-IQR moves by less than 1 (the bin's width in log scale). An IQR of 0 sets ``g = 0``.

Mechanism: for grid j = 1, 2 in turn, if ``g_j + Z_j > T`` (Z_j discrete Laplace of scale
``1/e``, T the threshold for ``delta/2``), release ``log IQR + Lap(1/e)`` and stop; else
bottom after both. With ``e = epsilon/3``: the bottom output has probability ratio at most
``e^(2e)`` between neighbours, the first branch ``e^(2e)`` plus delta/2 when ``g_1 = 0``, the
second ``e^(3e)`` plus delta/2 when ``g_2 = 0``; summing over any event gives
``(3e, delta)``-DP, i.e. (epsilon, delta).
"""

from __future__ import annotations

import math

import numpy as np

from privgraph.privacy.budget import Budget
from privgraph.privacy.calibration import grid_for, grid_shift
from privgraph.privacy.ledger import Charge
from privgraph.privacy.mechanisms import Release, check_pure_epsilon, pay, snap_to_grid
from privgraph.privacy.neighbours import Neighbours, check_delta
from privgraph.privacy.samplers import PURE_DP_SLACK, NoiseSampler
from privgraph.privacy.stability import ptr_threshold
from privgraph.validation import InvalidInput


def quartile_envelope(sorted_values: np.ndarray, ranks: tuple[int, int], steps: int) -> tuple[np.ndarray, np.ndarray]:
    """``(U_k, L_k)`` for k = 0..steps: bounds on the IQR after k replacements.

    >>> U, L = quartile_envelope(np.arange(1.0, 9.0), (2, 6), 2)
    >>> U.tolist(), L.tolist()
    ([4.0, 5.0, inf], [4.0, 3.0, 2.0])
    """
    a, b = ranks
    pad = steps + 1
    x = np.concatenate([np.full(pad, -np.inf), sorted_values, np.full(pad, np.inf)])
    k = np.arange(steps + 1)[:, None]
    u = np.arange(steps + 1)[None, :]
    ok = u <= k
    v = np.where(ok, k - u, 0)
    up = np.where(ok, x[pad + b - 1 + u] - x[pad + a - 1 - v], -np.inf).max(axis=1)
    with np.errstate(invalid="ignore"):
        low = np.where(ok, x[pad + b - 1 - u] - x[pad + a - 1 + v], np.inf).min(axis=1)
    return up, np.maximum(np.nan_to_num(low, nan=0.0), 0.0)


def bin_distance(sorted_values: np.ndarray, ranks: tuple[int, int], shift: float, cap: int) -> int:
    """``min(g, cap)`` for the log-scale bin grid offset by ``shift`` (0 or 1/2); see module doc.

    ``U_k`` only grows and ``L_k`` only shrinks with k, so the first k that leaves the bin
    is found by bisection, each step O(k).

    >>> bin_distance(np.arange(1.0, 1001.0), (250, 750), 0.0, 50)   # evenly spread: stable
    50
    >>> bin_distance(np.array([0.0] * 10 + [1.0] * 10), (5, 11), 0.0, 50)   # Q3 on the edge of a gap
    0
    """
    a, b = ranks
    width = sorted_values[b - 1] - sorted_values[a - 1]
    if not 0 < width < math.inf:  # zero (ties) or overflowing: unstable at once
        return 0
    k = math.floor(math.log(width) + shift)
    lo, hi = math.exp(k - shift), math.exp(k + 1 - shift)
    pad = cap + 2
    x = np.concatenate([np.full(pad, -np.inf), sorted_values, np.full(pad, np.inf)])

    def leaves(steps: int) -> bool:
        u = np.arange(steps + 1)
        up = float((x[pad + b - 1 + u] - x[pad + a - 1 - (steps - u)]).max())
        low = float((x[pad + b - 1 - u] - x[pad + a - 1 + (steps - u)]).min())
        return up >= hi or low < lo

    first, last = 1, cap + 1  # A is the first k in [1, cap + 1] that leaves, or beyond
    if not leaves(last):
        return cap
    while first < last:
        mid = (first + last) // 2
        first, last = (first, mid) if leaves(mid) else (mid + 1, last)
    return first - 1


def log_iqr_charge(epsilon: float, delta: float) -> Charge:
    """The charge :func:`log_iqr_release` makes at (epsilon, delta) (public parameters only).

    >>> c = log_iqr_charge(0.25, 1e-7)
    >>> c.mechanism, c.epsilon, c.delta, c.neighbours.value
    ('log_iqr_ptr', 0.25, 1e-07, 'replace_one')
    """
    return Charge("log_iqr_ptr", epsilon, delta, Neighbours.REPLACE_ONE, sensitivity=1.0,
                  slack=3 * PURE_DP_SLACK, note="two bin grids, noise on log IQR")


def log_iqr_release(
    values,
    *,
    ranks: tuple[int, int],
    epsilon: float,
    delta: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    budget: Budget | None = None,
) -> Release:
    """Release ``log(x_(b) - x_(a))`` with Laplace noise of scale ``3/epsilon``, or None (bottom).

    ``ranks = (a, b)``: the public 1-based ranks of the lower and upper quartiles.
    (epsilon, delta)-DP under replace-one neighbours (see the module docstring); the
    released value has noise ``Lap(3 / epsilon)`` on the log-IQR (up to the grid's 2**-12).

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> x = np.random.default_rng(0).normal(size=2000)
    >>> rel = log_iqr_release(x, ranks=(500, 1500), epsilon=3.0, delta=1e-6, neighbours=Neighbours.REPLACE_ONE,
    ...                       sampler=SeededSampler(0))
    >>> rel.value is not None, rel.ledger.total().epsilon, rel.ledger.total().delta
    (True, 3.0, 1e-06)
    """
    epsilon = check_pure_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise InvalidInput("delta must be positive for the IQR release, got 0")
    if Neighbours.parse(neighbours) is not Neighbours.REPLACE_ONE:
        raise InvalidInput(f"the IQR release is derived for replace-one neighbours, got {neighbours!r}")
    x = np.sort(np.asarray(values, dtype=np.float64))
    if x.ndim != 1 or x.size < 4 or not np.isfinite(x).all():
        raise InvalidInput(f"values must be a finite 1-D sample of at least 4 numbers, got shape {x.shape}")
    a, b = ranks
    if not (1 <= a < b <= x.size):
        raise InvalidInput(f"ranks must satisfy 1 <= a < b <= {x.size}, got {ranks!r}")
    ledger = pay(log_iqr_charge(epsilon, delta), budget)
    eps = epsilon / 3 - PURE_DP_SLACK
    threshold = ptr_threshold(eps, delta / 2)
    cap = threshold + math.ceil(30 / eps)  # P(Z < -30/eps) = e^-30 / 2: the cap costs nothing
    for shift in (0.0, 0.5):
        g = bin_distance(x, (a, b), shift, cap)
        if g + int(sampler.discrete_laplace(1 / eps, 1)[0]) > threshold:
            width = x[b - 1] - x[a - 1]
            # g = 0 there, so this branch has probability <= delta/2 and any output is covered
            # by delta: answer bottom rather than fail after the charge (log of 0 or of inf)
            if not 0 < width < math.inf:
                return Release(None, ledger)
            return Release(_noisy_log(width, eps, sampler), ledger)
    return Release(None, ledger)


def log_iqr_scale(epsilon: float) -> float:
    """The Laplace scale of the value :func:`log_iqr_release` releases (3/epsilon, up to 2**-12).

    >>> abs(log_iqr_scale(3.0) - 1.0) < 3e-4
    True
    """
    grid = grid_for(1.0)
    return grid_shift(1.0, grid) / (check_pure_epsilon(epsilon) / 3 - PURE_DP_SLACK) * grid


def _noisy_log(width: float, eps: float, sampler: NoiseSampler) -> float:
    grid = grid_for(1.0)
    t = grid_shift(1.0, grid) / eps
    value = snap_to_grid(np.array(math.log(width)), grid)
    return float(value + sampler.laplace_on_grid(t * grid, grid, 1)[0])
