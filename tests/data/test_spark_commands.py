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


CHECKED = (b"a,s,x,z\n"
           b"yes,1,0.5,3\nno,2.0,9,abc\nmaybe,3,,-4\n,4,1.5,100\n\"yes\",1, 2 ,5\nno,1,x,1e3\n"
           b"bad line with,too,many,fields,here\n\"no,1,1,1\ny\xff,1,1,1\n")
#: Per column (missing, outside) of CHECKED: its 3 lines that do not parse are records of
#: missing values; "2.0" spells level 2, " 2 " the bound 2; z's numbers are clipped into its bins.
CHECKED_COUNTS = (9, 3, {"a": (4, 1), "s": (3, 1), "x": (4, 2), "z": (3, 1)})


@pytest.fixture
def checked_file(tmp_path):
    (tmp_path / "c.csv").write_bytes(CHECKED)
    (tmp_path / "c.json").write_text(json.dumps({"format": "privgraph-domain", "version": 1, "columns": [
        {"name": "a", "kind": "nominal", "levels": ["no", "yes"]},
        {"name": "s", "kind": "ordinal", "levels": [1, 2, 3]},
        {"name": "x", "kind": "continuous", "bounds": [0, 2]},
        {"name": "z", "kind": "continuous", "bounds": [0, 10], "bins": 2}]}))
    return tmp_path / "c.csv", tmp_path / "c.json"


def test_the_check_counts_by_hand_through_duckdb(checked_file):
    from privgraph.data import read_codebook
    from privgraph.data.invalid_values import count_invalid_values

    assert count_invalid_values(checked_file[0], read_codebook(checked_file[1])) == CHECKED_COUNTS


@requires_spark
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_domain_check_through_spark_is_duckdbs(spark, monkeypatch, capsys, checked_file, fmt):
    """The same counts, one Spark job for the query, and the same printed table as DuckDB's."""
    import pandas as pd

    from privgraph.data import read_codebook
    from privgraph.data.files import read_table
    from privgraph.data.invalid_values import count_invalid_values

    path, book = checked_file
    if fmt == "parquet":  # the CSV's records as text, and an integer column where the levels are numbers
        frame = read_table(path, as_text=True)
        frame["s"] = pd.to_numeric(frame["s"], errors="coerce").astype("Int64")
        path = path.with_suffix(".parquet")
        frame.to_parquet(path)
    domain = read_codebook(book)
    duck = count_invalid_values(path, domain, "duckdb")
    if fmt == "csv":
        assert duck == CHECKED_COUNTS
    group = f"check-{fmt}"
    spark.sparkContext.setJobGroup(group, "domain --check")
    assert count_invalid_values(path, domain, "spark") == duck
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup(group)
    assert len(jobs) == (1 if fmt == "csv" else 2)  # Parquet: Spark first reads the file's schema in a job
    printed = {}
    for engine in ("duckdb", "spark"):
        status, out, err = run_main(monkeypatch, capsys, "domain", path, "--check", book, "--engine", engine)
        assert status == 0, err
        printed[engine] = out
    assert printed["spark"] == printed["duckdb"] and "│ x" in printed["duckdb"]


def chain_file(folder, columns: int, rows: int = 3000):
    """A CSV of ``columns`` 3-level columns, each a noisy copy of the one before (seeded), and
    its codebook: wider than one joint table from 15 columns on (3^15 > 2^22 cells)."""
    import numpy as np
    import pandas as pd

    from privgraph.data import Domain, write_codebook

    rng = np.random.default_rng(1)
    codes = np.zeros((rows, columns), dtype=int)
    codes[:, 0] = rng.integers(0, 3, rows)
    for j in range(1, columns):
        codes[:, j] = np.where(rng.random(rows) < 0.3, rng.integers(0, 3, rows), codes[:, j - 1])
    names = [f"c{j}" for j in range(columns)]
    pd.DataFrame({n: np.array(["l0", "l1", "l2"])[codes[:, j]] for j, n in enumerate(names)}).to_csv(
        folder / f"chain{columns}.csv", index=False)
    write_codebook(Domain(tuple(names), (3,) * columns, levels=(("l0", "l1", "l2"),) * columns),
                   folder / f"chain{columns}.json")
    return folder / f"chain{columns}.csv", folder / f"chain{columns}.json"


#: The most Spark jobs each command launches (docs/data.md, "Count engines"), whatever the
#: number of columns and tables: the first scan (NULLs and complete rows of the coded view)
#: and the distinct rows' grouped query, once per engine a command opens.
MOST_JOBS = {"discover": 2, "fit-mrf": 2, "release": 2}


@requires_spark
@pytest.mark.parametrize("command", ["discover", "fit-mrf", "release"])
def test_the_spark_jobs_of_a_command_do_not_grow_with_its_tables(spark, monkeypatch, capsys, tmp_path, command):
    """16 and 32 columns (PC's tests, the tree's 15 and 31 tables, or the model's tables) run in
    the same few jobs: the distinct rows once, then every table in memory, never one job a table."""
    extra = {"discover": [], "fit-mrf": ["--cliques", "c0,c1;c1,c2"], "release": ["--structure", "tree"]}[command]
    jobs = {}
    for columns in (16, 32):
        data, book = chain_file(tmp_path, columns)
        out = tmp_path / (f"{command}{columns}" + ("" if command == "release" else ".json"))
        if command == "release":
            out.mkdir()
        group = f"jobs-{command}-{columns}"
        spark.sparkContext.setJobGroup(group, command)
        status, _, err = run_main(monkeypatch, capsys, command, data, "--domain", book, "--epsilon",
                                  1 if command == "release" else 20, "--seed", 3, "--engine", "spark", *extra,
                                  "--out", out)
        assert status == 0, err
        jobs[columns] = len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))
    assert jobs[16] == jobs[32] and 0 < jobs[32] <= MOST_JOBS[command], jobs


@requires_spark
def test_under_spark_submit_the_session_runs_on_its_master(tmp_path):
    """spark-submit's --master, not local[*], when neither --spark-master nor the variable is set."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import pyspark

    script = tmp_path / "submitted.py"
    script.write_text("from privgraph.data.engines.spark_engine import spark_session\n"
                      "print('MASTER', spark_session().sparkContext.master)\n")
    env = {k: v for k, v in os.environ.items() if k != MASTER_VARIABLE}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2] / "src"), env.get("PYTHONPATH", "")])
    env["PYSPARK_PYTHON"] = sys.executable
    submit = Path(pyspark.__path__[0]) / "bin" / "spark-submit"
    run = subprocess.run([str(submit), "--master", "local[1]", str(script)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert "MASTER local[1]" in run.stdout, run.stderr[-2000:]


@requires_spark
def test_priv_pc_on_a_wide_table_through_spark_is_duckdbs(spark, monkeypatch, capsys, tmp_path):
    """No joint table (16 columns): Priv-PC's secret sub-sample is drawn from the distinct rows,
    which each engine returns in its own order; sorted first, the same seed gives the same graph."""
    data, book = chain_file(tmp_path, 16)
    outs = through_each_engine(monkeypatch, capsys, "discover", data, book, 20, lambda e: tmp_path / f"{e}.json")
    results = {e: json.loads(o.read_text()) for e, o in outs.items()}
    assert results["spark"] == results["duckdb"] and results["duckdb"]["directed"] + results["duckdb"]["undirected"]
