import math

import numpy as np
import pytest

from privgraph.privacy import (
    Neighbours,
    SeededSampler,
    SparseVector,
    above_threshold,
    exponential_mechanism,
    gaussian_calibration,
    gaussian_mechanism,
    laplace_mechanism,
    laplace_scale,
    report_noisy_max,
)
from privgraph.privacy.calibration import analytic_gaussian_sigma
from privgraph.privacy.mechanisms import laplace_calibration
from privgraph.privacy.samplers import PURE_DP_SLACK
from tests.privacy.bounds import hoeffding

AR, RO = Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE


@pytest.mark.parametrize("epsilon,sensitivity", [(0.5, 1.0), (2.0, 3.0), (0.05, 0.01)])
def test_laplace_noise_scale(epsilon, sensitivity):
    # P(|noise| <= b ln 2) = 1/2 for Laplace(b); a scale off by 25% moves it by > 0.1
    n = 200_000
    b = sensitivity / epsilon
    noisy = laplace_mechanism(np.zeros(n), epsilon=epsilon, sensitivity=sensitivity,
                              neighbours=AR, sampler=SeededSampler(1)).value
    assert abs(np.mean(np.abs(noisy) <= b * math.log(2)) - 0.5) <= hoeffding(n) + 1e-3
    assert laplace_scale(epsilon, sensitivity) == pytest.approx(b, rel=3e-4)


def test_laplace_outputs_lie_on_a_data_independent_grid():
    grid = laplace_calibration(1.0, 1.0, 1000)[1]  # depends on the dimension, not the data
    for x in (0.0, 1.0, 0.1234567):
        out = laplace_mechanism(np.full(1000, x), epsilon=1.0, sensitivity=1.0, neighbours=AR,
                                sampler=SeededSampler(3)).value
        assert np.all(out / grid == np.round(out / grid))


def test_laplace_shapes_and_input_untouched():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    before = x.copy()
    rel = laplace_mechanism(x, epsilon=1.0, sensitivity=1.0, neighbours=RO, sampler=SeededSampler(0))
    assert rel.value.shape == (2, 2) and np.array_equal(x, before)
    value, ledger = rel
    assert ledger.total().epsilon == 1.0 and ledger.charges[0].neighbours is RO


@pytest.mark.parametrize("dimension", [1, 1000])
def test_gaussian_noise_scale(dimension):
    # P(|noise| <= 0.6745 sigma) = 1/2 for N(0, sigma^2); halving sigma moves it by > 0.2
    eps, delta, sens = 1.0, 1e-5, 2.0
    sigma, _, _ = gaussian_calibration(eps, delta, sens, dimension)
    value = 0.0 if dimension == 1 else np.zeros(dimension)
    noise = np.concatenate([
        np.atleast_1d(gaussian_mechanism(value, epsilon=eps, delta=delta, sensitivity=sens,
                                         neighbours=AR, sampler=SeededSampler(i)).value)
        for i in range(20_000 if dimension == 1 else 100)
    ])
    assert abs(np.mean(np.abs(noise) <= 0.6744897501960817 * sigma) - 0.5) <= hoeffding(noise.size) + 1e-3


def test_gaussian_scalar_is_the_analytic_gaussian():
    sigma, _, curve = gaussian_calibration(1.0, 1e-5, 1.0)
    assert curve.as_tuple()[0] == "discrete_gaussian"
    assert sigma == pytest.approx(analytic_gaussian_sigma(1.0, 1e-5, 1.0), rel=1e-3)


def test_analytic_gaussian_beats_classical_and_handles_large_epsilon():
    classical = math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    assert analytic_gaussian_sigma(0.5, 1e-5, 1.0) < classical
    assert 0 < analytic_gaussian_sigma(20.0, 1e-5, 1.0) < 1.0  # valid beyond epsilon = 1


def test_exponential_mechanism_probabilities():
    u = np.array([0.0, 1.0, 2.0])
    n = 20_000
    picks = np.array([exponential_mechanism(u, epsilon=2.0, sensitivity=1.0, neighbours=RO,
                                            sampler=SeededSampler(i)).value for i in range(n)])
    p = np.exp(u) / np.exp(u).sum()  # exp(eps u / (2 sens)) with eps = 2
    tol = hoeffding(n, events=3)
    for i in range(3):
        assert abs(np.mean(picks == i) - p[i]) <= tol


def test_exponential_mechanism_monotone_drops_the_factor_two():
    n = 20_000
    picks = np.array([exponential_mechanism([0.0, 1.0], epsilon=1.0, sensitivity=1.0, neighbours=AR,
                                            monotone=True, sampler=SeededSampler(i)).value for i in range(n)])
    assert abs(np.mean(picks == 1) - math.e / (1 + math.e)) <= hoeffding(n)


def test_report_noisy_max_is_permute_and_flip():
    # two candidates with gap d: P(worse) = exp(-eps d / (2 sens)) / 2
    n, d = 20_000, 1.0
    picks = np.array([report_noisy_max([0.0, d], epsilon=1.0, sensitivity=1.0, neighbours=RO,
                                       sampler=SeededSampler(i)).value for i in range(n)])
    assert abs(np.mean(picks == 0) - math.exp(-0.5) / 2) <= hoeffding(n)


def _laplace_difference_survival(x, a, b):
    """P(X - Y > x), x >= 0, for independent Laplace(a), Laplace(b), a != b."""
    return (a**2 * math.exp(-x / a) - b**2 * math.exp(-x / b)) / (2 * (a**2 - b**2))


@pytest.mark.parametrize("monotone", [False, True])
def test_sparse_vector_noise_scales(monotone):
    # Lyu-Su-Li Algorithm 1: rho ~ Lap(2/eps), nu ~ Lap(4c/eps) (2c/eps when monotone)
    n, eps, c, gap = 20_000, 1.0, 2, 3.0
    above = 0
    for i in range(n):
        svt = SparseVector(threshold=0.0, cutoff=c, epsilon=eps, sensitivity=1.0, neighbours=RO,
                           sampler=SeededSampler(i), monotone=monotone, max_queries=1)
        above += svt.test(-gap)
    nu = (2 if monotone else 4) * c / eps
    expected = _laplace_difference_survival(gap, nu, 2 / eps)
    assert abs(above / n - expected) <= hoeffding(n) + 1e-3


def test_above_threshold_halts_after_cutoff_and_charges_once():
    answers, ledger = above_threshold([1e6, -1e6, 1e6, 1e6, 1e6], threshold=0.0, cutoff=2, epsilon=1.0,
                                      sensitivity=1.0, neighbours=AR, sampler=SeededSampler(0))
    assert answers == [True, False, True]
    assert ledger.total().epsilon == 1.0 and len(ledger) == 1


def test_sparse_vector_refuses_after_halt_and_cap():
    svt = SparseVector(threshold=0.0, cutoff=1, epsilon=1.0, sensitivity=1.0, neighbours=AR,
                       sampler=SeededSampler(0), max_queries=2)
    assert svt.test(1e9)
    with pytest.raises(RuntimeError, match="halted"):
        svt.test(0.0)
    capped = SparseVector(threshold=0.0, cutoff=1, epsilon=1.0, sensitivity=1.0, neighbours=AR,
                          sampler=SeededSampler(0), max_queries=1)
    capped.test(-1e9)
    with pytest.raises(RuntimeError, match="cap"):
        capped.test(-1e9)


def test_exponential_mechanism_with_zero_sensitivity_is_uniform_over_the_maximisers():
    n = 4000
    picks = np.array([exponential_mechanism([1.0, 3.0, 3.0, 0.0], epsilon=1.0, sensitivity=0.0, neighbours=AR,
                                            sampler=SeededSampler(i)).value for i in range(n)])
    assert set(picks) == {1, 2} and abs(np.mean(picks == 1) - 0.5) <= hoeffding(n)


def test_exponential_mechanism_on_admissible_candidates_is_the_mechanism_on_that_subset():
    """The first admissible finisher of one race: each admissible candidate with probability
    exp(epsilon u / 2) normalised over the admissible ones, the others never (Hoeffding per
    candidate, 1e-6 overall)."""
    u, eps, n = np.array([0.0, 1.0, 2.0, 3.0]), 2.0, 20_000
    keep = [True, True, False, True]
    sampler = SeededSampler(7)
    picks = np.array([exponential_mechanism(u, epsilon=eps, sensitivity=1.0, neighbours=Neighbours.REPLACE_ONE,
                                            sampler=sampler, admissible=lambda i: keep[i]).value for _ in range(n)])
    weights = np.where(keep, np.exp(eps * u / 2), 0.0)
    assert np.abs(np.bincount(picks, minlength=4) / n - weights / weights.sum()).max() <= hoeffding(n, events=4)
    assert (picks != 2).all()
    none = exponential_mechanism(u, epsilon=eps, sensitivity=1.0, neighbours=Neighbours.REPLACE_ONE, sampler=sampler,
                                 admissible=lambda i: False)
    assert none.value is None and none.ledger.total().epsilon == eps


def test_admissibility_is_tested_on_every_candidate_whatever_the_utilities():
    """How many admissibility tests run (and so their time under --max-seconds) must not read
    the utilities: one test per candidate, for a vector whose race winner is admissible and for
    one whose winner is not."""
    from privgraph.timecap import time_cap

    def tests_run(u) -> int:
        tested = []
        exponential_mechanism(u, epsilon=1.0, sensitivity=1.0, neighbours=Neighbours.REPLACE_ONE,
                              sampler=SeededSampler(3), admissible=lambda i: tested.append(i) or i > 1)
        return len(tested)

    vectors = (np.array([0.0, 0.0, 0.0, 50.0]), np.array([50.0, 40.0, 0.0, 0.0]))
    with time_cap(3600):
        assert [tests_run(u) for u in vectors] == [4, 4]
    # without a cap (running time not an output) the tests stop at the first admissible finisher
    assert [tests_run(u) for u in vectors] == [1, 3]


def test_admissible_pick_equals_the_first_admissible_finisher_of_the_same_race():
    """Seeded results unchanged: the pick is the first admissible entry of the race order the
    same sampler draws (what the mechanism returned when it tested candidates in race order)."""
    rng = np.random.default_rng(0)
    for seed in range(200):
        u = rng.normal(0, 3, 12)
        keep = rng.random(12) < 0.5
        order = SeededSampler(seed).race_order((1.0 - PURE_DP_SLACK) / 2 * u)
        expected = next((int(i) for i in order if keep[i]), None)
        got = exponential_mechanism(u, epsilon=1.0, sensitivity=1.0, neighbours=Neighbours.REPLACE_ONE,
                                    sampler=SeededSampler(seed), admissible=lambda i: keep[i]).value
        assert got == expected
