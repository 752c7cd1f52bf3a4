"""Laplace/Gaussian draws per second: privgraph's samplers against their peers, side by side.

Peers in the same process: numpy's textbook Laplace (fast but NOT floating-point safe) and
OpenDP's exact samplers (the reference; slow). The issue's target: SecureSampler >= 1e6
Laplace draws per second on one core.

Run: python benchmarks/bench_samplers.py [--draws N] [--repeats R]
Writes benchmarks/results/samplers.csv.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

import numpy as np

from privgraph.privacy import SecureSampler, SeededSampler


def rate(fn, draws: int, repeats: int) -> float:
    """Best draws-per-second over repeats (the machines are noisy; best is most stable)."""
    best = 0.0
    for _ in range(repeats):
        t = time.perf_counter()
        fn(draws)
        best = max(best, draws / (time.perf_counter() - t))
    return best


def peers(opendp_draws: int):
    gen = np.random.default_rng(0)
    out = {
        "numpy laplace (unsafe)": lambda n: gen.laplace(0.0, 1.0, n),
        "numpy normal (unsafe)": lambda n: gen.normal(0.0, 1.0, n),
    }
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        lap = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=1.0)
        out["opendp laplace (exact)"] = lambda n: lap([0.0] * min(n, opendp_draws))
    except ImportError:
        pass
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=2_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    secure, seeded = SecureSampler(), SeededSampler(0)
    grid = 2.0**-12
    cases = {
        "SecureSampler laplace": lambda n: secure.laplace_on_grid(1.0, grid, n),
        "SeededSampler laplace": lambda n: seeded.laplace_on_grid(1.0, grid, n),
        "SecureSampler gaussian": lambda n: secure.gaussian_on_grid(1.0, grid, n),
        "SecureSampler discrete laplace (counts)": lambda n: secure.discrete_laplace(1.0, n),
    }
    rows = []
    for name, fn in {**cases, **peers(50_000)}.items():
        n = 50_000 if "opendp" in name else args.draws
        r = rate(fn, n, args.repeats)
        rows.append({"sampler": name, "draws_per_second": r})
    ref = next(r["draws_per_second"] for r in rows if r["sampler"] == "SecureSampler laplace")
    print(f"{'sampler':42s} {'draws/s':>12s} {'ratio to SecureSampler laplace':>32s}")
    for r in rows:
        r["ratio_to_secure_laplace"] = r["draws_per_second"] / ref
        print(f"{r['sampler']:42s} {r['draws_per_second']:12.3e} {r['ratio_to_secure_laplace']:32.3f}")
    print(f"target >= 1e6 Laplace draws/s: {'met' if ref >= 1e6 else 'NOT met'} ({ref:.3g})")
    out = Path(__file__).parent / "results" / "samplers.csv"
    out.parent.mkdir(exist_ok=True)
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
