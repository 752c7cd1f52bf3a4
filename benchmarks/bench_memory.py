"""Peak memory, CPU and the longest silence on stderr of ``privgraph release`` on wide and
high-cardinality tables (issue 45, item 4).

Cases (tables generated in a temporary folder with their codebooks, seed 0; every case runs
``privgraph release`` in a fresh process, off a terminal, seeded noise, add/remove):

``wide``
    ``--columns`` binary columns (default 1,000), ``--rows`` rows (default 5,000): every fifth
    column a noisy copy of one base column, the others independent.
``high``
    one nominal column of ``--levels`` levels (default 10,000) beside four of 3, 2, 4 and 5
    levels, ``--high-rows`` rows (default 20,000); ``--structures`` picks the release's
    structure (default ``auto,priv-pc,gauss-pc``: Priv-PC's blocks of the joint table and the
    ledger's PLD comparison were the 7.5 GB of the issue).

Each row of ``benchmarks/results/memory.jsonl``: the case, its shape, the structure, epsilon,
the exit status (-9: stopped at ``--timeout``), ``peak_rss_mb`` (the child's ``ru_maxrss``),
``cpu_s`` (its user + system time), ``wall_s``, ``longest_silence_s`` (the longest gap between
two lines on its stderr, from its start to its end: the heartbeat's promise is 30 s), the
stderr lines about the stages (``stage_lines``) and heartbeats (``heartbeats``), the commit
and the package's folder.

Run (on a quiet machine, nice -n 19 on a shared one):
    python benchmarks/bench_memory.py [--cases wide,high] [--columns 1000] [--rows 5000]
        [--levels 10000] [--high-rows 20000] [--epsilon 1] [--structures auto,priv-pc,gauss-pc]
        [--timeout 3600] [--label before|after]
"before" is the same script with the package of an earlier commit first on the path:
    git archive <commit> src | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before/src python benchmarks/bench_memory.py --label before --commit <commit>

The committed result file (a shared 2-core machine, so CPU and wall times are loaded ones):
    nice -n 19 python benchmarks/bench_memory.py --cases high --epsilon 4 --label after --timeout 900
    nice -n 19 python benchmarks/bench_memory.py --cases wide --columns 200 --label after --timeout 1500
    nice -n 19 python benchmarks/bench_memory.py --cases wide --columns 100 --label after --timeout 1200
    nice -n 19 python benchmarks/bench_memory.py --cases wide --columns 1000 --label after --timeout 900
    (before, b3eb4de on the path as above) --cases high --epsilon 4 --timeout 900
    (before) --cases wide --columns 1000 --timeout 600
The 200-column row tuned ``release.model_size.PAIR_BYTES``; the 100-column row checks it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

import privgraph

RESULTS = Path(__file__).resolve().parent / "results" / "memory.jsonl"


def wide_table(folder: Path, columns: int, rows: int) -> tuple[Path, Path]:
    """``columns`` binary columns of ``rows`` rows and their codebook."""
    from privgraph.data import Domain, write_codebook

    rng = np.random.default_rng(0)
    base = rng.integers(0, 2, rows)
    data = {f"x{j}": np.where(rng.random(rows) < 0.8, base if j % 5 == 0 else rng.integers(0, 2, rows),
                              rng.integers(0, 2, rows)) for j in range(columns)}
    path, codebook = folder / f"wide{columns}.csv", folder / f"wide{columns}.json"
    pd.DataFrame(data).to_csv(path, index=False)
    write_codebook(Domain.of(**{f"x{j}": 2 for j in range(columns)}), codebook)
    return path, codebook


def high_table(folder: Path, levels: int, rows: int) -> tuple[Path, Path]:
    """One column of ``levels`` levels beside four small ones, and the codebook."""
    from privgraph.data import Domain, write_codebook

    rng = np.random.default_rng(1)
    z = rng.integers(0, levels, rows)
    a = (z % 3 + (rng.random(rows) < 0.2)) % 3
    b = rng.integers(0, 2, rows)
    c = (a + b + (rng.random(rows) < 0.2)) % 4
    path, codebook = folder / f"high{levels}.csv", folder / f"high{levels}.json"
    pd.DataFrame({"z": z, "a": a, "b": b, "c": c, "e": rng.integers(0, 5, rows)}).to_csv(path, index=False)
    write_codebook(Domain.of(z=levels, a=3, b=2, c=4, e=5), codebook)
    return path, codebook


def run_one(command: list[str], timeout: float) -> dict:
    """Run ``command`` (this process's only child): its exit status, peak RSS, CPU, wall time
    and the longest gap between two lines of its stderr."""
    start = time.monotonic()
    last, longest, stages, beats = start, 0.0, 0, 0
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(timeout, proc.kill)  # a silent run is stopped too (status -9)
    watchdog.start()
    try:
        for line in proc.stderr:
            now = time.monotonic()
            longest, last = max(longest, now - last), now
            stages += line.startswith("privgraph: stage ")
            beats += line.startswith("privgraph: still in ")
        status = proc.wait()
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    end = time.monotonic()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"status": status, "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "wall_s": round(end - start, 1),
            "longest_silence_s": round(max(longest, end - last), 1), "stage_lines": stages, "heartbeats": beats}


def commit() -> str:
    """HEAD's short hash, with ``+changes`` when the working tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "src"], cwd=Path(__file__).parent).returncode
    except OSError:
        return "unknown"
    return head + ("+changes" if dirty else "")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="wide,high")
    parser.add_argument("--columns", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--levels", type=int, default=10_000)
    parser.add_argument("--high-rows", type=int, default=20_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--structures", default="auto,priv-pc,gauss-pc")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--label", default="")
    parser.add_argument("--commit", default=None, help="the commit of the package on the path (default: HEAD, "
                                                         "plus the working tree's changes when there are any)")
    parser.add_argument("--one", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:  # a fresh process per case, so its children's peak RSS is this case's
        print(json.dumps(run_one(args.one, args.timeout)))
        return
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = []
        if "wide" in args.cases.split(","):
            cases.append(("wide", {"columns": args.columns, "rows": args.rows},
                          *wide_table(folder, args.columns, args.rows), ["auto"]))
        if "high" in args.cases.split(","):
            cases.append(("high", {"levels": args.levels, "rows": args.high_rows},
                          *high_table(folder, args.levels, args.high_rows), args.structures.split(",")))
        for name, shape, path, codebook, structures in cases:
            for structure in structures:
                out = folder / f"out-{name}-{structure}"
                command = [sys.executable, "-m", "privgraph", "release", str(path), "--domain", str(codebook),
                           "--epsilon", str(args.epsilon), "--structure", structure, "--seed", "0", "--out", str(out)]
                wrapped = [sys.executable, __file__, "--timeout", str(args.timeout), "--one", *command]
                measured = json.loads(subprocess.run(wrapped, capture_output=True, text=True, check=True).stdout)
                row = {"case": name, **shape, "structure": structure, "epsilon": args.epsilon, "label": args.label,
                       "commit": args.commit or commit(), "package": str(Path(privgraph.__file__).parent), **measured}
                print(json.dumps(row), flush=True)
                with RESULTS.open("a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
