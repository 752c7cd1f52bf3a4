"""One front door: every input kind through the estimators and the CLI (issue 12).

DataFrame, array with names, CSV and Parquet paths (DuckDB), a DuckDB relation, a Spark
DataFrame and a count engine give the same tables, so the same non-private PC skeleton and
the same released MRF tables for the same seed.
"""

import sys

import numpy as np
import pandas as pd
import pytest

from privgraph.causal import PrivPC
from privgraph.data import NumpyEngine, open_engine, write_codebook
from privgraph.datasets import load_network, sample_frame
from privgraph.mrf import PrivateMRF
from privgraph.privacy import Neighbours
from tests.data.conftest import requires_spark

NET = load_network("asia")


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    frame = sample_frame(NET, 4000, np.random.default_rng(3), labels=True)
    frame.loc[0, "smoke"] = np.nan  # one missing value: recoded (replace-one) or dropped (add/remove)
    root = tmp_path_factory.mktemp("kinds")
    text = frame.astype(object)
    text.to_csv(root / "d.csv", index=False)
    text.astype(str).replace("nan", None).to_parquet(root / "d.parquet")
    write_codebook(NET.domain, root / "d.json")
    return text, root


def kinds(frame, root, spark=None):
    import duckdb

    codes = np.stack([pd.Index(NET.domain.levels[i]).get_indexer(frame[n]) for i, n in enumerate(NET.domain.names)],
                     axis=1)
    out = {
        "frame": frame,
        "csv": str(root / "d.csv"),
        "parquet": root / "d.parquet",
        "relation": duckdb.sql(f"SELECT * FROM read_csv('{root / 'd.csv'}', all_varchar = true)"),
        "array": frame.to_numpy(),
    }
    if spark is not None:
        out["spark"] = spark.read.csv(str(root / "d.csv"), header=True)
    return out, codes


@pytest.mark.parametrize("neighbours", [Neighbours.REPLACE_ONE, Neighbours.ADD_REMOVE])
def test_every_kind_counts_the_same_tables(labelled, neighbours):
    frame, root = labelled
    inputs, _ = kinds(frame, root)
    engines = {k: open_engine(x, NET.domain, names=NET.domain.names if k == "array" else None,
                              neighbours=neighbours) for k, x in inputs.items()}
    reference = engines.pop("frame")
    for name, engine in engines.items():
        for cols in ([], ["smoke"], ["lung", "smoke", "xray"]):
            np.testing.assert_array_equal(engine.counts(cols), reference.counts(cols), err_msg=name)


def test_every_kind_through_the_estimators(labelled):
    frame, root = labelled
    inputs, codes = kinds(frame, root)
    truth = None
    for name, x in inputs.items():
        names = NET.domain.names if name == "array" else None
        pc = PrivPC(method="pc").fit(x, names=names, domain=root / "d.json")
        edges = {frozenset(e) for e in pc.skeleton_.edges}
        truth = edges if truth is None else truth
        assert edges == truth and len(truth) >= 3, name
        mrf = PrivateMRF(epsilon=1.0, cliques="smoke,lung;lung,xray", random_state=0)
        if name == "array":
            continue  # an object array of labels: PrivateMRF takes integer codes with a Domain
        tables = mrf.fit(x, domain=root / "d.json").marginals_.tables
        assert np.isclose(sum(t.sum() for t in tables), 2 * 3999, atol=200), name
    engine = NumpyEngine(NET.domain, np.where(codes < 0, 0, codes))
    assert {frozenset(e) for e in PrivPC(method="pc").fit(engine).skeleton_.edges} == truth


@requires_spark
def test_spark_frame_through_estimators_and_cli(labelled, spark, monkeypatch, capsys):
    frame, root = labelled
    inputs, _ = kinds(frame, root, spark)
    a = PrivPC(method="pc").fit(inputs["spark"], domain=root / "d.json")
    b = PrivPC(method="pc").fit(inputs["frame"], domain=root / "d.json")
    assert set(map(frozenset, a.skeleton_.edges)) == set(map(frozenset, b.skeleton_.edges))
    from privgraph.cli import main

    for command in (["discover", root / "d.csv", "--method", "pc"],
                    ["fit-mrf", root / "d.parquet", "--cliques", "smoke,lung", "--epsilon", 1, "--seed", 0]):
        monkeypatch.setattr(sys, "argv", ["privgraph", *map(str, command), "--domain", str(root / "d.json"),
                                          "--engine", "spark"])
        with pytest.raises(SystemExit) as done:
            main()
        out = capsys.readouterr().out
        assert done.value.code in (0, None), out
        assert "CPDAG" in out or "fitted cgm-em" in out


def _wide_inputs(tmp_path, n=500):
    """alarm (37 columns: no joint table) as labels in a CSV file, its codebook and codes."""
    net = load_network("alarm")
    frame = sample_frame(net, n, np.random.default_rng(8), labels=True).astype(str)
    frame.to_csv(tmp_path / "alarm.csv", index=False)
    write_codebook(net.domain, tmp_path / "alarm.json")
    return frame, tmp_path / "alarm.json"


def _pc_edges(x, book):
    return {frozenset(e) for e in PrivPC(method="pc", max_cond_size=1).fit(x, domain=book).skeleton_.edges}


def test_a_wide_duckdb_relation_gives_pc_its_distinct_rows_in_one_query(tmp_path, monkeypatch):
    import duckdb

    from privgraph.data.relation import RelationEngine

    frame, book = _wide_inputs(tmp_path)
    want = _pc_edges(frame, book)
    calls = []
    monkeypatch.setattr(RelationEngine, "counts", lambda self, *a, **k: calls.append(a))
    relation = duckdb.sql(f"SELECT * FROM read_csv('{tmp_path / 'alarm.csv'}', all_varchar = true)")
    assert _pc_edges(relation, book) == want and len(want) >= 10 and not calls


@requires_spark
def test_a_wide_spark_frame_gives_pc_its_distinct_rows(tmp_path, spark, monkeypatch):
    from privgraph.data import SparkEngine

    frame, book = _wide_inputs(tmp_path)
    want = _pc_edges(frame, book)
    calls = []
    monkeypatch.setattr(SparkEngine, "counts", lambda self, *a, **k: calls.append(a))
    assert _pc_edges(spark.read.csv(str(tmp_path / "alarm.csv"), header=True), book) == want and not calls
