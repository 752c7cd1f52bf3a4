import math

import numpy as np
import pytest

from privgraph.data.domain import Domain
from privgraph.mrf import cgm
from privgraph.mrf.baselines import naive_mle, nonprivate_mle, random_estimator
from privgraph.mrf.cgm import cgm_em, dual_e_step, expected_tables
from privgraph.mrf.evaluation import kl_divergence
from privgraph.mrf.fit import fit_mle
from privgraph.mrf.inference import infer
from privgraph.data import NumpyEngine, count_tables
from privgraph.mrf.noisy_tables import estimate_records, release_tables
from privgraph.mrf.sampling import sample_model
from privgraph.mrf.synthetic import third_order_chain
from privgraph.privacy import Budget, BudgetExceeded, Neighbours, SeededSampler


@pytest.fixture(scope="module")
def population():
    rng = np.random.default_rng(0)
    model = third_order_chain(6, rng=rng)
    codes = sample_model(model, 20_000, rng=rng)
    return model, codes, count_tables(NumpyEngine(model.domain, codes), model.cliques)


def _release(population, epsilon, seed=1, **kw):
    model, codes, counts = population
    return release_tables(counts, domain=model.domain, cliques=model.cliques, epsilon=epsilon,
                          neighbours=kw.pop("neighbours", Neighbours.ADD_REMOVE), sampler=SeededSampler(seed), **kw)


def test_laplace_release_charges_number_of_cliques(population):
    noisy, ledger = _release(population, 0.5)
    (charge,) = ledger.charges
    assert charge.sensitivity == len(population[0].cliques)
    assert ledger.total().epsilon == pytest.approx(0.5)
    assert noisy.scale == pytest.approx(len(population[0].cliques) / 0.5, rel=1e-3)
    noisy2, ledger2 = _release(population, 0.5, neighbours=Neighbours.REPLACE_ONE, records=20_000)
    assert ledger2.charges[0].sensitivity == 2 * len(population[0].cliques)
    assert noisy2.records == 20_000


def test_records_estimate_within_laplace_tail_bound(population):
    noisy, _ = _release(population, 1.0)
    cells = sum(t.size for t in noisy.tables)
    sd = noisy.scale * math.sqrt(2 * cells) / len(noisy.tables)  # sd of the mean of the totals
    assert abs(noisy.records - 20_000) <= 6 * sd  # sub-exponential tail, well below 1e-6


def test_gaussian_release_has_delta(population):
    noisy, ledger = _release(population, 1.0, noise="gaussian", delta=1e-6)
    assert noisy.noise == "gaussian" and ledger.total().delta == pytest.approx(1e-6)


def test_bad_input_spends_nothing(population):
    model, _, counts = population
    budget = Budget(1.0)
    with pytest.raises(KeyError):
        release_tables(counts, domain=model.domain, cliques=[("x0", "nope")] * len(counts), epsilon=1.0,
                       neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(0), budget=budget)
    with pytest.raises(ValueError, match="empty"):
        release_tables([], domain=model.domain, cliques=[], epsilon=1.0,
                       neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(0), budget=budget)
    assert budget.spent().epsilon == 0
    release_tables(counts, domain=model.domain, cliques=model.cliques, epsilon=1.0,
                   neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(0), budget=budget)
    with pytest.raises(BudgetExceeded):
        release_tables(counts, domain=model.domain, cliques=model.cliques, epsilon=0.5,
                       neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(0), budget=budget)


def test_m_step_is_the_e_step_potentials(population):
    """The closed-form M-step: MLE of the E-step's counts is theta + g*."""
    noisy, _ = _release(population, 1.0)
    theta = [np.zeros(t.shape) for t in noisy.tables]
    step, _ = dual_e_step(noisy, theta)
    n = expected_tables(noisy, step)
    refit = fit_mle(noisy.domain, noisy.cliques, [t / noisy.records for t in n])
    for got, want in zip(infer(refit).marginals, n):
        np.testing.assert_allclose(got * noisy.records, want, atol=1e-3)


def test_em_beats_naive_and_approaches_nonprivate_at_large_epsilon(population):
    model, _, counts = population
    noisy, _ = _release(population, 1.0)
    kl_em, kl_naive = kl_divergence(model, cgm_em(noisy)), kl_divergence(model, naive_mle(noisy))
    kl_np = kl_divergence(model, nonprivate_mle(model.domain, model.cliques, counts))
    kl_rand = kl_divergence(model, random_estimator(model.domain, model.cliques, rng=np.random.default_rng(99)))
    assert kl_np < kl_em < kl_rand
    assert kl_em < kl_naive * 1.5  # the text's claim, with room for one draw
    big, _ = _release(population, 1e4)
    assert kl_divergence(model, cgm_em(big)) < 2 * kl_np + 1e-4


def test_stopping_rule_caps_iterations(population, monkeypatch):
    noisy, _ = _release(population, 1.0)
    calls = []
    monkeypatch.setattr(cgm, "dual_e_step", lambda *a, **k: calls.append(1) or dual_e_step(*a, **k))
    cgm_em(noisy, discrepancy=0.0, max_iter=3)
    assert len(calls) == 3


def test_estimate_records_weights_by_cells():
    assert estimate_records([np.full(4, 2.5), np.full(2, 5.0)]) == pytest.approx(10.0)


def test_em_runs_on_loopy_bp_when_the_tree_is_too_large():
    d = Domain.of(a=2, b=2, c=2)
    cliques = [("a", "b"), ("b", "c"), ("a", "c")]
    rng = np.random.default_rng(7)
    from privgraph.mrf.model import MarkovRandomField

    true = MarkovRandomField.of(d, cliques, [rng.normal(0, 0.5, (2, 2)) for _ in cliques])
    counts = [20_000 * m for m in infer(true).marginals]
    noisy, _ = release_tables(counts, domain=d, cliques=cliques, epsilon=5.0,
                              neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(3))
    loopy = cgm_em(noisy, max_cells=1, max_iter=40)
    assert kl_divergence(true, loopy) < 0.02  # Bethe error on a weakly coupled triangle


def test_overrelaxed_and_plain_em_agree_in_quality(population):
    model, _, _ = population
    noisy, _ = _release(population, 1.0)
    fast, plain = cgm_em(noisy), cgm_em(noisy, overrelax=False)
    kl_fast, kl_plain = kl_divergence(model, fast), kl_divergence(model, plain)
    assert kl_fast < 2 * kl_plain + 1e-3


def test_gaussian_em_and_nlbp_e_step_run(population):
    model, _, counts = population
    noisy, _ = _release(population, 50.0, noise="gaussian", delta=1e-6)
    kl_np = kl_divergence(model, nonprivate_mle(model.domain, model.cliques, counts))
    assert kl_divergence(model, cgm_em(noisy)) < 3 * kl_np + 1e-3
    laplace, _ = _release(population, 1.0)
    from privgraph.mrf.cgm import nlbp_e_step

    assert np.isfinite(kl_divergence(model, cgm_em(laplace, e_step=nlbp_e_step, max_iter=20)))
