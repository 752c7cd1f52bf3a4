"""Oracle tests: stable PC with a d-separation decider returns the true skeleton and CPDAG."""

import networkx as nx
import pytest

from privgraph.causal import stable_pc_skeleton
from privgraph.datasets import load_network
from privgraph.graphs import CPDAG, orient

GRAPHS = {
    "chain": [("a", "b"), ("b", "c")],
    "fork": [("b", "a"), ("b", "c")],
    "collider": [("a", "b"), ("c", "b")],
    "two_v_structures": [("a", "c"), ("b", "c"), ("c", "e"), ("d", "e"), ("a", "d")],
    "diamond": [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")],
}


def d_separation(dag: nx.DiGraph):
    def decide(x, y, S):
        return nx.is_d_separator(dag, {x}, {y}, set(S))
    return decide


def dags():
    for name, edges in GRAPHS.items():
        yield name, nx.DiGraph(edges)
    for name in ("asia", "cancer", "earthquake", "survey", "sachs"):
        yield name, load_network(name).to_networkx()


@pytest.mark.parametrize("name,dag", list(dags()), ids=[n for n, _ in dags()])
def test_oracle_gives_the_true_cpdag(name, dag):
    nodes = sorted(dag.nodes)
    sk = stable_pc_skeleton(nodes, d_separation(dag))
    assert sk.complete
    assert {frozenset(e) for e in sk.graph.edges} == {frozenset(e) for e in dag.edges}
    for pair, sep in sk.sepsets.items():
        x, y = sorted(pair)
        assert nx.is_d_separator(dag, {x}, {y}, set(sep))
    assert orient(sk.graph, sk.sepsets, nodes=nodes) == CPDAG.from_dag(dag)


@pytest.mark.parametrize("reverse", [False, True])
def test_result_does_not_depend_on_the_order_of_the_variables(reverse):
    dag = load_network("asia").to_networkx()
    nodes = sorted(dag.nodes, reverse=reverse)
    sk = stable_pc_skeleton(nodes, d_separation(dag))
    assert {frozenset(e) for e in sk.graph.edges} == {frozenset(e) for e in dag.edges}


def test_forbidden_edges_are_never_tested_and_required_edges_are_kept():
    dag = nx.DiGraph(GRAPHS["two_v_structures"])
    asked = []

    def decide(x, y, S):
        asked.append(frozenset((x, y)))
        return nx.is_d_separator(dag, {x}, {y}, set(S))

    sk = stable_pc_skeleton(sorted(dag.nodes), decide, forbidden=[("a", "b"), ("d", "e")], required=[("b", "e")])
    assert frozenset("ab") not in asked and frozenset("de") not in asked and frozenset("be") not in asked
    assert not sk.graph.has_edge("a", "b") and not sk.graph.has_edge("d", "e") and sk.graph.has_edge("b", "e")


def test_max_cond_size_limits_the_levels():
    dag = nx.DiGraph(GRAPHS["diamond"])  # a and d are separated only by {b, c}
    seen = []
    sk = stable_pc_skeleton(sorted(dag.nodes), lambda x, y, S: seen.append(len(S)) or
                            nx.is_d_separator(dag, {x}, {y}, set(S)), max_cond_size=1)
    assert max(seen) == 1 and sk.graph.has_edge("a", "d")


class _Dry:
    """A decider that runs out after a few tests."""

    def __init__(self, tests):
        self.left = tests

    @property
    def exhausted(self):
        return self.left == 0

    def __call__(self, x, y, S):
        self.left -= 1
        return False


def test_an_exhausted_decider_stops_the_run_and_keeps_the_edges():
    sk = stable_pc_skeleton(list("abcd"), _Dry(3))
    assert not sk.complete and sk.n_tests == 3 and sk.graph.number_of_edges() == 6


@pytest.mark.parametrize("bad,error", [
    (dict(max_cond_size=-1), ValueError),
    (dict(forbidden=[("a", "zz")]), KeyError),
    (dict(required=[("a", "a")]), ValueError),
])
def test_bad_arguments_name_the_input(bad, error):
    with pytest.raises(error):
        stable_pc_skeleton(list("abc"), lambda x, y, S: False, **bad)


def test_duplicate_names_are_refused():
    with pytest.raises(ValueError, match="duplicate"):
        stable_pc_skeleton(["a", "a"], lambda x, y, S: False)
