"""report.md names what actually ran: the structure chosen, the model's inference (exact or
approximate) and the sampler that drew the synthetic rows, not the option asked for."""

import json
import re

import pytest
from typer.testing import CliRunner

from privgraph.cli import app


@pytest.fixture
def files(tmp_path, asia):
    net, X = asia(3_000)
    X.to_csv(tmp_path / "asia.csv", index=False)
    assert CliRunner().invoke(app, ["sample", "--network", "asia", "--samples", "10", str(tmp_path / "x.csv"),
                                    "--domain-out", str(tmp_path / "asia.json")]).exit_code == 0
    return tmp_path


def release_report(folder, name, *extra):
    out = folder / name
    out.mkdir()
    res = CliRunner().invoke(app, ["release", str(folder / "asia.csv"), "--domain", str(folder / "asia.json"),
                                   "--epsilon", "4", "--out", str(out), "--seed", "0", "--structure", "tree", *extra],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return (out / "report.md").read_text()


def test_the_default_path_is_reported_exact_and_rounded(files):
    report = release_report(files, "default")
    assert "Model's inference: exact (junction tree)" in report and "approximate" not in report
    assert "by controlled rounding" in report and "by Gibbs sampling" not in report
    assert "Structure: private spanning tree (asked for: tree)" in report
    assert re.search(r"Adaptive rounds: \d+ adaptive rounds \(AIM's, one zCDP filter; \d+ annealed\) measuring \d+ "
                     r"pairs", report)  # delta > 0: AIM's rounds ran, and the report says how many
    pure = release_report(files, "pure", "--delta", "0")
    assert "Adaptive rounds" not in pure
    iid = release_report(files, "iid", "--sampling", "sample")
    assert "i.i.d." in iid and "controlled rounding" not in iid


def test_the_release_stays_exact_whatever_the_mrf_limit(files, monkeypatch):
    """The release passes its own model-size cap to every fit and draw: even with the mrf
    package's exact-inference limit below asia's junction tree (where PrivateMRF would fall
    back to loopy BP and Gibbs sampling), the release fits and samples on the junction tree,
    and the report says so, with the tree's cells against the cap."""
    from privgraph.mrf import inference

    monkeypatch.setattr(inference, "MAX_TREE_CELLS", 2)
    report = release_report(files, "capped", "--sampling", "round")
    assert "Model's inference: exact (junction tree)" in report and "approximate" not in report
    assert "by Gibbs sampling" not in report
    assert "by controlled rounding through" in report
    assert "within the public model-size cap of 200,000 cells" in report


def test_a_small_model_cap_is_kept_and_reported(files):
    """``--tree-cap`` 20 (asia: 8 binary columns, 16 one-way cells): the tree's selections run
    on the pairs that keep the junction tree within 20 cells, so at most one pair table fits."""
    import re

    report = release_report(files, "small", "--tree-cap", "20")
    cells = int(re.search(r"Junction tree: ([\d,]+) cells", report).group(1).replace(",", ""))
    assert 16 <= cells <= 20


def test_a_model_cap_below_the_one_way_tables_stops_before_reading(files):
    out = files / "refused"
    out.mkdir()
    res = CliRunner().invoke(app, ["release", str(files / "asia.csv"), "--domain", str(files / "asia.json"),
                                   "--epsilon", "4", "--out", str(out), "--seed", "0", "--tree-cap", "15"],
                             env={"COLUMNS": "200"})
    assert res.exit_code != 0 and "tree_cap 15 is below the 16 cells" in str(res.exception)
    assert list(out.iterdir()) == []


def test_ledger_json_compares_methods_apart_from_the_guarantee(files):
    release_report(files, "ledger")
    ledger = json.loads((files / "ledger" / "ledger.json").read_text())
    compared = ledger["accounting_methods_compared"]
    assert compared[ledger["composition"]]["epsilon"] == ledger["epsilon"] <= 4.0
    assert "guarantee" in compared["note"]


def test_the_cli_tree_cap_default_is_the_estimators():
    import typer

    from privgraph.cli import app
    from privgraph.release import PrivateRelease
    from privgraph.release.cliques import DEFAULT_TREE_CAP

    options = {p.name: p for p in typer.main.get_command(app).get_command(None, "release").params}
    assert options["tree_cap"].default == DEFAULT_TREE_CAP == PrivateRelease().tree_cap
