import itertools
import math

import numpy as np
import pytest

from privgraph.privacy import (
    Budget,
    BudgetExceeded,
    Neighbours,
    SeededSampler,
    propose_test_release,
    ptr_threshold,
    smooth_sensitivity_median,
)
from privgraph.privacy.stability import smooth_sensitivity_of_median
from tests.privacy.bounds import hoeffding

RO = Neighbours.REPLACE_ONE


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_ptr_threshold_gives_delta_exactly(epsilon, delta):
    a = math.exp(-epsilon)
    t = ptr_threshold(epsilon, delta)
    assert a ** (t + 1) / (1 + a) <= delta < a**t / (1 + a)


def test_ptr_unstable_data_passes_with_probability_at_most_delta():
    # distance 0 must pass w.p. <= delta; check empirically with a generous delta
    n, delta = 20_000, 0.05
    passed = sum(
        propose_test_release(1.0, distance=0, bound=1.0, epsilon=1.0, delta=delta, neighbours=RO,
                             sampler=SeededSampler(i)).value is not None
        for i in range(n)
    )
    assert passed / n <= delta + hoeffding(n)


def test_ptr_release_noise_scale():
    n, bound, eps = 20_000, 0.5, 1.0
    out = np.array([propose_test_release(0.0, distance=10**6, bound=bound, epsilon=eps, delta=1e-6,
                                         neighbours=RO, sampler=SeededSampler(i)).value for i in range(n)])
    b = bound / eps
    assert abs(np.mean(np.abs(out) <= b * math.log(2)) - 0.5) <= hoeffding(n) + 1e-3


def test_ptr_bad_input_charges_nothing():
    b = Budget(10.0, 1e-3)
    for kw in (dict(distance=-1), dict(bound=0.0), dict(delta=0.0), dict(epsilon=0.0)):
        args = dict(distance=5, bound=1.0, epsilon=1.0, delta=1e-6, neighbours=RO, sampler=SeededSampler(0), budget=b)
        with pytest.raises(ValueError):
            propose_test_release(1.0, **{**args, **kw})
    assert len(b.ledger) == 0


def _brute_smooth(x, lower, upper, beta):
    """max_k e^(-k beta) max_{y: d(x,y) <= k} LS(y), enumerating replacements by observed/extreme values.

    LS(y) is computed by brute force too: the largest move of the median when one value
    of y is replaced by lower or upper.
    """
    vals = sorted(set(x) | {lower, upper})
    n = len(x)
    best = 0.0
    for k in range(n + 1):
        ys = []
        for pos in itertools.combinations(range(n), k):
            for repl in itertools.product(vals, repeat=k):
                y = np.array(x, dtype=float)
                y[list(pos)] = repl
                ys.append(y)
        ys = np.array(ys)
        med = np.median(ys, axis=1)
        ls = np.zeros(len(ys))
        for i in range(n):
            for v in (lower, upper):
                moved = ys.copy()
                moved[:, i] = v
                ls = np.maximum(ls, np.abs(np.median(moved, axis=1) - med))
        best = max(best, math.exp(-k * beta) * ls.max())
    return best


@pytest.mark.parametrize("x", [[0.1, 0.2, 0.3, 0.4, 0.9], [0.5, 0.5, 0.5, 0.5, 0.5], [0.0, 0.0, 1.0, 1.0, 1.0]])
@pytest.mark.parametrize("beta", [0.1, 1.0])
def test_smooth_sensitivity_matches_brute_force(x, beta):
    assert smooth_sensitivity_of_median(np.array(x), 0.0, 1.0, beta) == pytest.approx(_brute_smooth(x, 0.0, 1.0, beta))


def test_smooth_median_concentrates_on_stable_data_and_charges():
    b = Budget(2.0, 1e-5)
    rel = smooth_sensitivity_median(np.full(2001, 0.3), epsilon=1.0, delta=1e-6, lower=0.0, upper=1.0,
                                    neighbours=RO, sampler=SeededSampler(1), budget=b)
    assert abs(rel.value - 0.3) < 1e-3 and b.spent().delta == 1e-6
    with pytest.raises(BudgetExceeded):
        smooth_sensitivity_median(np.full(2001, 0.3), epsilon=1.5, delta=1e-6, lower=0.0, upper=1.0,
                                  neighbours=RO, sampler=SeededSampler(1), budget=b)


def test_smooth_median_bad_input():
    with pytest.raises(ValueError, match="lower"):
        smooth_sensitivity_median([1.0, 2.0, 3.0], epsilon=1.0, delta=1e-6, lower=1.0, upper=1.0,
                                  neighbours=RO, sampler=SeededSampler(0))
    with pytest.raises(ValueError, match="at least 3"):
        smooth_sensitivity_median([1.0], epsilon=1.0, delta=1e-6, lower=0.0, upper=1.0,
                                  neighbours=RO, sampler=SeededSampler(0))


def test_smooth_median_noise_is_smooth_sensitivity_over_alpha():
    # (release - median) * alpha / S is standard Laplace: P(|.| <= ln 2) = 1/2; halving fails
    x = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    eps, delta = 1.0, 1e-6
    slack = 2.0**-18
    alpha = (eps - slack) / 2
    beta = (eps - slack) / (2 * (1 + 2 * math.log(2 / delta)))
    s = smooth_sensitivity_of_median(x, 0.0, 1.0, beta)
    n = 20_000
    out = np.array([smooth_sensitivity_median(x, epsilon=eps, delta=delta, lower=0.0, upper=1.0,
                                              neighbours=RO, sampler=SeededSampler(i)).value for i in range(n)])
    z = (out - 0.5) * alpha / s
    assert abs(np.mean(np.abs(z) <= math.log(2)) - 0.5) <= hoeffding(n) + 1e-3
