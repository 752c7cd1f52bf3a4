"""A discrete Bayesian network (the true DAG and its tables) and vectorised forward sampling."""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import pandas as pd

from privgraph.data.domain import Domain
from privgraph.data.encoding import code_dtype
from privgraph.validation import InvalidInput, positive_int


@dataclass(frozen=True)
class Network:
    """A discrete Bayesian network: domain, parents of each variable, and their tables.

    ``cpts[i]`` has shape ``(*parent sizes, size of variable i)``: the distribution of
    variable ``i`` given each configuration of ``parents[i]`` (in that order).
    """

    name: str
    domain: Domain
    parents: tuple[tuple[str, ...], ...]
    cpts: tuple[np.ndarray, ...] = field(repr=False, compare=False)

    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        """The arcs ``(parent, child)`` of the true DAG, children in domain order."""
        return tuple((p, v) for v, ps in zip(self.domain.names, self.parents) for p in ps)

    def cpt(self, name: str) -> np.ndarray:
        """The conditional table of ``name`` (axes: its parents, then itself)."""
        return self.cpts[self.domain.index(name)]

    def parents_of(self, name: str) -> tuple[str, ...]:
        return self.parents[self.domain.index(name)]

    def topological_order(self) -> tuple[str, ...]:
        """The variables, parents before children (ties in domain order).

        Raises ValueError if the arcs form a cycle.
        """
        done: list[str] = []
        todo = list(self.domain.names)
        while todo:
            ready = [v for v in todo if set(self.parents_of(v)) <= set(done)]
            if not ready:
                raise InvalidInput(f"network {self.name!r} has a directed cycle among {todo}")
            done += ready
            todo = [v for v in todo if v not in ready]
        return tuple(done)

    def to_networkx(self):
        """The true DAG as a ``networkx.DiGraph`` (every variable a node)."""
        g = nx.DiGraph()
        g.add_nodes_from(self.domain.names)
        g.add_edges_from(self.edges)
        return g


def sample(network: Network, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` rows forward-sampled from ``network``: codes of shape (n, variables), domain order.

    Vectorised per variable in topological order: the parents' codes give a row of the
    conditional table, and one uniform per row is inverted through its cumulative sums.
    No privacy proof relies on this randomness, so it comes from ``rng``.

    Examples
    --------
    >>> from privgraph.datasets import load_network
    >>> x = sample(load_network("asia"), 5, np.random.default_rng(0))
    >>> x.shape, x.dtype
    ((5, 8), dtype('uint8'))
    """
    n = positive_int("n", n, 0)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {rng!r}")
    d = network.domain
    out = np.empty((n, len(d.names)), dtype=code_dtype(max(d.sizes)), order="F")
    for name in network.topological_order():
        j = d.index(name)
        config = _parent_configs(network, name, out)
        out[:, j] = _inverse_cdf(network.cpt(name), config, rng.random(n))
    return out


def _parent_configs(network: Network, name: str, codes: np.ndarray) -> np.ndarray:
    """Mixed-radix index of each row's parent configuration."""
    d = network.domain
    config = np.zeros(codes.shape[0], dtype=np.int64)
    for p in network.parents_of(name):
        config *= d.size_of(p)
        config += codes[:, d.index(p)]
    return config


def _inverse_cdf(cpt: np.ndarray, config: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The smallest state whose cumulative probability exceeds ``u``, per row."""
    k = cpt.shape[-1]
    cdf = np.cumsum(cpt.reshape(-1, k), axis=1)[:, :-1]  # the last is 1: never compared
    code = np.zeros(u.shape, dtype=np.uint8 if k < 256 else np.int64)
    for j in range(k - 1):
        code += u >= cdf[config, j]
    return code


def sample_frame(network: Network, n: int, rng: np.random.Generator, *, labels: bool = False):
    """``n`` forward-sampled rows as a DataFrame of Categorical columns (the public domain).

    The columns' categories are the network's levels (codes 0..k-1, or the BIF's level
    names with ``labels=True``), so estimators read the domain from the dtypes, not from
    the sampled values.

    >>> from privgraph.datasets import load_network
    >>> df = sample_frame(load_network("cancer"), 5, np.random.default_rng(0), labels=True)
    >>> list(df["Smoker"].cat.categories)
    ['True', 'False']
    """
    codes = sample(network, n, rng)
    d = network.domain
    return pd.DataFrame({
        name: pd.Categorical.from_codes(codes[:, i], categories=list(d.levels[i]) if labels else list(range(size)),
                                        ordered=d.kinds[i].value == "ordinal")
        for i, (name, size) in enumerate(zip(d.names, d.sizes))
    })
