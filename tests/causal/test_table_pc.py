"""Tables-PC: the tables' L2 sensitivity against brute force over every neighbour of small
datasets, the noise scale from the charge, ledger equals plan (under both relations, with levels
1-2 split at run time), the split's filter bound, limits, and ``method="auto"``. F1 is measured
by benchmarks/bench_tables_pc.py, not tested here."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, chi2

from privgraph.causal import PrivPC, Tables
from privgraph.causal.methods import AUTO_MIN_COLUMNS, resolve_method
from privgraph.causal import table_pc
from privgraph.causal.table_pc import (TablesPlan, level0_noise, noisy_independent, noisy_statistics, release_tables,
                                       tables_l2_sensitivity)
from privgraph.data import Domain, NumpyEngine
from privgraph.datasets import load_network, sample, sample_frame
from privgraph.privacy import Budget, SeededSampler
from privgraph.privacy.zcdp import zcdp_gaussian_scale


def counts(codes, sizes, column_sets):
    names = [f"c{i}" for i in range(len(sizes))]
    tables = Tables.from_engine(NumpyEngine(Domain.of(**dict(zip(names, sizes))), codes))
    return np.concatenate([tables.table([names[i] for i in s]).ravel() for s in column_sets]).astype(float)


@pytest.mark.parametrize("sizes", [(2, 2, 2), (2, 3, 2), (3, 2, 2, 2)])
def test_sensitivity_is_the_maximum_over_every_replace_one_neighbour(sizes):
    """Every dataset of 3 rows and every replacement of each row by every record: the largest
    L2 change of the concatenated tables (every pair and every triple) equals sqrt(2 T)."""
    d = len(sizes)
    column_sets = [s for k in (2, 3) for s in itertools.combinations(range(d), k)]
    records = list(itertools.product(*[range(s) for s in sizes]))
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(20):
        base = np.array([records[i] for i in rng.choice(len(records), 3)])
        before = counts(base, sizes, column_sets)
        for row, record in itertools.product(range(3), records):
            other = base.copy()
            other[row] = record
            worst = max(worst, float(np.linalg.norm(counts(other, sizes, column_sets) - before)))
    assert worst <= tables_l2_sensitivity(len(column_sets)) + 1e-12
    assert worst == pytest.approx(tables_l2_sensitivity(len(column_sets)))  # attained: a record differing everywhere


def test_noise_scale_is_the_charge_s():
    """The released noise has the variance the level's rho and sqrt(2 T) give."""
    net = load_network("asia")
    tables = Tables.from_engine(NumpyEngine(net.domain, sample(net, 1_000, np.random.default_rng(0))))
    sets = list(itertools.combinations(net.domain.names, 2))
    truth = [tables.table(s).astype(float) for s in sets]
    rho = 0.01
    noisy, sigma = release_tables(tables, sets, rho=rho, delta=1e-7, sampler=SeededSampler(3))
    assert sigma == pytest.approx(zcdp_gaussian_scale(rho, math.sqrt(2 * len(sets)), sum(t.size for t in truth))[0], rel=1e-12)
    assert sigma >= math.sqrt(2 * len(sets)) / math.sqrt(2 * rho)
    noise = np.concatenate([(a - b).ravel() for a, b in zip(noisy, truth)])
    # 112 normals: the sample variance over sigma^2 is chi-square(112)/112; 1e-6 tails at about +-0.55
    assert np.var(noise, mean=0.0) / sigma**2 == pytest.approx(1.0, abs=0.6)


@pytest.fixture(scope="module")
def child():
    net = load_network("child")
    return net, sample_frame(net, 20_000, np.random.default_rng(0))


def test_ledger_is_the_plan_and_totals_the_budget(child):
    net, X = child
    est = PrivPC(epsilon=1.0, delta=1e-6, method="tables-pc", random_state=1).fit(X)
    plan = PrivPC(epsilon=1.0, delta=1e-6, method="tables-pc").privacy_plan(net.domain, 20_000)
    assert plan.charges == est.ledger_.charges
    assert [c.mechanism for c in est.ledger_] == ["gaussian_tables"] * 2  # level 0, then levels 1-2's filter
    assert est.composition_ == "rdp" and est.epsilon_spent_ == pytest.approx(1.0, rel=1e-6)
    assert est.epsilon_spent_ <= 1.0 and {c.neighbours.value for c in est.ledger_} == {"replace_one"}


@pytest.mark.parametrize("relation", ["replace_one", "add_remove"])
def test_ledger_is_the_plan_under_the_run_time_split(child, relation):
    """Levels 1 and 2 split their charge at run time; the ledger is still the plan, under both
    relations (add/remove: the size's charge, then the replace-one plan, relabelled)."""
    net, X = child
    est = PrivPC(epsilon=1.0, delta=1e-6, method="tables-pc", neighbours=relation, random_state=2).fit(X)
    plan = PrivPC(epsilon=1.0, delta=1e-6, method="tables-pc", neighbours=relation).privacy_plan(net.domain, 20_000)
    assert plan.charges == est.ledger_.charges
    assert [c.mechanism for c in est.ledger_][-2:] == ["gaussian_tables"] * 2
    assert est.epsilon_spent_ <= 1.0 and {c.neighbours.value for c in est.ledger_} == {relation}


def _recorded_rhos(monkeypatch, X, **params):
    """The rho of each level's release in one fit (release_tables wrapped, behaviour unchanged)."""
    rhos, inner = [], table_pc.release_tables

    def recording(tables, column_sets, *, rho, delta, sampler):
        rhos.append((len(column_sets), rho))
        return inner(tables, column_sets, rho=rho, delta=delta, sampler=sampler)

    monkeypatch.setattr(table_pc, "release_tables", recording)
    PrivPC(method="tables-pc", **params).fit(X)
    return rhos


@pytest.mark.parametrize("epsilon", [1.0, pytest.param(30.0, marks=pytest.mark.slow)])  # 30: about 5 s
def test_levels_spend_at_most_the_filter_s_charge(child, monkeypatch, epsilon):
    """In a run: level 0 at its planned rho, levels 1 and 2 together at most the rest's charge,
    all of it when level 2 runs (the last level takes what is left), none of it twice."""
    _, X = child
    plan = TablesPlan(epsilon, 1e-6, levels=3)
    rhos = _recorded_rhos(monkeypatch, X, epsilon=epsilon, delta=1e-6, random_state=0)
    assert rhos[0][1] == plan.rho0 and len(rhos) >= 2
    assert len(rhos) == 3 and rhos[1][1] > 0 and rhos[2][1] > 0  # this sample reaches level 2 at both
    assert sum(r for _, r in rhos[1:]) <= plan.rest * (1 + 1e-12)
    assert sum(r for _, r in rhos[1:]) == pytest.approx(plan.rest, rel=1e-12)


def test_level_one_takes_the_whole_rest_when_level_two_would_have_no_table(monkeypatch):
    """A chain a -> b -> c: no node has the three adjacencies a level-2 test needs, so the
    count of level 2's tables is 0 after level 0 and level 1 gets all of rho_rest."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 20_000)
    b = np.where(rng.uniform(size=a.size) < 0.9, a, 1 - a)
    c = np.where(rng.uniform(size=a.size) < 0.9, b, 1 - b)
    tables = Tables.from_engine(NumpyEngine(Domain.of(a=2, b=2, c=2), np.column_stack([a, b, c])))
    rhos, inner = [], table_pc.release_tables
    monkeypatch.setattr(table_pc, "release_tables",
                        lambda t, cols, **kw: rhos.append(kw["rho"]) or inner(t, cols, **kw))
    sk, ledger = table_pc.tables_pc_skeleton(tables, alpha=0.05, epsilon=3.0, delta=1e-6, max_cond_size=2,
                                             sampler=SeededSampler(0))
    plan = TablesPlan(3.0, 1e-6, levels=3)
    assert len(rhos) == 2 and rhos == [plan.rho0, plan.rest]
    assert [c.curve.rho for c in ledger] == [plan.rho0, plan.rest]


@settings(max_examples=300, deadline=None)
@given(rest=st.floats(1e-9, 1e3), counts=st.lists(st.integers(0, 10**7), min_size=2, max_size=4),
       power=st.sampled_from([0.0, 1 / 3, 0.5, 1.0, 2.0]))
def test_split_never_exceeds_the_rest(rest, counts, power):
    """Any table counts, any exponent: each level's rho is in [0, what is left], the last level
    takes what is left, and the levels together never exceed ``rest`` (the filter's bound)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(table_pc, "SPLIT_POWER", power)
        left, spent = rest, []
        for i, asked in enumerate(counts):
            rho = table_pc.split_rest(left, asked, counts[i + 1] if i + 1 < len(counts) else 0)
            assert 0.0 <= rho <= left
            spent.append(rho)
            left -= rho
    assert sum(spent) <= rest * (1 + 1e-12) and spent[-1] == pytest.approx(rest - sum(spent[:-1]), abs=1e-12 * rest)


def test_budget_is_reserved_before_any_noise(child):
    net, X = child
    budget = Budget(0.5, 1e-6, composition="rdp")
    with pytest.raises(Exception, match="(?i)budget|exceed|remaining"):
        PrivPC(epsilon=1.0, method="tables-pc", random_state=0).fit(X, budget=budget)
    assert len(budget.ledger) == 0


def test_plan_levels_follow_max_cond_size():
    assert len(TablesPlan(1.0, 1e-6, levels=1).charges()) == 1
    assert len(TablesPlan(1.0, 1e-6, levels=7).charges()) == 2
    one, two = TablesPlan(1.0, 1e-6, levels=1), TablesPlan(1.0, 1e-6, levels=2)
    assert one.rho0 == one.rho and two.rho0 + two.rest == pytest.approx(two.rho, rel=1e-12)


@pytest.mark.parametrize("name", ["cancer", "earthquake"])
def test_limit_at_huge_epsilon_is_non_private_chi_square_pc(name):
    """Five columns or fewer: every adjacency is a candidate, so as the noise vanishes the
    skeleton is non-private Pearson chi-square PC's to depth 2."""
    net = load_network(name)
    X = sample_frame(net, 100_000, np.random.default_rng(4))
    truth = PrivPC(method="pc", ci_test="chi-square", max_cond_size=2).fit(X).skeleton_
    est = PrivPC(epsilon=1e6, method="tables-pc", random_state=0).fit(X)
    assert {frozenset(e) for e in est.skeleton_.edges} == {frozenset(e) for e in truth.edges}


def test_noisy_test_is_calibrated_under_independence():
    """Independent 3x3 tables with noise: the test says dependent at most about alpha of the
    time (binomial 1e-6 tail: 400 tables at alpha 0.05, at most 45)."""
    rng = np.random.default_rng(2)
    wrong = 0
    for _ in range(400):
        table = rng.multinomial(5_000, np.outer([0.2, 0.3, 0.5], [0.6, 0.3, 0.1]).ravel()).reshape(3, 3)
        wrong += not noisy_independent(table + rng.normal(0, 40.0, (3, 3)), 40.0, 0.05)
    assert wrong <= 45


#: Independent tables with skewed margins, plus noise at alarm's level-0 sigma (about 370 at
#: epsilon 1): (x margin, y margin, stratum weights, rows).
SKEWED = {
    "3x4": ([0.9, 0.08, 0.02], [0.7, 0.2, 0.05, 0.05], [1.0], 100_000),
    "3x3 given 4 strata": ([0.8, 0.15, 0.05], [0.6, 0.3, 0.1], [0.7, 0.2, 0.08, 0.02], 100_000),
    "2x4 given 9 strata": ([0.95, 0.05], [0.5, 0.3, 0.15, 0.05],
                           list(np.outer([0.9, 0.08, 0.02], [0.6, 0.3, 0.1]).ravel()), 100_000),
    "3x4, 3,000 rows": ([0.9, 0.08, 0.02], [0.7, 0.2, 0.05, 0.05], [1.0], 3_000),
}
#: 400 tables at alpha 0.05: more than this many false dependencies has probability < 1e-6.
FALSE_BOUND = int(binom.isf(1e-6, 400, 0.05))


def _null_tables(case, sigma, seed, reps=400):
    p, q, z, n = SKEWED[case]
    probs = np.einsum("i,j,k->ijk", p, q, z)
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        yield rng.multinomial(n, probs.ravel()).reshape(probs.shape) + rng.normal(0, sigma, probs.shape), sigma


def _clipped_pearson_independent(table, sigma, alpha):
    """The statistic tables-pc used before: Pearson's on the counts clipped at 0, each cell's
    variance widened to E + sigma^2 (kept here to show the calibration test bites)."""
    t = np.maximum(table, 0.0).reshape(*table.shape[:2], -1)
    m = t.sum(axis=(0, 1))
    e = t.sum(axis=1)[:, None, :] * t.sum(axis=0)[None, :, :] / m
    df = (t.shape[0] - 1) * (t.shape[1] - 1) * t.shape[2]
    return chi2.sf(float(((t - e) ** 2 / (e + sigma**2)).sum()), df) > alpha


@pytest.mark.parametrize("case", list(SKEWED))
def test_noisy_test_is_calibrated_under_skewed_margins(case):
    """Independent tables with skewed margins (and strata, some of them mostly noise), sigma 370:
    at most alpha of them called dependent, up to the binomial 1e-6 tail (FALSE_BOUND of 400)."""
    wrong = sum(not noisy_independent(t, s, 0.05) for t, s in _null_tables(case, 370.0, seed=11))
    assert wrong <= FALSE_BOUND, (case, wrong)


def test_the_clipped_pearson_test_fails_that_check():
    """The earlier statistic on the first case calls about a fifth dependent: far over the bound."""
    wrong = sum(not _clipped_pearson_independent(t, s, 0.05) for t, s in _null_tables("3x4", 370.0, seed=11))
    assert wrong > 2 * FALSE_BOUND


def test_homogeneous_component_finds_a_shared_weak_interaction():
    """A phi of 0.04 shared by 9 strata, sigma 300 on 1e5 rows: the full statistic alone finds it
    in about 38% of 400 tables, the test with the homogeneous component in about 71% (both
    measured on another seed); the paired difference's Hoeffding 1e-6 tolerance is 0.27."""
    z = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.03, 0.02])
    phi = 0.04
    probs = (np.array([[1 + phi, 1 - phi], [1 - phi, 1 + phi]]) / 4)[:, :, None] * z
    rng, gain = np.random.default_rng(12), 0
    for _ in range(400):
        t = rng.multinomial(100_000, probs.ravel()).reshape(probs.shape) + rng.normal(0, 300.0, probs.shape)
        full, df, _, _ = noisy_statistics(t, 300.0)
        gain += int(not noisy_independent(t, 300.0, 0.05)) - int(chi2.sf(full, df) <= 0.05)
    assert gain / 400 >= 0.335 - 0.27


def test_no_stratum_with_a_positive_total_is_no_information():
    assert noisy_statistics(-np.ones((2, 2, 3)), 10.0)[1] == 0
    assert noisy_independent(-np.ones((2, 2, 3)), 10.0, 0.05) is False
    assert noisy_independent(np.full((1, 3, 2), 50.0), 10.0, 0.05) is False  # x has one state


def test_noise_free_table_with_empty_cells_is_pearson_s_verdict():
    """sigma 0 and empty cells (no division by zero): dependent and independent tables as without noise."""
    assert noisy_independent(np.array([[40.0, 0.0], [0.0, 60.0]]), 0.0, 0.05) is False
    assert noisy_independent(np.array([[30.0, 20.0, 0.0], [60.0, 40.0, 0.0]]), 0.0, 0.05) is True


def test_level_one_asks_only_common_neighbours_and_level_two_all_candidates():
    """Level 1 conditions x - y on z only when z is adjacent to both; level 2 draws from x's own
    candidates (here a - b's sets may hold d, adjacent to a only)."""
    g = nx.Graph([("a", "b"), ("a", "c"), ("b", "c"), ("a", "d"), ("a", "e"), ("b", "e")])
    order = {v: i for i, v in enumerate("abcde")}
    one = dict(((x, y), sets) for x, y, sets in table_pc._candidates(g, 1, set(), {}, order))
    for (x, y), sets in one.items():
        assert all(g.has_edge(z, x) and g.has_edge(z, y) for (z,) in sets), (x, y, sets)
    assert sorted(one[("a", "b")]) == [("c",), ("e",)]
    two = dict(((x, y), sets) for x, y, sets in table_pc._candidates(g, 2, set(), {}, order))
    assert any("d" in S for S in two[("a", "b")])


def test_auto_is_priv_pc_on_narrow_tables_and_tables_pc_on_wide_ones():
    asia, alarm = load_network("asia").domain, load_network("alarm").domain
    assert [c.mechanism for c in PrivPC(epsilon=1.0).privacy_plan(asia, 100_000)] == ["sieve", "examine"]
    assert {c.mechanism for c in PrivPC(epsilon=1.0).privacy_plan(alarm, 100_000)} == {"gaussian_tables"}
    assert PrivPC(epsilon=1.0).privacy_plan(alarm, 100_000).composition == "rdp"
    assert resolve_method("auto", AUTO_MIN_COLUMNS, 0.0).name == "priv-pc"  # zCDP needs delta > 0


@pytest.mark.slow  # about 5 s: alarm fitted whole
def test_alarm_at_epsilon_one_runs_by_default():
    """The default method on alarm at epsilon 1 does not refuse (Priv-PC's cap refuses below 2.25)."""
    net = load_network("alarm")
    engine = NumpyEngine(net.domain, sample(net, 100_000, np.random.default_rng(0)))
    est = PrivPC(epsilon=1.0, random_state=0).fit(engine)
    assert est.method_ == "tables-pc" and est.epsilon_spent_ <= 1.0
    assert est.skeleton_.number_of_edges() < 2 * len(net.edges)


def test_pure_budget_is_refused_when_asked_for(child):
    net, X = child
    with pytest.raises(ValueError, match="delta > 0"):
        PrivPC(epsilon=1.0, delta=0.0, method="tables-pc").fit(X)


def test_power_prediction_s_sigma_is_level_zero_s():
    """The sigma the power prediction reads from public facts (level0_noise) is the one level 0 draws."""
    net = load_network("child")
    tables = Tables.from_engine(NumpyEngine(net.domain, sample(net, 1_000, np.random.default_rng(0))))
    plan = TablesPlan(1.0, 1e-6, levels=3)
    pairs = list(itertools.combinations(net.domain.names, 2))
    _, sigma = release_tables(tables, pairs, rho=plan.rho0, delta=plan.delta_of(plan.rho0),
                              sampler=SeededSampler(0))
    assert level0_noise(net.domain, epsilon=1.0, delta=1e-6, max_cond_size=2) == pytest.approx(sigma, rel=1e-12)
    fewer = level0_noise(net.domain, epsilon=1.0, delta=1e-6, max_cond_size=2, forbidden=[pairs[0]])
    assert fewer < sigma  # one table fewer: a smaller sqrt(2 T)


def _explicit_gls(table, sigma, margins):
    """The generalised least-squares estimate and covariance from the stacked design, by brute force."""
    shape, rows, noise, values = table.shape, [np.eye(table.size)], [np.full(table.size, sigma**2)], [table.ravel()]
    for axes, released, s in margins:
        off = tuple(j for j in range(len(shape)) if j not in axes)
        lift = np.stack([np.asarray(e).reshape(shape).sum(axis=off).ravel() for e in np.eye(table.size)], axis=1)
        rows.append(lift), noise.append(np.full(released.size, s**2)), values.append(released.ravel())
    design, prec = np.vstack(rows), np.diag(1 / np.concatenate(noise))
    cov = np.linalg.inv(design.T @ prec @ design)
    return (cov @ design.T @ prec @ np.concatenate(values)).reshape(shape), cov


def _margins_of(counts, rng, sigma, sets):
    """Each axis set's margin of ``counts`` plus its own N(0, sigma^2) noise (a level-0 release)."""
    out = []
    for axes in sets:
        margin = counts.sum(axis=tuple(j for j in range(counts.ndim) if j not in axes))
        out.append((axes, margin + rng.normal(0, sigma, margin.shape), sigma))
    return out


@pytest.mark.parametrize("shape", [(2, 3, 4), (3, 2, 2, 2)])
def test_combined_table_is_the_generalised_least_squares_estimate(shape):
    """The ANOVA-basis shortcut equals the stacked design's GLS estimate and covariance."""
    rng = np.random.default_rng(4)
    counts = rng.multinomial(10_000, rng.dirichlet(np.ones(math.prod(shape)))).reshape(shape).astype(float)
    sets = [s for k in (2, len(shape) - 1) for s in itertools.combinations(range(len(shape)), k)]
    margins = _margins_of(counts, rng, 30.0, list(dict.fromkeys(sets)))
    table = counts + rng.normal(0, 20.0, shape)
    est, cov = table_pc.combined_table(table, 20.0, margins)
    want_est, want_cov = _explicit_gls(table, 20.0, margins)
    assert np.allclose(est, want_est, rtol=1e-9, atol=1e-6) and np.allclose(cov, want_cov, rtol=1e-9, atol=1e-9)


def test_combined_statistics_without_margins_are_the_table_s_own():
    """Covariance sigma^2 I: the same two statistics as noisy_statistics (stratified, skewed)."""
    rng = np.random.default_rng(5)
    for shape in [(3, 4), (3, 3, 4), (2, 4, 9), (2, 2, 3, 3)]:
        probs = rng.dirichlet(np.ones(math.prod(shape)))
        t = rng.multinomial(100_000, probs).reshape(shape) + rng.normal(0, 300, shape)
        got, want = table_pc.combined_statistics(t, 300.0**2 * np.eye(t.size)), noisy_statistics(t, 300.0)
        assert got[1::2] == want[1::2] and np.allclose(got[::2], want[::2], rtol=5e-3), (shape, got, want)


def _combined_decisions(probs, seed, reps, s1=270.0, s0=370.0):
    """Whether the table alone, combined with its three released 2-way margins (both
    statistics), and the homogeneous statistic combined with the table's own full one, say
    dependent, per table."""
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        counts = rng.multinomial(100_000, probs.ravel()).reshape(probs.shape).astype(float)
        table = counts + rng.normal(0, s1, probs.shape)
        margins = _margins_of(counts, rng, s0, [(0, 1), (0, 2), (1, 2)])
        both = table_pc.combined_statistics(*table_pc.combined_table(table, s1, margins))
        full, df, _, _ = noisy_statistics(table, s1)
        yield (not noisy_independent(table, s1, 0.05), not table_pc._decide(*both, 0.05),
               not table_pc._decide(full, df, *both[2:], 0.05))


def test_combined_test_is_calibrated_under_conditional_independence():
    """x independent of y given z, skewed and z-dependent margins, alarm's sigmas at epsilon 1
    (270 for the 3-way tables, 370 for level 0's): at most FALSE_BOUND of 400 called dependent."""
    px = np.array([[0.9, 0.08, 0.02], [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    py = np.array([[0.7, 0.2, 0.05, 0.05], [0.4, 0.3, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]])
    probs = np.einsum("k,ki,kj->ijk", [0.5, 0.3, 0.2], px, py)
    wrong = np.sum(list(_combined_decisions(probs, seed=13, reps=400)), axis=0)
    assert wrong[1] <= FALSE_BOUND and wrong[2] <= FALSE_BOUND, wrong


def test_combined_test_finds_a_shared_weak_interaction_more_often():
    """A phi of 0.02 shared by 4 strata, sigma 300 for the table and its margins: the table
    alone finds it in about 33% of tables, combined with the margins in about 85% (both
    statistics combined, or the homogeneous one; 200 tables of another seed); the paired
    difference's Hoeffding 1e-6 tolerance over 400 is 0.27."""
    phi = 0.02
    probs = (np.array([[1 + phi, 1 - phi], [1 - phi, 1 + phi]]) / 4)[:, :, None] * np.array([0.4, 0.3, 0.2, 0.1])
    decisions = _combined_decisions(probs, seed=14, reps=400, s1=300.0, s0=300.0)
    alone, both, homogeneous = np.sum(list(decisions), axis=0)
    assert (both - alone) / 400 >= 0.52 - 0.27 and (homogeneous - alone) / 400 >= 0.52 - 0.27


@pytest.mark.parametrize("combine", ["homogeneous", "both"])
def test_combined_tests_read_only_released_tables(monkeypatch, combine):
    """Two neighbouring datasets (one record replaced), the second run replaying the first's
    releases: the same skeleton, separating sets and ledger (the plan) with COMBINE on, so the
    tests, the combination and which tables are combined read nothing but released values."""
    net = load_network("asia")
    codes = sample(net, 20_000, np.random.default_rng(0))
    tables = Tables.from_engine(NumpyEngine(net.domain, codes))
    other = codes.copy()
    other[0] = [(v + 1) % s for v, s in zip(other[0], net.domain.sizes)]
    neighbour = Tables.from_engine(NumpyEngine(net.domain, other))
    outputs, inner = [], table_pc.release_tables

    def recording(t, cols, **kw):
        outputs.append(inner(t, cols, **kw))
        return outputs[-1]

    monkeypatch.setattr(table_pc, "COMBINE", combine)
    monkeypatch.setattr(table_pc, "release_tables", recording)
    run = dict(alpha=0.05, epsilon=1.0, delta=1e-6, max_cond_size=2, sampler=SeededSampler(0))
    first, ledger = table_pc.tables_pc_skeleton(tables, **run)
    replay = iter(list(outputs))
    monkeypatch.setattr(table_pc, "release_tables", lambda t, cols, **kw: next(replay))
    second, ledger2 = table_pc.tables_pc_skeleton(neighbour, **run)
    assert {frozenset(e) for e in first.graph.edges} == {frozenset(e) for e in second.graph.edges}
    assert first.sepsets == second.sepsets and ledger.charges == ledger2.charges
    plan = table_pc.tables_pc_plan(None, epsilon=1.0, delta=1e-6, max_cond_size=2)
    assert tuple(ledger.charges) == tuple(plan.charges)
    assert len(outputs) == 3 and next(replay, None) is None  # levels 0-2 ran, every release replayed
