"""The table object: counts over a dataset's columns, one joint table when it fits, marginals from it.

The one place that counts a batch of tables once and serves them as marginals, with one
bounded cache: PC's tests (:mod:`privgraph.causal`), the MRF's clique tables
(:func:`privgraph.data.count_tables`) and every secret sub-sample go through it. PC's own
counting (covers, batches of strata, verdicts by set) lives with PC
(:mod:`privgraph.causal.pc_counting`); a Tables holds its row sets (``row_sets``) and counts
from them.

Every test of a PC run reads a table over ``(x, y, *S)``. When the joint table over all
variables is small enough (:data:`MAX_JOINT_CELLS`), it is counted once and every table
is a marginal of it, so a run's cost grows with the number of tables, not rows times
tests. Otherwise (wide tables):

* **all pairs at once** (level 0): with an in-memory engine, the d (d - 1) / 2 two-way
  tables are one product of one-hot code matrices, counted in chunks of rows
  (:data:`privgraph.data.rowsets.PAIR_CHUNK_ROWS`), ``sum(sizes)^2`` cells in all;
* **row sets** (PC's covers, levels >= 1): before testing the edges of x, stable PC names x
  and its adjacencies (:func:`privgraph.causal.pc_counting.cover`); the tests of x count from
  a *row set* holding them (distinct rows with multiplicities, :mod:`privgraph.data.rowsets`):
  levels 1 and 2 as blocks of grams given x, later levels set by set or in batches of many
  sets per pass (:mod:`privgraph.causal.pc_counting`), and :meth:`Tables.table` from the row
  set that holds its columns (``row_sets.holding(columns)``);
* otherwise the engine counts the table.

**Memory budget**, whatever the number of tests: the joint table (at most
:data:`MAX_JOINT_CELLS`, 32 MB), the pair tables, a least-recently-used cache of at most
:data:`CACHE_BUDGET_CELLS` cells of tables (8 MB), the covers' rows and grams (64 + 32 MB,
:mod:`privgraph.causal.pc_counting`) and one batch's temporaries (a few int64 arrays of
max(2^20, rows of the cover) elements, a dense index of at most 2^22 cells), and for the
verdicts by set at most 2^16 sets' verdicts (a bool per cover column each), the stratum
ids of one set's prefixes and one cover's columns as int64 (32 MB each) and 2 MB of strata
being decided: about 300 MB at most, plus the engine's own data and its distinct rows.

Secret sub-samples (exactly m of n rows, the replace-one design) are drawn from the
privacy core's sampler: a multivariate hypergeometric draw from the joint table or from an
out-of-core engine's distinct rows, else a row selection drawn chunk by chunk
(:func:`~privgraph.data.sampling.rows_without_replacement_chunks`), which an out-of-core
engine holds itself (``engine.hold``: Python's memory does not grow with the rows). Disjoint
blocks (subsample-and-aggregate) are successive draws without replacement, i.e. a uniformly
random partition; of an out-of-core engine's distinct rows they are one
:class:`DistinctBlocks` (the rows once, 8 bytes a block and row), of its rows one
:class:`HeldBlocks` (each row's block held by the engine,
:func:`~privgraph.data.sampling.block_label_chunks`). A Tables holds no reference cycle, so a
round's sub-sample is freed as soon as the next replaces it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.data.engines.base import JOINT_TABLE_CELLS, CountEngine, check_columns, marginal
from privgraph.data.engines.numpy_engine import bincount_codes
from privgraph.data.lru import LRU
from privgraph.data.rowsets import cell_ids, count_rows, distinct_rows, pair_tables
from privgraph.data.sampling import block_label_chunks, rows_without_replacement_chunks, table_without_replacement
from privgraph.privacy import NoiseSampler

#: Largest joint table (cells) counted once and kept in memory.
MAX_JOINT_CELLS = JOINT_TABLE_CELLS  # the package's one limit (privgraph.data.engines.base)
#: Tables kept by the per-table cache (cells): least recently used evicted first.
CACHE_BUDGET_CELLS = 1 << 20
#: Most tables counted by one grouped query of an out-of-core engine (:meth:`Tables.tables`).
SETS_PER_QUERY = 512
#: Bytes of distinct rows (codes, counts and float weights) fetched from an out-of-core
#: engine in one grouped query and kept: 512 MB, some 1e7 rows of alarm's 37 columns.
DISTINCT_ROWS_BYTES = 1 << 29


def count_tables(
    engine: CountEngine,
    column_sets: Sequence[Sequence[str]],
    rows: np.ndarray | None = None,
    *,
    max_cells: int = JOINT_TABLE_CELLS,
) -> list[np.ndarray]:
    """Tables over each of ``column_sets``, through :class:`~privgraph.data.tables.Tables`:
    the joint table counted once when it has at most ``max_cells`` cells, every other table
    counted once (from the distinct rows where that is cheaper) in one bounded cache.
    With a row selection each table is counted on those rows. Fresh arrays are returned.

    Examples
    --------
    >>> from privgraph.data.engines.numpy_engine import NumpyEngine
    >>> e = NumpyEngine(Domain.of(a=2, b=2, c=2), np.array([[0, 1, 1], [1, 1, 0]]))
    >>> [t.tolist() for t in count_tables(e, [["a"], ["c", "b"]])]
    [[1, 1], [[0, 1], [0, 1]]]
    """
    sets = [check_columns(engine.domain, s) for s in column_sets]
    if rows is not None:
        return [np.asarray(engine.counts(s, rows), dtype=np.int64) for s in sets]
    tables = Tables.from_engine(engine, max_cells=max_cells)
    return [np.array(t, dtype=np.int64, copy=True) for t in tables.tables(sets)]


def max_distinct_rows(domain: Domain) -> int:
    """Most distinct rows of ``domain`` kept within :data:`DISTINCT_ROWS_BYTES` (a row: its
    codes, an int64 count and a float64 weight).

    >>> from privgraph.data import Domain
    >>> max_distinct_rows(Domain.of(**{f"v{i}": 4 for i in range(37)}))
    10129639
    """
    return DISTINCT_ROWS_BYTES // (len(domain.names) * domain.code_dtype.itemsize + 16)


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
        self._cache = LRU(CACHE_BUDGET_CELLS)
        #: Row sets that hold some columns (``holding(columns)``: ``(names, rows, weights)`` or
        #: None), set by an algorithm that narrows the data: PC's covers
        #: (:func:`privgraph.causal.pc_counting.covers_of`). None: none yet.
        self.row_sets = None
        self._whole = None  # the whole data as a row set (names, rows, weights), once
        self._pairs: dict | None = None
        self._distinct = None  # (distinct rows, their counts), or False: see _count
        self._prefix = None  # (columns, cell index of the distinct rows over them): the last one

    def _count(self, key: tuple) -> np.ndarray:
        """The table over ``key`` from the engine, or from the distinct rows with their
        multiplicities when an in-memory dataset has at most half as many distinct rows as
        rows (found once: :func:`~privgraph.data.rowsets.distinct_rows`)."""
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
        found = fetch(max_distinct_rows(engine.domain)) if fetch is not None else None
        if found is None:
            return cls(engine, int(engine.counts([])), None)
        order = np.lexsort(found[0].T[::-1])  # one order whatever the engine's: a seeded draw from them agrees
        tables = cls(engine, int(found[1].sum()), None)
        tables._distinct = (np.asfortranarray(found[0][order]), found[1][order].astype(np.float64))
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
        held = self.row_sets.holding(key) if key and self.row_sets is not None else None
        if held is not None:
            return count_rows(held[1], held[2], [held[0].index(c) for c in key], self.shape(key))
        out = self._cache.get(key)
        if out is None:
            out = self._count(key)
            self._cache.put(key, out, out.size)
        return out

    def tables(self, column_sets: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """:meth:`table` of each of ``column_sets``. An out-of-core engine whose rows are not
        in memory (more distinct rows than it fetches) counts the tables it has not cached in
        grouped queries of up to :data:`SETS_PER_QUERY` tables (``engine.counts_many``:
        ``GROUPING SETS``), a scan for many tables instead of one a table; otherwise each is
        :meth:`table`'s."""
        keys = [tuple(s) for s in column_sets]
        batch = (self._joint is None and self._rows is None and not self._has_fetched_rows
                 and getattr(self.engine, "codes", None) is None and hasattr(self.engine, "counts_many"))
        if not batch:
            return [self.table(k) for k in keys]
        canonical = {frozenset(k): tuple(c for c in self.names if c in k) for k in keys}  # one order per set
        found = {u: self._cache.get(o) for u, o in canonical.items()}
        todo = [o for u, o in canonical.items() if found[u] is None]
        for start in range(0, len(todo), SETS_PER_QUERY):
            part = todo[start:start + SETS_PER_QUERY]
            for key, out in zip(part, self.engine.counts_many(part)):
                found[frozenset(key)] = out
                self._cache.put(key, out, out.size)
        return [np.transpose(found[frozenset(k)], [canonical[frozenset(k)].index(c) for c in k]) for k in keys]

    @property
    def joint_cells(self) -> int | None:
        """Cells of the joint table held (counted once when it fits), or None."""
        return None if self._joint is None else int(self._joint.size)

    def whole_rows(self) -> tuple | None:
        """The whole data as a row set ``(names, rows, weights)``: the joint table's nonzero
        cells, the distinct rows, or the rows themselves (weights None); None for an
        out-of-core engine that gave no distinct rows."""
        if self._whole is None:
            self._whole = self._find_whole_rows()
        return self._whole or None

    def _find_whole_rows(self):
        if self._joint is not None:
            cells = np.flatnonzero(self._joint)
            rows = np.stack(np.unravel_index(cells, self._joint.shape), axis=1).astype(self.domain.code_dtype)
            return self.names, np.asfortranarray(rows), self._joint.ravel()[cells].astype(np.float64)
        if self._distinct is None:
            self._distinct = distinct_rows(getattr(self.engine, "codes", None) if self._rows is None else None)
        if self._distinct:
            return self.names, self._distinct[0], self._distinct[1]
        codes = getattr(self.engine, "codes", None)
        if codes is None:
            return False
        return self.names, codes if self._rows is None else np.asfortranarray(codes[self._rows]), None

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
        """Tables of exactly ``m`` rows drawn without replacement, secretly, by ``sampler``:
        a multivariate hypergeometric draw from the joint table or from the distinct rows an
        out-of-core engine gave (their counts thinned; no row is read again, so no job on a
        cluster), else a row selection."""
        if self._joint is not None:
            return Tables(self.engine, m, table_without_replacement(self._joint, m, sampler=sampler))
        if self._has_fetched_rows:
            return self._of_distinct(m, table_without_replacement(self._distinct_counts(), m, sampler=sampler))
        picked = rows_without_replacement_chunks(self.n, m, sampler=sampler)
        if self._holds_rows:  # the selection streamed into the engine, never held here
            return Tables(self.engine, m, None, self.engine.hold(((p, None) for p in picked), within=self._rows))
        picked = np.concatenate(list(picked) or [np.zeros(0, dtype=np.int64)])
        return Tables(self.engine, m, None, picked if self._rows is None else self._rows[picked])

    def blocks(self, count: int, sampler: NoiseSampler) -> "Blocks":
        """A secret uniform partition into ``count`` disjoint blocks of ``n // count`` rows."""
        size = self.n // count
        if self._has_fetched_rows:  # successive draws from the rest: a uniform partition
            rest, parts = self._distinct_counts(), []
            for _ in range(count):
                block = table_without_replacement(rest, size, sampler=sampler)
                rest -= block
                parts.append(_held(block))
            return DistinctBlocks(self.domain, self._distinct[0], parts)
        if self._joint is not None and count * self._joint.size > MAX_JOINT_CELLS:
            return self._joint_cell_blocks(count, size, sampler)
        if self._joint is None:
            labels = block_label_chunks(self.n, count, sampler=sampler)
            if self._holds_rows:
                return HeldBlocks(self.engine, self.engine.hold(_in_blocks(labels, count), within=self._rows),
                                  count, size)
            order = np.argsort(np.concatenate(list(labels)), kind="stable")  # by block, rows in order
            base = np.arange(self.n) if self._rows is None else self._rows
            return Blocks([Tables(self.engine, size, None, base[order[i * size:(i + 1) * size]]) for i in range(count)])
        rest, parts = self._joint.copy(), []
        for _ in range(count):
            block = table_without_replacement(rest, size, sampler=sampler)
            rest -= block
            parts.append(Tables(self.engine, size, block))
        return Blocks(parts)


    def _joint_cell_blocks(self, count: int, size: int, sampler: NoiseSampler) -> "DistinctBlocks":
        """:meth:`blocks` of a joint table too large to copy once per block (``count`` times its
        cells above :data:`MAX_JOINT_CELLS`: 10,000 levels beside four small columns are 1.2
        million cells, 20 blocks 190 MB a round): the same successive draws over its nonzero
        cells, in the joint's order (a zero cell holds no row, so the draws are the joint's),
        held once with 8 bytes a block and cell (:class:`DistinctBlocks`). Which cells are
        nonzero sets only the memory, never a table or a draw."""
        _, rows, weights = self.whole_rows()
        rest, parts = np.rint(weights).astype(np.int64), []
        for _ in range(count):
            block = table_without_replacement(rest, size, sampler=sampler)
            rest -= block
            parts.append(_held(block))
        return DistinctBlocks(self.domain, rows, parts)

    @property
    def _holds_rows(self) -> bool:
        """Whether a row selection goes into the engine (``engine.hold``: an out-of-core engine
        keeps it, so the memory here does not grow with the rows) rather than into an array."""
        return getattr(self.engine, "codes", None) is None and hasattr(self.engine, "hold")

    @property
    def _has_fetched_rows(self) -> bool:
        """Whether the data is the distinct rows an out-of-core engine gave (no codes in memory)."""
        return self._rows is None and bool(self._distinct) and getattr(self.engine, "codes", None) is None

    def _distinct_counts(self) -> np.ndarray:
        return np.rint(self._distinct[1]).astype(np.int64)

    def _of_distinct(self, m: int, counts: np.ndarray) -> "Tables":
        """Tables of the distinct rows with these ``counts`` (a draw from their counts)."""
        kept = counts > 0
        tables = Tables(self.engine, m, None)
        tables._distinct = (np.asfortranarray(self._distinct[0][kept]), counts[kept].astype(np.float64))
        return tables


def _in_blocks(label_chunks, count: int):
    """Chunks of :func:`~privgraph.data.sampling.block_label_chunks` as ``(positions, blocks)``
    of the rows in a block (label below ``count``), positions counted over every chunk."""
    start = 0
    for labels in label_chunks:
        inside = np.flatnonzero(labels < count)
        yield inside + start, labels[inside]
        start += len(labels)


def _held(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the nonzero ``counts`` (int32) and those counts (int32 when they fit)."""
    positions = np.flatnonzero(counts)
    held = counts[positions]
    return positions.astype(np.int32), held.astype(np.int32 if held.sum() < 2**31 else np.int64)


class DistinctBlocks:
    """Disjoint blocks of distinct rows with multiplicities: the rows held once (shared with
    the data they were drawn from), each block as the positions of its rows among them and
    their counts (``parts``); ``table(columns)`` stacks the blocks' tables as :class:`Blocks`
    does.

    Memory: 8 bytes per (block, distinct row) pair held and one cell index of the rows per
    table, however many rows the counts add up to (a Tables per block copied each block's
    codes and float weights: 46 bytes a pair on 30 columns, 50 blocks of up to every
    distinct row each). A table's cells are indexed once over the rows for all the blocks.

    >>> from privgraph.data import Domain
    >>> b = DistinctBlocks(Domain.of(a=2, b=2), np.array([[0, 1], [1, 1]]), [_held(np.array([2, 0])),
    ...                                                                   _held(np.array([1, 1]))])
    >>> b.count, b.n, b.table(["b", "a"]).tolist()
    (2, 4, [[[0, 0], [2, 0]], [[0, 0], [1, 1]]])
    """

    def __init__(self, domain: Domain, rows: np.ndarray, parts: list[tuple[np.ndarray, np.ndarray]]):
        self.domain, self.rows, self.parts = domain, rows, parts
        self.count, self.n = len(parts), int(sum(int(held.sum()) for _, held in parts))
        self._cache = LRU(CACHE_BUDGET_CELLS)

    def table(self, columns: Sequence[str]) -> np.ndarray:
        key = tuple(columns)
        out = self._cache.get(key)
        if out is None:
            shape = tuple(self.domain.size_of(c) for c in key)
            ids, cells = cell_ids(self.rows, [self.domain.index(c) for c in key], shape)
            out = np.stack([np.rint(np.bincount(ids[at], weights=held, minlength=cells)) for at, held in self.parts])
            out = out.astype(np.int64).reshape(self.count, *shape)
            self._cache.put(key, out, out.size)
        return out


class HeldBlocks:
    """Disjoint blocks whose rows an out-of-core engine holds (``engine.hold``: each row with
    its block); ``table(columns)`` stacks the blocks' tables, all counted by one grouped query
    (``engine.block_counts``). Memory here: the tables, not the rows."""

    def __init__(self, engine: CountEngine, held, count: int, size: int):
        self.engine, self.held, self.count, self.n = engine, held, int(count), int(count) * int(size)
        self._cache = LRU(CACHE_BUDGET_CELLS)

    def table(self, columns: Sequence[str]) -> np.ndarray:
        key = tuple(columns)
        out = self._cache.get(key)
        if out is None:
            out = self.engine.block_counts(key, self.held, self.count)
            self._cache.put(key, out, out.size)
        return out


class Blocks:
    """Disjoint blocks of one dataset; ``table(columns)`` stacks the blocks' tables."""

    def __init__(self, parts: list[Tables]):
        self.parts = parts
        self.count = len(parts)
        self.n = sum(p.n for p in parts)

    def table(self, columns: Sequence[str]) -> np.ndarray:
        return np.stack([p.table(columns) for p in self.parts])


#: What :meth:`Tables.blocks` gives: ``count``, ``n`` and ``table(columns)``, the blocks' tables stacked.
BlockView = Blocks | DistinctBlocks | HeldBlocks
