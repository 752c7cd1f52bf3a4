"""Private causal discovery: the Priv-PC paper's Figure 1 and Table 2, and non-private PC against peers.

Four parts (all by default; pick with --part):

``target``
    Priv-PC on asia, n = 100,000, total epsilon = 1, the default cap: median running
    time after the data is loaded (seeded and secure noise) and skeleton F1 (21 runs).
``figure1``
    Skeleton F1 against the *true* network for Priv-PC, EM-PC, SVT-PC and the sub-sampled
    Gaussian (Laplace-per-test too) on earthquake, cancer, asia and survey, n = 100,000,
    21 total budgets (the whole run's epsilon, delta = 1e-6) on a log grid, 5 repetitions
    (noise seeds) on one sample per network. A budget too small for a method's cap is
    refused before anything is spent: recorded as ``refused`` and left out of the means.
    Then the paper's qualitative claims are checked under our accounting.
``table2``
    Running time (median of repetitions, after the data is loaded) at a total epsilon of 1
    and of 10, for EM-PC, SVT-PC, Priv-PC and Priv-PC without sub-sampling (q = 1).
``peers``
    Non-private stable PC, same test (G and chi-square) and alpha, same data, in one run:
    privgraph against causal-learn and pgmpy (benchmark-only imports) at 1e5 and 1e6 rows
    of asia; the ratio to causal-learn at 1e6 rows is the target (>= 10).

Run: python benchmarks/bench_discovery.py [--part target|figure1|table2|peers|all] [--quick]
Writes benchmarks/results/discovery_figure1.csv, discovery_figure1.png,
discovery_table2.csv, discovery_peers.csv and discovery_summary.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from privgraph.causal import BudgetTooSmall, PrivPC, SieveExamineDecider, Tables, make_margin, stable_pc_skeleton
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.graphs import CPDAG, arc_f1, skeleton_scores
from privgraph.privacy import SeededSampler
from privgraph.stats import KendallTest

RESULTS = Path(__file__).resolve().parent / "results"
NETWORKS = ("earthquake", "cancer", "asia", "survey")
METHODS = ("priv-pc", "em-pc", "svt-pc", "sg-pc", "laplace-pc")
DELTA = 1e-6


def network_frame(name: str, n: int, seed: int = 0) -> tuple[pd.DataFrame, CPDAG]:
    """n rows of a bundled network (ordinal codes in the BIF's state order) and its true CPDAG."""
    net = load_network(name)
    codes = sample(net, n, np.random.default_rng(seed))
    frame = pd.DataFrame({name: pd.Categorical.from_codes(codes[:, i], categories=range(size), ordered=True)
                          for i, (name, size) in enumerate(zip(net.domain.names, net.domain.sizes))})
    return frame, CPDAG.from_dag(net.to_networkx())  # Categorical columns: the public domain


def skeleton_edges(est) -> set:
    return {frozenset(e) for e in est.skeleton_.edges}


# --- Figure 1 -------------------------------------------------------------------------


def figure1(budgets, reps: int, n: int, methods=METHODS) -> list[dict]:
    rows = []
    for name in NETWORKS:
        X, truth = network_frame(name, n)
        engine = NumpyEngine.from_frame(X)
        reference = skeleton_edges(PrivPC(method="pc").fit(engine))
        for method in methods:
            for eps in budgets:
                for rep in range(reps):
                    rows.append(one_run(engine, truth, reference, name, method, float(eps), rep))
            done = [r for r in rows if r["network"] == name and r["method"] == method and not r["refused"]]
            print(f"figure1 {name:10s} {method:10s} runs {len(done):3d}, mean F1 "
                  f"{np.mean([r['skeleton_f1'] for r in done]) if done else float('nan'):.3f}", flush=True)
    return rows


def one_run(engine, truth, reference, name, method, eps, rep) -> dict:
    row = dict(network=name, method=method, epsilon=eps, delta=DELTA, rep=rep, refused=False)
    start = time.perf_counter()
    try:
        est = PrivPC(epsilon=eps, delta=DELTA, method=method, random_state=1000 * rep + 1).fit(engine)
    except BudgetTooSmall:
        row.update(refused=True)
        return row
    row.update(
        seconds=time.perf_counter() - start, skeleton_f1=skeleton_scores(est.graph_, truth)["f1"],
        arc_f1=arc_f1(est.graph_, truth), differs_from_pc=len(skeleton_edges(est) ^ reference),
        spent=est.epsilon_spent_, composition=est.composition_, n_tests=est.n_tests_,
        rounds=est.rounds_, rounds_used=est.rounds_used_, complete=est.complete_,
    )
    return row


def mean_by(rows, network, method) -> dict[float, tuple[float, float]]:
    """{epsilon: (mean F1, mean disagreement with non-private PC)} over unrefused runs."""
    out = {}
    for eps in sorted({r["epsilon"] for r in rows}):
        sel = [r for r in rows if r["network"] == network and r["method"] == method and r["epsilon"] == eps
               and not r["refused"]]
        if sel:
            out[eps] = (float(np.mean([r["skeleton_f1"] for r in sel])),
                        float(np.mean([r["differs_from_pc"] for r in sel])))
    return out


def check_claims(rows) -> dict:
    """The paper's qualitative claims, per network, under our accounting."""
    claims = {}
    for name in NETWORKS:
        priv, em, svt = (mean_by(rows, name, m) for m in ("priv-pc", "em-pc", "svt-pc"))
        top = max(priv) if priv else None
        both = sorted(set(priv) & set(svt))
        claims[name] = {
            "priv-pc reaches non-private PC at the largest budget": bool(top and priv[top][1] == 0),
            "em-pc does not reach it at the largest budget": bool(em and em[max(em)][1] > 0),
            "priv-pc >= svt-pc at every budget both run": bool(both) and all(priv[e][0] >= svt[e][0] for e in both),
            "svt-pc refused where priv-pc runs": sorted(set(priv) - set(svt)),
            "em-pc beats priv-pc at some small budget": any(
                e in em and em[e][0] > priv.get(e, (0.0, 0))[0] for e in sorted(em)[: len(em) // 2]),
        }
    return claims


def plot_figure1(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 8), sharey=True)
    for ax, name in zip(axes.ravel(), NETWORKS):
        for method in METHODS:
            sel = [r for r in rows if r["network"] == name and r["method"] == method and not r["refused"]]
            eps = sorted({r["epsilon"] for r in sel})
            if not eps:
                continue
            f1 = [[r["skeleton_f1"] for r in sel if r["epsilon"] == e] for e in eps]
            ax.errorbar(eps, [np.mean(v) for v in f1], yerr=[np.std(v) for v in f1], label=method, capsize=2,
                        marker="o", markersize=3)
        ax.set_xscale("log")
        ax.set_title(f"{name} (n = 100,000)")
        ax.set_xlabel("total epsilon (delta = 1e-6)")
        ax.set_ylabel("skeleton F1 vs true network")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- Table 2 --------------------------------------------------------------------------


def table2(reps: int, n: int) -> list[dict]:
    rows = []
    for name in NETWORKS:
        X, _ = network_frame(name, n)
        engine = NumpyEngine.from_frame(X)
        for eps in (1.0, 10.0):
            for label, run in runners(engine, eps).items():
                times = []
                for rep in range(reps):
                    start = time.perf_counter()
                    try:
                        run(rep)
                    except BudgetTooSmall:
                        times = []
                        break
                    times.append(time.perf_counter() - start)
                rows.append(dict(network=name, epsilon=eps, method=label, reps=len(times),
                                 median_seconds=float(np.median(times)) if times else math.nan))
                print(f"table2 {name:10s} eps {eps:4g} {label:28s} {rows[-1]['median_seconds']:.3f} s", flush=True)
    return rows


def runners(engine, eps):
    def estimator(method):
        return lambda rep: PrivPC(epsilon=eps, delta=DELTA, method=method, random_state=rep).fit(engine)

    def no_subsampling(rep):
        tables = Tables.from_engine(engine)
        d = len(tables.names)
        decider = SieveExamineDecider(tables, make_margin(KendallTest(), 0.05), epsilon=eps, delta=DELTA,
                               rounds=d * (d - 1), sampler=SeededSampler(rep), min_rate=1.0)
        stable_pc_skeleton(tables.names, decider, max_cond_size=max(0, min(d - 2, 11)))

    return {"em-pc": estimator("em-pc"), "svt-pc": estimator("svt-pc"), "priv-pc": estimator("priv-pc"),
            "priv-pc without sub-sampling": no_subsampling}


# --- the target: Priv-PC on asia ------------------------------------------------------


def target(reps: int, n: int) -> dict:
    """Priv-PC, asia, n rows, total epsilon 1, default cap: median seconds after loading, F1."""
    X, truth = network_frame("asia", n)
    engine = NumpyEngine.from_frame(X)
    PrivPC(epsilon=1.0, random_state=0).fit(engine)  # imports and caches warm
    times, f1 = [], []
    for rep in range(reps):
        start = time.perf_counter()
        est = PrivPC(epsilon=1.0, delta=DELTA, random_state=rep + 1).fit(engine)
        times.append(time.perf_counter() - start)
        f1.append(skeleton_scores(est.graph_, truth)["f1"])
    secure = []
    for _ in range(reps):
        start = time.perf_counter()
        PrivPC(epsilon=1.0, delta=DELTA).fit(engine)
        secure.append(time.perf_counter() - start)
    pc = skeleton_scores(PrivPC(method="pc").fit(engine).graph_, truth)["f1"]
    out = dict(rows=n, epsilon=1.0, delta=DELTA, reps=reps, median_seconds_seeded=float(np.median(times)),
               median_seconds_secure=float(np.median(secure)), mean_skeleton_f1=float(np.mean(f1)),
               median_skeleton_f1=float(np.median(f1)), non_private_kendall_f1=pc)
    print("target:", out, flush=True)
    return out


# --- peers ----------------------------------------------------------------------------


def peers(sizes, reps: int) -> list[dict]:
    rows = []
    for n in sizes:
        X, truth = network_frame("asia", n, seed=1)
        codes = X.apply(lambda c: c.cat.codes).to_numpy().astype(np.int64)
        for ours, theirs_cl, theirs_pg in (("g", "gsq", "g_sq"), ("chi-square", "chisq", "chi_square")):
            found = {}
            for label, run in peer_runners(X, codes, ours, theirs_cl, theirs_pg).items():
                times = []
                for _ in range(reps):
                    start = time.perf_counter()
                    try:
                        found[label] = run()
                    except ImportError as err:
                        print(f"peers: {label} skipped ({err})")
                        break
                    times.append(time.perf_counter() - start)
                if times:
                    rows.append(dict(rows=n, test=ours, library=label, reps=len(times), best_seconds=min(times),
                                     median_seconds=float(np.median(times)),
                                     skeleton_f1_vs_truth=skeleton_scores(_as_graph(found[label], X.columns), truth)["f1"],
                                     same_skeleton_as_privgraph=found[label] == found.get("privgraph")))
                    print(f"peers n={n:>8d} {ours:10s} {label:12s} {rows[-1]['median_seconds']:.3f} s", flush=True)
    return rows


def _as_graph(edges, names):
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(names)
    g.add_edges_from(tuple(e) for e in edges)
    return g


def peer_runners(X, codes, ours, cl_test, pg_test):
    names = list(X.columns)

    def privgraph_pc():
        # causal-learn's convention for tests without information, so the skeletons can agree
        return skeleton_edges(PrivPC(method="pc", ci_test=ours, max_cond_size=None, degenerate="independent").fit(X))

    def causal_learn_pc():
        from causallearn.search.ConstraintBased.PC import pc

        cg = pc(codes, 0.05, cl_test, stable=True, show_progress=False, uc_rule=0)
        adj = cg.G.graph
        return {frozenset((names[i], names[j])) for i in range(len(names)) for j in range(i + 1, len(names))
                if adj[i, j] != 0}

    def pgmpy_pc():
        from pgmpy.estimators import PC

        skel = PC(data=X).estimate(variant="stable", ci_test=pg_test, significance_level=0.05,
                                   max_cond_vars=len(names) - 2, return_type="skeleton", n_jobs=1,
                                   show_progress=False)
        graph = skel[0] if isinstance(skel, tuple) else skel
        return {frozenset(e) for e in graph.edges()}

    return {"privgraph": privgraph_pc, "causal-learn": causal_learn_pc, "pgmpy": pgmpy_pc}


# --- main -----------------------------------------------------------------------------


def write_csv(rows, path: Path) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("target", "figure1", "table2", "peers", "all"), default="all")
    ap.add_argument("--quick", action="store_true", help="5 budgets, 2 repetitions, n = 20,000 (a smoke run)")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    RESULTS.mkdir(exist_ok=True)
    n, reps = (20_000, 2) if args.quick else (100_000, 5)
    budgets = np.logspace(-0.5, 2, 5 if args.quick else 21)
    summary_path = RESULTS / "discovery_summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    if args.part in ("target", "all"):
        summary["target"] = target(5 if args.quick else 21, n)
    if args.part in ("figure1", "all"):
        rows = figure1(budgets, reps, n)
        write_csv(rows, RESULTS / "discovery_figure1.csv")
        plot_figure1(rows, RESULTS / "discovery_figure1.png")
        summary["figure1_claims"] = check_claims(rows)
        print(json.dumps(summary["figure1_claims"], indent=1))
    if args.part in ("table2", "all"):
        rows = table2(3 if args.quick else 7, n)
        write_csv(rows, RESULTS / "discovery_table2.csv")
        summary["table2"] = rows
    if args.part in ("peers", "all"):
        rows = peers((100_000,) if args.quick else (100_000, 1_000_000), 1 if args.quick else 3)
        write_csv(rows, RESULTS / "discovery_peers.csv")
        summary["peers"] = rows
        big = max(r["rows"] for r in rows)
        ratio = {t: next((r["median_seconds"] for r in rows if r["rows"] == big and r["test"] == t
                          and r["library"] == "causal-learn"), math.nan)
                 / next(r["median_seconds"] for r in rows if r["rows"] == big and r["test"] == t
                        and r["library"] == "privgraph") for t in ("g", "chi-square")}
        summary["speedup_vs_causal_learn"] = {"rows": big, **ratio}
        print("speed-up against causal-learn:", summary["speedup_vs_causal_learn"])
    summary_path.write_text(json.dumps(summary, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
