"""Python's memory for secret row selections of a file with too many distinct rows to fetch.

    nice -n 19 python3 benchmarks/bench_held_rows.py --rows 2e7,4e7 --dir /tmp/held-rows \
        --out benchmarks/results/held_rows.jsonl

1. Writes ``DIR/held-<rows>.parquet`` with DuckDB SQL (not timed; reused when present): 30
   columns of 12 levels, each ``hash(i, j) % 12`` for row i and column j, so that nearly every
   row is distinct: more distinct rows than ``Tables`` fetches (about 11.7M for 30 one-byte
   codes, :func:`privgraph.data.tables.max_distinct_rows`) from 2e7 rows on. Its codebook
   ``DIR/held.json`` holds the public levels 0..11. (Every scan codes each value by a CASE over
   its levels: 12 keep a scan of 2e7 rows to minutes on two cores.)
2. For each mode, in a child process: ``Tables.from_engine(DuckDBEngine(file, domain,
   invalid="drop"))`` (its one distinct-rows query gives up), then what one round of Priv-PC's
   sieve with the G test does: a secret sub-sample of half the rows and its 50 blocks
   (``SeededSampler(0)``), one pair table of the sub-sample and of the blocks (held: all 50
   blocks' in one grouped query; as arrays: a scan per block, so only the first): the peak of
   Python's own allocations over these steps (``tracemalloc``, numpy's arrays included;
   ``selection_python_peak_mb``), besides the process' peak RSS (``peak_mb``, mostly the
   failed distinct-rows fetch: up to 512 MB of rows read before it gives up, and DuckDB's
   memory; ``fetch_peak_mb`` after it). Modes:
   ``engine``, the selection streamed into DuckDB (``DuckDBEngine.hold``; the default);
   ``python``, the same draws held as arrays in Python (``Tables._holds_rows`` forced off:
   what a row selection was before); ``spark``, the same through ``SparkEngine`` on
   ``local[2]`` (``--driver-memory 2g``), the selection streamed into Parquet files of a
   scratch folder (``SparkEngine.hold``). CPU seconds and peak RSS of the child (Python and
   DuckDB in one process; DuckDB's ``memory_limit`` is 1 GB; for ``spark`` the CPU includes
   the JVM's, which the child stops and waits for, and ``jvm_peak_mb`` is the JVM's peak RSS,
   the driver and the executors in one process on ``local[2]``); one JSON line per run
   appended to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLUMNS, LEVELS = 30, 12

CHILD = r"""
import json, resource, sys, time, tracemalloc, warnings
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[1])
from privgraph.data import DuckDBEngine, SparkEngine
from privgraph.data.codebook import domain_from_codebook
from privgraph.data.tables import Tables
from privgraph.privacy import SeededSampler
if spec["mode"] == "python":  # the draws held as arrays here, as before the engine held them
    Tables._holds_rows = property(lambda self: False)
domain = domain_from_codebook(json.load(open(spec["codebook"])))
t0 = time.process_time()
if spec["mode"] == "spark":
    from privgraph.data.engines.spark_engine import spark_session
    engine = SparkEngine(spec["file"], domain, spark=spark_session("local[2]"), scratch=spec["scratch"])
else:
    engine = DuckDBEngine(spec["file"], domain, invalid="drop")
whole = Tables.from_engine(engine)
fetched = bool(whole._distinct)
t1 = time.process_time()
fetch_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
tracemalloc.start()  # Python's own allocations (numpy's included) from here: the selections
sub = whole.subsample(whole.n // 2, SeededSampler(0))
pair = sub.table(("c0", "c1"))
blocks = sub.blocks(50, SeededSampler(1))
# held: all 50 blocks' tables in one grouped query; as arrays: a scan per block, so the first only
stacked = blocks.table(("c0", "c1")) if spec["mode"] != "python" else blocks.parts[0].table(("c0", "c1"))[None]
held_peak = tracemalloc.get_traced_memory()[1] / 2**20
jvm = None
if spec["mode"] == "spark":  # stop Spark and wait for its JVM, so that its CPU and peak RSS are the child's
    from pyspark import SparkContext
    proc = getattr(SparkContext._gateway, "proc", None)
    SparkContext._active_spark_context.stop()
    if proc is not None:
        proc.stdin.close()
        proc.wait()
        jvm = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
print(json.dumps({"cpu_s": round(time.process_time() - t0, 1), "selection_cpu_s": round(time.process_time() - t1, 1),
                  "n": whole.n, "fetched_distinct": fetched,
                  "sub_rows": int(pair.sum()), "block_rows": int(stacked.sum()),
                  "selection_python_peak_mb": round(held_peak, 1), "fetch_peak_mb": round(fetch_peak),
                  "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  **({"jvm_peak_mb": jvm} if jvm is not None else {})}))
"""


def write(path: Path, rows: int) -> None:
    import duckdb

    cols = ", ".join(f"CAST(hash(i, {j}) % {LEVELS} AS INTEGER) AS c{j}" for j in range(COLUMNS))
    con = duckdb.connect(config={"memory_limit": "2GB"})
    con.execute(f"COPY (SELECT {cols} FROM range({rows}) t(i)) TO '{path}' (FORMAT parquet)")


def codebook(path: Path) -> None:
    path.write_text(json.dumps({"format": "privgraph-domain", "version": 1, "columns": [
        {"name": f"c{j}", "kind": "nominal", "levels": list(range(LEVELS)), "missing": "invalid"}
        for j in range(COLUMNS)]}))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="2e7,4e7")
    ap.add_argument("--modes", default="engine,python")
    ap.add_argument("--dir", default="/tmp/held-rows")
    ap.add_argument("--out", default=str(HERE / "results" / "held_rows.jsonl"))
    args = ap.parse_args(argv)
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    book = root / "held.json"
    codebook(book)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    for rows in (int(float(r)) for r in args.rows.split(",")):
        path = root / f"held-{rows}.parquet"
        if not path.exists():
            write(path, rows)
        for mode in args.modes.split(","):
            scratch = root / "scratch"
            scratch.mkdir(exist_ok=True)
            spec = {"file": str(path), "codebook": str(book), "mode": mode, "scratch": str(scratch)}
            env = dict(os.environ, PYSPARK_SUBMIT_ARGS="--driver-memory 2g pyspark-shell")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True,
                                  env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            row = {"rows": rows, "columns": COLUMNS, "mode": mode, "commit": commit,
                   "child_cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1)}
            if done.returncode == 0:
                row |= json.loads(done.stdout.strip().splitlines()[-1])
            else:
                row |= {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}
            print(json.dumps(row), flush=True)
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
