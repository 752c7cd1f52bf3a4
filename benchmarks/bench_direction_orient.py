"""Orientation inside discovery: what the direction tests add on bundled networks (issue 29, bonus).

``PrivPC(orient="direction")`` (Priv-PC's skeleton and colliders, then the released CPDAG's
undirected edges oriented by :func:`privgraph.causal.direction.orient.orient_by_direction`
on the ordered / binary columns, ``orient_share`` of the budget) against
``orient="cpdag"`` (the CPDAG as released, the same epsilon all for the structure). Each
true edge found in the skeleton is counted as directed the right way, the wrong way or left
undirected. The direction score is swapped by replacing ``orient_by_direction``'s default
(``--scores reci kendall``); abstention is the default (below 0.6 an edge stays undirected).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_direction_orient.py --networks sachs asia --seeds 5

``--real sachs sem`` (issue 47) adds tables with continuous columns, with the Fisher-z PC of
``bench_discovery_real.py`` (its bounds, never read from the data): Sachs et al.'s 7,466 raw
flow-cytometry intensities from the cdt 0.6.0 wheel (``--wheel``), scored against the arcs of
the bundled consensus ``sachs.bif`` (``sachs-log10``: the same intensities as log10(1 + x),
bounds [0, 5]: a public transform), and its linear-Gaussian SEM (20 nodes, the true DAG;
linear-Gaussian directions are not identifiable, so a coin is the expected orientation).
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path

import numpy as np

from privgraph.causal import PrivPC
from privgraph.causal import estimators as estimators_module
from privgraph.datasets import load_network
from privgraph.datasets.network import sample_frame


def counts(graph, truth) -> dict:
    right = wrong = undirected = 0
    for a, b in truth:
        if graph.has_directed(a, b):
            right += 1
        elif graph.has_directed(b, a):
            wrong += 1
        elif graph.has_undirected(a, b):
            undirected += 1
    return {"right": right, "wrong": wrong, "undirected": undirected}


def run(network: str, n: int, epsilon: float, seeds: int, scores) -> list[dict]:
    net = load_network(network)
    original = estimators_module.orient_by_direction  # PrivPC calls it by this name
    rows = []
    for seed in range(seeds):
        frame = sample_frame(net, n, np.random.default_rng(seed))
        settings = [("cpdag", None)] + [("direction", s) for s in scores]
        for orient, score in settings:
            start = time.process_time()
            if score is not None:
                estimators_module.orient_by_direction = functools.partial(original, score=score)
            try:
                est = PrivPC(epsilon=epsilon, orient=orient, random_state=seed).fit(frame)
            finally:
                estimators_module.orient_by_direction = original
            rows.append({"network": network, "seed": seed, "orient": orient, "score": score,
                         **counts(est.graph_, net.edges), "cpu_s": time.process_time() - start})
    return rows


def run_real(name: str, epsilon: float, seeds: int, scores, wheel: Path) -> list[dict]:
    """The Fisher-z PC on a continuous table (``bench_discovery_real.continuous_table``), as released
    (orient="cpdag") and with the direction tests (orient="direction"), the same epsilon in all."""
    from bench_discovery_real import continuous_table

    frame, _, domain, _, _ = continuous_table(name.removesuffix("-log10"), wheel)
    if name == "sachs-log10":  # a public transform, round bounds: log10(1 + intensity) in [0, 5]
        from privgraph.data import Domain, Kind

        frame = np.log10(1.0 + frame.clip(lower=0.0))
        domain = Domain(tuple(frame.columns), (0,) * frame.shape[1], (Kind.CONTINUOUS,) * frame.shape[1],
                        bounds=((0.0, 5.0),) * frame.shape[1])
    if name.startswith("sachs"):
        arcs = list(load_network("sachs").edges)
    else:
        from bench_discovery_real import SEM_D
        from privgraph.datasets.linear_gaussian import random_linear_gaussian

        arcs = list(random_linear_gaussian(SEM_D, np.random.default_rng(0)).edges)
    original = estimators_module.orient_by_direction
    rows = []
    for seed in range(seeds):
        for orient, score in [("cpdag", None)] + [("direction", s) for s in scores]:
            start = time.process_time()
            if score is not None:
                estimators_module.orient_by_direction = functools.partial(original, score=score)
            try:
                est = PrivPC(epsilon=epsilon, ci_test="fisher-z", orient=orient, random_state=seed).fit(
                    frame, domain=domain)
            finally:
                estimators_module.orient_by_direction = original
            rows.append({"network": f"{name} (continuous, fisher-z)", "seed": seed, "orient": orient, "score": score,
                         **counts(est.graph_, arcs), "cpu_s": time.process_time() - start})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", nargs="+", default=["sachs", "asia"])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--scores", nargs="+", default=["reci", "kendall"])
    parser.add_argument("--real", nargs="*", default=[], choices=["sachs", "sachs-log10", "sem"])
    parser.add_argument("--wheel", type=Path, default=Path("/tmp/cdtwheel/cdt-0.6.0-py3-none-any.whl"))
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "direction_orient.json")
    args = parser.parse_args()
    rows = [r for net in args.networks for r in run(net, args.n, args.epsilon, args.seeds, args.scores)]
    rows += [r for name in args.real for r in run_real(name, args.epsilon, args.seeds, args.scores, args.wheel)]
    summary = {}
    for r in rows:
        key = f"{r['network']} {r['orient']} {r['score'] or ''}".strip()
        s = summary.setdefault(key, {"right": 0, "wrong": 0, "undirected": 0, "cpu_s": 0.0, "runs": 0})
        for k in ("right", "wrong", "undirected", "cpu_s"):
            s[k] += r[k]
        s["runs"] += 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"settings": vars(args) | {"out": str(args.out), "wheel": str(args.wheel)}, "summary": summary,
                                    "rows": rows}, indent=1))
    for key, s in summary.items():
        print(key, s)


if __name__ == "__main__":
    main()
