"""Secret row selections drawn chunk by chunk, and held by an out-of-core engine when it has
too many distinct rows to fetch: the same draws as in memory, never held in Python."""

import gc
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from privgraph.data import Domain, DuckDBEngine, NumpyEngine
from privgraph.data import sampling
from privgraph.data import tables as tables_module
from privgraph.data.engines.duckdb_engine import HeldRows
from privgraph.data.engines.spark_engine import SparkHeldRows
from privgraph.data.sampling import block_label_chunks, rows_without_replacement_chunks
from privgraph.data.tables import HeldBlocks, Tables
from privgraph.privacy import SeededSampler

from tests.data.conftest import requires_spark

DRAWS = 6000


def _chi_square_bound(cells: int, draws: int) -> float:
    """A bound that Pearson's statistic of ``draws`` uniform draws over ``cells`` cells
    exceeds with probability about 1e-9: the Laurent-Massart tail
    ``P(X >= k + 2 sqrt(k t) + 2 t) <= exp(-t)`` of a chi-square with k = cells - 1 degrees
    of freedom, t = ln(1e9) (the statistic is asymptotically chi-square; here with at least
    100 expected draws a cell)."""
    k, t = cells - 1, math.log(1e9)
    return k + 2 * math.sqrt(k * t) + 2 * t


def _uniform(outcomes: list, support: int) -> None:
    counts = np.array(list(pd.Series([tuple(o) for o in outcomes]).value_counts()))
    assert len(counts) == support
    expected = len(outcomes) / support
    stat = float(((counts - expected) ** 2 / expected).sum())
    assert stat < _chi_square_bound(support, len(outcomes)), stat


def test_chunked_rows_are_a_uniform_subset():
    """Every 3-subset of 7 rows in chunks of 2 (four chunks, the last of one row) equally often."""
    draws = [np.concatenate(list(rows_without_replacement_chunks(7, 3, sampler=SeededSampler(s), chunk=2)))
             for s in range(DRAWS)]
    assert all(len(d) == 3 and len(set(d.tolist())) == 3 for d in draws)
    _uniform(draws, math.comb(7, 3))


def test_chunked_block_labels_are_a_uniform_partition():
    """Two blocks of 2 rows of 5 (one row in none) in chunks of 2: each of the 5!/(2!2!1!) = 30
    arrangements equally often."""
    draws = [np.concatenate(list(block_label_chunks(5, 2, sampler=SeededSampler(s), chunk=2)))
             for s in range(DRAWS)]
    assert all(sorted(d.tolist()) == [0, 0, 1, 1, 2] for d in draws)
    _uniform(draws, 30)


def test_one_chunk_is_the_draw_before_chunks():
    """A selection within one chunk is the unchunked draw (same seed, same rows and blocks)."""
    rows = next(rows_without_replacement_chunks(50, 20, sampler=SeededSampler(4)))
    assert rows.tolist() == np.sort(SeededSampler(4).choice(50, 20)).tolist()
    labels = next(block_label_chunks(10, 3, sampler=SeededSampler(5)))
    perm = SeededSampler(5).permutation(10)
    assert all(labels[perm[j]] == min(j // 3, 3) for j in range(10))


@pytest.fixture(params=["duckdb", pytest.param("spark", marks=requires_spark)])
def wide(tmp_path, monkeypatch, request):
    """A table with mostly distinct rows over a domain too large for a joint table (7.5M
    cells), as a Parquet file (through DuckDB, then Spark) and in memory; no distinct rows
    fetched from the file (the bound set to none); selections in chunks of 64 rows."""
    monkeypatch.setattr(tables_module, "DISTINCT_ROWS_BYTES", 0)
    for f in (rows_without_replacement_chunks, block_label_chunks):
        monkeypatch.setitem(f.__kwdefaults__, "chunk", 64)
    n, sizes = 600, (4, 3, 5, 50, 50, 50)
    rng = np.random.default_rng(8)
    levels = tuple(tuple(f"l{k}" for k in range(size)) for size in sizes)
    d = Domain(("a", "b", "c", "id", "e", "f"), sizes, levels=levels)
    codes = np.column_stack([rng.integers(0, size, n) for size in sizes])
    codes[:, 1] = np.where(rng.random(n) < 0.7, codes[:, 0] % 3, codes[:, 1])  # dependent columns
    codes[:, 2] = np.where(rng.random(n) < 0.7, codes[:, 1], codes[:, 2])
    path = tmp_path / "w.parquet"
    frame = {name: np.array(lv)[codes[:, j]] for j, (name, lv) in enumerate(zip(d.names, levels))}
    pd.DataFrame(frame).to_parquet(path)
    memory = Tables.from_engine(NumpyEngine(d, codes))
    if request.param == "spark":
        from privgraph.data import SparkEngine

        scratch = tmp_path / "scratch"
        scratch.mkdir()
        engine = SparkEngine(path, d, spark=request.getfixturevalue("spark"), scratch=str(scratch))
    else:
        engine = DuckDBEngine(path, d, invalid="drop")
    return memory, Tables.from_engine(engine)


HELD = (HeldRows, SparkHeldRows)


SETS = [("a",), ("b", "a"), ("c", "a", "b"), ("id", "a"), ()]


def test_the_engine_holds_the_same_draws_as_memory(wide):
    memory, disk = wide
    assert memory.n == disk.n and memory._joint is None and not disk._has_fetched_rows
    for draw in (lambda t: t.subsample(200, SeededSampler(1)),
                 lambda t: t.subsample(200, SeededSampler(1)).subsample(90, SeededSampler(2))):
        a, b = draw(memory), draw(disk)
        assert isinstance(b._rows, HELD) and isinstance(a._rows, np.ndarray)  # held by the engine, not here
        for s in SETS:
            assert (a.table(s) == b.table(s)).all(), s
        assert int(b.table(()).sum()) == b.n
    for draw in (lambda t: t.blocks(4, SeededSampler(3)),
                 lambda t: t.subsample(300, SeededSampler(1)).blocks(5, SeededSampler(6))):
        a, b = draw(memory), draw(disk)
        assert isinstance(b, HeldBlocks) and a.count == b.count and a.n == b.n
        for s in SETS:
            assert (a.table(s) == b.table(s)).all(), s


def test_tables_of_a_file_without_fetched_rows_come_in_one_grouped_query(wide, monkeypatch):
    """Beyond the distinct rows an engine fetches, a batch of tables (the release's every
    pair, ``count_tables``) is one GROUPING SETS query, not a query a table: the same tables
    as in memory, a set and its permutation counted once."""
    from privgraph.data.tables import count_tables

    memory, disk = wide
    engine = type(disk.engine)
    sets = [("a",), ("b", "a"), ("a", "b"), ("c", "a", "b"), ("id", "a"), ("e", "f"), ()]
    calls, many, counts = [], engine.counts_many, engine.counts

    def one(self, columns, rows=None):  # the number of rows (from_engine) is the one query of its own
        assert not columns, f"a query for the table over {columns}"
        return counts(self, columns, rows)

    monkeypatch.setattr(engine, "counts", one)
    monkeypatch.setattr(engine, "counts_many", lambda self, s: calls.append(list(s)) or many(self, s))
    for s, t in zip(sets, disk.tables(sets)):
        assert t.shape == memory.shape(s) and (t == memory.table(s)).all(), s
    assert len(calls) == 1 and len(calls[0]) == 6
    monkeypatch.setattr(tables_module, "DISTINCT_ROWS_BYTES", 0)
    pairs = list(itertools.combinations(memory.names, 2))
    calls.clear()
    for p, t in zip(pairs, count_tables(disk.engine, pairs)):
        assert (t == memory.table(p)).all(), p
    assert len(calls) == 1


def test_a_held_selection_is_dropped_with_its_tables(wide):
    _, disk = wide
    if isinstance(disk.engine, DuckDBEngine):
        con = disk.engine._con
        held = lambda: {r[0] for r in con.execute(  # noqa: E731
            "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'privgraph_held_%'").fetchall()}
    else:  # Spark's held selections: Parquet folders in the engine's scratch folder
        from pathlib import Path

        held = lambda: set(Path(disk.engine.scratch).glob("privgraph-held-*"))  # noqa: E731
    before = held()
    sub = disk.subsample(100, SeededSampler(0))
    blocks = sub.blocks(3, SeededSampler(1))
    assert len(held() - before) == 2 and sub.table(("a",)).sum() == 100
    del sub, blocks
    gc.collect()
    assert held() == before


def test_priv_pc_through_a_held_selection_is_the_in_memory_run(wide):
    """Priv-PC's sieve sub-samples and the G test's blocks through DuckDB-held selections: the
    graph of the same seeded run in memory."""
    from privgraph.causal import PrivPC

    memory, disk = wide
    graphs = []
    for tables in (memory, disk):
        for test in ("kendall", "g"):
            est = PrivPC(epsilon=40.0, ci_test=test, random_state=3, max_cond_size=1)
            graphs.append(sorted(map(sorted, est.fit(tables.engine).skeleton_.edges())))
    assert graphs[:2] == graphs[2:]


@requires_spark
def test_spark_numbers_the_rows_of_many_partitions_in_file_order(tmp_path, request):
    """Spark numbers the complete rows partition by partition on the executors (each
    partition's rows counted once): with a file split into many partitions (row groups of 50
    rows, 2 KB splits) and incomplete rows dropped, a selection counts the rows that memory
    counts at the same positions."""
    from privgraph.data import SparkEngine

    spark = request.getfixturevalue("spark")
    rng = np.random.default_rng(3)
    n = 2000
    frame = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["p", "q"], n)})
    frame.loc[rng.choice(n, 40, replace=False), "b"] = None
    frame.to_parquet(tmp_path / "p.parquet", row_group_size=50)
    complete = frame.dropna()
    memory = NumpyEngine.from_frame(complete)
    old = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "2k")
    try:
        engine = SparkEngine(tmp_path / "p.parquet", memory.domain, missing="drop", spark=spark, scratch=str(tmp_path))
        parts = engine._numbered().rdd.getNumPartitions()
        rows = np.sort(rng.choice(len(complete), 300, replace=False))
        for columns in (["a"], ["b", "a"]):
            assert (engine.counts(columns, rows=rows) == memory.counts(columns, rows=rows)).all(), columns
        first = engine.counts(["a", "b"], rows=np.arange(10))  # the first ten complete rows, in file order
        assert (first == memory.counts(["a", "b"], rows=np.arange(10))).all()
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", old)
    assert parts > 4


def test_an_empty_selection_counts_no_row(wide):
    _, disk = wide
    assert disk.engine.counts(["a"], rows=np.zeros(0, dtype=np.int64)).tolist() == [0, 0, 0, 0]


@requires_spark
def test_a_draw_that_fails_half_way_leaves_no_folder(tmp_path, request):
    from pathlib import Path

    from privgraph.data import SparkEngine

    pd.DataFrame({"a": ["x", "y", "x"]}).to_parquet(tmp_path / "t.parquet")
    engine = SparkEngine(tmp_path / "t.parquet", Domain(("a",), (2,), levels=(("x", "y"),)),
                         spark=request.getfixturevalue("spark"), scratch=str(tmp_path))

    def failing():
        yield np.array([0, 1]), None
        raise RuntimeError("the draw failed")

    with pytest.raises(RuntimeError, match="the draw failed"):
        engine.hold(failing())
    assert not list(Path(tmp_path).glob("privgraph-held-*"))


def test_sampling_chunk_is_the_default():
    assert rows_without_replacement_chunks.__kwdefaults__["chunk"] == sampling.SELECTION_CHUNK
    assert list(itertools.islice(block_label_chunks(3, 1, sampler=SeededSampler(0)), 2))[0].dtype == np.int16
