"""Theorem 3 and Theorem 5 (the probability that noise keeps the order of two scores) against simulation.

Tolerances are Hoeffding half-widths at failure probability 1e-6 per check, so a correct
implementation fails with probability at most about 1e-5 whatever the seeds.
"""

import math

import numpy as np
import pytest

from privgraph.causal import direction as dr
from privgraph.causal.direction import data as dd
from privgraph.causal.direction import scores as ds
from privgraph.privacy import SeededSampler, laplace_scale
from tests.privacy.bounds import hoeffding


@pytest.mark.parametrize("gamma_over_sigma", [0.0, 0.5, 1.0, 2.0, 4.0])
def test_theorem3_matches_laplace_noise(gamma_over_sigma):
    n, sigma = 100_000, 0.7
    z = SeededSampler(3).laplace_on_grid(sigma, 2.0**-20, (n, 2))
    kept = np.mean(z[:, 0] - z[:, 1] < gamma_over_sigma * sigma)
    assert abs(kept - ds.laplace_flip_free(gamma_over_sigma * sigma, sigma)) <= hoeffding(n)


@pytest.mark.parametrize("gamma_over_sigma", [0.0, 0.5, 1.0, 3.0, 6.0])
def test_theorem5_matches_four_laplace_noises(gamma_over_sigma):
    n, sigma = 100_000, 1.3
    z = SeededSampler(4).laplace_on_grid(sigma, 2.0**-20, (n, 4))
    kept = np.mean(z[:, 0] + z[:, 1] - z[:, 2] - z[:, 3] < gamma_over_sigma * sigma)
    assert abs(kept - ds.iqr_flip_free(gamma_over_sigma * sigma, sigma)) <= hoeffding(n)


def _pair(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, n)
    return x, np.tanh(x) + 0.4 * rng.uniform(-1, 1, n) * (1 + 0.5 * x)


def test_observed_flip_rate_of_the_pipeline_agrees_with_theorem3():
    """A pair with a known (non-private) margin: the private decision keeps its order at the predicted rate."""
    x, y = _pair(600, 0)
    x, y = dd.validate_pair(x, y)
    fit = dd.fit_both_directions(x, y, privacy="test", bounds=(None, None), test_fraction=0.5,
                                 ridge=1e-3, lengthscale=1.0, rng=np.random.default_rng(1))
    raw = dr.raw_scores(fit, "kendall")
    margin = raw[1] - raw[0]
    sens = ds.sensitivity_on_test_set("kendall", fit.x.size)
    epsilon = 2 * sens / abs(margin)  # noise scale about the margin: flips neither rare nor certain
    scale = laplace_scale(epsilon / 2, sens)
    runs = 3000
    same = 0
    for seed in range(runs):
        (scores, _), _ = dr.release_laplace_scores(raw, sens, epsilon, SeededSampler(seed), None)
        same += (scores[0] < scores[1]) == (raw[0] < raw[1])
    assert abs(same / runs - ds.laplace_flip_free(margin, scale)) <= hoeffding(runs)


def test_noise_kept_order_is_theorem3_at_the_private_margin():
    x, y = _pair(600, 2)
    result, _ = dr.private_direction(x, y, epsilon=1.0, score="spearman", privacy="test", sampler=SeededSampler(0),
                                     rng=np.random.default_rng(0))
    scale = laplace_scale(0.5, ds.sensitivity_on_test_set("spearman", 300))
    gap = result.scores["y->x"] - result.scores["x->y"]
    assert math.isclose(result.noise_kept_order, ds.laplace_flip_free(gap, scale))
