"""Issue 45, item 5: every word of report.md (and of graph.json, model.json, the command's
lines) is generated from what ran: the size's reason and share, each stage's text by path,
the budget rows by what they paid for, the model's distinct tables, one whole ledger."""

import json
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privgraph.cli import app
from privgraph.data import draft_codebook
from privgraph.data.domain import Domain
from privgraph.data.frontdoor import first_level_notice
from privgraph.outputs import write_all
from privgraph.release import PrivateRelease
from privgraph.release.report import (
    _orientation_row, _structure_row, budget_rows, distinct_tables, release_outputs, release_writers,
)


def written(rel, tmp_path):
    paths = release_outputs(tmp_path)
    write_all(release_writers(rel, rel.sample(), paths))
    return {role: p for role, p in paths.items()}


@pytest.fixture(scope="module")
def asia_3k():
    from privgraph.datasets import load_network, sample_frame

    net = load_network("asia")
    return net, sample_frame(net, 3_000, np.random.default_rng(0), labels=True)


def test_auto_choosing_the_tree_says_why_it_released_the_size_and_its_share(asia_3k, tmp_path):
    """At delta = 0 "auto" chooses at a released size (Priv-PC or the tree); the tree reads no size."""
    net, X = asia_3k
    rel = PrivateRelease(epsilon=1.0, delta=0.0, random_state=0).fit(X, domain=net.domain)
    assert rel.structure_kind_ == "tree" and rel.plan_.size_epsilon > 0  # auto chose from a released size
    report = written(rel, tmp_path)["report"].read_text()
    size = next(line for line in report.splitlines() if line.startswith("| 0 size | the number of rows with"))
    assert "secret uniform subset" not in size and "the tree then ran on all rows and reads no size" in size
    assert f"1% of epsilon ({rel.plan_.size_epsilon:.4g})" in size and rel.plan_.size_epsilon == pytest.approx(0.01)


def test_auto_at_positive_delta_runs_the_tree_without_a_size_and_says_why(asia_3k, tmp_path):
    """At delta > 0 "auto" names the tree from public facts (resolve_structure): no size is spent,
    the ledger is the tree's asked for by name, and the report's planner notes say why."""
    net, X = asia_3k
    rel = PrivateRelease(epsilon=1.0, random_state=0).fit(X, domain=net.domain)
    tree = PrivateRelease(epsilon=1.0, structure="tree", random_state=0).fit(X, domain=net.domain)
    assert rel.structure_kind_ == "tree" and rel.plan_.size_epsilon == 0
    assert rel.ledger_.rows() == tree.ledger_.rows()
    report = written(rel, tmp_path)["report"].read_text()
    assert "0 size" not in report and "auto chose the spanning tree with AIM's adaptive rounds" in report


def test_the_tree_is_exported_as_a_tree_and_never_oriented(asia_3k, tmp_path):
    net, X = asia_3k
    rel = PrivateRelease(epsilon=1.0, structure="tree", random_state=0).fit(X, domain=net.domain)
    paths = written(rel, tmp_path)
    report = paths["report"].read_text()
    assert "Meek" not in report and "CPDAG" not in report.split("## Planner")[0].replace("not a CPDAG", "")
    assert "| 2 orientation | none: the tree is an undirected dependence structure" in report
    assert "0 size" not in report  # --structure tree under add/remove releases no size
    graph = json.loads(paths["graph_json"].read_text())
    assert graph["format"] == "privgraph.tree" and "no causal claim" in graph["structure"]
    assert {frozenset(e) for e in graph["edges"]} == {frozenset(e) for e in rel.structure_.edges}
    assert "directed" not in graph and "undirected" not in graph
    dot = paths["graph_dot"].read_text()
    assert dot.startswith("graph tree {") and "->" not in dot and dot.count(" -- ") == len(rel.structure_.edges)


def test_budget_rows_say_what_each_part_paid_for_and_cover_the_whole_ledger(asia_3k, tmp_path):
    net, X = asia_3k
    for delta in (1e-6, 0.0):
        rel = PrivateRelease(epsilon=1.0, delta=delta, structure="tree", random_state=0).fit(X, domain=net.domain)
        rows = budget_rows(rel)
        paid = [c for _, ledger in rel.structure_.paid for c in ledger.charges]
        assert sorted(map(repr, paid)) == sorted(map(repr, rel.structure_.ledger.charges))  # each labelled once
        whats = [what for _, what, _ in rows]
        assert whats[0] == "the 8 one-way tables" and any("exponential mechanism" in w for w in whats)
        assert ("AIM's adaptive rounds" in " ".join(whats)) == (delta > 0)
        assert rows[-1][0] == "3 parameters" and "residual pair tables" in rows[-1][1]
        (tmp_path / str(delta)).mkdir()
        report = written(rel, tmp_path / str(delta))["report"].read_text()
        for stage, what, eps in rows:
            assert f"| {stage} | {what} | {eps:.4g} |" in report


def test_model_json_holds_one_whole_ledger(asia_3k, tmp_path):
    net, X = asia_3k
    rel = PrivateRelease(epsilon=1.0, structure="tree", random_state=0).fit(X, domain=net.domain)
    paths = written(rel, tmp_path)
    model = json.loads(paths["model"].read_text())
    assert "ledger" not in model and "caveats" not in model
    assert model["privacy"]["ledger"] == rel.ledger_.rows() == json.loads(paths["ledger"].read_text())["ledger"]
    assert len(model["privacy"]["ledger"]) > len(rel.parameters_.ledger_.rows())


def test_the_report_and_the_command_count_the_same_distinct_tables(asia_3k, tmp_path):
    net, X = asia_3k
    X.to_csv(tmp_path / "asia.csv", index=False)
    from privgraph.data.codebook import write_codebook

    write_codebook(net.domain, tmp_path / "asia.json")
    (tmp_path / "out").mkdir()
    res = CliRunner().invoke(app, ["release", str(tmp_path / "asia.csv"), "--domain", str(tmp_path / "asia.json"),
                                   "--epsilon", "1", "--out", str(tmp_path / "out"), "--seed", "4",
                                   "--structure", "tree"], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    said = int(re.search(r"(\d+) distinct model tables", res.output).group(1))
    report = int(re.search(r"Model: (\d+) distinct tables", (tmp_path / "out" / "report.md").read_text()).group(1))
    cliques = json.loads((tmp_path / "out" / "model.json").read_text())["cliques"]
    assert said == report == len({frozenset(c) for c in cliques}) < len(cliques)  # asia seed 4 measures two tables twice


def test_distinct_tables_counts_a_pair_once():
    assert distinct_tables([("a",), ("a", "b"), ("b", "a"), ("c",), ("a", "b")]) == [("a",), ("a", "b"), ("c",)]


def test_priv_pc_path_says_colliders_meek_and_the_subset(asia_3k, tmp_path):
    net, X = asia_3k
    rel = PrivateRelease(epsilon=1.0, structure="priv-pc", random_state=0).fit(X, domain=net.domain)
    paths = written(rel, tmp_path)
    report = paths["report"].read_text()
    assert "| 1 structure | Priv-PC (" in report and "colliders and Meek's rules on Priv-PC's separating sets" in report
    assert "secret uniform subset" in report and "reads no size" not in report
    assert "A CPDAG with" in report and json.loads(paths["graph_json"].read_text())["format"] == "privgraph.cpdag"
    assert "| 1 structure | Priv-PC's tests (" in report


def test_gauss_pc_path_names_its_releases(tmp_path):
    from privgraph.datasets import load_network, sample_frame

    net = load_network("asia")
    X = sample_frame(net, 20_000, np.random.default_rng(0), labels=True)
    rel = PrivateRelease(epsilon=4.0, structure="gauss-pc", random_state=0).fit(X, domain=net.domain)
    assert rel.structure_kind_ == "gauss-pc"
    report = written(rel, tmp_path)["report"].read_text()
    assert "one Gaussian release per level of PC" in report and "Gauss-PC's separating sets" in report
    assert "Priv-PC" not in report.split("## Planner")[0]


def _pc(method, ci_test):
    structure = SimpleNamespace(method_=method, ci_test_=ci_test, rounds_=3, complete_=True)
    if method is None:
        del structure.method_
    return SimpleNamespace(structure_kind_="gauss-pc" if method != "priv-pc" else "priv-pc", structure_=structure,
                           orientation=None, is_consistent_extension_=True)


@pytest.mark.parametrize("method, ci_test, words", [
    (None, "fisher-z", "PC (fisher-z test: one private covariance matrix, PC on it for free)"),
    ("gauss-pc", "rank", "Gauss-PC (rank test: one private matrix of Kendall's tau"),
    ("tables-pc", "chi-square", "Tables-PC (Gaussian releases of the tables of levels 0-2's tests"),
    ("gauss-pc", "g", "Gauss-PC (g test, one Gaussian release per level of PC, zCDP)"),
    ("priv-pc", "kendall", "Priv-PC (kendall test, cap 3 rounds, complete)"),
])
def test_each_pc_path_describes_what_ran(method, ci_test, words):
    release = _pc(method, ci_test)
    assert _structure_row(release).startswith(words)
    name = words.split(" (")[0]
    assert _orientation_row(release).startswith(f"colliders and Meek's rules on {name}'s separating sets")


def test_first_level_notice_only_for_a_codebook_that_matched_nothing():
    d = Domain(("gain", "flag"), (3, 2), levels=(("0", "1", "2"), ("0", "1")))
    assert first_level_notice(d, {"gain": [0.92, 0.05, 0.03], "flag": [0.6, 0.4]}) is None  # skewed, not recoded
    assert first_level_notice(d, {"gain": [0.985, 0.012, 0.003]}) is None  # a visible second level
    notice = first_level_notice(d, {"gain": [0.92, 0.05, 0.03], "flag": [0.997, 0.003]})
    assert notice is not None and "flag ('0'" in notice and "gain (" not in notice


def test_the_command_notices_a_recoded_column_and_not_a_skewed_one(asia_3k, tmp_path):
    net, X = asia_3k
    from privgraph.data.codebook import write_codebook

    X = pd.concat([X] * 4, ignore_index=True)  # 12,000 rows: the noise's share of a level well under 1%
    X.to_csv(tmp_path / "asia.csv", index=False)
    levels = list(net.domain.levels)
    levels[0] = tuple(f"{v}-renamed" for v in levels[0])  # asia's values match no level: all recoded
    write_codebook(Domain(net.domain.names, net.domain.sizes, net.domain.kinds, tuple(levels)),
                   tmp_path / "bad.json")
    write_codebook(net.domain, tmp_path / "good.json")
    outputs = {}
    for name in ("bad", "good"):
        (tmp_path / name).mkdir()
        res = CliRunner().invoke(app, ["release", str(tmp_path / "asia.csv"), "--domain", str(tmp_path / f"{name}.json"),
                                       "--epsilon", "2", "--out", str(tmp_path / name), "--seed", "0",
                                       "--structure", "tree"], env={"COLUMNS": "400"})
        assert res.exit_code == 0, res.output
        outputs[name] = res.output
    assert "note: the released model puts" in outputs["bad"] and "column(s) asia (" in outputs["bad"]
    assert "note: the released model puts" not in outputs["good"]


def test_draft_orders_numbered_text_levels_by_their_first_number():
    frame = pd.DataFrame({"built": ["1985-1989", "before-1980", "1980-1984", "1990+", "1985-1989"],
                          "colour": ["red", "blue", "red", "green", "blue"]})
    d = draft_codebook(frame)
    assert d.levels[0] == ("before-1980", "1980-1984", "1985-1989", "1990+")
    assert d.levels[1] == ("blue", "green", "red")  # no numbers: alphabetical
