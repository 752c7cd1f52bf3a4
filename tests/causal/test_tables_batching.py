"""Batched counting gives the same tables as counting each one: pairs, covers, grams,
batches of strata, bounded caches."""

from itertools import combinations

import numpy as np
import pytest

from privgraph.causal import NonPrivate, Tables, stable_pc_skeleton
from privgraph.causal import pc_counting as covers_module
from privgraph.causal.pc_counting import cover, covers_of, strata as count_strata, verdicts
from privgraph.data import tables as tables_module
from privgraph.data import Domain, NumpyEngine
from privgraph.data.rowsets import nonempty_strata
from privgraph.datasets import load_network, sample
from privgraph.privacy import SeededSampler
from privgraph.stats import ChiSquareTest, GTest, KendallTest, SpearmanTest


def wide_tables(monkeypatch, n=1500, seed=0):
    monkeypatch.setattr(tables_module, "MAX_JOINT_CELLS", 1)  # force the wide-table path
    net = load_network("child")
    engine = NumpyEngine(net.domain, sample(net, n, np.random.default_rng(seed)))
    return net, engine, Tables.from_engine(engine)


def test_pairs_and_covers_equal_direct_counts(monkeypatch):
    net, engine, t = wide_tables(monkeypatch)
    names = net.domain.names
    assert t.count_pairs()
    assert np.array_equal(t.table((names[3], names[1])), engine.counts((names[3], names[1])))
    assert cover(t, (names[0], names[2], names[5], names[7]))
    assert np.array_equal(t.table((names[0], names[7], names[2])), engine.counts((names[0], names[7], names[2])))
    assert cover(t, tuple(names))  # a row set, whatever its cells: no more rows than the data
    assert np.array_equal(t.table((names[0], names[9], names[4])), engine.counts((names[0], names[9], names[4])))


def test_caches_stay_within_their_budgets(monkeypatch):
    monkeypatch.setattr(tables_module, "CACHE_BUDGET_CELLS", 500)
    monkeypatch.setattr(covers_module, "COVER_BUDGET_BYTES", 20_000)
    monkeypatch.setattr(covers_module, "GRAM_BUDGET_CELLS", 30_000)
    net, engine, t = wide_tables(monkeypatch)
    sk = stable_pc_skeleton(net.domain.names, NonPrivate(t, GTest(), 0.05), max_cond_size=3)
    assert sk.n_tests > 100 and t._cache.size <= 500
    assert covers_of(t).size <= 20_000 and covers_of(t)._grams.size <= 30_000


def assert_strata_equal(t: Tables, engine, x, y, sets):
    strata, owner = count_strata(t, x, y, sets)
    for i, S in enumerate(sets):  # the same multiset of nonempty strata as counting the table
        want = nonempty_strata([engine.counts((x, y, *S))])[0]
        got = strata[owner == i]
        assert sorted(map(bytes, got.astype(np.int64))) == sorted(map(bytes, want))


@pytest.mark.parametrize("max_cells", [1, 1 << 22])  # wide (covers, grams, batches) and one joint table
def test_strata_equal_tables_counted_one_by_one(monkeypatch, max_cells):
    monkeypatch.setattr(tables_module, "MAX_JOINT_CELLS", max_cells)
    rng = np.random.default_rng(3)
    d = Domain.of(a=3, b=2, c=4, d=2, e=3, f=2)
    codes = rng.integers(0, d.sizes, size=(400, 6))
    codes[:, 1] = (codes[:, 0] + codes[:, 2]) % 2  # some dependence, some empty strata
    engine = NumpyEngine(d, codes)
    t = Tables.from_engine(engine, max_cells=max_cells)
    others = ["c", "d", "e", "f"]
    for level in (1, 2, 3):
        cover(t, ("a", "b", *others))
        assert_strata_equal(t, engine, "a", "b", list(combinations(others, level)))
    assert_strata_equal(t, engine, "e", "d", [("a", "f"), ("c", "b")])  # no cover of e: projected


def test_strata_of_a_subsample_and_of_compressed_ids(monkeypatch):
    monkeypatch.setattr(tables_module, "MAX_JOINT_CELLS", 1)
    from privgraph.data import rowsets

    monkeypatch.setattr(rowsets, "DENSE_CELLS", 8)  # force the sort that renumbers ids
    net = load_network("child")
    engine = NumpyEngine(net.domain, sample(net, 800, np.random.default_rng(4)))
    sub = Tables.from_engine(engine).subsample(500, SeededSampler(0))
    names = net.domain.names
    x, y, rest = names[0], names[1], names[2:8]
    sets = list(combinations(rest, 3))
    strata, owner = count_strata(sub, x, y, sets)
    for i, S in enumerate(sets):
        want = sub.table((x, y, *S))
        assert int(strata[owner == i].sum()) == 500
        assert sorted(map(bytes, strata[owner == i])) == sorted(map(bytes, nonempty_strata([want])[0]))


@pytest.mark.parametrize("test", [GTest(), GTest(degenerate="independent"), ChiSquareTest(), KendallTest(),
                                  SpearmanTest(degenerate="independent")])
def test_first_independent_equals_asking_in_order(monkeypatch, test):
    net, engine, t = wide_tables(monkeypatch, n=600, seed=5)
    names = net.domain.names
    decide = NonPrivate(t, test, 0.05)
    plain = NonPrivate(Tables.from_engine(engine), test, 0.05)
    for x, y in [(names[0], names[1]), (names[3], names[7]), (names[10], names[2])]:
        rest = [v for v in names if v not in (x, y)][:7]
        decide.focus(x, (y, *rest))
        for level in (1, 2):
            sets = list(combinations(rest, level))
            first = next((i for i, S in enumerate(sets) if plain(x, y, S)), None)
            assert decide.first_independent(x, y, sets) == first


def test_batched_pc_equals_unbatched_pc(monkeypatch):
    net, engine, t = wide_tables(monkeypatch, seed=1)

    class Plain(NonPrivate):  # no start_level/focus: every table counted on its own
        start_level = None
        focus = None

    fast = stable_pc_skeleton(net.domain.names, NonPrivate(t, GTest(), 0.05), max_cond_size=2)
    slow = stable_pc_skeleton(net.domain.names, Plain(Tables.from_engine(engine), GTest(), 0.05), max_cond_size=2)
    assert set(map(frozenset, fast.graph.edges)) == set(map(frozenset, slow.graph.edges))
    assert fast.n_tests == slow.n_tests


def test_duckdb_tables_come_from_one_query_of_distinct_rows(monkeypatch, tmp_path):
    """An out-of-core engine gives its distinct rows once; PC on them equals PC in memory."""
    import pandas as pd

    from privgraph.data.engines.duckdb_engine import DuckDBEngine

    net, engine, t = wide_tables(monkeypatch, n=1000, seed=2)
    d = net.domain
    frame = pd.DataFrame({c: np.asarray(d.levels[j], dtype=object)[engine.codes[:, j]] for j, c in enumerate(d.names)})
    frame.astype(str).to_parquet(tmp_path / "child.parquet")
    duck = DuckDBEngine(tmp_path / "child.parquet", d, invalid="recode")
    calls = []
    monkeypatch.setattr(DuckDBEngine, "counts", lambda self, *a, **k: calls.append(a))
    out = Tables.from_engine(duck)
    assert out.n == 1000 and out._distinct
    a = stable_pc_skeleton(d.names, NonPrivate(out, GTest(), 0.05), max_cond_size=2)
    b = stable_pc_skeleton(d.names, NonPrivate(t, GTest(), 0.05), max_cond_size=2)
    assert set(map(frozenset, a.graph.edges)) == set(map(frozenset, b.graph.edges)) and not calls


@pytest.mark.parametrize("test", [GTest(), KendallTest()])
def test_verdicts_from_grams_equal_deciding_each_table(monkeypatch, test):
    """Every table of a gram decided at once gives each table's own verdict; a side stops
    after the first run of sets (one prefix) with an independent verdict."""
    net, engine, t = wide_tables(monkeypatch, n=800, seed=6)
    names = net.domain.names
    decide = NonPrivate(t, test, 0.05)
    x, y, rest = names[1], names[3], [v for v in names if v not in (names[1], names[3])][:6]
    cover(t, (x, y, *rest))
    for level in (1, 2):
        sets = list(combinations(rest, level))
        got = verdicts(t, x, y, sets, decide._batch)
        want = [test.decide(engine.counts((x, y, *S)), 0.05).is_independent for S in sets]
        assert 0 < len(got) <= len(sets) and got.tolist() == want[:len(got)]
        prefixes = [S[:-1] for S in sets]
        if len(got) < len(sets):  # stopped: an independent verdict in the last run read
            assert any(got[prefixes.index(prefixes[len(got) - 1]):]) and prefixes[len(got)] != prefixes[len(got) - 1]
    assert len(verdicts(t, x, y, list(combinations(rest, 3)), decide._batch)) == 0  # level 3: no grams
