"""zCDP charges and the multivariate discrete Gaussian at a given rho.

A plan whose parts are Gaussian releases (and pure-DP selections) composes most tightly in
zero-concentrated DP (Bun and Steinke 2016): rho-zCDP mechanisms add their rhos, even
when each is chosen from the earlier outputs, and an epsilon-DP mechanism is
(epsilon^2 / 2)-zCDP (their Proposition 1.4). The conversion of a total rho to
(epsilon, delta) is done by the one accountant, :meth:`~privgraph.privacy.ledger.Ledger.total`
with ``method="rdp"`` (``dp_accounting``'s RDP accountant on a ``ZCDpEvent``, which is the
Renyi curve ``alpha rho``); :func:`rho_for_budget` inverts it.

**The mechanism.** :func:`zcdp_gaussian_vector` releases a vector of d values whose L2
sensitivity under ``neighbours`` is ``D`` (the caller's derivation): every value is
rounded to a power-of-two grid ``g`` (:func:`~privgraph.privacy.calibration.grid_for`), so
two neighbouring rounded vectors differ by at most ``D/g + sqrt(d)`` grid units in L2, and
independent discrete Gaussian noise of parameter ``s`` grid units is added to each
coordinate. The multivariate discrete Gaussian with an integer shift of L2 norm ``m`` is
``m^2 / (2 s^2)``-zCDP (Canonne, Kamath and Steinke 2020, Theorem 14), so
``s = (D/g + sqrt(d)) / sqrt(2 rho)``. Values are carried in int64 grid units as in
:func:`~privgraph.privacy.mechanisms.gaussian_mechanism`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import brentq

import privgraph.caches as caches
from privgraph.privacy.budget import Budget
from privgraph.privacy.calibration import grid_for, zcdp_delta
from privgraph.privacy.composition import RDP
from privgraph.privacy.events import ZCDPCurve
from privgraph.privacy.ledger import Charge, Ledger
from privgraph.privacy.mechanisms import Release, as_array, noisy_on_grid, pay
from privgraph.privacy.neighbours import Neighbours, check_delta, check_epsilon, check_sensitivity
from privgraph.privacy.samplers import NoiseSampler
from privgraph.validation import InvalidInput

#: The (epsilon, 0) a probe charge states when only its curve matters (basic composition,
#: which the totals never exceed, must not read it as free).
_UNSTATED = 1e9


def check_rho(rho: float) -> float:
    """``rho`` if it is positive and finite.

    >>> check_rho(0.5)
    0.5
    >>> check_rho(0.0)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: rho must be positive and finite, got 0.0
    """
    if not (0 < rho < math.inf):
        raise InvalidInput(f"rho must be positive and finite, got {rho!r}")
    return float(rho)


@caches.lru(1024)
def zcdp_epsilon(rho: float, delta: float) -> float:
    """Smallest epsilon with ``zcdp_delta(rho, epsilon) <= delta`` (CKS Corollary 13), by bisection.

    Used only to state a charge's own (epsilon, delta), so that basic composition of a
    ledger of zCDP charges stays a valid (looser) reading; the totals use the curve.

    >>> round(zcdp_epsilon(0.5, 1e-6), 3) < 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
    True
    """
    lo, hi = 0.0, rho + 2 * math.sqrt(rho * math.log(1 / delta))  # the classical bound is valid
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if zcdp_delta(rho, mid) <= delta else (mid, hi)
        if hi - lo <= 1e-12 * hi:
            break
    return hi


def zcdp_charge(mechanism: str, rho: float, delta: float, neighbours: Neighbours, *,
                sensitivity: float | None = None, note: str = "") -> Charge:
    """A rho-zCDP charge: curve ``ZCDPCurve(rho)``, with its own (epsilon, delta) at ``delta``.

    >>> c = zcdp_charge("gaussian_vector", 0.01, 1e-7, Neighbours.REPLACE_ONE)
    >>> c.curve, c.delta
    (ZCDPCurve(rho=0.01), 1e-07)
    """
    rho, delta = check_rho(rho), check_delta(delta)
    if delta <= 0:
        raise InvalidInput(f"a zCDP charge states its (epsilon, delta) at delta > 0, got {delta!r}")
    return Charge(mechanism, zcdp_epsilon(rho, delta), delta, Neighbours.parse(neighbours),
                  sensitivity=sensitivity, curve=ZCDPCurve(rho), note=note)


def rdp_epsilon(rho: float, delta: float) -> float:
    """The epsilon at ``delta`` of one rho-zCDP charge alone, as the one accountant converts it
    (``Ledger.total(RDP, delta)``); :func:`rho_for_budget` inverts it.

    >>> 0.99 < rdp_epsilon(rho_for_budget(1.0, 1e-6), 1e-6) <= 1.0
    True
    """
    c = Charge("zcdp", _UNSTATED, 0.0, Neighbours.REPLACE_ONE, curve=ZCDPCurve(check_rho(rho)))
    return Ledger.of(c).total(RDP, delta).epsilon


@caches.lru(256)
def rho_for_budget(epsilon: float, delta: float, what: str = "zCDP") -> float:
    """Largest rho whose ``("zcdp", rho)`` charge the RDP accountant totals to at most epsilon.

    Root of :meth:`Ledger.total` (``method="rdp"``, target ``delta``) minus epsilon to a
    relative 1e-12, then stepped down until the total is at most epsilon.

    ``what`` names the release in the error a ``delta`` of 0 gets.

    >>> rho = rho_for_budget(1.0, 1e-6)
    >>> 0.02 < rho < 0.03
    True
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if delta <= 0:
        raise InvalidInput(f"{what} needs delta > 0 to convert to (epsilon, delta), got {delta!r}")

    def total(rho: float) -> float:
        return rdp_epsilon(rho, delta)

    # Start at the classical conversion's rho (eps = rho + 2 sqrt(rho ln(1/delta))), which
    # the accountant's is usually at least as tight as; bracket, find the root, step below it.
    root = math.sqrt(math.log(1 / delta) + epsilon) - math.sqrt(math.log(1 / delta))
    lo = root**2
    while total(lo) > epsilon:
        lo /= 2
    hi = 2 * lo
    while total(hi) <= epsilon:
        lo, hi = hi, 2 * hi
    rho, step = brentq(lambda r: total(r) - epsilon, lo, hi, xtol=1e-15, rtol=1e-12), 1e-12
    while total(rho) > epsilon:
        rho, step = max(lo, rho * (1 - step)), 2 * step
    return rho


def zcdp_gaussian_scale(rho: float, sensitivity: float, dimension: int) -> tuple[float, float]:
    """(sigma in value units, grid) of :func:`zcdp_gaussian_vector` (public parameters only).

    ``sigma = g (D/g + sqrt(d)) / sqrt(2 rho)``: ``D / sqrt(2 rho)`` up to the grid's
    relative ``2**-12``.

    >>> sigma, grid = zcdp_gaussian_scale(0.5, 1.0, 1)
    >>> abs(sigma - 1.0) < 1e-3
    True
    """
    grid = grid_for(sensitivity, dimension)
    shift = sensitivity / grid + math.sqrt(dimension)
    return grid * shift / math.sqrt(2 * rho), grid


def zcdp_gaussian_vector(
    values: Any,
    *,
    rho: float,
    delta: float,
    sensitivity: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    budget: Budget | None = None,
) -> Release:
    """Release ``values`` with the multivariate discrete Gaussian: rho-zCDP.

    Sensitivity: the L2 sensitivity of the whole vector under ``neighbours``. The charge
    (curve ``ZCDPCurve(rho)``, its own epsilon stated at ``delta``) is reserved on
    ``budget`` before any noise is drawn. See the module docstring for the construction.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> rel = zcdp_gaussian_vector([0.0, 1.0, 2.0], rho=0.5, delta=1e-6, sensitivity=1.0,
    ...                            neighbours=Neighbours.REPLACE_ONE, sampler=SeededSampler(0))
    >>> rel.value.shape, rel.ledger.charges[0].curve
    ((3,), ZCDPCurve(rho=0.5))
    """
    rho, sensitivity = check_rho(rho), check_sensitivity(sensitivity)
    if sensitivity == 0:
        raise InvalidInput("sensitivity must be positive for the Gaussian vector, got 0")
    x, _ = as_array(values)
    x = x.reshape(-1)
    charge = zcdp_charge("gaussian_vector", rho, delta, neighbours, sensitivity=sensitivity,
                         note=f"{x.size} values, L2 sensitivity {sensitivity:.6g}")
    ledger = pay(charge, budget)
    sigma, grid = zcdp_gaussian_scale(rho, sensitivity, max(1, x.size))
    noise = sampler.discrete_gaussian(sigma / grid, x.size)
    return Release(noisy_on_grid(x, grid, noise), ledger)


#: Epsilon a release leaves unspent: the accountants' numerical slack and the samplers' PURE_DP_SLACK.
MARGIN = 1e-6


def total_rho(epsilon: float, delta: float) -> float:
    """A release's zCDP budget: the largest rho the RDP accountant converts to at most
    ``epsilon - MARGIN`` at ``delta`` (:func:`rho_for_budget`; the margin covers the
    selections' sampler slack, which the accountant adds to the total).

    >>> 0.015 < total_rho(1.0, 1e-6) < 0.03
    True
    """
    return rho_for_budget(epsilon - MARGIN, delta)


__all__ = ["MARGIN", "check_rho", "total_rho", "rdp_epsilon", "rho_for_budget", "zcdp_charge", "zcdp_epsilon", "zcdp_gaussian_scale",
           "zcdp_gaussian_vector"]
