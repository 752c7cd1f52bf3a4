"""Individuals with many records: per-individual normalised tables and tied chain models.

When one individual contributes many records (the text's mobility study: one
(user, day) gives 24 hourly segments), record-level tables have sensitivity equal to the
number of records an individual may hold. Following the text (after He et al. 2015), each
individual's contribution to every table is normalised: within a group of cliques sharing
one table, each of the individual's *non-null* occurrences (record x clique with at least
one non-null value; null-null transitions are dropped) gets weight ``1/K``, ``K`` that
individual's number of non-null occurrences. Each individual then adds total weight at
most one to each table, so adding or removing an individual moves each table by at most
1 in L1: the sensitivity stays the number of tables, and the privacy unit is the
individual. The trade-off (the text's): individuals with few transitions weigh more.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.validation import InvalidInput


def time_homogeneous_chain(columns: Sequence[str]) -> tuple[tuple[tuple[str, ...], ...], tuple[int, ...]]:
    """Cliques and ties of a time-homogeneous chain over ``columns`` (time order).

    One pair potential shared by every edge ``(x_t, x_t+1)`` (group 0) plus a node
    potential on the first column (group 1), so the model can be time-stationary.

    >>> time_homogeneous_chain(["h0", "h1", "h2"])
    ((('h0', 'h1'), ('h1', 'h2'), ('h0',)), (0, 0, 1))
    """
    columns = list(columns)
    if len(columns) < 2:
        raise InvalidInput(f"a chain needs at least two columns, got {columns}")
    edges = tuple((a, b) for a, b in zip(columns[:-1], columns[1:]))
    return edges + ((columns[0],),), (0,) * len(edges) + (1,)


def individual_tables(
    codes: np.ndarray,
    individuals: np.ndarray,
    *,
    domain: Domain,
    cliques: Sequence[tuple[str, ...]],
    ties: Sequence[int] | None = None,
    null: int | None = None,
) -> list[np.ndarray]:
    """Per-group tables with each individual's contribution normalised to total weight 1.

    ``codes`` are integer-coded records (columns in domain order), ``individuals`` the
    individual of each record; ``null`` the code meaning "not observed" (same in every
    column), or None when nothing is null.

    Examples
    --------
    >>> d = Domain.of(h0=3, h1=3, h2=3)
    >>> cl, ties = time_homogeneous_chain(d.names)
    >>> x = np.array([[1, 2, 0], [0, 0, 0], [1, 1, 1]])
    >>> pair, node = individual_tables(x, np.array(["u", "u", "v"]), domain=d, cliques=cl, ties=ties, null=0)
    >>> [float(v) for v in (pair.sum(), pair[1, 2], pair[2, 0], pair[1, 1], node.sum())]
    [2.0, 0.5, 0.5, 1.0, 2.0]
    """
    codes = np.asarray(codes)
    ids = np.unique(np.asarray(individuals), return_inverse=True)[1].ravel()
    if len(ids) != codes.shape[0]:
        raise InvalidInput(f"got {len(ids)} individual ids for {codes.shape[0]} records")
    ties = list(range(len(cliques))) if ties is None else list(ties)
    out = []
    for g in sorted(set(ties)):
        members = [c for c, t in zip(cliques, ties) if t == g]
        shape = domain.project(members[0]).shape
        cells, owner, observed = [], [], []
        for c in members:
            cols = [codes[:, domain.index(n)] for n in c]
            cells.append(np.ravel_multi_index(cols, shape))
            owner.append(ids)
            observed.append(np.ones(len(ids), bool) if null is None else np.any(np.stack(cols) != null, axis=0))
        cells, owner, observed = map(np.concatenate, (cells, owner, observed))
        k = np.bincount(owner[observed], minlength=ids.max() + 1 if ids.size else 0)
        weights = 1.0 / k[owner[observed]]
        out.append(np.bincount(cells[observed], weights=weights, minlength=int(np.prod(shape))).reshape(shape))
    return out
