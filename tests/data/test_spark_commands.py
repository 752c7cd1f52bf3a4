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


def through_each_engine(monkeypatch, capsys, command, data, codebook, epsilon, out, *extra):
    """``privgraph COMMAND DATA --domain CODEBOOK --epsilon E --seed 3 --engine ENGINE *extra
    --out out(ENGINE)`` for DuckDB and Spark: {engine: its out path}."""
    outs = {}
    for engine in ("duckdb", "spark"):
        outs[engine] = out(engine)
        status, _, err = run_main(monkeypatch, capsys, command, data, "--domain", codebook, "--epsilon", epsilon,
                                  "--seed", 3, "--engine", engine, *extra, "--out", outs[engine])
        assert status == 0, err
    return outs


def _directory(root):
    def make(engine):
        (root / engine).mkdir()
        return root / engine
    return make


@requires_spark
@pytest.mark.parametrize("neighbours", ["add_remove", "replace_one"])
def test_release_through_spark_is_duckdbs(spark, monkeypatch, capsys, tmp_path, asia_file, neighbours):
    outs = through_each_engine(monkeypatch, capsys, "release", *asia_file, 1, _directory(tmp_path),
                               "--neighbours", neighbours)
    read = {e: {name: (o / name).read_text() for name in ("synthetic.csv", "graph.json")} for e, o in outs.items()}
    assert read["spark"] == read["duckdb"]


@requires_spark
@pytest.mark.parametrize("command", ["discover", "fit-mrf"])
def test_discover_and_fit_mrf_through_spark_are_duckdbs(spark, monkeypatch, capsys, tmp_path, asia_file, command):
    extra = ["--cliques", "asia,tub;smoke,lung;lung,either"] if command == "fit-mrf" else []
    outs = through_each_engine(monkeypatch, capsys, command, *asia_file, 5, lambda e: tmp_path / f"{e}.json", *extra)
    results = {e: json.loads(o.read_text()) for e, o in outs.items()}
    assert results["spark"] == results["duckdb"]


@requires_spark
def test_the_active_session_comes_first(spark, monkeypatch):
    monkeypatch.setenv(MASTER_VARIABLE, "local[1]")
    assert spark_session("local[3]") is spark


@requires_spark
@pytest.mark.parametrize("invalid", ["recode", "drop"])
def test_fisher_z_moments_through_spark_are_duckdbs(spark, tmp_path, invalid):
    """The covariance's sums (one Spark SQL job) equal DuckDB's on the same CSV file: continuous
    values clipped to their bounds, an ordinal column by its code, bad values by the policy."""
    import numpy as np

    from privgraph.data import Domain, Kind
    from privgraph.data.frontdoor import open_file
    from privgraph.data.moments import moment_sums

    path = tmp_path / "m.csv"
    path.write_text("x,s,y\n0.5,no,3\n9,yes,-1\nabc,yes,2\n,no,0.25\n-4,maybe,1e3\n1.5,yes,inf\n")
    domain = Domain(("x", "s", "y"), (0, 2, 0), (Kind.CONTINUOUS, Kind.ORDINAL, Kind.CONTINUOUS),
                    ((), ("no", "yes"), ()), ((0.0, 2.0), None, (-1.0, 4.0)))
    duck = moment_sums(path, domain, invalid=invalid, norm=0.6)
    spark_m = moment_sums(open_file(path, "spark", domain.dialect), domain, invalid=invalid, norm=0.6)
    assert spark_m.count == duck.count
    np.testing.assert_allclose(spark_m.first, duck.first, atol=1e-12)
    np.testing.assert_allclose(spark_m.second, duck.second, atol=1e-12)
