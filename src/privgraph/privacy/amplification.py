"""Amplification by sub-sampling, with the theorem that matches the neighbouring relation.

A mechanism that is (epsilon, delta)-DP on a secret random sub-sample is more private with
respect to the full data. Which theorem applies depends on how the sample is drawn and on
the neighbouring relation; using the wrong pair (as the Priv-PC reference code does:
Theorem 9 of Balle et al. with add/remove sensitivities) is not a guarantee at all.

* Poisson sampling (each record independently with probability q) under ADD_REMOVE:
  ``eps' = ln(1 + q (e^eps - 1))``, ``delta' = q delta`` (Li, Qardaji, Su 2012; Balle,
  Barthe, Gaboardi 2018, Theorem 8).
* Sampling exactly m of n records without replacement under REPLACE_ONE (n public):
  ``eps' = ln(1 + (m/n) (e^eps - 1))``, ``delta' = (m/n) delta`` (Balle, Barthe, Gaboardi
  2018, Theorem 9).

The sample must be secret: it is drawn from the privacy core's sampler.
"""

from __future__ import annotations

import math

from privgraph.privacy.neighbours import (
    Neighbours,
    check_delta,
    check_epsilon,
    check_rate,
)
from privgraph.validation import InvalidInput, positive_int


def amplify_poisson(epsilon: float, delta: float, rate: float, neighbours: Neighbours) -> tuple[float, float]:
    """Guarantee of an (epsilon, delta)-DP mechanism run on a Poisson sub-sample of rate q.

    >>> eps, dlt = amplify_poisson(1.0, 0.0, 0.1, Neighbours.ADD_REMOVE)
    >>> round(eps, 4)
    0.1586
    >>> amplify_poisson(1.0, 0.0, 0.1, Neighbours.REPLACE_ONE)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: Poisson sub-sampling amplification holds under add_remove neighbours, got replace_one
    """
    epsilon, delta, rate = check_epsilon(epsilon), check_delta(delta), check_rate(rate, "sampling rate")
    if Neighbours.parse(neighbours) is not Neighbours.ADD_REMOVE:
        raise InvalidInput(
            "Poisson sub-sampling amplification holds under add_remove neighbours, "
            f"got {Neighbours.parse(neighbours).value}"
        )
    return _amplified(epsilon, rate), rate * delta


def _amplified(epsilon: float, q: float) -> float:
    """``ln(1 + q (e^eps - 1))`` without overflow: ``eps + ln(q + (1 - q) e^-eps)`` for large eps."""
    if epsilon < 30:
        return math.log1p(q * math.expm1(epsilon))
    return epsilon + math.log(q + (1 - q) * math.exp(-epsilon))


def amplify_without_replacement(
    epsilon: float, delta: float, sample_size: int, population: int, neighbours: Neighbours
) -> tuple[float, float]:
    """Guarantee of an (epsilon, delta)-DP mechanism run on m of n records drawn without replacement.

    >>> eps, dlt = amplify_without_replacement(1.0, 1e-6, 10, 100, Neighbours.REPLACE_ONE)
    >>> round(eps, 4), dlt
    (0.1586, 1e-07)
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    m, n = positive_int("sample_size", sample_size), positive_int("population", population)
    if m > n:
        raise InvalidInput(f"sample_size {m} exceeds population {n}")
    if Neighbours.parse(neighbours) is not Neighbours.REPLACE_ONE:
        raise InvalidInput(
            "sampling without replacement (Balle et al. 2018, Theorem 9) holds under "
            f"replace_one neighbours, got {Neighbours.parse(neighbours).value}"
        )
    q = m / n
    return _amplified(epsilon, q), q * delta


def epsilon_before_amplification(target: float, rate: float) -> float:
    """The epsilon a mechanism may spend on a sub-sample of rate q to cost ``target`` overall.

    Inverse of the amplification formula: ``ln(1 + (e^target - 1) / q)``.

    >>> round(epsilon_before_amplification(0.1586, 0.1), 3)
    1.0
    >>> round(epsilon_before_amplification(1000.0, 0.05) - 1000.0, 4)  # no overflow
    2.9957
    """
    target, rate = check_epsilon(target, "target epsilon"), check_rate(rate, "sampling rate")
    if target < 30:
        return math.log1p(math.expm1(target) / rate)
    return target + math.log(-math.expm1(-target) / rate + math.exp(-target))
