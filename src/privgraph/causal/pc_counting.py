"""PC's counting: covers (the data over one variable and its adjacencies), the batches of
tables counted from them, and the verdicts kept by set.

PC's logic on top of the data layer's generic counting (:class:`privgraph.data.Tables`: the
joint table, the pair tables, one bounded cache, secret sub-samples). The functions
:func:`cover`, :func:`strata`, :func:`verdicts`, :func:`set_verdicts` and
:func:`sets_per_batch` take a Tables; its :class:`Covers` are made on first use and held by
it (``Tables.row_sets``), so that its :meth:`~privgraph.data.Tables.table` counts from a
cover that holds the columns asked.

Before stable PC tests the edges of x at a level, it names x's *cover*: x and its
adjacencies (:func:`cover`). Every test ``(x, y, S)`` of x at that
level reads a table over cover columns, so :class:`Covers` keeps, for each x, a row set
(:mod:`privgraph.data.rowsets`) that holds them:

* at first the row set the cover came from (x's previous cover, whose columns contain
  the new ones since adjacencies only shrink, or the whole data), *projected* onto the
  cover's columns only when a batch counts from it directly, so a cover that is only
  used through its grams is never projected;
* **grams** (level 1): every table ``(x, y, s)`` of x at once, as the two-way tables of
  the cover's columns within each value of x (:func:`~privgraph.data.rowsets.grouped_grams`);
* **direct batches** (levels >= 2): the tables of many sets in one pass over the
  projected rows (:func:`~privgraph.data.rowsets.strata_counts`), at most
  :data:`BATCH_ELEMENTS` ids at a time;
* **verdicts by set** (the levels and sets grams do not serve, for a vectorised test:
  :meth:`Covers.set_verdicts`): for a conditioning set S, every table ``(x, v, *S)`` of
  the cover at once, S's stratum ids built once (and their prefixes kept for the next
  set), the verdicts kept so that x's other edges read them.

Memory: covers' own rows at most :data:`COVER_BUDGET_BYTES`, grams at most
:data:`GRAM_BUDGET_CELLS` int64 cells, both least recently used first out; a batch's
strata at most :data:`STRATA_BUDGET_CELLS` cells when it holds at most
:meth:`Covers.sets_per_batch` sets (a set's tables decided at once: as many); verdicts by
set for at most :data:`VERDICT_BUDGET_SETS` sets (a bool per cover column each), least
recently used first out, strata decided :data:`DECIDE_CELLS` cells at a time, a gram decided
with a few float64 copies of it (each at most :data:`MAX_GRAM_CELLS` cells), and for one
cover (which may have been evicted) its columns widened to int64 and the stratum ids of
one set's prefixes, each at most :data:`SET_BUDGET_IDS` int64.
"""

from __future__ import annotations

import weakref
from itertools import groupby
from typing import Callable, Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.data.lru import LRU
from privgraph.data.rowsets import (cell_ids, grouped_counts, grouped_grams, nonempty_strata, project, renumber,
                                    strata_counts)
from privgraph.data.tables import Tables
from privgraph.threads import single_threaded_blas
from privgraph.validation import InvalidInput

#: A joint table this small serves batches as marginals, one table at a time (no covers).
SMALL_JOINT_CELLS = 1 << 12

#: All covers' own rows kept at once, in bytes: least recently used evicted first.
COVER_BUDGET_BYTES = 1 << 26
#: Largest grams (cells) of one cover given x and a prefix of a conditioning set.
MAX_GRAM_CELLS = 1 << 20
#: Levels (sizes of conditioning sets) counted from grams; later levels count directly.
GRAM_LEVELS = 2
#: All grams kept at once (int64 cells): least recently used evicted first.
GRAM_BUDGET_CELLS = 1 << 22
#: Ids per direct batch (rows of the cover times tables), at most.
BATCH_ELEMENTS = 1 << 20
#: Cells of the strata one batch of :meth:`Covers.strata` returns, at most (int64: 32 MB).
STRATA_BUDGET_CELLS = 1 << 22
#: Joint cells of the columns counted in one pass (within the strata and x), per row of
#: the cover, at most: a row and a cell cost about as much (a cell is zeroed, rounded and
#: summed out to each column's).
BLOCK_CELLS_PER_ROW = 2
#: Sets whose verdicts (every table of the cover given the set) are kept: least recently used out.
VERDICT_BUDGET_SETS = 1 << 16
#: Stratum ids of the prefixes of the last set decided by :meth:`Covers.set_verdicts`, and
#: the columns of its cover widened to int64, each at most this many (int64: 32 MB).
SET_BUDGET_IDS = 1 << 22
#: Cells of strata decided in one call by :meth:`Covers.set_verdicts`, about (int64: 2 MB).
DECIDE_CELLS = 1 << 18


class Covers:
    """Row sets per variable (covers) of one dataset, their grams, and batched strata.

    ``whole()`` gives the whole data as a row set ``(names, rows, weights)``, or None.

    >>> from privgraph.data import Domain
    >>> rows = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=np.uint8)
    >>> d = Domain.of(a=2, b=2, c=2)
    >>> cov = Covers(d, lambda: (d.names, np.asfortranarray(rows), None))
    >>> cov.keep(("a", "b", "c"))
    True
    >>> strata, owner = cov.strata("a", "b", [("c",)])
    >>> strata.tolist(), owner.tolist()
    ([[[0, 2], [0, 0]], [[0, 0], [0, 1]]], [0, 0])
    """

    def __init__(self, domain: Domain, whole: Callable[[], tuple | None]):
        self.domain, self._whole = domain, whole
        self._sizes = dict(zip(domain.names, domain.sizes))
        self._covers = LRU(COVER_BUDGET_BYTES)  # x -> (columns, row set holding them)
        self._grams = LRU(GRAM_BUDGET_CELLS)  # columns -> (grams given x, offsets)
        self._verdicts = LRU(VERDICT_BUDGET_SETS)  # (decide, columns, S) -> verdict per column
        self._prefixes: tuple = (None, [])  # (rows, [(column, stratum ids, count) per prefix])
        self._wide: tuple = (None, None)  # (rows, their columns as int64)

    @property
    def size(self) -> int:
        """Bytes of rows the covers hold of their own (the whole data not counted)."""
        return self._covers.size

    def keep(self, columns: tuple) -> bool:
        """Name ``columns`` (x first) as x's cover; False if there are no rows or it is over budget."""
        held = self._covers.get(columns[0])
        if held is not None and held[0] == columns:
            return True
        base = held[1] if held is not None and set(columns) <= set(held[1][0]) else self._whole()
        if base is None:
            return False
        if _product(self._shape(columns)) <= base[1].shape[0]:  # few cells: projecting is cheap
            base = self._project(base, columns)
        self._put(columns, base)
        return self._covers.get(columns[0]) is not None

    def sets_per_batch(self, x: str, y: str) -> int:
        """How many sets one batch of :meth:`strata` may hold so that its strata (at most
        rows of x's cover, or of the data, per table, of r * c cells) stay within
        :data:`STRATA_BUDGET_CELLS`."""
        held = self._covers.get(x)
        base = held[1] if held is not None else self._whole()
        rows = 1 if base is None else max(base[1].shape[0], 1)
        return max(1, STRATA_BUDGET_CELLS // (rows * self._sizes[x] * self._sizes[y]))

    def holding(self, columns: tuple) -> tuple | None:
        """A row set whose columns contain ``columns``: the cover of ``columns[0]`` if it
        holds them, else None."""
        held = self._covers.get(columns[0])
        if held is None or not set(columns) <= set(held[0]):
            return None
        return held[1]

    def strata(self, x: str, y: str, sets: list[tuple]) -> tuple[np.ndarray, np.ndarray] | None:
        """:func:`strata` from x's cover (or a projection of the whole
        data onto the columns asked); None if there are no rows."""
        needed = (x, y, *dict.fromkeys(c for S in sets for c in S))
        held = self._covers.get(x)
        if held is None or not set(needed) <= set(held[0]):
            base = self._whole()
            if base is None:
                return None
            held = (needed, base)
        if len(sets[0]) <= GRAM_LEVELS and self._gram_cells(held[0], sets[0][:-1]) <= MAX_GRAM_CELLS:
            if len(sets[0]) > 1:  # many grams per cover: fewer rows first
                held = (held[0], self._projected(held))
            return self._from_grams(held, x, y, sets)
        return self._direct(self._projected(held), x, y, sets)

    def verdicts(self, x: str, y: str, sets: list[tuple], decide: Callable) -> np.ndarray:
        """Verdicts on the tables over ``(x, y, *S)`` for the leading sets of ``sets`` (all
        of one size, 1 or 2) that grams of x's cover serve: sets[:len(out)].

        A run of sets sharing a prefix P reads the gram given (x, *P), whose tables
        ``(x, v, *P, s)`` for every s and every v from y on (in the cover's order) are
        decided at once the first time, by ``decide(strata, owner, count)`` (a hashable
        callable: a test's vectorised ``decide_strata`` at some alpha), and kept with the
        gram. Stable PC asks x's edges in the cover's order, so the rows before y are
        seldom wanted later (if one is, the rows from it on are decided again). Each
        table's strata are those :meth:`strata` gives it, in the same order, so the
        verdicts are the same.
        Stops after the first run with an independent verdict, or before a run that no
        gram serves.
        """
        empty = np.zeros(0, dtype=bool)
        held = self._covers.get(x)
        if not sets or not 1 <= len(sets[0]) <= GRAM_LEVELS or held is None:
            return empty
        where = {v: i for i, v in enumerate(held[0])}
        if y not in where or not where.keys() >= set().union(*sets):
            return empty
        done = []
        for prefix, run in groupby(sets, key=lambda S: S[:-1]):  # sets in order: a prefix's run
            if self._gram_cells(held[0], prefix) > MAX_GRAM_CELLS:
                break
            if prefix and held[1][0] != held[0]:  # many grams per cover: fewer rows first
                held = (held[0], self._projected(held))
            grams, offsets, known = self._gram(held, prefix)
            if known.get(decide, (None, len(where)))[1] > where[y]:
                known[decide] = (self._decide_gram(held[0], grams, offsets, decide, where[y]), where[y])
            done.append(known[decide][0][where[y], [where[S[-1]] for S in run]])
            if done[-1].any():
                break
        return np.concatenate(done) if done else empty

    def set_verdicts(self, x: str, y: str, sets: list[tuple], decide: Callable) -> np.ndarray:
        """Verdicts on the tables over ``(x, y, *S)`` for the leading sets of ``sets`` (all
        of one size >= 1), up to the first independent one, from x's cover; empty if x
        has no cover holding y and the sets.

        The first time a set S is asked, every table ``(x, v, *S)`` of the cover (v not x
        nor in S) is counted and decided (:meth:`_decide_sets`, ``decide`` as for
        :meth:`verdicts`), and the verdicts are kept, so that the tests of x's other edges
        given S read them. Sets are decided in runs of growing length (1, 4, 16, ...), so
        that an edge removed early wastes little. Each table's strata are those
        :meth:`strata` gives it, in the same order, so the verdicts are the same.
        """
        held = self._covers.get(x)
        have = set(held[0]) if held is not None else set()
        if not sets or not sets[0] or y not in have or not have >= set().union(*sets):
            return np.zeros(0, dtype=bool)
        columns = held[0]
        base, j, out = self._projected(held), columns.index(y), []
        start, size = 0, 1
        while start < len(sets):
            run = sets[start:start + size]
            found = [self._verdicts.get((decide, columns, S)) for S in run]
            missing = [i for i, v in enumerate(found) if v is None]
            for i, verdicts in zip(missing, self._decide_sets(base, [run[i] for i in missing], decide)):
                found[i] = verdicts
                self._verdicts.put((decide, columns, run[i]), verdicts, 1)
            for verdicts in found:
                out.append(bool(verdicts[j]))
                if out[-1]:
                    return np.array(out, dtype=bool)
            start, size = start + len(run), size * 4
        return np.array(out, dtype=bool)

    def _decide_sets(self, base: tuple, sets: list[tuple], decide: Callable) -> list[np.ndarray]:
        """For each set S, verdicts on the tables (x, v, *S) for every column v of a
        projected cover (x first; False where v is x or in S): one call of ``decide`` per
        size of v for every :data:`DECIDE_CELLS` cells of strata or so. A table's strata
        are the cells of S that hold a row, in order (as :meth:`_direct` gives them)."""
        names, rows, weights = base
        sizes = self._shape(names)
        out = [np.zeros(len(names), dtype=bool) for _ in sets]
        if not sets:
            return out
        pending: dict = {}  # size of v -> [(set, v, strata)]
        held, columns = 0, self._widened(rows)
        with single_threaded_blas():  # small products (grouped_counts)
            for i, S in enumerate(sets):
                strata_of, count = self._set_ids(base, S)
                groups = strata_of * sizes[0] + columns[0]  # cells of (S, x)
                others = [j for j in range(1, len(names)) if names[j] not in S]
                for block in _blocks(others, sizes, count * sizes[0], rows.shape[0] * BLOCK_CELLS_PER_ROW):
                    counted = grouped_counts([columns[j] for j in block], weights, groups, count * sizes[0],
                                             [sizes[j] for j in block])
                    for j, counts in zip(block, counted):
                        pending.setdefault(sizes[j], []).append((i, j, counts.reshape(count, sizes[0], sizes[j])))
                        held += counts.size
                    if held > DECIDE_CELLS:
                        _decide_pending(pending, decide, out)
                        pending, held = {}, 0
        _decide_pending(pending, decide, out)
        return out

    def _widened(self, rows: np.ndarray) -> np.ndarray:
        """The columns of ``rows`` as int64 (k, m), kept for the last rows asked (within
        :data:`SET_BUDGET_IDS`; else the columns as they are): integer arithmetic with
        the ids is faster in one type."""
        if self._wide[0] is not rows:
            wide = rows.T.astype(np.int64) if rows.size <= SET_BUDGET_IDS else rows.T
            self._wide = (rows, wide)
        return self._wide[1]

    def _set_ids(self, base: tuple, S: tuple) -> tuple[np.ndarray, int]:
        """Ids 0..u-1 of the rows' cells over S, in the cells' (lexicographic) order, and u.
        Sets come in lexicographic order, so the ids of the last set's prefixes are kept
        (at most :data:`SET_BUDGET_IDS`) and a set starts from its longest kept prefix."""
        names, rows, _ = base
        links = self._prefixes[1] if self._prefixes[0] is rows else []
        kept = 0
        while kept < min(len(links), len(S)) and links[kept][0] == S[kept]:
            kept += 1
        links = links[:kept]
        ids, count = (links[-1][1], links[-1][2]) if links else (np.zeros(rows.shape[0], dtype=np.int64), 1)
        chained = True  # every prefix kept so far: the next may be kept too
        for s in S[kept:]:
            size = self._sizes[s]
            ids, count = renumber(ids * size + self._widened(rows)[names.index(s)], count * size)
            chained = chained and (len(links) + 1) * rows.shape[0] <= SET_BUDGET_IDS
            if chained:
                links.append((s, ids, count))
        self._prefixes = (rows, links)
        return ids, count

    def _decide_gram(self, columns: tuple, grams: np.ndarray, offsets: np.ndarray, decide: Callable,
                     first: int) -> np.ndarray:
        """(k, k) verdicts: [i, j] on the table (x, columns[i], *P, columns[j]) read from the
        grams given (x, *P) (meaningless where i < first, i or j is x or in P, or i == j),
        decided in one call (:func:`_decide_gram_blocks`) if ``decide`` takes column blocks,
        else in one call per size of columns[i]."""
        first = max(first, 1)
        if getattr(decide, "takes_blocks", False):
            return _decide_gram_blocks(self._shape(columns), grams, offsets, decide, first)
        sizes = np.asarray(self._shape(columns))
        k, width, r = len(columns), int(offsets[-1]), int(sizes[0])
        column_of = np.repeat(np.arange(k), sizes)  # each cell's column
        out = np.zeros((k, k), dtype=bool)
        for c in sorted(set(sizes[first:].tolist())):  # (np.unique's first call costs ~17 ms)
            ys = np.flatnonzero(sizes == c)
            ys = ys[ys >= first]
            cells = (offsets[ys][:, None] + np.arange(c)).ravel()
            # strata ordered as in _from_grams: by table (v, s), then cell of P, then cell of s
            block = grams[:, cells, :].reshape(r, -1, len(ys), c, width).transpose(2, 1, 4, 0, 3)
            owner = np.broadcast_to((np.arange(len(ys)) * k)[:, None, None] + column_of, block.shape[:3])
            block, owner = block.reshape(-1, r, c), owner.ravel()
            kept = block.any(axis=(1, 2))
            out[ys] = np.asarray(decide(block[kept], owner[kept], len(ys) * k)).reshape(len(ys), k)
        return out

    def _projected(self, held: tuple) -> tuple:
        columns, base = held
        if base[0] == columns:
            return base
        base = self._project(base, columns)
        if (now := self._covers.get(columns[0])) is not None and now[0] == columns:
            self._put(columns, base)
        return base

    def _put(self, columns: tuple, base: tuple) -> None:
        own = 0 if base is self._whole() else base[1].nbytes + (0 if base[2] is None else base[2].nbytes)
        self._covers.put(columns[0], (columns, base), own)

    def _project(self, base: tuple, columns: tuple) -> tuple:
        names, rows, weights = base
        picked, summed = project(rows, weights, [names.index(c) for c in columns], self._shape(columns))
        return columns, picked, summed

    def _direct(self, base: tuple, x: str, y: str, sets: list) -> tuple[np.ndarray, np.ndarray]:
        names, rows, weights = base
        where = {c: i for i, c in enumerate(names)}
        sizes = self._shape(names)
        step = max(1, BATCH_ELEMENTS // max(rows.shape[0], 1))
        parts = []
        for i in range(0, len(sets), step):
            chunk = np.array([[where[c] for c in S] for S in sets[i:i + step]], dtype=np.intp)
            strata, owner = strata_counts(rows, weights, where[x], where[y], chunk, sizes)
            parts.append((strata, owner + i))
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _gram_cells(self, columns: tuple, prefix: tuple) -> int:
        width = sum(self._shape(columns))
        return _product(self._shape((columns[0], *prefix))) * width * width

    def _from_grams(self, held: tuple, x: str, y: str, sets: list) -> tuple[np.ndarray, np.ndarray]:
        """Each table (x, y, *P, s) is a block of the grams given x and P (S = (*P, s)):
        the sets that share P are read from one gram in one gather."""
        columns = held[0]
        where = {v: i for i, v in enumerate(columns)}
        r, c, i = self._sizes[x], self._sizes[y], where[y]
        parts, owners, start = [], [], 0
        for prefix, run in groupby(sets, key=lambda S: S[:-1]):  # sets in order: a prefix's run
            run = list(run)
            grams, offsets, _ = self._gram(held, prefix)
            sizes = [int(offsets[where[S[-1]] + 1] - offsets[where[S[-1]]]) for S in run]
            picked = np.concatenate([np.arange(offsets[where[S[-1]]], offsets[where[S[-1]] + 1]) for S in run])
            block = grams[:, offsets[i]:offsets[i + 1], :][:, :, picked]  # (r * cells of P, c, cells)
            block = block.reshape(r, -1, c, len(picked)).transpose(1, 3, 0, 2).reshape(-1, r, c)
            owner = np.tile(np.repeat(np.arange(start, start + len(run)), sizes), len(block) // len(picked))
            kept = block.any(axis=(1, 2))
            parts.append(block[kept])
            owners.append(owner[kept])
            start += len(run)
        return np.concatenate(parts), np.concatenate(owners)

    def _gram(self, held: tuple, prefix: tuple) -> tuple[np.ndarray, np.ndarray, dict]:
        """Two-way tables of the cover's columns within each cell of (x, *prefix), their
        offsets, and the verdicts found from them so far (an LRU)."""
        columns, (names, rows, weights) = held
        found = self._grams.get((columns, prefix))
        if found is None:
            sizes = self._shape(columns)
            by = (columns[0], *prefix)
            groups, count = cell_ids(rows, [names.index(c) for c in by], self._shape(by))
            grams = grouped_grams(rows, weights, groups, count, [names.index(c) for c in columns], sizes)
            found = (grams, np.concatenate([[0], np.cumsum(sizes)]), {})
            self._grams.put((columns, prefix), found, grams.size)
        return found

    def _shape(self, columns: Sequence[str]) -> tuple[int, ...]:
        return tuple(map(self._sizes.__getitem__, columns))


def _blocks(columns: list[int], sizes: Sequence[int], groups: int, most: int) -> list[list[int]]:
    """``columns`` in runs whose joint cells within ``groups`` groups are at most ``most``
    (a column alone may have more), each run counted in one pass.

    >>> _blocks([1, 2, 3, 4], [2, 3, 3, 4, 2], 10, 100)
    [[1, 2], [3, 4]]
    """
    out: list[list[int]] = []
    cells = 0
    for j in columns:
        if out and cells * sizes[j] <= most:
            out[-1].append(j)
            cells *= sizes[j]
        else:
            out.append([j])
            cells = groups * sizes[j]
    return out


def _decide_gram_blocks(sizes: Sequence[int], grams: np.ndarray, offsets: np.ndarray, decide,
                        first: int) -> np.ndarray:
    """:meth:`Covers._decide_gram` (rows from ``first`` >= 1 on) by ``decide.blocks``: the
    strata of the tables (x, v, *P, s) as column blocks (privgraph.stats.gtest.ColumnBlocks):
    b a cell of P and a cell of s outside x's, the block of v its cells, the strata ordered
    by table, then cell of P, then cell of s (as :meth:`Covers._from_grams` gives them).
    Holds a few float64 copies of the grams (each at most :data:`MAX_GRAM_CELLS` cells)."""
    k, r, width = len(sizes), int(sizes[0]), int(offsets[-1])
    # grams are symmetric: counts[(p, j), a, i] = grams[(a, p), i, j] for a cell j outside x
    counts = grams.reshape(r, -1, width, width)[:, :, r:, :].transpose(1, 2, 0, 3).reshape(-1, r, width)
    column_of = np.repeat(np.arange(k), sizes)[r:]  # each cell j's column
    owner = (np.arange(first, k) * k)[:, None, None] + column_of
    owner = np.broadcast_to(owner, (k - first, counts.shape[0] // len(column_of), len(column_of))).ravel()
    return np.asarray(decide.blocks(counts, offsets[first:], owner, k * k)).reshape(k, k)


def _decide_pending(pending: dict, decide: Callable, out: list) -> None:
    """``out[i][j] = decide(...)`` for the strata of each table (i, j) in ``pending`` (one
    list of ``(i, j, strata)`` per shape), in one call per shape."""
    for items in pending.values():
        strata = np.concatenate([t[2] for t in items])
        owner = np.repeat(np.arange(len(items)), [len(t[2]) for t in items])
        for (i, j, _), verdict in zip(items, decide(strata, owner, len(items))):
            out[i][j] = verdict


def _product(sizes: Sequence[int]) -> int:
    out = 1
    for s in sizes:
        out *= int(s)
    return out



# --- PC's counting on a Tables (its covers held by it) ---------------------------------------


def covers_of(tables: Tables) -> Covers:
    """The :class:`Covers` of ``tables``, made on first use and held by it (``tables.row_sets``:
    its :meth:`~privgraph.data.Tables.table` then counts from a cover holding the columns).
    The covers reach the Tables through a weak reference, so the two hold no reference cycle
    and a round's secret sub-sample is freed as soon as the next replaces it (with a cycle only
    the garbage collector freed them, late: Priv-PC's discover at 1e8 rows through DuckDB kept
    some 30 rounds of sub-samples alive, 7 GB).

    >>> from privgraph.data import Domain, NumpyEngine
    >>> t = Tables.from_engine(NumpyEngine(Domain.of(a=2, b=2), np.zeros((3, 2), dtype=int)))
    >>> covers_of(t) is covers_of(t) is t.row_sets
    True
    """
    if tables.row_sets is None:
        tables.row_sets = Covers(tables.domain, _whole_rows_of(weakref.ref(tables)))
    return tables.row_sets


def _whole_rows_of(tables: "weakref.ref[Tables]"):
    """:meth:`Tables.whole_rows` of the Tables behind a weak reference, for its covers."""
    return lambda: tables().whole_rows()


def cover(tables: Tables, columns: Sequence[str]) -> bool:
    """Name the data over ``columns`` as ``columns[0]``'s cover (:class:`Covers`): tables over
    subsets that start with ``columns[0]`` count from it. False if there are no rows (an
    out-of-core engine with too many distinct rows) or it is over budget."""
    key = tuple(columns)
    return bool(key) and covers_of(tables).keep(key)


def strata(tables: Tables, x: str, y: str, sets: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """The tables over ``(x, y, *S)`` for each S of ``sets`` (all of one size), as their
    nonempty strata: ``(strata, owner)``, int64 counts of shape (K, r, c) and the index
    in ``sets`` of each stratum's table. Counted in batches from x's cover
    (:class:`Covers`), from the pair tables, or one by one.

    >>> from privgraph.data import Domain, NumpyEngine
    >>> e = NumpyEngine(Domain.of(a=2, b=2, c=2), np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]]))
    >>> counts, owner = strata(Tables.from_engine(e), "a", "b", [("c",)])
    >>> counts.tolist(), owner.tolist()
    ([[[0, 2], [0, 0]], [[0, 0], [0, 1]]], [0, 0])
    """
    sets = [tuple(S) for S in sets]
    if len({len(S) for S in sets}) > 1:
        raise InvalidInput(f"the sets of one batch must have one size, got sizes {sorted({len(S) for S in sets})}")
    if not sets:
        return np.zeros((0, *tables.shape((x, y))), dtype=np.int64), np.zeros(0, dtype=np.int64)
    found = None if not sets[0] or _small_joint(tables) else covers_of(tables).strata(x, y, sets)
    if found is None:
        return nonempty_strata([tables.table((x, y, *S)) for S in sets])
    return found


def verdicts(tables: Tables, x: str, y: str, sets: Sequence[Sequence[str]], decide) -> np.ndarray:
    """``decide(strata, owner, count)``'s verdicts on the tables over ``(x, y, *S)`` for
    the leading sets of ``sets`` that grams of x's cover serve (levels 1 and 2; every
    table of a gram decided at once and kept with it: :meth:`Covers.verdicts`); empty if
    none. ``decide`` must be hashable, equal for equal verdicts."""
    sets = [tuple(S) for S in sets]
    if not sets or _small_joint(tables):
        return np.zeros(0, dtype=bool)
    return covers_of(tables).verdicts(x, y, sets, decide)


def set_verdicts(tables: Tables, x: str, y: str, sets: Sequence[Sequence[str]], decide) -> np.ndarray:
    """The same verdicts, set by set from x's cover, for the leading sets (all of one size
    >= 1) up to the first independent one: every table ``(x, v, *S)`` of the cover
    decided at once and kept for x's other edges (:meth:`Covers.set_verdicts`); empty if x
    has no cover holding them, or the joint table is small enough to serve every table as a
    marginal."""
    if _small_joint(tables):
        return np.zeros(0, dtype=bool)
    return covers_of(tables).set_verdicts(x, y, [tuple(S) for S in sets], decide)


def sets_per_batch(tables: Tables, x: str, y: str) -> int:
    """Most sets one :func:`strata` call should hold to keep its strata within budget
    (:meth:`Covers.sets_per_batch`)."""
    return covers_of(tables).sets_per_batch(x, y)


def _small_joint(tables: Tables) -> bool:
    """A joint table so small that its marginals are cheaper than any batch."""
    cells = tables.joint_cells
    return cells is not None and cells <= SMALL_JOINT_CELLS


__all__ = ["Covers", "SMALL_JOINT_CELLS", "cover", "covers_of", "set_verdicts", "sets_per_batch", "strata", "verdicts"]
