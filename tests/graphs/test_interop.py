"""A learned graph in other libraries' terms: DAG extension, causal-learn, pgmpy."""

import networkx as nx
import numpy as np
import pytest

from privgraph.datasets import NETWORKS, load_network
from privgraph.graphs import CPDAG
from privgraph.graphs.interop import dag_extension


@pytest.mark.parametrize("name", NETWORKS)
def test_the_extension_of_a_cpdag_is_in_its_class(name):
    truth = CPDAG.from_dag(load_network(name).to_networkx())
    dag = truth.to_dag()
    assert nx.is_directed_acyclic_graph(dag) and set(dag.nodes) == set(truth.nodes)
    assert CPDAG.from_dag(dag) == truth  # same skeleton and v-structures: the same class


def test_random_dags_extend_back_to_their_class():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = 7
        order = rng.permutation(n)
        dag = nx.DiGraph()
        dag.add_nodes_from(str(i) for i in range(n))
        dag.add_edges_from((str(order[i]), str(order[j])) for i in range(n) for j in range(i + 1, n)
                           if rng.random() < 0.35)
        cpdag = CPDAG.from_dag(dag)
        assert CPDAG.from_dag(dag_extension(cpdag)) == cpdag


def test_a_graph_without_extension_is_refused():
    cycle = CPDAG(["a", "b", "c", "d"], undirected=[("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])
    with pytest.raises(ValueError, match="no DAG extension"):
        dag_extension(cycle)


def test_to_causallearn_keeps_tails_and_arrows():
    pytest.importorskip("causallearn")
    from causallearn.graph.Endpoint import Endpoint

    g = CPDAG(["a", "b", "c"], directed=[("a", "b")], undirected=[("b", "c")])
    cl = g.to_causallearn()
    nodes = {n.get_name(): n for n in cl.get_nodes()}
    ab, bc = cl.get_edge(nodes["a"], nodes["b"]), cl.get_edge(nodes["b"], nodes["c"])
    assert ab.get_proximal_endpoint(nodes["b"]) is Endpoint.ARROW and ab.get_proximal_endpoint(nodes["a"]) is Endpoint.TAIL
    assert bc.get_proximal_endpoint(nodes["b"]) is Endpoint.TAIL and bc.get_proximal_endpoint(nodes["c"]) is Endpoint.TAIL


def test_to_pgmpy_where_installed():
    pytest.importorskip("pgmpy")
    g = CPDAG(["a", "b", "c", "d"], directed=[("a", "c"), ("b", "c")], undirected=[("c", "d")])
    assert sorted(g.to_pgmpy().directed_edges) == [("a", "c"), ("b", "c")]
    assert sorted(g.to_pgmpy(dag=True).edges()) == [("a", "c"), ("b", "c"), ("c", "d")]
