"""The non-private reference ANM-pHSIC (Mooij et al. 2016): its GP, its HSIC test, its decision."""

import math

import numpy as np
import pytest

from privgraph.causal.direction import anm_reference, reference_rows
from privgraph.causal.direction.reference import (
    fit_gaussian_process,
    hsic_gamma_log_pvalue,
    median_width,
    negative_log_marginal_likelihood,
)
from privgraph.stats import hsic


def test_gp_matches_scikit_learn_marginal_likelihood_fit():
    sk = pytest.importorskip("sklearn.gaussian_process")
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    rng = np.random.default_rng(3)
    x = rng.normal(size=120)
    y = np.sin(2 * x) + 0.3 * rng.normal(size=120)
    kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(1.0, (1e-2, 1e2)) + WhiteKernel(0.1, (1e-5, 1e1))
    theirs = sk.GaussianProcessRegressor(kernel).fit(x[:, None], y)
    ours = fit_gaussian_process(x, y)
    grid = np.linspace(-2, 2, 9)
    assert np.abs(ours.predict(grid) - theirs.predict(grid[:, None])).max() < 1e-4


def test_marginal_likelihood_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.normal(size=30)
    d2 = np.square(x[:, None] - x[None, :])
    y = np.cos(x) + 0.2 * rng.normal(size=30)
    theta = np.array([0.3, -0.4, math.log(0.2)])
    _, grad = negative_log_marginal_likelihood(theta, d2, y)
    for j in range(3):
        step = np.zeros(3)
        step[j] = 1e-6
        hi, _ = negative_log_marginal_likelihood(theta + step, d2, y)
        lo, _ = negative_log_marginal_likelihood(theta - step, d2, y)
        assert abs((hi - lo) / 2e-6 - grad[j]) < 1e-4


def test_gamma_p_value_is_tiny_for_a_dependence_that_stats_hsic_sees():
    rng = np.random.default_rng(1)
    a = rng.normal(size=200)
    b = a**2 + 0.5 * rng.normal(size=200)
    shuffled = rng.permutation(b)
    same_kernels = {"bandwidth_x": median_width(a), "bandwidth_y": median_width(b)}
    assert hsic(a, b, **same_kernels) > 10 * hsic(a, shuffled, **same_kernels)
    weaker = hsic_gamma_log_pvalue(a, shuffled)
    assert hsic_gamma_log_pvalue(a, b) < math.log(1e-6) < weaker


def test_gamma_p_values_are_roughly_uniform_under_independence():
    rng = np.random.default_rng(7)
    reps = 300
    rejections = sum(hsic_gamma_log_pvalue(rng.normal(size=60), rng.uniform(size=60)) < math.log(0.1)
                     for _ in range(reps))
    tol = math.sqrt(math.log(2 / 1e-6) / (2 * reps))  # Hoeffding around the nominal 0.1
    assert abs(rejections / reps - 0.1) <= tol


@pytest.mark.parametrize("flip", [False, True])
def test_reference_finds_a_nonlinear_additive_noise_direction(flip):
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, 200)
    y = x**3 / 4 + 0.4 * rng.uniform(-1, 1, 200)
    a, b, truth = (y, x, "y->x") if flip else (x, y, "x->y")
    decision = anm_reference(a, b, rng=np.random.default_rng(0))
    assert decision.direction == truth
    assert decision.rows == 200


def test_reference_subsamples_and_drops_non_finite_rows():
    x = np.arange(50.0)
    y = np.where(x % 7 == 0, np.nan, np.sqrt(x))
    zx, zy = reference_rows(x, y, rng=np.random.default_rng(0), max_rows=20)
    assert zx.size == zy.size == 20 and np.isfinite(zy).all()
    assert abs(zx.mean()) < 1e-12 and abs(zx.std() - 1) < 1e-12
    zx, _ = reference_rows(x, y, rng=np.random.default_rng(0), max_rows=1000)
    assert zx.size == 50 - 8


def test_reference_errors_name_the_input():
    with pytest.raises(ValueError, match="max_rows must be at least 6, got 3"):
        anm_reference([1.0] * 10, [2.0] * 10, rng=np.random.default_rng(0), max_rows=3)
    with pytest.raises(ValueError, match="6 rows with both values finite, got 2"):
        anm_reference([1.0, 2.0, np.nan], [2.0, 1.0, 3.0], rng=np.random.default_rng(0))


def test_constant_columns_tie_and_a_public_coin_decides():
    answers = {anm_reference(np.ones(20), np.ones(20), rng=np.random.default_rng(s)).direction for s in range(12)}
    assert answers == {"x->y", "y->x"}
