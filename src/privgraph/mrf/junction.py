"""Junction trees: construction (greedy triangulation) and exact calibration.

:func:`junction_tree` triangulates the model's interaction graph by greedy elimination
(fewest fill-in edges, then smallest table), keeps the maximal elimination cliques and joins
them by a maximum-weight spanning tree on separator sizes, which has the running-intersection
property. :func:`calibrate` runs the two-pass sum-product algorithm (Hugin form) in log
space: tables and messages are log-sum-exps, so the log-partition function is exact and no
finite potentials make a belief vanish or overflow.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.mrf.factor import logsumexp

Clique = tuple[str, ...]


@dataclass(frozen=True)
class JunctionTree:
    """A junction tree for a list of model cliques, with the index plans calibration uses.

    ``cliques`` are the tree's cliques (names in domain order); ``parent[i]`` is -1 at the
    root; ``order`` lists parents before children; ``assignment[k]`` is the tree clique
    that holds model clique ``k``.

    Examples
    --------
    >>> t = junction_tree(Domain.of(a=2, b=2, c=2, d=2), (("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")))
    >>> sorted(len(c) for c in t.cliques), t.cells
    ([3, 3], 16)
    """

    domain: Domain
    model_cliques: tuple[Clique, ...]
    cliques: tuple[Clique, ...]
    parent: tuple[int, ...]
    order: tuple[int, ...]
    assignment: tuple[int, ...]

    @property
    def cells(self) -> int:
        """Total number of cells of the tree's clique tables (its memory and time cost)."""
        return sum(self.domain.cells(c) for c in self.cliques)

    @functools.cached_property
    def _plans(self):
        return _plans(self)


@functools.lru_cache(maxsize=256)
def junction_tree(domain: Domain, cliques: tuple[Clique, ...]) -> JunctionTree:
    """Build (and cache) a junction tree covering every column of ``domain``.

    Columns in no clique get a clique of their own, so the tree describes a model over the
    whole domain.

    >>> junction_tree(Domain.of(a=2, b=3), (("a",),)).cliques
    (('a',), ('b',))
    """
    tree_cliques = _maximal(_eliminate(domain, cliques), domain)
    parent, order = _spanning_tree(tree_cliques)
    assignment = tuple(
        min(
            (i for i, t in enumerate(tree_cliques) if set(c) <= set(t)),
            key=lambda i: domain.cells(tree_cliques[i]),
        )
        for c in cliques
    )
    return JunctionTree(domain, tuple(cliques), tree_cliques, parent, order, assignment)


def _eliminate(domain: Domain, cliques: Sequence[Clique]) -> list[set[str]]:
    adj = {n: set() for n in domain.names}
    for c in cliques:
        for u in c:
            adj[u].update(v for v in c if v != u)
    out = []
    while adj:
        def cost(v):
            nb = adj[v]
            fill = sum(1 for a, b in itertools.combinations(nb, 2) if b not in adj[a])
            return fill, domain.cells(sorted(nb | {v}, key=domain.index)), domain.index(v)

        v = min(adj, key=cost)
        nb = adj.pop(v)
        out.append(nb | {v})
        for u in nb:
            adj[u] |= nb - {u}
            adj[u].discard(v)
    return out


def _maximal(cliques: list[set[str]], domain: Domain) -> tuple[Clique, ...]:
    kept: list[set[str]] = []
    for c in sorted(cliques, key=len, reverse=True):
        if not any(c <= k for k in kept):
            kept.append(c)
    return tuple(tuple(sorted(c, key=domain.index)) for c in kept)


def _spanning_tree(cliques: tuple[Clique, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Kruskal on separator sizes (empty separators join components); then orient from 0."""
    pairs = sorted(
        itertools.combinations(range(len(cliques)), 2),
        key=lambda p: -len(set(cliques[p[0]]) & set(cliques[p[1]])),
    )
    root = list(range(len(cliques)))

    def find(i):
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    nbrs = {i: [] for i in range(len(cliques))}
    for i, j in pairs:
        if find(i) != find(j):
            root[find(i)] = find(j)
            nbrs[i].append(j)
            nbrs[j].append(i)
    parent = [-1] * len(cliques)
    order, seen = [0], {0}
    for i in order:
        for j in nbrs[i]:
            if j not in seen:
                seen.add(j)
                parent[j] = i
                order.append(j)
    return tuple(parent), tuple(order)


def _plans(tree: JunctionTree):
    """Axis bookkeeping for :func:`calibrate`, computed once per tree."""
    pos = [{n: i for i, n in enumerate(c)} for c in tree.cliques]
    shapes = [tuple(tree.domain.project(c).shape) for c in tree.cliques]
    load = []  # model clique k -> (transpose to tree order, shape in the tree clique)
    marg = []  # model clique k -> (axes to sum in the tree clique, transpose to clique order)
    for k, c in enumerate(tree.model_cliques):
        t = tree.cliques[tree.assignment[k]]
        inside = sorted(c, key=pos[tree.assignment[k]].get)
        load.append(
            (
                tuple(c.index(n) for n in inside),
                tuple(tree.domain.size_of(n) if n in c else 1 for n in t),
            )
        )
        marg.append((tuple(i for i, n in enumerate(t) if n not in c), tuple(inside.index(n) for n in c)))
    edges = []  # child -> (sum axes in child, parent-layout shape, sum axes in parent, child-layout shape)
    for c, p in enumerate(tree.parent):
        if p < 0:
            edges.append(None)
            continue
        sep = set(tree.cliques[c]) & set(tree.cliques[p])
        edges.append(
            (
                tuple(i for i, n in enumerate(tree.cliques[c]) if n not in sep),
                tuple(tree.domain.size_of(n) if n in sep else 1 for n in tree.cliques[p]),
                tuple(i for i, n in enumerate(tree.cliques[p]) if n not in sep),
                tuple(tree.domain.size_of(n) if n in sep else 1 for n in tree.cliques[c]),
            )
        )
    return shapes, load, marg, edges


def calibrate(tree: JunctionTree, potentials: Sequence[np.ndarray]) -> tuple[list[np.ndarray], float]:
    """Exact clique beliefs (normalised probability tables) and the log-partition function.

    ``potentials[k]`` is the log-potential of ``tree.model_cliques[k]`` (axes in clique
    order). Tables and messages stay in log space (each message a log-sum-exp), so no
    finite potentials, however far apart, make a message or a belief vanish or overflow.
    Non-finite potentials (an optimiser's step that overflowed) raise ``FloatingPointError``.

    >>> t = junction_tree(Domain.of(a=2, b=2), (("a", "b"),))
    >>> beliefs, log_z = calibrate(t, [np.log([[1.0, 1.0], [1.0, 5.0]])])
    >>> round(float(np.exp(log_z)), 6), beliefs[0].round(3).tolist()
    (8.0, [[0.125, 0.125], [0.125, 0.625]])
    """
    shapes, load, _, edges = tree._plans
    logs = [np.zeros(s) for s in shapes]
    for k, theta in enumerate(potentials):
        perm, shape = load[k]
        a = tree.assignment[k]
        logs[a] = logs[a] + np.transpose(theta, perm).reshape(shape)
    for c, t in enumerate(logs):
        if not np.isfinite(t).all():
            raise FloatingPointError(f"log-potential of tree clique {tree.cliques[c]} is not finite")
    upward = [None] * len(shapes)
    for c in reversed(tree.order):
        p = tree.parent[c]
        if p >= 0:
            upward[c] = logsumexp(logs[c], edges[c][0], keepdims=True)
            logs[p] = logs[p] + upward[c].reshape(edges[c][1])
    root = tree.order[0]
    log_z = float(logsumexp(logs[root], None))
    for c in tree.order:
        p = tree.parent[c]
        if p >= 0:  # logs[p] is already the parent's calibrated log-belief (unnormalised)
            down = logsumexp(logs[p], edges[c][2], keepdims=True).reshape(edges[c][3])
            ratio = down - upward[c]
            logs[c] = logs[c] + (ratio - np.max(ratio))  # shifted: beliefs are normalised below
    return [_normalised_exp(t) for t in logs], log_z


def _normalised_exp(log_table: np.ndarray) -> np.ndarray:
    b = np.exp(log_table - np.max(log_table))  # its largest cell is 1: the sum is in [1, size]
    return b / b.sum()


def clique_marginals(tree: JunctionTree, beliefs: list[np.ndarray]) -> list[np.ndarray]:
    """The marginal of every model clique (axes in the clique's own order) from beliefs.

    >>> t = junction_tree(Domain.of(a=2, b=2), (("b", "a"),))
    >>> beliefs, _ = calibrate(t, [np.log([[1.0, 3.0], [1.0, 3.0]])])
    >>> clique_marginals(t, beliefs)[0].round(3).tolist()
    [[0.125, 0.375], [0.125, 0.375]]"""
    _, _, marg, _ = tree._plans
    out = []
    for k, (axes, perm) in enumerate(marg):
        b = beliefs[tree.assignment[k]]
        out.append(np.transpose(b.sum(axis=axes) if axes else b, perm))
    return out
