"""Maximum-likelihood parameters from clique marginals (moment matching), optionally tied.

The log-likelihood of ``N`` records with clique marginals ``mu`` is
``N (sum_C <mu_C, theta_C> - A(theta))``: concave, with gradient ``mu - mu(theta)``. It is
maximised by L-BFGS with marginals from :func:`~privgraph.mrf.inference.flat_inference`
(exact on a junction tree, Bethe/loopy otherwise). ``ridge`` adds ``-ridge/2 ||theta||^2``,
which gives a unique, finite maximiser even when ``mu`` lies outside the marginal polytope
or has empty cells (used by the naive-MLE estimator).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.optimize import minimize

from privgraph.data.domain import Domain
from privgraph.threads import single_threaded_blas
from privgraph.mrf.inference import flat_inference
from privgraph.mrf.model import MarkovRandomField, check_cliques
from privgraph.validation import InvalidInput


def fit_mle(
    domain: Domain,
    cliques: Sequence[Sequence[str] | str],
    marginals: Sequence[np.ndarray],
    *,
    ties: Sequence[int] | None = None,
    ridge: float = 0.0,
    init: Sequence[np.ndarray] | None = None,
    max_iter: int = 1000,
    tol: float = 1e-9,
    max_cells: int | None = None,
) -> MarkovRandomField:
    """Log-potentials maximising the likelihood of the given clique marginals.

    Parameters
    ----------
    domain, cliques
        The model structure.
    marginals
        One probability table per parameter group (per clique when ``ties`` is None), axes
        in the clique's order. For a group of tied cliques it is the *average* of the
        members' marginals.
    ties
        A group label per clique: cliques with the same label share one potential table
        (their tables must have the same shape). Groups are ordered by first appearance.
    ridge
        Weight of the ``ridge/2 ||theta||^2`` penalty (0 for plain MLE).
    init
        Starting log-potentials per group (zeros by default).

    Examples
    --------
    >>> d = Domain.of(a=2, b=2, c=2)
    >>> mu = [np.array([[0.4, 0.1], [0.1, 0.4]]), np.array([[0.3, 0.2], [0.1, 0.4]])]
    >>> m = fit_mle(d, ["a,b", "b,c"], mu)
    >>> from privgraph.mrf.inference import infer
    >>> [bool(np.abs(b - t).max() < 1e-6) for b, t in zip(infer(m).marginals, mu)]
    [True, True]
    """
    cliques = check_cliques(domain, cliques)
    groups, members = tie_groups(domain, cliques, ties)
    if len(marginals) != len(members):
        raise InvalidInput(f"got {len(marginals)} marginal tables for {len(members)} parameter groups")
    shapes = [domain.project(cliques[m[0]]).shape for m in members]
    targets = [np.asarray(t, dtype=np.float64) * len(m) for t, m in zip(marginals, members)]
    for t, s, m in zip(targets, shapes, members):
        if t.shape != tuple(s):
            raise InvalidInput(f"marginal for clique {cliques[m[0]]} has shape {t.shape}, expected {tuple(s)}")
    sizes = np.cumsum([0] + [int(np.prod(s)) for s in shapes])
    run = flat_inference(domain, cliques, groups, max_cells=max_cells)
    target = np.concatenate([t.ravel() for t in targets])

    def unpack(flat):
        return [flat[a:b].reshape(s) for a, b, s in zip(sizes[:-1], sizes[1:], shapes)]

    def objective(flat):
        try:
            sums, log_z = run(flat)
        except FloatingPointError:  # a line-search step far too long: reject it
            return np.inf, np.zeros_like(flat)
        value = log_z + 0.5 * ridge * float(flat @ flat) - float(target @ flat)
        return value, sums - target + ridge * flat

    x0 = np.zeros(sizes[-1]) if init is None else np.concatenate([np.ravel(t) for t in init])
    with single_threaded_blas():
        result = minimize(objective, x0, jac=True, method="L-BFGS-B",
                          options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15})
    theta = unpack(result.x)
    return MarkovRandomField.of(domain, cliques, [theta[g] for g in groups])


def tie_groups(domain: Domain, cliques, ties) -> tuple[list[int], list[list[int]]]:
    """Group index per clique, and the clique indices of each group (groups by first appearance).

    ``ties`` is a label per clique (None: every clique its own group); tied cliques must
    have tables of the same shape.

    >>> tie_groups(Domain.of(a=2, b=2, c=2), [("a", "b"), ("b", "c"), ("a",)], ["pair", "pair", "node"])
    ([0, 0, 1], [[0, 1], [2]])
    """
    if ties is None:
        return list(range(len(cliques))), [[k] for k in range(len(cliques))]
    if len(ties) != len(cliques):
        raise InvalidInput(f"ties has {len(ties)} labels for {len(cliques)} cliques")
    labels = list(dict.fromkeys(ties))
    groups = [labels.index(t) for t in ties]
    members = [[k for k, g in enumerate(groups) if g == i] for i in range(len(labels))]
    for m in members:
        shapes = {domain.project(cliques[k]).shape for k in m}
        if len(shapes) > 1:
            raise InvalidInput(f"tied cliques {[cliques[k] for k in m]} have tables of different shapes {sorted(shapes)}")
    return groups, members
