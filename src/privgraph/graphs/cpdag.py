"""Partially directed graphs over named variables: the CPDAG of a Markov equivalence class.

A :class:`CPDAG` holds an ordered tuple of node names, directed edges ``a -> b`` and
undirected edges ``a - b``; a pair of nodes is joined by at most one edge. The same type
holds any partially directed graph (the output of orientation from noisy separating sets
need not be the CPDAG of a DAG); :meth:`CPDAG.from_dag` gives the true CPDAG of a DAG.

Post-processing only: nothing here touches data or spends privacy budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import networkx as nx
import numpy as np
from privgraph.validation import InvalidInput, UnknownName

Edge = tuple[str, str]


class CPDAG:
    """A partially directed graph: named nodes, directed and undirected edges.

    Parameters
    ----------
    nodes : sequence of str
        The node names, in the order used by :meth:`to_adjacency` and for listing edges.
    directed : iterable of (str, str)
        Edges ``(a, b)`` meaning ``a -> b``.
    undirected : iterable of (str, str)
        Edges ``(a, b)`` meaning ``a - b`` (either order; repeats are merged).

    Raises
    ------
    ValueError
        A node name repeated or not a string, an edge naming an unknown node, a self-loop,
        both ``a -> b`` and ``b -> a``, or a pair given as both directed and undirected.

    Notes
    -----
    Instances are immutable and hashable. Two graphs are equal when they have the same
    node set (in any order) and the same edges. Acyclicity of the directed part is not
    checked: orientation from inconsistent separating sets may produce a directed cycle.

    Examples
    --------
    >>> g = CPDAG(["a", "b", "c"], directed=[("a", "c"), ("b", "c")])
    >>> g.parents("c"), g.adjacent("a", "b")
    (('a', 'b'), False)
    >>> CPDAG(["a", "b"], undirected=[("b", "a")]) == CPDAG(["b", "a"], undirected=[("a", "b")])
    True
    >>> CPDAG(["a", "b"], directed=[("a", "x")])
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: directed edge ('a', 'x') names unknown node 'x'; nodes are ('a', 'b')
    """

    __slots__ = ("_nodes", "_index", "_directed", "_undirected", "_parents", "_children", "_neighbours")

    def __init__(
        self, nodes: Sequence[str], directed: Iterable[Edge] = (), undirected: Iterable[Edge] = ()
    ) -> None:
        self._nodes = _check_nodes(nodes)
        self._index = {v: i for i, v in enumerate(self._nodes)}
        self._directed = frozenset(self._check_edge(e, "directed") for e in directed)
        self._undirected = frozenset(frozenset(self._check_edge(e, "undirected")) for e in undirected)
        self._check_one_edge_per_pair()
        self._parents = {v: set() for v in self._nodes}
        self._children = {v: set() for v in self._nodes}
        self._neighbours = {v: set() for v in self._nodes}
        for a, b in self._directed:
            self._children[a].add(b)
            self._parents[b].add(a)
        for a, b in map(tuple, self._undirected):
            self._neighbours[a].add(b)
            self._neighbours[b].add(a)

    def _check_edge(self, edge, kind: str) -> Edge:
        pair = tuple(edge) if isinstance(edge, (tuple, list)) else None
        if pair is None or len(pair) != 2:
            raise InvalidInput(f"{kind} edge {edge!r} is not a pair of node names")
        edge = pair
        for v in edge:
            if v not in self._index:
                raise InvalidInput(f"{kind} edge {edge!r} names unknown node {v!r}; nodes are {self._nodes}")
        if edge[0] == edge[1]:
            raise InvalidInput(f"{kind} edge {edge!r} is a self-loop")
        return edge

    def _check_one_edge_per_pair(self) -> None:
        for a, b in self._directed:
            if (b, a) in self._directed:
                raise InvalidInput(f"edges {(a, b)!r} and {(b, a)!r} are both directed; use one undirected edge")
            if frozenset((a, b)) in self._undirected:
                raise InvalidInput(f"edge {(a, b)!r} is given both directed and undirected")

    # ----- construction from other representations

    @classmethod
    def from_dag(cls, dag: nx.DiGraph) -> CPDAG:
        """The CPDAG of a DAG's Markov equivalence class.

        The skeleton, the v-structures ``a -> c <- b`` (``a``, ``b`` non-adjacent), then
        Meek's rules to a fixed point (Meek 1995): an edge is directed exactly when every
        DAG Markov equivalent to ``dag`` orients it the same way.

        Raises
        ------
        ValueError
            If ``dag`` is not a directed graph or has a directed cycle.

        Examples
        --------
        >>> import networkx as nx
        >>> CPDAG.from_dag(nx.DiGraph([("a", "b"), ("b", "c")]))
        CPDAG(('a', 'b', 'c'), directed=(), undirected=(('a', 'b'), ('b', 'c')))
        >>> collider = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d")])
        >>> print(CPDAG.from_dag(collider))
        a -> c
        c -> d
        b -> c
        """
        from privgraph.graphs.orient import apply_meek_rules, v_structures  # cycle: graphs.cpdag <-> graphs.orient

        if not isinstance(dag, nx.DiGraph) or not nx.is_directed_acyclic_graph(dag):
            raise InvalidInput(f"dag must be a networkx DiGraph without directed cycles, got {dag!r}")
        arcs = v_structures(dag)
        rest = [(a, b) for a, b in dag.edges if (a, b) not in arcs]
        return apply_meek_rules(cls(tuple(dag.nodes), directed=arcs, undirected=rest))

    @classmethod
    def from_networkx(cls, graph: nx.Graph) -> CPDAG:
        """Read a networkx graph: undirected edges, or arcs where a reciprocal pair is undirected.

        The inverse of :meth:`to_networkx`. A ``DiGraph`` is read as it stands (a single arc
        ``a -> b`` is directed); to get the equivalence class of a DAG use :meth:`from_dag`.

        Examples
        --------
        >>> import networkx as nx
        >>> CPDAG.from_networkx(nx.DiGraph([("a", "b"), ("b", "a"), ("b", "c")]))
        CPDAG(('a', 'b', 'c'), directed=(('b', 'c'),), undirected=(('a', 'b'),))
        >>> CPDAG.from_networkx(nx.Graph([("a", "b")])).undirected_edges
        (('a', 'b'),)
        """
        if not isinstance(graph, nx.Graph):
            raise TypeError(f"graph must be a networkx Graph or DiGraph, got {type(graph).__name__}")
        nodes = tuple(graph.nodes)
        if not graph.is_directed():
            return cls(nodes, undirected=graph.edges)
        directed = [(a, b) for a, b in graph.edges if not graph.has_edge(b, a)]
        undirected = [(a, b) for a, b in graph.edges if graph.has_edge(b, a)]
        return cls(nodes, directed=directed, undirected=undirected)

    @classmethod
    def from_adjacency(cls, matrix, nodes: Sequence[str]) -> CPDAG:
        """A graph from a 0/1 adjacency matrix (the convention of :meth:`to_adjacency`).

        ``A[i, j] = 1, A[j, i] = 0`` is ``nodes[i] -> nodes[j]``; ``A[i, j] = A[j, i] = 1``
        is ``nodes[i] - nodes[j]``; ``A[i, j] = A[j, i] = 0`` is no edge.

        Raises
        ------
        ValueError
            If the matrix is not square, does not match ``nodes``, holds a value other than 0
            or 1, or has a non-zero diagonal (a self-loop).

        Examples
        --------
        >>> CPDAG.from_adjacency([[0, 1, 0], [1, 0, 1], [0, 0, 0]], ["a", "b", "c"])
        CPDAG(('a', 'b', 'c'), directed=(('b', 'c'),), undirected=(('a', 'b'),))
        >>> CPDAG.from_adjacency([[0, 2], [0, 0]], ["a", "b"])
        Traceback (most recent call last):
        ...
        privgraph.validation.InvalidInput: adjacency matrix must hold only 0 and 1, got values [2]
        """
        nodes = _check_nodes(nodes)
        a = _check_adjacency(matrix, nodes)
        rows, cols = np.nonzero(a)
        directed = [(nodes[i], nodes[j]) for i, j in zip(rows, cols) if not a[j, i]]
        undirected = [(nodes[i], nodes[j]) for i, j in zip(rows, cols) if a[j, i] and i < j]
        return cls(nodes, directed=directed, undirected=undirected)

    # ----- views

    @property
    def nodes(self) -> tuple[str, ...]:
        """The node names, in order."""
        return self._nodes

    @property
    def directed_edges(self) -> tuple[Edge, ...]:
        """The directed edges ``(a, b)`` (``a -> b``), sorted by node order."""
        return tuple(sorted(self._directed, key=self._edge_key))

    @property
    def undirected_edges(self) -> tuple[Edge, ...]:
        """The undirected edges ``(a, b)``, ``a`` before ``b`` in node order, sorted."""
        pairs = (tuple(sorted(e, key=self._index.__getitem__)) for e in self._undirected)
        return tuple(sorted(pairs, key=self._edge_key))

    def _edge_key(self, edge: Edge) -> tuple[int, int]:
        return self._index[edge[0]], self._index[edge[1]]

    def _sorted(self, names: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(names, key=self._index.__getitem__))

    def _check_node(self, node: str) -> None:
        if node not in self._index:
            raise UnknownName(f"node {node!r} not in graph; nodes are {self._nodes}")

    def parents(self, node: str) -> tuple[str, ...]:
        """The nodes ``p`` with ``p -> node``, in node order."""
        self._check_node(node)
        return self._sorted(self._parents[node])

    def children(self, node: str) -> tuple[str, ...]:
        """The nodes ``c`` with ``node -> c``, in node order."""
        self._check_node(node)
        return self._sorted(self._children[node])

    def undirected_neighbours(self, node: str) -> tuple[str, ...]:
        """The nodes ``u`` with ``node - u``, in node order."""
        self._check_node(node)
        return self._sorted(self._neighbours[node])

    def adjacent(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` are joined by an edge of either kind."""
        self._check_node(a)
        self._check_node(b)
        return b in self._parents[a] or b in self._children[a] or b in self._neighbours[a]

    def has_directed(self, a: str, b: str) -> bool:
        """Whether the graph has the directed edge ``a -> b``."""
        return (a, b) in self._directed

    def has_undirected(self, a: str, b: str) -> bool:
        """Whether the graph has the undirected edge ``a - b``."""
        return frozenset((a, b)) in self._undirected

    # ----- conversions

    def skeleton(self) -> nx.Graph:
        """The undirected graph of all adjacencies (every node included).

        Examples
        --------
        >>> sorted(CPDAG(["a", "b", "c"], directed=[("a", "b")], undirected=[("b", "c")]).skeleton().edges)
        [('a', 'b'), ('b', 'c')]
        """
        g = nx.Graph()
        g.add_nodes_from(self._nodes)
        g.add_edges_from(self.directed_edges)
        g.add_edges_from(self.undirected_edges)
        return g

    def to_networkx(self) -> nx.DiGraph:
        """A ``DiGraph``: ``a -> b`` once, ``a - b`` as both arcs; edge attribute ``kind``.

        ``kind`` is ``"directed"`` or ``"undirected"``. :meth:`from_networkx` reads it back.

        Examples
        --------
        >>> g = CPDAG(["a", "b", "c"], directed=[("a", "b")], undirected=[("b", "c")]).to_networkx()
        >>> sorted(g.edges(data="kind"))
        [('a', 'b', 'directed'), ('b', 'c', 'undirected'), ('c', 'b', 'undirected')]
        """
        g = nx.DiGraph()
        g.add_nodes_from(self._nodes)
        g.add_edges_from(self.directed_edges, kind="directed")
        for a, b in self.undirected_edges:
            g.add_edges_from([(a, b), (b, a)], kind="undirected")
        return g

    def to_adjacency(self) -> np.ndarray:
        """The adjacency matrix over :attr:`nodes`, integer 0/1.

        ``A[i, j] = 1, A[j, i] = 0`` for ``nodes[i] -> nodes[j]``; ``A[i, j] = A[j, i] = 1``
        for ``nodes[i] - nodes[j]``; 0 elsewhere (the diagonal is 0).

        Examples
        --------
        >>> CPDAG(["a", "b", "c"], directed=[("a", "b")], undirected=[("b", "c")]).to_adjacency()
        array([[0, 1, 0],
               [0, 0, 1],
               [0, 1, 0]])
        """
        a = np.zeros((len(self._nodes), len(self._nodes)), dtype=np.int64)
        for u, v in self._directed:
            a[self._index[u], self._index[v]] = 1
        for u, v in map(tuple, self._undirected):
            a[self._index[u], self._index[v]] = a[self._index[v], self._index[u]] = 1
        return a

    def to_dag(self) -> nx.DiGraph:
        """A DAG of this equivalence class (Dor-Tarsi extension; usable by DoWhy): see
        :func:`privgraph.graphs.interop.dag_extension`."""
        from privgraph.graphs.interop import dag_extension  # cycle: graphs.cpdag <-> graphs.interop

        return dag_extension(self)

    def to_pgmpy(self, *, dag: bool = False):
        """A ``pgmpy`` PDAG (or DAG of :meth:`to_dag`); needs pgmpy installed."""
        from privgraph.graphs.interop import to_pgmpy  # cycle: graphs.cpdag <-> graphs.interop

        return to_pgmpy(self, dag=dag)

    def to_causallearn(self):
        """A causal-learn ``GeneralGraph``; needs causal-learn installed."""
        from privgraph.graphs.interop import to_causallearn  # cycle: graphs.cpdag <-> graphs.interop

        return to_causallearn(self)

    def with_oriented(self, arcs: Iterable[Edge]) -> CPDAG:
        """A copy with the undirected edges ``a - b`` turned into the given ``a -> b``.

        Raises ValueError if an arc is not an undirected edge of this graph.

        Examples
        --------
        >>> CPDAG(["a", "b"], undirected=[("a", "b")]).with_oriented([("b", "a")]).directed_edges
        (('b', 'a'),)
        """
        arcs = set(map(tuple, arcs))
        pairs = {frozenset(e) for e in arcs}
        if stray := [e for e in arcs if frozenset(e) not in self._undirected]:
            raise InvalidInput(f"cannot orient {sorted(stray)}: not undirected edges of this graph")
        undirected = [tuple(e) for e in self._undirected if e not in pairs]
        return CPDAG(self._nodes, directed=self._directed | arcs, undirected=undirected)

    # ----- value semantics

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CPDAG):
            return NotImplemented
        return (
            set(self._nodes) == set(other._nodes)
            and self._directed == other._directed
            and self._undirected == other._undirected
        )

    def __hash__(self) -> int:
        return hash((frozenset(self._nodes), self._directed, self._undirected))

    def __repr__(self) -> str:
        return f"CPDAG({self._nodes!r}, directed={self.directed_edges!r}, undirected={self.undirected_edges!r})"

    def __str__(self) -> str:
        """One edge per line (``a -> b``, ``a - b``), then the isolated nodes.

        Examples
        --------
        >>> print(CPDAG(["a", "b", "c"], directed=[("a", "b")]))
        a -> b
        isolated: c
        """
        lines = [f"{a} -> {b}" for a, b in self.directed_edges]
        lines += [f"{a} - {b}" for a, b in self.undirected_edges]
        isolated = [v for v in self._nodes if not (self._parents[v] or self._children[v] or self._neighbours[v])]
        if isolated:
            lines.append("isolated: " + ", ".join(isolated))
        return "\n".join(lines)


def _check_nodes(nodes: Sequence[str]) -> tuple[str, ...]:
    if isinstance(nodes, str):
        raise InvalidInput(f"nodes must be a sequence of names, got the string {nodes!r}")
    nodes = tuple(nodes)
    if bad := [v for v in nodes if not isinstance(v, str)]:
        raise InvalidInput(f"node names must be strings, got {bad!r}")
    if len(set(nodes)) != len(nodes):
        repeated = sorted({v for v in nodes if nodes.count(v) > 1})
        raise InvalidInput(f"node names must be unique, got {repeated} more than once")
    return nodes


def _check_adjacency(matrix, nodes: tuple[str, ...]) -> np.ndarray:
    a = np.asarray(matrix)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise InvalidInput(f"adjacency matrix must be square, got shape {a.shape}")
    if a.shape[0] != len(nodes):
        raise InvalidInput(f"adjacency matrix is {a.shape[0]}x{a.shape[0]} but {len(nodes)} nodes were given")
    if a.dtype.kind not in "biuf":
        raise InvalidInput(f"adjacency matrix must be numeric 0/1, got dtype {a.dtype}")
    if not np.isin(a, (0, 1)).all():
        bad = sorted({v.item() for v in a[~np.isin(a, (0, 1))]})
        raise InvalidInput(f"adjacency matrix must hold only 0 and 1, got values {bad}")
    if np.any(np.diagonal(a)):
        i = int(np.flatnonzero(np.diagonal(a))[0])
        raise InvalidInput(f"adjacency matrix has a self-loop at {nodes[i]!r} (non-zero diagonal)")
    return a.astype(bool)
