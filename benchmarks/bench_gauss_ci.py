"""Fisher-z PC on one private covariance against causal-learn's fisherz and binned rank/G tests.

Random linear-Gaussian DAGs (``privgraph.datasets.linear_gaussian``: Erdos-Renyi, expected
degree 2, weights uniform in +-[0.5, 1], unit noise), n rows, every column continuous with
public bounds at +-3 model standard deviations. For each of d = 10, 20, 50 and each seed:

* private Fisher-z PC (``PrivPC(ci_test="fisher-z")``, replace-one, delta 1e-6) at epsilon
  0.3, 1 and 3, and non-private (``method="pc"``);
* causal-learn's ``pc(data, 0.05, fisherz)`` (stable, uc_rule 0) on the raw values;
* the binned tests: each column cut into 5 equal-width bins of its public bounds (ordinal
  codes), private PC at epsilon 1 with Kendall's tau and with the G test (``priv-pc``, or
  ``gauss-pc`` where Priv-PC refuses; a refusal of both is recorded as such).

Skeleton F1 against the true DAG, and CPU seconds (``time.process_time``) of the fit. Writes
``benchmarks/results/gauss_ci.csv`` and prints the Markdown tables docs/discovery.md shows.

    PYTHONPATH=src python3 benchmarks/bench_gauss_ci.py --seeds 3 --rows 10000
    PYTHONPATH=src python3 benchmarks/bench_gauss_ci.py --choices --seeds 3   # the defaults' measurement
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings
from pathlib import Path

import numpy as np

from privgraph.causal import PrivPC
from privgraph.causal.deciders import BudgetTooSmall
from privgraph.data import Domain, Kind, NumpyEngine
from privgraph.datasets.linear_gaussian import random_linear_gaussian
from privgraph.graphs import CPDAG, skeleton_scores

OUT = Path(__file__).parent / "results" / "gauss_ci.csv"
BINS = 5


def skeleton_f1(edges: set, truth_edges: set) -> float:
    tp = len(edges & truth_edges)
    if tp == 0:
        return 0.0
    p, r = tp / len(edges), tp / len(truth_edges)
    return 2 * p * r / (p + r)


def causal_learn(frame) -> tuple[set, float]:
    from causallearn.search.ConstraintBased.PC import pc

    names = list(frame.columns)
    start = time.process_time()
    cg = pc(frame.to_numpy(), 0.05, "fisherz", stable=True, show_progress=False, uc_rule=0)
    seconds = time.process_time() - start
    adj = cg.G.graph
    return ({frozenset((names[i], names[j])) for i in range(len(names)) for j in range(i + 1, len(names))
             if adj[i, j] != 0 or adj[j, i] != 0}, seconds)


def binned(frame, domain: Domain) -> NumpyEngine:
    codes = np.empty(frame.shape, dtype=np.int64)
    for j, (name, (lo, hi)) in enumerate(zip(domain.names, domain.bounds)):
        v = np.clip(frame[name].to_numpy(), lo, hi)
        codes[:, j] = np.minimum(((v - lo) / (hi - lo) * BINS).astype(np.int64), BINS - 1)
    return NumpyEngine(Domain(domain.names, (BINS,) * len(domain.names), (Kind.ORDINAL,) * len(domain.names)), codes)


def fit(est: PrivPC, X, domain=None) -> tuple[set | None, float, str]:
    start = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, domain=domain)
    except BudgetTooSmall:
        return None, time.process_time() - start, "refused"
    return {frozenset(e) for e in est.skeleton_.edges}, time.process_time() - start, est.method


def run(d: int, seed: int, rows: int) -> list[dict]:
    lg = random_linear_gaussian(d, np.random.default_rng(seed))
    frame = lg.sample(rows, np.random.default_rng(1000 + seed))
    domain = lg.domain(3.0)
    truth = {frozenset(e) for e in lg.edges}
    out = []

    def add(name, epsilon, edges, seconds, method=""):
        out.append(dict(d=d, seed=seed, rows=rows, test=name, epsilon=epsilon, method=method,
                        f1="" if edges is None else round(skeleton_f1(edges, truth), 4), cpu_s=round(seconds, 3)))

    for epsilon in (0.3, 1.0, 3.0):
        edges, seconds, _ = fit(PrivPC(ci_test="fisher-z", epsilon=epsilon, random_state=seed), frame, domain)
        add("fisher-z (private)", epsilon, edges, seconds)
    edges, seconds, _ = fit(PrivPC(ci_test="fisher-z", method="pc"), frame, domain)
    add("fisher-z (not private)", "inf", edges, seconds)
    edges, seconds = causal_learn(frame)
    add("causal-learn fisherz", "inf", edges, seconds)
    engine = binned(frame, domain)
    for test in ("kendall", "g"):
        edges, seconds, method = fit(PrivPC(ci_test=test, epsilon=1.0, random_state=seed), engine)
        if edges is None:
            edges, seconds, method = fit(PrivPC(ci_test=test, epsilon=1.0, method="gauss-pc", random_state=seed), engine)
        add(f"{test}, {BINS} bins (private)", 1.0, edges, seconds, method)
    return out


def tables(rows: list[dict]) -> str:
    keys = list(dict.fromkeys((r["test"], r["epsilon"]) for r in rows))
    ds = sorted({r["d"] for r in rows})
    lines = ["| test | epsilon | " + " | ".join(f"F1, d={d}" for d in ds) + " | " +
             " | ".join(f"CPU s, d={d}" for d in ds) + " |", "|---|---|" + "---|" * (2 * len(ds))]
    for test, eps in keys:
        f1s, cpus = [], []
        for d in ds:
            sel = [r for r in rows if r["d"] == d and r["test"] == test and r["epsilon"] == eps]
            got = [r["f1"] for r in sel if r["f1"] != ""]
            refused = len(sel) - len(got)
            f1s.append((f"{np.mean(got):.3f}" if got else "-") + (f" ({refused} refused)" if refused else ""))
            cpus.append(f"{np.mean([r['cpu_s'] for r in sel]):.2f}")
        lines.append(f"| {test} | {eps} | " + " | ".join(f1s) + " | " + " | ".join(cpus) + " |")
    return "\n".join(lines)


def choices(seeds: int, rows: int, d: int = 20, epsilon: float = 1.0) -> str:
    """The measurement behind the defaults: record-norm clip, eigenvalue floor, noise-aware test.

    Mean skeleton F1 over the seeds at epsilon 1 (replace-one) for each combination, with the
    non-private graph on the same clipped sums."""
    import math

    import privgraph.causal.fisher_pc as fp
    from privgraph.causal.skeleton import stable_pc_skeleton
    from privgraph.data.moments import moment_sums
    from privgraph.privacy import SeededSampler

    floors, found = (0.1, 1.0), {}
    default_floor = fp.EIGEN_FLOOR
    for seed in range(seeds):
        lg = random_linear_gaussian(d, np.random.default_rng(seed))
        frame, domain = lg.sample(rows, np.random.default_rng(1000 + seed)), lg.domain(3.0)
        truth = {frozenset(e) for e in lg.edges}
        for label, norm in (("box only (C^2 = d/4)", None), ("C^2 = d/9", math.sqrt(d / 9)),
                            ("C^2 = d/16 (default)", math.sqrt(d / 16))):
            m = moment_sums(frame, domain, invalid="recode", norm=norm)
            plain = stable_pc_skeleton(domain.names, fp.FisherZDecider(fp.covariance_from_moments(m, domain.names), 0.05))
            found.setdefault((label, "not private", ""), []).append(
                skeleton_f1({frozenset(e) for e in plain.graph.edges}, truth))
            for floor in floors:
                fp.EIGEN_FLOOR = floor
                cov, _ = fp.release_covariance(m, domain.names, epsilon=epsilon, delta=1e-6, neighbours="replace_one",
                                               sampler=SeededSampler(seed))
                for aware in (False, True):
                    sk = stable_pc_skeleton(domain.names, fp.FisherZDecider(cov, 0.05, noise_aware=aware))
                    found.setdefault((label, "noise-aware" if aware else "plain", floor), []).append(
                        skeleton_f1({frozenset(e) for e in sk.graph.edges}, truth))
    fp.EIGEN_FLOOR = default_floor
    lines = ["| record norm | test | eigenvalue floor (x s sqrt(d)) | skeleton F1 |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {np.mean(v):.3f} |" for (a, b, c), v in found.items()]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--dims", default="10,20,50")
    parser.add_argument("--choices", action="store_true", help="print the table behind the defaults instead")
    args = parser.parse_args()
    if args.choices:
        print(choices(args.seeds, args.rows))
        return
    rows = []
    for d in (int(v) for v in args.dims.split(",")):
        for seed in range(args.seeds):
            rows += run(d, seed, args.rows)
            print(f"d={d} seed={seed} done", flush=True)
    OUT.parent.mkdir(exist_ok=True)
    with open(OUT, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(tables(rows))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
