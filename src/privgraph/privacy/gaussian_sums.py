"""Gaussian noise on clipped sums over secret sub-samples, a fixed number of steps reserved in advance.

The noise of DP-SGD (Abadi et al. 2016) and of PSGD: each step sums vectors, one per
privacy unit of a secret sub-sample, each clipped to L2 norm ``C``, and releases the sum
plus Gaussian noise of standard deviation ``multiplier * sensitivity``. What the caller
may adapt from step to step (the vectors depend on earlier noisy sums) never changes the
charge: the number of steps, the sub-sampling and the multiplier are public and fixed, and
the charge for all steps is built and paid to the budget when :class:`GaussianSums` is
created, before any noise is drawn.

Sensitivity (:func:`clipped_sum_sensitivity`, then the grid term in :class:`GaussianSums`)

* Add/remove: neighbouring samples differ by one unit's clipped vector, so the sum moves
  by a vector of norm at most ``C``.
* Replace-one: one unit's vector ``v`` becomes another ``v'``; the sum moves by
  ``v' - v``, of norm at most ``||v'|| + ||v||  <= 2C`` (attained by ``v' = -v``).
* Grid: the sum is rounded to a power-of-two grid ``g`` (each coordinate moves by at most
  ``g/2``; clamping to +-2**50 units first is 1-Lipschitz), so two rounded sums differ by
  at most ``Delta + g sqrt(d)`` in d dimensions. The noise is the multivariate discrete
  Gaussian on that grid, of parameter ``multiplier * (Delta + g sqrt(d))``.

Accounting (``dp_accounting`` 0.6's RDP accountant, read in its source and docstrings)

* ``GaussianDpEvent(noise_multiplier)``: the noise standard deviation over the
  L2-sensitivity of the function it is added to (for a sum of vectors of norm at most C
  under add/remove, ``s / C``); the accountant does not rescale it for the relation, so
  under replace-one the multiplier must be taken relative to ``2C``, as here.
* ``("poisson", q)``: ``PoissonSampledDpEvent`` (Mironov, Talwar, Zhang 2019). The RDP
  accountant accepts it under ``ADD_OR_REMOVE_ONE`` (and ``REPLACE_SPECIAL``) only; under
  ``REPLACE_ONE`` it refuses the event, so Poisson sampling is refused here too.
* ``("without_replacement", m, n)``: ``SampledWithoutReplacementDpEvent`` (Wang, Balle,
  Kasiviswanathan 2019, Theorem 27): exactly m of n units, n public. The RDP accountant
  accepts it under ``REPLACE_ONE`` only, so it is refused under add/remove.
* The orders are integers (:data:`~privgraph.privacy.composition.RDP_ORDERS`), where the
  discrete Gaussian's moments for an integer shift equal the continuous Gaussian's (see
  :mod:`privgraph.privacy.composition`), so the accountant's curves hold for the noise drawn.

Each charge also states a per-step (epsilon, delta): one step's RDP bound at
``delta / steps``, so basic composition of the ledger remains a valid (looser) reading;
``Ledger.total("rdp", delta)`` uses the exact curve.
"""

from __future__ import annotations

import math

import numpy as np

import privgraph.caches as caches
from privgraph.privacy.budget import Budget
from privgraph.privacy.composition import rdp_epsilon
from privgraph.privacy.events import GaussianCurve, PoissonSampling, Sampling, WithoutReplacementSampling, as_sampling
from privgraph.privacy.ledger import Charge
from privgraph.privacy.mechanisms import as_array, pay, snap_to_grid
from privgraph.privacy.neighbours import (
    Neighbours,
    check_delta,
    check_epsilon,
    check_rate,
    histogram_l1_sensitivity,
)
from privgraph.privacy.samplers import NoiseSampler, power_of_two_at_most
from privgraph.validation import InvalidInput, positive_int

#: Grid of the released sums: a power of two at most ``2**-GRID_BITS`` of the clip norm.
GRID_BITS = 20

_RELATION_OF_SAMPLING = {PoissonSampling: Neighbours.ADD_REMOVE, WithoutReplacementSampling: Neighbours.REPLACE_ONE}


def clipped_sum_sensitivity(clip: float, neighbours: Neighbours) -> float:
    """L2 sensitivity of a sum of vectors clipped to norm ``clip``: C add/remove, 2C replace-one.

    Derivation in the module docstring (one vector added or removed; one vector replaced).

    >>> clipped_sum_sensitivity(1.5, Neighbours.ADD_REMOVE), clipped_sum_sensitivity(1.5, "replace_one")
    (1.5, 3.0)
    """
    # the number of unit vectors that differ: one (added or removed) or two (v out, v' in),
    # the same count as a histogram's L1 sensitivity
    return histogram_l1_sensitivity(neighbours) * float(clip)


def check_sampling(sampling, neighbours: Neighbours) -> Sampling:
    """The sampling, typed (:mod:`privgraph.privacy.events`; its tuple is accepted too), if
    ``dp_accounting`` can account it under ``neighbours``.

    >>> check_sampling(("without_replacement", 10, 100), Neighbours.REPLACE_ONE)
    WithoutReplacementSampling(size=10, population=100)
    >>> check_sampling(("poisson", 0.1), Neighbours.REPLACE_ONE)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: sampling ('poisson', 0.1) is accounted under add_remove neighbours only ...
    """
    neighbours = Neighbours.parse(neighbours)
    try:
        typed = as_sampling(sampling)
    except InvalidInput:
        typed = None
    if typed is None:
        raise InvalidInput(f"sampling must be ('poisson', q) or ('without_replacement', m, n), got {sampling!r}")
    if _RELATION_OF_SAMPLING[type(typed)] is not neighbours:
        other = {PoissonSampling: "('without_replacement', m, n) under replace_one",
                 WithoutReplacementSampling: "('poisson', q) under add_remove"}[type(typed)]
        raise InvalidInput(
            f"sampling {typed.as_tuple()!r} is accounted under {_RELATION_OF_SAMPLING[type(typed)].value} "
            f"neighbours only (dp_accounting's RDP accountant refuses it under {neighbours.value}); use {other}"
        )
    if isinstance(typed, PoissonSampling):
        return PoissonSampling(check_rate(typed.rate, "sampling rate"))
    m, n = positive_int("sample size m", typed.size), positive_int("population n", typed.population)
    if m > n:
        raise InvalidInput(f"sample size m={m} exceeds the population n={n}")
    return WithoutReplacementSampling(m, n)


def _curve_cost(multiplier: float, sampling: Sampling, steps: int, delta: float, neighbours: Neighbours) -> float:
    """RDP epsilon of ``steps`` sampled Gaussian steps (an accountant query, never a ledger entry)."""
    c = Charge("gaussian_sums", 0.0, 0.0, neighbours, count=steps, curve=GaussianCurve(multiplier), sampling=sampling)
    return rdp_epsilon((c,), delta)


@caches.lru(256)
def sampled_gaussian_multiplier(
    epsilon: float, delta: float, *, sampling: Sampling | tuple, steps: int, neighbours: Neighbours,
    max_multiplier: float = 50.0,
) -> float:
    """Smallest noise multiplier (to 1%) whose ``steps``-fold RDP total is at most epsilon.

    Public parameters only, so the result is cached (an accountant call costs 0.1-0.7 s).
    Raises ValueError when even ``max_multiplier`` is not enough (the sums would be noise).

    >>> m = sampled_gaussian_multiplier(1.0, 1e-4, sampling=("poisson", 0.05), steps=50,
    ...                                 neighbours=Neighbours.ADD_REMOVE)
    >>> 0.5 < m < 50
    True
    """
    neighbours = Neighbours.parse(neighbours)
    sampling = check_sampling(sampling, neighbours)
    epsilon, delta, steps = check_epsilon(epsilon), check_delta(delta), positive_int("steps", steps)
    if delta == 0:
        raise InvalidInput("the sampled Gaussian needs delta > 0, got 0")
    if _curve_cost(max_multiplier, sampling, steps, delta, neighbours) > epsilon:
        raise InvalidInput(
            f"epsilon={epsilon} is out of reach with {steps} steps sampled by {sampling.as_tuple()} under "
            f"{neighbours.value} at delta={delta:g}: it would need a noise multiplier above {max_multiplier}"
        )
    lo, hi = 0.05, float(max_multiplier)
    while hi / lo >= 1.01:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if _curve_cost(mid, sampling, steps, delta, neighbours) <= epsilon else (mid, hi)
    return hi


@caches.lru(256)
def sampled_gaussian_charge(
    multiplier: float, *, sampling: Sampling | tuple, steps: int, delta: float, neighbours: Neighbours,
    sensitivity: float, note: str = "",
) -> Charge:
    """The ledger entry of ``steps`` sampled Gaussian sums (curve, sampling, per-step (eps, delta)).

    >>> c = sampled_gaussian_charge(2.0, sampling=("without_replacement", 50, 1000), steps=20,
    ...                             delta=1e-5, neighbours=Neighbours.REPLACE_ONE, sensitivity=2.0)
    >>> c.count, c.sampling, c.curve
    (20, WithoutReplacementSampling(size=50, population=1000), GaussianCurve(noise_multiplier=2.0))
    """
    neighbours = Neighbours.parse(neighbours)
    sampling = as_sampling(sampling)
    per_step = _curve_cost(multiplier, sampling, 1, delta / steps, neighbours)
    detail = f"noise multiplier {multiplier:.4g}, sampling {sampling.as_tuple()}, {steps} steps"
    return Charge(
        "gaussian_sums", per_step, delta / steps, neighbours, sensitivity=sensitivity, count=steps,
        curve=GaussianCurve(multiplier), sampling=sampling, note=f"{detail}; {note}" if note else detail,
    )


class GaussianSums:
    """``steps`` Gaussian releases of clipped sums over secret sub-samples, charged up front.

    Parameters
    ----------
    clip : float
        The norm every unit's vector is clipped to (the caller clips; see module docstring).
    dimension : int
        Length of the summed vectors.
    multiplier : float
        Noise standard deviation over the sensitivity (e.g. from
        :func:`sampled_gaussian_multiplier`).
    steps : int
        How many sums will be released (the plan; :meth:`release` refuses more).
    delta : float
        Target total delta (only for the per-step epsilon stated in the charge).
    sampling : tuple
        ``("poisson", q)`` under add/remove, ``("without_replacement", m, n)`` under
        replace-one: how the caller draws each step's secret sub-sample.
    neighbours, sampler, budget
        The relation, the noise source, and an optional budget paid when the plan opens.
    note : str
        Appended to the charge's note (e.g. ``"unit=individual"``).

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> sums = GaussianSums(clip=1.0, dimension=3, multiplier=2.0, steps=2, delta=1e-5,
    ...                     sampling=("without_replacement", 50, 1000), neighbours="replace_one",
    ...                     sampler=SeededSampler(0))
    >>> sums.sensitivity > 2.0, sums.release(np.ones(3)).shape
    (True, (3,))
    >>> sums.ledger.charges[0].count, sums.steps_used
    (2, 1)
    """

    def __init__(
        self, *, clip: float, dimension: int, multiplier: float, steps: int, delta: float, sampling: Sampling | tuple,
        neighbours: Neighbours, sampler: NoiseSampler, budget: Budget | None = None, note: str = "",
    ):
        neighbours = Neighbours.parse(neighbours)
        sampling = check_sampling(sampling, neighbours)
        clip, multiplier = check_epsilon(clip, "clip"), check_epsilon(multiplier, "multiplier")
        self.dimension, self.steps = positive_int("dimension", dimension), positive_int("steps", steps)
        self.grid = power_of_two_at_most(clip * 2.0**-GRID_BITS)
        self.sensitivity = clipped_sum_sensitivity(clip, neighbours) + self.grid * math.sqrt(self.dimension)
        self.sigma = multiplier * self.sensitivity
        charge = sampled_gaussian_charge(multiplier, sampling=sampling, steps=self.steps, delta=check_delta(delta),
                                         neighbours=neighbours, sensitivity=self.sensitivity, note=note)
        self.ledger = pay(charge, budget)  # raises BudgetExceeded before any noise
        self._sampler = sampler
        self.steps_used = 0

    def release(self, total) -> np.ndarray:
        """One noisy sum: ``total`` (the clipped sum of this step's sub-sample) on the grid plus noise."""
        if self.steps_used >= self.steps:
            raise RuntimeError(f"all {self.steps} reserved steps have been released")
        x, _ = as_array(total, "total")
        if x.shape != (self.dimension,):
            raise InvalidInput(f"total must have shape ({self.dimension},), got {x.shape}")
        self.steps_used += 1
        return snap_to_grid(x, self.grid) + self._sampler.gaussian_on_grid(self.sigma, self.grid, self.dimension)
