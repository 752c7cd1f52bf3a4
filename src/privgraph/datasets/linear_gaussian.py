"""A random linear-Gaussian DAG of any width, for tests and benchmarks of the Fisher-z test.

No privacy proof relies on this randomness; it comes from an ``rng`` (a fixed seed gives the
same model and the same rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from privgraph.data.domain import Domain, Kind
from privgraph.validation import positive_int


@dataclass(frozen=True)
class LinearGaussian:
    """``x_j = sum_i W[i, j] x_i + e_j`` over the topological order ``v0 .. v{d-1}``, e_j ~ N(0, 1)."""

    names: tuple[str, ...]
    weights: np.ndarray  # (d, d), upper triangular: weights[i, j] != 0 is the edge v_i -> v_j

    @property
    def edges(self) -> list[tuple[str, str]]:
        i, j = np.nonzero(self.weights)
        return [(self.names[a], self.names[b]) for a, b in zip(i, j)]

    def covariance(self) -> np.ndarray:
        """The model's covariance ``(I - W)^-T (I - W)^-1``."""
        inv = np.linalg.inv(np.eye(len(self.names)) - self.weights)
        return inv.T @ inv

    def sample(self, n: int, rng: np.random.Generator):
        """n rows as a DataFrame (forward sampling)."""
        x = rng.standard_normal((positive_int("n", n), len(self.names)))
        for j in range(len(self.names)):
            x[:, j] += x @ self.weights[:, j]  # parents come first: their columns are final
        return pd.DataFrame(x, columns=list(self.names))

    def domain(self, sds: float = 3.0) -> Domain:
        """A public domain: every column continuous, bounded at +-``sds`` of its model sd."""
        sd = np.sqrt(np.diag(self.covariance()))
        return Domain(self.names, tuple(0 for _ in self.names), tuple(Kind.CONTINUOUS for _ in self.names),
                      bounds=tuple((-sds * s, sds * s) for s in sd.tolist()))

    def to_networkx(self):
        g = nx.DiGraph()
        g.add_nodes_from(self.names)
        g.add_edges_from(self.edges)
        return g


def random_linear_gaussian(d: int, rng: np.random.Generator, *, expected_degree: float = 2.0,
                           weight_range: tuple[float, float] = (0.5, 1.0)) -> LinearGaussian:
    """A random DAG over ``d`` variables (Erdos-Renyi in the order ``v0 .. v{d-1}``, each pair an
    edge with probability ``expected_degree / (d - 1)``), weights uniform in +-``weight_range``.

    >>> lg = random_linear_gaussian(20, np.random.default_rng(0))
    >>> len(lg.names), 10 < len(lg.edges) < 40, lg.sample(5, np.random.default_rng(1)).shape
    (20, True, (5, 20))
    """
    d = positive_int("d", d, 2)
    p = min(1.0, expected_degree / (d - 1))
    mask = np.triu(rng.uniform(size=(d, d)) < p, 1)
    lo, hi = weight_range
    w = rng.uniform(lo, hi, size=(d, d)) * rng.choice([-1.0, 1.0], size=(d, d))
    return LinearGaussian(tuple(f"v{i}" for i in range(d)), np.where(mask, w, 0.0))


__all__ = ["LinearGaussian", "random_linear_gaussian"]
