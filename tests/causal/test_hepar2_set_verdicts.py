"""Verdicts by set (every table of a cover given one conditioning set, decided at once and
kept) give PC exactly the skeleton, separating sets and test count of counting each side
in batches (the path they replace), and each table's own verdict; their caches stay
within budget."""

from itertools import combinations

import numpy as np
import pytest

from privgraph.causal import NonPrivate, Tables, stable_pc_skeleton
from privgraph.causal import pc_counting as covers_module
from privgraph.causal.pc_counting import Covers, cover, covers_of, set_verdicts
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.stats import ChiSquareTest, GTest, KendallTest

TESTS = [GTest(), GTest(degenerate="independent"), ChiSquareTest(), KendallTest()]


def engine_of(name: str, n: int, seed: int = 0) -> NumpyEngine:
    net = load_network(name)
    return NumpyEngine(net.domain, sample(net, n, np.random.default_rng(seed)))


def run(engine: NumpyEngine, test, depth: int):
    sk = stable_pc_skeleton(engine.domain.names, NonPrivate(Tables.from_engine(engine), test, 0.05),
                            max_cond_size=depth)
    return {frozenset(e) for e in sk.graph.edges}, sk.sepsets, sk.n_tests


def without_set_verdicts(monkeypatch):
    monkeypatch.setattr(Covers, "set_verdicts", lambda *a: np.zeros(0, dtype=bool))


@pytest.mark.parametrize("test", TESTS, ids=lambda t: f"{t.name}-{t.degenerate}")
@pytest.mark.parametrize("name,n,depth", [("hepar2", 10_000, 3), ("alarm", 10_000, 4), ("insurance", 5_000, 5)])
def test_pc_by_set_equals_pc_by_side(monkeypatch, name, n, depth, test):
    engine = engine_of(name, n)
    new = run(engine, test, depth)
    with monkeypatch.context() as m:
        without_set_verdicts(m)
        old = run(engine, test, depth)
    assert new == old


def test_small_budgets_change_nothing(monkeypatch):
    """Decisions flushed every few strata, no prefix ids or widened columns kept, few
    verdicts kept."""
    engine = engine_of("insurance", 3_000, seed=1)
    want = run(engine, GTest(), 4)
    monkeypatch.setattr(covers_module, "STRATA_BUDGET_CELLS", 50)
    monkeypatch.setattr(covers_module, "SET_BUDGET_IDS", 1)
    monkeypatch.setattr(covers_module, "DECIDE_CELLS", 50)
    monkeypatch.setattr(covers_module, "VERDICT_BUDGET_SETS", 3)
    tables = Tables.from_engine(engine)
    sk = stable_pc_skeleton(engine.domain.names, NonPrivate(tables, GTest(), 0.05), max_cond_size=4)
    assert ({frozenset(e) for e in sk.graph.edges}, sk.sepsets, sk.n_tests) == want
    assert covers_of(tables)._verdicts.size <= 3


@pytest.mark.parametrize("test", TESTS, ids=lambda t: f"{t.name}-{t.degenerate}")
def test_set_verdicts_equal_deciding_each_table(test):
    engine = engine_of("alarm", 2_000, seed=2)
    names = engine.domain.names
    tables = Tables.from_engine(engine)
    decide = NonPrivate(tables, test, 0.05)
    x, rest = names[5], names[10:19]
    assert cover(tables, (x, *rest))
    for y in rest[:3]:
        others = [v for v in rest if v != y]
        for level in (1, 3, 5):
            sets = list(combinations(others, level))
            got = set_verdicts(tables, x, y, sets, decide._batch)
            want = [test.decide(engine.counts((x, y, *S)), 0.05).is_independent for S in sets]
            assert 0 < len(got) <= len(sets) and got.tolist() == want[:len(got)]
            assert got[-1] or len(got) == len(sets)  # stops at the first independent one
    assert len(set_verdicts(tables, names[0], names[1], [(names[2],)], decide._batch)) == 0  # no cover


def plain_by_stratum(strata, pearson):
    """The statistics by stratum with numpy's reductions, as they were computed before."""
    rows, cols = strata.sum(axis=2), strata.sum(axis=1)
    n = rows.sum(axis=1).astype(np.float64)[:, None, None]
    e = np.divide(rows[:, :, None] * cols[:, None, :], n, out=np.zeros(strata.shape), where=n > 0)
    dofs = np.maximum((rows > 0).sum(axis=1) - 1, 0) * np.maximum((cols > 0).sum(axis=1) - 1, 0)
    if pearson:
        return np.divide((strata - e) ** 2, e, out=np.zeros(e.shape), where=e > 0).sum(axis=(1, 2)), dofs
    o = strata.astype(np.float64)
    ratio = np.divide(o, e, out=np.ones(o.shape), where=o > 0)
    return 2.0 * (o * np.log(ratio)).sum(axis=(1, 2)), dofs


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.float64])
def test_statistics_by_stratum_are_bitwise_those_of_plain_reductions(dtype):
    """Faster margins (slices added, one product per cell) and skipping the strata where
    x or y takes one value change no bit: verdicts on the edge of the threshold stay the
    same."""
    from privgraph.stats.gtest import chi_square_by_stratum, g_by_stratum

    rng = np.random.default_rng(7)
    for _ in range(300):
        shape = (int(rng.integers(1, 600)), int(rng.integers(1, 6)), int(rng.integers(1, 6)))  # both sides of _FEW_CELLS
        strata = (rng.integers(0, 300, shape) * (rng.random(shape) < rng.random())).astype(dtype)
        strata[0] = 0  # an empty stratum: no expected counts
        strata[-1, 1:] = 0  # x takes one value
        for fast, pearson in ((g_by_stratum, False), (chi_square_by_stratum, True)):
            (a, da), (b, db) = fast(strata), plain_by_stratum(strata, pearson)
            assert a.tobytes() == b.tobytes() and np.array_equal(da, db)
