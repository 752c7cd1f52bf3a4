"""The auditor's statistics: exact Clopper-Pearson bounds, valid lower bounds, clear errors."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from privgraph.audit import (
    Event,
    audit,
    clopper_pearson,
    epsilon_lower_bound,
    given_events,
    threshold_events,
    value_events,
)
from privgraph.privacy import SeededSampler

FAILURE = 1e-6


@pytest.mark.parametrize("k, n, alpha", [(1, 10, 0.05), (37, 1000, 1e-3), (999, 1000, 0.01), (5000, 10**6, 5e-4)])
def test_clopper_pearson_bounds_are_exact_binomial_tails(k, n, alpha):
    lower, upper = clopper_pearson(k, n, alpha)
    assert binom.sf(k - 1, n, lower) == pytest.approx(alpha, rel=1e-6)  # P[X >= k | p = lower]
    assert binom.cdf(k, n, upper) == pytest.approx(alpha, rel=1e-6)  # P[X <= k | p = upper]
    assert lower < k / n < upper


def test_clopper_pearson_at_the_ends():
    assert clopper_pearson(0, 50, 0.1) == (0.0, pytest.approx(1 - 0.1 ** (1 / 50)))
    assert clopper_pearson(50, 50, 0.1) == (pytest.approx(0.1 ** (1 / 50)), 1.0)


def test_delta_lowers_the_bound_and_can_remove_it():
    no_delta = epsilon_lower_bound(30_000, 10_000, 100_000, 1e-3)
    with_delta = epsilon_lower_bound(30_000, 10_000, 100_000, 1e-3, delta=0.05)
    assert 0 < with_delta < no_delta < math.log(3)
    assert epsilon_lower_bound(30_000, 10_000, 100_000, 1e-3, delta=0.3) == 0.0


def randomized_response(epsilon, leak=0.0):
    """Keep the input bit with probability e^eps / (1 + e^eps); with probability ``leak``
    output 2 + bit instead. Exactly (epsilon, leak)-DP: every bound above epsilon is wrong."""
    keep = math.exp(epsilon) / (1 + math.exp(epsilon))

    def run(bit, n, sampler):
        out = np.where(sampler.bernoulli(keep, n), bit, 1 - bit)
        return np.where(sampler.bernoulli(leak, n), 2 + bit, out)

    return run


def _violations(run, trials, alpha, epsilon, **kw):
    bounds = [audit(run, 0, 1, runs=2_000, sampler=SeededSampler(i), alpha=alpha, **kw).epsilon_bound
              for i in range(trials)]
    return sum(b > epsilon for b in bounds), bounds


def _binomial_ceiling(trials, alpha):
    """Violations a valid auditor exceeds with probability <= FAILURE (binomial tail)."""
    return int(binom.isf(FAILURE, trials, alpha))


def test_bound_holds_with_probability_one_minus_alpha_on_a_tight_mechanism():
    # Randomized response is exactly e^eps on its best event, so a bound built from point
    # estimates would exceed eps about half the time; a valid one at most alpha of the time.
    trials, alpha, eps = 200, 0.2, math.log(3)
    bad, bounds = _violations(randomized_response(eps), trials, alpha, eps, events=value_events())
    assert bad <= _binomial_ceiling(trials, alpha)
    assert np.median(bounds) > 0.8 * eps  # and it is not valid by seeing nothing


def test_bound_with_delta_holds_on_a_tight_epsilon_delta_mechanism():
    # The leak makes the union {0, 2} exactly (eps, delta)-tight; users supply that event.
    trials, alpha, eps, delta = 200, 0.2, math.log(3), 0.05
    union = Event("y in {0, 2}", lambda y: (y == 0) | (y == 2))
    bad, bounds = _violations(randomized_response(eps, delta), trials, alpha, eps,
                              events=given_events(union), delta=delta)
    assert bad <= _binomial_ceiling(trials, alpha)
    assert np.median(bounds) > 0.7 * eps


def test_threshold_events_ignore_missing_values_and_value_events_keep_the_commonest():
    events = threshold_events(9)(np.array([np.nan, 1.0, 2.0]), np.array([3.0, np.nan]))
    assert events and all(not e.contains(np.array([np.nan])).any() for e in events)
    common = value_events(most=2)(np.array([5, 5, 5, 1]), np.array([7, 7, 9]))
    assert sorted(e.description for e in common) == ["y == 5", "y == 7"]


def _run(x, n, sampler):
    return x + sampler.uniform(n)


@pytest.mark.parametrize("kw, name", [
    (dict(alpha=0.0), "alpha"), (dict(alpha=1.0), "alpha"), (dict(alpha=float("nan")), "alpha"),
    (dict(runs=10), "runs"), (dict(runs=True), "runs"), (dict(runs=1e6), "runs"),
    (dict(choice_runs=5), "choice_runs"), (dict(delta=1.0), "delta"), (dict(delta=-0.1), "delta"),
])
def test_bad_input_names_the_argument(kw, name):
    args = {**dict(runs=1_000, sampler=SeededSampler(0)), **kw}
    with pytest.raises(ValueError, match=rf"^{name} must"):
        audit(_run, 0.0, 1.0, **args)


def test_an_empty_event_family_is_refused():
    with pytest.raises(ValueError, match="offered no events"):
        audit(_run, 0.0, 1.0, runs=1_000, sampler=SeededSampler(0), events=given_events())
