"""Shared helpers for the graph tests: d-separation oracle sepsets and brute-force equivalence classes."""

from __future__ import annotations

from itertools import combinations, product

import networkx as nx
import numpy as np

_d_separated = getattr(nx, "is_d_separator", None) or getattr(nx, "d_separated")


def oracle_sepsets(dag: nx.DiGraph, *, b_first: bool = False) -> dict[frozenset[str], frozenset[str]]:
    """PC-style separating sets from d-separation: for each non-adjacent pair, the smallest
    separating set among subsets of the neighbours of one endpoint, then of the other."""
    skeleton = dag.to_undirected()
    sepsets = {}
    for a, b in combinations(dag.nodes, 2):
        if skeleton.has_edge(a, b):
            continue
        ends = (b, a) if b_first else (a, b)
        sepsets[frozenset((a, b))] = _smallest_sepset(dag, skeleton, a, b, ends)
    return sepsets


def _smallest_sepset(dag, skeleton, a, b, ends) -> frozenset[str]:
    pools = [sorted(set(skeleton[x]) - {a, b}) for x in ends]
    for size in range(len(dag)):
        for pool in pools:
            for s in combinations(pool, size):
                if _d_separated(dag, {a}, {b}, set(s)):
                    return frozenset(s)
    raise AssertionError(f"{a} and {b} are non-adjacent but not d-separated by neighbours")


def random_dag(n: int, p: float, rng: np.random.Generator) -> nx.DiGraph:
    """A DAG on nodes x0..x{n-1}: each forward pair of a random order joined with probability p."""
    names = [f"x{i}" for i in range(n)]
    order = list(rng.permutation(names))
    dag = nx.DiGraph()
    dag.add_nodes_from(names)
    dag.add_edges_from((order[i], order[j]) for i, j in combinations(range(n), 2) if rng.random() < p)
    return dag


def brute_force_cpdag_marks(dag: nx.DiGraph) -> tuple[set, set]:
    """(directed, undirected) of the equivalence class, by enumerating every orientation of the
    skeleton that is acyclic with the same v-structures: an edge is directed iff all agree."""
    edges = [tuple(e) for e in dag.to_undirected().edges]
    target = _colliders(dag)
    members = []
    for flips in product((False, True), repeat=len(edges)):
        g = nx.DiGraph()
        g.add_nodes_from(dag.nodes)
        g.add_edges_from((b, a) if f else (a, b) for (a, b), f in zip(edges, flips))
        if nx.is_directed_acyclic_graph(g) and _colliders(g) == target:
            members.append(set(g.edges))
    compelled = set.intersection(*members)
    undirected = {frozenset(e) for e in edges} - {frozenset(e) for e in compelled}
    return compelled, undirected


def _colliders(g: nx.DiGraph) -> set:
    return {
        (frozenset((a, b)), c)
        for c in g.nodes
        for a, b in combinations(g.predecessors(c), 2)
        if not (g.has_edge(a, b) or g.has_edge(b, a))
    }
