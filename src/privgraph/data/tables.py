"""The table object: counts over a dataset's columns, one joint table when it fits, marginals from it.

The one place that counts a batch of tables once and serves them as marginals, with one
bounded cache: PC's tests (:mod:`privgraph.causal`), the MRF's clique tables
(:func:`privgraph.data.count_tables`) and every secret sub-sample go through it.

Every test of a PC run reads a table over ``(x, y, *S)``. When the joint table over all
variables is small enough (:data:`MAX_JOINT_CELLS`), it is counted once and every table
is a marginal of it, so a run's cost grows with the number of tables, not rows times
tests. Otherwise (wide tables):

* **all pairs at once** (level 0): with an in-memory engine, the d (d - 1) / 2 two-way
  tables are one product of one-hot code matrices, counted in chunks of rows
  (:data:`PAIR_CHUNK_ROWS`), ``sum(sizes)^2`` cells in all;
* **covers** (levels >= 1): before testing the edges of x, stable PC asks for the table
  over x and its adjacencies (:meth:`Tables.cover`); every test ``(x, y, S)`` of x is a
  marginal of it. A cover is counted only if it has at most :data:`MAX_COVER_CELLS` cells
  and at most as many cells as rows (else marginalising costs more than counting);
* otherwise the engine counts the table.

**Memory budget**, whatever the number of tests: the joint table (at most
:data:`MAX_JOINT_CELLS`), the pair tables, covers of at most :data:`COVER_BUDGET_CELLS`
cells in all (least recently used first out) and a least-recently-used cache of at most
:data:`CACHE_BUDGET_CELLS` cells of tables: int64, so 32 + 64 + 8 MB at most, plus the
engine's own data.

Secret sub-samples (exactly m of n rows, the replace-one design) are drawn from the
privacy core's sampler: a multivariate hypergeometric draw from the joint table, or a
row selection when there is no joint table. Disjoint blocks (subsample-and-aggregate) are
successive draws without replacement, i.e. a uniformly random partition.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Sequence

import numpy as np

from privgraph.data.engines.base import JOINT_TABLE_CELLS, CountEngine, marginal
from privgraph.data.engines.numpy_engine import bincount_codes
from privgraph.data.sampling import rows_without_replacement, table_without_replacement
from privgraph.privacy import NoiseSampler
from privgraph.threads import single_threaded_blas

#: Largest joint table (cells) counted once and kept in memory.
MAX_JOINT_CELLS = JOINT_TABLE_CELLS  # the package's one limit (privgraph.data.engines.base)
#: Largest cover (cells) of one variable and its adjacencies.
MAX_COVER_CELLS = 1 << 20
#: All covers kept at once (cells): least recently used evicted first.
COVER_BUDGET_CELLS = 1 << 23
#: Tables kept by the per-table cache (cells): least recently used evicted first.
CACHE_BUDGET_CELLS = 1 << 20
#: Most distinct rows fetched from an out-of-core engine (one grouped query) and kept.
MAX_DISTINCT_ROWS = 1 << 21
#: Rows per chunk of the one-hot product that counts all pair tables.
PAIR_CHUNK_ROWS = 1 << 16


class Tables:
    """Count tables over the columns of one dataset, or of a secret sub-sample of it.

    Examples
    --------
    >>> from privgraph.data import Domain, NumpyEngine
    >>> e = NumpyEngine(Domain.of(a=2, b=2, c=3), np.array([[0, 1, 2], [1, 1, 0], [0, 0, 2]]))
    >>> t = Tables.from_engine(e)
    >>> t.n, t.table(["b", "a"]).tolist()
    (3, [[1, 0], [1, 1]])
    >>> from privgraph.privacy import SeededSampler
    >>> t.subsample(2, SeededSampler(0)).n
    2
    """

    def __init__(self, engine: CountEngine, n: int, joint: np.ndarray | None, rows: np.ndarray | None = None):
        self.engine, self.domain, self.n = engine, engine.domain, int(n)
        self._joint, self._rows = joint, rows
        self._cache = _LRU(CACHE_BUDGET_CELLS)
        self._covers = _LRU(COVER_BUDGET_CELLS)  # by first column: (columns, table)
        self._pairs: dict | None = None
        self._distinct = None  # (distinct rows, their counts), or False: see _count
        self._prefix = None  # (columns, cell index of the distinct rows over them): the last one

    def _count(self, key: tuple) -> np.ndarray:
        """The table over ``key`` from the engine, or from the distinct rows with their
        multiplicities when an in-memory dataset has at most half as many distinct rows as
        rows (found once, by one sort of the rows as byte strings)."""
        if self._distinct is None:
            self._distinct = distinct_rows(getattr(self.engine, "codes", None) if self._rows is None else None)
        if not self._distinct:
            codes = getattr(self.engine, "codes", None)
            if codes is None or not key:
                return np.asarray(self.engine.counts(key, self._rows), dtype=np.int64)
            cols = [codes[:, self.domain.index(c)] for c in key]  # in memory: skip the engine's checks
            return bincount_codes(cols if self._rows is None else [c[self._rows] for c in cols], self.shape(key))
        rows, weights = self._distinct
        shape = self.shape(key)
        idx = self._prefix_index(rows, key[:2])  # a level's tests of one edge share (x, y)
        for c, size in zip(key[2:], shape[2:]):
            idx = idx * size
            idx += rows[:, self.domain.index(c)]
        return np.rint(np.bincount(idx, weights=weights, minlength=int(np.prod(shape)))).astype(np.int64).reshape(shape)

    def _prefix_index(self, rows: np.ndarray, head: tuple) -> np.ndarray:
        """Mixed-radix cell index of the distinct rows over ``head`` (the last one is kept)."""
        if self._prefix is not None and self._prefix[0] == head:
            return self._prefix[1]
        idx = np.zeros(rows.shape[0], dtype=np.int64)
        for c in head:
            idx *= self.domain.size_of(c)
            idx += rows[:, self.domain.index(c)]
        self._prefix = (head, idx)
        return idx

    @classmethod
    def from_engine(cls, engine: CountEngine, *, max_cells: int = MAX_JOINT_CELLS) -> "Tables":
        """Tables of the whole dataset behind ``engine`` (the joint table counted if it fits)."""
        names = engine.domain.names
        if engine.domain.cells(names) <= max_cells:
            joint = np.asarray(engine.counts(names), dtype=np.int64)
            return cls(engine, int(joint.sum()), joint)
        fetch = getattr(engine, "distinct_rows", None)  # an out-of-core engine's one query
        found = fetch(MAX_DISTINCT_ROWS) if fetch is not None else None
        if found is None:
            return cls(engine, int(engine.counts([])), None)
        tables = cls(engine, int(found[1].sum()), None)
        tables._distinct = (found[0], found[1].astype(np.float64))
        return tables

    @property
    def names(self) -> tuple[str, ...]:
        return self.domain.names

    def shape(self, columns: Sequence[str]) -> tuple[int, ...]:
        """Shape of the table over ``columns`` (public: from the domain)."""
        return tuple(self.domain.size_of(c) for c in columns)

    def table(self, columns: Sequence[str]) -> np.ndarray:
        """Counts over ``columns``, in that order (from the joint table, the pairs, a cover,
        the cache, or counted)."""
        key = tuple(columns)
        if self._joint is not None:
            return marginal(self._joint, self.names, key)
        if len(key) == 2 and self._pairs is not None:
            return self._pairs[key] if key in self._pairs else self._pairs[key[::-1]].T
        cover = self._covers.get(key[0]) if key else None
        if cover is not None and set(key) <= set(cover[0]):
            return marginal(cover[1], cover[0], key)
        out = self._cache.get(key)
        if out is None:
            out = self._count(key)
            self._cache.put(key, out, out.size)
        return out

    def cover(self, columns: Sequence[str]) -> bool:
        """Count the table over ``columns`` once, so that tables over subsets that start with
        ``columns[0]`` are its marginals. False (nothing counted) if it is too big."""
        key = tuple(columns)
        if self._joint is not None or not key:
            return False
        held = self._covers.get(key[0])
        if held is not None and held[0] == key:
            return True
        cells = self.domain.cells(key)
        if cells > min(MAX_COVER_CELLS, max(self.n, 1)):
            return False
        table = self._count(key)
        self._covers.put(key[0], (key, table), cells)
        return True

    def count_pairs(self) -> bool:
        """Count every two-way table in one pass (in memory, or from the distinct rows of an
        out-of-core engine); False if not available."""
        codes = getattr(self.engine, "codes", None)
        if self._joint is not None or self._pairs is not None:
            return self._pairs is not None
        if self._distinct:
            self._pairs = pair_tables(self._distinct[0], self.names, self.domain.sizes, self._distinct[1])
        elif codes is not None:
            self._pairs = pair_tables(codes if self._rows is None else codes[self._rows], self.names,
                                      self.domain.sizes)
        return self._pairs is not None

    def subsample(self, m: int, sampler: NoiseSampler) -> "Tables":
        """Tables of exactly ``m`` rows drawn without replacement, secretly, by ``sampler``."""
        if self._joint is not None:
            return Tables(self.engine, m, table_without_replacement(self._joint, m, sampler=sampler))
        picked = rows_without_replacement(self.n, m, sampler=sampler)
        rows = picked if self._rows is None else self._rows[picked]
        return Tables(self.engine, m, None, np.sort(rows))

    def blocks(self, count: int, sampler: NoiseSampler) -> "Blocks":
        """A secret uniform partition into ``count`` disjoint blocks of ``n // count`` rows."""
        size = self.n // count
        if self._joint is None:
            perm = sampler.permutation(self.n)
            base = np.arange(self.n) if self._rows is None else self._rows
            parts = [Tables(self.engine, size, None, np.sort(base[perm[i * size:(i + 1) * size]]))
                     for i in range(count)]
            return Blocks(parts)
        rest, parts = self._joint.copy(), []
        for _ in range(count):
            block = table_without_replacement(rest, size, sampler=sampler)
            rest -= block
            parts.append(Tables(self.engine, size, block))
        return Blocks(parts)


class _LRU:
    """A least-recently-used map whose entries' sizes sum to at most ``budget``."""

    def __init__(self, budget: int):
        self.budget, self.size, self._items = budget, 0, OrderedDict()

    def get(self, key):
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key, value, size: int) -> None:
        if key in self._items:
            self.size -= self._items.pop(key)[1]
        if size > self.budget:
            return
        self._items[key] = (value, size)
        self.size += size
        while self.size > self.budget:
            self.size -= self._items.popitem(last=False)[1][1]


def distinct_rows(codes: np.ndarray | None):
    """``(distinct rows, float64 counts)`` of integer codes if there are at most half as many
    distinct rows as rows, else False.

    >>> r, w = distinct_rows(np.array([[0, 1], [0, 1], [1, 0], [0, 1]], dtype=np.uint8))
    >>> r.tolist(), w.tolist()
    ([[0, 1], [1, 0]], [3.0, 1.0])
    """
    if codes is None or codes.shape[0] < 2 or codes.shape[1] == 0:
        return False
    rows = np.ascontiguousarray(codes)
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    if 2 * len(first) > rows.shape[0]:
        return False
    return np.asfortranarray(rows[first]), counts.astype(np.float64)


def pair_tables(codes: np.ndarray, names: Sequence[str], sizes: Sequence[int],
                weights: np.ndarray | None = None) -> dict:
    """Every two-way table ``{(a, b): counts}`` (a before b in ``names``) of integer codes.

    One-hot matrices of chunks of rows, multiplied: ``O^T O`` holds every pair's counts
    (exact: float32 sums of at most :data:`PAIR_CHUNK_ROWS` ones per chunk, added in int64;
    with row ``weights``, ``O^T (w O)`` in float64, exact below 2^53).

    >>> c = np.array([[0, 1, 2], [1, 1, 0], [0, 0, 2]])
    >>> pair_tables(c, ["a", "b", "c"], [2, 2, 3])[("a", "c")].tolist()
    [[0, 0, 2], [1, 0, 0]]
    """
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    width = int(offsets[-1])
    gram = np.zeros((width, width), dtype=np.int64)
    with single_threaded_blas():  # a BLAS thread pool on a busy machine costs 10-70x the CPU
        for start in range(0, codes.shape[0], PAIR_CHUNK_ROWS):
            chunk = codes[start:start + PAIR_CHUNK_ROWS]
            onehot = np.zeros((chunk.shape[0], width), dtype=np.float32 if weights is None else np.float64)
            rows = np.arange(chunk.shape[0])
            for j in range(len(names)):
                onehot[rows, offsets[j] + chunk[:, j]] = 1.0
            scaled = onehot if weights is None else onehot * weights[start:start + PAIR_CHUNK_ROWS, None]
            gram += np.rint(scaled.T @ onehot).astype(np.int64)
    return {(a, b): gram[offsets[i]:offsets[i + 1], offsets[j]:offsets[j + 1]].copy()
            for i, a in enumerate(names) for j, b in enumerate(names) if i < j}


class Blocks:
    """Disjoint blocks of one dataset; ``table(columns)`` stacks the blocks' tables."""

    def __init__(self, parts: list[Tables]):
        self.parts = parts
        self.count = len(parts)
        self.n = sum(p.n for p in parts)

    def table(self, columns: Sequence[str]) -> np.ndarray:
        return np.stack([p.table(columns) for p in self.parts])
