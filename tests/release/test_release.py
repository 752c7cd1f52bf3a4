"""PrivateRelease, its planner, its outputs and its CLI (issue 15)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import gamma

from privgraph.causal.deciders import BudgetTooSmall
from privgraph.data import Domain, Kind
from privgraph.datasets import load_network
from privgraph.privacy import Budget, BudgetExceeded, Charge, Neighbours
from privgraph.privacy.events import ZCDPCurve
from privgraph.release import PrivateRelease, family_cliques, plan_release
from privgraph.release.cliques import extend_to_dag

RO = Neighbours.REPLACE_ONE
FAILURE = 1e-6  # false-failure probability of each statistical check


def test_one_budget_one_relation_and_the_plan_is_what_is_charged(asia):
    net, X = asia()
    rel = PrivateRelease(epsilon=2.0, split=0.5, random_state=1, structure="priv-pc", neighbours="replace_one").fit(X, domain=net.domain)
    plan = PrivateRelease(epsilon=2.0, split=0.5, structure="priv-pc", neighbours="replace_one").privacy_plan(net.domain, len(X))
    assert rel.ledger_.neighbours == {RO}
    # stage 1 charges exactly its plan; stage 3 one Laplace charge of the planned epsilon
    assert rel.structure_.ledger_.charges == plan.charges[:-1]
    (laplace,) = rel.parameters_.ledger_.charges
    assert laplace.mechanism == "laplace" and laplace.epsilon == plan.charges[-1].epsilon == 1.0
    assert laplace.sensitivity == 2 * len(rel.cliques_)  # replace-one: 2 per table
    assert rel.ledger_.total("optimal", 1e-6).epsilon <= 2.0 + 1e-9
    assert rel.sample(7).shape == (7, len(net.domain.names))


def test_budget_is_checked_before_any_noise(asia):
    net, X = asia()
    budget = Budget(2.0, 1e-6, composition="optimal")
    budget.reserve(Charge("laplace", 1.5, 0.0, RO, sensitivity=1.0))
    before = budget.ledger
    with pytest.raises(BudgetExceeded):
        PrivateRelease(epsilon=1.0, split=0.5, max_rounds=4, random_state=0, neighbours="replace_one").fit(X, domain=net.domain, budget=budget)
    assert budget.ledger == before  # nothing reserved, nothing drawn


def test_bad_input_is_one_line(asia):
    net, X = asia(500)
    for kw, words in [({"split": 1.0}, "split"), ({"epsilon": -1}, "epsilon"), ({"max_rounds": 0}, "max_rounds")]:
        with pytest.raises(ValueError, match=words) as err:
            PrivateRelease(**kw, neighbours="replace_one").privacy_plan(net.domain, 500)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="delta > 0") as err:  # Gauss-PC composes in zCDP
        PrivateRelease(structure="gauss-pc", delta=0.0, neighbours="replace_one").privacy_plan(net.domain, 500)
    assert "\n" not in str(err.value)
    cont = Domain(("x", "y"), (0, 2), (Kind.CONTINUOUS, Kind.ORDINAL), bounds=(None, None))  # no bounds: no bins
    with pytest.raises(ValueError, match="continuous"):
        PrivateRelease(neighbours="replace_one").privacy_plan(cont, 500)


def test_family_cliques_respect_the_cap_and_cover_every_column():
    net = load_network("child")
    dag = net.to_networkx()
    for cap in (4, 50, 5_000):
        cliques = family_cliques(dag, net.domain, cap)
        assert set().union(*map(set, cliques)) == set(net.domain.names)
        assert all(net.domain.cells(c) <= max(cap, net.domain.sizes[net.domain.index(c[0])]) for c in cliques)


def test_extension_of_an_inconsistent_graph_keeps_the_skeleton():
    from privgraph.graphs import CPDAG

    g = CPDAG(["a", "b", "c", "d"], directed=[("a", "b"), ("b", "c"), ("c", "a")], undirected=[("c", "d")])
    dag, consistent = extend_to_dag(g, g.nodes)
    import networkx as nx

    assert not consistent and nx.is_directed_acyclic_graph(dag)
    assert {frozenset(e) for e in dag.edges} == {frozenset(e) for e in g.skeleton().edges}


def test_planner_parameters_noise_matches_the_released_tables(asia):
    """The planner's noise scale bounds the measured noise of the released tables.

    The released cells minus the true counts are i.i.d. Laplace of the ledger's scale b; the
    mean absolute error of M cells is Gamma(M, b/M), so its two-sided 1e-6 quantiles bound it.
    The planner's scale (d tables of ``cap`` cells) is an upper bound on b."""
    net, X = asia()
    rel = PrivateRelease(epsilon=2.0, split=0.5, random_state=3, structure="priv-pc", neighbours="replace_one").fit(X, domain=net.domain)
    noisy = rel.parameters_.marginals_
    errors = []
    for clique, table in zip(noisy.group_cliques(), noisy.tables):
        true = X.groupby(list(clique), observed=False).size().to_numpy().reshape(net.domain.project(clique).shape)
        errors.append(np.ravel(np.asarray(table) - true))
    errors = np.abs(np.concatenate(errors))
    b = noisy.scale
    lo, hi = gamma.ppf(FAILURE / 2, errors.size, scale=b / errors.size), gamma.isf(FAILURE / 2, errors.size,
                                                                                  scale=b / errors.size)
    assert lo <= errors.mean() <= hi
    predicted = rel.plan_.stages[1].noise
    assert b <= predicted * (1 + 1e-9)
    assert predicted <= b * len(net.domain.names) / len(rel.cliques_) * 1.01  # only the table count differs


def test_planner_structure_noise_is_the_examine_scale_and_its_verdicts_match_priv_pc(asia):
    net, child = load_network("asia"), load_network("child")
    plan = plan_release(net.domain, 20_000, epsilon=4.0, split=0.5, structure="priv-pc", neighbours="replace_one")
    rel = PrivateRelease(epsilon=4.0, split=0.5, random_state=0, structure="priv-pc", neighbours="replace_one").fit(asia()[1], domain=net.domain)
    examine = [c for c in rel.structure_.ledger_ if c.mechanism == "examine"][0]
    assert math.isclose(plan.stages[0].noise, 1 / examine.epsilon)
    # child at 2e4 rows, epsilon 1: the planner says stage 1 cannot afford Priv-PC's default
    # cap, and Priv-PC itself refuses it before reading data
    refused = plan_release(child.domain, 20_000, epsilon=1.0, split=0.5, structure="priv-pc", neighbours="replace_one")
    assert not refused.stages[0].affordable and refused.rounds is not None
    with pytest.raises(BudgetTooSmall):
        PrivateRelease(epsilon=1.0, split=0.5, max_rounds=None, structure="priv-pc", neighbours="replace_one").privacy_plan(child.domain, 20_000)
    # and the reduced cap it proposes is one Priv-PC accepts
    PrivateRelease(epsilon=1.0, split=0.5, max_rounds=refused.rounds, structure="priv-pc", neighbours="replace_one").privacy_plan(child.domain,
                                                                                                     20_000)


def test_planner_effect_prediction_against_a_measured_run(asia):
    """Measured on a bundled network: at a budget the planner calls affordable, every edge of
    asia whose marginal phi is at least the planned effect survives level 0 of Priv-PC (the
    predicted miss probability per test times the number of such edges is below 1e-6)."""
    net, X = asia(100_000)
    plan = plan_release(net.domain, len(X), epsilon=1.0, split=0.5, structure="priv-pc", neighbours="replace_one")
    assert plan.stages[0].affordable
    strong = []
    for a, b in net.to_networkx().edges:
        t = pd.crosstab(X[a], X[b]).to_numpy().astype(float)
        phi = math.sqrt(max(0.0, (t.sum() * (t[0, 0] * t[1, 1] - t[0, 1] * t[1, 0]) ** 2)
                            / (t.sum(0).prod() * t.sum(1).prod()) / t.sum()))
        if phi >= 0.1:
            strong.append((a, b))
    assert strong and plan.stages[0].error * len(strong) <= FAILURE
    rel = PrivateRelease(epsilon=1.0, split=0.5, random_state=5, structure="priv-pc", neighbours="replace_one").fit(X, domain=net.domain)
    removed_at_level_0 = {frozenset(k) for k, s in rel.structure_.sepsets_.items() if len(s) == 0}
    assert all(frozenset(e) not in removed_at_level_0 for e in strong)


@pytest.mark.parametrize("structure", ["tree", "priv-pc", "gauss-pc"])
def test_cli_release_writes_everything_and_plan_spends_nothing(tmp_path, asia, structure):
    from typer.testing import CliRunner

    from privgraph.cli import app

    net, X = asia(3_000)
    X.to_csv(tmp_path / "asia.csv", index=False)
    runner = CliRunner()
    assert runner.invoke(app, ["sample", "--network", "asia", "--samples", "10", str(tmp_path / "x.csv"),
                               "--domain-out", str(tmp_path / "asia.json")]).exit_code == 0
    out = tmp_path / "out"
    lost = tmp_path / "no" / "out"  # --out is created when missing, but only its last component
    bad = runner.invoke(app, ["release", str(tmp_path / "asia.csv"), "--domain", str(tmp_path / "asia.json"),
                              "--epsilon", "4", "--out", str(lost)])
    assert bad.exit_code != 0 and not lost.parent.exists()
    out.mkdir()
    unknown = runner.invoke(app, ["release", str(tmp_path / "asia.csv"), "--domain", str(tmp_path / "asia.json"),
                                  "--epsilon", "4", "--out", str(out), "--sampling", "exact"])
    assert unknown.exit_code != 0 and "--sampling must be one of" in str(unknown.exception)
    assert not any(out.iterdir())
    res = runner.invoke(app, ["release", str(tmp_path / "asia.csv"), "--domain", str(tmp_path / "asia.json"),
                              "--epsilon", "4", "--split", "0.5", "--out", str(out), "--seed", "0",
                              "--structure", structure])
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["graph.json", "graph.dot", "graph.png", "model.json", "synthetic.csv", "ledger.json",
                            "plan.json", "report.md", "report.html", "budget.png", "marginals.png"])
    ledger = json.loads((out / "ledger.json").read_text())
    assert ledger["neighbours"] == "add_remove" and ledger["epsilon"] <= 4.0 + 1e-9  # the default relation
    report = (out / "report.md").read_text()
    assert "add/remove" in report and {"priv-pc": "Priv-PC", "gauss-pc": "Gauss-PC", "tree": "spanning tree"}[structure] in report
    assert "controlled rounding" in report  # the default sampling, named in the report
    assert ("| 0 size |" in report) is (structure != "tree")  # add/remove: the size first, unless the tree
    estimated = json.loads((out / "model.json").read_text())["privacy"]["n_rows_estimated"]
    assert len(pd.read_csv(out / "synthetic.csv")) == estimated  # n is private: its estimate, not 3,000
    plan = runner.invoke(app, ["plan", "--domain", str(tmp_path / "asia.json"), "--rows", "100000",
                               "--epsilon", "1", "--json", "--structure", "gauss-pc"])
    stages = [s["stage"] for s in json.loads(plan.output)["stages"]]
    assert plan.exit_code == 0 and stages == ["size", "structure (gauss-pc)", "parameters (gaussian)"]
    assert json.loads(plan.output)["structure"] == "gauss-pc"
    auto = runner.invoke(app, ["plan", "--domain", str(tmp_path / "asia.json"), "--rows", "100000",
                               "--epsilon", "1", "--json"])  # auto at delta > 0: the tree, no size
    assert auto.exit_code == 0 and [s["stage"] for s in json.loads(auto.output)["stages"]] == [
        "structure (tree)", "parameters (tree)"]
    ro = tmp_path / "ro"
    ro.mkdir()
    res = runner.invoke(app, ["release", str(tmp_path / "asia.csv"), "--domain", str(tmp_path / "asia.json"),
                              "--epsilon", "4", "--out", str(ro), "--seed", "0", "--structure", structure,
                              "--neighbours", "replace_one"])
    assert res.exit_code == 0, res.output
    assert json.loads((ro / "ledger.json").read_text())["neighbours"] == "replace_one"
    assert "replace-one" in (ro / "report.md").read_text() and len(pd.read_csv(ro / "synthetic.csv")) == 3_000
    text = runner.invoke(app, ["plan", "--domain", str(tmp_path / "asia.json"), "--rows", "100000", "--epsilon", "1",
                               "--structure", "gauss-pc"])
    assert text.exit_code == 0 and "of rho" in text.output  # the split is a share of the zCDP budget here


# The release's end-to-end audit cases (src/privgraph/audit/release_cases.py), each at its quick
# size with seed 0, are audited by tests/audit/test_cli.py's quick audit (every case passes, with a
# least share of its claim); running them here again cost the slow run about 74 s.


def test_estimator_contract():
    from privgraph.estimator import NotFittedError

    rel = PrivateRelease(epsilon=2.0, split=0.3)
    assert repr(rel) == "PrivateRelease(epsilon=2.0, split=0.3)"
    assert rel.get_params()["split"] == 0.3 and rel.set_params(cap=100).cap == 100
    with pytest.raises(NotFittedError):
        rel.graph_


def test_a_dense_released_graph_gives_a_tractable_model():
    """Priv-PC stopped at a small cap keeps nearly every edge of alarm: the cliques must
    still cover every column, fit the cap and give a junction tree within tree_cap."""
    import networkx as nx

    from privgraph.mrf.junction import junction_tree
    from privgraph.release.cliques import tractable_cliques

    d = load_network("alarm").domain
    complete = nx.DiGraph([(a, b) for i, a in enumerate(d.names) for b in d.names[i + 1:]])
    cliques = tractable_cliques(complete, d, cap=60, tree_cap=100_000)
    assert set().union(*map(set, cliques)) == set(d.names)
    assert all(d.cells(c) <= 60 for c in cliques if len(c) > 1)
    assert junction_tree(d, cliques).cells <= 100_000


def test_gauss_pc_release_charges_its_plan_under_one_rho(asia):
    """Stage 1 charges Gauss-PC's plan, stage 3 one Gaussian release; RDP composes them to at
    most epsilon, and the budget (RDP) never exceeds it."""
    from privgraph.privacy.zcdp import rho_for_budget

    net, X = asia()
    rel = PrivateRelease(epsilon=1.0, random_state=2, neighbours="replace_one", structure="gauss-pc").fit(
        X, domain=net.domain)
    plan = PrivateRelease(epsilon=1.0, neighbours="replace_one", structure="gauss-pc").privacy_plan(net.domain, len(X))
    assert rel.structure_kind_ == "gauss-pc" and rel.composition_ == "rdp" and rel.ledger_.neighbours == {RO}
    assert rel.structure_.ledger_.charges == plan.charges[:-1]
    (tables,) = rel.parameters_.ledger_.charges
    assert tables.mechanism == "gaussian" and tables.epsilon == plan.charges[-1].epsilon
    assert rel.ledger_.total("rdp", 1e-6).epsilon <= 1.0
    # the split is of rho: each stage alone costs more than half of epsilon
    rhos = [c.curve.rho for c in rel.ledger_.charges if isinstance(c.curve, ZCDPCurve)]
    assert sum(rhos) <= rho_for_budget(1.0, 1e-6) * (1 + 1e-9)
    assert all(e > 0.5 for e in (rel.structure_.ledger_.total("rdp", 1e-6).epsilon, tables.epsilon))


@pytest.mark.parametrize("neighbours, stage", [("replace_one", 1), ("add_remove", 2)])
def test_planner_gaussian_noise_matches_the_released_tables(asia, neighbours, stage):
    """The released cells minus the true counts are i.i.d. N(0, sigma^2), sigma the ledger's;
    their mean square over M cells is sigma^2 chi2(M) / M, so its two-sided 1e-6 quantiles
    bound it; the planner's sigma (d tables) bounds the released one (fewer tables), under
    either relation (add/remove: stage 0 is the size, the tables' sensitivity 1 per table)."""
    from scipy.stats import chi2

    net, X = asia()
    rel = PrivateRelease(epsilon=1.0, random_state=3, neighbours=neighbours, structure="gauss-pc").fit(
        X, domain=net.domain)
    assert rel.structure_kind_ == "gauss-pc"
    noisy = rel.parameters_.marginals_
    errors = np.concatenate([np.ravel(np.asarray(table) - X.groupby(list(c), observed=False).size().to_numpy()
                                      .reshape(net.domain.project(c).shape))
                             for c, table in zip(noisy.group_cliques(), noisy.tables)])
    sigma, m = noisy.scale, errors.size
    assert chi2.ppf(FAILURE / 2, m) / m <= np.mean(errors**2) / sigma**2 <= chi2.isf(FAILURE / 2, m) / m
    assert sigma <= rel.plan_.stages[stage].noise * (1 + 1e-9)


def test_gauss_pc_planner_predicts_level_0(asia):
    """The planner's stage-1 sigma is Gauss-PC's level-0 sigma (its ledger's rho), and every
    edge of asia whose marginal phi is at least the planned effect survives level 0 (the
    predicted miss probability times the number of such edges is below 1e-6)."""
    from privgraph.causal.margins import kendall_pairs_l2_sensitivity
    from privgraph.privacy.zcdp import zcdp_gaussian_scale

    net, X = asia(100_000)
    plan = plan_release(net.domain, len(X), epsilon=1.0, neighbours="replace_one", structure="gauss-pc")
    assert plan.structure == "gauss-pc" and plan.stages[0].affordable
    rel = PrivateRelease(epsilon=1.0, random_state=5, neighbours="replace_one", structure="gauss-pc").fit(
        X, domain=net.domain)
    level0 = rel.structure_.ledger_.charges[0]
    d = len(net.domain.names)
    sigma = zcdp_gaussian_scale(level0.curve.rho, kendall_pairs_l2_sensitivity(d, with_degeneracy=True),
                                d * (d - 1) // 2 + d)[0]
    assert math.isclose(plan.stages[0].noise, sigma, rel_tol=1e-9)
    strong = [(a, b) for a, b in net.to_networkx().edges
              if abs(np.corrcoef(X[a].cat.codes, X[b].cat.codes)[0, 1]) >= 0.1]
    assert strong and plan.stages[0].error * len(strong) <= FAILURE
    removed_at_level_0 = {frozenset(k) for k, s in rel.structure_.sepsets_.items() if len(s) == 0}
    assert all(frozenset(e) not in removed_at_level_0 for e in strong)


@pytest.mark.parametrize("neighbours, n", [("add_remove", 400), ("replace_one", 60)])
def test_auto_passes_priv_pc_over_where_its_blocks_need_more_rows(neighbours, n):
    """A small table (add/remove: the released size can be a few rows; replace-one: n public) under
    "auto": Priv-PC's G test needs 2 rows in each of its 50 blocks, so the planner passes it over for
    the tree instead of failing with Priv-PC's "too few rows" (found on a 500-row table)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.integers(0, 2, n), "c": rng.integers(0, 2, n)})
    d = Domain(("a", "b", "c"), (3, 2, 2), levels=((0, 1, 2), (0, 1), (0, 1)))
    assert plan_release(d, 3, epsilon=1.0, delta=1e-6).structure == "tree"
    with pytest.warns(UserWarning, match="NOT private"):
        rel = PrivateRelease(epsilon=1.0, neighbours=neighbours, random_state=0).fit(X, domain=d)
    assert rel.structure_kind_ == "tree" and len(rel.sample(random_state=0)) > 0


@pytest.mark.parametrize("structure", ["priv-pc", "gauss-pc"])
def test_a_pc_structure_asked_for_on_too_few_rows_says_why_and_what_to_do(structure):
    """Asked for by name on a few hundred rows under add/remove, a PC structure plans at the released
    size (a few rows) and cannot run: the refusal names the structure, the rows it planned at and the
    way out, instead of only its test's "too few rows"."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 3, 400), "b": rng.integers(0, 2, 400), "c": rng.integers(0, 2, 400)})
    d = Domain(("a", "b", "c"), (3, 2, 2), levels=((0, 1, 2), (0, 1), (0, 1)))
    with pytest.warns(UserWarning, match="NOT private"), \
            pytest.raises(ValueError, match=rf"structure '{structure}' cannot run on the \d+ rows the release plans at "
                                            r"\(\d+ rows are too few for 50 blocks.*choose structure \"tree\""):
        PrivateRelease(epsilon=1.0, structure=structure, random_state=0).fit(X, domain=d)
