"""The shared list of small models every inference routine is checked against."""

import numpy as np

from privgraph.data.domain import Domain
from privgraph.mrf.model import MarkovRandomField
from privgraph.mrf.synthetic import erdos_renyi, third_order_chain


def _random(domain, cliques, seed):
    rng = np.random.default_rng(seed)
    return MarkovRandomField.of(domain, cliques, [rng.normal(0, 1.5, domain.project(c).shape) for c in cliques])


def small_models():
    """(name, model): tree, cycle, single node, duplicate cliques and a few more shapes."""
    d4 = Domain.of(a=2, b=3, c=2, d=4)
    return [
        ("tree", _random(d4, [("a", "b"), ("b", "c"), ("b", "d")], 1)),
        ("cycle", _random(d4, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")], 2)),
        ("single node", _random(Domain.of(a=5), [("a",)], 3)),
        ("duplicate cliques", _random(Domain.of(a=2, b=3), [("a", "b"), ("b", "a"), ("a", "b")], 4)),
        ("isolated variable", _random(Domain.of(a=3, b=2, c=2), [("c", "a")], 5)),
        ("triangle and node", _random(d4, [("a", "b", "c"), ("c", "d"), ("d",)], 6)),
        ("grid 3x3", _random(
            Domain(tuple(f"v{i}" for i in range(9)), (2,) * 9),
            [(f"v{i}", f"v{i + 1}") for i in range(9) if i % 3 != 2] + [(f"v{i}", f"v{i + 3}") for i in range(6)],
            7,
        )),
        ("third-order chain", third_order_chain(8, rng=np.random.default_rng(8))),
        ("erdos-renyi", erdos_renyi(8, 3, 0.4, rng=np.random.default_rng(9))),
    ]


def tree_models():
    """Models whose factor graph is a tree (loopy BP is exact on them)."""
    return [m for m in small_models() if m[0] in ("tree", "single node", "isolated variable")]
