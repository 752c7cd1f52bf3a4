"""Stage (3) of a release: the model's cliques, chosen from the released graph only.

The cliques are the *families* of a DAG extension of the released CPDAG (each node with
its parents): a Bayesian network's factorisation needs exactly these marginals, and a
model over them can express every conditional table of that DAG. Each family is bounded
by a public cap on its cells: parents are dropped, the one with most levels first (ties by
domain order), until the family fits, and a dropped parent keeps its edge as a pair
``(child, parent)`` when the pair fits. Families contained in another family are removed.

Everything here reads the released graph and the public domain only: it is
post-processing and costs nothing.
"""

from __future__ import annotations

import heapq
import math
from typing import Sequence

import networkx as nx

from privgraph.data import Domain
from privgraph.release.model_size import model_cells, within_cap
from privgraph.validation import UnknownName, positive_int

#: Default public cap on the cells of one clique table.
DEFAULT_CAP = 5_000
#: Default public cap on the cells of the model's junction tree (exact inference stays fast, peak memory
#: under 500 MB on the real tables of docs/release.md; chosen there from measurements). 200,000 since
#: the adaptive rounds fill the cap: at epsilon 3 the peak of anes and cces16 was 618-661 MB at
#: 400,000 and 434-461 MB at 200,000, the TVD the same (release_tree_cap_200k.jsonl).
DEFAULT_TREE_CAP = 200_000


def family_cliques(dag: nx.DiGraph, domain: Domain, cap: int = DEFAULT_CAP, *, max_parents: int | None = None,
                   keep_pairs: bool = True) -> tuple[tuple[str, ...], ...]:
    """The capped families of ``dag`` over ``domain``, one per node unless contained in another.

    Parameters
    ----------
    dag : networkx.DiGraph
        A DAG whose nodes are the domain's names (e.g. ``CPDAG.to_dag()``).
    domain : Domain
        The public domain (sizes decide the cap).
    cap : int
        Largest number of cells of a clique table. A node whose own size exceeds it keeps
        its one-way table.
    max_parents : int, optional
        Also keep at most this many parents per family (the ones with fewest levels).
    keep_pairs : bool
        Keep a parent dropped for the cap as a pair ``(child, parent)`` when it fits.

    Examples
    --------
    >>> d = Domain.of(a=2, b=3, c=4, e=2)
    >>> dag = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "e")])
    >>> family_cliques(dag, d)
    (('c', 'a', 'b'), ('e', 'c'))
    >>> family_cliques(dag, d, cap=12)     # (c, a, b) has 24 cells: b (3 levels) is dropped
    (('c', 'a'), ('c', 'b'), ('e', 'c'))
    """
    positive_int("cap (cells)", cap, whole_floats=True)
    if missing := sorted(set(dag.nodes) - set(domain.names)):
        raise UnknownName(f"graph nodes {missing} not in domain {list(domain.names)}")
    cliques: list[tuple[str, ...]] = []
    for node in domain.names:
        parents = sorted(dag.predecessors(node), key=domain.index) if node in dag else []
        kept, dropped = _fit_family(node, parents, domain, cap, max_parents)
        cliques.append((node, *kept))
        if keep_pairs:
            cliques += [(node, p) for p in dropped if domain.cells([node, p]) <= cap]
    return drop_contained(cliques)


def extend_to_dag(cpdag, order: Sequence[str]) -> tuple[nx.DiGraph, bool]:
    """(a DAG with the skeleton of ``cpdag``, whether it is a consistent extension).

    The Dor-Tarsi extension when one exists (``CPDAG.to_dag``). A privately learned graph
    may have none (noisy tests can orient arcs into a cycle or leave an undirected part
    that needs a new v-structure); then its arcs are kept in ``order`` unless one would
    close a cycle (that one is left undirected), and every undirected edge follows a
    topological order of the arcs kept (ties by ``order``). Never raises on a valid
    graph: this runs after the budget is spent.

    >>> from privgraph.graphs import CPDAG
    >>> g = CPDAG(["a", "b", "c"], directed=[("a", "b"), ("b", "c"), ("c", "a")])
    >>> dag, consistent = extend_to_dag(g, ["a", "b", "c"])
    >>> sorted(dag.edges), consistent
    ([('a', 'b'), ('a', 'c'), ('b', 'c')], False)
    """
    try:
        return cpdag.to_dag(), True
    except ValueError:
        pass
    rank = {v: i for i, v in enumerate(order)}
    dag = nx.DiGraph()
    dag.add_nodes_from(cpdag.nodes)
    loose = list(cpdag.undirected_edges)
    for a, b in sorted(cpdag.directed_edges, key=lambda e: (rank[e[0]], rank[e[1]])):
        if nx.has_path(dag, b, a):
            loose.append((a, b))
        else:
            dag.add_edge(a, b)
    position = {v: i for i, v in enumerate(nx.lexicographical_topological_sort(dag, key=rank.get))}
    for a, b in loose:
        dag.add_edge(*((a, b) if position[a] < position[b] else (b, a)))
    return dag, False


def _fit_family(node: str, parents: Sequence[str], domain: Domain, cap: int,
                max_parents: int | None) -> tuple[list[str], list[str]]:
    kept = list(parents)
    dropped: list[str] = []
    most = len(kept) if max_parents is None else max_parents
    while kept and (domain.cells([node, *kept]) > cap or len(kept) > most):
        worst = max(kept, key=lambda p: (domain.sizes[domain.index(p)], domain.index(p)))
        kept.remove(worst)
        dropped.append(worst)
    return kept, dropped


def tractable_cliques(dag: nx.DiGraph, domain: Domain, cap: int = DEFAULT_CAP,
                      tree_cap: int = DEFAULT_TREE_CAP) -> tuple[tuple[str, ...], ...]:
    """:func:`family_cliques`, merged within ``cap`` (:func:`merge_cliques`), whose junction
    tree holds at most ``tree_cap`` cells.

    A dense released graph (e.g. Priv-PC stopped at its cap and kept the edges it did not
    test) gives families whose junction tree is far too large for exact inference. The
    capped families are tried first; then, without the pairs of dropped parents, with at
    most k parents per family for k = the largest in-degree down to 1; if even the forest
    of single parents passes ``tree_cap`` (many columns of many levels), its families are
    kept in order while the model stays within it
    (:func:`~privgraph.release.model_size.within_cap`). The result's junction tree always
    holds at most ``tree_cap`` cells when ``tree_cap`` covers the one-way tables
    (:func:`~privgraph.release.model_size.check_tree_cap`). Public: reads the graph only.

    >>> d = Domain.of(a=4, b=4, c=4, e=4)
    >>> dag = nx.DiGraph([("a", "b"), ("a", "c"), ("b", "c"), ("a", "e"), ("b", "e"), ("c", "e")])
    >>> tractable_cliques(dag, d, cap=300, tree_cap=10**6)
    (('a', 'b', 'c', 'e'),)
    >>> tractable_cliques(dag, d, cap=100, tree_cap=10**6)
    (('a', 'b', 'c'), ('a', 'b', 'e'), ('c', 'e'))
    >>> tractable_cliques(dag, d, cap=100, tree_cap=100)
    (('b', 'a'), ('c', 'a'), ('e', 'a'))
    >>> tractable_cliques(dag, d, cap=100, tree_cap=40)
    (('b', 'a'), ('c', 'a'), ('e',))
    """
    cliques = merge_cliques(family_cliques(dag, domain, cap), domain, cap)
    if model_cells(domain, cliques) <= tree_cap:
        return cliques
    degree = max((d for _, d in dag.in_degree()), default=0)
    for k in range(max(degree, 1), 0, -1):
        cliques = family_cliques(dag, domain, cap, max_parents=k, keep_pairs=False)
        if model_cells(domain, cliques) <= tree_cap:
            return cliques
    return within_cap(domain, cliques, tree_cap)


def merge_cliques(cliques: Sequence[Sequence[str]], domain: Domain, cap: int) -> tuple[tuple[str, ...], ...]:
    """Merge cliques while their union fits in ``cap`` cells: fewer, larger tables.

    Fewer tables mean less noise per cell (the release's sensitivity is 2 per table) and a
    model that keeps more of the joint distribution; the learned graph decides which
    columns are grouped first. Greedy: the pair with the largest overlap, then the
    smallest union, is merged first (columns in domain order). Public: graph and domain only.

    >>> d = Domain.of(a=2, b=2, c=2, e=3)
    >>> merge_cliques([("a", "b"), ("b", "c"), ("e",)], d, cap=8)
    (('e',), ('a', 'b', 'c'))
    >>> merge_cliques([("a", "b"), ("b", "c"), ("e",)], d, cap=24)
    (('a', 'b', 'c', 'e'),)
    """
    sizes = dict(zip(domain.names, domain.sizes))
    rank = {v: i for i, v in enumerate(domain.names)}
    alive = {k: frozenset(c) for k, c in enumerate(drop_contained(cliques))}
    heap: list = []

    def push(i: int, j: int) -> None:
        union = alive[i] | alive[j]
        cells = math.prod(sizes[v] for v in union)
        if cells <= cap:
            heapq.heappush(heap, (-len(alive[i] & alive[j]), cells, i, j))

    for i in alive:
        for j in alive:
            if i < j:
                push(i, j)
    fresh = len(alive)
    while heap:
        _, _, i, j = heapq.heappop(heap)
        if i not in alive or j not in alive:
            continue  # a clique already merged away (lazy deletion)
        merged = alive.pop(i) | alive.pop(j)
        alive[fresh] = merged
        for k in list(alive):
            if k != fresh:
                push(k, fresh)
        fresh += 1
    current = [tuple(sorted(c, key=rank.get)) for _, c in sorted(alive.items())]
    return drop_contained(current)


def drop_contained(cliques: Sequence[Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    """The cliques not contained in another (the first of equal sets kept), in order.

    >>> drop_contained([("a",), ("b", "a"), ("a", "b"), ("c",)])
    (('b', 'a'), ('c',))
    """
    sets = [frozenset(c) for c in cliques]
    out = []
    for i, (clique, s) in enumerate(zip(cliques, sets)):
        covered = any((s < t) or (s == t and j < i) for j, t in enumerate(sets) if j != i)
        if not covered:
            out.append(tuple(clique))
    return tuple(out)


__all__ = ["DEFAULT_CAP", "DEFAULT_TREE_CAP", "drop_contained", "extend_to_dag", "family_cliques", "merge_cliques",
           "tractable_cliques"]
