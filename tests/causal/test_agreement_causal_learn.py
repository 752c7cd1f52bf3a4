"""Non-private PC with the G test agrees with causal-learn's stable PC on the skeleton.

Under causal-learn's convention (``degenerate="independent"``: a table with no degrees of
freedom gives p = 1, "independent"; causal-learn's chisq_or_gsq_test returns 1 when its
degrees of freedom sum to 0) the skeletons agree exactly. privgraph's default keeps the
edge there instead (no information is not independence), as pgmpy's NaN does.
"""

import numpy as np
import pytest

from privgraph.causal import NonPrivate, Tables, stable_pc_skeleton
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.stats import ChiSquareTest, GTest

pc_module = pytest.importorskip("causallearn.search.ConstraintBased.PC")


def causal_learn_skeleton(codes, names, test):
    cg = pc_module.pc(codes.astype(np.int64), 0.05, test, stable=True, show_progress=False, uc_rule=0)
    adj = cg.G.graph
    return {frozenset((names[i], names[j])) for i in range(len(names)) for j in range(i + 1, len(names))
            if adj[i, j] != 0 or adj[j, i] != 0}


@pytest.mark.parametrize("name,n", [("asia", 5000), ("asia", 50_000), ("cancer", 20_000),
                                    ("earthquake", 20_000), ("survey", 20_000), ("sachs", 5000)])
@pytest.mark.parametrize("ours,theirs", [(GTest, "gsq"), (ChiSquareTest, "chisq")])
def test_g_test_pc_skeleton_matches_causal_learn(name, n, ours, theirs):
    net = load_network(name)
    codes = sample(net, n, np.random.default_rng(7))
    tables = Tables.from_engine(NumpyEngine(net.domain, codes))
    sk = stable_pc_skeleton(net.domain.names, NonPrivate(tables, ours(degenerate="independent"), 0.05))
    assert {frozenset(e) for e in sk.graph.edges} == causal_learn_skeleton(codes, net.domain.names, theirs)
