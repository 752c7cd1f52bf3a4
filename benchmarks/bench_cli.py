"""Time to `privgraph --help`, `--version`, every command's `--help`, a missing DATA file's
one-line error, and a small discover's first output, in fresh processes.

    python3 benchmarks/bench_cli.py [--runs 15] [--out benchmarks/results/cli.json]

Prints the median and the fastest wall time of each over ``--runs`` fresh Python processes,
beside `python3 -c pass` (the interpreter's own start) measured in the same loop, so that a
busy machine shows as a higher baseline rather than a slower privgraph; writes the same
figures, with the commit and the settings, to ``--out`` (docs/checks.md quotes that file).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from privgraph.cli import COMMANDS as CLI_COMMANDS

HERE = Path(__file__).resolve().parent
PRIVGRAPH = [sys.executable, "-m", "privgraph"]


def commands(workdir: Path) -> dict[str, tuple[list[str], int]]:
    """Each measured command line by its label, with the exit status it must end with."""
    missing = str(workdir / "missing.csv")
    return {
        "python -c pass": ([sys.executable, "-c", "pass"], 0),
        "privgraph --version": ([*PRIVGRAPH, "--version"], 0),
        "privgraph --help": ([*PRIVGRAPH, "--help"], 0),
        **{f"privgraph {name} --help": ([*PRIVGRAPH, name, "--help"], 0) for name in CLI_COMMANDS},
        "discover MISSING.csv (error)": ([*PRIVGRAPH, "discover", missing, "--domain", str(workdir / "d.json")], 2),
        "release MISSING.csv (error)": ([*PRIVGRAPH, "release", missing, "--domain", str(workdir / "d.json"),
                                         "--epsilon", "1", "--out", str(workdir)], 2),
    }


def first_output_seconds(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    proc.stdout.read(1)
    elapsed = time.perf_counter() - start
    proc.stdout.read()
    proc.wait()
    return elapsed


def timed(cmd: list[str], status: int) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True)
    elapsed = time.perf_counter() - start
    if result.returncode != status:
        raise SystemExit(f"{cmd} exited {result.returncode}, not {status}: {result.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "cli.json")
    args = parser.parse_args()
    small = [*PRIVGRAPH, "discover", "--network", "asia", "--samples", "2000", "--method", "pc"]
    with tempfile.TemporaryDirectory() as tmp:
        measured = commands(Path(tmp))
        times = {name: [] for name in [*measured, "discover (small): first output"]}
        for _ in range(args.runs):  # interleaved, so load affects every command alike
            for name, (cmd, status) in measured.items():
                times[name].append(timed(cmd, status))
            times["discover (small): first output"].append(first_output_seconds(small))
    rows = {name: {"median_s": round(statistics.median(ts), 3), "fastest_s": round(min(ts), 3)}
            for name, ts in times.items()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"command": "benchmarks/bench_cli.py", "runs": args.runs, "commit": commit,
                                    "python": sys.version.split()[0], "seconds": rows}, indent=1) + "\n")
    print(f"{'command':36} {'median s':>9} {'fastest s':>9}")
    for name, row in rows.items():
        print(f"{name:36} {row['median_s']:9.3f} {row['fastest_s']:9.3f}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
