"""A learned graph in other libraries' terms: a DAG extension (networkx, DoWhy), pgmpy, causal-learn.

All post-processing of a released CPDAG: no data, no budget. The peers are optional; each
converter imports its library only when called and says how to install it if missing.

* :func:`dag_extension` orients the undirected edges of a CPDAG into a DAG of its Markov
  equivalence class without new v-structures (Dor and Tarsi 1992): the DAG a DoWhy
  ``CausalModel(graph=...)`` or any DAG-based tool needs. Every such DAG is equally
  supported by the data; the extension picks one (deterministically, by node order).
* :func:`to_pgmpy` gives a ``pgmpy.base.PDAG`` (or a ``pgmpy.base.DAG`` of the extension).
* :func:`to_causallearn` gives a ``causallearn`` ``GeneralGraph`` with tail/arrow endpoints,
  the form its PC returns, so its metrics and plots apply.
"""

from __future__ import annotations

import importlib

import networkx as nx

from privgraph.graphs.cpdag import CPDAG
from privgraph.validation import InvalidInput


def dag_extension(cpdag: CPDAG) -> nx.DiGraph:
    """A DAG in the class of ``cpdag``: its arcs kept, its undirected edges oriented (Dor-Tarsi).

    Repeatedly pick a node x with no outgoing arc whose undirected neighbours are each
    adjacent to all other nodes adjacent to x; orient its undirected edges into x and
    remove it. Such a node always exists when the graph has an extension (a CPDAG does);
    otherwise a ValueError says the graph has none.

    >>> g = CPDAG(["a", "b", "c", "d"], directed=[("a", "c"), ("b", "c")], undirected=[("c", "d")])
    >>> sorted(dag_extension(g).edges)
    [('a', 'c'), ('b', 'c'), ('c', 'd')]
    >>> sorted(dag_extension(CPDAG(["a", "b", "c"], undirected=[("a", "b"), ("b", "c")])).edges)
    [('a', 'b'), ('b', 'c')]
    """
    directed = {(a, b) for a, b in cpdag.directed_edges}
    undirected = {frozenset(e) for e in cpdag.undirected_edges}
    alive = list(cpdag.nodes)
    out = nx.DiGraph()
    out.add_nodes_from(cpdag.nodes)
    out.add_edges_from(directed)
    while alive:
        sink = next((x for x in reversed(alive) if _removable(x, alive, directed, undirected)), None)
        if sink is None:
            raise InvalidInput("the graph has no DAG extension (its undirected part cannot be oriented "
                               "without a cycle or a new v-structure)")
        for edge in [e for e in undirected if sink in e]:
            (other,) = edge - {sink}
            out.add_edge(other, sink)
            undirected.discard(edge)
        directed = {(a, b) for a, b in directed if sink not in (a, b)}
        alive.remove(sink)
    return out


def _removable(x, alive, directed, undirected) -> bool:
    if any(a == x for a, _ in directed):
        return False
    neighbours = [next(iter(e - {x})) for e in undirected if x in e]
    adjacent = set(neighbours) | {a for a, b in directed if b == x}
    for y in neighbours:
        for z in adjacent - {y}:
            if not (frozenset((y, z)) in undirected or (y, z) in directed or (z, y) in directed):
                return False
    return True


def to_pgmpy(cpdag: CPDAG, *, dag: bool = False):
    """``pgmpy.base.PDAG`` of the graph, or with ``dag=True`` a ``pgmpy.base.DAG`` of :func:`dag_extension`."""
    base = _require("pgmpy.base", "pgmpy")
    if dag:
        return base.DAG(list(dag_extension(cpdag).edges))
    pdag = base.PDAG(directed_ebunch=list(cpdag.directed_edges), undirected_ebunch=list(cpdag.undirected_edges))
    pdag.add_nodes_from(cpdag.nodes)
    return pdag


def to_causallearn(cpdag: CPDAG):
    """A causal-learn ``GeneralGraph``: ``a -> b`` as (TAIL, ARROW), ``a - b`` as (TAIL, TAIL)."""
    graph_mod = _require("causallearn.graph.GeneralGraph", "causal-learn")
    # lazy: causal-learn is optional (checked by _require above)
    from causallearn.graph.Edge import Edge
    from causallearn.graph.Endpoint import Endpoint
    from causallearn.graph.GraphNode import GraphNode

    nodes = {name: GraphNode(name) for name in cpdag.nodes}
    graph = graph_mod.GeneralGraph(list(nodes.values()))
    for a, b in cpdag.directed_edges:
        graph.add_edge(Edge(nodes[a], nodes[b], Endpoint.TAIL, Endpoint.ARROW))
    for a, b in cpdag.undirected_edges:
        graph.add_edge(Edge(nodes[a], nodes[b], Endpoint.TAIL, Endpoint.TAIL))
    return graph


def _require(module: str, package: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"this conversion needs {package}: pip install {package}") from None


__all__ = ["dag_extension", "to_causallearn", "to_pgmpy"]
