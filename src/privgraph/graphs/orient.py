"""Orientation of a skeleton to a CPDAG: colliders from separating sets, then Meek's rules.

Post-processing only: the input is a skeleton and separating sets that were already
released (by a private or non-private PC run); nothing here touches data or spends budget.

Both steps are order-independent: the result depends only on the skeleton and the
separating sets, never on the order of nodes, edges or dictionary keys.

- **Colliders.** For every unshielded triple ``a - c - b`` (``a``, ``b`` non-adjacent) whose
  separating set does not contain ``c``, propose ``a -> c <- b``. All proposals are gathered
  first; an edge proposed in both directions by two colliders (a *conflict*) is left
  undirected, and every other proposed arc is kept. A non-adjacent pair with no entry in
  ``sepsets`` (for example an edge that background knowledge forbade, so it was never
  tested) gives no collider; a separating set recorded for a pair that is adjacent in the
  skeleton is ignored.
- **Meek's rules** R1-R4 (Meek 1995) orient the remaining undirected edges, in rounds: each
  round finds every arc that some rule implies in the current graph and orients them all
  at once; an edge that rules would orient both ways in the same round stays undirected in
  that round. Rounds repeat until nothing changes. On separating sets from a
  d-separation oracle no conflict can arise, and the result is the true CPDAG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import networkx as nx

from privgraph.graphs.cpdag import CPDAG, Edge
from privgraph.validation import InvalidInput

Sepsets = Mapping[frozenset[str], frozenset[str]]


def orient(skeleton: nx.Graph, sepsets: Sepsets, nodes: Sequence[str] | None = None) -> CPDAG:
    """Orient a skeleton into a CPDAG: :func:`orient_colliders`, then :func:`apply_meek_rules`.

    Parameters
    ----------
    skeleton : networkx.Graph
        The undirected skeleton found by PC.
    sepsets : mapping of frozenset({a, b}) to frozenset
        The separating set found for each removed edge ``a - b``.
    nodes : sequence of str, optional
        The node order of the result (default: the skeleton's order). It must include
        every node of the skeleton; names not in the skeleton become isolated nodes.

    Returns
    -------
    CPDAG

    Examples
    --------
    A collider and the edge Meek's rule R1 orients after it:

    >>> import networkx as nx
    >>> skeleton = nx.Graph([("a", "c"), ("b", "c"), ("c", "d")])
    >>> sepsets = {frozenset("ab"): frozenset(), frozenset("ad"): frozenset("c"),
    ...            frozenset("bd"): frozenset("c")}
    >>> print(orient(skeleton, sepsets, nodes=["a", "b", "c", "d"]))
    a -> c
    b -> c
    c -> d
    """
    return apply_meek_rules(orient_colliders(skeleton, sepsets, nodes))


def orient_colliders(skeleton: nx.Graph, sepsets: Sepsets, nodes: Sequence[str] | None = None) -> CPDAG:
    """The skeleton with its colliders oriented from the separating sets; other edges undirected.

    Parameters are those of :func:`orient`. Conflicting colliders leave their shared edge
    undirected (see the module notes).

    Raises
    ------
    ValueError
        If ``skeleton`` is directed or has a self-loop, ``nodes`` misses one of its nodes, or
        a key or member of ``sepsets`` is not a node.

    Examples
    --------
    Two colliders that disagree on ``b - c``: ``a -> b <- c`` (``a``, ``c`` separated by
    nothing) and ``b -> c <- d`` (``b``, ``d`` separated by nothing). The shared edge stays
    undirected:

    >>> import networkx as nx
    >>> skeleton = nx.Graph([("a", "b"), ("b", "c"), ("c", "d")])
    >>> sepsets = {frozenset("ac"): frozenset(), frozenset("bd"): frozenset(),
    ...            frozenset("ad"): frozenset("bc")}
    >>> print(orient_colliders(skeleton, sepsets))
    a -> b
    d -> c
    b - c
    """
    order = _check_skeleton(skeleton, nodes)
    seps = _check_sepsets(sepsets, set(order))
    proposed = _collider_arcs(skeleton, seps)
    arcs = {(a, b) for a, b in proposed if (b, a) not in proposed}
    undirected = [(a, b) for a, b in skeleton.edges if (a, b) not in arcs and (b, a) not in arcs]
    return CPDAG(order, directed=arcs, undirected=undirected)


def _collider_arcs(skeleton: nx.Graph, seps: dict[frozenset, frozenset]) -> set[Edge]:
    arcs = set()
    for c in skeleton.nodes:
        for a, b in combinations(skeleton[c], 2):
            sepset = seps.get(frozenset((a, b)))
            if not skeleton.has_edge(a, b) and sepset is not None and c not in sepset:
                arcs |= {(a, c), (b, c)}
    return arcs


def v_structures(dag: nx.DiGraph) -> set[Edge]:
    """The arcs of a DAG that belong to a v-structure ``a -> c <- b`` (``a``, ``b`` non-adjacent).

    Examples
    --------
    >>> import networkx as nx
    >>> sorted(v_structures(nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d")])))
    [('a', 'c'), ('b', 'c')]
    """
    arcs = set()
    for c in dag.nodes:
        for a, b in combinations(dag.predecessors(c), 2):
            if not (dag.has_edge(a, b) or dag.has_edge(b, a)):
                arcs |= {(a, c), (b, c)}
    return arcs


def apply_meek_rules(pdag: CPDAG) -> CPDAG:
    """Orient undirected edges by Meek's rules R1-R4 until none applies.

    For an undirected edge ``a - b`` the rules orient ``a -> b`` when

    - R1: some ``c -> a`` with ``c``, ``b`` non-adjacent (else a new v-structure);
    - R2: some ``a -> c -> b`` (else a directed cycle);
    - R3: some ``a - c -> b`` and ``a - d -> b`` with ``c``, ``d`` non-adjacent;
    - R4: some ``a - c -> d -> b`` with ``c``, ``b`` non-adjacent and ``a``, ``d`` adjacent.

    Rounds are synchronous and an edge implied both ways stays undirected, so the result
    does not depend on any ordering (see the module notes).

    Examples
    --------
    R1 propagates an arrow down a chain:

    >>> g = CPDAG(["a", "b", "c", "d"], directed=[("a", "b")], undirected=[("b", "c"), ("c", "d")])
    >>> apply_meek_rules(g).directed_edges
    (('a', 'b'), ('b', 'c'), ('c', 'd'))
    """
    while True:
        proposed = _meek_proposals(pdag)
        arcs = {(a, b) for a, b in proposed if (b, a) not in proposed}
        if not arcs:
            return pdag
        pdag = pdag.with_oriented(arcs)


def _meek_proposals(g: CPDAG) -> set[Edge]:
    rules = (_rule1, _rule2, _rule3, _rule4)
    return {
        (a, b)
        for u, v in g.undirected_edges
        for a, b in ((u, v), (v, u))
        if any(rule(g, a, b) for rule in rules)
    }


def _rule1(g: CPDAG, a: str, b: str) -> bool:
    return any(not g.adjacent(c, b) for c in g.parents(a))


def _rule2(g: CPDAG, a: str, b: str) -> bool:
    return not set(g.children(a)).isdisjoint(g.parents(b))


def _rule3(g: CPDAG, a: str, b: str) -> bool:
    middle = set(g.undirected_neighbours(a)) & set(g.parents(b))
    return any(not g.adjacent(c, d) for c, d in combinations(sorted(middle), 2))


def _rule4(g: CPDAG, a: str, b: str) -> bool:
    return any(
        g.adjacent(a, d) and not g.adjacent(c, b)
        for c in g.undirected_neighbours(a)
        for d in set(g.children(c)) & set(g.parents(b))
    )


def _check_skeleton(skeleton: nx.Graph, nodes: Sequence[str] | None) -> tuple[str, ...]:
    if not isinstance(skeleton, nx.Graph) or skeleton.is_directed():
        raise InvalidInput(f"skeleton must be an undirected networkx Graph, got {type(skeleton).__name__}")
    if loops := list(nx.selfloop_edges(skeleton)):
        raise InvalidInput(f"skeleton has self-loops {loops}")
    if nodes is None:
        return tuple(skeleton.nodes)
    order = tuple(nodes)
    if missing := [v for v in skeleton.nodes if v not in set(order)]:
        raise InvalidInput(f"nodes {order} miss skeleton nodes {missing}")
    return order


def _check_sepsets(sepsets: Sepsets, names: set[str]) -> dict[frozenset, frozenset]:
    checked = {}
    for key, sepset in sepsets.items():
        pair, members = frozenset(key), frozenset(sepset)
        if len(pair) != 2 or not pair <= names:
            raise InvalidInput(f"sepsets key {key!r} is not a pair of distinct nodes of the skeleton")
        if unknown := members - names:
            unknown, pair = sorted(unknown, key=str), sorted(pair, key=str)
            raise InvalidInput(f"sepset {sorted(members, key=str)} of {pair} names unknown nodes {unknown}")
        checked[pair] = members
    return checked
