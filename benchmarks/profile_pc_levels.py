"""Where non-private PC's time goes on a wide table, level by level (issue 13, hepar2).

One run of privgraph's stable PC (G test, alpha 0.05, default convention) on
``sample(network, rows, default_rng(0))`` to ``--depth`` (default: the default rule), and

* per level: CPU seconds and the edges left when it starts;
* with ``--count``, the set-by-set path's work (:meth:`privgraph.causal.pc_counting.Covers.set_verdicts`): for each
  conditioning size, the sets counted, the mean distinct cover rows a set passes over, the
  share of those rows in strata where x varies (the rest are degenerate strata, which
  carry nothing for any v), and the verdicts computed against those a test reads;
* ``--removed K``: each edge removed given a set of K or more variables, whether it is an
  arc of the true network, and the p-value that removed it;
* ``--bound``: after level 3, how many edge sides a - b (at least four other adjacencies A)
  the information bound ``G(a;b|S) >= 2N (I(a;b) - min(I(a;A), I(b;A)))`` would declare
  dependent for every S within A without counting (plug-in entropies, critical value at
  the largest degrees of freedom).

The counting is observed by wrapping two ``Covers`` methods in this process, which slows
the run: take the per-level times from a run without ``--count``. Run:
    python3 benchmarks/profile_pc_levels.py --network hepar2 --rows 100000 [--depth 7] [--count] [--bound] [--removed 4]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np

from privgraph.causal import NonPrivate, Tables, stable_pc_skeleton
from privgraph.causal.estimators import default_max_cond_size
from privgraph.data import NumpyEngine
from privgraph.causal import pc_counting as C
from privgraph.datasets import load_network, sample
from privgraph.stats import GTest


def observe() -> tuple[dict, dict]:
    """Wrap ``Covers._decide_sets`` and ``Covers.set_verdicts``: per set size [sets, rows,
    rows where x varies, verdicts computed], and the (x, S) -> {v read}."""
    work: dict = defaultdict(lambda: [0, 0, 0, 0])
    read: dict = defaultdict(set)
    decide_sets, set_verdicts = C.Covers._decide_sets, C.Covers.set_verdicts

    def counted(self, base, sets, decide):
        names, rows, _ = base
        x = self._widened(rows)[0]
        for S in sets:
            ids, count = self._set_ids(base, S)
            low, high = np.full(count, np.iinfo(np.int64).max), np.full(count, -1)
            np.minimum.at(low, ids, x)
            np.maximum.at(high, ids, x)
            w = work[len(S)]
            w[0] += 1
            w[1] += rows.shape[0]
            w[2] += int((low != high)[ids].sum())
            w[3] += sum(v not in S for v in names[1:])
        return decide_sets(self, base, sets, decide)

    def reading(self, x, y, sets, decide):
        out = set_verdicts(self, x, y, sets, decide)
        for S in sets[:len(out)]:
            read[(x, S)].add(y)
        return out

    C.Covers._decide_sets, C.Covers.set_verdicts = counted, reading
    return work, read


def information_bound(net, codes: np.ndarray, graph, alpha: float = 0.05) -> tuple[int, int]:
    """(edge sides the bound settles, edge sides with >= 4 other adjacencies) on ``graph``."""
    from scipy.stats import chi2

    names, sizes = net.domain.names, dict(zip(net.domain.names, net.domain.sizes))
    col, n = {v: codes[:, i].astype(np.int64) for i, v in enumerate(names)}, codes.shape[0]

    def entropy(cols) -> float:
        ids = np.zeros(n, dtype=np.int64)
        for c in cols:
            _, ids = np.unique(ids * sizes[c] + col[c], return_inverse=True)
        p = np.bincount(ids) / n
        return float(-(p * np.log(p)).sum())

    def info(a, B) -> float:
        return entropy([a]) + entropy(B) - entropy([a, *B])

    settled = sides = 0
    for x, v in graph.edges:
        for a, b in ((x, v), (v, x)):
            A = [w for w in graph.adj[a] if w != b]
            if len(A) < 4:
                continue
            sides += 1
            cells = min(float(np.prod([sizes[w] for w in A], dtype=float)), n)
            crit = chi2.isf(alpha, (sizes[a] - 1) * (sizes[b] - 1) * cells)
            settled += 2 * n * (info(a, [b]) - min(info(a, A), info(b, A))) > crit
    return settled, sides


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", default="hepar2")
    ap.add_argument("--rows", type=float, default=1e5)
    ap.add_argument("--depth", type=int, default=None)
    ap.add_argument("--count", action="store_true", help="observe the set-by-set path's work (slower)")
    ap.add_argument("--bound", action="store_true")
    ap.add_argument("--removed", type=int, default=None, metavar="K")
    args = ap.parse_args()
    net, n = load_network(args.network), int(args.rows)
    codes = sample(net, n, np.random.default_rng(0))
    depth = default_max_cond_size(n, len(net.domain.names)) if args.depth is None else args.depth
    work, read = observe() if args.count else ({}, {})
    clock = [0.0]

    def on_level(level: int, edges: int) -> None:
        now = time.process_time()
        print(f"level {level} starts with {edges} edges (the level before took {now - clock[0]:.2f} CPU-s)", flush=True)
        clock[0] = now

    start = clock[0] = time.process_time()
    tables = Tables.from_engine(NumpyEngine(net.domain, codes))
    sk = stable_pc_skeleton(net.domain.names, NonPrivate(tables, GTest(), 0.05), max_cond_size=depth,
                            on_level=on_level)
    print(f"done: {time.process_time() - start:.1f} CPU-s (last level {time.process_time() - clock[0]:.2f}), "
          f"{sk.n_tests} tests, {sk.graph.number_of_edges()} edges")
    for size, (sets, rows, varies, verdicts) in sorted(work.items()):
        print(f"sets of {size}: {sets} counted, {rows / sets:.0f} cover rows each, {varies / rows:.3f} of them "
              f"where x varies")
    computed = sum(w[3] for w in work.values())
    if args.count:
        print(f"verdicts computed {computed}, read {sum(map(len, read.values()))}; row visits "
              f"{sum(w[1] for w in work.values()):.3g}")
    if args.removed is not None:
        truth = {frozenset(e) for e in net.edges}
        for pair, S in sk.sepsets.items():
            if len(S) >= args.removed:
                x, y = sorted(pair)
                p = GTest().decide(tables.table((x, y, *sorted(S))), 0.05).pvalue
                print(f"removed {'TRUE arc' if pair in truth else 'non-arc '} {x} - {y} given {len(S)}: p {p:.3f}")
    if args.bound:
        level3 = stable_pc_skeleton(net.domain.names, NonPrivate(tables, GTest(), 0.05), max_cond_size=3).graph
        settled, sides = information_bound(net, codes, level3)
        print(f"information bound after level 3: settles {settled} of {sides} edge sides")


if __name__ == "__main__":
    main()
