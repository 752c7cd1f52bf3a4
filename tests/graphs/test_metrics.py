import networkx as nx
import pytest

from privgraph.graphs import CPDAG, arc_f1, arc_scores, arrowhead_scores, shd, skeleton_scores

NODES = ["a", "b", "c", "d"]
# truth: a -> c <- b, c - d  (hand-made, need not be a real CPDAG for the metrics)
TRUTH = CPDAG(NODES, directed=[("a", "c"), ("b", "c")], undirected=[("c", "d")])
# estimate: a -> c right, c -> b reversed, c - d right, a - d extra
EST = CPDAG(NODES, directed=[("a", "c"), ("c", "b")], undirected=[("c", "d"), ("a", "d")])


def test_skeleton_scores_by_hand():
    # est adjacencies ac, bc, cd, ad; truth ac, bc, cd: 3 hits of 4 claimed, 3 of 3 found
    s = skeleton_scores(EST, TRUTH)
    assert s == pytest.approx({"precision": 3 / 4, "recall": 1.0, "f1": 6 / 7})


def test_arrowhead_scores_by_hand():
    # est arrowheads a->c, c->b; truth a->c, b->c: 1 hit
    assert arrowhead_scores(EST, TRUTH) == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5})


def test_shd_by_hand():
    # reversed b-c (1) + extra a-d (1); a->c and c-d agree
    assert shd(EST, TRUTH) == 2
    assert shd(TRUTH, EST) == 2
    assert shd(TRUTH, TRUTH) == 0


def test_shd_counts_each_pair_once():
    directed = CPDAG(["a", "b"], directed=[("a", "b")])
    assert shd(directed, CPDAG(["a", "b"], directed=[("b", "a")])) == 1  # reversal
    assert shd(directed, CPDAG(["a", "b"], undirected=[("a", "b")])) == 1  # wrong mark
    assert shd(directed, CPDAG(["a", "b"])) == 1  # missing


def test_arc_scores_by_hand():
    # est arcs: (a,c), (c,b), (c,d), (d,c), (a,d), (d,a) = 6
    # truth arcs: (a,c), (b,c), (c,d), (d,c) = 4; hits (a,c), (c,d), (d,c) = 3
    s = arc_scores(EST, TRUTH)
    assert s == pytest.approx({"precision": 0.5, "recall": 0.75, "f1": 0.6})
    assert arc_f1(EST, TRUTH) == pytest.approx(0.6)


def test_arc_f1_counts_an_undirected_edge_twice():
    one_arc = CPDAG(["a", "b"], directed=[("a", "b")])
    both = CPDAG(["a", "b"], undirected=[("a", "b")])
    assert arc_scores(both, one_arc) == pytest.approx({"precision": 0.5, "recall": 1.0, "f1": 2 / 3})
    assert arc_scores(one_arc, both) == pytest.approx({"precision": 1.0, "recall": 0.5, "f1": 2 / 3})
    # the paper's F1 equals the F1 of the 0/1 adjacency matrices
    est, true = both.to_adjacency(), one_arc.to_adjacency()
    tp = (est & true).sum()
    assert arc_f1(both, one_arc) == pytest.approx(2 * tp / (est.sum() + true.sum()))


EMPTY = CPDAG(NODES)


@pytest.mark.parametrize("score", [skeleton_scores, arrowhead_scores, arc_scores])
def test_zero_over_zero_conventions(score):
    assert score(EMPTY, EMPTY) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert score(EMPTY, TRUTH) == {"precision": 1.0, "recall": 0.0, "f1": 0.0}
    assert score(TRUTH, EMPTY) == {"precision": 0.0, "recall": 1.0, "f1": 0.0}


def test_no_overlap_gives_zero_f1():
    assert skeleton_scores(CPDAG(["a", "b", "c"], undirected=[("a", "b")]),
                           CPDAG(["a", "b", "c"], undirected=[("b", "c")]))["f1"] == 0.0


def test_shd_of_empty_graphs():
    assert shd(EMPTY, EMPTY) == 0
    assert shd(EMPTY, TRUTH) == 3


def test_networkx_inputs():
    truth_dag = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d")])
    assert skeleton_scores(nx.Graph([("a", "c"), ("b", "c"), ("c", "d")]), truth_dag)["f1"] == 1.0
    assert shd(CPDAG.from_dag(truth_dag), truth_dag) == 0  # that DAG is its own class
    assert shd(TRUTH.to_networkx(), TRUTH) == 0


def test_node_sets_must_match():
    with pytest.raises(ValueError, match="only in estimated: \\['e'\\], only in truth: \\[\\]"):
        shd(CPDAG(NODES + ["e"]), TRUTH)


def test_rejects_other_types():
    with pytest.raises(TypeError, match="estimated must be a CPDAG or a networkx graph, got list"):
        skeleton_scores([("a", "b")], TRUTH)
