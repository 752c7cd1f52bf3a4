"""A synthetic stand-in with the shape of the Adult census table (no download).

    from census_shape import census_shape
    frame, domain = census_shape(48_842, seed=0)

The UCI Adult table (48,842 rows) has 14 modelled columns of 2 to about 100 levels, 8 of them
nominal: age (74 levels), workclass (9), education (16), education-num (16),
marital-status (7), occupation (15), relationship (6), race (5), sex (2), capital-gain and
capital-loss (binned, about 100), hours-per-week (96), native-country (42), income (2).
This module draws rows of that shape from a random Bayesian network (each column has up to
two parents among the four columns before it, Dirichlet(0.5) conditional tables, a fixed
seed): the dependence is synthetic, the shape (levels, kinds, rows) is Adult's. It is the
shape that decides whether a release's model stays exact, and what it costs.
"""

from __future__ import annotations

import numpy as np

#: column -> (number of levels, kind), Adult's order.
SHAPE = {
    "age": (74, "ordinal"), "workclass": (9, "nominal"), "education": (16, "nominal"),
    "education_num": (16, "ordinal"), "marital_status": (7, "nominal"), "occupation": (15, "nominal"),
    "relationship": (6, "nominal"), "race": (5, "nominal"), "sex": (2, "nominal"),
    "capital_gain": (100, "ordinal"), "capital_loss": (92, "ordinal"), "hours_per_week": (96, "ordinal"),
    "native_country": (42, "nominal"), "income": (2, "ordinal"),
}


def census_network(seed: int = 0):
    """The random network of :data:`SHAPE` (a fixed ``seed`` gives the same network)."""
    from privgraph.data.domain import Domain, Kind
    from privgraph.datasets.network import Network

    rng = np.random.default_rng(seed)
    names = tuple(SHAPE)
    sizes = tuple(s for s, _ in SHAPE.values())
    kinds = tuple(Kind.CATEGORICAL if k == "nominal" else Kind.ORDINAL for _, k in SHAPE.values())
    parents, cpts = [], []
    for i, name in enumerate(names):
        window = np.arange(max(0, i - 4), i)
        k = int(rng.integers(min(1, len(window)), min(2, len(window)) + 1))
        ps = tuple(sorted(int(j) for j in rng.choice(window, size=k, replace=False)))
        shape = tuple(sizes[j] for j in ps)
        cpts.append(rng.dirichlet(np.full(sizes[i], 0.5), size=shape or None).reshape(*shape, sizes[i]))
        parents.append(tuple(names[j] for j in ps))
    levels = tuple(tuple(f"{name[:3]}{k}" for k in range(s)) for name, s in zip(names, sizes))
    domain = Domain(names, sizes, kinds, levels)
    return Network("census_shape", domain, tuple(parents), tuple(cpts))


def census_shape(n: int = 48_842, seed: int = 0):
    """(frame of ``n`` rows with level labels, public domain) of the census-shaped network."""
    from privgraph.datasets import sample_frame

    net = census_network(seed)
    return sample_frame(net, n, np.random.default_rng(seed + 1), labels=True), net.domain
