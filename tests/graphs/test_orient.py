import importlib

import networkx as nx
import numpy as np
import pytest

from privgraph.datasets import NETWORKS, load_network
from privgraph.graphs import CPDAG, apply_meek_rules, orient, orient_colliders
from tests.graphs.oracle import brute_force_cpdag_marks, oracle_sepsets, random_dag

# privgraph.graphs.orient is the function (it shadows the module of the same name)
orient_module = importlib.import_module("privgraph.graphs.orient")

NAMED = {
    "chain": [("a", "b"), ("b", "c")],
    "fork": [("b", "a"), ("b", "c")],
    "collider": [("a", "b"), ("c", "b")],
    # two v-structures (a -> c <- b, c -> e <- d) and c -> e -> f compelled downstream
    "two_v": [("a", "c"), ("b", "c"), ("c", "e"), ("d", "e"), ("e", "f")],
    "five_two_v": [("a", "c"), ("b", "c"), ("c", "d"), ("e", "d"), ("a", "b")],
}

EXPECTED = {
    "chain": ((), (("a", "b"), ("b", "c"))),
    "fork": ((), (("a", "b"), ("b", "c"))),
    "collider": ((("a", "b"), ("c", "b")), ()),
    "two_v": ((("a", "c"), ("b", "c"), ("c", "e"), ("d", "e"), ("e", "f")), ()),
    # a - b - c triangle shielded: only c -> d <- e is a v-structure
    "five_two_v": ((("c", "d"), ("e", "d")), (("a", "b"), ("a", "c"), ("b", "c"))),
}


def dag_of(edges) -> nx.DiGraph:
    dag = nx.DiGraph()
    dag.add_nodes_from(sorted({v for e in edges for v in e}))
    dag.add_edges_from(edges)
    return dag


@pytest.mark.parametrize("name", sorted(NAMED))
def test_from_dag_on_named_graphs(name):
    cpdag = CPDAG.from_dag(dag_of(NAMED[name]))
    directed, undirected = EXPECTED[name]
    assert set(cpdag.directed_edges) == set(directed)
    assert {frozenset(e) for e in cpdag.undirected_edges} == {frozenset(e) for e in undirected}


@pytest.mark.parametrize("name", sorted(NAMED))
@pytest.mark.parametrize("b_first", [False, True])
def test_orient_with_oracle_sepsets_gives_true_cpdag(name, b_first):
    dag = dag_of(NAMED[name])
    result = orient(dag.to_undirected(), oracle_sepsets(dag, b_first=b_first))
    assert result == CPDAG.from_dag(dag)


@pytest.mark.parametrize("network", NETWORKS)
def test_orient_with_oracle_sepsets_on_bundled_networks(network):
    dag = load_network(network).to_networkx()
    assert orient(dag.to_undirected(), oracle_sepsets(dag)) == CPDAG.from_dag(dag)


def test_asia_cpdag_by_hand():
    cpdag = CPDAG.from_dag(load_network("asia").to_networkx())
    # either -> dysp <- bronc and tub -> either <- lung are the v-structures, either -> xray follows (R1)
    assert set(cpdag.directed_edges) == {
        ("tub", "either"), ("lung", "either"), ("either", "dysp"), ("bronc", "dysp"), ("either", "xray"),
    }
    assert {frozenset(e) for e in cpdag.undirected_edges} == {
        frozenset(("asia", "tub")), frozenset(("smoke", "lung")), frozenset(("smoke", "bronc")),
    }


def test_from_dag_matches_brute_force_equivalence_class():
    rng = np.random.default_rng(5)
    for _ in range(60):
        dag = random_dag(5, 0.5, rng)
        compelled, reversible = brute_force_cpdag_marks(dag)
        cpdag = CPDAG.from_dag(dag)
        assert set(cpdag.directed_edges) == compelled
        assert {frozenset(e) for e in cpdag.undirected_edges} == reversible


def test_orient_matches_from_dag_on_random_dags():
    rng = np.random.default_rng(7)
    for _ in range(60):
        dag = random_dag(7, 0.35, rng)
        assert orient(dag.to_undirected(), oracle_sepsets(dag)) == CPDAG.from_dag(dag)


def test_isolated_nodes_and_node_order_are_kept():
    skeleton = nx.Graph([("a", "b")])
    result = orient(skeleton, {}, nodes=["z", "b", "a"])
    assert result.nodes == ("z", "b", "a")
    assert result.undirected_edges == (("b", "a"),)


# ----- Meek's rules, one case each (only that rule applies)


def test_meek_rule1():
    g = CPDAG(list("abc"), directed=[("a", "b")], undirected=[("b", "c")])
    assert set(apply_meek_rules(g).directed_edges) == {("a", "b"), ("b", "c")}


def test_meek_rule2():
    g = CPDAG(list("abc"), directed=[("a", "c"), ("c", "b")], undirected=[("a", "b")])
    assert set(apply_meek_rules(g).directed_edges) == {("a", "c"), ("c", "b"), ("a", "b")}


def test_meek_rule3():
    g = CPDAG(list("abcd"), directed=[("c", "b"), ("d", "b")], undirected=[("a", "b"), ("a", "c"), ("a", "d")])
    out = apply_meek_rules(g)
    assert set(out.directed_edges) == {("c", "b"), ("d", "b"), ("a", "b")}
    assert set(out.undirected_edges) == {("a", "c"), ("a", "d")}


def test_meek_rule4():
    g = CPDAG(list("abcd"), directed=[("c", "d"), ("d", "b")], undirected=[("a", "b"), ("a", "c"), ("a", "d")])
    out = apply_meek_rules(g)
    assert set(out.directed_edges) == {("c", "d"), ("d", "b"), ("a", "b")}
    assert set(out.undirected_edges) == {("a", "c"), ("a", "d")}


def test_meek_rules_reach_a_fixed_point():
    g = CPDAG(list("abcde"), directed=[("a", "b")], undirected=[("b", "c"), ("c", "d"), ("d", "e")])
    out = apply_meek_rules(g)
    assert out.undirected_edges == ()
    assert apply_meek_rules(out) == out


def test_meek_nothing_to_do_returns_equal_graph():
    g = CPDAG(list("abc"), undirected=[("a", "b"), ("b", "c")])
    assert apply_meek_rules(g) == g


# ----- conflicts


def conflicting_collider_input():
    """Colliders a -> b <- c and b -> c <- d disagree on b - c."""
    skeleton = nx.Graph([("a", "b"), ("b", "c"), ("c", "d")])
    sepsets = {frozenset("ac"): frozenset(), frozenset("bd"): frozenset(), frozenset("ad"): frozenset("bc")}
    return skeleton, sepsets


def test_conflicting_colliders_leave_the_shared_edge_undirected():
    skeleton, sepsets = conflicting_collider_input()
    out = orient(skeleton, sepsets)
    assert set(out.directed_edges) == {("a", "b"), ("d", "c")}
    assert out.undirected_edges in ((("b", "c"),), (("c", "b"),))


def test_conflict_resolution_is_order_independent():
    skeleton, sepsets = conflicting_collider_input()
    expected = orient(skeleton, sepsets)
    rng = np.random.default_rng(3)
    for _ in range(10):
        edges = [tuple(rng.permutation(e)) for e in rng.permutation(list(skeleton.edges))]
        shuffled = nx.Graph()
        shuffled.add_nodes_from(rng.permutation(list(skeleton.nodes)))
        shuffled.add_edges_from(edges)
        reordered = dict(sorted(sepsets.items(), key=lambda kv: rng.random()))
        assert orient(shuffled, reordered) == expected


def test_meek_conflict_stays_undirected():
    # R1 from a -> b says b -> c; R1 from d -> c says c -> b
    g = CPDAG(list("abcd"), directed=[("a", "b"), ("d", "c")], undirected=[("b", "c")])
    assert apply_meek_rules(g) == g


def test_missing_sepset_gives_no_collider():
    skeleton = nx.Graph([("a", "b"), ("b", "c")])
    assert orient_colliders(skeleton, {}).directed_edges == ()


def test_sepset_of_an_adjacent_pair_is_ignored():
    skeleton = nx.Graph([("a", "b"), ("b", "c")])
    sepsets = {frozenset("ac"): frozenset("b"), frozenset("ab"): frozenset()}
    assert orient(skeleton, sepsets).directed_edges == ()


# ----- bad input


def test_orient_rejects_directed_skeleton():
    with pytest.raises(ValueError, match="skeleton must be an undirected"):
        orient(nx.DiGraph([("a", "b")]), {})


def test_orient_rejects_self_loop():
    with pytest.raises(ValueError, match="self-loops"):
        orient(nx.Graph([("a", "a")]), {})


def test_orient_rejects_unknown_sepset_nodes():
    skeleton = nx.Graph([("a", "b"), ("b", "c")])
    with pytest.raises(ValueError, match="names unknown nodes \\['z'\\]"):
        orient(skeleton, {frozenset("ac"): frozenset("z")})
    with pytest.raises(ValueError, match="sepsets key"):
        orient(skeleton, {frozenset("az"): frozenset()})


def test_orient_rejects_nodes_missing_skeleton_nodes():
    with pytest.raises(ValueError, match="miss skeleton nodes \\['b'\\]"):
        orient(nx.Graph([("a", "b")]), {}, nodes=["a"])


# ----- each Meek case is decided by its own rule alone


RULE_CASES = {
    "_rule1": (CPDAG(list("abc"), directed=[("a", "b")], undirected=[("b", "c")]), ("b", "c")),
    "_rule2": (CPDAG(list("abc"), directed=[("a", "c"), ("c", "b")], undirected=[("a", "b")]), ("a", "b")),
    "_rule3": (
        CPDAG(list("abcd"), directed=[("c", "b"), ("d", "b")], undirected=[("a", "b"), ("a", "c"), ("a", "d")]),
        ("a", "b"),
    ),
    "_rule4": (
        CPDAG(list("abcd"), directed=[("c", "d"), ("d", "b")], undirected=[("a", "b"), ("a", "c"), ("a", "d")]),
        ("a", "b"),
    ),
}


@pytest.mark.parametrize("rule", sorted(RULE_CASES))
def test_each_case_fires_only_its_rule(rule):
    g, arc = RULE_CASES[rule]
    fired = {name for name in RULE_CASES if getattr(orient_module, name)(g, *arc)}
    assert fired == {rule}
    assert orient_module._meek_proposals(g) == {arc}


def test_orientation_is_order_independent_on_noisy_sepsets():
    """Random skeletons with random (inconsistent) separating sets: shuffling the node order,
    the edge order and the sepset order never changes the result."""
    rng = np.random.default_rng(11)
    names = [f"v{i}" for i in range(7)]
    for _ in range(40):
        skeleton = nx.Graph()
        skeleton.add_nodes_from(names)
        skeleton.add_edges_from((a, b) for i, a in enumerate(names) for b in names[i + 1:] if rng.random() < 0.4)
        sepsets = {
            frozenset((a, b)): frozenset(v for v in names if v not in (a, b) and rng.random() < 0.3)
            for i, a in enumerate(names) for b in names[i + 1:] if not skeleton.has_edge(a, b)
        }
        expected = orient(skeleton, sepsets)
        shuffled = nx.Graph()
        shuffled.add_nodes_from(rng.permutation(names))
        shuffled.add_edges_from(tuple(rng.permutation(e)) for e in rng.permutation(list(skeleton.edges)))
        keys = list(sepsets)
        reordered = {keys[i]: sepsets[keys[i]] for i in rng.permutation(len(keys))}
        assert orient(shuffled, reordered) == expected
