"""Secret sub-samples, of rows or directly of a table of counts.

Amplification by sub-sampling holds only if nobody knows which rows were drawn, so every
draw comes from a :class:`~privgraph.privacy.samplers.NoiseSampler`: by default a fresh
:class:`~privgraph.privacy.samplers.SecureSampler` (OS entropy, cannot be seeded); a
:class:`~privgraph.privacy.samplers.SeededSampler` makes experiments reproducible and is
not private. No engine's own SAMPLE clause is used: those are either not exact or not
reproducible.

Two designs, matching the two amplification theorems:

* **Poisson** (each row independently with probability ``rate``): the matching theorem is
  for add/remove neighbours. On a table, Poisson sampling of rows is exactly *binomial
  thinning* of each cell: ``Binomial(count, rate)`` per cell, independently.
* **Exactly m without replacement**: the matching theorem is for replace-one neighbours.
  On a table it is exactly a *multivariate hypergeometric* draw of ``m`` from the cells.

Every draw is exact, not a floating-point approximation of the law the theorem assumes
(see "Exact secret selections" in :mod:`privgraph.privacy.samplers`). The table versions
never materialise the rows: they cost O(cells) memory and about N/8 random 64-bit words
for N rows (a few milliseconds per million rows), so a sub-sample can be refreshed many
times. Draw once per round on the joint table of the round, then take every
table of the round as a marginal of it (all queries then see the same sub-sample).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from privgraph.privacy.neighbours import check_rate
from privgraph.privacy.samplers import NoiseSampler, SecureSampler
from privgraph.validation import InvalidInput, positive_int


def poisson_rows(n: int, rate: float, *, sampler: NoiseSampler | None = None) -> np.ndarray:
    """Indices (increasing) of a Poisson sub-sample of ``n`` rows: each kept with prob. ``rate``.

    Exact for the float ``rate`` (:meth:`~privgraph.privacy.samplers.NoiseSampler.bernoulli`).

    Examples
    --------
    >>> from privgraph.privacy.samplers import SeededSampler
    >>> rows = poisson_rows(1000, 0.1, sampler=SeededSampler(0))
    >>> bool((np.diff(rows) > 0).all()), 50 < len(rows) < 150
    (True, True)
    """
    n, rate = positive_int("n", n, 0), check_rate(rate)
    return np.flatnonzero(_sampler(sampler).bernoulli(rate, n))


def rows_without_replacement(n: int, m: int, *, sampler: NoiseSampler | None = None) -> np.ndarray:
    """Indices (increasing) of exactly ``m`` of ``n`` rows, drawn uniformly without replacement.

    >>> from privgraph.privacy.samplers import SeededSampler
    >>> len(rows_without_replacement(10, 4, sampler=SeededSampler(1)))
    4
    >>> rows_without_replacement(3, 4)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: cannot draw m=4 rows without replacement from n=3
    """
    parts = list(rows_without_replacement_chunks(n, m, sampler=sampler))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


#: Rows per chunk of a streamed selection (:func:`rows_without_replacement_chunks`,
#: :func:`block_label_chunks`): the memory of a draw, whatever the number of rows.
SELECTION_CHUNK = 1 << 20


def rows_without_replacement_chunks(n: int, m: int, *, sampler: NoiseSampler | None = None,
                                    chunk: int = SELECTION_CHUNK) -> Iterator[np.ndarray]:
    """:func:`rows_without_replacement`'s ``m`` of ``n`` rows, chunk by chunk: the increasing
    indices among rows ``[k chunk, (k + 1) chunk)`` for k = 0, 1, ... (an empty chunk is
    skipped), so that a selection can be streamed into an engine in O(chunk) memory.

    Exact: how many of a uniform m-subset fall in each chunk is one multivariate
    hypergeometric draw over the chunks' sizes, and given those counts the rows within each
    chunk are independent uniform subsets of their sizes: the law of a uniform m-subset,
    factorised. One chunk (``n <= chunk``) is one draw of m of n, as before the chunks.

    >>> from privgraph.privacy.samplers import SeededSampler
    >>> parts = list(rows_without_replacement_chunks(10, 6, sampler=SeededSampler(1), chunk=4))
    >>> sum(len(p) for p in parts), all(((p >= 0) & (p < 10)).all() for p in parts)
    (6, True)
    >>> np.concatenate(parts).tolist() == sorted(set(np.concatenate(parts).tolist()))
    True
    """
    n, m, chunk = positive_int("n", n, 0), positive_int("m", m, 0), positive_int("chunk", chunk)
    if m > n:
        raise InvalidInput(f"cannot draw m={m} rows without replacement from n={n}")
    draw = _sampler(sampler)
    if n <= chunk:
        if m:
            yield np.sort(draw.choice(n, m)).astype(np.int64)
        return
    sizes = _chunk_sizes(n, chunk)
    for k, (size, taken) in enumerate(zip(sizes, draw.multivariate_hypergeometric(sizes, m))):
        if taken:
            yield np.sort(draw.choice(int(size), int(taken))).astype(np.int64) + k * chunk


def block_label_chunks(n: int, count: int, *, sampler: NoiseSampler | None = None,
                       chunk: int = SELECTION_CHUNK) -> Iterator[np.ndarray]:
    """A uniform partition of ``n`` rows into ``count`` disjoint blocks of ``n // count`` rows
    (the rest in none), as each row's block (``count`` for none), chunk by chunk of rows as
    :func:`rows_without_replacement_chunks`: int16 labels when they fit.

    Exact: the labels are a uniform arrangement of the multiset of ``n // count`` of each
    block and the rest of ``count``. Its first chunk holds a multivariate hypergeometric
    draw of each label from the whole multiset, arranged uniformly within the chunk; the rest
    is again a uniform arrangement of what is left (and so on). One chunk is the arrangement
    by one permutation, the row at the permutation's position j in block j // size.

    >>> from privgraph.privacy.samplers import SeededSampler
    >>> labels = np.concatenate(list(block_label_chunks(11, 3, sampler=SeededSampler(2), chunk=4)))
    >>> len(labels), np.bincount(labels, minlength=4).tolist()
    (11, [3, 3, 3, 2])
    """
    n, count, chunk = positive_int("n", n, 0), positive_int("count", count), positive_int("chunk", chunk)
    size = n // count
    dtype = np.int16 if count < 2**15 else np.int64
    draw = _sampler(sampler)
    left = np.array([size] * count + [n - size * count], dtype=np.int64)
    for start in range(0, n, chunk):
        rows = min(chunk, n - start)
        if rows == n:  # one chunk: one permutation
            labels = np.empty(n, dtype=dtype)
            labels[draw.permutation(n)] = np.repeat(np.arange(count + 1, dtype=dtype), left)
            yield labels
            return
        taken = left if rows == int(left.sum()) else draw.multivariate_hypergeometric(left, rows).astype(np.int64)
        left = left - taken
        yield np.repeat(np.arange(count + 1, dtype=dtype), taken)[draw.permutation(rows)]


def _chunk_sizes(n: int, chunk: int) -> np.ndarray:
    """The sizes of the chunks of ``n`` rows (all ``chunk`` but the last)."""
    sizes = np.full(-(-n // chunk), chunk, dtype=np.int64)
    sizes[-1] = n - chunk * (len(sizes) - 1)
    return sizes


def poisson_table(table: np.ndarray, rate: float, *, sampler: NoiseSampler | None = None) -> np.ndarray:
    """The table of a Poisson sub-sample at ``rate``: binomial thinning of every cell.

    Exact: each cell's count is the number of exact Bernoulli(rate) successes among its
    rows (:meth:`~privgraph.privacy.samplers.NoiseSampler.binomial`).

    >>> from privgraph.privacy.samplers import SeededSampler
    >>> t = poisson_table(np.array([[100, 0], [5, 7]]), 0.5, sampler=SeededSampler(2))
    >>> t.shape, int(t[0, 1]), bool((t <= [[100, 0], [5, 7]]).all())
    ((2, 2), 0, True)
    """
    table, rate = check_table(table), check_rate(rate)
    return _sampler(sampler).binomial(table, rate).astype(np.int64)


def table_without_replacement(
    table: np.ndarray, m: int, *, sampler: NoiseSampler | None = None
) -> np.ndarray:
    """The table of exactly ``m`` rows drawn without replacement: multivariate hypergeometric.

    Exact: the counts of a uniform m-subset of the table's rows
    (:meth:`~privgraph.privacy.samplers.NoiseSampler.multivariate_hypergeometric`).

    >>> from privgraph.privacy.samplers import SeededSampler
    >>> t = table_without_replacement(np.array([[100, 0], [5, 7]]), 10, sampler=SeededSampler(3))
    >>> int(t.sum()), int(t[0, 1])
    (10, 0)
    """
    table, m = check_table(table), positive_int("m", m, 0)
    if m > table.sum():
        raise InvalidInput(f"cannot draw m={m} rows without replacement from a table of {table.sum()} rows")
    return _sampler(sampler).multivariate_hypergeometric(table, m).astype(np.int64)


def check_table(table) -> np.ndarray:
    """A table of counts: a non-negative integer ndarray with at least one cell.

    >>> check_table([[1, -1]])
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: a table of counts must hold non-negative integers, got min -1
    """
    table = np.asarray(table)
    if table.size == 0 or not np.issubdtype(table.dtype, np.integer):
        raise InvalidInput(f"a table of counts must be a non-empty integer array, got {table.dtype} {table.shape}")
    if table.min() < 0:
        raise InvalidInput(f"a table of counts must hold non-negative integers, got min {table.min()}")
    return table


def _sampler(sampler: NoiseSampler | None) -> NoiseSampler:
    if sampler is None:
        return SecureSampler()
    if not isinstance(sampler, NoiseSampler):
        raise TypeError(f"sampler must be a NoiseSampler (SecureSampler or SeededSampler), got {sampler!r}")
    return sampler
