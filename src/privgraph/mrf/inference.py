"""Marginal inference: exact on a junction tree when it fits, loopy BP otherwise; brute force.

:func:`infer` is the one entry point the estimators use. It is exact (junction tree) when
the tree's tables hold at most ``max_cells`` cells and falls back to loopy belief
propagation (approximate, ``is_exact=False``) beyond that. :func:`enumerate_beliefs` is the
brute-force reference the tests compare both against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.mrf.factor import expand, logsumexp
from privgraph.mrf.junction import calibrate, clique_marginals, junction_tree
from privgraph.mrf.loopy import loopy_beliefs
from privgraph.mrf.model import MarkovRandomField

#: Largest junction tree (total cells over its cliques) exact inference will build.
MAX_TREE_CELLS = 5_000_000


@dataclass(frozen=True)
class Beliefs:
    """Clique marginals (one probability table per model clique) and log Z.

    ``is_exact`` is False when they come from loopy BP (pseudo-marginals and the Bethe
    approximation of the log-partition function).
    """

    marginals: tuple[np.ndarray, ...]
    log_partition: float
    is_exact: bool


def infer(model: MarkovRandomField, *, max_cells: int = MAX_TREE_CELLS) -> Beliefs:
    """Clique marginals and the log-partition function of ``model``.

    Examples
    --------
    >>> m = MarkovRandomField.of(Domain.of(a=2, b=2), ["a,b"], [np.log([[1.0, 1.0], [1.0, 5.0]])])
    >>> b = infer(m)
    >>> b.is_exact, round(float(np.exp(b.log_partition)), 6), b.marginals[0].round(3).tolist()
    (True, 8.0, [[0.125, 0.125], [0.125, 0.625]])
    """
    return infer_potentials(model.domain, model.cliques, model.potentials, max_cells=max_cells)


def infer_potentials(
    domain: Domain,
    cliques: Sequence[tuple[str, ...]],
    potentials: Sequence[np.ndarray],
    *,
    max_cells: int = MAX_TREE_CELLS,
) -> Beliefs:
    """:func:`infer` on raw log-potential arrays (the estimators' inner loops use this).

    >>> b = infer_potentials(Domain.of(a=2, b=2), [("a",), ("b",)], [np.zeros(2), np.log([1.0, 3.0])])
    >>> b.marginals[1].tolist(), round(float(np.exp(b.log_partition)), 6)
    ([0.25, 0.75], 8.0)"""
    tree = junction_tree(domain, tuple(cliques))
    if tree.cells <= max_cells:
        beliefs, log_z = calibrate(tree, potentials)
        return Beliefs(tuple(clique_marginals(tree, beliefs)), log_z, True)
    marginals, log_z, _ = loopy_beliefs(domain, cliques, potentials)
    return Beliefs(tuple(marginals), log_z, False)


def log_joint(model: MarkovRandomField) -> np.ndarray:
    """The normalised log-probability of every configuration (brute force; small models).

    >>> lp = log_joint(MarkovRandomField.of(Domain.of(a=2, b=3), ["a"]))
    >>> lp.shape, round(float(np.exp(lp).sum()), 12)
    ((2, 3), 1.0)
    """
    total = _log_unnormalised_joint(model)
    return total - logsumexp(total, None)


def _log_unnormalised_joint(model: MarkovRandomField) -> np.ndarray:
    total = np.zeros(model.domain.shape)
    for f in model.factors:
        total = total + expand(f.values, f.names, model.domain.names)
    return total


def enumerate_beliefs(model: MarkovRandomField) -> Beliefs:
    """Clique marginals and log Z by summing over every configuration (the reference).

    >>> m = MarkovRandomField.of(Domain.of(a=2, b=2), ["a,b"], [np.log([[1.0, 1.0], [1.0, 5.0]])])
    >>> round(float(np.exp(enumerate_beliefs(m).log_partition)), 6)
    8.0"""
    names = model.domain.names
    total = _log_unnormalised_joint(model)
    log_z = float(logsumexp(total, None))
    p = np.exp(total - log_z)
    marginals = []
    for c in model.cliques:
        axes = tuple(i for i, n in enumerate(names) if n not in c)
        kept = [n for n in names if n in c]
        marginals.append(np.transpose(p.sum(axis=axes), [kept.index(n) for n in c]))
    return Beliefs(tuple(marginals), log_z, True)
