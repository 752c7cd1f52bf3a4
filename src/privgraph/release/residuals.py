"""Step 3 of the tree stage: the pairs the tree's model explains worst (MST's third step, AIM-like).

A spanning tree cannot hold a v-structure or a cycle: on child and alarm a tree fitted to
almost noiseless tables stays far from the data's two-way tables (docs/release.md). After
the tree's pair tables are released, the model fitted to them (post-processing) predicts
every pair's table; each pair not in the tree is scored by the L1 distance between its
true count table and that prediction, ``r_ij = || C_ij - n P_model(i, j) ||_1``, and k of
them are chosen by the exponential mechanism, one at a time without replacement (each
round's candidates: the pairs neither in the tree nor chosen yet, a function of earlier
releases only). Each score is less the expected L1 noise of the pair's own release (AIM's size
penalty, :func:`~privgraph.release.tree.noise_penalty`: a public constant per pair), so a wide
pair whose table would be mostly noise is chosen only when the model misses it by more.
Sensitivity: :func:`~privgraph.release.pair_scores.pair_score_sensitivity` (the prediction and the
penalty are the same on both neighbours). The penalty was tried on child and alarm alone and
left out (no gain beyond the runs' spread); on the settling seeds (100-101) of the real tables
it was part of what lowered their 2-way TVD by a fifth to a third (cces16, gss, mpls at
epsilon 1), so it is in; the reported runs measure the whole change
(docs/benchmarks/release.md). Their tables are then released like the tree's.

Everything else here (the tree model's pairwise tables) is post-processing.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from privgraph.privacy import Neighbours, NoiseSampler, exponential_mechanism
from privgraph.release.pair_scores import RO, pair_score_sensitivity


def extra_pair_count(d: int) -> int:
    """How many pairs step 3 adds to a tree over ``d`` columns (public): ``d``, or every pair
    outside the tree when there are fewer; in three rounds, or in one after AIM's adaptive
    rounds (:mod:`privgraph.release.adaptive`). Settled on seeds 100-102 of child and alarm
    against d/4, d/2, 3d/2 and 2d, and, after the adaptive rounds, on seeds 100-101 of the six
    real tables and child against d/2, 3d/2 and 2d (docs/release.md), never on the reported runs.

    >>> extra_pair_count(3), extra_pair_count(4), extra_pair_count(37)
    (1, 3, 37)
    """
    return min(d, (d - 1) * (d - 2) // 2)


def tree_pair_tables(names, edges, one_way: dict, edge_tables: dict) -> dict:
    """Every pair's probability table under a tree model, from its node and edge marginals.

    ``one_way[v]`` is P(v); ``edge_tables[(u, v)]`` is P(u, v) with axes (u, v) for each tree
    edge. Along the tree, ``P(s, v) = sum_p P(s, p) P(v | p)``, p the neighbour of v towards s.
    Returns ``{(a, b): P(a, b)}`` for every ordered pair of distinct names; two names in
    different components (a forest, when the model-size cap stopped the tree) are independent.

    >>> p_ab = np.array([[0.4, 0.1], [0.1, 0.4]])
    >>> t = tree_pair_tables("abc", [("a", "b"), ("b", "c")], {v: np.array([0.5, 0.5]) for v in "abc"},
    ...                      {("a", "b"): p_ab, ("b", "c"): p_ab})
    >>> t[("a", "c")].round(2).tolist()
    [[0.34, 0.16], [0.16, 0.34]]
    """
    adjacent = {v: [] for v in names}
    for u, v in edges:
        adjacent[u].append(v)
        adjacent[v].append(u)
    joint = {}
    for (u, v), table in edge_tables.items():
        joint[(u, v)], joint[(v, u)] = table, table.T
    out = {}
    for s in names:
        seen, queue = {s: np.diag(one_way[s])}, deque([s])
        while queue:
            p = queue.popleft()
            for v in adjacent[p]:
                if v not in seen:
                    conditional = joint[(p, v)] / np.maximum(one_way[p][:, None], 1e-300)
                    seen[v] = seen[p] @ conditional
                    queue.append(v)
        out.update({(s, v): t for v, t in seen.items() if v != s})
        out.update({(s, v): np.outer(one_way[s], one_way[v]) for v in names if v not in seen})
    return out


def select_residual_pairs(pairs, scores: np.ndarray, count: int, *, epsilon: float, sampler: NoiseSampler,
                          neighbours: Neighbours = RO, fits=None) -> list[tuple[str, str]]:
    """Up to ``count`` of ``pairs`` by the exponential mechanism, one at a time without
    replacement (score sensitivity :func:`~privgraph.release.pair_scores.pair_score_sensitivity`
    under ``neighbours``). ``fits(chosen, pair)``: whether the model with the pairs chosen so
    far (in this call) and ``pair`` stays within the public junction-tree cap
    (:func:`~privgraph.release.model_size.fits`); each selection runs on the pairs that fit,
    and once none fits the rest are not drawn (their charge was reserved all the same).

    >>> from privgraph.privacy import SeededSampler
    >>> pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    >>> select_residual_pairs(pairs, np.array([0.0, 1e6, 0.0]), 1, epsilon=1.0, sampler=SeededSampler(0))
    [('a', 'c')]
    >>> select_residual_pairs(pairs, np.array([0.0, 1e6, 0.0]), 3, epsilon=1.0, sampler=SeededSampler(0),
    ...                       fits=lambda chosen, pair: "c" not in pair)
    [('a', 'b')]
    """
    left = list(range(len(pairs)))
    chosen: list[tuple[str, str]] = []
    for _ in range(min(count, len(pairs))):
        admissible = None if fits is None else (lambda i: fits(chosen, pairs[left[i]]))
        pick, _ = exponential_mechanism(scores[left], epsilon=epsilon, sensitivity=pair_score_sensitivity(neighbours),
                                        neighbours=neighbours, sampler=sampler, admissible=admissible)
        if pick is None:
            break
        chosen.append(pairs[left.pop(pick)])
    return chosen


__all__ = ["extra_pair_count", "select_residual_pairs", "tree_pair_tables"]
