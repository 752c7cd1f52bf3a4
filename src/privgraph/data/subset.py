"""The data restricted to a secret subset of exactly m rows (padded when there are fewer):
the data side of the add/remove reduction.

:mod:`privgraph.privacy.resize` runs a replace-one mechanism under add/remove neighbours on
the data resized to a released public size m: a uniform m-subset of the rows drawn without
replacement when there are at least m, otherwise every row and ``m - n`` copies of the
public *pad row* (every column at its first level, code 0). :func:`resize_engine` returns a
count engine over the resized rows, whatever the engine it is given:

* in memory (an engine with ``codes``): the selected rows' codes (a NumpyEngine);
* a joint table that fits (:data:`~privgraph.data.engines.base.JOINT_TABLE_CELLS`), or an
  out-of-core engine's distinct rows: the distinct rows with multiplicities, resized by one
  multivariate hypergeometric draw (the counts of a uniform m-subset, exactly;
  :class:`WeightedRows`);
* otherwise: a row selection the engine counts (:class:`SelectedRows`).

The draw comes from the mechanism's sampler (secure by default). Whether the data is
padded depends on n, which is private: that branch changes which rows are counted, never
what is output or raised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.data.engines.base import check_columns, check_rows, row_indices
from privgraph.data.engines.numpy_engine import NumpyEngine
from privgraph.data.sampling import rows_without_replacement, table_without_replacement
from privgraph.data.tables import Tables
from privgraph.privacy import NoiseSampler


def resize_engine(engine, m: int, sampler: NoiseSampler):
    """A count engine over exactly ``m`` rows of ``engine`` (see the module docstring).

    >>> from privgraph.privacy import SeededSampler
    >>> e = NumpyEngine(Domain.of(a=2, b=3), np.array([[1, 2]] * 5))
    >>> int(resize_engine(e, 3, SeededSampler(0)).counts([]))
    3
    >>> resize_engine(e, 7, SeededSampler(0)).counts(["a"]).tolist()  # two pad rows at level 0
    [2, 5]
    """
    n = int(engine.counts([]))
    codes = getattr(engine, "codes", None)
    if codes is not None:
        if m <= n:
            return NumpyEngine(engine.domain, codes[rows_without_replacement(n, m, sampler=sampler)])
        return NumpyEngine(engine.domain, np.vstack([codes, np.zeros((m - n, codes.shape[1]), dtype=codes.dtype)]))
    whole = Tables.from_engine(engine).whole_rows()  # the joint's cells, or the distinct rows
    if whole is not None:
        rows, weights = whole[1], np.rint(whole[2]).astype(np.int64)
        if m <= n:
            return WeightedRows(engine.domain, rows, table_without_replacement(weights, m, sampler=sampler))
        return WeightedRows(engine.domain, np.vstack([rows, np.zeros((1, rows.shape[1]), dtype=rows.dtype)]),
                            np.append(weights, m - n))
    keep = rows_without_replacement(n, m, sampler=sampler) if m <= n else None
    return SelectedRows(engine, n, keep, max(0, m - n))


@dataclass(frozen=True, eq=False)
class WeightedRows:
    """Distinct rows (codes, one column per name of ``domain``) with integer multiplicities.

    Row ``i`` of the dataset is a copy of distinct row ``j`` for
    ``cumsum(weights)[j-1] <= i < cumsum(weights)[j]``, so a row selection means the same as
    on the expanded rows.

    >>> w = WeightedRows(Domain.of(a=2, b=2), np.array([[0, 1], [1, 1]]), np.array([2, 3]))
    >>> w.counts(["a"]).tolist(), w.counts(["b"], rows=np.array([0, 4])).tolist(), int(w.counts([]))
    ([2, 3], [0, 2], 5)
    """

    domain: Domain
    rows: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        columns = check_columns(self.domain, columns)
        weights = self.weights
        if rows is not None:
            picked = row_indices(check_rows(rows, int(self.weights.sum())))
            owner = np.searchsorted(np.cumsum(self.weights), picked, side="right")
            weights = np.bincount(owner, minlength=self.weights.size)
        if not columns:
            return np.array(int(weights.sum()), dtype=np.int64)
        shape = self.domain.project(columns).shape
        idx = np.ravel_multi_index(tuple(self.rows[:, self.domain.index(c)].astype(np.int64) for c in columns), shape)
        return np.bincount(idx, weights=weights, minlength=int(np.prod(shape))).round().astype(np.int64).reshape(shape)

    def distinct_rows(self, max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The rows with nonzero weight and their weights (None above ``max_rows``)."""
        kept = self.weights > 0
        if int(kept.sum()) > max_rows:
            return None
        return np.asfortranarray(self.rows[kept]), self.weights[kept].astype(np.int64)


@dataclass(frozen=True, eq=False)
class SelectedRows:
    """Rows ``keep`` of ``engine`` (None: all ``n``), then ``pad`` copies of the pad row.

    >>> e = NumpyEngine(Domain.of(a=2), np.array([[1], [1], [0]]))
    >>> s = SelectedRows(e, 3, None, 2)
    >>> s.counts(["a"]).tolist(), s.counts(["a"], rows=np.array([1, 4])).tolist()
    ([3, 2], [1, 1])
    """

    engine: object
    n: int
    keep: np.ndarray | None = field(repr=False)
    pad: int = 0

    @property
    def domain(self) -> Domain:
        return self.engine.domain

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        kept = self.n if self.keep is None else self.keep.size
        if rows is None:
            inner, pads = self.keep, self.pad
        else:
            picked = row_indices(check_rows(rows, kept + self.pad))
            real = picked[picked < kept]
            inner, pads = (real if self.keep is None else self.keep[real]), int((picked >= kept).sum())
        table = np.array(self.engine.counts(columns, inner), dtype=np.int64)
        if pads:
            table[(0,) * table.ndim] += pads  # the pad row: every column at code 0
        return table


__all__ = ["SelectedRows", "WeightedRows", "resize_engine"]
