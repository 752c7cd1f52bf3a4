"""Settling Gauss-PC's share of the release's rho (``release.planner.GAUSS_SPLIT``), on seeds never reported.

    python3 benchmarks/bench_release_split.py --part f1     # asia 1e5, seeds 10-29: skeleton F1 by share
    python3 benchmarks/bench_release_split.py --part tvd    # 4 networks at 1e5, seeds 100-102: TVD and F1 by share

``f1``: the release's stage 1 alone, ``PrivPC(method="gauss-pc", epsilon=gauss_epsilons(1,
1e-6, share)[0])``, against Priv-PC alone with the whole budget (``PrivPC(epsilon=1)``), on
the same sample (seed s) with noise seed 1000 + s; mean skeleton F1 and its standard error.
``tvd``: whole releases forced to Gauss-PC at each share (``bench_release.py``'s metrics;
training sample and noise seed s). Seeded noise: reproducible, not private.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

SHARES = (0.3, 0.4, 0.5, 0.6, 0.7)


def skeleton_f1(found, truth) -> float:
    return 2 * len(truth & found) / (len(truth) + len(found)) if truth or found else 1.0


def part_f1(seeds) -> None:
    from privgraph.causal import PrivPC
    from privgraph.data import NumpyEngine
    from privgraph.datasets import load_network, sample
    from privgraph.release.planner import gauss_epsilons

    net = load_network("asia")
    truth = {frozenset(e) for e in net.edges}
    scores = {"priv-pc alone": []} | {s: [] for s in SHARES}
    for seed in seeds:
        engine = NumpyEngine(net.domain, sample(net, 100_000, np.random.default_rng(seed)))
        fit = PrivPC(epsilon=1.0, delta=1e-6, random_state=1000 + seed).fit(engine)
        scores["priv-pc alone"].append(skeleton_f1({frozenset(e) for e in fit.skeleton_.edges}, truth))
        for share in SHARES:
            fit = PrivPC(epsilon=gauss_epsilons(1.0, 1e-6, share)[0], delta=1e-6, method="gauss-pc",
                         random_state=1000 + seed).fit(engine)
            scores[share].append(skeleton_f1({frozenset(e) for e in fit.skeleton_.edges}, truth))
    for key, values in scores.items():
        print(f"{key}: mean F1 {np.mean(values):.3f} (standard error {np.std(values) / np.sqrt(len(values)):.3f})")


def part_tvd(seeds) -> None:
    import bench_release as B

    from privgraph.release import PrivateRelease

    for net in ("asia", "sachs", "survey", "earthquake"):
        for share in (0.3, 0.5, 0.7):
            rows = []
            for seed in seeds:
                train, domain, truth = B.training_data(net, 100_000, seed)
                rel = PrivateRelease(epsilon=1.0, split=share, structure="gauss-pc", random_state=seed,
                                     neighbours="replace_one").fit(
                    train, domain=domain)
                score = B.scores(train, rel.sample(100_000, random_state=seed))
                rows.append((score["tvd2"], score["tvd3"], B.skeleton_f1(rel.graph_, truth)))
            tvd2, tvd3, f1 = np.mean(rows, axis=0)
            print(f"{net} share {share}: 2-way TVD {tvd2:.4f}, 3-way {tvd3:.4f}, skeleton F1 {f1:.3f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["f1", "tvd"], required=True)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.part == "f1":
        part_f1(range(10, 30))
    else:
        part_tvd(range(100, 103))


if __name__ == "__main__":
    main()
