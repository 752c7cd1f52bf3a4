"""The release's tree stage (privgraph.release.tree, .residuals): sensitivities, plan, selection, fit."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from scipy.stats import chi2

from privgraph.data import Domain, NumpyEngine
from privgraph.datasets import load_network
from privgraph.privacy import Budget, BudgetExceeded, Charge, Neighbours, SeededSampler
from privgraph.release import PrivateRelease, plan_release
from privgraph.release.residuals import extra_pair_count, select_residual_pairs, tree_pair_tables
from privgraph.release.tree import l1_scores, pair_score_sensitivity, plan_tree, proportions, select_tree

RO = Neighbours.REPLACE_ONE
FAILURE = 1e-6  # false-failure probability of each statistical check


def _table(rows, shape):
    t = np.zeros(shape)
    np.add.at(t, tuple(np.asarray(rows).T), 1)
    return t


def test_pair_score_sensitivity_is_attained_on_the_boundary_and_never_exceeded():
    """Replace-one moves one count between two cells: the L1 score moves by at most 2, and by
    exactly 2 when the row leaves a cell above the prediction for a cell below it."""
    assert pair_score_sensitivity(RO) == 2 and pair_score_sensitivity(Neighbours.ADD_REMOVE) == 1
    predicted = np.full((2, 3), 1 / 6)
    left = np.array([[0, 0]] * 10 + [[1, 2]] * 2)  # cell (0, 0) above n/6 = 2, cell (1, 2) at it, (0, 1) below
    right = left.copy()
    right[0] = (0, 1)
    n = len(left)
    moved = abs(l1_scores([_table(right, (2, 3))], [predicted], n) - l1_scores([_table(left, (2, 3))], [predicted], n))
    assert moved[0] == pair_score_sensitivity(RO)
    rng = np.random.default_rng(0)
    for _ in range(200):  # random neighbours and predictions: never more
        rows = rng.integers(0, 3, (30, 2))
        other = rows.copy()
        other[rng.integers(30)] = rng.integers(0, 3, 2)
        p = rng.dirichlet(np.ones(9)).reshape(3, 3)
        diff = l1_scores([_table(rows, (3, 3))], [p], 30) - l1_scores([_table(other, (3, 3))], [p], 30)
        assert abs(diff[0]) <= 2 + 1e-9


def test_the_plan_spends_the_budget_under_its_composition():
    d = load_network("child").domain
    gaussian = plan_tree(d, 20_000, epsilon=1.0, delta=1e-6)
    total = gaussian.charges(d).total("rdp", 1e-6).epsilon
    assert 1.0 - 1e-4 <= total <= 1.0
    laplace = plan_tree(d, 20_000, epsilon=1.0, delta=0.0)
    assert 1.0 - 1e-4 <= laplace.charges(d).total("basic").epsilon <= 1.0
    rounds = ["exponential", "laplace"] * len(laplace.batches)
    assert [c.mechanism for c in laplace.charges(d)] == ["laplace", "exponential", "laplace", *rounds]
    assert sum(laplace.batches) == laplace.extras and len(laplace.batches) == 3
    with pytest.raises(ValueError, match="three columns"):
        plan_tree(Domain.of(a=2, b=2), 100, epsilon=1.0, delta=0.0)


def test_selection_is_a_spanning_tree_and_the_maximum_one_when_noise_vanishes():
    rng = np.random.default_rng(1)
    names = [f"v{i}" for i in range(7)]
    pairs = list(itertools.combinations(names, 2))
    scores = rng.uniform(0, 1000, len(pairs))
    noisy = select_tree(names, pairs, scores, epsilon=0.01, sampler=SeededSampler(0))
    assert nx.is_tree(nx.Graph(noisy)) and set(nx.Graph(noisy)) == set(names)
    exact = select_tree(names, pairs, scores, epsilon=1e6, sampler=SeededSampler(0))
    g = nx.Graph()
    g.add_weighted_edges_from((a, b, s) for (a, b), s in zip(pairs, scores))
    assert {frozenset(e) for e in exact} == {frozenset(e) for e in nx.maximum_spanning_tree(g).edges}
    extra = select_residual_pairs(pairs, scores, 3, epsilon=1e6, sampler=SeededSampler(0))
    assert extra == [pairs[i] for i in np.argsort(-scores)[:3]]


def test_tree_pair_tables_agree_with_exact_inference():
    from privgraph.mrf.inference import infer
    from privgraph.mrf.model import MarkovRandomField

    d = Domain.of(a=2, b=3, c=2, e=4)
    edges = [("a", "b"), ("b", "c"), ("b", "e")]
    rng = np.random.default_rng(2)
    model = MarkovRandomField.of(d, edges, [rng.normal(size=d.project(e).shape) for e in edges])

    def exact(cols):
        m = MarkovRandomField.of(d, model.cliques + (tuple(cols),),
                                 list(model.potentials) + [np.zeros(d.project(cols).shape)])
        return infer(m).marginals[-1]

    tables = tree_pair_tables(d.names, edges, {v: exact([v]) for v in d.names}, {e: exact(e) for e in edges})
    for a, b in itertools.permutations(d.names, 2):
        np.testing.assert_allclose(tables[(a, b)], exact([a, b]), atol=1e-12)


def test_auto_chooses_from_public_facts_only():
    child, asia = load_network("child").domain, load_network("asia").domain
    assert plan_release(child, 20_000, epsilon=1.0, neighbours="replace_one").structure == "tree"
    assert plan_release(asia, 100_000, epsilon=1.0, neighbours="replace_one").structure == "tree"  # delta > 0
    gauss = plan_release(asia, 100_000, epsilon=1.0, neighbours="replace_one", structure="gauss-pc")
    assert gauss.stages[0].affordable  # affordable, but auto at delta > 0 runs the tree (resolve_structure)
    assert plan_release(asia, 100_000, epsilon=30.0, delta=1e-9, neighbours="replace_one").structure == "tree"
    # alarm at 1e5: Gauss-PC's level 0 is bearable only by starving level 1 (sigma 16 times
    # what a test can bear with every pair left): not affordable, and the tree runs
    alarm = load_network("alarm").domain
    assert plan_release(alarm, 100_000, epsilon=1.0, neighbours="replace_one").structure == "tree"
    from privgraph.causal import PrivPC
    from privgraph.release.planner import gauss_epsilons

    PrivPC(epsilon=gauss_epsilons(1.0, 1e-6, 0.6)[0], method="gauss-pc").privacy_plan(alarm, 100_000)  # accepted
    assert not plan_release(alarm, 100_000, epsilon=1.0, split=0.6, structure="gauss-pc", neighbours="replace_one").stages[0].affordable
    assert plan_release(asia, 100_000, epsilon=1.0, delta=0.0, neighbours="replace_one").structure != "gauss-pc"  # it needs delta > 0
    assert plan_release(asia, 100_000, epsilon=1.0, structure="tree", neighbours="replace_one").structure == "tree"
    with pytest.raises(ValueError, match="structure"):
        PrivateRelease(structure="mst", neighbours="replace_one").privacy_plan(asia, 100)


def test_tree_release_charges_its_plan_and_releases_an_undirected_skeleton(asia):
    net, X = asia()
    rel = PrivateRelease(epsilon=1.0, structure="tree", random_state=4, neighbours="replace_one").fit(X, domain=net.domain)
    plan = PrivateRelease(epsilon=1.0, structure="tree", neighbours="replace_one").privacy_plan(net.domain, len(X))
    assert rel.structure_kind_ == "tree" and rel.composition_ == "rdp" and rel.ledger_.neighbours == {RO}
    assert [(c.mechanism, c.count) for c in rel.ledger_] == [(c.mechanism, c.count) for c in plan]
    assert all(math.isclose(a.epsilon, b.epsilon) for a, b in zip(rel.ledger_, plan))
    assert rel.ledger_.total("rdp", 1e-6).epsilon <= 1.0
    d = len(net.domain.names)
    assert not rel.graph_.directed_edges and nx.is_tree(nx.Graph(rel.graph_.undirected_edges))
    rounds = rel.structure_.adaptive  # AIM's rounds (delta > 0), then one last round of d pairs
    assert len(rel.structure_.last) == extra_pair_count(d) and rounds.rounds >= 1
    assert set(rel.cliques_) == set(rel.structure_.edges) | set(rounds.pairs) | set(rel.structure_.last)
    assert len(set(rel.cliques_)) == len(rel.cliques_)
    assert rel.sample(9).shape == (9, d)


def test_tree_budget_is_checked_before_any_noise(asia):
    net, X = asia(2_000)
    budget = Budget(1.0, 1e-6, composition="rdp")
    budget.reserve(Charge("laplace", 0.5, 0.0, RO, sensitivity=2.0))
    before = budget.ledger
    with pytest.raises(BudgetExceeded):
        PrivateRelease(epsilon=1.0, structure="tree", random_state=0, neighbours="replace_one").fit(X, domain=net.domain, budget=budget)
    assert budget.ledger == before


def test_tree_tables_carry_the_noise_the_ledger_states(asia):
    """Released cells minus true counts are Gaussian of the scale each table states (the tree's
    tables the ledger's sigma; an adaptive round's table its round's, or the inverse-variance
    combination's when measured twice): the sum of squares over M cells, each divided by its
    table's sigma^2, lies within chi-square(M)'s 1e-6 quantiles."""
    net, X = asia()
    rel = PrivateRelease(epsilon=1.0, structure="tree", random_state=7, neighbours="replace_one").fit(X, domain=net.domain)
    engine = NumpyEngine(net.domain, np.column_stack([
        X[c].astype(str).map({str(v): i for i, v in enumerate(lv)}).to_numpy()
        for c, lv in zip(net.domain.names, net.domain.levels)]))
    noisy = rel.structure_.tables
    errors = np.concatenate([np.ravel(t - engine.counts(list(c))) / s
                             for c, t, s in zip(noisy.cliques, noisy.tables, noisy.group_scales)])
    sigma = float(rel.ledger_.charges[0].note.split("sigma ")[1].split(";")[0])
    assert noisy.group_scales[0] == pytest.approx(sigma)  # the one-way tables: the ledger's sigma
    ratio = float(np.sum(errors**2))
    assert chi2.ppf(FAILURE / 2, errors.size) <= ratio <= chi2.isf(FAILURE / 2, errors.size)
    assert math.isclose(rel.plan_.stages[1].noise, sigma, rel_tol=1e-2)  # the planner's prediction
    assert proportions(np.array([-1.0, -2.0])).tolist() == [0.5, 0.5]
