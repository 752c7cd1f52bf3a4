"""One Gaussian release of the first and second moments of bounded records (a covariance).

The query: each record is a vector ``x`` in ``[-1/2, 1/2]^d`` (the caller scales every
column by its public bounds and clips: a fixed per-record map, :mod:`privgraph.data.moments`),
and the released vector is the sum over the records of

``g(x) = (w x, vech(x x^T), 1)``

where ``vech`` is the upper triangle of the matrix with its diagonal (``d (d + 1) / 2``
values), ``w`` = :data:`MEAN_WEIGHT` scales the sums of ``x`` (their noise matters for the
covariance only through the means, times a mean that the bounds centre near 0), and the
count's coordinate is there under add/remove only (under replace-one n is public). From
it, the means, the covariance and n are post-processing.

**L2 sensitivity** (:func:`moments_l2_sensitivity`), with ``|x_j| <= 1/2``:

* Add/remove: the sum moves by one ``g(x)``, and
  ``||g(x)||^2 = w^2 ||x||^2 + sum_{j <= k} x_j^2 x_k^2 + 1``. First ``||x||^2 <= d/4``;
  then ``sum_{j <= k} x_j^2 x_k^2 = ((sum_j x_j^2)^2 + sum_j x_j^4) / 2
  <= (d^2/16 + d/16) / 2 = d (d + 1) / 32``. So
  ``Delta^2 = w^2 d / 4 + d (d + 1) / 32 + 1``.
* Replace-one: the sum moves by ``g(x') - g(x)`` (no count coordinate). The mean block:
  ``w^2 ||x' - x||^2 <= w^2 d`` (each coordinate moves by at most 1). The second-moment
  block, with ``M = x' x'^T - x x^T``: ``||vech M||^2 = (||M||_F^2 + sum_j M_jj^2) / 2``, and
  ``||M||_F^2 = ||x'||^4 + ||x||^4 - 2 (x . x')^2 <= d^2/8``, ``M_jj = x'_j^2 - x_j^2`` in
  ``[-1/4, 1/4]``, so ``||vech M||^2 <= d^2/16 + d/32``. Coordinate by coordinate it is also
  at most ``d (d - 1)/2 * (1/2)^2 + d (1/4)^2 = d (d - 1) / 8 + d / 16`` (an off-diagonal
  ``x_j x_k`` lies in ``[-1/4, 1/4]``, a diagonal ``x_j^2`` in ``[0, 1/4]``), smaller for
  d = 1. So ``Delta^2 = w^2 d + min(d^2/16 + d/32, d (d - 1)/8 + d/16)``.

**Clipping the record's norm** too (``norm = C``: the vector x scaled by ``min(1, C / ||x||)``,
a per-record map after the box): ``||x|| <= C``, so under add/remove ``||x||^2 <= C^2`` and
``sum_{j<=k} x_j^2 x_k^2 = (||x||^4 + sum_j x_j^4) / 2 <= (C^4 + min(C^4, C^2 / 4)) / 2``
(``sum_j x_j^4 <= max_j x_j^2 ||x||^2``); under replace-one ``||x' - x||^2 <= min(d, 4 C^2)``,
``||M||_F^2 <= 2 C^4`` and ``sum_j M_jj^2 <= sum_j (x_j^4 + x'_j^4) <= 2 min(C^4, C^2/4)``
(and ``<= d/16``), so ``||vech M||^2 <= C^4 + min(C^4, C^2/4, d/32)``; each bound is the
smaller of this and the box's. Data whose columns spread like Gaussians over bounds at
+-3 standard deviations have ``E ||x||^2 = d / 36``, far below the box's ``d / 4``: at
``C^2 = d / 16`` the sensitivity's square at d = 20 falls from 30.6 to 3.1.

**The mechanism**: the multivariate discrete Gaussian at the rho-zCDP the one accountant
converts to (epsilon, delta) (:func:`~privgraph.privacy.zcdp.rho_for_budget`,
:func:`~privgraph.privacy.zcdp.zcdp_gaussian_vector`): one ``ZCDPCurve(rho)`` charge,
reserved on the budget before any noise is drawn. Needs delta > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privgraph.privacy.budget import Budget
from privgraph.privacy.ledger import Charge  # noqa: F401  (the type moments_charge returns)
from privgraph.privacy.mechanisms import Release
from privgraph.privacy.neighbours import Neighbours
from privgraph.privacy.samplers import NoiseSampler
from privgraph.privacy.zcdp import rho_for_budget, zcdp_charge, zcdp_gaussian_scale, zcdp_gaussian_vector
from privgraph.validation import positive_int

#: Weight of the sums of x in the released vector (their noise is 1 / MEAN_WEIGHT times the
#: second moments'): at d = 20 under replace-one it takes the sensitivity's square from
#: 45.6 to 30.6 (w = 1 to 1/2); the means' noise reaches the covariance only through
#: ``m_j e_k / n`` with ``|m_j| <= 1/2``, and ``m_j`` is near 0 for bounds centred on the data.
MEAN_WEIGHT = 0.5


@dataclass(frozen=True)
class Moments:
    """Sums over records of scaled vectors: n, ``sum x`` (d) and ``sum x x^T`` (d x d, symmetric)."""

    count: float
    first: np.ndarray
    second: np.ndarray
    norm: float | None = None  # the L2 norm each record's vector was clipped to (None: none beyond the box)

    @property
    def dimension(self) -> int:
        return int(self.first.shape[0])


def moments_l2_sensitivity(dimension: int, neighbours: Neighbours, norm: float | None = None) -> float:
    """L2 sensitivity of the released vector over ``dimension`` columns in ``[-1/2, 1/2]``,
    each record's vector also clipped to L2 ``norm`` (None: ``sqrt(d) / 2``, which the
    coordinates imply); derivation in the module docstring.

    >>> round(moments_l2_sensitivity(20, Neighbours.REPLACE_ONE) ** 2, 6), round(moments_l2_sensitivity(20, "add_remove") ** 2, 6)
    (30.625, 15.375)
    >>> round(moments_l2_sensitivity(1, Neighbours.REPLACE_ONE) ** 2, 6)  # w^2 + 1/16
    0.3125
    >>> round(moments_l2_sensitivity(20, Neighbours.REPLACE_ONE, norm=math.sqrt(20) / 4) ** 2, 6)
    3.125
    """
    d, w2 = positive_int("dimension", dimension), MEAN_WEIGHT**2
    c2 = d / 4 if norm is None else min(float(norm) ** 2, d / 4)
    if Neighbours.parse(neighbours) is Neighbours.ADD_REMOVE:
        return math.sqrt(w2 * c2 + (c2 * c2 + min(c2 * c2, c2 / 4)) / 2 + 1)
    return math.sqrt(w2 * min(d, 4 * c2) + min(c2 * c2 + min(c2 * c2, c2 / 4, d / 32), d * (d - 1) / 8 + d / 16))


def moments_size(dimension: int, neighbours: Neighbours) -> int:
    """How many values the release holds: d sums, d (d + 1) / 2 products, and n under add/remove.

    >>> moments_size(3, Neighbours.REPLACE_ONE), moments_size(3, Neighbours.ADD_REMOVE)
    (9, 10)
    """
    d = dimension
    return d + d * (d + 1) // 2 + (Neighbours.parse(neighbours) is Neighbours.ADD_REMOVE)


def moments_charge(dimension: int, *, epsilon: float, delta: float, neighbours: Neighbours,
                   norm: float | None = None) -> Charge:
    """The one charge :func:`release_moments` reserves (public parameters only).

    >>> c = moments_charge(5, epsilon=1.0, delta=1e-6, neighbours=Neighbours.REPLACE_ONE)
    >>> c.mechanism, c.curve.as_tuple()[0]
    ('gaussian_vector', 'zcdp')
    """
    rho, sensitivity = _rho(epsilon, delta), moments_l2_sensitivity(dimension, neighbours, norm)
    # the charge zcdp_gaussian_vector makes for this vector (so that the plan equals the fit's ledger)
    return zcdp_charge("gaussian_vector", rho, delta, Neighbours.parse(neighbours), sensitivity=sensitivity,
                       note=f"{moments_size(dimension, neighbours)} values, L2 sensitivity {sensitivity:.6g}")


def moments_noise(dimension: int, *, epsilon: float, delta: float, neighbours: Neighbours,
                  norm: float | None = None) -> float:
    """Standard deviation of the noise on each released sum of products (the sums of x get
    ``1 / MEAN_WEIGHT`` times it), in the units of the scaled records (public parameters only).

    >>> 0 < moments_noise(10, epsilon=1.0, delta=1e-6, neighbours=Neighbours.REPLACE_ONE) < 50
    True
    """
    rho = _rho(epsilon, delta)
    size = moments_size(dimension, neighbours)
    return zcdp_gaussian_scale(rho, moments_l2_sensitivity(dimension, neighbours, norm), size)[0]


def release_moments(moments: Moments, *, epsilon: float, delta: float, neighbours: Neighbours,
                    sampler: NoiseSampler, budget: Budget | None = None) -> Release:
    """Release the moments of records scaled into ``[-1/2, 1/2]^d`` once, (epsilon, delta)-DP
    under ``neighbours`` (see the module docstring for the query and its sensitivity).

    Under replace-one the count is public and returned as given; under add/remove it is
    released with the rest. The charge is reserved on ``budget`` before any noise is drawn.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> m = Moments(100.0, np.zeros(3), np.eye(3))
    >>> rel = release_moments(m, epsilon=1.0, delta=1e-6, neighbours=Neighbours.ADD_REMOVE,
    ...                       sampler=SeededSampler(0))
    >>> rel.value.second.shape, bool(np.allclose(rel.value.second, rel.value.second.T)), len(rel.ledger)
    ((3, 3), True, 1)
    """
    neighbours = Neighbours.parse(neighbours)
    d = moments.dimension
    upper = np.triu_indices(d)
    parts = [MEAN_WEIGHT * np.asarray(moments.first, dtype=float), np.asarray(moments.second, dtype=float)[upper]]
    if neighbours is Neighbours.ADD_REMOVE:
        parts.append(np.array([float(moments.count)]))
    rho = _rho(epsilon, delta)
    noisy, ledger = zcdp_gaussian_vector(np.concatenate(parts), rho=rho, delta=delta,
                                         sensitivity=moments_l2_sensitivity(d, neighbours, moments.norm),
                                         neighbours=neighbours,
                                         sampler=sampler, budget=budget)
    second = np.zeros((d, d))
    second[upper] = noisy[d:d + len(upper[0])]
    second = second + np.triu(second, 1).T
    count = float(noisy[-1]) if neighbours is Neighbours.ADD_REMOVE else float(moments.count)
    return Release(Moments(count, noisy[:d] / MEAN_WEIGHT, second, moments.norm), ledger)


def _rho(epsilon: float, delta: float) -> float:
    return rho_for_budget(epsilon, delta, "the covariance release (a Gaussian mechanism)")


__all__ = ["MEAN_WEIGHT", "Moments", "moments_charge", "moments_l2_sensitivity", "moments_noise", "moments_size",
           "release_moments"]
