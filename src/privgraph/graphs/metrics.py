"""Scores of an estimated graph against the truth: skeleton, arrowheads, SHD, the Priv-PC arc F1.

Score against the *true* network's CPDAG (``CPDAG.from_dag(network.to_networkx())``),
not against the output of non-private PC.

Every function takes two graphs over the same node set, each a :class:`CPDAG` or a
networkx graph: a ``Graph`` is read as all undirected, a ``DiGraph`` as it stands (a
reciprocal pair of arcs is one undirected edge, see :meth:`CPDAG.from_networkx`), so
passing a DAG as ``truth`` scores against that DAG, not its equivalence class.

Conventions for empty sets (0/0): precision is 1.0 when the estimate claims nothing (no
claim is wrong), recall is 1.0 when the truth has nothing to find, and F1 is the harmonic
mean of the two, 0.0 when both are 0. So an empty estimate of a non-empty truth scores
precision 1, recall 0, F1 0; an empty estimate of an empty truth scores 1, 1, 1; and
F1 is 1 exactly when the estimate is right.
"""

from __future__ import annotations

import networkx as nx

from privgraph.graphs.cpdag import CPDAG
from privgraph.validation import InvalidInput

Graph = CPDAG | nx.Graph


def skeleton_scores(estimated: Graph, truth: Graph) -> dict[str, float]:
    """Precision, recall and F1 of the adjacencies (edges of either kind, orientation ignored).

    Examples
    --------
    >>> est = CPDAG(["a", "b", "c"], undirected=[("a", "b"), ("a", "c")])
    >>> truth = CPDAG(["a", "b", "c"], directed=[("a", "b"), ("c", "b")])
    >>> skeleton_scores(est, truth)
    {'precision': 0.5, 'recall': 0.5, 'f1': 0.5}
    """
    est, true = _pair(estimated, truth)
    return _scores(_adjacencies(est), _adjacencies(true))


def arrowhead_scores(estimated: Graph, truth: Graph) -> dict[str, float]:
    """Precision, recall and F1 of the arrowheads: the directed edges ``a -> b`` of each graph.

    An estimated ``a -> b`` is right when the truth has ``a -> b``; an undirected edge has
    no arrowhead.

    Examples
    --------
    >>> est = CPDAG(["a", "b", "c"], directed=[("a", "b"), ("b", "c")])
    >>> truth = CPDAG(["a", "b", "c"], directed=[("a", "b"), ("c", "b")])
    >>> arrowhead_scores(est, truth)
    {'precision': 0.5, 'recall': 0.5, 'f1': 0.5}
    """
    est, true = _pair(estimated, truth)
    return _scores(set(est.directed_edges), set(true.directed_edges))


def arc_scores(estimated: Graph, truth: Graph) -> dict[str, float]:
    """Precision, recall and F1 over arcs, an undirected edge counting as both of its arcs.

    This is how the Priv-PC paper scores its graphs (F1 over the 0/1 adjacency matrices of
    the CPDAGs, see :meth:`CPDAG.to_adjacency`): ``a -> b`` is the arc ``(a, b)`` and
    ``a - b`` the two arcs ``(a, b)``, ``(b, a)``. An undirected estimate of a directed
    true edge scores one right arc and one wrong one.

    Examples
    --------
    >>> est = CPDAG(["a", "b"], undirected=[("a", "b")])
    >>> truth = CPDAG(["a", "b"], directed=[("a", "b")])
    >>> arc_scores(est, truth)
    {'precision': 0.5, 'recall': 1.0, 'f1': 0.6666666666666666}
    """
    est, true = _pair(estimated, truth)
    return _scores(_arcs(est), _arcs(true))


def arc_f1(estimated: Graph, truth: Graph) -> float:
    """The Priv-PC paper's F1 over CPDAG arcs (undirected edges count twice); see :func:`arc_scores`.

    Examples
    --------
    >>> arc_f1(CPDAG(["a", "b"], undirected=[("a", "b")]), CPDAG(["a", "b"], directed=[("a", "b")]))
    0.6666666666666666
    """
    return arc_scores(estimated, truth)["f1"]


def shd(estimated: Graph, truth: Graph) -> int:
    """Structural Hamming distance: the number of node pairs whose edge differs.

    Each pair of nodes counts at most once: a missing edge, an extra edge, a reversed
    edge (``a -> b`` against ``b -> a``) and a wrong mark (``a -> b`` against ``a - b``)
    each count 1 (Tsamardinos, Brown and Aliferis 2006; pcalg's ``shd``).

    Examples
    --------
    >>> truth = CPDAG(["a", "b", "c", "d"], directed=[("a", "c"), ("b", "c")])
    >>> est = CPDAG(["a", "b", "c", "d"], directed=[("c", "a")], undirected=[("b", "c"), ("c", "d")])
    >>> shd(est, truth)  # reversed a-c, b -> c left undirected, extra c - d
    3
    """
    est, true = _pair(estimated, truth)
    pairs = _adjacencies(est) | _adjacencies(true)
    return sum(_mark(est, a, b) != _mark(true, a, b) for a, b in map(sorted, pairs))


def _mark(g: CPDAG, a: str, b: str) -> str:
    if g.has_directed(a, b):
        return "->"
    if g.has_directed(b, a):
        return "<-"
    return "-" if g.has_undirected(a, b) else ""


def _adjacencies(g: CPDAG) -> set[frozenset[str]]:
    return {frozenset(e) for e in g.directed_edges + g.undirected_edges}


def _arcs(g: CPDAG) -> set[tuple[str, str]]:
    return set(g.directed_edges) | {arc for a, b in g.undirected_edges for arc in ((a, b), (b, a))}


def _scores(estimated: set, truth: set) -> dict[str, float]:
    hits = len(estimated & truth)
    precision = hits / len(estimated) if estimated else 1.0
    recall = hits / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def _pair(estimated: Graph, truth: Graph) -> tuple[CPDAG, CPDAG]:
    est, true = _as_cpdag(estimated, "estimated"), _as_cpdag(truth, "truth")
    if set(est.nodes) != set(true.nodes):
        only_est = sorted(set(est.nodes) - set(true.nodes))
        only_true = sorted(set(true.nodes) - set(est.nodes))
        raise InvalidInput(
            f"estimated and truth must have the same nodes; only in estimated: {only_est}, only in truth: {only_true}"
        )
    return est, true


def _as_cpdag(graph: Graph, name: str) -> CPDAG:
    if isinstance(graph, CPDAG):
        return graph
    if isinstance(graph, nx.Graph):
        return CPDAG.from_networkx(graph)
    raise TypeError(f"{name} must be a CPDAG or a networkx graph, got {type(graph).__name__}")
