"""The text's synthetic models: third-order chains and connected Erdos-Renyi graphs.

Both are pairwise models over ``n_nodes`` variables named ``x0, x1, ...`` whose edge
potentials are Dirichlet(1) draws over the cells of each edge table (log taken), as in the
text's synthetic study. ``rng`` is non-private randomness.
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.mrf.model import MarkovRandomField
from privgraph.validation import InvalidInput


def third_order_chain(n_nodes: int = 10, size: int = 2, *, rng: np.random.Generator) -> MarkovRandomField:
    """Edges between nodes i and j whenever ``1 <= |i - j| <= 3``, Dirichlet(1) potentials.

    >>> m = third_order_chain(10, rng=np.random.default_rng(0))
    >>> len(m.cliques), m.cliques[:3]
    (24, (('x0', 'x1'), ('x0', 'x2'), ('x0', 'x3')))
    """
    edges = [(i, j) for i, j in itertools.combinations(range(n_nodes), 2) if j - i <= 3]
    return pairwise_model(n_nodes, size, edges, rng=rng)


def erdos_renyi(
    n_nodes: int = 10, size: int = 2, edge_probability: float = 0.3, *, rng: np.random.Generator
) -> MarkovRandomField:
    """A connected Erdos-Renyi graph (redrawn until connected), Dirichlet(1) potentials.

    The text does not give its edge probability; 0.3 is ours (about 13 edges on 10 nodes).

    >>> m = erdos_renyi(10, rng=np.random.default_rng(0))
    >>> len({v for c in m.cliques for v in c})
    10
    """
    if not 0 < edge_probability <= 1:
        raise InvalidInput(f"edge_probability must lie in (0, 1], got {edge_probability!r}")
    pairs = list(itertools.combinations(range(n_nodes), 2))
    while True:
        edges = [p for p in pairs if rng.random() < edge_probability]
        if _is_connected(n_nodes, edges):
            return pairwise_model(n_nodes, size, edges, rng=rng)


def pairwise_model(
    n_nodes: int, size: int, edges: Sequence[tuple[int, int]], *, rng: np.random.Generator
) -> MarkovRandomField:
    """Nodes ``x0..`` of ``size`` levels, one Dirichlet(1) log-potential per edge.

    >>> pairwise_model(3, 2, [(0, 1), (1, 2)], rng=np.random.default_rng(0)).cliques
    (('x0', 'x1'), ('x1', 'x2'))"""
    domain = Domain(tuple(f"x{i}" for i in range(n_nodes)), (size,) * n_nodes)
    cliques = [(f"x{i}", f"x{j}") for i, j in edges]
    return MarkovRandomField.of(domain, cliques, dirichlet_potentials(domain, cliques, rng=rng))


def dirichlet_potentials(
    domain: Domain, cliques, *, rng: np.random.Generator, concentration: float = 1.0
) -> list[np.ndarray]:
    """Log of a Dirichlet(concentration) draw over the cells of each clique table.

    >>> p = dirichlet_potentials(Domain.of(a=2, b=3), [("a", "b")], rng=np.random.default_rng(0))
    >>> p[0].shape, round(float(np.exp(p[0]).sum()), 9)
    ((2, 3), 1.0)"""
    out = []
    for c in cliques:
        shape = domain.project(c).shape
        draw = rng.dirichlet(np.full(int(np.prod(shape)), concentration))
        out.append(np.log(np.maximum(draw, 1e-300)).reshape(shape))
    return out


def _is_connected(n_nodes: int, edges) -> bool:
    nbrs = {i: set() for i in range(n_nodes)}
    for i, j in edges:
        nbrs[i].add(j)
        nbrs[j].add(i)
    seen, todo = {0}, [0]
    while todo:
        for j in nbrs[todo.pop()] - seen:
            seen.add(j)
            todo.append(j)
    return len(seen) == n_nodes
