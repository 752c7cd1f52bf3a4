"""Loopy belief propagation on the factor graph, for models whose junction tree is too large.

Sum-product messages in log space between each clique factor and its variables, updated
factor by factor with damping, until the largest change of a message falls below ``tol``.
The result is approximate: pseudo-marginals and the Bethe estimate of the log-partition
function (both exact when the factor graph is a tree).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.mrf.factor import expand, logsumexp


def loopy_beliefs(
    domain: Domain,
    cliques: Sequence[tuple[str, ...]],
    potentials: Sequence[np.ndarray],
    *,
    damping: float = 0.5,
    tol: float = 1e-8,
    max_iter: int = 500,
) -> tuple[list[np.ndarray], float, bool]:
    """Pseudo-marginals per clique, the Bethe log-partition estimate, and a converged flag.

    Examples
    --------
    >>> d = Domain.of(a=2, b=2, c=2)
    >>> cl = [("a", "b"), ("b", "c")]
    >>> marg, log_z, ok = loopy_beliefs(d, cl, [np.log([[1.0, 2.0], [3.0, 4.0]]), np.zeros((2, 2))])
    >>> ok, round(float(np.exp(log_z)), 6), marg[0].round(2).tolist()
    (True, 20.0, [[0.1, 0.2], [0.3, 0.4]])
    """
    cliques = [tuple(c) for c in cliques]
    to_var = {(k, v): np.zeros(domain.size_of(v)) for k, c in enumerate(cliques) for v in c}
    members = {v: [k for k, c in enumerate(cliques) if v in c] for v in domain.names}
    converged = False
    for _ in range(max_iter):
        change = 0.0
        for k, c in enumerate(cliques):
            incoming = _incoming(k, c, to_var, members)
            total = potentials[k] + sum(expand(m, [v], c) for v, m in zip(c, incoming))
            for i, v in enumerate(c):
                others = tuple(j for j in range(len(c)) if j != i)
                new = logsumexp(total - expand(incoming[i], [v], c), others) if others else (
                    total - incoming[i]
                )
                new = new - logsumexp(new, None)
                new = damping * to_var[k, v] + (1 - damping) * new
                change = max(change, float(np.max(np.abs(new - to_var[k, v]))))
                to_var[k, v] = new
        if change < tol:
            converged = True
            break
    return _finish(domain, cliques, potentials, to_var, members) + (converged,)


def _incoming(k, clique, to_var, members) -> list[np.ndarray]:
    """Variable-to-factor messages: all factor messages into v except factor k's."""
    out = []
    for v in clique:
        m = sum((to_var[j, v] for j in members[v] if j != k), np.zeros_like(to_var[k, v]))
        out.append(m - logsumexp(m, None))
    return out


def _finish(domain, cliques, potentials, to_var, members):
    marginals, log_z = [], 0.0
    for k, c in enumerate(cliques):
        incoming = _incoming(k, c, to_var, members)
        total = potentials[k] + sum(expand(m, [v], c) for v, m in zip(c, incoming))
        log_b = total - logsumexp(total, None)
        b = np.exp(log_b)
        marginals.append(b)
        log_z += float(np.sum(b * (potentials[k] - log_b)))  # E[theta] + H(b_k)
    for v in domain.names:
        m = sum((to_var[j, v] for j in members[v]), np.zeros(domain.size_of(v)))
        log_b = m - logsumexp(m, None)
        entropy = -float(np.sum(np.exp(log_b) * log_b))
        log_z += (1 - len(members[v])) * entropy  # Bethe: minus (d_v - 1) H(b_v)
    return marginals, log_z
