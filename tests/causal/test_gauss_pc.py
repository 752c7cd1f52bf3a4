"""Gauss-PC: the level-0 vector's L2 sensitivity (brute force, boundary, random neighbours),
accounting through the one ledger, limits, refusals."""

import itertools
import math

import numpy as np
import pytest

from privgraph.causal import BudgetTooSmall, PrivPC, Tables, make_margin
from privgraph.causal.gauss_pc import GaussPlan, gauss_pc_skeleton
from privgraph.causal.margins import RankMargin, kendall_pair_margins, kendall_pairs_l2_sensitivity
from privgraph.data import Domain, NumpyEngine
from privgraph.datasets import load_network, sample, sample_frame
from privgraph.privacy import Budget, SeededSampler
from privgraph.privacy.zcdp import rho_for_budget, zcdp_epsilon, zcdp_gaussian_vector
from privgraph.stats import KendallTest


def vector(codes, levels):
    """Every pair's plain margin and every column's h for codes over ``levels`` per column."""
    d = codes.shape[1]
    names = [f"c{i}" for i in range(d)]
    tables = Tables.from_engine(NumpyEngine(Domain.of(**{n: levels for n in names}), codes))
    pairs = list(itertools.combinations(names, 2))
    plain, h, _ = kendall_pair_margins(tables, make_margin(KendallTest(), 0.05), pairs)
    return plain, h


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_sign_pattern_bound_is_the_maximum_over_all_patterns(d):
    """max over a, b in {-1,0,1}^d of sum_{x<y} (a_x a_y - b_x b_y)^2 is 4 floor(d/2) ceil(d/2)."""
    signs = np.array(list(itertools.product((-1, 0, 1), repeat=d)))
    iu = np.triu_indices(d, 1)
    prods = (signs[:, :, None] * signs[:, None, :])[:, iu[0], iu[1]]  # (3^d, pairs)
    best = max(int(((prods - p) ** 2).sum(axis=1).max()) for p in prods)
    assert best == 4 * (d // 2) * ((d + 1) // 2)
    assert 4 * kendall_pairs_l2_sensitivity(d, with_degeneracy=False) ** 2 == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("d", [4, 5, 6])
def test_boundary_neighbours_attain_the_plain_bound(d):
    """Other rows on two diagonal points inside every range; r above all of them in every
    column; r' above in half the columns, below in the rest: the bound is attained."""
    k1, k2 = 6, 7
    others = np.array([[1] * d] * k1 + [[2] * d] * k2)
    r = np.array([3] * d)
    r2 = np.array([3] * (d // 2) + [0] * (d - d // 2))
    (p1, h1), (p2, h2) = vector(np.vstack([others, r]), 4), vector(np.vstack([others, r2]), 4)
    assert np.array_equal(h1, h2)  # the modes do not move here
    assert np.linalg.norm(p1 - p2) == pytest.approx(kendall_pairs_l2_sensitivity(d, with_degeneracy=False), rel=1e-9)


def test_boundary_neighbours_move_every_degeneracy_count():
    """A row moved off every column's mode moves each h_x by 1: the d extra squares are needed."""
    d = 5
    codes = np.zeros((30, d), dtype=int)
    codes[:10] = 1
    moved = codes.copy()
    moved[-1] = 1  # from the mode (0) to the other value in every column
    (p1, h1), (p2, h2) = vector(codes, 2), vector(moved, 2)
    assert np.abs(h1 - h2).tolist() == [1.0] * d
    total = math.sqrt(np.sum((p1 - p2) ** 2) + np.sum((h1 - h2) ** 2))
    assert total <= kendall_pairs_l2_sensitivity(d, with_degeneracy=True) + 1e-9


def test_random_neighbours_stay_within_the_bound():
    rng = np.random.default_rng(0)
    bound = kendall_pairs_l2_sensitivity(5, with_degeneracy=True)
    worst = 0.0
    for _ in range(150):
        levels = int(rng.integers(2, 5))
        codes = rng.integers(0, levels, size=(int(rng.integers(4, 30)), 5))
        if rng.random() < 0.5:  # concentrated data, near the extremes
            codes[: codes.shape[0] // 2] = rng.integers(0, levels)
        moved = codes.copy()
        moved[rng.integers(codes.shape[0])] = rng.integers(0, levels, size=5)
        (p1, h1), (p2, h2) = vector(codes, levels), vector(moved, levels)
        worst = max(worst, math.sqrt(np.sum((p1 - p2) ** 2) + np.sum((h1 - h2) ** 2)))
    assert worst <= bound + 1e-9


def test_rho_conversion_agrees_with_dp_accounting_and_cks():
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    rho = rho_for_budget(1.0, 1e-6)
    acc = RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.ZCDpEvent(rho))
    assert acc.get_epsilon(1e-6) <= 1.0 + 1e-3  # dp_accounting's own orders
    assert zcdp_epsilon(rho, 1e-6) == pytest.approx(1.0, abs=1e-3)  # CKS Corollary 13, computed here


def test_gaussian_vector_noise_has_the_stated_scale():
    from privgraph.privacy.zcdp import zcdp_gaussian_scale

    n, rho, sens = 40_000, 0.02, 3.0
    out = zcdp_gaussian_vector(np.zeros(n), rho=rho, delta=1e-6, sensitivity=sens,
                               neighbours="replace_one", sampler=SeededSampler(5)).value
    sigma = zcdp_gaussian_scale(rho, sens, n)[0]
    assert sigma >= sens / math.sqrt(2 * rho)
    # sample variance of n normals: relative sd sqrt(2/n) = 0.7 %; 6 sd
    assert np.var(out) / sigma**2 == pytest.approx(1.0, abs=6 * math.sqrt(2 / n))


@pytest.fixture(scope="module")
def asia():
    return sample_frame(load_network("asia"), 100_000, np.random.default_rng(0))


def test_ledger_total_is_the_budget_and_the_plan_is_the_fit(asia):
    est = PrivPC(epsilon=1.0, delta=1e-6, method="gauss-pc", random_state=1).fit(asia)
    assert est.composition_ == "rdp" and est.epsilon_spent_ <= 1.0
    assert est.epsilon_spent_ == pytest.approx(1.0, rel=1e-6)
    assert {c.neighbours.value for c in est.ledger_} == {"replace_one"}
    plan = PrivPC(epsilon=1.0, delta=1e-6, method="gauss-pc").privacy_plan(load_network("asia").domain, 100_000)
    assert plan.charges == est.ledger_.charges


@pytest.mark.parametrize("name", ["asia", "cancer", "survey"])
def test_limit_at_huge_epsilon_is_non_private_kendall_pc(name):
    X = sample_frame(load_network(name), 50_000, np.random.default_rng(4))
    truth = {frozenset(e) for e in PrivPC(method="pc", ci_test="kendall").fit(X).skeleton_.edges}
    est = PrivPC(epsilon=1e5, method="gauss-pc", ci_test="kendall", random_state=0).fit(X)
    assert {frozenset(e) for e in est.skeleton_.edges} == truth


def test_too_small_a_budget_is_refused_before_any_spend():
    net = load_network("child")
    engine = NumpyEngine(net.domain, sample(net, 10_000, np.random.default_rng(0)))
    budget = Budget(1.0, 1e-6, composition="rdp")
    with pytest.raises(BudgetTooSmall, match="level 0"):
        PrivPC(epsilon=1.0, method="gauss-pc", random_state=0).fit(engine, budget=budget)
    assert len(budget.ledger) == 0


def test_pure_budget_is_refused(asia):
    with pytest.raises(ValueError, match="delta > 0"):
        PrivPC(epsilon=1.0, delta=0.0, method="gauss-pc").fit(asia)


def test_a_plan_whose_level_0_needs_the_whole_budget_has_level_0_only():
    """Level 0 at share 1 leaves nothing for later levels: the plan has one level (no
    zero-rho charge, which would be refused), and PC stops after it, keeping the edges it
    could not test (the skeleton says it is incomplete)."""
    plan = GaussPlan(1.0, 1e-6, levels=4, level0_share=1.0)
    assert (plan.levels, plan.requested, len(plan.charges())) == (1, 4, 1)
    net = load_network("asia")
    t = Tables.from_engine(NumpyEngine(net.domain, sample(net, 100_000, np.random.default_rng(0))))
    sk, ledger = gauss_pc_skeleton(t, RankMargin(KendallTest(), 0.05), epsilon=1.0, delta=1e-6, max_cond_size=3,
                                   sampler=SeededSampler(0), level0_share=1.0)
    assert not sk.complete and ledger.total("rdp", 1e-6).epsilon <= 1.0
    assert all(len(s) == 0 for s in sk.sepsets.values())
