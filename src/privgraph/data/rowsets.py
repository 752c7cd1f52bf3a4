"""Weighted row sets: a dataset as its distinct rows over some columns, with multiplicities.

A *row set* is ``(rows, weights)``: integer codes of shape (m, k) and float64 weights of
shape (m,) (None: every weight 1). Every table over a subset of its columns is a
``bincount`` of m mixed-radix cell indices, so counting costs O(m), and m is at most the
number of rows, of distinct rows, and of cells over the columns. The count is exact:
weights are integers below 2^53.

:func:`project` keeps some columns and merges the rows that become equal;
:func:`strata_counts` counts a batch of tables over ``(x, y, *S)`` in one pass and
returns only their nonempty strata (a conditional test's table with axes x, y, then the
conditioning variables, as (x by y) slices, one per cell of S).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

import privgraph.caches as caches
from privgraph.threads import single_threaded_blas

#: Largest dense index space (cells) counted by ``bincount``; larger ones are compressed
#: by a sort first (so memory stays bounded whatever the width).
DENSE_CELLS = 1 << 22
#: Rows per chunk of the one-hot products, at most.
PAIR_CHUNK_ROWS = 1 << 14
#: Cells of one chunk's one-hot matrix, at most (float32 or float64: 8 or 16 MB).
GRAM_CHUNK_CELLS = 1 << 21
#: Largest id space before it is compressed (ids are int64).
_MAX_ID = 1 << 62


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


def project(rows: np.ndarray, weights: np.ndarray | None, columns: Sequence[int],
            sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The row set over ``columns`` (positions in ``rows``, with their ``sizes``): distinct
    rows over them, Fortran order, and their summed float64 weights.

    >>> r, w = project(np.array([[0, 1, 2], [0, 0, 2], [1, 1, 0]]), None, [2, 0], [3, 2])
    >>> r.tolist(), w.tolist()
    ([[0, 1], [2, 0]], [1.0, 2.0])
    """
    ids, bound = cell_ids(rows, columns, sizes)
    if is_dense_cheaper(bound, len(ids)):
        counts = np.bincount(ids, weights, minlength=bound).astype(np.float64, copy=False)
        cells = np.flatnonzero(counts)
        some_row = np.zeros(bound, dtype=np.int64)
        some_row[ids] = np.arange(len(ids))  # any row of a cell will do: they agree on columns
        picked, summed = some_row[cells], counts[cells]
    else:
        _, picked, inverse = np.unique(ids, return_index=True, return_inverse=True)
        summed = np.bincount(inverse.ravel(), weights, minlength=len(picked)).astype(np.float64, copy=False)
    return np.asfortranarray(rows[np.ix_(picked, list(columns))]), summed


def is_dense_cheaper(cells: int, elements: int) -> bool:
    """Whether a dense ``bincount`` over ``cells`` beats sorting ``elements`` ids (and fits
    :data:`DENSE_CELLS`): a cell costs about a nanosecond, a sorted element some tens."""
    return cells <= min(DENSE_CELLS, 16 * elements + 4096)


def count_rows(rows: np.ndarray, weights: np.ndarray | None, columns: Sequence[int],
               shape: Sequence[int]) -> np.ndarray:
    """The int64 table over ``columns`` (positions in ``rows``) of a row set.

    >>> count_rows(np.array([[0, 1], [1, 1]]), np.array([2.0, 3.0]), [1, 0], (2, 2)).tolist()
    [[0, 0], [2, 3]]
    """
    ids, _ = cell_ids(rows, columns, shape)
    counts = np.bincount(ids, weights, minlength=int(np.prod(shape, dtype=np.int64)))
    if weights is not None:
        counts = np.rint(counts)
    return counts.astype(np.int64, copy=False).reshape(tuple(shape))


def cell_ids(rows: np.ndarray, columns: Sequence[int], sizes: Sequence[int]) -> tuple[np.ndarray, int]:
    """Ids of the rows' cells over ``columns`` (equal exactly when the cells are), and a
    bound on them: mixed-radix, compressed by a sort when they would overflow int64.

    >>> ids, bound = cell_ids(np.array([[0, 1], [1, 1]]), [1, 0], [2, 2])
    >>> ids.tolist(), bound
    ([2, 3], 4)
    """
    ids, bound = np.zeros(rows.shape[0], dtype=np.int64), 1
    for c, size in zip(columns, sizes):
        if bound * size >= _MAX_ID:
            ids, bound = compress(ids)
        ids *= size
        ids += rows[:, c]
        bound *= int(size)
    return ids, bound


def compress(ids: np.ndarray) -> tuple[np.ndarray, int]:
    """Ids renumbered 0..u-1 in order (same shape), and u.

    >>> ids, u = compress(np.array([[7, 3], [3, 9]]))
    >>> ids.tolist(), u
    ([[1, 0], [0, 2]], 3)
    """
    values, inverse = np.unique(ids, return_inverse=True)
    return inverse.reshape(ids.shape).astype(np.int64, copy=False), len(values)


def renumber(ids: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """Ids below ``bound`` renumbered 0..u-1 in order, and u: by marking the ids seen in
    a dense array of ``bound`` when that is cheaper (:func:`is_dense_cheaper`), else by a
    sort (:func:`compress`).

    >>> ids, u = renumber(np.array([7, 3, 3, 9]), 10)
    >>> ids.tolist(), u
    ([1, 0, 0, 2], 3)
    """
    if not is_dense_cheaper(bound, ids.size):
        return compress(ids)
    seen = np.zeros(bound, dtype=bool)
    seen[ids] = True
    rank = np.cumsum(seen) - 1
    return rank[ids], int(rank[-1]) + 1


def grouped_counts(columns: Sequence[np.ndarray], weights: np.ndarray | None, groups: np.ndarray, count: int,
                   sizes: Sequence[int]) -> list[np.ndarray]:
    """For each column (its values below its size in ``sizes``), the int64 counts
    ``(count, size)`` of its values within each group of the rows (``groups``: one id below
    ``count`` per row): one ``bincount`` of the columns' joint cells within the groups
    (``count * prod(sizes)`` of them), summed out to each column's by one product with
    :func:`_summing` (exact: float64 sums of counts below 2^53). Call it with BLAS single
    threaded (:func:`~privgraph.threads.single_threaded_blas`).

    >>> a, b = grouped_counts([np.array([0, 1, 1]), np.array([2, 0, 2])], None, np.array([1, 0, 1]), 2, [2, 3])
    >>> a.tolist(), b.tolist()
    ([[0, 1], [1, 1]], [[1, 0, 0], [0, 0, 2]])
    """
    sizes = [int(s) for s in sizes]
    cells = groups * sizes[0]
    cells += columns[0]
    for column, size in zip(columns[1:], sizes[1:]):
        cells *= size
        cells += column
    counts = np.bincount(cells, weights, minlength=count * math.prod(sizes)).reshape(count, -1)
    if len(sizes) > 1:
        counts = counts.astype(np.float64, copy=False) @ _summing(tuple(sizes))
    if counts.dtype != np.int64:
        counts = np.rint(counts).astype(np.int64)
    offsets = np.cumsum([0, *sizes]).tolist()
    return [counts[:, a:b] for a, b in zip(offsets, offsets[1:])]


@caches.lru(256)
def _summing(sizes: tuple[int, ...]) -> np.ndarray:
    """The 0/1 matrix that sums the joint cells of columns of ``sizes`` (row-major) out to
    each column's cells, laid out column after column.

    >>> _summing((2, 2)).tolist()
    [[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    """
    digits = np.unravel_index(np.arange(int(np.prod(sizes))), sizes)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    out = np.zeros((len(digits[0]), int(sum(sizes))))
    for offset, digit in zip(offsets, digits):
        out[np.arange(len(digit)), offset + digit] = 1.0
    return out


def strata_counts(rows: np.ndarray, weights: np.ndarray | None, x: int, y: int, sets: np.ndarray,
                  sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The nonempty strata of the tables over ``(x, y, *S)`` for each row ``S`` of ``sets``
    (positions in ``rows``; shape (T, l)), counted in one pass.

    Returns ``(strata, owner)``: int64 counts of shape (K, r, c) and, for each stratum,
    the row of ``sets`` whose table it belongs to (in order). The strata of one table are
    those of ``as_strata(table)`` that hold a row, in some order. Memory: a few arrays of
    T * m int64, and the dense index space is at most :data:`DENSE_CELLS` cells.

    >>> rows = np.array([[0, 1, 0], [1, 1, 1], [0, 0, 1], [0, 1, 0]])
    >>> strata, owner = strata_counts(rows, None, 0, 1, np.array([[2]]), [2, 2, 2])
    >>> strata.tolist(), owner.tolist()
    ([[[0, 2], [0, 0]], [[1, 0], [0, 1]]], [0, 0])
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    r, c = int(sizes[x]), int(sizes[y])
    count = sets.shape[0]
    if rows.shape[0] == 0:
        return np.zeros((0, r, c), dtype=np.int64), np.zeros(0, dtype=np.int64)
    columns = rows.T  # (k, m): contiguous columns when rows is in Fortran order
    local, slots = stratum_ids(columns, sets, sizes)
    if not is_dense_cheaper(count * slots * r * c, local.size):
        local, slots = _compress_per_table(local, slots)
    local += (np.arange(count, dtype=np.int64) * slots)[:, None]  # tables side by side
    few = count * slots * r * c <= local.size  # nonempty strata read from the counts: cheaper
    kept = None if few else np.flatnonzero(np.bincount(local.ravel(), minlength=count * slots))
    local *= r * c
    local += columns[x].astype(np.int64) * c + columns[y]
    if weights is None:
        counts = np.bincount(local.ravel(), minlength=count * slots * r * c)
    else:
        counts = np.rint(np.bincount(local.ravel(), np.broadcast_to(weights, local.shape).ravel(),
                                     minlength=count * slots * r * c))
    counts = counts.reshape(count * slots, r * c)
    if few:  # weights are multiplicities (>= 1): a stratum holds a row exactly when it counts one
        kept = np.flatnonzero(counts.any(axis=1))
    return counts[kept].astype(np.int64, copy=False).reshape(-1, r, c), kept // slots


def stratum_ids(columns: np.ndarray, sets: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, int]:
    """(T, m) ids of each row's stratum in each table (distinct within a table), and a bound
    on them. Position j of every set is read in the radix of the largest size there;
    the ids are compressed (:func:`compress`) before they would overflow int64."""
    count, level = sets.shape
    if level == 0:
        return np.zeros((count, columns.shape[1]), dtype=np.int64), 1
    ids, bound = columns[sets[:, 0]].astype(np.int64), int(sizes[sets[:, 0]].max())
    for j in range(1, level):
        radix = int(sizes[sets[:, j]].max())
        if bound * radix >= _MAX_ID:
            ids, bound = compress(ids)
        ids *= radix
        ids += columns[sets[:, j]]
        bound *= radix
    return ids, bound


def _compress_per_table(ids: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """Ids renumbered within each table from 0 (one sort of all), and their largest bound."""
    count = ids.shape[0]
    if count * bound >= _MAX_ID:
        ids, bound = compress(ids)
    ranks, _ = compress(ids + (np.arange(count, dtype=np.int64) * bound)[:, None])  # tables in order
    ranks -= ranks.min(axis=1)[:, None]
    return ranks, int(ranks.max()) + 1


def nonempty_strata(tables: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`strata_counts`' output for tables given one by one (axes x, y, conditioning).

    >>> strata, owner = nonempty_strata([np.array([[[1, 0], [0, 0]], [[0, 0], [2, 0]]])])
    >>> strata.tolist(), owner.tolist()   # the stratum s = 1 is empty
    ([[[1, 0], [0, 2]]], [0])
    """
    parts, owners = [], []
    for i, t in enumerate(tables):
        t = np.asarray(t, dtype=np.int64)
        s = t.reshape(t.shape[0], t.shape[1], -1).transpose(2, 0, 1)
        s = s[s.reshape(s.shape[0], -1).any(axis=1)]
        parts.append(s)
        owners.append(np.full(len(s), i, dtype=np.int64))
    return np.concatenate(parts), np.concatenate(owners)


def pair_tables(codes: np.ndarray, names: Sequence[str], sizes: Sequence[int],
                weights: np.ndarray | None = None) -> dict:
    """Every two-way table ``{(a, b): counts}`` (a before b in ``names``) of integer codes
    (one :func:`grouped_grams` of a single group).

    >>> c = np.array([[0, 1, 2], [1, 1, 0], [0, 0, 2]])
    >>> pair_tables(c, ["a", "b", "c"], [2, 2, 3])[("a", "c")].tolist()
    [[0, 0, 2], [1, 0, 0]]
    """
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    gram = grouped_grams(codes, weights, np.zeros(codes.shape[0], dtype=np.int64), 1, range(len(names)), sizes)[0]
    return {(a, b): gram[offsets[i]:offsets[i + 1], offsets[j]:offsets[j + 1]].copy()
            for i, a in enumerate(names) for j, b in enumerate(names) if i < j}


def grouped_grams(rows: np.ndarray, weights: np.ndarray | None, groups: np.ndarray, count: int,
                  columns: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    """For each group g < ``count``, the int64 counts ``G[g, i, j]`` of the rows of group g
    (``groups``: one per row) at one-hot cell i and j over ``columns``: every two-way table
    of those columns within each group, cells laid out column after column.

    Rows sorted by group, then, for chunks of a group's rows, the product ``R^T (w R)`` of
    a *reduced* one-hot matrix: each column's cells but its last, and a column of ones.
    A column's last cell is one minus its others, so the full one-hot matrix is ``R E``
    (``E`` of 0, 1 and -1: :func:`_expansion`) and the grams are ``E^T (R^T w R) E``:
    with 2 or 3 states a column, about a third of the product's cost. Exact: float32
    while every sum is below 2^24, else float64 (exact below 2^53).

    >>> rows = np.array([[0, 1, 1], [1, 0, 1], [0, 1, 0]])
    >>> g = grouped_grams(rows, None, rows[:, 0], 2, [1, 2], [2, 2])
    >>> g[0].tolist()   # rows with column 0 == 0: cells (col 1 = 0, 1, col 2 = 0, 1)
    [[0, 0, 0, 0], [0, 2, 1, 1], [0, 1, 1, 0], [0, 1, 0, 1]]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    m, width = rows.shape[0], int((sizes - 1).sum()) + 1
    total = m if weights is None else float(weights.sum())
    dtype = np.float32 if total < (1 << 24) else np.float64
    codes = np.take(rows.T, np.asarray(list(columns), dtype=np.intp), axis=0)  # (k, m), C order
    if count > 1:  # rows sorted by group: a radix sort for small group ids
        order = np.argsort(groups.astype(np.uint16) if count <= (1 << 16) else groups, kind="stable")
        codes, groups = np.take(codes, order, axis=1), groups[order]
        weights = None if weights is None else weights[order]
    bounds = np.searchsorted(groups, np.arange(count + 1)) if count > 1 else np.array([0, m])
    cells = [(j, v) for j, s in enumerate(sizes.tolist()) for v in range(s - 1)]
    step = max(256, min(PAIR_CHUNK_ROWS, GRAM_CHUNK_CELLS // width))
    onehot = np.ones((width, min(step, max(m, 1))), dtype=dtype)  # transposed; last row: ones
    reduced = np.zeros((count, width, width))
    scale = None if weights is None else weights.astype(dtype)
    bounds = bounds.tolist()
    with single_threaded_blas():  # a BLAS thread pool on a busy machine costs 10-70x the CPU
        for start in range(0, m, step):  # chunks of rows, each split at the groups' bounds
            stop = min(start + step, m)
            chunk = onehot[:, :stop - start]
            for k, (j, v) in enumerate(cells):
                np.equal(codes[j, start:stop], v, out=chunk[k], casting="unsafe")
            scaled = chunk if scale is None else chunk * scale[start:stop]
            g = max(i for i in range(count + 1) if bounds[i] <= start) if count > 1 else 0
            while g < count and bounds[g] < stop:
                a, b = max(bounds[g], start) - start, min(bounds[g + 1], stop) - start
                if b > a:
                    part = chunk[:, a:b]
                    reduced[g] += (part if scale is None else scaled[:, a:b]) @ part.T  # A @ A.T: one syrk
                g += 1
        expand = _expansion(sizes)
        return np.rint(np.matmul(expand.T, np.matmul(reduced, expand))).astype(np.int64)


def _expansion(sizes: np.ndarray) -> np.ndarray:
    """``E`` with ``onehot = reduced @ E``: reduced cells (each column's cells but its last,
    then a column of ones) by one-hot cells.

    >>> _expansion(np.array([3])).tolist()
    [[1.0, 0.0, -1.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]]
    """
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    column = np.repeat(np.arange(len(sizes)), sizes - 1)  # each reduced cell's column
    value = np.arange(len(column)) - (offsets[:-1] - np.arange(len(sizes)))[column]
    out = np.zeros((len(column) + 1, int(offsets[-1])))
    out[np.arange(len(column)), offsets[column] + value] = 1.0
    out[np.arange(len(column)), offsets[column + 1] - 1] = -1.0
    out[-1, offsets[1:] - 1] = 1.0
    return out
