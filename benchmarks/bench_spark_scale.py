"""A 30-column table at 1e7-1e9 rows through DuckDB and through Spark (issue 30).

    nice -n 19 python3 benchmarks/bench_spark_scale.py --rows 1e7,1e8 --dir /tmp/spark-scale \\
        --out benchmarks/results/spark_scale.jsonl

1. Writes ``DIR/scale-<rows>.parquet`` with DuckDB SQL (not timed; reused when present): 30
   columns of 2 to 6 levels (small integers), in 6 blocks of 5. Row i draws a latent value
   u_b in 0..7 for each block b from ``hash(i, b)`` (skewed towards 0), and each column of
   block b is a fixed function of u_b and the first column of block b - 1: dependent
   columns, and at most 8^6 x 2 distinct rows whatever the number of rows, so the distinct
   rows every engine fetches (``distinct_rows``) stay within their bound at 1e9 rows. Its
   codebook ``DIR/scale.json`` holds the public levels 0..k-1.
2. Runs each command as a user does, in a child process, for each engine:
   ``privgraph discover FILE --domain D --epsilon 10 --seed 0 --max-cond-size 1 --engine E``
   (Priv-PC to conditioning sets of one column; 30 columns need epsilon >= 8.84 at 1e7 rows)
   and ``privgraph release FILE --domain D --epsilon 10 --seed 0 --structure tree --rows
   100000 --format parquet --engine E`` (the tree's tables, the model, 1e5 synthetic rows)
   (``--spark-master local[2]``, driver memory ``--driver-memory``). The child
   stops Spark and waits for its JVM before it exits, so the child's CPU seconds (user +
   system, from ``wait4``) include the JVM's. Peak memory: the Python process' max RSS and
   the largest child's (the JVM), reported by the child. One JSON line per run, appended to
   ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

#: Levels of the 30 columns (2 to 6), and the latent values per block.
SIZES = tuple(2 + (j * 7) % 5 for j in range(30))
BLOCK, LATENT = 5, 8


def column_sql(j: int) -> str:
    """Column j's value: a fixed function of its block's latent value and the first column of
    the block before (DuckDB SQL; earlier select aliases are in scope)."""
    b, p, k = divmod(j, BLOCK)[0], j % BLOCK, SIZES[j]
    parent = f"c{(b - 1) * BLOCK:02d}" if b else "0"
    return f"CAST((u{b} * {p + 1} + {parent} * {p + 2} + u{b} // {p + 2}) % {k} AS UTINYINT) AS c{j:02d}"


def write_table(rows: int, folder: Path) -> tuple[Path, Path]:
    """The Parquet file and its codebook (reused when present)."""
    import duckdb

    from privgraph.data import Domain, write_codebook

    names = tuple(f"c{j:02d}" for j in range(30))
    book = folder / "scale.json"
    write_codebook(Domain(names, SIZES, levels=tuple(tuple(range(k)) for k in SIZES)), book)
    path = folder / f"scale-{rows}.parquet"
    if path.exists():
        return path, book
    latent = ", ".join(f"CAST(floor(pow((hash(i, {b + 1}) % 1000003) / 1000003.0, 2) * {LATENT}) AS INTEGER) AS u{b}"
                       for b in range(30 // BLOCK))
    columns = ", ".join(column_sql(j) for j in range(30))
    tmp = path.with_suffix(".part")
    con = duckdb.connect(config={"memory_limit": "4GB", "threads": 2, "preserve_insertion_order": False})
    con.execute("SET enable_progress_bar = false")  # a session option (DuckDB 2 refuses it at connect)
    con.execute(f"COPY (SELECT {columns} FROM (SELECT i, {latent} FROM range({rows}) t(i))) TO '{tmp}' "
                "(FORMAT parquet, ROW_GROUP_SIZE 1000000)")
    tmp.rename(path)
    return path, book


def command(cmd: str, path: Path, book: Path, engine: str, out: Path) -> list[str]:
    """The user's command line."""
    extra = (["--structure", "tree", "--rows", "100000", "--format", "parquet"] if cmd == "release"
             else ["--max-cond-size", "1"])
    spark = ["--spark-master", "local[2]"] if engine == "spark" else []
    return ["discover" if cmd == "discover" else "release", str(path), "--domain", str(book), "--epsilon", "10",
            "--seed", "0", "--engine", engine, *spark, *extra, "--out", str(out), "--overwrite"]


def run_child(argv: list[str], report: Path) -> None:
    """In the child: the CLI in this process, then Spark stopped and its JVM waited for, and
    this process' and its children's peak RSS written to ``report``."""
    from privgraph.cli import main

    sys.argv = ["privgraph", *argv]
    status = 0
    try:
        main()
    except SystemExit as stop:
        status = stop.code or 0
    jvm = None
    if "spark" in argv:
        from pyspark import SparkContext

        gateway = SparkContext._gateway
        proc = getattr(gateway, "proc", None)
        if SparkContext._active_spark_context is not None:
            SparkContext._active_spark_context.stop()
        if proc is not None:
            proc.stdin.close()
            proc.wait()
            jvm = proc.pid
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    report.write_text(json.dumps({"status": status, "python_peak_mb": round(me.ru_maxrss / 1024),
                                  "child_peak_mb": round(kids.ru_maxrss / 1024), "jvm_pid": jvm,
                                  "python_cpu_s": round(me.ru_utime + me.ru_stime, 1),
                                  "children_cpu_s": round(kids.ru_utime + kids.ru_stime, 1)}))
    sys.exit(status)


def measure(cmd: str, path: Path, book: Path, engine: str, folder: Path, driver_memory: str) -> dict:
    """One run in a child: CPU (the child and the JVM it waited for), wall, peak RSS."""
    out = folder / f"out-{cmd}-{engine}"
    if cmd == "release":
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
    else:
        out = out.with_suffix(".json")
    report = folder / f"child-{cmd}-{engine}.json"  # runs may go side by side
    env = dict(os.environ, PYSPARK_SUBMIT_ARGS=f"--driver-memory {driver_memory} pyspark-shell")
    argv = command(cmd, path, book, engine, out)
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, __file__, "--child", report, "--", *argv], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    err = child.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} --engine {engine} failed on {path}: {err[-3000:]}")
    inner = json.loads(report.read_text())
    return {"command": cmd, "engine": engine, "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "wall_s": round(wall, 1), "python_peak_mb": inner["python_peak_mb"],
            "jvm_peak_mb": inner["child_peak_mb"] if engine == "spark" else None,
            "driver_memory": driver_memory if engine == "spark" else None,
            "argv": "privgraph " + " ".join(argv)}


def commit() -> str | None:
    """The checkout's commit (with "+" if it has uncommitted changes, result files aside), or None outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!benchmarks/results"],
                               capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        return run_child(sys.argv[4:], Path(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="1e7,1e8", help="comma-separated row counts")
    ap.add_argument("--engines", default="duckdb,spark")
    ap.add_argument("--commands", default="discover,release")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/privgraph-spark-scale"))
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/spark_scale.jsonl"))
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for rows in (int(float(r)) for r in args.rows.split(",")):
        start = time.monotonic()
        path, book = write_table(rows, args.dir)
        made = {"rows": rows, "columns": 30, "file_mb": round(path.stat().st_size / 2**20),
                "write_wall_s": round(time.monotonic() - start, 1)}
        print(json.dumps(made), flush=True)
        for engine in args.engines.split(","):
            for cmd in args.commands.split(","):
                row = {"rows": rows, "columns": 30, "file_mb": made["file_mb"], "commit": commit(),
                       **measure(cmd, path, book, engine, args.dir, args.driver_memory)}
                print(json.dumps(row), flush=True)
                with args.out.open("a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
