"""The text's comparison points: naive MLE on noisy tables, non-private MLE, random.

Naive MLE, as stated, fits the noisy tables as if they were exact; its likelihood has no
maximum once the normalised tables leave the marginal polytope (they almost always do:
independent noise makes overlapping tables disagree). privgraph's naive MLE is therefore
defined as: (1) projection of each table onto the simplex by clipping negative counts to
zero and dividing by the table's total (or uniform if nothing is left), then (2) maximum
likelihood with a ridge penalty ``ridge/2 ||theta||^2``, ``ridge = ridge_factor * s / N``
with ``s`` the noise scale (Laplace b or Gaussian sigma) and ``N`` the estimated number of
units: the penalty shrinks towards the uniform model in proportion to the relative noise
of one cell. ``ridge_factor`` was settled on separate seeds
(``benchmarks/bench_mrf.py --calibrate``).

The text's own naive MLE takes the noisy tables as exact counts and runs the same
maximum-likelihood routine as the non-private reference:
``nonprivate_mle(domain, cliques, noisy.tables)`` (clipped, normalised, no ridge, the
reference's iteration cap). Its potentials diverge wherever a clipped cell is zero or the
tables disagree, so its KL depends on that cap; the benchmark reports it as
``naive-mle-text`` beside the regularised estimator above.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from privgraph.mrf.fit import fit_mle
from privgraph.mrf.inference import infer
from privgraph.mrf.model import MarkovRandomField, check_cliques
from privgraph.mrf.noisy_tables import NoisyMarginals
from privgraph.mrf.synthetic import dirichlet_potentials
from privgraph.validation import InvalidInput

#: Default ridge factor of naive MLE (settled on calibration seeds).
RIDGE_FACTOR = 1.0


def naive_mle(noisy: NoisyMarginals, *, ridge_factor: float = RIDGE_FACTOR,
              max_cells: int | None = None) -> MarkovRandomField:
    """MLE on the clipped, normalised noisy tables with a ridge penalty (module docstring);
    ``max_cells``: the exact-inference limit of :func:`~privgraph.mrf.fit.fit_mle`.

    Examples
    --------
    >>> from privgraph.data.domain import Domain
    >>> from privgraph.mrf.noisy_tables import release_tables
    >>> from privgraph.privacy import Neighbours, SeededSampler
    >>> counts = [np.array([[40.0, 10], [10, 40]]), np.array([[45.0, 5], [5, 45]])]
    >>> noisy, _ = release_tables(counts, domain=Domain.of(a=2, b=2, c=2), cliques=["a,b", "b,c"],
    ...     epsilon=1.0, neighbours="add_remove", sampler=SeededSampler(0))
    >>> m = naive_mle(noisy)
    >>> all(np.isfinite(p).all() for p in m.potentials)
    True
    """
    if not ridge_factor >= 0:
        raise InvalidInput(f"ridge_factor must be >= 0, got {ridge_factor!r}")
    noisy.check_full_resolution("naive MLE")
    ridge = ridge_factor * noisy.scale / noisy.records
    return fit_mle(
        noisy.domain, noisy.cliques, [project_to_simplex(t) for t in noisy.tables], ties=noisy.ties, ridge=ridge,
        max_cells=max_cells,
    )


def project_to_simplex(table: np.ndarray) -> np.ndarray:
    """Clip negative cells to zero and normalise (uniform when nothing positive is left).

    >>> project_to_simplex(np.array([3.0, -1.0, 1.0])).tolist()
    [0.75, 0.0, 0.25]
    """
    clipped = np.maximum(np.asarray(table, dtype=np.float64), 0.0)
    total = clipped.sum()
    return clipped / total if total > 0 else np.full(clipped.shape, 1.0 / clipped.size)


def nonprivate_mle(domain, cliques, counts: Sequence[np.ndarray], *, ties=None) -> MarkovRandomField:
    """Plain MLE on exact count tables (the reference; no privacy at all).

    >>> from privgraph.data.domain import Domain
    >>> m = nonprivate_mle(Domain.of(a=2, b=2), ["a,b"], [np.array([[30.0, 10], [10, 50]])])
    >>> from privgraph.mrf.inference import infer
    >>> infer(m).marginals[0].round(3).tolist()
    [[0.3, 0.1], [0.1, 0.5]]"""
    return fit_mle(domain, check_cliques(domain, cliques), [project_to_simplex(c) for c in counts],
                   ties=ties, max_iter=300)


def random_estimator(domain, cliques, *, rng: np.random.Generator) -> MarkovRandomField:
    """The text's random estimator: random (consistent) marginals, then MLE.

    The marginals are those of a model with Dirichlet(1) potentials, so they lie in the
    marginal polytope and the MLE exists.

    >>> from privgraph.data.domain import Domain
    >>> random_estimator(Domain.of(a=2, b=3), ["a,b"], rng=np.random.default_rng(1)).cliques
    (('a', 'b'),)
    """
    cliques = check_cliques(domain, cliques)
    source = MarkovRandomField.of(domain, cliques, dirichlet_potentials(domain, cliques, rng=rng))
    return fit_mle(domain, source.cliques, infer(source).marginals, max_iter=300)
