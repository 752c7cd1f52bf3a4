"""Junction trees: construction by greedy triangulation (calibration: :mod:`.calibration`).

:func:`junction_tree` triangulates the model's interaction graph by greedy elimination
(fewest fill-in edges, then smallest table), keeps the maximal elimination cliques and joins
them by a maximum-weight spanning tree on separator sizes, which has the running-intersection
property.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import privgraph.caches as caches
from privgraph.data.domain import Domain

Clique = tuple[str, ...]


@dataclass(frozen=True)
class JunctionTree:
    """A junction tree for a list of model cliques.

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

    @functools.cached_property
    def cells(self) -> int:
        """Total number of cells of the tree's clique tables (its memory and time cost)."""
        return sum(self.domain.cells(c) for c in self.cliques)



@caches.lru(256)
def junction_tree(domain: Domain, cliques: tuple[Clique, ...]) -> JunctionTree:
    """Build (and cache) a junction tree covering every column of ``domain``.

    Columns in no clique get a clique of their own, so the tree describes a model over the
    whole domain.

    >>> junction_tree(Domain.of(a=2, b=3), (("a",),)).cliques
    (('a',), ('b',))
    """
    tree_cliques = _maximal(_eliminate(domain, cliques), domain)
    parent, order = _spanning_tree(tree_cliques)
    size = dict(zip(domain.names, domain.sizes))
    cells = [math.prod(size[v] for v in t) for t in tree_cliques]
    assignment = tuple(
        min((i for i, t in enumerate(tree_cliques) if set(c) <= set(t)), key=cells.__getitem__)
        for c in cliques
    )
    return JunctionTree(domain, tuple(cliques), tree_cliques, parent, order, assignment)


def _eliminate(domain: Domain, cliques: Sequence[Clique]) -> list[set[str]]:
    adj = {n: set() for n in domain.names}
    for c in cliques:
        for u in c:
            adj[u].update(v for v in c if v != u)
    size, position = dict(zip(domain.names, domain.sizes)), {n: i for i, n in enumerate(domain.names)}
    out = []
    while adj:
        def cost(v):  # fewest fill-in edges, then the smallest table, then the first column
            nb = adj[v]
            fill = sum(1 for a, b in itertools.combinations(nb, 2) if b not in adj[a])
            return fill, size[v] * math.prod(size[u] for u in nb), position[v]

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
