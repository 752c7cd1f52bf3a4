"""AIM's adaptive rounds (privgraph.release.adaptive): the filter spends its rho and no more,
the annealing is AIM's, measured pairs are combined by inverse variance, and the release's
ledger holds the one filter charge the plan reserved."""

import math

import numpy as np
import pytest

from privgraph.data import Domain, NumpyEngine
from privgraph.mrf.cgm import cgm_em
from privgraph.mrf.noisy_tables import release_tables
from privgraph.privacy import Neighbours, SeededSampler
from privgraph.release import PrivateRelease
from privgraph.release.adaptive import AdaptivePlan, _Measured, adaptive_rounds, round_price
from privgraph.release.tree import ADAPTIVE_SHARE, plan_tree

AR = Neighbours.ADD_REMOVE


def _chain(n=20_000, seed=0):
    """Codes of a 4-column chain a -> b -> c -> e (3 levels each) and its domain."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.8, a, rng.integers(0, 3, n))
    c = np.where(rng.random(n) < 0.7, b, rng.integers(0, 3, n))
    e = np.where(rng.random(n) < 0.6, c, rng.integers(0, 3, n))
    return np.column_stack([a, b, c, e]), Domain.of(a=3, b=3, c=3, e=3)


def _start(codes, domain):
    """The one-way tables released as the tree would (Gaussian), and every pair's true counts."""
    engine = NumpyEngine(domain, codes)
    ones = [(v,) for v in domain.names]
    tables, _ = release_tables([engine.counts(list(c)) for c in ones], domain=domain, cliques=ones, epsilon=1.0,
                               neighbours=AR, sampler=SeededSampler(1), noise="gaussian", delta=1e-6)
    pairs = [(a, b) for i, a in enumerate(domain.names) for b in domain.names[i + 1:]]
    return tables, {p: engine.counts(list(p)) for p in pairs}


@pytest.mark.parametrize("rho, rounds", [(0.02, 8), (0.5, 64), (1e-4, 2)])
def test_the_filter_spends_its_rho_exactly_and_no_more(rho, rounds):
    codes, domain = _chain()
    tables, counted = _start(codes, domain)
    plan = AdaptivePlan(rho, rounds, AR)
    noisy, done = adaptive_rounds(tables, counted, plan, delta=1e-6, sampler=SeededSampler(2),
                                  rng=np.random.default_rng(0), tree_cap=10_000, records=None)
    assert done.spent <= rho and done.spent == pytest.approx(rho, rel=1e-9)
    assert 1 <= done.rounds <= rounds + 1 and len(done.pairs) == done.rounds  # every round fits the cap here
    # each annealing quadruples a round's price, so the rounds are at most what the first price allows
    assert done.annealed <= done.rounds
    assert set(done.pairs) <= set(counted) and set(noisy.cliques) == {(v,) for v in "abce"} | set(done.pairs)


def test_the_rounds_stop_at_the_public_cap_and_spend_all_that_is_left(monkeypatch):
    """Much budget, priced as many rounds: without the cap the rounds run long; with it the
    MAX_ROUNDS-th round is the last and spends what is left, so the filter still spends rho."""
    import privgraph.release.adaptive as adaptive

    codes, domain = _chain()
    tables, counted = _start(codes, domain)
    run = lambda: adaptive_rounds(tables, counted, AdaptivePlan(2.0, 64, AR), delta=1e-6,  # noqa: E731
                                  sampler=SeededSampler(2), rng=np.random.default_rng(0), tree_cap=10_000,
                                  records=None)
    _, free = run()
    monkeypatch.setattr(adaptive, "MAX_ROUNDS", 5)
    _, capped = run()
    assert free.rounds > 5 and capped.rounds == 5
    assert capped.spent <= 2.0 and capped.spent == pytest.approx(2.0, rel=1e-9)
    assert capped.pairs == free.pairs[:4] + capped.pairs[4:]  # the rounds before the cap are the same draws


def test_a_strong_pair_is_measured_and_the_model_follows_it():
    """With ample budget the first pair measured is the strongest dependence the one-way model
    misses (a, b: 80% copies), and the fitted model's (a, b) table is close to the truth."""
    codes, domain = _chain(50_000)
    tables, counted = _start(codes, domain)
    noisy, done = adaptive_rounds(tables, counted, AdaptivePlan(1.0, 16, AR), delta=1e-6, sampler=SeededSampler(3),
                                  rng=np.random.default_rng(0), tree_cap=10_000, records=None)
    assert done.pairs[0] in {("a", "b"), ("b", "c")}
    model = cgm_em(noisy, max_cells=10_000)
    from privgraph.mrf.inference import infer

    p_ab = infer(model).marginals[model.cliques.index(("a", "b"))] if ("a", "b") in model.cliques else None
    assert p_ab is not None and np.abs(p_ab - counted[("a", "b")] / 50_000).sum() < 0.02


def test_a_pair_measured_again_is_combined_by_inverse_variance():
    domain = Domain.of(a=2, b=2)
    tables, _ = release_tables([np.array([5.0, 5.0])], domain=domain, cliques=[("a",)], epsilon=1.0, neighbours=AR,
                               sampler=SeededSampler(0), noise="gaussian", delta=1e-6)
    m = _Measured(tables, records=None)
    m.add((("a", "b"), None), np.full((2, 2), 10.0), 2.0)
    m.add((("a", "b"), None), np.full((2, 2), 20.0), 1.0)
    table, sigma = m.tables[(("a", "b"), None)]
    assert np.allclose(table, (10 / 4 + 20 / 1) / (1 / 4 + 1)) and sigma == pytest.approx((1 / 4 + 1) ** -0.5)
    assert m.noisy().group_scales[-1] == pytest.approx(sigma)


def test_round_price_is_aims_split():
    measure, select = round_price(0.3, 30)
    assert measure == pytest.approx(0.9 * 0.01) and select**2 / 8 == pytest.approx(0.1 * 0.01)


def test_the_release_charges_the_filter_once_as_planned():
    codes, domain = _chain(5_000)
    rel = PrivateRelease(epsilon=1.0, structure="tree", random_state=5).fit(NumpyEngine(domain, codes))
    filters = [c for c in rel.ledger_ if c.mechanism == "adaptive rounds (zCDP filter)"]
    plan = plan_tree(domain, None, epsilon=1.0, delta=1e-6, neighbours="add_remove")
    assert len(filters) == 1 and filters[0].curve.as_tuple() == ("zcdp", plan.adaptive.rho)
    assert plan.adaptive.rho == pytest.approx(ADAPTIVE_SHARE * plan.rho)
    assert rel.structure_.adaptive.spent == pytest.approx(plan.adaptive.rho, rel=1e-9)
    assert rel.ledger_.total("rdp", 1e-6).epsilon <= 1.0
    pure = PrivateRelease(epsilon=1.0, delta=0.0, structure="tree", random_state=5).fit(NumpyEngine(domain, codes))
    assert pure.structure_.adaptive is None  # pure DP keeps a fixed plan: no filter
    assert not any("filter" in c.mechanism for c in pure.ledger_)


def test_cgm_em_warm_start_reaches_the_same_fit():
    codes, domain = _chain(20_000)
    engine = NumpyEngine(domain, codes)
    cliques = [("a", "b"), ("b", "c")]
    noisy, _ = release_tables([engine.counts(list(c)) for c in cliques], domain=domain, cliques=cliques, epsilon=2.0,
                              neighbours=AR, sampler=SeededSampler(0), noise="gaussian", delta=1e-6)
    cold = cgm_em(noisy)
    warm = cgm_em(noisy, start=cold.potentials)
    from privgraph.mrf.inference import infer

    for x, y in zip(infer(cold).marginals, infer(warm).marginals):
        assert np.abs(x - y).sum() < 0.01
    assert math.isfinite(float(np.sum(warm.potentials[0])))


def _wide(n=20_000, seed=0):
    """Codes of a 20-level ordered column a, a binary b that mostly tells a's halves apart,
    and c, 70% copies of b (a wide ordered column, so the rounds offer (a, .) in bins)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 20, n)
    b = (a >= 10).astype(int) ^ (rng.random(n) < 0.2)
    c = np.where(rng.random(n) < 0.7, b, rng.integers(0, 2, n))
    return np.column_stack([a, b, c]), Domain.of(a=20, b=2, c=2)


@pytest.mark.parametrize("table, ordered", [(_chain, ()), (_wide, {"a"})])
def test_the_mechanisms_the_rounds_call_add_up_to_the_filter_charge(monkeypatch, table, ordered):
    """The rhos the Gaussian measurements are drawn at and the epsilons the selections run at
    (as zCDP, epsilon^2 / 8) add up to the one charge the ledger holds: a round that drew
    less noise than it counted (say half the sigma, four times the rho) would exceed it. With
    a wide ordered column some rounds measure tables in bins: the same call, at the same rho
    and the same L2 sensitivity, on the binned table's fewer cells."""
    import privgraph.release.adaptive as adaptive

    calls, measured_sizes = [], []
    measure, select = adaptive.zcdp_gaussian_vector, adaptive.exponential_mechanism

    def measured(values, *, rho, sensitivity, **kw):
        calls.append(rho)
        measured_sizes.append(np.asarray(values).size)
        assert sensitivity == 1.0  # one record moves one cell of a table, binned or not (add/remove)
        return measure(values, rho=rho, sensitivity=sensitivity, **kw)

    def selected(scores, *, epsilon, **kw):
        calls.append(epsilon**2 / 8)
        return select(scores, epsilon=epsilon, **kw)

    monkeypatch.setattr(adaptive, "zcdp_gaussian_vector", measured)
    monkeypatch.setattr(adaptive, "exponential_mechanism", selected)
    codes, domain = table()
    tables, counted = _start(codes, domain)
    plan = AdaptivePlan(0.05, 16, AR)
    noisy, done = adaptive_rounds(tables, counted, plan, delta=1e-6, sampler=SeededSampler(4),
                                  rng=np.random.default_rng(0), tree_cap=10_000, records=None, ordered=ordered)
    assert len(calls) == 2 * done.rounds and sum(calls) <= plan.rho
    assert sum(calls) == pytest.approx(plan.rho, rel=1e-9) and done.annealed >= 1
    binned = [b is not None for b in done.bins]
    assert any(binned) == bool(ordered)  # the wide case does measure tables in bins
    # each measured table's recorded noise is the sigma its rho gives on its own cells (what the fit weighs it by)
    rhos = calls[1::2]
    keys = list(zip(done.pairs, done.bins))
    for key, rho, size in zip(keys, rhos, measured_sizes):
        bins = key[1] or (None,) * len(key[0])
        assert size == math.prod(domain.size_of(v) if b is None else len(set(b)) for v, b in zip(key[0], bins))
        if keys.count(key) == 1:
            sigma = adaptive.zcdp_gaussian_scale(rho, 1.0, size)[0]
            assert noisy.group_scales[_group_of(noisy, key)] == pytest.approx(sigma)


def _group_of(noisy, key):
    """The group of ``noisy`` that holds ``key``'s (clique, bins) table."""
    clique, bins = key
    for i, (c, g) in enumerate(zip(noisy.cliques, noisy.ties)):
        if c == clique and noisy.group_bins(g) == bins:
            return g
    raise AssertionError(f"{key} not among the released tables")


def test_refits_are_focused_exactly_where_the_rounds_offer_tables_in_bins(monkeypatch):
    """A binned table has few cells, so each round's refit also fits the new table
    (``cgm_em(focus=...)``) wherever the rounds offer bins (an ordered column of more than
    COARSE_ABOVE codes); elsewhere ROUND_FOCUS (off) decides. Public either way: the codebook
    and the released one-way tables."""
    import privgraph.release.adaptive as adaptive

    codes, domain = _wide()
    tables, counted = _start(codes, domain)
    focus_seen = []
    fit = adaptive.cgm_em

    def recorded(noisy, **kw):
        if "start" in kw:  # a round's refit
            focus_seen.append("focus" in kw)
        return fit(noisy, **kw)

    monkeypatch.setattr(adaptive, "cgm_em", recorded)
    for ordered, expect in [((), False), ({"a"}, True)]:
        focus_seen.clear()
        adaptive_rounds(tables, counted, AdaptivePlan(0.5, 8, AR), delta=1e-6, sampler=SeededSampler(4),
                        rng=np.random.default_rng(0), tree_cap=10_000, records=None, ordered=ordered)
        assert focus_seen and set(focus_seen) == {expect}


def _xor(n, seed):
    """a, b fair coins and c = a XOR b: every pair independent, the triple determined."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    return np.column_stack([a, b, a ^ b]), Domain.of(a=2, b=2, c=2)


def test_a_triple_no_pair_shows_is_measured_with_the_noise_its_scale_states(monkeypatch):
    """c = a XOR b: no pair depends, so only the rounds' triple (release.model_size.workload_triples)
    holds the relation; it is measured and the synthetic rows follow it. Each measurement of the
    triple (recorded where the rounds call the mechanism: the selection came first, so its noise
    is not selected on) minus the true counts, over the sigma of its rho and sensitivity, is
    standard Gaussian: over 25 seeds the sum of squares lies within chi-square's 1e-6 quantiles
    (with the noise halved it would be about a quarter: below the lower one)."""
    from scipy.stats import chi2

    import privgraph.release.adaptive as adaptive
    from privgraph.privacy.zcdp import zcdp_gaussian_scale

    drawn = []

    def recorded(counts, **kw):
        noisy, charge = real(counts, **kw)
        if np.ndim(counts) == 3:
            sigma = zcdp_gaussian_scale(kw["rho"], kw["sensitivity"], np.size(counts))[0]
            drawn.append(np.ravel(np.asarray(noisy) - np.ravel(counts)) / sigma)
        return noisy, charge

    real = adaptive.zcdp_gaussian_vector
    monkeypatch.setattr(adaptive, "zcdp_gaussian_vector", recorded)
    for seed in range(25):
        codes, domain = _xor(4_000, seed)
        rel = PrivateRelease(epsilon=2.0, structure="tree", random_state=seed).fit(NumpyEngine(domain, codes))
        assert ("a", "b", "c") in rel.structure_.adaptive.pairs
    z = np.concatenate(drawn)
    assert chi2.ppf(1e-6, z.size) <= float(np.sum(z**2)) <= chi2.isf(1e-6, z.size)
    rows = rel.sample(2_000, random_state=0)
    assert np.mean(rows["c"].astype(int) == (rows["a"].astype(int) ^ rows["b"].astype(int))) > 0.9
