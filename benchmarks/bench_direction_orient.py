"""Orientation inside discovery: what the direction tests add on bundled networks (issue 29, bonus).

``PrivPC(orient="direction")`` (Priv-PC's skeleton and colliders, then the released CPDAG's
undirected edges oriented by :func:`privgraph.causal.direction.orient.orient_by_direction`
on the ordered / binary columns, ``orient_share`` of the budget) against
``orient="cpdag"`` (the CPDAG as released, the same epsilon all for the structure). Each
true edge found in the skeleton is counted as directed the right way, the wrong way or left
undirected. The direction score is swapped by replacing ``orient_by_direction``'s default
(``--scores reci kendall``); abstention is the default (below 0.6 an edge stays undirected).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_direction_orient.py --networks sachs asia --seeds 5
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path

import numpy as np

from privgraph.causal import PrivPC
from privgraph.causal.direction import orient as orient_module
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
    original = orient_module.orient_by_direction
    rows = []
    for seed in range(seeds):
        frame = sample_frame(net, n, np.random.default_rng(seed))
        settings = [("cpdag", None)] + [("direction", s) for s in scores]
        for orient, score in settings:
            start = time.process_time()
            if score is not None:
                orient_module.orient_by_direction = functools.partial(original, score=score)
            try:
                est = PrivPC(epsilon=epsilon, orient=orient, random_state=seed).fit(frame)
            finally:
                orient_module.orient_by_direction = original
            rows.append({"network": network, "seed": seed, "orient": orient, "score": score,
                         **counts(est.graph_, net.edges), "cpu_s": time.process_time() - start})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", nargs="+", default=["sachs", "asia"])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--scores", nargs="+", default=["reci", "kendall"])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "direction_orient.json")
    args = parser.parse_args()
    rows = [r for net in args.networks for r in run(net, args.n, args.epsilon, args.seeds, args.scores)]
    summary = {}
    for r in rows:
        key = f"{r['network']} {r['orient']} {r['score'] or ''}".strip()
        s = summary.setdefault(key, {"right": 0, "wrong": 0, "undirected": 0, "cpu_s": 0.0, "runs": 0})
        for k in ("right", "wrong", "undirected", "cpu_s"):
            s[k] += r[k]
        s["runs"] += 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"settings": vars(args) | {"out": str(args.out)}, "summary": summary,
                                    "rows": rows}, indent=1))
    for key, s in summary.items():
        print(key, s)


if __name__ == "__main__":
    main()
