"""Issue 30: the counting commands through ``--engine spark`` give what DuckDB gives for the
same seed (CI runs this against ``local-cluster[2,1,1024]``: two worker JVMs)."""

import json

import pytest

from privgraph.data.engines.spark_engine import MASTER_VARIABLE, spark_session

from tests.cli.test_fail_before_spending import run_main
from tests.data.conftest import requires_spark


@pytest.fixture
def asia_file(tmp_path):
    from privgraph.data import write_codebook
    from privgraph.datasets import load_network
    from privgraph.datasets.network import sample_frame
    import numpy as np

    net = load_network("asia")
    sample_frame(net, 3000, np.random.default_rng(5), labels=True).to_csv(tmp_path / "a.csv", index=False)
    frame = sample_frame(net, 1, np.random.default_rng(0), labels=True)
    from privgraph.data import Domain

    levels = tuple(tuple(frame[c].cat.categories) for c in frame.columns)
    write_codebook(Domain(net.domain.names, net.domain.sizes, net.domain.kinds, levels), tmp_path / "a.json")
    return tmp_path / "a.csv", tmp_path / "a.json"


@requires_spark
@pytest.mark.parametrize("neighbours", ["add_remove", "replace_one"])
def test_release_through_spark_is_duckdbs(spark, monkeypatch, capsys, tmp_path, asia_file, neighbours):
    data, codebook = asia_file
    outputs = {}
    for engine in ("duckdb", "spark"):
        out = tmp_path / engine
        out.mkdir()
        status, _, err = run_main(monkeypatch, capsys, "release", data, "--domain", codebook, "--epsilon", 1,
                                  "--seed", 3, "--neighbours", neighbours, "--engine", engine, "--out", out)
        assert status == 0, err
        outputs[engine] = {name: (out / name).read_text() for name in ("synthetic.csv", "graph.json")}
    assert outputs["spark"] == outputs["duckdb"]


@requires_spark
@pytest.mark.parametrize("command", ["discover", "fit-mrf"])
def test_discover_and_fit_mrf_through_spark_are_duckdbs(spark, monkeypatch, capsys, tmp_path, asia_file, command):
    data, codebook = asia_file
    results = {}
    for engine in ("duckdb", "spark"):
        out = tmp_path / f"{engine}.json"
        extra = ["--cliques", "asia,tub;smoke,lung;lung,either"] if command == "fit-mrf" else []
        status, _, err = run_main(monkeypatch, capsys, command, data, "--domain", codebook, "--epsilon", 5,
                                  "--seed", 3, "--engine", engine, *extra, "--out", out)
        assert status == 0, err
        results[engine] = json.loads(out.read_text())
    assert results["spark"] == results["duckdb"]


@requires_spark
def test_the_active_session_comes_first(spark, monkeypatch):
    monkeypatch.setenv(MASTER_VARIABLE, "local[1]")
    assert spark_session("local[3]") is spark
