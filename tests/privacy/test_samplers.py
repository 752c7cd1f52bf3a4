import math

import numpy as np
import pytest

from privgraph.privacy import SecureSampler, SeededSampler
from tests.privacy.bounds import hoeffding, ks_two_sample

SAMPLERS = [lambda: SeededSampler(11), SecureSampler]


def _dlap_pmf0(scale):
    a = math.exp(-1 / scale)
    return (1 - a) / (1 + a)


@pytest.mark.parametrize("make", SAMPLERS)
@pytest.mark.parametrize("scale", [0.3, 2.0, 1e4])
def test_discrete_laplace_mass_at_zero_and_sign(make, scale):
    n = 200_000
    z = make().discrete_laplace(scale, size=n)
    tol = hoeffding(n, events=2)
    assert abs(np.mean(z == 0) - _dlap_pmf0(scale)) <= tol
    assert abs(np.mean(z > 0) - (1 - _dlap_pmf0(scale)) / 2) <= tol


@pytest.mark.parametrize("make", SAMPLERS)
def test_discrete_laplace_tail(make):
    # P(|Z| >= k) = 2 a^k / (1 + a) for the discrete Laplace with a = exp(-1/scale)
    n, scale, k = 200_000, 50.0, 120
    z = make().discrete_laplace(scale, size=n)
    a = math.exp(-1 / scale)
    assert abs(np.mean(np.abs(z) >= k) - 2 * a**k / (1 + a)) <= hoeffding(n)


def test_exponential_tails_both_ways():
    n = 400_000
    e = SeededSampler(5).exponential(n)
    tol = hoeffding(n, events=3)
    assert abs(np.mean(e >= 3.0) - math.exp(-3.0)) <= tol
    assert abs(np.mean(e < 0.01) - (1 - math.exp(-0.01))) <= tol
    assert abs(np.mean(e >= 0.7) - math.exp(-0.7)) <= tol


def test_exponential_resolves_tiny_values():
    # E < 1e-9 has probability ~1e-9: a 53-bit uniform inversion could never produce it
    # more finely than 2**-53; the relative-precision construction spreads values below it.
    e = SeededSampler(6).exponential(1_000_000)
    assert e.min() > 0
    assert len(np.unique(e)) == e.size


@pytest.mark.parametrize("make", SAMPLERS)
def test_discrete_gaussian_moments(make):
    n, sigma = 200_000, 7.5
    z = make().discrete_gaussian(sigma, size=n)
    tol = hoeffding(n, events=2)
    assert abs(np.mean(z > 0) - np.mean(z < 0)) <= 2 * tol
    # P(|Z| <= sigma) for the discrete Gaussian, computed exactly by summation
    k = np.arange(-200, 201)
    w = np.exp(-(k**2) / (2 * sigma**2))
    assert abs(np.mean(np.abs(z) <= sigma) - w[np.abs(k) <= sigma].sum() / w.sum()) <= tol


def test_secure_sampler_cannot_be_seeded_and_is_fresh():
    with pytest.raises(TypeError, match="cannot be seeded"):
        SecureSampler(seed=3)
    a = SecureSampler().discrete_laplace(1e6, size=8)
    b = SecureSampler().discrete_laplace(1e6, size=8)
    assert not np.array_equal(a, b)
    assert SecureSampler().is_secure and not SeededSampler(1).is_secure


def test_seeded_sampler_reproducible_and_checks_seed():
    assert np.array_equal(SeededSampler(9).discrete_gaussian(3.0, 10), SeededSampler(9).discrete_gaussian(3.0, 10))
    with pytest.raises(ValueError, match="seed"):
        SeededSampler("x")


# --- against OpenDP's exact samplers (the reference) -----------------------------------

dp = pytest.importorskip("opendp.prelude")
dp.enable_features("contrib")


def _ks(a, b):
    grid = np.union1d(a, b)
    ca = np.searchsorted(np.sort(a), grid, side="right") / a.size
    cb = np.searchsorted(np.sort(b), grid, side="right") / b.size
    return np.max(np.abs(ca - cb))


def _opendp_reference(kind: str, scale: float):
    if kind == "laplace":
        return dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=scale)
    return dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=scale)


@pytest.mark.parametrize("make", SAMPLERS)
@pytest.mark.parametrize("kind,scale", [("laplace", 3.0), ("gaussian", 4.0)])
def test_discrete_noise_matches_opendp(make, kind, scale):
    n, m = 40_000, 200_000
    theirs = np.array(_opendp_reference(kind, scale)([0] * n))
    ours = getattr(make(), f"discrete_{kind}")(scale, size=m)
    assert _ks(theirs, ours) <= ks_two_sample(n, m)


def test_float_laplace_matches_opendp():
    n, m = 40_000, 200_000
    ref = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=1.0)
    theirs = np.array(ref([0.0] * n))
    ours = SeededSampler(2).laplace_on_grid(1.0, 2.0**-12, m)
    assert _ks(theirs, ours) <= ks_two_sample(n, m)
