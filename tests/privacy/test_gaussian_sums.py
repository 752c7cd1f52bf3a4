import math

import dp_accounting
import numpy as np
import pytest

from privgraph.privacy import (
    Budget,
    BudgetExceeded,
    GaussianSums,
    Ledger,
    Neighbours,
    SeededSampler,
    clipped_sum_sensitivity,
    sampled_gaussian_charge,
    sampled_gaussian_multiplier,
)
from privgraph.privacy.gaussian_sums import check_sampling
from tests.privacy.bounds import hoeffding

AR, RO = Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE
CASES = [(AR, ("poisson", 0.05)), (RO, ("without_replacement", 50, 1000))]


@pytest.mark.parametrize("neighbours,sampling", CASES)
def test_noise_sd_is_multiplier_times_the_clipped_sum_sensitivity(neighbours, sampling):
    # P(|noise| <= 0.6745 sd) = 1/2 for a Gaussian; half the sd (e.g. C instead of 2C under
    # replace-one) moves it to 0.82, far outside the tolerance
    clip, multiplier, d = 1.5, 3.0, 20_000
    sums = GaussianSums(clip=clip, dimension=d, multiplier=multiplier, steps=1, delta=1e-5, sampling=sampling,
                        neighbours=neighbours, sampler=SeededSampler(4))
    noise = sums.release(np.zeros(d))
    expected = multiplier * clipped_sum_sensitivity(clip, neighbours)
    assert sums.sigma == pytest.approx(expected, rel=1e-3)  # the rest is the grid term
    assert abs(np.mean(np.abs(noise) <= 0.6744897501960817 * expected) - 0.5) <= hoeffding(d) + 1e-3
    assert np.all(noise / sums.grid == np.round(noise / sums.grid))  # a data-independent grid


def test_budget_is_paid_for_all_steps_before_any_noise():
    sampler = SeededSampler(0)
    state = sampler._bits.state
    kwargs = dict(clip=1.0, dimension=4, multiplier=0.8, steps=100, delta=1e-5, sampler=sampler,
                  sampling=("without_replacement", 50, 1000), neighbours=RO)
    with pytest.raises(BudgetExceeded):
        GaussianSums(budget=Budget(0.5, 1e-5, composition="rdp"), **kwargs)
    assert sampler._bits.state == state
    budget = Budget(50.0, 1e-5, composition="rdp")
    sums = GaussianSums(budget=budget, **kwargs)
    assert sampler._bits.state == state and budget.ledger == sums.ledger
    assert budget.ledger.charges[0].count == 100
    for _ in range(100):
        sums.release(np.zeros(4))
    with pytest.raises(RuntimeError, match="100 reserved steps"):
        sums.release(np.zeros(4))


def test_multiplier_is_the_smallest_meeting_epsilon():
    sampling, eps, delta = ("without_replacement", 100, 2000), 1.0, 1e-5
    m = sampled_gaussian_multiplier(eps, delta, sampling=sampling, steps=30, neighbours=RO)

    def total(multiplier):
        charge = sampled_gaussian_charge(multiplier, sampling=sampling, steps=30, delta=delta, neighbours=RO,
                                         sensitivity=2.0)
        return Ledger.of(charge).total("rdp", delta=delta).epsilon

    assert total(m) <= eps < total(m / 1.02)


def test_sampling_must_match_what_the_accountant_supports():
    # dp_accounting's RDP accountant: Poisson only under add/remove, without replacement only under replace-one
    gauss = dp_accounting.GaussianDpEvent(1.0)
    rdp = dp_accounting.rdp.RdpAccountant
    assert not rdp(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE).supports(
        dp_accounting.PoissonSampledDpEvent(0.1, gauss))
    assert not rdp(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE).supports(
        dp_accounting.SampledWithoutReplacementDpEvent(100, 10, gauss))
    with pytest.raises(ValueError, match="add_remove neighbours only"):
        check_sampling(("poisson", 0.1), RO)
    with pytest.raises(ValueError, match="replace_one neighbours only"):
        check_sampling(("without_replacement", 10, 100), AR)
    with pytest.raises(ValueError, match="exceeds the population"):
        check_sampling(("without_replacement", 101, 100), RO)


def test_out_of_reach_epsilon_is_refused():
    with pytest.raises(ValueError, match="out of reach"):
        sampled_gaussian_multiplier(1e-3, 1e-4, sampling=("poisson", 0.5), steps=1000, neighbours=AR,
                                    max_multiplier=5.0)


def test_clipped_sum_sensitivity_doubles_under_replace_one():
    assert clipped_sum_sensitivity(2.0, RO) == 2 * clipped_sum_sensitivity(2.0, AR) == 4.0
    assert math.isclose(clipped_sum_sensitivity(0.1, "add_remove"), 0.1)
