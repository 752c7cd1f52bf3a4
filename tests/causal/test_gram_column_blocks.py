"""The tables of a gram decided as column blocks: the same statistics, bit for bit, and the
same verdicts as their strata gathered one table at a time."""

import numpy as np
import pytest

from privgraph.causal import NonPrivate, Tables
from privgraph.data import Domain, NumpyEngine
from privgraph.causal.pc_counting import Covers
from privgraph.data.rowsets import grouped_grams
from privgraph.stats import ChiSquareTest, GTest
from privgraph.stats.gtest import ColumnBlocks, chi_square_by_stratum, g_by_stratum


@pytest.mark.parametrize("by_stratum", [g_by_stratum, chi_square_by_stratum])
def test_column_blocks_give_the_strata_statistics_bit_for_bit(by_stratum):
    rng = np.random.default_rng(3)
    for _ in range(40):
        r, widths = int(rng.integers(1, 5)), rng.integers(1, 6, size=int(rng.integers(1, 5)))
        bounds = np.concatenate([[0], np.cumsum(widths)]) + int(rng.integers(0, 3))
        counts = rng.poisson(rng.choice([0.2, 3.0, 60.0]), size=(int(rng.integers(1, 30)), r, bounds[-1]))
        counts[rng.random(counts.shape[0]) < 0.3] = 0  # empty strata
        stats, dofs = by_stratum(ColumnBlocks(counts, bounds))
        for g, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
            want_stats, want_dofs = by_stratum(np.ascontiguousarray(counts[:, :, lo:hi]))
            part = slice(g * counts.shape[0], (g + 1) * counts.shape[0])
            assert stats[part].tobytes() == want_stats.tobytes()
            assert dofs[part].tolist() == want_dofs.tolist()


@pytest.mark.parametrize("test", [GTest(), GTest(degenerate="independent"), ChiSquareTest()])
def test_gram_verdicts_by_blocks_equal_those_by_strata(test):
    rng = np.random.default_rng(5)
    names, sizes = ("x", "p", "a", "b", "c"), (3, 2, 2, 4, 3)
    rows = np.asfortranarray(np.stack([rng.integers(0, s, size=400) for s in sizes], axis=1))
    rows[:, 2] = (rows[:, 1] + (rng.random(400) < 0.2)) % 2  # a dependent pair
    cover = Covers(Domain(names, sizes), lambda: None)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    decide = NonPrivate(Tables.from_engine(NumpyEngine(Domain(names, sizes), rows)), test, 0.05)._batch
    assert decide.takes_blocks

    class ByStrata:  # the same test, without the column blocks
        def __call__(self, strata, owner, count):
            return decide(strata, owner, count)

    for prefix in ((), ("p",)):
        groups = rows[:, 0] * (2 if prefix else 1) + (rows[:, 1] if prefix else 0)
        grams = grouped_grams(rows, None, groups, 6 if prefix else 3, range(5), sizes)
        meaningful = np.array([[i > 0 and j > 0 and i != j and not {names[i], names[j]} & set(prefix)
                                for j in range(5)] for i in range(5)])
        blocks = cover._decide_gram(names, grams, offsets, decide, 1)
        strata = cover._decide_gram(names, grams, offsets, ByStrata(), 1)
        assert blocks[meaningful].tolist() == strata[meaningful].tolist()
        for first in (2, 4):  # the rows from first on: the same
            for way in (decide, ByStrata()):
                rows = cover._decide_gram(names, grams, offsets, way, first)
                assert rows[first:][meaningful[first:]].tolist() == strata[first:][meaningful[first:]].tolist()
