"""A random discrete Bayesian network of any width, for benchmarks: random DAG, random CPTs.

No privacy proof relies on this randomness; it comes from an ``rng`` (a fixed seed gives
the same network).
"""

from __future__ import annotations

import numpy as np

from privgraph.data.domain import Domain, Kind
from privgraph.datasets.network import Network
from privgraph.validation import positive_int


def random_network(d: int, rng: np.random.Generator, *, max_parents: int = 3, max_states: int = 3,
                   concentration: float = 0.5, name: str | None = None) -> Network:
    """A network over ``d`` variables ``v0 .. v{d-1}`` (that order is topological).

    Each variable has 2 to ``max_states`` states (ordinal, states ``s0, s1, ..``) and
    0 to ``max_parents`` parents drawn uniformly among the 10 variables before it (a local
    DAG, like real networks' sparse, long chains); each row of its table is a Dirichlet
    draw with all parameters ``concentration`` (below 1: skewed, strongly dependent rows).

    Examples
    --------
    >>> net = random_network(100, np.random.default_rng(0))
    >>> len(net.domain.names), len(net.edges) > 100, net.topological_order()[0]
    (100, True, 'v0')
    """
    d = positive_int("d", d)
    names = tuple(f"v{i}" for i in range(d))
    sizes = tuple(int(s) for s in rng.integers(2, max_states + 1, size=d))
    parents, cpts = [], []
    for i in range(d):
        window = np.arange(max(0, i - 10), i)
        k = int(rng.integers(0, min(max_parents, len(window)) + 1))
        ps = tuple(sorted(int(j) for j in rng.choice(window, size=k, replace=False)))
        shape = tuple(sizes[j] for j in ps)
        cpts.append(rng.dirichlet(np.full(sizes[i], concentration), size=shape or None).reshape(*shape, sizes[i]))
        parents.append(tuple(names[j] for j in ps))
    domain = Domain(names, sizes, tuple(Kind.ORDINAL for _ in names),
                    tuple(tuple(f"s{k}" for k in range(s)) for s in sizes))
    return Network(name or f"random{d}", domain, tuple(parents), tuple(cpts))
