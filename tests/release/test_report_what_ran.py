"""report.md names what actually ran: the structure chosen, the model's inference (exact or
approximate) and the sampler that drew the synthetic rows, not the option asked for."""

import json

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
    assert "Model's inference: exact (junction tree)" in report and "loopy" not in report
    assert "by controlled rounding" in report and "Gibbs" not in report
    assert "Structure: private spanning tree (asked for: tree)" in report
    iid = release_report(files, "iid", "--sampling", "sample")
    assert "i.i.d." in iid and "controlled rounding" not in iid


def test_a_model_beyond_the_exact_limit_is_reported_approximate_and_gibbs(files, monkeypatch):
    """With the exact-inference limit below asia's junction tree, the fit runs loopy BP and
    the rows come from Gibbs sampling though controlled rounding was asked for: the report
    must say so."""
    from privgraph.mrf import inference

    monkeypatch.setattr(inference, "MAX_TREE_CELLS", 2)
    report = release_report(files, "gibbs", "--sampling", "round")
    assert "Model's inference: approximate (loopy belief propagation" in report
    assert "by Gibbs sampling" in report and "by controlled rounding through" not in report


def test_ledger_json_compares_methods_apart_from_the_guarantee(files):
    release_report(files, "ledger")
    ledger = json.loads((files / "ledger" / "ledger.json").read_text())
    compared = ledger["accounting_methods_compared"]
    assert compared[ledger["composition"]]["epsilon"] == ledger["epsilon"] <= 4.0
    assert "guarantee" in compared["note"]
