"""Mechanisms: each names its neighbouring relation and sensitivity, and returns a Release.

Every mechanism takes its inputs and the keywords ``epsilon`` (and ``delta`` where it
applies), ``sensitivity``, ``neighbours`` and ``sampler``, plus an optional ``budget``. It
builds its :class:`~privgraph.privacy.ledger.Charge` first, has the budget reserve it (which
raises :class:`~privgraph.privacy.budget.BudgetExceeded` before any noise is drawn), and
only then draws noise from the sampler. The ``sensitivity`` is the caller's claim *under
the relation given in* ``neighbours``; the mechanism's guarantee holds under that relation.

Real-valued outputs are multiples of a power-of-two grid (see
:mod:`privgraph.privacy.samplers` for why this defeats floating-point attacks). The Laplace
and Gaussian mechanisms work in int64 grid units: the input is clamped to ``+-2**61`` units
and rounded, the integer noise is added exactly, the result is clipped to ``+-2**61`` units
(a post-processing) and only then multiplied by the grid (exact below ``2**53`` units; above
that the float is a fixed function of the released integer, so still post-processing).
Clamping is applied to every input alike, so it is part of the query and does not raise its
sensitivity. The representable range is ``2**61`` grid units: at least ``2**30``
sensitivities for :func:`laplace_mechanism` (whatever the dimension) and
``2**49 D / sqrt(d)`` for :func:`gaussian_mechanism`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterable, TypeVar

import numpy as np

from privgraph.privacy.budget import Budget
from privgraph.privacy.calibration import (
    discrete_gaussian_sigma,
    grid_for,
    grid_shift,
    l1_grid_for,
    zcdp_sigma,
)
from privgraph.privacy.events import DiscreteGaussianCurve, DiscreteLaplaceCurve, ZCDPCurve
from privgraph.privacy.ledger import Charge, Ledger
from privgraph.privacy.neighbours import (
    Neighbours,
    check_delta,
    check_epsilon,
    check_sensitivity,
)
from privgraph.privacy.samplers import PURE_DP_SLACK, NoiseSampler
from privgraph.timecap import is_capped
from privgraph.validation import InvalidInput, positive_int

T = TypeVar("T")
_CLAMP_UNITS = 2.0**50  # float path (snap_to_grid): sums of units and noise stay below 2**53
_UNITS_LIMIT = 2**61  # integer path (noisy_on_grid): units + noise stay inside int64


@dataclass(frozen=True)
class Release(Generic[T]):
    """A privately released value and the ledger of what it cost.

    Unpacks as ``value, ledger = release``.
    """

    value: T
    ledger: Ledger

    def __iter__(self):
        return iter((self.value, self.ledger))


# --- shared steps -------------------------------------------------------------------


def as_array(value: Any, name: str = "value") -> tuple[np.ndarray, bool]:
    """The value as a float array (a copy) and whether it was a scalar."""
    scalar = np.ndim(value) == 0
    try:
        x = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name} must be numeric, got {value!r}") from None
    if not np.all(np.isfinite(x)):
        raise InvalidInput(f"{name} must be finite, got {value!r}")
    return x, scalar


def snap_to_grid(x: np.ndarray, grid: float) -> np.ndarray:
    """Clamp to +-2**50 grid units and round to the nearest multiple of ``grid``."""
    return np.round(np.clip(x / grid, -_CLAMP_UNITS, _CLAMP_UNITS)) * grid


def noisy_on_grid(x: np.ndarray, grid: float, noise_units: np.ndarray) -> np.ndarray:
    """``grid * clip(round(clip(x / grid)) + Z)`` computed exactly in int64 grid units.

    With ``L = 2**61``: the input is clamped to ``+-L`` units and rounded (``u``), and the
    output is ``clip(u + Z, -L, L)``, a post-processing of the exact ``u + Z``. Clipping
    ``Z`` to ``+-2L`` first changes nothing (if ``Z >= 2L`` then ``u + Z >= L`` both ways)
    and keeps ``|u + Z| <= 3 * 2**61 < 2**63``, so nothing overflows.
    """
    units = np.round(np.clip(x / grid, -_UNITS_LIMIT, _UNITS_LIMIT)).astype(np.int64)
    noise = np.clip(np.asarray(noise_units, dtype=np.int64).reshape(x.shape), -2 * _UNITS_LIMIT, 2 * _UNITS_LIMIT)
    return np.clip(units + noise, -_UNITS_LIMIT, _UNITS_LIMIT).astype(np.float64) * grid


def _shape_like(x: np.ndarray, scalar: bool):
    return float(x) if scalar else x


def pay(charge: Charge, budget: Budget | None) -> Ledger:
    """Reserve the charge on the budget (raising before any noise) and return its ledger."""
    if budget is not None:
        budget.reserve(charge)
    return Ledger.of(charge)


def check_pure_epsilon(epsilon: float) -> float:
    epsilon = check_epsilon(epsilon)
    if epsilon <= 4 * PURE_DP_SLACK:
        raise InvalidInput(f"epsilon must exceed {4 * PURE_DP_SLACK:.3g} (the sampler's slack), got {epsilon!r}")
    return epsilon


# --- Laplace ------------------------------------------------------------------------


def laplace_mechanism(
    value: Any,
    *,
    epsilon: float,
    sensitivity: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    budget: Budget | None = None,
) -> Release:
    """Release ``value`` (a number or array) with Laplace noise: epsilon-DP.

    Sensitivity: the L1 sensitivity ``D`` of ``value`` under ``neighbours`` (the caller's
    derivation), over all ``d`` coordinates of ``value`` together. Construction: round
    every coordinate to a power-of-two grid ``g``
    (:func:`~privgraph.privacy.calibration.l1_grid_for`: at most ``2**-12 D / d``, but
    never below ``2**-32 D``), add ``g * Z`` with Z independent discrete Laplace
    of scale ``t = m / (epsilon - s)`` per coordinate, where ``s`` is
    :data:`~privgraph.privacy.samplers.PURE_DP_SLACK` and ``m = floor(D/g) + d`` bounds the
    L1 move of the rounded vector in grid units: each coordinate that differs between
    neighbours can move by one extra unit after rounding
    (:func:`~privgraph.privacy.calibration.grid_shift`). The privacy loss is at most
    ``m / t + s = epsilon`` (geometric mechanism, Ghosh, Roughgarden, Sundararajan 2009,
    one coordinate at a time: the loss of a product is the sum of the coordinates'
    ``|move_i| / t``). The charge's curve ``DiscreteLaplaceCurve(1/t, m)`` carries this
    ``m``. The noise scale is ``t g``, i.e. ``D / epsilon`` times
    ``1 + O(2**-12)`` up to ``2**19`` coordinates and ``1 + d 2**-31`` beyond; see
    :func:`laplace_calibration`.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> rel = laplace_mechanism(3.0, epsilon=0.5, sensitivity=1.0,
    ...                         neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(0))
    >>> rel.ledger.total().epsilon
    0.5
    >>> isinstance(rel.value, float)
    True
    >>> rel = laplace_mechanism([0.0] * 1000, epsilon=1.0, sensitivity=1.0,
    ...                         neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(0))
    >>> rel.ledger.charges[0].curve.sensitivity == 2**22 + 1000  # floor(D/g) + d with g = 2**-22
    True
    """
    epsilon = check_pure_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    neighbours = Neighbours.parse(neighbours)
    x, scalar = as_array(value)
    ledger = pay(laplace_charge(epsilon, sensitivity, neighbours, max(1, x.size)), budget)
    if sensitivity == 0:  # a constant query: no noise, no cost
        return Release(_shape_like(x, scalar), ledger)
    scale, grid, _ = laplace_calibration(epsilon, sensitivity, max(1, x.size))
    noise = sampler.discrete_laplace(scale / grid, x.shape or 1)
    return Release(_shape_like(noisy_on_grid(x, grid, noise), scalar), ledger)


def laplace_charge(epsilon: float, sensitivity: float, neighbours: Neighbours, dimension: int = 1) -> Charge:
    """The charge :func:`laplace_mechanism` makes for a release of ``dimension`` values
    (public parameters only: planners build the ledger a fit will charge with it).

    >>> laplace_charge(1.0, 2.0, Neighbours.ADD_REMOVE, 3).note
    'noise scale 2.00037'
    """
    if sensitivity == 0:
        return Charge("laplace", 0.0, 0.0, neighbours, sensitivity=0.0)
    scale, _, curve = laplace_calibration(epsilon, sensitivity, dimension)
    return Charge("laplace", epsilon, 0.0, neighbours, sensitivity=sensitivity, curve=curve,
                  slack=PURE_DP_SLACK, note=f"noise scale {scale:.6g}")


def laplace_calibration(epsilon: float, sensitivity: float, dimension: int = 1):
    """(scale, grid, curve) used by :func:`laplace_mechanism` (public parameters only).

    ``grid = l1_grid_for(D, d)``, ``shift = floor(D/grid) + d`` grid units,
    ``t = shift / (epsilon - PURE_DP_SLACK)`` grid units, ``scale = t * grid`` and
    ``curve = DiscreteLaplaceCurve(1/t, shift)``. Arguments are trusted (checked by the
    callers).

    >>> scale, grid, curve = laplace_calibration(1.0, 1.0)
    >>> grid == 2.0**-12, curve.sensitivity
    (True, 4097)
    >>> scale, grid, curve = laplace_calibration(1.0, 1.0, 8193)
    >>> grid == 2.0**-26, curve.sensitivity == 2**26 + 8193
    (True, True)
    """
    grid = l1_grid_for(sensitivity, dimension)
    shift = grid_shift(sensitivity, grid, dimension)
    t = shift / (epsilon - PURE_DP_SLACK)
    return t * grid, grid, DiscreteLaplaceCurve(1.0 / t, shift)


def laplace_scale(epsilon: float, sensitivity: float, dimension: int = 1) -> float:
    """The noise scale :func:`laplace_mechanism` uses on ``dimension`` values.

    ``sensitivity/epsilon`` up to a relative ``2**-12`` (``d 2**-31`` above ``2**19``
    values). Pass the number of values released together: the grid and the shift depend
    on it.

    >>> abs(laplace_scale(1.0, 1.0) - 1.0) < 3e-4
    True
    >>> abs(laplace_scale(1.0, 1.0, dimension=10**6) - 1.0) < 6e-4
    True
    """
    sensitivity = check_sensitivity(sensitivity)
    dimension = positive_int("dimension", dimension)
    return laplace_calibration(check_pure_epsilon(epsilon), sensitivity, dimension)[0]


# --- Gaussian -----------------------------------------------------------------------


def gaussian_mechanism(
    value: Any,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    budget: Budget | None = None,
) -> Release:
    """Release ``value`` with Gaussian noise: (epsilon, delta)-DP for every epsilon > 0.

    Sensitivity: the L2 sensitivity of ``value`` under ``neighbours``. The noise is the
    discrete Gaussian (Canonne, Kamath, Steinke 2020) on a power-of-two grid ``g``:

    * a scalar: sigma is the analytic Gaussian's (Balle and Wang 2018, Theorem 8) for the
      rounded shift ``m = floor(sensitivity/g) + 1`` grid units, then raised (by relative
      steps of 2**-12, rarely needed) until CKS Theorem 7's exact discrete-Gaussian delta,
      bounded by Gaussian integrals, is at most ``delta``;
    * a vector of d values: rounding moves the L2 distance by at most ``sqrt(d)`` units,
      and the multivariate discrete Gaussian is ``rho``-zCDP with ``rho = shift^2/(2
      sigma^2)`` (CKS Theorem 14); sigma is the smallest meeting (epsilon, delta) through
      CKS Corollary 13's conversion (a few per cent more noise than the analytic
      Gaussian, which has no proof for the discrete multivariate case).

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> rel = gaussian_mechanism([1.0, 2.0], epsilon=1.0, delta=1e-6, sensitivity=1.0,
    ...                          neighbours=Neighbours.REPLACE_ONE, sampler=SeededSampler(0))
    >>> rel.value.shape, rel.ledger.total().delta
    ((2,), 1e-06)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise InvalidInput("delta must be positive for the Gaussian mechanism, got 0")
    sensitivity = check_sensitivity(sensitivity)
    neighbours = Neighbours.parse(neighbours)
    x, scalar = as_array(value)
    ledger = pay(gaussian_charge(epsilon, delta, sensitivity, neighbours, max(1, x.size)), budget)
    if sensitivity == 0:
        return Release(_shape_like(x, scalar), ledger)
    sigma, grid, _ = gaussian_calibration(epsilon, delta, sensitivity, max(1, x.size))
    noise = sampler.discrete_gaussian(sigma / grid, x.shape or 1)
    return Release(_shape_like(noisy_on_grid(x, grid, noise), scalar), ledger)


def gaussian_charge(epsilon: float, delta: float, sensitivity: float, neighbours: Neighbours,
                    dimension: int = 1) -> Charge:
    """The charge :func:`gaussian_mechanism` makes for ``dimension`` values (public parameters only).

    >>> gaussian_charge(1.0, 1e-5, 1.0, Neighbours.ADD_REMOVE).curve.as_tuple()[0]
    'discrete_gaussian'
    """
    if sensitivity == 0:
        return Charge("gaussian", 0.0, 0.0, neighbours, sensitivity=0.0)
    sigma, _, curve = gaussian_calibration(epsilon, delta, sensitivity, dimension)
    return Charge("gaussian", epsilon, delta, neighbours, sensitivity=sensitivity, curve=curve,
                  note=f"noise sigma {sigma:.6g}")


def gaussian_calibration(epsilon: float, delta: float, sensitivity: float, dimension: int = 1):
    """(sigma, grid, curve) used by :func:`gaussian_mechanism` (public parameters only).

    >>> sigma, grid, curve = gaussian_calibration(1.0, 1e-5, 1.0)
    >>> round(sigma, 2), type(curve).__name__
    (3.73, 'DiscreteGaussianCurve')
    """
    grid = grid_for(sensitivity, dimension)
    if dimension == 1:
        shift = grid_shift(sensitivity, grid)
        s = discrete_gaussian_sigma(epsilon, delta, shift)
        return s * grid, grid, DiscreteGaussianCurve(s, shift)
    l2_shift = sensitivity / grid + math.sqrt(dimension)
    s = zcdp_sigma(epsilon, delta, l2_shift)
    return s * grid, grid, ZCDPCurve(l2_shift**2 / (2 * s**2))


# --- exponential mechanism / report noisy max ----------------------------------------


def exponential_mechanism(
    utilities: Iterable[float],
    *,
    epsilon: float,
    sensitivity: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    monotone: bool = False,
    budget: Budget | None = None,
    admissible: Callable[[int], bool] | None = None,
) -> Release:
    """Pick index i with probability proportional to exp(epsilon u_i / (2 sensitivity)): epsilon-DP.

    Sensitivity: the largest change of any single utility between neighbours (under
    ``neighbours``). McSherry and Talwar (2007). When the utilities are *monotone* (on
    every pair of neighbours they all move in the same direction, e.g. counts under
    add/remove), the factor 2 can be dropped: set ``monotone=True`` only then.
    Sampled by a race of exponential clocks whose relative accuracy keeps the pure-DP
    claim (:meth:`~privgraph.privacy.samplers.NoiseSampler.race`); the candidate set must
    not depend on the data.

    ``admissible``: a test of a candidate's index that does not read the data (public facts
    and earlier releases only, e.g. whether a table keeps a model under a public size cap).
    The mechanism then runs on the admissible candidates alone: the first admissible
    finisher of one race (:meth:`~privgraph.privacy.samplers.NoiseSampler.race_order`) is
    distributed exactly as the mechanism over that subset. The index returned is into
    ``utilities``; None when no candidate is admissible (the race is drawn and the charge
    made all the same). Under a time cap (:func:`privgraph.timecap.time_cap`, which turns
    running time into an output: stopped or not) the test runs on every candidate, in
    index order, before the race, so how many tests run depends on the number of
    candidates only, never on the utilities; without a cap it runs in race order until
    one passes (the same pick, for less work: the running time of an uncapped run is not
    an output, and like any DP library's it is not covered by the guarantee).

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> idx, ledger = exponential_mechanism([0.0, 100.0, 0.0], epsilon=1.0, sensitivity=1.0,
    ...                                     neighbours=Neighbours.REPLACE_ONE, sampler=SeededSampler(1))
    >>> idx, ledger.total().epsilon
    (1, 1.0)
    """
    u, epsilon, ledger = _selection(utilities, "utilities", "exponential", epsilon=epsilon,
                                    sensitivity=sensitivity, neighbours=neighbours,
                                    monotone=monotone, budget=budget)
    if admissible is not None:
        return Release(_admissible_pick(u, epsilon, sensitivity, monotone, sampler, admissible), ledger)
    if float(sensitivity) == 0:  # data-independent utilities: the limit is uniform over the maximisers
        return Release(sampler.race(np.where(u == u.max(), 0.0, -np.inf)), ledger)
    factor = (epsilon - PURE_DP_SLACK) / (sensitivity if monotone else 2 * sensitivity)
    return Release(sampler.race(factor * u), ledger)


def _admissible_pick(u: np.ndarray, epsilon: float, sensitivity: float, monotone: bool, sampler: NoiseSampler,
                     admissible: Callable[[int], bool]) -> int | None:
    """:func:`exponential_mechanism` over the candidates ``admissible`` accepts: the first
    admissible finisher of one race (None when there is none). Under a time cap every
    candidate is tested before the race, whatever the utilities (the tests' number, and so
    their time, is public); without one, in race order until one passes (the same pick).

    >>> from privgraph.privacy import SeededSampler
    >>> from privgraph.timecap import time_cap
    >>> tested = []
    >>> with time_cap(3600):
    ...     _admissible_pick(np.array([9.0, 0.0, 0.0]), 1.0, 1.0, False, SeededSampler(0),
    ...                      lambda i: tested.append(i) or i > 0) in (1, 2), tested
    (True, [0, 1, 2])
    """
    if float(sensitivity) == 0:  # uniform over the admissible maximisers
        keep = np.fromiter((bool(admissible(i)) for i in range(u.size)), dtype=bool, count=u.size)
        if not keep.any():
            return None
        best = u[keep].max()
        return int(sampler.race(np.where(keep & (u == best), 0.0, -np.inf)))
    factor = (epsilon - PURE_DP_SLACK) / (sensitivity if monotone else 2 * sensitivity)
    order = sampler.race_order(factor * u)  # drawn even when none is admissible: the same draws either way
    if is_capped():  # running time is an output: test all candidates, a public number of them
        keep = np.fromiter((bool(admissible(i)) for i in range(u.size)), dtype=bool, count=u.size)
        return next((int(i) for i in order if keep[i]), None)
    return next((int(i) for i in order if admissible(int(i))), None)


def _selection(values, name, mechanism, *, epsilon, sensitivity, neighbours, monotone, budget):
    """Shared checks and charge of the selection mechanisms: (values, epsilon, ledger)."""
    epsilon = check_pure_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    x, _ = as_array(values, name)
    if x.ndim != 1 or x.size == 0:
        raise InvalidInput(f"{name} must be a non-empty 1-D sequence, got shape {x.shape}")
    neighbours = Neighbours.parse(neighbours)
    charge = (exponential_charge(epsilon, sensitivity, neighbours, monotone) if mechanism == "exponential" else
              Charge(mechanism, epsilon, 0.0, neighbours, sensitivity=sensitivity, slack=PURE_DP_SLACK,
                     note="monotone" if monotone else ""))
    return x, epsilon, pay(charge, budget)


def exponential_charge(epsilon: float, sensitivity: float, neighbours: Neighbours, monotone: bool = False) -> Charge:
    """The charge :func:`exponential_mechanism` makes (public parameters only: a plan reserves it ahead).

    Besides its pure epsilon it carries the curve ``ZCDPCurve(epsilon**2 / 8)`` for the RDP
    accountant: the exponential mechanism is epsilon-*bounded range* (for every pair of
    neighbours the privacy loss over the outcomes spans an interval of width at most
    epsilon: ``epsilon (u_i - u'_i) / (2 sensitivity)`` spans ``[-epsilon/2, epsilon/2]``;
    with ``monotone`` all moves share a sign and ``epsilon (u_i - u'_i) / sensitivity`` spans
    ``[0, epsilon]``; Durfee and Rogers 2019), and an epsilon-bounded-range mechanism is
    ``epsilon^2 / 8``-zCDP (Cesar and Rogers 2021, Lemma 3.2), four times less than the
    ``epsilon^2 / 2`` of a generic epsilon-DP mechanism. The sampler's relative error
    (below ``2**-39``) is inside :data:`PURE_DP_SLACK`, which the epsilon includes.

    >>> c = exponential_charge(0.4, 2.0, Neighbours.REPLACE_ONE)
    >>> c.mechanism, c.curve == ZCDPCurve(0.4**2 / 8), c.is_pure
    ('exponential', True, True)
    """
    return Charge("exponential", epsilon, 0.0, Neighbours.parse(neighbours), sensitivity=sensitivity,
                  curve=ZCDPCurve(epsilon**2 / 8), slack=PURE_DP_SLACK, note="monotone" if monotone else "")


def report_noisy_max(
    scores: Iterable[float],
    *,
    epsilon: float,
    sensitivity: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    monotone: bool = False,
    budget: Budget | None = None,
) -> Release:
    """Index of the largest score after adding Exponential noise: epsilon-DP.

    Adds Exponential(2 sensitivity / epsilon) noise to each score and releases only the
    arg-max (never the noisy value); with ``monotone=True`` (all scores move in the same
    direction between any two neighbours) the scale is sensitivity / epsilon. This is
    the permute-and-flip mechanism (McKenna and Sheldon 2020; Ding et al. 2021), never
    worse than the exponential mechanism in expected score.

    >>> from privgraph.privacy import SeededSampler
    >>> report_noisy_max([0.0, 50.0], epsilon=1.0, sensitivity=1.0,
    ...                  neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(2)).value
    1
    """
    s, epsilon, ledger = _selection(scores, "scores", "report_noisy_max", epsilon=epsilon,
                                    sensitivity=sensitivity, neighbours=neighbours,
                                    monotone=monotone, budget=budget)
    scale = (float(sensitivity) if monotone else 2.0 * sensitivity) / (epsilon - PURE_DP_SLACK)
    return Release(int(np.argmax(s + scale * sampler.exponential(s.size))), ledger)
