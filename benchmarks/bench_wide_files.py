"""Wide codebooks and wide CSV files: what planning and refusing cost, and DuckDB's planner passes.

    python3 benchmarks/bench_wide_files.py [--columns 1000] [--rows 200] [--alarm-rows 100000]
        [--out benchmarks/results/wide_files.json]

Part 1 (issue 25): ``plan`` on a codebook of ``--columns`` ternary columns, and ``discover``
on a file of ``--rows`` rows of it, under replace-one and add/remove: each is refused from
public facts (and, under add/remove, the released size), so the figure is the CPU time of a
fresh process (children's user + system time) and its exit status.

Part 2: one table counted from a CSV file of ``--alarm-rows`` rows of the bundled ``alarm``
network (37 columns) under the ``"drop"`` policy, with DuckDB's default planner and with the
passes :func:`privgraph.data.files.connect` switches off for CSV records, in one process
(CPU time of the query).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def child_cpu(cmd: list[str]) -> tuple[float, int]:
    """(CPU seconds, exit status) of ``cmd`` run to the end in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    status = subprocess.run(cmd, capture_output=True).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), status


def wide_commands(tmp: Path, columns: int, rows: int) -> dict:
    from privgraph.data import Domain, write_codebook

    codebook, data = tmp / "wide.json", tmp / "wide.csv"
    write_codebook(Domain.of(**{f"c{i}": 3 for i in range(columns)}), codebook)
    codes = np.random.default_rng(0).integers(0, 3, size=(rows, columns))
    data.write_text(",".join(f"c{i}" for i in range(columns)) + "\n"
                    + "\n".join(",".join(map(str, r)) for r in codes) + "\n")
    run = [sys.executable, "-m", "privgraph"]
    commands = {
        "plan": run + ["plan", "--domain", str(codebook), "--rows", str(rows), "--epsilon", "1"],
        "discover replace_one": run + ["discover", str(data), "--domain", str(codebook), "--epsilon", "1",
                                       "--out", str(tmp / "g1.json")],
        "discover add_remove": run + ["discover", str(data), "--domain", str(codebook), "--epsilon", "1",
                                      "--neighbours", "add_remove", "--out", str(tmp / "g2.json")],
    }
    out = {}
    for name, cmd in commands.items():
        cpu, status = child_cpu(cmd)
        out[name] = {"cpu_s": round(cpu, 2), "exit": status}
        print(f"{name}: {cpu:.2f} CPU-s, exit {status}", flush=True)
    return out


def planner_passes(tmp: Path, rows: int) -> dict:
    import duckdb

    from privgraph.data.engines.sql import coded_source, complete_codes_where
    from privgraph.data.files import csv_records, connect
    from privgraph.data.names import quote
    from privgraph.datasets import load_network
    from privgraph.datasets.network import sample_frame

    net = load_network("alarm")
    frame = sample_frame(net, rows, np.random.default_rng(0), labels=True)
    path = tmp / "alarm.csv"
    frame.to_csv(path, index=False)
    domain = net.domain
    out = {}
    for label, con in (("duckdb default", duckdb.connect()), ("privgraph csv connection",
                                                              connect(csv_columns=len(domain.names)))):
        source = coded_source(csv_records(path, domain.names), domain, "drop")
        cols = ", ".join(quote(n) for n in domain.names[:3])
        query = f"SELECT {cols}, count(*) FROM {source} {complete_codes_where(domain.names)} GROUP BY ALL"
        start = time.process_time()
        con.execute(query).fetchall()
        out[label] = round(time.process_time() - start, 2)
        print(f"one 3-way table, {rows} rows of alarm, {label}: {out[label]} CPU-s", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--alarm-rows", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/wide_files.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = {"command": " ".join(sys.argv), "columns": args.columns, "rows": args.rows,
                  "wide": wide_commands(Path(tmp), args.columns, args.rows),
                  "alarm_rows": args.alarm_rows, "one_table_cpu_s": planner_passes(Path(tmp), args.alarm_rows)}
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
