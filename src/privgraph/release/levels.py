"""Rare levels merged from the released one-way tables (MST's domain compression; post-processing).

Survey and census columns have 50 to 100 levels (ages, thermometer scores, countries), and
many of them hold a handful of records: a pair table of two such columns has thousands of
cells, most of them noise. After the tree stage releases the one-way tables
(:mod:`privgraph.release.tree`, step 1), every level whose **noisy** count is below
:data:`RARE_SIGMAS` times that table's noise scale is called rare, and a column's rare
levels are merged into one code, last in its order, when there are at least two of them
and at least one level is kept (McKenna, Miklau, Sheldon 2021, MST's ``compress_domain``;
the same threshold, 3 sigma). Every later table of the release (the selections' scores, the
pair tables, the model) is over the merged codes; a synthetic row's merged code is drawn
back to one of its levels with the noisy one-way proportions of those levels (clipped at 0;
uniform when none is positive).

Privacy: which levels merge is a function of the released one-way tables only, so the map
is post-processing, and so is every table aggregated through it: a record falls in exactly
one merged cell, so a merged table's sensitivity is that of the original table (one record
moves one count: L1 2 under replace-one, 1 under add/remove), and the later releases'
noise is calibrated as before (adaptive composition: the map is fixed before they run).
The merged code's one-way count is the sum of its levels' noisy counts (post-processing; its
noise is larger, ``sqrt(k)`` times, than the model fit assumes for one cell: the one
approximation of the fit, on cells that hold few records by construction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from privgraph.data import Domain
from privgraph.data.domain import Kind
from privgraph.validation import InvalidInput

#: A level is rare when its noisy one-way count is below this many noise scales (MST's 3).
RARE_SIGMAS = 3.0


@dataclass(frozen=True)
class MergedLevels:
    """A map from a domain's level codes to merged codes, and back (public: released facts only).

    ``codes[j][l]`` is the merged code of column j's level l; ``weights[j][l]`` the share of
    level l within its merged code (1 for a level kept alone).
    """

    domain: Domain  # the original
    merged: Domain  # the same columns, the merged sizes
    codes: tuple[np.ndarray, ...]
    weights: tuple[np.ndarray, ...]

    def table(self, counts: np.ndarray, columns: Sequence[str]) -> np.ndarray:
        """A count table over ``columns`` (original codes) summed into the merged codes.

        >>> m = merge_rare_levels(Domain.of(a=4, b=2), [np.array([50.0, 1, 2, 60]), np.array([9.0, 9])], 3.0)
        >>> m.merged.sizes, m.table(np.arange(8).reshape(4, 2), ["a", "b"]).tolist()
        ((3, 2), [[0, 1], [6, 7], [6, 8]])
        """
        out = np.asarray(counts)
        for axis, name in enumerate(columns):
            j = self.domain.index(name)
            if self.merged.sizes[j] == self.domain.sizes[j]:
                continue
            moved = np.moveaxis(out, axis, 0)
            summed = np.zeros((self.merged.sizes[j],) + moved.shape[1:], dtype=moved.dtype)
            np.add.at(summed, self.codes[j], moved)
            out = np.moveaxis(summed, 0, axis)
        return out

    def expand_codes(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Records' merged codes (n x d) as original codes: a kept level as itself, a merged
        code drawn among its levels by :attr:`weights` (post-processing).

        >>> m = merge_rare_levels(Domain.of(a=4), [np.array([50.0, 1, 2, 60])], 3.0)
        >>> m.expand_codes(np.array([[0], [1], [2]]), np.random.default_rng(0))[:2, 0].tolist()
        [0, 3]
        >>> int(m.expand_codes(np.array([[2]]), np.random.default_rng(0))[0, 0]) in (1, 2)
        True
        """
        out = np.array(codes, dtype=np.int64, copy=True)
        for j, (code_of, weight) in enumerate(zip(self.codes, self.weights)):
            if self.merged.sizes[j] == self.domain.sizes[j]:
                continue
            rare = self.merged.sizes[j] - 1
            levels = np.flatnonzero(code_of == rare)
            at = out[:, j] == rare
            kept = _kept(code_of)
            out[~at, j] = kept[out[~at, j]]
            out[at, j] = rng.choice(levels, size=int(at.sum()), p=weight[levels])
        return out

    def expand_table(self, table: np.ndarray, columns: Sequence[str]) -> np.ndarray:
        """A probability table over ``columns`` in merged codes as one in original codes (each
        merged cell split over its levels by :attr:`weights`).

        >>> m = merge_rare_levels(Domain.of(a=4), [np.array([50.0, 1, 3, 60])], 3.0)
        >>> m.expand_table(np.array([0.4, 0.5, 0.1]), ["a"]).round(3).tolist()
        [0.4, 0.025, 0.075, 0.5]
        """
        out = np.asarray(table, dtype=float)
        for axis, name in enumerate(columns):
            j = self.domain.index(name)
            out = np.moveaxis(np.moveaxis(out, axis, 0)[self.codes[j]] *
                              self.weights[j].reshape((-1,) + (1,) * (out.ndim - 1)), 0, axis)
        return out

    def merged_text(self) -> dict:
        """``{column: [levels merged into its last code]}`` for the report and the model file."""
        out = {}
        for j, name in enumerate(self.domain.names):
            if self.merged.sizes[j] != self.domain.sizes[j]:
                rare = self.merged.sizes[j] - 1
                out[name] = [str(self.domain.levels[j][l]) for l in np.flatnonzero(self.codes[j] == rare)]
        return out


def _kept(code_of: np.ndarray) -> np.ndarray:
    """Each merged code's first original level (the level itself for a kept one; every merged
    code is some level's, so ``unique`` lists them all, in order)."""
    return np.unique(code_of, return_index=True)[1]


def merge_rare_levels(domain: Domain, one_way: Sequence[np.ndarray], noise_scale: float,
                      sigmas: float | None = None) -> MergedLevels:
    """The merge map of ``domain`` from its noisy one-way tables (``one_way[j]``: column j's
    noisy counts) and their noise scale (the Gaussian sigma or the Laplace scale): a level is
    rare below ``sigmas * noise_scale``; a column's rare levels merge into one code, last,
    when there are two or more of them and a level is kept. Post-processing of the release.

    >>> m = merge_rare_levels(Domain.of(a=5, b=2), [np.array([40.0, 2, -3, 50, 1]), np.array([1.0, 2])], 3.0)
    >>> m.merged.sizes, m.codes[0].tolist(), m.merged_text()
    ((3, 2), [0, 2, 2, 1, 2], {'a': ['1', '2', '4']})
    >>> m.weights[0].round(3).tolist()  # within the merged code: the noisy counts clipped at 0
    [1.0, 0.667, 0.0, 1.0, 0.333]
    """
    if len(one_way) != len(domain.names):
        raise InvalidInput(f"got {len(one_way)} one-way tables for {len(domain.names)} columns")
    sigmas = RARE_SIGMAS if sigmas is None else sigmas
    codes, weights, sizes, kinds, levels, bins = [], [], [], [], [], []
    for j, table in enumerate(one_way):
        noisy = np.asarray(table, dtype=float).ravel()
        rare = noisy < sigmas * noise_scale
        if rare.sum() < 2 or rare.all():
            codes.append(np.arange(noisy.size))
            weights.append(np.ones(noisy.size))
            sizes.append(domain.sizes[j])
            kinds.append(domain.kinds[j])
            levels.append(domain.levels[j])
            bins.append(domain.bins[j])
            continue
        kept = int((~rare).sum())
        code_of = np.where(rare, kept, np.cumsum(~rare) - 1)
        share = np.clip(noisy, 0, None) * rare
        weight = np.where(rare, share / share.sum() if share.sum() > 0 else rare / rare.sum(), 1.0)
        codes.append(code_of)
        weights.append(weight)
        sizes.append(kept + 1)
        kinds.append(Kind.CATEGORICAL)  # the merged code has no place in an order
        levels.append(tuple(domain.levels[j][l] for l in np.flatnonzero(~rare)) + ("(rare levels)",))
        bins.append(None)  # a binned column's merged code is a level of its own (drawn back to a bin, then a value)
    merged = Domain(domain.names, tuple(sizes), tuple(kinds), tuple(levels), bins=tuple(bins))
    return MergedLevels(domain, merged, tuple(codes), tuple(weights))


def identity_levels(domain: Domain) -> MergedLevels:
    """The map that merges nothing (a release whose structure is not the tree)."""
    return MergedLevels(domain, domain, tuple(np.arange(s) for s in domain.sizes),
                        tuple(np.ones(s) for s in domain.sizes))


class MergedEngine:
    """A count engine over the merged codes of another engine's records: each table counted by
    ``engine`` (or taken from ``counted``, the pair tables in original codes counted already:
    no second pass over the data for a pair or a column) and summed through ``levels`` (a
    fixed map: the tables' sensitivities are the original ones, module docstring)."""

    def __init__(self, engine, levels: MergedLevels, counted: dict | None = None):
        self.engine, self.levels, self.domain = engine, levels, levels.merged
        self.counted = counted or {}

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        return self.levels.table(self._original(tuple(columns), rows), columns)

    def _original(self, columns: tuple, rows) -> np.ndarray:
        if rows is None and not columns and self.counted:  # the number of records, from any pair table
            return np.asarray(next(iter(self.counted.values())).sum())
        if rows is None and len(columns) == 2:
            if columns in self.counted:
                return self.counted[columns]
            if columns[::-1] in self.counted:
                return self.counted[columns[::-1]].T
        if rows is None and len(columns) == 1:
            for (a, b), table in self.counted.items():
                if columns[0] in (a, b):
                    return np.asarray(table).sum(axis=1 if columns[0] == a else 0)
        return self.engine.counts(list(columns), rows)


__all__ = ["RARE_SIGMAS", "MergedEngine", "MergedLevels", "identity_levels", "merge_rare_levels"]
