"""``privgraph discover``: the main job's command."""

import json
import sys

import pytest
from typer.testing import CliRunner

from privgraph.cli import app, main
from privgraph.data import Domain, write_codebook


def test_discover_on_a_network_prints_graph_privacy_and_metrics(tmp_path):
    out, plot = tmp_path / "g.json", tmp_path / "g.png"
    result = CliRunner().invoke(app, ["discover", "--network", "cancer", "--samples", "20000", "--epsilon", "5",
                                      "--seed", "1", "--out", str(out), "--plot", str(plot)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = result.output
    assert "NOT private" in text and "CPDAG" in text and "Privacy" in text
    assert text.count("privacy: (5, 1e-06)-DP under replace-one, composed by optimal") == 1
    assert "skeleton" in text and "SHD" in text
    assert set(json.loads(out.read_text())["nodes"]) == {"Pollution", "Smoker", "Cancer", "Xray", "Dyspnoea"}
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.tmp*"))


def test_discover_on_a_file_without_truth(tmp_path):
    """A file needs a domain; with one, the command's graph is the estimator's on the same file
    (and no score against a truth it does not have)."""
    import numpy as np
    import pandas as pd

    from privgraph.causal import PrivPC
    from privgraph.datasets import load_network, sample

    net = load_network("asia")
    path, codebook, out = tmp_path / "d.csv", tmp_path / "d.json", tmp_path / "g.json"
    pd.DataFrame(sample(net, 5000, np.random.default_rng(0)), columns=net.domain.names).to_csv(path, index=False)
    refused = CliRunner().invoke(app, ["discover", str(path), "--method", "pc"], env={"COLUMNS": "200"})
    assert isinstance(refused.exception, ValueError) and "no public domain" in str(refused.exception)
    write_codebook(Domain(net.domain.names, net.domain.sizes, net.domain.kinds), codebook)  # codes
    result = CliRunner().invoke(app, ["discover", str(path), "--method", "pc", "--domain", str(codebook),
                                      "--out", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "NOT private" in result.output and "SHD" not in result.output
    written = json.loads(out.read_text())
    fitted = PrivPC(method="pc").fit(str(path), domain=str(codebook)).graph_
    assert {frozenset(e) for e in written["undirected"]} == {frozenset(e) for e in fitted.undirected_edges}
    assert {tuple(e) for e in written["directed"]} == set(fitted.directed_edges)
    assert written["undirected"] or written["directed"], "asia's 5,000 rows show some edge"


def test_discover_with_the_tie_corrected_kendall_test_finds_cancers_rare_edge():
    """Pollution - Cancer (levels of 10% and 1%): removed by the paper's Kendall test at this
    size, kept once ties are counted (tests/stats/test_kendall_ties.py has the figures)."""
    args = ["discover", "--network", "cancer", "--samples", "100000", "--method", "pc", "--seed", "0"]
    found = {}
    for ci in ("kendall", "kendall-ties"):
        result = CliRunner().invoke(app, [*args, "--ci-test", ci], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        found[ci] = "isolated: Pollution" not in result.output
    assert found == {"kendall": False, "kendall-ties": True}


@pytest.mark.parametrize("args,message", [
    (["--network", "asia", "--samples", "100000", "--epsilon", "0.01"], "needs epsilon >="),
    (["--network", "asia", "--alpha", "2"], "alpha must lie in (0, 1)"),
    (["--network", "nowhere"], "no bundled network"),
    (["--network", "asia", "--ci-test", "tau"], "kendall-ties"),
    ([], "exactly one"),
])
def test_bad_input_is_one_line_and_exit_status_2(monkeypatch, capsys, args, message):
    monkeypatch.setattr(sys, "argv", ["privgraph", "discover", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
