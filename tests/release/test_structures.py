"""Issue 48, item 1: a release's structure is one registered object (its prediction, plan, run
and the report's words), so adding one is one class and one registry line.

A toy structure, registered here only (``monkeypatch``: it does not ship), runs through
``fit``, ``privacy_plan``, the report and the command line; the contract suite then holds every
registered structure, the toy with them, to the same promises: the plan is the ledger under
both relations, one seed gives one release, the estimator clones.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from privgraph.data.codebook import write_codebook
from privgraph.datasets import load_network, sample_frame
from privgraph.graphs.cpdag import CPDAG
from privgraph.graphs.export import graph_writer
from privgraph.mrf import PrivateMRF
from privgraph.mrf.noisy_tables import plan_release as plan_tables
from privgraph.outputs import write_all
from privgraph.privacy import Budget, Ledger, Neighbours, check_affordable, histogram_l1_sensitivity
from privgraph.privacy.composition import BASIC
from privgraph.release import PrivateRelease, ReleasePlan, StagePlan
from privgraph.release.cliques import extend_to_dag
from privgraph.release.report import budget_rows, release_outputs, release_writers
from privgraph.release.stage import STRUCTURES, StageFit, Structure
from privgraph.release.structures import estimated_rows
from privgraph.validation import InvalidInput

RO, AR = Neighbours.REPLACE_ONE, Neighbours.ADD_REMOVE


class OneWay(Structure):
    """The toy: no edge, the model every column's one-way table (Laplace, the whole epsilon,
    basic composition). Needs no n: under add/remove it is estimated from the noisy tables."""

    name, label, needs_size = "one-way", "independent columns", False
    writer = staticmethod(graph_writer)

    def predict(self, domain, n_rows, *, epsilon, pure_epsilon, delta, tables, cap, cell, **options):
        d = len(domain.names)
        scale = histogram_l1_sensitivity(tables) * d / pure_epsilon
        stage = StagePlan("parameters (one-way)", pure_epsilon, scale, n_rows * cell, scale / (n_rows * cell), True,
                          f"{d} one-way tables, Laplace noise")
        return ReleasePlan(pure_epsilon, delta, int(n_rows), 0.0, None, (stage,), cap, 0.0, ("no graph",),
                           structure=self.name, neighbours=tables.value)

    def accountant(self, release, prediction):
        return BASIC

    def _tables(self, release, domain):
        return [(v,) for v in domain.names]

    def plan(self, release, domain, prediction) -> Ledger:
        return plan_tables(domain=domain, cliques=self._tables(release, domain), epsilon=release.epsilon,
                           neighbours=Neighbours.parse(release.neighbours))

    def run(self, release, engine, domain, prediction, budget, *, sized=None, sampler=None) -> StageFit:
        relation = Neighbours.parse(release.neighbours)
        budget = budget if budget is not None else Budget(release.epsilon, release.delta, composition=BASIC)
        check_affordable(self.plan(release, domain, prediction).charges, budget)  # before any noise
        params = PrivateMRF(epsilon=release.epsilon, cliques=self._tables(release, domain), method=release.method,
                            neighbours=relation, random_state=release.model_seed(), options=release.exact_options())
        params.fit(engine, budget=budget)
        if relation is RO:
            n = prediction.n_rows
        else:
            n = estimated_rows(params.marginals_)
            prediction = prediction if prediction is not None else release.prediction(domain, n)
        graph = CPDAG(domain.names)
        dag, consistent = extend_to_dag(graph, domain.names)
        return StageFit(None, params, Ledger() if sized is None else sized, prediction, BASIC, n, graph, dag,
                        consistent, tuple(self._tables(release, domain)))

    def structure_row(self, release) -> str:
        return "none: every column alone"

    def orientation_row(self, release) -> str:
        return "none: no edge"

    def parameters_row(self, release) -> str:
        return f"{len(release.cliques_)} one-way tables (Laplace)"

    def graph_text(self, release) -> str:
        return f"No edge over {len(release.graph_.nodes)} columns"

    def size_use(self, release) -> str:
        return "not used"

    def budget(self, release) -> list:
        return [("3 parameters", "every column's one-way table", release.parameters_.ledger_)]


@pytest.fixture
def toy(monkeypatch):
    """The toy registered for one test: one registry line (and gone after it)."""
    monkeypatch.setitem(STRUCTURES, OneWay.name, OneWay())
    return OneWay.name


@pytest.fixture(scope="module")
def asia_3k():
    net = load_network("asia")
    return net, sample_frame(net, 3_000, np.random.default_rng(0), labels=True)


def test_the_toy_is_a_choice_only_while_registered(toy, monkeypatch):
    assert toy in PrivateRelease.declared_params()["structure"].choices
    monkeypatch.delitem(STRUCTURES, toy)
    with pytest.raises(InvalidInput, match="structure must be one of"):
        PrivateRelease(structure=toy).privacy_plan(load_network("asia").domain, 1000)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_the_toy_fits_and_its_plan_is_its_ledger(toy, asia_3k, neighbours, tmp_path):
    net, X = asia_3k
    rel = PrivateRelease(epsilon=1.0, structure=toy, neighbours=neighbours, random_state=0).fit(X, domain=net.domain)
    assert rel.structure_kind_ == toy and rel.composition_ == "basic"
    assert rel.cliques_ == tuple((v,) for v in net.domain.names) and not rel.graph_.undirected_edges
    plan = rel.privacy_plan(net.domain, len(X))
    assert plan.ledger == rel.ledger_ and plan.composition == "basic"
    assert rel.ledger_.total("basic").epsilon == pytest.approx(1.0)
    assert rel.plan_.structure == toy and [s.stage for s in rel.plan_.stages] == ["parameters (one-way)"]

    paths = release_outputs(tmp_path)
    write_all(release_writers(rel, rel.sample(), paths))
    report = paths["report"].read_text()
    assert "- Structure: independent columns (asked for: one-way)." in report
    assert "| 1 structure | none: every column alone |" in report and "| 2 orientation | none: no edge |" in report
    assert "No edge over 8 columns" in report and "| 3 parameters | every column's one-way table |" in report
    assert [r[0] for r in budget_rows(rel)] == ["3 parameters"]
    assert json.loads(paths["graph_json"].read_text())["format"] == "privgraph.cpdag"
    assert "independent columns" in paths["report_html"].read_text()


def test_the_command_line_runs_the_toy(toy, asia_3k, tmp_path):
    from privgraph.cli import app

    net, X = asia_3k
    X.to_csv(tmp_path / "asia.csv", index=False)
    write_codebook(net.domain, tmp_path / "asia.json")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["release", str(tmp_path / "asia.csv"), "--domain", str(tmp_path / "asia.json"),
                                   "--epsilon", "1", "--structure", toy, "--seed", "0", "--out", str(out)],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "released graph (0 directed, 0 undirected edges), 8 distinct model tables (8 one-way" in res.output
    assert "independent columns" in (out / "report.md").read_text()
    plan = CliRunner().invoke(app, ["plan", "--domain", str(tmp_path / "asia.json"), "--rows", "3000",
                                    "--epsilon", "1", "--json"])
    assert plan.exit_code == 0, plan.output


def test_an_unregistered_structure_is_refused_by_the_command_line(tmp_path, asia_3k):
    from privgraph.cli import app

    net, X = asia_3k
    X.to_csv(tmp_path / "asia.csv", index=False)
    write_codebook(net.domain, tmp_path / "asia.json")
    res = CliRunner().invoke(app, ["release", str(tmp_path / "asia.csv"), "--domain", str(tmp_path / "asia.json"),
                                   "--epsilon", "1", "--structure", "one-way", "--out", str(tmp_path / "o")])
    assert isinstance(res.exception, InvalidInput) and "--structure must be one of" in str(res.exception)
    assert not (tmp_path / "o").exists()


def test_the_declared_choices_are_auto_and_the_registry():
    from privgraph.declarations import RELEASE_STRUCTURES

    assert RELEASE_STRUCTURES == ("auto", *STRUCTURES) and STRUCTURES.missing() == ["auto"]
    assert list(STRUCTURES) == ["gauss-pc", "priv-pc", "tree"]


# -- the contract every registered structure keeps (the toy with them) ------------------------

def _costs(ledger):
    """What each charge costs: (mechanism, relation, count, epsilon, delta). A PC structure's
    parameters' tables are known once the graph is, so the plan fixes their cost, not their
    per-table sensitivity; under add/remove the fit plans at the size it releases."""
    return [(c.mechanism, c.neighbours, c.count, pytest.approx(c.epsilon, rel=1e-12), pytest.approx(c.delta, abs=1e-15))
            for c in ledger]


@pytest.fixture(params=[*STRUCTURES, OneWay.name])
def structure(request, monkeypatch):
    """Every registered structure, and the toy registered for the test."""
    if request.param not in STRUCTURES:
        monkeypatch.setitem(STRUCTURES, OneWay.name, OneWay())
    return request.param


def _release(structure, neighbours="replace_one", seed=0):
    return PrivateRelease(epsilon=2.0, structure=structure, neighbours=neighbours, random_state=seed)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_every_structure_spends_its_plan(structure, neighbours, asia_3k):
    net, X = asia_3k
    est = _release(structure, neighbours)
    guess = est.privacy_plan(net.domain, len(X))  # before any data: the guarantee
    fitted = est.fit(X, domain=net.domain)
    assert fitted.structure_kind_ == structure and fitted.plan_.structure == structure
    # the plan at the public size the fit planned at (under add/remove the size it released, or,
    # for a structure that needs no n, its estimate: its charges do not depend on it)
    plan = est.privacy_plan(net.domain, fitted.plan_.n_rows)
    assert plan.relation is Neighbours.parse(neighbours) and fitted.ledger_.neighbours == {plan.relation}
    assert plan.composition == guess.composition == fitted.composition_
    assert fitted.composition_ == STRUCTURES[structure].accountant(est, fitted.plan_).name
    assert _costs(plan) == _costs(fitted.ledger_)
    total = fitted.ledger_.total(fitted.composition_, est.delta).epsilon
    assert total == pytest.approx(guess.total(guess.composition, est.delta).epsilon, rel=1e-12) and total <= 2.0 + 1e-9
    stage = STRUCTURES[structure]  # the report's words: every part of the ledger once
    sized = 1 if fitted.plan_.size_epsilon else 0
    assert sized + sum(len(ledger.charges) for _, _, ledger in stage.budget(fitted)) == len(fitted.ledger_.charges)
    assert all(isinstance(text, str) and text for text in (stage.label, stage.structure_row(fitted),
                                                            stage.orientation_row(fitted), stage.parameters_row(fitted),
                                                            stage.graph_text(fitted), stage.size_use(fitted)))


def test_every_structure_gives_one_release_for_one_seed(structure, asia_3k):
    net, X = asia_3k
    first, second = (_release(structure, seed=3).fit(X, domain=net.domain) for _ in range(2))
    assert first.ledger_ == second.ledger_ and first.cliques_ == second.cliques_
    assert first.graph_.undirected_edges == second.graph_.undirected_edges
    assert first.graph_.directed_edges == second.graph_.directed_edges
    assert first.sample(200).equals(second.sample(200))


def test_every_structure_clones(structure):
    from privgraph.estimator import NotFittedError

    est = _release(structure, "add_remove")
    twin = type(est)(**est.get_params())
    assert twin is not est and twin.get_params() == est.get_params() and twin.structure == structure
    assert f"structure='{structure}'" in repr(est)
    sklearn = pytest.importorskip("sklearn.base")
    assert sklearn.clone(est).get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        twin.ledger_
