"""Graphs: CPDAGs, orientation by separating sets and Meek's rules, metrics, export.

Post-processing only: no data, no privacy budget. Importing this package imports
networkx; drawing imports matplotlib only when called.

>>> import networkx as nx
>>> truth = CPDAG.from_dag(nx.DiGraph([("a", "c"), ("b", "c")]))
>>> shd(truth, truth), skeleton_scores(truth, truth)["f1"]
(0, 1.0)
"""

from privgraph.graphs.cpdag import CPDAG
from privgraph.graphs.export import draw, from_json, to_dot, to_graphml, to_json, write_json
from privgraph.graphs.metrics import arc_f1, arc_scores, arrowhead_scores, shd, skeleton_scores
from privgraph.graphs.orient import apply_meek_rules, orient, orient_colliders, v_structures

__all__ = [
    "CPDAG",
    "apply_meek_rules",
    "arc_f1",
    "arc_scores",
    "arrowhead_scores",
    "draw",
    "from_json",
    "orient",
    "orient_colliders",
    "shd",
    "skeleton_scores",
    "to_dot",
    "to_graphml",
    "to_json",
    "v_structures",
    "write_json",
]
