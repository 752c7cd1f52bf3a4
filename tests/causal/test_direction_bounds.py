"""The derived bounds hold on random and adversarial neighbours: IQR envelope, bin distance, ridge stability, HSIC."""

import itertools

import numpy as np
import pytest

from privgraph.causal.direction import scores as ds
from privgraph.causal.direction.regression import fit_fourier_ridge, fourier_features, stability_bound
from privgraph.privacy import Neighbours, SeededSampler, log_iqr_release
from privgraph.privacy.log_iqr import bin_distance, quartile_envelope
from privgraph.stats import hsic, iqr
from privgraph.stats.iqr import quartile_ranks


def _neighbours(x, values):
    """Every dataset with one entry of x replaced by one of ``values``."""
    for i, v in itertools.product(range(x.size), values):
        z = x.copy()
        z[i] = v
        yield z


@pytest.mark.parametrize("seed", range(6))
def test_quartile_envelope_bounds_iqr_after_one_and_two_replacements(seed):
    rng = np.random.default_rng(seed)
    x = np.sort(np.round(rng.normal(size=11), 1))  # ties included
    values = np.concatenate([[-100.0, 100.0], np.unique(x), np.unique(x) + 0.05])
    up, low = quartile_envelope(x, quartile_ranks(x.size), 2)
    for z in _neighbours(x, values):
        assert low[1] - 1e-12 <= iqr(z) <= up[1] + 1e-12
        for w in _neighbours(z, values[::3]):
            assert low[2] - 1e-12 <= iqr(w) <= up[2] + 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_envelope_moves_one_step_between_neighbours(seed):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.exponential(size=13))
    ranks = quartile_ranks(13)
    up, low = quartile_envelope(x, ranks, 5)
    for z in _neighbours(x, np.concatenate([[-50.0, 50.0], x + 1e-3])):
        up2, low2 = quartile_envelope(np.sort(z), ranks, 5)
        assert np.all(up2[:-1] <= up[1:] + 1e-12) and np.all(low2[:-1] >= low[1:] - 1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_bin_distance_is_one_sensitive(seed):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.lognormal(size=40))
    ranks = quartile_ranks(40)
    for shift in (0.0, 0.5):
        g = bin_distance(x, ranks, shift, 30)
        for z in _neighbours(x, np.concatenate([[0.0, 1e3], x * 1.01])):
            assert abs(bin_distance(np.sort(z), ranks, shift, 30) - g) <= 1


def test_iqr_release_refuses_unstable_data_and_passes_stable_data():
    gap = np.array([0.0] * 50 + [1.0] * 50)  # the upper quartile sits on the edge of a gap
    ranks = (25, 51)
    out = [log_iqr_release(gap, ranks=ranks, epsilon=3.0, delta=1e-3, neighbours=Neighbours.REPLACE_ONE,
                           sampler=SeededSampler(s)).value for s in range(300)]
    assert all(v is None for v in out)  # each passes with probability <= 1e-3
    stable = np.random.default_rng(0).normal(size=4000)
    rel = log_iqr_release(stable, ranks=quartile_ranks(4000), epsilon=3.0, delta=1e-6,
                          neighbours=Neighbours.REPLACE_ONE, sampler=SeededSampler(1))
    assert rel.value is not None and rel.ledger.total().epsilon == 3.0


def test_fourier_features_have_unit_norm():
    f = fourier_features(np.linspace(-5, 5, 50), np.random.default_rng(0).normal(size=30))
    assert np.allclose(np.linalg.norm(f, axis=1), 1.0)


@pytest.mark.parametrize("ridge", [0.01, 0.3])
def test_ridge_predictions_move_less_than_the_stability_bound(ridge):
    rng = np.random.default_rng(5)
    n = 200
    x = rng.uniform(-2, 2, n)
    y = np.clip(np.sin(x) + 0.3 * rng.normal(size=n), -2, 2)
    grid = np.linspace(-3, 3, 61)
    base = fit_fourier_ridge(x, y, ridge=ridge, rng=np.random.default_rng(9)).predict(grid)
    bound = stability_bound(target_bound=2.0, ridge=ridge, training_rows=n)
    worst = 0.0
    for i in range(0, n, 20):
        for xv, yv in ((-2.0, 2.0), (2.0, -2.0), (0.0, 2.0), (x[i], -y[i])):
            x2, y2 = x.copy(), y.copy()
            x2[i], y2[i] = xv, yv
            moved = fit_fourier_ridge(x2, y2, ridge=ridge, rng=np.random.default_rng(9)).predict(grid)
            worst = max(worst, float(np.abs(moved - base).max()))
    assert 0 < worst <= bound


def test_hsic_moves_less_than_the_training_bound_when_residuals_shift():
    rng = np.random.default_rng(2)
    m, beta, h = 150, 0.02, 0.25
    c = rng.normal(size=m)
    r = 0.5 * rng.normal(size=m) * (1 + c**2) ** 0.5
    base = hsic(c, r, bandwidth_x=1.0, bandwidth_y=h)
    bound = ds.hsic_training_sensitivity(m, beta, h)
    for _ in range(200):
        shifted = r + beta * rng.choice([-1.0, 1.0], m) * rng.uniform(0.5, 1.0, m)
        assert abs(hsic(c, shifted, bandwidth_x=1.0, bandwidth_y=h) - base) <= bound


def test_bin_distance_bisection_matches_the_envelope_scan():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(8, 300))
        x = np.sort(np.round(rng.lognormal(size=m) * rng.uniform(0.1, 3), int(rng.integers(0, 3))))
        ranks, cap = quartile_ranks(m), int(rng.integers(1, 100))
        for shift in (0.0, 0.5):
            a, b = ranks
            width = x[b - 1] - x[a - 1]
            expected = 0
            if width > 0:
                k = np.floor(np.log(width) + shift)
                lo, hi = np.exp(k - shift), np.exp(k + 1 - shift)
                up, low = quartile_envelope(x, ranks, cap + 1)
                out = np.flatnonzero((up[1:] >= hi) | (low[1:] < lo))
                expected = int(out[0]) if out.size else cap
            assert bin_distance(x, ranks, shift, cap) == expected
