"""EM-PC (Xu et al. 2017): per level, the exponential mechanism picks how many edges to delete, then which.

EM-PC decides a whole level at once, offline, so it has its own loop rather than a
decider. At level l, for every edge e still present (not required), every test of e
given a set S of l nodes from the level's adjacencies is run, and ``a_e`` is the largest
normalised margin over them (:mod:`privgraph.causal.margins`: sensitivity 1 under
replace-one, so ``a_e``, a maximum of such margins, has sensitivity 1 too). Then:

1. **How many.** With ``a_(1) >= a_(2) >= ...`` sorted, deleting k edges has utility
   ``min(a_(k), -a_(k+1))`` (the top k look independent, the rest dependent): order
   statistics of 1-sensitive scores are 1-sensitive, so this is one exponential mechanism.
2. **Which.** The exponential mechanism over all k-subsets T with utility
   ``min(a_e, e in T)`` (sensitivity 1), sampled exactly: the subsets whose smallest
   member is the j-th largest number ``C(j-1, k-1)``, so pick j with weight
   ``C(j-1, k-1) exp(eps a_(j) / 2)``, then k - 1 of the j - 1 above it uniformly.
3. **Separating sets** (levels >= 1, needed by the orientation): for each deleted edge,
   report-noisy-max over its sets S with utility ``a_{e,S}``, each at 1/k of the level's
   share (k is already released).

The reference code measures "records to change to flip a decision" by a greedy
pure-Python count (slow, and not obviously 1-sensitive as computed) and indexes the
separating sets with the wrong loop variable; the normalised margin is a 1-sensitive
stand-in (it lower-bounds that number) computed from the tables in microseconds.

Every level's three charges are reserved for every level up to ``max_cond_size`` before
the data is touched (a fixed plan); levels with nothing to test leave theirs unused.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Callable, Iterable, Sequence

import networkx as nx
import numpy as np

from privgraph.causal.deciders import BudgetTooSmall, accountant_for
from privgraph.causal.margins import RO
from privgraph.causal.skeleton import Skeleton, checked_pairs, start_graph
from privgraph.data.tables import Tables
from privgraph.privacy import (
    Budget,
    Charge,
    Ledger,
    NoiseSampler,
    exponential_mechanism,
    fit_rounds_to_budget,
    report_noisy_max,
    reserve_plan,
)
from privgraph.privacy.samplers import PURE_DP_SLACK
from privgraph.validation import InvalidInput


def em_pc_skeleton(
    tables: Tables,
    margin,
    *,
    epsilon: float,
    delta: float,
    max_cond_size: int,
    sampler: NoiseSampler,
    budget: Budget | None = None,
    forbidden: Iterable[tuple[str, str]] = (),
    required: Iterable[tuple[str, str]] = (),
    on_level: Callable[[int, int], None] | None = None,
) -> tuple[Skeleton, Ledger]:
    """EM-PC's skeleton and the ledger of its whole plan (see the module docstring).

    Examples
    --------
    >>> from privgraph.datasets import load_network, sample
    >>> from privgraph.data import NumpyEngine
    >>> from privgraph.privacy import SeededSampler
    >>> from privgraph.stats import KendallTest
    >>> from privgraph.causal.margins import RankMargin
    >>> net = load_network("cancer")
    >>> t = Tables.from_engine(NumpyEngine(net.domain, sample(net, 20_000, np.random.default_rng(0))))
    >>> sk, ledger = em_pc_skeleton(t, RankMargin(KendallTest(), 0.05), epsilon=1.0, delta=1e-6,
    ...                             max_cond_size=2, sampler=SeededSampler(0))
    >>> round(ledger.total("optimal", 1e-6).epsilon, 6)
    1.0
    """
    if isinstance(max_cond_size, bool) or int(max_cond_size) != max_cond_size or max_cond_size < 0:
        raise InvalidInput(f"EM-PC needs a finite max_cond_size >= 0, got {max_cond_size!r}")
    levels, method = int(max_cond_size) + 1, accountant_for(delta)
    per_charge = fit_rounds_to_budget(lambda r: _plan(r, levels), 1, epsilon, delta, method)
    useful = margin.useful_noise(tables.n)
    if 2.0 / per_charge > useful:
        raise BudgetTooSmall(
            f"epsilon={epsilon:g} over EM-PC's {len(_plan(1.0, levels))} selections ({levels} levels) "
            f"gives each an epsilon of {per_charge:.3g}: its utilities (margin {useful:.3g}) would be drowned"
        )
    margin.expect_noise(2.0 / per_charge, rows=tables.n)  # public: the degenerate-table shift (scores.py)
    plan = reserve_plan(_plan(per_charge, levels), budget)
    nodes = list(tables.names)
    graph = start_graph(nodes, checked_pairs(forbidden, nodes, "forbidden"))
    keep = checked_pairs(required, nodes, "required")
    full = margin.prepare(tables, sampler)
    sepsets, tests = {}, 0
    for level in range(levels):
        if not any(graph.degree(v) - 1 >= level for v in graph.nodes):
            break
        if on_level is not None:
            on_level(level, graph.number_of_edges())
        tests += _run_level(graph, level, full, margin, keep, sepsets, per_charge, sampler)
    return Skeleton(graph, sepsets, tests, True), plan


def _plan(r: float, levels: int) -> list[Charge]:
    """The fixed plan: count and subset selections at every level, separating sets from level 1."""
    plan = []
    for level in range(levels):
        plan += [Charge("exponential", r, 0.0, RO, sensitivity=1.0, note=f"EM-PC level {level}: how many"),
                 Charge("exponential", r, 0.0, RO, sensitivity=1.0, note=f"EM-PC level {level}: which")]
        if level:
            plan.append(Charge("report_noisy_max", r, 0.0, RO, sensitivity=1.0,
                               note=f"EM-PC level {level}: separating sets"))
    return plan


def _run_level(graph: nx.Graph, level: int, view, margin, keep: set, sepsets: dict, r: float,
               sampler: NoiseSampler) -> int:
    order = {v: i for i, v in enumerate(graph.nodes)}
    snapshot = {v: sorted(graph.adj[v], key=order.get) for v in graph.nodes}
    edges, scores, sets = [], [], []
    for x, y in sorted(graph.edges, key=lambda e: (order[e[0]], order[e[1]])):
        if frozenset((x, y)) in keep:
            continue
        cands = [(a, b, S) for a, b in ((x, y), (y, x))
                 for S in combinations([v for v in snapshot[a] if v != b], level)]
        if cands:
            edges.append((x, y))
            sets.append(cands)
            scores.append(np.array([margin(view, a, b, S) for a, b, S in cands]))
    if not edges:
        return 0
    best = np.array([s.max() for s in scores])
    k = _how_many(best, r, sampler)
    for i in _which(best, k, r, sampler):
        x, y = edges[i]
        pick = 0 if level == 0 else report_noisy_max(scores[i], epsilon=r / k, sensitivity=1.0,
                                                     neighbours=RO, sampler=sampler).value
        graph.remove_edge(x, y)
        sepsets[frozenset((x, y))] = frozenset(sets[i][pick][2])
    return sum(len(c) for c in sets)


def _how_many(best: np.ndarray, r: float, sampler: NoiseSampler) -> int:
    """k in 0..E by the exponential mechanism with utility min(a_(k), -a_(k+1))."""
    a = np.concatenate([[np.inf], np.sort(best)[::-1], [-np.inf]])
    utility = np.minimum(a[:-1], -a[1:])
    return exponential_mechanism(utility, epsilon=r, sensitivity=1.0, neighbours=RO, sampler=sampler).value


def _which(best: np.ndarray, k: int, r: float, sampler: NoiseSampler) -> Sequence[int]:
    """k edge indices by the exponential mechanism over k-subsets with utility min(a_e)."""
    if k == 0:
        return []
    order = np.argsort(-best, kind="stable")
    j = np.arange(k, len(best) + 1)  # 1-based position of the subset's smallest member
    log_count = np.array([math.lgamma(i) - math.lgamma(k) - math.lgamma(i - k + 1) for i in j])
    factor = (r - PURE_DP_SLACK) / 2.0  # the exponential mechanism's eps / (2 sensitivity)
    utility = best[order[j - 1]] + log_count / factor  # a public shift: sensitivity stays 1
    pos = int(j[exponential_mechanism(utility, epsilon=r, sensitivity=1.0, neighbours=RO,
                                      sampler=sampler).value])
    above = sampler.choice(pos - 1, k - 1) if k > 1 else np.array([], dtype=int)
    return [int(order[pos - 1])] + [int(order[i]) for i in above]
