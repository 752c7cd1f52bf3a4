"""Time to `privgraph --help`, `--version` and a small discover's first output, fresh processes.

    python3 benchmarks/bench_cli.py [--runs 15]

Prints the median and the fastest wall time of each command over ``--runs`` fresh Python
processes, beside `python3 -c pass` (the interpreter's own start) measured in the same
loop, so that a busy machine shows as a higher baseline rather than a slower privgraph.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "privgraph --version": [sys.executable, "-m", "privgraph", "--version"],
    "privgraph --help": [sys.executable, "-m", "privgraph", "--help"],
}


def first_output_seconds(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    proc.stdout.read(1)
    elapsed = time.perf_counter() - start
    proc.stdout.read()
    proc.wait()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    small = [sys.executable, "-m", "privgraph", "discover", "--network", "asia", "--samples", "2000",
             "--method", "pc"]
    times = {name: [] for name in [*COMMANDS, "discover (small): first output"]}
    for _ in range(args.runs):  # interleaved, so load affects every command alike
        for name, cmd in COMMANDS.items():
            start = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True)
            times[name].append(time.perf_counter() - start)
        times["discover (small): first output"].append(first_output_seconds(small))
    print(f"{'command':34} {'median s':>9} {'fastest s':>9}")
    for name, ts in times.items():
        print(f"{name:34} {statistics.median(ts):9.3f} {min(ts):9.3f}")


if __name__ == "__main__":
    main()
