"""Kendall's tau from a contingency table against scipy.stats.kendalltau on the raw rows.

Discrete data (x with 4 levels, y with 5), at several n: the table path counts the table
(numpy engine) and reads tau-b from it in O(cells); scipy sorts the rows. Also the raw
continuous path (tau-a, O(n log n)) against scipy. Read the ratios, not the seconds.

    python benchmarks/bench_kendall.py --rows 1e5 1e6 1e7
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from privgraph.data import Domain, NumpyEngine
from privgraph.stats import kendall_tau_a_raw, kendall_tau_b


def timed(fn) -> tuple[float, float]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def discrete(n: int, rng: np.random.Generator) -> dict:
    x = rng.integers(0, 4, n)
    y = np.minimum(x + rng.integers(0, 3, n), 4)
    engine = NumpyEngine(Domain.of(x=4, y=5), np.column_stack([x, y]))
    t_table, tau = timed(lambda: kendall_tau_b(engine.counts(["x", "y"])))
    t_scipy, ref = timed(lambda: kendalltau(x, y).statistic)
    return {"rows": n, "data": "discrete 4x5", "privgraph s": t_table, "scipy s": t_scipy,
            "scipy / privgraph": t_scipy / t_table, "abs diff": abs(tau - ref)}


def continuous(n: int, rng: np.random.Generator) -> dict:
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    t_raw, _ = timed(lambda: kendall_tau_a_raw(x, y))
    t_scipy, _ = timed(lambda: kendalltau(x, y).statistic)
    return {"rows": n, "data": "continuous (tau-a raw)", "privgraph s": t_raw, "scipy s": t_scipy,
            "scipy / privgraph": t_scipy / t_raw, "abs diff": float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, nargs="+", default=[1e5, 1e6, 1e7])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/kendall.json"))
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    rows = [discrete(int(n), rng) for n in args.rows]
    rows += [continuous(int(n), rng) for n in args.rows if n <= 1e6]
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
