import math

import numpy as np
import pytest

from privgraph.privacy import (
    Budget,
    BudgetExceeded,
    Charge,
    Neighbours,
    SeededSampler,
    SparseVector,
    above_threshold,
    amplify_poisson,
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    report_noisy_max,
)

AR = Neighbours.ADD_REMOVE


class CountingSampler(SeededSampler):
    """A seeded sampler that counts the 64-bit words it hands out."""

    def __init__(self, seed=0):
        super().__init__(seed)
        self.words = 0

    def _words(self, size):
        self.words += size
        return super()._words(size)


def _calls():
    kw = dict(neighbours=AR)
    return {
        "laplace": lambda s, b, **o: laplace_mechanism(1.0, **{**dict(epsilon=0.6, sensitivity=1.0, sampler=s, budget=b), **kw, **o}),
        "gaussian": lambda s, b, **o: gaussian_mechanism(1.0, **{**dict(epsilon=0.6, delta=1e-6, sensitivity=1.0, sampler=s, budget=b), **kw, **o}),
        "exponential": lambda s, b, **o: exponential_mechanism([1.0, 2.0], **{**dict(epsilon=0.6, sensitivity=1.0, sampler=s, budget=b), **kw, **o}),
        "noisy_max": lambda s, b, **o: report_noisy_max([1.0, 2.0], **{**dict(epsilon=0.6, sensitivity=1.0, sampler=s, budget=b), **kw, **o}),
        "sparse_vector": lambda s, b, **o: above_threshold([1.0, 2.0], **{**dict(threshold=0.0, cutoff=1, epsilon=0.6, sensitivity=1.0, sampler=s, budget=b), **kw, **o}),
    }


@pytest.mark.parametrize("name", list(_calls()))
def test_budget_refuses_before_any_noise_is_drawn(name):
    call = _calls()[name]
    budget = Budget(1.0, 1e-5)
    sampler = CountingSampler()
    call(sampler, budget)
    drawn, charged = sampler.words, len(budget.ledger)
    with pytest.raises(BudgetExceeded) as err:
        call(sampler, budget)
    assert sampler.words == drawn and len(budget.ledger) == charged
    assert err.value.requested.epsilon == 0.6
    assert err.value.remaining[0] == pytest.approx(0.4)
    assert "remaining epsilon=0.4" in str(err.value)


@pytest.mark.parametrize("name", list(_calls()))
@pytest.mark.parametrize(
    "override,match",
    [
        (dict(epsilon=0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(epsilon=math.inf), "epsilon"),
        (dict(epsilon=math.nan), "epsilon"),
        (dict(sensitivity=-1.0), "sensitivity"),
        (dict(sensitivity=math.inf), "sensitivity"),
        (dict(neighbours="sideways"), "neighbours"),
    ],
)
def test_bad_input_is_a_clear_error_and_charges_nothing(name, override, match):
    budget, sampler = Budget(10.0, 1e-3), CountingSampler()
    with pytest.raises(ValueError, match=match) as err:
        _calls()[name](sampler, budget, **override)
    assert repr(list(override.values())[0]) in str(err.value) or match == "neighbours"
    assert len(budget.ledger) == 0 and sampler.words == 0


@pytest.mark.parametrize("delta", [-0.1, 1.0, 1.5, math.nan, 0.0])
def test_gaussian_delta_out_of_range(delta):
    with pytest.raises(ValueError, match="delta"):
        gaussian_mechanism(1.0, epsilon=1.0, delta=delta, sensitivity=1.0, neighbours=AR, sampler=SeededSampler(0))


@pytest.mark.parametrize("rate", [0.0, -0.5, 1.5, math.nan])
def test_sampling_rate_out_of_range(rate):
    with pytest.raises(ValueError, match=r"sampling rate must lie in \(0, 1\]"):
        amplify_poisson(1.0, 0.0, rate, AR)


def test_non_finite_value_refused():
    with pytest.raises(ValueError, match="finite"):
        laplace_mechanism([1.0, np.nan], epsilon=1.0, sensitivity=1.0, neighbours=AR, sampler=SeededSampler(0))


def test_budget_with_planned_rounds_and_tighter_composition():
    b = Budget(1.0, 1e-6, composition="optimal")
    b.reserve(Charge("sieve", 0.02, 0.0, AR).times(60))  # basic would be 1.2 > 1
    assert b.spent().epsilon < 1.0
    with pytest.raises(BudgetExceeded):
        b.reserve(Charge("more", 0.5, 0.0, AR))


def test_budget_rejects_bad_parameters_and_mixed_relations():
    with pytest.raises(ValueError, match="composition"):
        Budget(1.0, composition="magic")
    with pytest.raises(ValueError, match="delta"):
        Budget(1.0, 0.0, composition="pld")
    b = Budget(1.0)
    b.reserve(Charge("a", 0.1, 0.0, AR))
    with pytest.raises(ValueError, match="replace_one"):
        b.reserve(Charge("b", 0.1, 0.0, Neighbours.REPLACE_ONE))


def test_sparse_vector_budget_is_checked_at_creation():
    b, s = Budget(0.5), CountingSampler()
    with pytest.raises(BudgetExceeded):
        SparseVector(threshold=0.0, cutoff=1, epsilon=1.0, sensitivity=1.0, neighbours=AR, sampler=s, budget=b)
    assert s.words == 0
