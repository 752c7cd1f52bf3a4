"""Batched counting gives the same tables as counting each one: pairs, covers, bounded caches."""

import numpy as np

from privgraph.causal import NonPrivate, Tables, stable_pc_skeleton
from privgraph.data import tables as tables_module
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.stats import GTest


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
    assert t.cover((names[0], names[2], names[5], names[7]))
    assert np.array_equal(t.table((names[0], names[7], names[2])), engine.counts((names[0], names[7], names[2])))
    assert not t.cover(tuple(names))  # too many cells: nothing counted


def test_caches_stay_within_their_budgets(monkeypatch):
    monkeypatch.setattr(tables_module, "CACHE_BUDGET_CELLS", 500)
    monkeypatch.setattr(tables_module, "COVER_BUDGET_CELLS", 2000)
    net, engine, t = wide_tables(monkeypatch)
    sk = stable_pc_skeleton(net.domain.names, NonPrivate(t, GTest(), 0.05), max_cond_size=2)
    assert sk.n_tests > 100 and t._cache.size <= 500 and t._covers.size <= 2000


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
