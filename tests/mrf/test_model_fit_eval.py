import math

import numpy as np
import pytest

from privgraph.data.domain import Domain, Kind
from privgraph.mrf import evaluation
from privgraph.mrf.evaluation import kl_divergence, log_likelihood
from privgraph.mrf.fit import fit_mle
from privgraph.mrf.inference import infer, log_joint
from privgraph.mrf.model import MarkovRandomField, check_cliques
from privgraph.mrf.sampling import gibbs_sample, sample_model
from privgraph.mrf.synthetic import erdos_renyi, third_order_chain

from .cases import small_models

CASES = small_models()


def _joint_frequencies(codes, domain):
    flat = np.ravel_multi_index(codes.T, domain.shape)
    return np.bincount(flat, minlength=domain.cells()).reshape(domain.shape) / len(codes)


@pytest.mark.parametrize("name,model", CASES[:6], ids=[c[0] for c in CASES[:6]])
def test_exact_sampler_matches_joint(name, model):
    n = 40_000
    codes = sample_model(model, n, rng=np.random.default_rng(1))
    p = np.exp(log_joint(model))
    # Hoeffding per cell with a union bound over cells: fails w.p. <= 1e-6
    tol = math.sqrt(math.log(2 * p.size / 1e-6) / (2 * n))
    assert np.abs(_joint_frequencies(codes, model.domain) - p).max() <= tol


def test_gibbs_sampler_matches_joint_approximately():
    name, model = CASES[1]  # the cycle
    n = 20_000
    codes = gibbs_sample(model, n, rng=np.random.default_rng(2), sweeps=30)
    p = np.exp(log_joint(model))
    tol = math.sqrt(math.log(2 * p.size / 1e-6) / (2 * n)) + 0.01  # + mixing error allowance
    assert np.abs(_joint_frequencies(codes, model.domain) - p).max() <= tol


@pytest.mark.parametrize("name,model", CASES, ids=[c[0] for c in CASES])
def test_mle_on_model_marginals_recovers_the_model(name, model):
    fitted = fit_mle(model.domain, model.cliques, infer(model).marginals)
    assert kl_divergence(model, fitted) < 1e-8


def test_tied_mle_matches_average_marginals():
    d = Domain(tuple(f"t{i}" for i in range(5)), (3,) * 5)
    cliques = [(f"t{i}", f"t{i + 1}") for i in range(4)] + [("t0",)]
    rng = np.random.default_rng(3)
    pair, node = rng.normal(size=(3, 3)), rng.normal(size=3)
    true = MarkovRandomField.of(d, cliques, [pair] * 4 + [node])
    m = infer(true).marginals
    target = [sum(m[:4]) / 4, m[4]]
    fitted = fit_mle(d, cliques, target, ties=[0, 0, 0, 0, 1])
    assert kl_divergence(true, fitted) < 1e-8
    np.testing.assert_allclose(fitted.potentials[0], fitted.potentials[3])


def test_ridge_gives_finite_fit_outside_the_polytope():
    d = Domain.of(a=2, b=2, c=2)
    bad = [np.array([[0.5, 0.0], [0.0, 0.5]]), np.array([[0.0, 0.5], [0.5, 0.0]]), np.array([[0.5, 0.0], [0.0, 0.5]])]
    m = fit_mle(d, ["a,b", "b,c", "a,c"], bad, ridge=1e-2)
    assert all(np.isfinite(p).all() for p in m.potentials)


@pytest.mark.parametrize("name,model", CASES[6:], ids=[c[0] for c in CASES[6:]])
def test_kl_through_junction_tree_equals_enumeration(name, model, monkeypatch):
    other = MarkovRandomField.of(model.domain, model.cliques[::2], [p * 0.5 for p in model.potentials[::2]])
    want = kl_divergence(model, other)
    monkeypatch.setattr(evaluation, "MAX_ENUMERATED_CELLS", 0)
    assert kl_divergence(model, other) == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert want > 0
    assert kl_divergence(model, model) == pytest.approx(0, abs=1e-10)


def test_log_likelihood_of_samples_approaches_negative_entropy():
    model = third_order_chain(6, rng=np.random.default_rng(4))
    n = 50_000
    codes = sample_model(model, n, rng=np.random.default_rng(5))
    lp = log_joint(model)
    p = np.exp(lp)
    entropy = -float(np.sum(p * lp))
    sd = math.sqrt(float(np.sum(p * lp**2)) - entropy**2)
    assert abs(log_likelihood(model, codes) + entropy) <= 5.5 * sd / math.sqrt(n)  # ~1e-7 normal tail


def test_synthetic_models_have_the_texts_structure():
    chain = third_order_chain(10, rng=np.random.default_rng(0))
    assert sorted(chain.cliques) == sorted((f"x{i}", f"x{j}") for i in range(10) for j in range(i + 1, min(i + 4, 10)))
    for f in chain.factors:
        assert np.exp(f.values).sum() == pytest.approx(1.0)
    for seed in range(5):
        er = erdos_renyi(10, rng=np.random.default_rng(seed))
        assert {v for c in er.cliques for v in c} == set(er.domain.names)


def test_bad_cliques_are_named():
    d = Domain(("a", "b", "z"), (2, 3, 0), (Kind.CATEGORICAL, Kind.CATEGORICAL, Kind.CONTINUOUS))
    with pytest.raises(KeyError, match=r"\['q'\] not in the domain"):
        check_cliques(d, [("a", "q")])
    with pytest.raises(ValueError, match="empty"):
        check_cliques(d, [])
    with pytest.raises(ValueError, match="continuous columns \\['z'\\] with no public bins: give each one \"bins\""):
        check_cliques(d, [("a", "z")])
    from privgraph.data import make_bins

    binned = Domain(d.names, (2, 3, 4), d.kinds, bins=(None, None, make_bins((0.0, 1.0), 4)))
    assert check_cliques(binned, [("a", "z")]) == (("a", "z"),)  # a binned column is a clique variable
    big = Domain.of(**{f"v{i}": 100 for i in range(5)})
    with pytest.raises(ValueError, match="10,000,000,000 cells"):
        check_cliques(big, [tuple(big.names)])
