import networkx as nx
import numpy as np
import pytest

from privgraph.graphs import CPDAG

NODES = ["a", "b", "c", "d"]


def sample_graph() -> CPDAG:
    return CPDAG(NODES, directed=[("a", "c"), ("b", "c")], undirected=[("c", "d")])


def test_views():
    g = sample_graph()
    assert g.nodes == ("a", "b", "c", "d")
    assert g.directed_edges == (("a", "c"), ("b", "c"))
    assert g.undirected_edges == (("c", "d"),)
    assert g.parents("c") == ("a", "b")
    assert g.children("a") == ("c",)
    assert g.undirected_neighbours("d") == ("c",)
    assert g.adjacent("c", "a") and g.adjacent("d", "c") and not g.adjacent("a", "b")
    assert g.has_directed("a", "c") and not g.has_directed("c", "a")
    assert g.has_undirected("d", "c")


def test_undirected_edge_order_follows_node_order():
    assert CPDAG(["b", "a"], undirected=[("a", "b")]).undirected_edges == (("b", "a"),)


def test_equality_and_hash_ignore_node_order_and_edge_spelling():
    g = sample_graph()
    h = CPDAG(NODES[::-1], directed=[("b", "c"), ("a", "c")], undirected=[("d", "c"), ("c", "d")])
    assert g == h and hash(g) == hash(h)
    assert g != CPDAG(NODES, directed=[("a", "c"), ("b", "c"), ("c", "d")])
    assert g != CPDAG(NODES + ["e"], directed=[("a", "c"), ("b", "c")], undirected=[("c", "d")])
    assert g != "not a graph"


def test_repr_round_trips():
    g = sample_graph()
    assert eval(repr(g), {"CPDAG": CPDAG}) == g


def test_str_lists_edges_and_isolated_nodes():
    g = CPDAG(["a", "b", "c", "e"], directed=[("a", "b")], undirected=[("b", "c")])
    assert str(g) == "a -> b\nb - c\nisolated: e"


def test_skeleton():
    sk = sample_graph().skeleton()
    assert not sk.is_directed()
    assert set(sk.nodes) == set(NODES)
    assert {frozenset(e) for e in sk.edges} == {frozenset("ac"), frozenset("bc"), frozenset("cd")}


def test_networkx_round_trip_and_kind_attribute():
    g = sample_graph()
    nxg = g.to_networkx()
    assert nxg.edges["a", "c"]["kind"] == "directed"
    assert nxg.has_edge("c", "d") and nxg.has_edge("d", "c")
    assert nxg.edges["d", "c"]["kind"] == "undirected"
    assert CPDAG.from_networkx(nxg) == g
    assert CPDAG.from_networkx(g.skeleton()) == CPDAG(NODES, undirected=g.skeleton().edges)


def test_adjacency_convention():
    a = sample_graph().to_adjacency()
    expected = np.array([
        [0, 0, 1, 0],  # a -> c
        [0, 0, 1, 0],  # b -> c
        [0, 0, 0, 1],  # c - d
        [0, 0, 1, 0],
    ])
    np.testing.assert_array_equal(a, expected)


def test_adjacency_round_trip():
    g = sample_graph()
    assert CPDAG.from_adjacency(g.to_adjacency(), g.nodes) == g
    assert CPDAG.from_adjacency(g.to_adjacency().astype(bool), g.nodes) == g
    assert CPDAG.from_adjacency(g.to_adjacency().astype(float), g.nodes) == g


def test_empty_graph():
    g = CPDAG(["a"])
    assert g.to_adjacency().tolist() == [[0]]
    assert CPDAG([]).to_adjacency().shape == (0, 0)
    assert CPDAG.from_adjacency(np.zeros((0, 0)), []) == CPDAG([])


def test_with_oriented():
    g = sample_graph().with_oriented([("d", "c")])
    assert g.undirected_edges == () and g.has_directed("d", "c")
    with pytest.raises(ValueError, match="not undirected edges"):
        sample_graph().with_oriented([("a", "c")])


# ----- bad input


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"directed": [("a", "z")]}, "directed edge \\('a', 'z'\\) names unknown node 'z'"),
        ({"undirected": [("z", "a")]}, "undirected edge \\('z', 'a'\\) names unknown node 'z'"),
        ({"directed": [("a", "a")]}, "directed edge \\('a', 'a'\\) is a self-loop"),
        ({"undirected": [("b", "b")]}, "undirected edge \\('b', 'b'\\) is a self-loop"),
        ({"directed": [("a", "b")], "undirected": [("b", "a")]}, "given both directed and undirected"),
        ({"directed": [("a", "b"), ("b", "a")]}, "both directed; use one undirected edge"),
        ({"directed": [("a", "b", "c")]}, "is not a pair"),
        ({"directed": ["ab"]}, "is not a pair"),
        ({"undirected": [None]}, "undirected edge None is not a pair"),
    ],
)
def test_bad_edges(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CPDAG(["a", "b", "c"], **kwargs)


def test_bad_nodes():
    with pytest.raises(ValueError, match="unique, got \\['a'\\]"):
        CPDAG(["a", "b", "a"])
    with pytest.raises(ValueError, match="must be strings, got \\[1\\]"):
        CPDAG(["a", 1])
    with pytest.raises(ValueError, match="got the string 'abc'"):
        CPDAG("abc")


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        (np.zeros((2, 3)), "must be square, got shape \\(2, 3\\)"),
        (np.zeros(3), "must be square, got shape \\(3,\\)"),
        (np.zeros((3, 3)), "is 3x3 but 2 nodes"),
        ([[0, 2], [0, 0]], "only 0 and 1, got values \\[2\\]"),
        ([[0, 0.5], [-1, 0]], "only 0 and 1, got values \\[-1.0, 0.5\\]"),
        ([[1, 0], [0, 0]], "self-loop at 'a'"),
        ([["0", "1"], ["0", "0"]], "must be numeric"),
    ],
)
def test_bad_adjacency(matrix, message):
    with pytest.raises(ValueError, match=message):
        CPDAG.from_adjacency(matrix, ["a", "b"])


def test_lookup_of_unknown_node():
    with pytest.raises(KeyError, match="node 'z' not in graph"):
        sample_graph().parents("z")


def test_from_dag_rejects_cycles_and_undirected_graphs():
    with pytest.raises(ValueError, match="without directed cycles"):
        CPDAG.from_dag(nx.DiGraph([("a", "b"), ("b", "a")]))
    with pytest.raises(ValueError, match="must be a networkx DiGraph"):
        CPDAG.from_dag(nx.Graph([("a", "b")]))
