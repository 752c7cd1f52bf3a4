"""PC, Priv-PC and causal-learn by width: CPU time, peak RSS and skeleton F1 (issue 13).

Networks from 8 to 100 columns (asia, child, insurance, alarm, hepar2 and a random
100-variable network, :func:`privgraph.datasets.random_network.random_network`, seed 0),
rows 1e4 to 1e6 (--rows). Each cell runs in a fresh process (so peak RSS is its own):

``pc``
    privgraph's non-private stable PC, G test, alpha 0.05, the default max conditioning
    size ``min(d - 2, floor(log2 n) - 5)``, public domain, data already in memory, the
    default convention (a table with no information keeps the edge).
``pc-cl``
    the same under causal-learn's convention (``GTest(degenerate="independent")``): the
    same test as causal-learn's, so the skeletons must be equal (``skeleton`` digests).
``pc-duckdb``
    ``pc`` from a Parquet file through DuckDB (``invalid="recode"``, memory limit 2 GB):
    one grouped query for the distinct rows, then the same in-memory counting; the file
    is written before the clock starts.
``pc-spark``
    ``pc`` from the same Parquet file through Spark (local[2], started before the clock):
    one job for the columns' values, one grouped job for the distinct coded rows
    (``SparkEngine.distinct_rows``), then the same counting. Compare by ``wall_s``: the
    JVM's CPU is not this process's.
``pc-spark-per-table``
    the same without ``distinct_rows`` (one Spark job per table: the path before it).
``causal-learn``
    causal-learn's stable PC, same test (gsq), alpha and max conditioning size
    (``depth``), same data; the ratio of CPU times is measured in one run.
``priv-pc``
    PrivPC(method="priv-pc", epsilon=1, delta=1e-6, Kendall), seeded noise (NOT private:
    experiments only); ``refused`` if the budget cannot pay for the default cap.
``gauss-pc``
    the same with method="gauss-pc" (one Gaussian release per level, zCDP).

CPU time is ``time.process_time()`` from the data in memory to the skeleton, with every
library imported before the clock (causal-learn's import alone costs about 1 CPU-s; until
this was fixed it fell inside the clock and inflated the ratios at 1e4 rows) and after a full
garbage collection of what the imports and the sampling left, for every method alike; a cell over
--timeout seconds of wall time is recorded as ``timeout``. F1 is against the true DAG's
skeleton. Rows go to benchmarks/results/discovery_wide.csv.

Run: python benchmarks/bench_wide.py [--networks asia,alarm] [--rows 10000,100000]
     [--methods pc,pc-cl,causal-learn,priv-pc] [--timeout 600] [--depth K]
"""

from __future__ import annotations

import argparse
import csv
import gc
import hashlib
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
NETWORKS = ("asia", "child", "insurance", "alarm", "hepar2", "random100")


def load(name: str):
    from privgraph.datasets import load_network
    from privgraph.datasets.random_network import random_network

    return random_network(100, np.random.default_rng(0)) if name == "random100" else load_network(name)


def one(name: str, n: int, method: str, depth: int | None = None) -> dict:
    """One cell, in this process: CPU seconds, peak RSS (MB), F1, tests; ``depth`` the largest
    conditioning set (None: the default rule, ``default_max_cond_size``)."""
    from privgraph.causal import NonPrivate, PrivPC, Tables, stable_pc_skeleton
    from privgraph.causal.deciders import BudgetTooSmall
    from privgraph.causal.estimators import default_max_cond_size
    from privgraph.data import NumpyEngine
    from privgraph.datasets import sample
    from privgraph.stats import GTest

    net = load(name)
    codes = sample(net, n, np.random.default_rng(0))
    depth = default_max_cond_size(n, len(net.domain.names)) if depth is None else depth
    names = net.domain.names
    if method in ("pc-duckdb", "pc-spark", "pc-spark-per-table"):
        import tempfile

        import pyarrow.parquet as pq
        from bench_large_file import labelled_table

        from privgraph.data.engines.duckdb_engine import DuckDBEngine

        path = Path(tempfile.mkdtemp()) / f"{name}.parquet"
        pq.write_table(labelled_table(codes, net.domain), path)
    if method.startswith("pc-spark"):
        from privgraph.data import SparkEngine

        spark = spark_session()
        if method == "pc-spark-per-table":  # the path before distinct_rows: one Spark job per table
            SparkEngine.distinct_rows = lambda self, max_rows: None
    if method == "causal-learn":
        from causallearn.search.ConstraintBased.PC import pc  # its import (about 1 s) outside the clock
    import threadpoolctl  # noqa: F401  privgraph's one lazy import on this path, outside the clock too
    gc.collect()  # the imports' garbage: a full collection inside the clock cost ~25 ms (alarm at 1e4 takes ~0.15 s)
    t0, w0 = time.process_time(), time.perf_counter()
    extra = {}
    if method.startswith("pc-spark"):
        tables = Tables.from_engine(SparkEngine(path, net.domain, spark=spark))
        sk = stable_pc_skeleton(names, NonPrivate(tables, GTest(), 0.05), max_cond_size=depth)
        found, extra["tests"] = {frozenset(e) for e in sk.graph.edges}, sk.n_tests
    elif method == "pc-duckdb":
        tables = Tables.from_engine(DuckDBEngine(path, net.domain, invalid="recode", memory_limit="2GB"))
        sk = stable_pc_skeleton(names, NonPrivate(tables, GTest(), 0.05), max_cond_size=depth)
        found, extra["tests"] = {frozenset(e) for e in sk.graph.edges}, sk.n_tests
    elif method in ("pc", "pc-cl"):
        tables = Tables.from_engine(NumpyEngine(net.domain, codes))
        test = GTest() if method == "pc" else GTest(degenerate="independent")
        sk = stable_pc_skeleton(names, NonPrivate(tables, test, 0.05), max_cond_size=depth)
        found, extra["tests"] = {frozenset(e) for e in sk.graph.edges}, sk.n_tests
    elif method == "causal-learn":
        cg = pc(codes.astype(np.int64), 0.05, "gsq", stable=True, show_progress=False, uc_rule=0, depth=depth)
        adj = cg.G.graph
        found = {frozenset((names[i], names[j])) for i in range(len(names)) for j in range(i + 1, len(names))
                 if adj[i, j] != 0 or adj[j, i] != 0}
    else:
        warnings.simplefilter("ignore")
        try:
            est = PrivPC(epsilon=1.0, delta=1e-6, method=method, max_cond_size=depth, random_state=0).fit(
                NumpyEngine(net.domain, codes))
        except BudgetTooSmall as e:
            return {"cpu_s": round(time.process_time() - t0, 3), "status": "refused", "note": str(e)[:120]}
        found = {frozenset(e) for e in est.skeleton_.edges}
        extra["complete"] = est.complete_
    cpu, extra["wall_s"] = time.process_time() - t0, round(time.perf_counter() - w0, 3)
    truth = {frozenset(e) for e in net.edges}
    f1 = 2 * len(truth & found) / (len(truth) + len(found)) if truth or found else 1.0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    digest = hashlib.sha1(repr(sorted(sorted(e) for e in found)).encode()).hexdigest()[:10]
    return {"cpu_s": round(cpu, 3), "peak_rss_mb": round(rss), "f1": round(f1, 3), "status": "ok",
            "skeleton": digest, "depth": depth, **extra}


def spark_session():
    """A local Spark session on the 2 cores, started before the clock (its JVM's CPU is not
    in this process's CPU time: Spark cells are compared by wall time, ``wall_s``)."""
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true").config("spark.driver.memory", "2g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def cell(name: str, n: int, method: str, timeout: float, depth: int | None = None) -> dict:
    row = {"network": name, "columns": len(load(name).domain.names), "rows": n, "method": method}
    try:
        out = subprocess.run([sys.executable, __file__, "--one", json.dumps([name, n, method, depth])],
                             capture_output=True, text=True, timeout=timeout)
        row.update(json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0
                   else {"status": "error", "note": out.stderr.strip().splitlines()[-1][:120]})
    except subprocess.TimeoutExpired:
        row.update({"status": "timeout", "cpu_s": f">{timeout:g} wall"})
    print(row, flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--networks", default=",".join(NETWORKS))
    ap.add_argument("--rows", default="10000,100000,1000000")
    ap.add_argument("--methods", default="pc,pc-cl,causal-learn,priv-pc")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--out", default=str(RESULTS / "discovery_wide.csv"))
    ap.add_argument("--depth", type=int, default=None,
                    help="largest conditioning set, for every method (default: min(d - 2, floor(log2 n) - 5))")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*json.loads(args.one))))
        return
    rows = [cell(name, int(n), method, args.timeout, args.depth) for name in args.networks.split(",")
            for n in args.rows.split(",") for method in args.methods.split(",")]
    fields = ["network", "columns", "rows", "method", "status", "cpu_s", "wall_s", "peak_rss_mb", "f1", "skeleton",
              "depth", "tests", "complete", "note"]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
