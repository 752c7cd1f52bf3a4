"""What the tree stage's selections share: a pair's score, its sensitivity and the model's pair tables.

The tree's edges (:mod:`privgraph.release.tree`), its residual pairs
(:mod:`privgraph.release.residuals`) and AIM's adaptive rounds
(:mod:`privgraph.release.adaptive`) each score a pair by the L1 distance between its true
count table and a prediction from earlier releases (:func:`l1_scores`), with the
sensitivity :func:`pair_score_sensitivity`; the predictions (:func:`round_predictions`,
:func:`model_pair_tables`, :func:`proportions`) are post-processing of released tables. They
live here, below all three, so that imports among them go one way (tree imports residuals
and adaptive; both import this module).
"""

from __future__ import annotations

import math

import numpy as np

import privgraph.heartbeat as heartbeat
from privgraph.data.rowsets import grouped_grams
from privgraph.mrf.cgm import cgm_em
from privgraph.mrf.sampling import sample_chunks
from privgraph.privacy import Neighbours
from privgraph.privacy.neighbours import histogram_l1_sensitivity
from privgraph.release.cliques import DEFAULT_TREE_CAP

RO = Neighbours.REPLACE_ONE
#: Rows drawn from a round's model to predict every pair's table (post-processing; public),
#: unless the domain has at most ``_CHUNK`` cells, where the model's joint is used exactly.
PREDICTION_ROWS = 200_000
#: The expected absolute value of a standard normal, ``sqrt(2/pi)``: a Gaussian cell's expected L1 noise per sigma.
ABS_NORMAL = math.sqrt(2 / math.pi)
_CHUNK = 20_000



def pair_score_sensitivity(neighbours: Neighbours) -> float:
    """Sensitivity of one pair's score ``u_ij = ||C_ij - E_ij||_1`` (E fixed: earlier releases).

    Derivation: by the triangle inequality ``|u_ij(D) - u_ij(D')| <= ||C_ij(D) - C_ij(D')||_1``,
    the L1 sensitivity of one histogram: 2 under replace-one (one count moves from one cell
    to another), 1 under add/remove (:func:`~privgraph.privacy.histogram_l1_sensitivity`).
    E, built from the released one-way tables and n, is the same on both sides: under
    replace-one n is public; under add/remove E must not use the true n (it moves with the
    added row, and the bound would be 2), so it uses the released tables' estimate of n.

    >>> pair_score_sensitivity(Neighbours.REPLACE_ONE), pair_score_sensitivity(Neighbours.ADD_REMOVE)
    (2, 1)
    """
    return histogram_l1_sensitivity(neighbours)


def l1_scores(pair_tables, predicted, n_rows: int) -> np.ndarray:
    """``|| C_ij - n P_ij ||_1`` for each true count table and predicted probability table
    (the predictions are post-processing of earlier releases: constants for the mechanism).

    >>> l1_scores([np.array([[5, 0], [0, 5]])], [np.full((2, 2), 0.25)], 10).tolist()
    [10.0]
    """
    return np.array([np.abs(np.asarray(c, dtype=float) - n_rows * p).sum() for c, p in zip(pair_tables, predicted)])


def proportions(noisy: np.ndarray) -> np.ndarray:
    """A noisy table clipped at zero and normalised (uniform when nothing is left).

    >>> proportions(np.array([3.0, -1.0, 1.0])).tolist()
    [0.75, 0.0, 0.25]
    """
    x = np.clip(np.asarray(noisy, dtype=float), 0, None).ravel()
    return x / x.sum() if x.sum() > 0 else np.full(x.size, 1.0 / x.size)


def round_predictions(tables, pairs, rng: np.random.Generator, rows: int = PREDICTION_ROWS, *,
                      tree_cap: int = DEFAULT_TREE_CAP) -> dict:
    """Every pair's probability table under the model CGM-EM fits to ``tables``: exact from
    the model's joint when the domain has at most ``_CHUNK`` cells, else estimated from
    ``rows`` draws of it (post-processing of released tables: the draws are not noise and
    need no privacy; their error, about ``sqrt(p / rows)`` per cell, is far below a released
    cell's noise).

    >>> from privgraph.data import Domain
    >>> from privgraph.mrf.noisy_tables import NoisyMarginals
    >>> d = Domain.of(a=2, b=2, c=2)
    >>> t = NoisyMarginals(d, (("a", "b"), ("b", "c")), (0, 1), (np.array([[4e5, 1e5], [1e5, 4e5]]),
    ...                    np.array([[4.5e5, 5e4], [5e4, 4.5e5]])), "gaussian", 1.0, 1e6)
    >>> p = round_predictions(t, [("a", "c")], np.random.default_rng(0))  # 8 cells: exact
    >>> round(float(p[("a", "c")][0, 0]), 3)
    0.37
    >>> big = Domain.of(**{v: 10 for v in "abcde"})  # 100,000 cells: drawn
    >>> t = NoisyMarginals(big, (("a", "b"),), (0,), (np.eye(10) * 1e5,), "gaussian", 1.0, 1e6)
    >>> p = round_predictions(t, [("a", "b"), ("c", "d")], np.random.default_rng(0), rows=100_000)
    >>> bool(abs(p[("a", "b")][0, 0] - 0.1) < 0.005 and abs(p[("c", "d")][0, 0] - 0.01) < 0.002)
    True
    """
    return model_pair_tables(cgm_em(tables, max_cells=tree_cap), pairs, rng, rows, tree_cap=tree_cap)


def model_pair_tables(model, cliques, rng: np.random.Generator, rows: int = PREDICTION_ROWS, *,
                      tree_cap: int = DEFAULT_TREE_CAP) -> dict:
    """Every clique's probability table (pairs, triples) under ``model``: exact from its joint
    when the domain has at most ``_CHUNK`` cells, else estimated from ``rows`` draws
    (:func:`round_predictions`)."""
    domain = model.domain
    shapes = [tuple(domain.size_of(v) for v in c) for c in cliques]
    columns = [[domain.names.index(v) for v in c] for c in cliques]
    sizes = [domain.size_of(v) for v in domain.names]
    if math.prod(sizes) <= _CHUNK:  # every record of the domain, weighted by the model
        codes = np.indices(sizes).reshape(len(sizes), -1).T
        log_p = model.log_unnormalised(codes)
        chunks = [(codes, np.exp(log_p - log_p.max()))]
    else:  # draws, a chunk at a time (memory of a chunk's codes)
        chunks = ((codes, None) for codes in sample_chunks(model, rows, _CHUNK, rng=rng, max_cells=tree_cap))
    outer = heartbeat.position()
    pairs = [i for i, at in enumerate(columns) if len(at) == 2]  # the draws: every pair's table from one product
    gram = (np.zeros((sum(sizes), sum(sizes))) if pairs and math.prod(sizes) > _CHUNK
            and sum(sizes) ** 2 <= _GRAM_CELLS else None)
    totals = [None if gram is not None and len(at) == 2 else np.zeros(shape) for at, shape in zip(columns, shapes)]
    for k, (codes, weights) in enumerate(chunks, 1):
        heartbeat.at(f"{outer + ': ' if outer else ''}predicting {len(cliques):,} tables, "
                     f"{heartbeat.of(k, -(-rows // _CHUNK) if weights is None else 1, 'chunk')}")
        if gram is not None:
            _add_pair_counts(gram, codes, sizes)
        _add_clique_counts(totals, columns, shapes, codes, weights)
    if gram is not None:
        starts = np.concatenate([[0], np.cumsum(sizes)])
        for i in pairs:
            (a, b), (ka, kb) = columns[i], shapes[i]
            totals[i] = gram[starts[a]:starts[a] + ka, starts[b]:starts[b] + kb]  # a view: divided below
    return {c: t / t.sum() for c, t in zip(cliques, totals)}


def _add_clique_counts(totals, columns, shapes, codes: np.ndarray, weights) -> None:
    """Add each clique's counts of ``codes`` (rows x d, ``weights`` per row or None) to its
    ``totals`` entry (None: counted elsewhere), the cliques taken in the order of their columns
    so that the flat codes of a clique's leading columns (a triple's pair) are computed once for
    every clique that shares them: the rounds' triples cost a third of one
    ``ravel_multi_index`` each.

    >>> t = [np.zeros((2, 2, 2)), np.zeros((2, 2, 3)), None]
    >>> codes = np.array([[0, 1, 1, 2], [1, 1, 0, 0]])
    >>> _add_clique_counts(t, [(0, 1, 2), (0, 1, 3), (0, 1)], [(2, 2, 2), (2, 2, 3), (2, 2)], codes, None)
    >>> int(t[0][0, 1, 1]), int(t[1][0, 1, 2]), int(t[1][1, 1, 0])
    (1, 1, 1)
    """
    column: dict = {}
    lead, flat = None, None
    for i in sorted((i for i, t in enumerate(totals) if t is not None), key=lambda i: columns[i]):
        at, shape = columns[i], shapes[i]
        for j in at:
            if j not in column:
                column[j] = np.ascontiguousarray(codes[:, j])
        if tuple(at[:-1]) != lead:  # the leading columns' flat codes, once for the cliques sharing them
            lead, flat = tuple(at[:-1]), np.zeros(codes.shape[0], dtype=np.int64)
            for j, k in zip(at[:-1], shape[:-1]):
                flat = flat * k + column[j]
        cell = flat * shape[-1] + column[at[-1]]
        totals[i] += np.bincount(cell, weights, totals[i].size).reshape(shape)


#: The most cells (the domain's levels squared) of the matrix of every pair's counts
#: (:func:`_add_pair_counts`): 64 MB, 2,896 levels in all (1,000 binary columns are 2,000); a
#: wider domain (a column of thousands of levels) counts pair by pair, as before.
_GRAM_CELLS = 1 << 23


def _add_pair_counts(gram: np.ndarray, codes: np.ndarray, sizes) -> None:
    """Add every pair of columns' counts of ``codes`` (rows x d) to ``gram``, the levels x
    levels matrix whose block (a, b) is the table of columns a and b: one product of one-hot
    matrices (:func:`~privgraph.data.rowsets.grouped_grams`, exact) instead of one count per
    pair (a 1,000-column table has 499,500 pairs).

    >>> g = np.zeros((5, 5))
    >>> _add_pair_counts(g, np.array([[0, 2], [1, 2], [1, 0]]), [2, 3])
    >>> g[:2, 2:].tolist()  # column 0 against column 1
    [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
    """
    gram += grouped_grams(codes, None, np.zeros(codes.shape[0], dtype=np.int64), 1, range(len(sizes)), sizes)[0]


__all__ = ["ABS_NORMAL", "PREDICTION_ROWS", "RO", "l1_scores", "model_pair_tables", "pair_score_sensitivity",
           "proportions", "round_predictions"]
