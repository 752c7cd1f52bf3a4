"""Count tables for the PC family: one joint table when it fits, marginals from it.

Every test of a PC run reads a table over ``(x, y, *S)``. When the joint table over all
variables is small enough (:data:`MAX_JOINT_CELLS`), it is counted once and every table
is a marginal of it, so a run's cost grows with the number of tables, not rows times
tests. Otherwise each table is counted by the engine.

Secret sub-samples (exactly m of n rows, the replace-one design) are drawn from the
privacy core's sampler: a multivariate hypergeometric draw from the joint table, or a
row selection when there is no joint table. Disjoint blocks (subsample-and-aggregate) are
successive draws without replacement, i.e. a uniformly random partition.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from privgraph.data import CountEngine, marginal, rows_without_replacement, table_without_replacement
from privgraph.privacy import NoiseSampler

#: Largest joint table (cells) counted once and kept in memory.
MAX_JOINT_CELLS = 1 << 22


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
        self._cache: dict[tuple[str, ...], np.ndarray] = {}

    @classmethod
    def from_engine(cls, engine: CountEngine, *, max_cells: int = MAX_JOINT_CELLS) -> "Tables":
        """Tables of the whole dataset behind ``engine`` (the joint table counted if it fits)."""
        names = engine.domain.names
        if engine.domain.cells(names) <= max_cells:
            joint = np.asarray(engine.counts(names), dtype=np.int64)
            return cls(engine, int(joint.sum()), joint)
        return cls(engine, int(engine.counts([])), None)

    @property
    def names(self) -> tuple[str, ...]:
        return self.domain.names

    def shape(self, columns: Sequence[str]) -> tuple[int, ...]:
        """Shape of the table over ``columns`` (public: from the domain)."""
        return tuple(self.domain.size_of(c) for c in columns)

    def table(self, columns: Sequence[str]) -> np.ndarray:
        """Counts over ``columns``, in that order (cached)."""
        key = tuple(columns)
        if key not in self._cache:
            if self._joint is not None:
                self._cache[key] = marginal(self._joint, self.names, key)
            else:
                self._cache[key] = np.asarray(self.engine.counts(key, self._rows), dtype=np.int64)
        return self._cache[key]

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


class Blocks:
    """Disjoint blocks of one dataset; ``table(columns)`` stacks the blocks' tables."""

    def __init__(self, parts: list[Tables]):
        self.parts = parts
        self.count = len(parts)
        self.n = sum(p.n for p in parts)

    def table(self, columns: Sequence[str]) -> np.ndarray:
        return np.stack([p.table(columns) for p in self.parts])
