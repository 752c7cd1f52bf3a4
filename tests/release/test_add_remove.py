"""The release under add/remove neighbours: n private (privgraph.release): the tree, which needs
no n, or the size released first and Gauss-PC / Priv-PC on a secret subset of that size."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import chi2, norm
from typer.testing import CliRunner

from privgraph.audit.auditor import threshold_events
from privgraph.audit.cases import AuditCase
from privgraph.audit.release_cases import added_row, release_cases
from privgraph.cli import app
from privgraph.data import Domain, NumpyEngine
from privgraph.datasets import load_network, sample_frame
from privgraph.privacy import Neighbours
from privgraph.release import PrivateRelease, plan_release
from privgraph.release.tree import ADAPTIVE_SHARE, RESIDUAL_SHARE, SELECTION_SHARE, l1_scores

AR, RO = Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE
FAILURE = 1e-6  # false-failure probability of each statistical check


def _codes(net, X):
    return np.column_stack([X[c].astype(str).map({str(v): i for i, v in enumerate(lv)}).to_numpy()
                            for c, lv in zip(net.domain.names, net.domain.levels)])


def test_add_remove_release_charges_its_plan_under_add_remove(asia):
    net, X = asia()
    rel = PrivateRelease(epsilon=1.0, neighbours="add_remove", structure="tree", random_state=4).fit(
        X, domain=net.domain)
    plan = PrivateRelease(epsilon=1.0, neighbours="add_remove", structure="tree").privacy_plan(
        net.domain, 12_345)  # n plays no part
    assert rel.structure_kind_ == "tree" and rel.ledger_.neighbours == {AR} and plan.neighbours == {AR}
    assert [(c.mechanism, c.count) for c in rel.ledger_] == [(c.mechanism, c.count) for c in plan]
    assert all(math.isclose(a.epsilon, b.epsilon) for a, b in zip(rel.ledger_, plan))
    assert rel.ledger_.total("rdp", 1e-6).epsilon <= 1.0
    assert {c.sensitivity for c in rel.ledger_ if c.mechanism == "exponential"} == {1}  # 2 under replace-one
    assert rel.plan_.tree.neighbours is AR and rel.plan_.n_rows == rel.n_rows_
    assert rel.sample().shape == (rel.n_rows_, len(net.domain.names))


def test_add_remove_tables_carry_the_noise_the_ledger_states(asia):
    """Each record adds one count to each table: L2 sensitivity sqrt(tables), 1/sqrt(2) of
    replace-one's; the selections keep replace-one's noise in score units at a quarter of the
    rho, so the tables get 1 - (0.15 + 0.1) / 4 - a of rho against 1 - 0.25 - a (a: the
    adaptive rounds' share), and the ledger's sigma is sqrt((0.75 - a) / (0.9375 - a)) / sqrt(2)
    of replace-one's. The released cells minus the true counts, each table's over its own
    scale (the one-way tables' is the ledger's; the adaptive rounds' their own), are standard
    Gaussian (chi-square(M) 1e-6 quantiles)."""
    net, X = asia()
    rel = PrivateRelease(epsilon=1.0, neighbours="add_remove", structure="tree", random_state=7).fit(
        X, domain=net.domain)
    ro = PrivateRelease(epsilon=1.0, structure="tree", neighbours="replace_one").privacy_plan(net.domain, len(X))
    engine = NumpyEngine(net.domain, _codes(net, X))
    noisy = rel.structure_.tables
    scales = noisy.group_scales
    errors = np.concatenate([np.ravel(noisy.tables[g] - engine.counts(list(c))) / scales[g]
                             for c, g in zip(noisy.cliques, noisy.ties)])
    sigma = float(rel.ledger_.charges[0].note.split("sigma ")[1].split(";")[0])
    sigma_ro = float(ro.charges[0].note.split("sigma ")[1].split(";")[0])
    assert scales[0] == pytest.approx(sigma, rel=1e-5) and len(set(scales)) > 1  # one-way; adaptive rounds
    ratio = float(np.sum(errors**2))
    assert chi2.ppf(FAILURE / 2, errors.size) <= ratio <= chi2.isf(FAILURE / 2, errors.size)
    assert rel.ledger_.charges[0].sensitivity == pytest.approx(math.sqrt(len(net.domain.names)))
    assert ro.charges[0].sensitivity == pytest.approx(math.sqrt(2 * len(net.domain.names)))
    shares, a = SELECTION_SHARE + RESIDUAL_SHARE, ADAPTIVE_SHARE
    assert sigma / sigma_ro == pytest.approx(math.sqrt((1 - shares - a) / (1 - shares / 4 - a) / 2), rel=2e-3)


def test_the_reported_rows_are_an_estimate_within_its_noise(asia):
    """n_rows_ is the inverse-variance average of every released table's total: its noise has
    standard deviation sigma / sqrt(sum 1/cells); it lies within the 1e-6 two-sided normal bound."""
    net, X = asia()
    rel = PrivateRelease(epsilon=1.0, neighbours="add_remove", structure="tree", random_state=11).fit(
        X, domain=net.domain)
    tables = rel.structure_.tables.tables + rel.parameters_.marginals_.tables
    sigma = rel.structure_.tables.scale
    sd = sigma / math.sqrt(sum(1 / np.size(t) for t in tables))
    assert abs(rel.n_rows_ - len(X)) <= norm.isf(FAILURE / 2) * sd + 0.5


def test_add_remove_score_sensitivity_is_one_with_the_prediction_fixed():
    """With the prediction (built from released tables and the released estimate of n) the same
    on both sides, an added row moves one count by one: the L1 score moves by at most 1."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        rows = rng.integers(0, 3, (30, 2))
        more = np.vstack([rows, rng.integers(0, 3, (1, 2))])
        p = rng.dirichlet(np.ones(9)).reshape(3, 3)
        n_hat = 30 + rng.normal(0, 3)  # the released estimate: the same constant on both sides
        tables = [np.histogram2d(r[:, 0], r[:, 1], bins=[np.arange(4) - 0.5] * 2)[0] for r in (rows, more)]
        diff = l1_scores([tables[0]], [p], n_hat) - l1_scores([tables[1]], [p], n_hat)
        assert abs(diff[0]) <= 1 + 1e-9


@pytest.mark.parametrize("structure, kind, composition", [("gauss-pc", "gauss-pc", "rdp"),
                                                            ("priv-pc", "priv-pc", "optimal")])
def test_a_pc_structure_releases_the_size_first_and_runs_on_a_subset(structure, kind, composition):
    """Stage 0 releases n (Laplace, sensitivity 1) with 1% of the budget; the structure runs on
    m rows, m the released size less its 1e-6 tail, its replace-one charges relabelled; the
    tables are add/remove (sensitivity 1); n_rows_ is the tables' estimate, not m."""
    net = load_network("asia")
    X = sample_frame(net, 100_000, np.random.default_rng(1), labels=True)
    rel = PrivateRelease(epsilon=1.0, neighbours="add_remove", structure=structure, random_state=2).fit(
        X, domain=net.domain)
    assert rel.structure_kind_ == kind and rel.composition_ == composition
    assert rel.ledger_.neighbours == {AR} and rel.ledger_.total(composition, 1e-6).epsilon <= 1.0 + 1e-9
    size = rel.ledger_.charges[0]
    assert (size.mechanism, size.sensitivity) == ("laplace", 1.0) and rel.plan_.size_epsilon == size.epsilon
    assert [s.stage for s in rel.plan_.stages][0] == "size"
    m = rel.plan_.n_rows
    assert 100_000 - 2_500 < m < 100_000 and rel.structure_.n_rows_ == m  # the structure saw m rows
    assert abs(rel.n_rows_ - 100_000) < 500 and rel.n_rows_ != m
    tables = [c for c in rel.ledger_ if c.mechanism in ("gaussian", "laplace")][1:]
    assert tables and all(c.neighbours is AR for c in tables)
    plan = PrivateRelease(epsilon=1.0, neighbours="add_remove", structure=structure).privacy_plan(net.domain, m)
    assert plan.neighbours == {AR} and plan.charges[0] == size
    assert rel.ledger_.total(composition, 1e-6).epsilon <= plan.total(composition, 1e-6).epsilon + 1e-9


def test_unknown_relations_are_refused_and_the_planner_plans_the_size():
    with pytest.raises(ValueError, match="neighbours"):
        PrivateRelease(neighbours="swap").privacy_plan(Domain.of(a=2, b=2, c=2), 100)
    plan = plan_release(load_network("asia").domain, 100_000, epsilon=1.0, neighbours="add_remove",
                        structure="gauss-pc")
    assert plan.structure == "gauss-pc" and plan.stages[0].stage == "size" and plan.neighbours == "add_remove"
    ro = plan_release(load_network("asia").domain, 100_000, epsilon=1.0, neighbours="replace_one",
                      structure="gauss-pc")
    assert plan.stages[2].noise < ro.stages[1].noise  # add/remove tables: L2 sensitivity 1, not sqrt(2)
    tree = plan_release(load_network("asia").domain, 100_000, epsilon=1.0, neighbours="add_remove", structure="tree")
    assert tree.structure == "tree" and tree.size_epsilon == 0.0
    auto = plan_release(load_network("asia").domain, 100_000, epsilon=1.0, neighbours="add_remove")  # delta > 0
    assert auto.structure == "tree" and auto.size_epsilon == 0.0 and auto.stages == tree.stages
    pure = plan_release(load_network("asia").domain, 100_000, epsilon=1.0, delta=0.0, neighbours="add_remove")
    assert pure.stages[0].stage == "size"  # delta = 0: the planner chooses at a released size


def test_neighbouring_files_differing_by_one_row_behave_alike(asia):
    """The auditor's boundary check: a table and the same table with one more row, same seed:
    the same plan, the same ledger, the same structure kind, the same number of tree edges and
    of last-round pairs, and a reported n that differs by the estimate's noise, not by a
    data-dependent branch. (The pairs AIM's adaptive rounds measure may differ in number: they
    are the exponential mechanism's choices and the annealing reads released tables, all
    inside the one charge of the rounds' filter, which both ledgers hold.)"""
    net, X = asia(5_000)
    bigger = X.iloc[np.r_[np.arange(len(X)), [0]]].reset_index(drop=True)
    for structure in ("tree", "auto"):
        runs = [PrivateRelease(epsilon=1.0, neighbours="add_remove", random_state=3, structure=structure).fit(
            t, domain=net.domain) for t in (X, bigger)]
        assert runs[0].ledger_.rows() == runs[1].ledger_.rows()
        assert runs[0].structure_kind_ == runs[1].structure_kind_ == "tree"  # auto at delta > 0: public facts
        assert len(runs[0].structure_.edges) == len(runs[1].structure_.edges)
        assert len(runs[0].structure_.last) == len(runs[1].structure_.last)
        assert abs(runs[0].n_rows_ - runs[1].n_rows_) <= 2  # same noise draws (seeded), one count apart
        assert runs[0].ledger_.charges[0].mechanism != "laplace"  # no size: the tree needs none


def test_the_rows_audit_case_catches_a_release_that_reports_the_true_n():
    """The end-to-end case ``release_tree_rows`` has teeth: the same case with a runner that
    reports the true number of rows (what a release under add/remove must not do) violates its
    claim at the case's full size (at quick size, 300 runs per side, no bound can pass about 3.7)."""
    (case,) = [c for c in release_cases() if c.name == "release_tree_rows"]
    assert case.neighbours is AR
    leaky = AuditCase("leaky_rows", "reports the true n", AR, case.epsilon, 0.0, *added_row(), case.pair,
                      lambda codes, n, sampler: np.full(n, float(len(codes))), threshold_events(), runs=case.runs,
                      quick_runs=case.quick_runs, group="estimators")
    assert leaky.audit(seed=0).violates(case.epsilon)


def test_cli_release_and_plan_under_add_remove(tmp_path):
    net = load_network("child")
    X = sample_frame(net, 3_000, np.random.default_rng(0), labels=True)
    data, domain, out = tmp_path / "child.csv", tmp_path / "child.json", tmp_path / "out"
    X.to_csv(data, index=False)
    out.mkdir()
    from privgraph.data.codebook import write_codebook

    write_codebook(net.domain, domain)
    runner = CliRunner()
    result = runner.invoke(app, ["release", str(data), "--domain", str(domain), "--epsilon", "1", "--out", str(out),
                                 "--neighbours", "add_remove", "--seed", "1"])
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    assert "**add/remove**" in report and "number of rows is private" in report
    ledger = json.loads((out / "ledger.json").read_text())
    assert ledger["neighbours"] == "add_remove" and {row["neighbours"] for row in ledger["ledger"]} == {"add_remove"}
    assert "n_rows_estimated" in json.loads((out / "model.json").read_text())["privacy"]
    result = runner.invoke(app, ["plan", "--domain", str(domain), "--rows", "3000", "--epsilon", "1",
                                 "--neighbours", "add_remove", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    assert plan["structure"] == "tree" and plan["neighbours"] == "add_remove"


def test_the_report_names_the_size_stage():
    from privgraph.release.report import budget_rows

    net = load_network("asia")
    X = sample_frame(net, 100_000, np.random.default_rng(3), labels=True)
    rel = PrivateRelease(epsilon=1.0, structure="gauss-pc", random_state=4).fit(X, domain=net.domain)
    rows = budget_rows(rel)
    assert [r[0] for r in rows] == ["0 size", "1 structure", "3 parameters"]
    assert rows[0][2] == rel.ledger_.charges[0].epsilon
    tree = PrivateRelease(epsilon=1.0, structure="tree", random_state=4).fit(X, domain=net.domain)
    assert "0 size" not in {r[0] for r in budget_rows(tree)}


def test_pure_dp_release_under_add_remove_spends_exactly_its_budget(asia):
    """delta = 0: the size takes 1% of epsilon, the rest composes by basic composition."""
    net, X = asia()
    for structure in ("auto", "priv-pc"):
        rel = PrivateRelease(epsilon=2.0, delta=0.0, structure=structure, random_state=1).fit(X, domain=net.domain)
        assert rel.plan_.size_epsilon == pytest.approx(0.02) and rel.ledger_.charges[0].epsilon == pytest.approx(0.02)
        assert rel.ledger_.neighbours == {AR} and rel.ledger_.total(rel.composition_).epsilon <= 2.0 + 1e-9

