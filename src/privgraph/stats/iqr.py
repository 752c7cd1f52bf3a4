"""The interquartile range, the spread score of the additive-noise direction test.

The IQR has no finite global sensitivity (moving one point can move a quartile from one
cluster of values to another arbitrarily far away), only a local one, so it is released by
propose-test-release (private-anm.txt, Algorithm 4), not by a global-sensitivity mechanism.
Quartiles here are order statistics (numpy's ``inverted_cdf``): the lower quartile is the
``ceil(m/4)``-th smallest value and the upper the ``ceil(3m/4)``-th, so "how many points
must change to move the IQR out of an interval" is a question about ranks.
"""

from __future__ import annotations

import math

import numpy as np
from privgraph.validation import InvalidInput


def iqr(x) -> float:
    """Upper minus lower quartile (order statistics) of a 1-D finite sample.

    Examples
    --------
    >>> iqr([1, 2, 3, 4, 5, 6, 7, 8])
    4.0
    >>> iqr([])
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: the IQR needs a non-empty 1-D finite sample, got shape (0,)
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.isfinite(x).all():
        raise InvalidInput(f"the IQR needs a non-empty 1-D finite sample, got shape {x.shape}")
    lo, hi = quartile_ranks(x.size)
    s = np.partition(x, (lo - 1, hi - 1))
    return float(s[hi - 1] - s[lo - 1])


def quartile_ranks(m: int) -> tuple[int, int]:
    """1-based ranks of the lower and upper quartiles among m values.

    >>> quartile_ranks(8), quartile_ranks(9)
    ((2, 6), (3, 7))
    """
    return max(1, math.ceil(m / 4)), max(1, math.ceil(3 * m / 4))
