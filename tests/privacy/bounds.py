"""Tolerances from tail bounds, so a correct implementation fails with probability <= 1e-6."""

import math

FAILURE = 1e-6


def hoeffding(n: int, failure: float = FAILURE, events: int = 1) -> float:
    """Two-sided Hoeffding half-width for a frequency from n draws (union over events)."""
    return math.sqrt(math.log(2 * events / failure) / (2 * n))


def ks_two_sample(n: int, m: int, failure: float = FAILURE) -> float:
    """Two-sample DKW/KS critical value (conservative for discrete distributions)."""
    return math.sqrt(-math.log(failure / 2) / 2) * math.sqrt((n + m) / (n * m))
