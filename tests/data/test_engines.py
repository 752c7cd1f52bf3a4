import gc
import re
import weakref

import numpy as np
import pandas as pd
import pytest

from privgraph.data import (
    Domain, DuckDBEngine, NumpyEngine, SparkEngine, count_tables, group_by_query, table_without_replacement,
)
from privgraph.data.engines import numpy_engine
from privgraph.causal.pc_counting import cover  # PC's covers: held by the Tables, reaching it weakly
from privgraph.data.tables import Tables
from privgraph.privacy import SeededSampler
from tests.data.conftest import requires_spark

COLUMN_SETS = [("a",), ("b", "a"), ("c", "a", "d"), ("d", "c", "b", "a"), ()]


def brute_counts(codes: np.ndarray, domain: Domain, columns) -> np.ndarray:
    t = np.zeros(domain.project(columns).shape, dtype=np.int64)
    np.add.at(t, tuple(codes[:, domain.index(c)] for c in columns), 1)
    return t


def random_frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": rng.choice(["no", "yes"], n),
            "b": rng.integers(0, 4, n),
            "c": rng.choice(["lo", "mid", "hi"], n),
            "d": rng.integers(10, 13, n),
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    df = random_frame()
    root = tmp_path_factory.mktemp("engines")
    df.to_parquet(root / "d.parquet")
    df.to_csv(root / "d.csv", index=False)
    return df, root


@pytest.mark.parametrize("joint_cells", [0, 10**6])  # tables counted on their own / from one joint
def test_numpy_counts_equal_brute_force_in_any_column_order(monkeypatch, joint_cells):
    monkeypatch.setattr(numpy_engine, "CHUNK_ROWS", 1000)  # several chunks
    rng = np.random.default_rng(1)
    d = Domain.of(a=2, b=3, c=5, d=7)
    codes = np.column_stack([rng.integers(0, s, 5555) for s in d.sizes])
    e = NumpyEngine(d, codes)
    mask = rng.random(5555) < 0.3
    for cols in COLUMN_SETS[:-1]:
        assert np.array_equal(e.counts(cols), brute_counts(codes, d, cols))
        assert np.array_equal(e.counts(cols, rows=mask), brute_counts(codes[mask], d, cols))
        assert np.array_equal(e.counts(cols, rows=np.flatnonzero(mask)), brute_counts(codes[mask], d, cols))
    assert int(e.counts([])) == 5555 and int(e.counts([], rows=mask)) == mask.sum()
    batch = count_tables(e, COLUMN_SETS[:-1], max_cells=joint_cells)  # the one table object's batch
    assert all(np.array_equal(t, brute_counts(codes, d, cols)) for t, cols in zip(batch, COLUMN_SETS[:-1]))


def test_batch_of_tables_is_marginals_of_one_joint():
    rng = np.random.default_rng(2)
    d = Domain.of(a=2, b=3, c=2, d=4)
    e = NumpyEngine(d, np.column_stack([rng.integers(0, s, 999) for s in d.sizes]))
    sets = [("a", "b"), ("d", "a"), ("c",), ("b", "c", "d")]
    for max_cells in (10**6, 4):  # one joint table, then table by table
        got = count_tables(e, sets, max_cells=max_cells)
        assert all(np.array_equal(g, e.counts(s)) for g, s in zip(got, sets))


def test_all_engines_give_identical_tables(files, spark):
    df, root = files
    rows = np.flatnonzero(np.random.default_rng(3).random(len(df)) < 0.2)
    mem = NumpyEngine.from_frame(df)
    duck = [DuckDBEngine(root / "d.parquet", memory_limit="256MB"), DuckDBEngine(root / "d.csv")]
    sparks = [SparkEngine(root / "d.parquet", spark=spark)]
    for e in duck + sparks:
        assert e.domain == mem.domain and e.domain.levels == mem.domain.levels
    for e, sets in [(duck[0], COLUMN_SETS), (duck[1], COLUMN_SETS), (sparks[0], COLUMN_SETS[3:])]:
        for cols in sets:  # Spark: the joint table (every other is a marginal of it) and n
            assert np.array_equal(e.counts(cols), mem.counts(cols)), (e, cols)
    for e in (duck[0], sparks[0]):
        cols = COLUMN_SETS[3]
        assert np.array_equal(e.counts(cols, rows=rows), mem.counts(cols, rows=rows)), (e, cols)


def test_engines_drop_the_same_incomplete_rows(tmp_path, spark):
    df = random_frame(400, seed=4)
    df.loc[[3, 50, 51], "c"] = None
    df.loc[[7, 50], "b"] = None
    df["b"] = df["b"].astype("Int64")
    df.to_parquet(tmp_path / "m.parquet")
    mem = NumpyEngine.from_frame(df, missing="drop")
    rows = np.arange(0, 396, 3)
    for e in (DuckDBEngine(tmp_path / "m.parquet", missing="drop"),
              SparkEngine(tmp_path / "m.parquet", missing="drop", spark=spark)):
        assert np.array_equal(e.counts(["c", "b"]), mem.counts(["c", "b"]))
        assert np.array_equal(e.counts(["a", "c"], rows=rows), mem.counts(["a", "c"], rows=rows))
    with pytest.raises(ValueError, match="column 'b' has 2 missing value"):
        DuckDBEngine(tmp_path / "m.parquet")


@requires_spark
def test_spark_codes_only_the_values_of_complete_rows(tmp_path, spark):
    """Spark's first scan collects each column's values in all rows; where a row is dropped as
    incomplete, a value that only it holds (here outside the levels) is no error, and the
    distinct rows and the number of complete rows are the in-memory engine's."""
    df = random_frame(400, seed=4)
    domain = NumpyEngine.from_frame(df).domain
    df.loc[[3, 50], "c"] = None
    df.loc[50, "a"] = "maybe"  # outside a's levels, in a row that is dropped
    df.to_parquet(tmp_path / "m.parquet")
    mem = NumpyEngine.from_frame(df.dropna(), domain=domain)
    spark_engine = SparkEngine(tmp_path / "m.parquet", domain, missing="drop", spark=spark)
    got, counts = spark_engine.distinct_rows(10**6)
    want, n = np.unique(mem.codes, axis=0, return_counts=True)
    assert sorted(zip(map(tuple, got.tolist()), counts.tolist())) == sorted(zip(map(tuple, want.tolist()), n.tolist()))
    assert int(spark_engine.counts([])) == int(mem.counts([])) == 398
    df.loc[51, "a"] = "maybe"  # now in a complete row: the error that names the column
    df.to_parquet(tmp_path / "bad.parquet")
    bad = SparkEngine(tmp_path / "bad.parquet", domain, missing="drop", spark=spark)
    with pytest.raises(ValueError, match="column 'a' holds value 'maybe' not among its levels"):
        bad.distinct_rows(10**6)


@requires_spark
def test_spark_over_a_dataframe_needs_a_domain(spark):
    sdf = spark.createDataFrame(pd.DataFrame({"a": ["x", "y", "x"]}))
    with pytest.raises(ValueError, match="needs its domain"):
        SparkEngine(sdf, spark=spark)
    d = Domain(("a",), (2,), levels=(("x", "y"),))
    assert SparkEngine(sdf, d, spark=spark).counts(["a"]).tolist() == [2, 1]


def test_one_group_by_query_for_both_sql_engines():
    assert group_by_query("src", ["x", 'we"ird']) == (
        'SELECT "x", "we""ird", COUNT(*) AS privgraph_n FROM src GROUP BY "x", "we""ird"'
    )
    assert "`x`" in group_by_query("src", ["x"], style="spark")


def test_bad_requests_name_the_problem(files):
    df, root = files
    e = NumpyEngine.from_frame(df)
    with pytest.raises(KeyError, match=r"columns \['zz'\] not in domain"):
        e.counts(["a", "zz"])
    with pytest.raises(ValueError, match="repeat"):
        e.counts(["a", "a"])
    with pytest.raises(TypeError, match="sequence of names"):
        e.counts("a")
    with pytest.raises(ValueError, match="strictly increasing"):
        e.counts(["a"], rows=np.array([5, 5]))
    with pytest.raises(IndexError, match="outside"):
        e.counts(["a"], rows=np.array([len(df)]))
    with pytest.raises(ValueError, match="Parquet only"):
        DuckDBEngine(root / "d.csv").counts(["a"], rows=np.array([1]))
    with pytest.raises(FileNotFoundError, match="no such data file"):
        DuckDBEngine(root / "missing.parquet")
    with pytest.raises(ValueError, match="outside 0..1"):
        NumpyEngine(Domain.of(a=2), np.array([[0], [2]]))


def test_a_missing_continuous_value_drops_the_row_in_every_engine(tmp_path):
    df = pd.DataFrame({"a": ["x", "y", "x", "y"], "w": [0.5, np.nan, 1.5, 2.5]})
    df.to_parquet(tmp_path / "w.parquet")
    mem = NumpyEngine.from_frame(df, missing="drop")
    duck = DuckDBEngine(tmp_path / "w.parquet", missing="drop")
    assert mem.domain.names == duck.domain.names == ("a",)
    assert mem.counts(["a"]).tolist() == duck.counts(["a"]).tolist() == [2, 1]


@pytest.mark.parametrize("invalid", ["recode", "drop"])
def test_distinct_rows_of_a_wide_file_unpack_from_packed_keys(tmp_path, monkeypatch, invalid):
    """70 columns of 4 levels (140 bits): the rows are packed into three BIGINT keys, read in
    batches of 7 rows, unpacked, and equal the distinct complete rows and counts of the file
    (a value outside the levels dropped or recoded to code 0)."""
    from privgraph.data.engines import sql
    from privgraph.data.engines.sql import packed_keys_query

    rng = np.random.default_rng(3)
    d = Domain(tuple(f"v{j}" for j in range(70)), (4,) * 70, levels=(("a", "b", "c", "d"),) * 70)
    codes = rng.integers(0, 4, size=(40, 70))
    codes = np.concatenate([codes, codes[:15]])  # repeated rows
    text = np.array(["a", "b", "c", "d"], dtype=object)[codes]
    text[3, 5] = "zz"  # outside the levels
    pd.DataFrame(text, columns=list(d.names)).to_parquet(tmp_path / "w.parquet")
    assert len(packed_keys_query("t", d)[1]) == 3  # 31 columns a key (4^31 = 2^62)
    monkeypatch.setattr(sql, "FETCH_ROWS", 7)
    got, counts = DuckDBEngine(tmp_path / "w.parquet", d, invalid=invalid).distinct_rows(100)
    want = codes.copy()
    if invalid == "recode":
        want[3, 5] = 0
    else:
        want = np.delete(want, 3, axis=0)
    rows, n = np.unique(want, axis=0, return_counts=True)
    assert got.dtype == np.uint8 and got.flags.f_contiguous
    assert sorted(zip(map(tuple, got.tolist()), counts.tolist())) == sorted(zip(map(tuple, rows.tolist()), n.tolist()))
    engine = DuckDBEngine(tmp_path / "w.parquet", d, invalid=invalid)
    assert engine.distinct_rows(len(n) - 1) is None  # too many: the reader is closed mid-way
    assert engine.counts(["v0"]).tolist() == np.bincount(want[:, 0], minlength=4).tolist()  # the connection still serves


def test_spark_distinct_rows_serve_pc_without_a_job_per_table(spark, tmp_path, monkeypatch):
    """Spark gives the distinct coded rows in two jobs; PC over them equals PC in memory and
    counts no table on its own; a value outside the levels is counts()'s error."""
    from privgraph.causal import NonPrivate, stable_pc_skeleton
    from privgraph.data import Tables
    from privgraph.datasets import load_network, sample
    from privgraph.stats import GTest

    net = load_network("alarm")
    d = net.domain
    codes = sample(net, 600, np.random.default_rng(5))
    frame = pd.DataFrame({c: np.asarray(d.levels[j], dtype=object)[codes[:, j]] for j, c in enumerate(d.names)})
    frame.astype(str).to_parquet(tmp_path / "alarm.parquet")
    engine = SparkEngine(tmp_path / "alarm.parquet", d, spark=spark)
    got, counts = engine.distinct_rows(10**6)
    rows, n = np.unique(codes, axis=0, return_counts=True)
    assert got.dtype == d.code_dtype and got.flags.f_contiguous
    assert sorted(zip(map(tuple, got.tolist()), counts.tolist())) == sorted(zip(map(tuple, rows.tolist()), n.tolist()))
    assert engine.distinct_rows(len(n) - 1) is None
    calls = []
    monkeypatch.setattr(SparkEngine, "counts", lambda self, *a, **k: calls.append(a))
    a = stable_pc_skeleton(d.names, NonPrivate(Tables.from_engine(engine), GTest(), 0.05), max_cond_size=2)
    b = stable_pc_skeleton(d.names, NonPrivate(Tables.from_engine(NumpyEngine(d, codes)), GTest(), 0.05),
                           max_cond_size=2)
    assert set(map(frozenset, a.graph.edges)) == set(map(frozenset, b.graph.edges)) and a.n_tests == b.n_tests
    assert not calls
    monkeypatch.undo()
    frame.loc[7, d.names[3]] = "zz"
    frame.astype(str).to_parquet(tmp_path / "bad.parquet")
    bad = SparkEngine(tmp_path / "bad.parquet", d, spark=spark)
    message = f"column {d.names[3]!r} holds value 'zz' not among its levels"
    for call in (lambda: bad.distinct_rows(10**6), lambda: bad.counts([d.names[3]])):
        with pytest.raises(ValueError, match=message):
            call()


def test_a_subsample_of_an_out_of_core_engine_thins_its_distinct_rows(tmp_path, monkeypatch):
    """No joint table (a wide domain): exactly m rows without replacement are drawn from the
    distinct rows' counts, never by reading rows again (on Spark, a job per table)."""
    from privgraph.data import tables as tables_module
    from privgraph.data.tables import Tables
    from privgraph.privacy import SeededSampler

    monkeypatch.setattr(tables_module, "MAX_JOINT_CELLS", 1)
    rng = np.random.default_rng(2)
    d = Domain(tuple("abcde"), (3,) * 5, levels=tuple(("x", "y", "z") for _ in range(5)))
    codes = rng.integers(0, 3, size=(4000, 5))
    codes[:, 1] = codes[:, 0]  # fewer distinct rows than cells
    path = tmp_path / "w.parquet"
    pd.DataFrame({n: np.array(["x", "y", "z"])[codes[:, j]] for j, n in enumerate(d.names)}).to_parquet(path)
    whole = Tables.from_engine(DuckDBEngine(path, d, invalid="drop"), max_cells=1)
    full = whole.table(("a", "c", "d"))
    assert full.sum() == 4000 and whole._distinct  # the engine's one grouped query

    def no_rows(*args, **kwargs):
        raise AssertionError("a sub-sample read the rows again")

    monkeypatch.setattr(DuckDBEngine, "counts", no_rows)
    sub = whole.subsample(1500, SeededSampler(0))
    part = sub.table(("a", "c", "d"))
    assert sub.n == 1500 == part.sum() and (part <= full).all() and (part < full).any()
    assert (sub.table(("a", "b")) == np.diag(sub.table(("a",)))).all()  # rows are kept whole
    blocks = whole.blocks(3, SeededSampler(1))
    stacked = blocks.table(("a", "c", "d"))
    assert [int(t.sum()) for t in stacked] == [1333] * 3 and (stacked.sum(axis=0) <= full).all()
    rest, again = whole._distinct_counts(), SeededSampler(1)  # the same draws, a Tables per block
    for table in stacked:
        block = table_without_replacement(rest, 1333, sampler=again)
        rest -= block
        assert (whole._of_distinct(1333, block).table(("a", "c", "d")) == table).all()


def test_a_sub_sample_is_freed_without_the_garbage_collector():
    """A Tables and its covers hold no reference cycle: Priv-PC's rounds each replace their
    sub-sample, and with a cycle the old ones waited for the collector (7 GB at 1e8 rows)."""
    codes = np.random.default_rng(3).integers(0, 2, size=(2000, 6))
    codes[:, 1] = codes[:, 0]
    whole = Tables.from_engine(NumpyEngine(Domain.of(**{f"v{i}": 2 for i in range(6)}), codes), max_cells=1)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for draw in (lambda: whole.subsample(500, SeededSampler(0)), lambda: whole.blocks(4, SeededSampler(1))):
            made = draw()
            for part in getattr(made, "parts", [made]):
                assert cover(part, ("v0", "v1", "v2")) and part.table(("v0", "v2")).sum() == part.n
            gone = [weakref.ref(part) for part in getattr(made, "parts", [made])]
            del made, part
            assert [ref() for ref in gone] == [None] * len(gone)
    finally:
        if enabled:
            gc.enable()


def test_duckdb_spills_to_a_private_folder_removed_with_its_connection(tmp_path, monkeypatch):
    """DuckDB's default for an in-memory database spills to ``.tmp`` in the working directory
    (the user's folder); privgraph's connections spill to a folder of their own in the
    system's temporary directory, removed with the connection."""
    import tempfile
    from pathlib import Path

    from privgraph.data.files import connect

    monkeypatch.chdir(tmp_path)
    con = connect(memory_limit="50MB")
    folder = Path(con.execute("SELECT current_setting('temp_directory')").fetchone()[0])
    assert folder.is_dir() and folder.parent == Path(tempfile.gettempdir())
    con.execute("SELECT count(*) FROM (SELECT i, i * 2 FROM range(20000000) t(i) ORDER BY i DESC)").fetchall()
    assert not (tmp_path / ".tmp").exists()
    del con
    gc.collect()
    assert not folder.exists()


#: Levels whose spellings an integer's text may or may not match: numbers, numeric text with
#: a leading zero, sign or decimal point, a non-integral number, words and a boolean.
TRICKY_LEVELS = (0, 1, "02", "3.0", -4, "-05", 2.5, "x", "1e2", True, 100, " 7 ", "-0")


def test_integer_columns_are_coded_by_number_as_by_their_text():
    """``level_case(..., integer=True)`` gives each integer the code that matching its text
    gives, in DuckDB, over every integer type and values in and around the levels."""
    import duckdb

    from privgraph.data.engines.sql import level_case

    values = ", ".join(f"({v})" for v in range(-120, 121))
    for kind in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT"):
        text, number = (level_case("v", TRICKY_LEVELS, "NULL", integer=i) for i in (False, True))
        rows = duckdb.sql(f"SELECT v, {text}, {number} FROM (SELECT CAST(c AS {kind}) AS v FROM (VALUES {values}) t(c))"
                          ).fetchall()
        assert [r[1] for r in rows] == [r[2] for r in rows], kind
        # the levels an integer's text spells ("1e2" is 100 before 100 is; "-0" is 0 after 0)
        assert {r[1] for r in rows} == {0, 1, 2, 3, 4, 5, 8, 11, None}
    assert level_case("v", ("x", 2.5), "0", integer=True) == "0"  # no level an integer can match


@requires_spark
@pytest.mark.parametrize("invalid", ["recode", "drop"])
def test_spark_codes_integer_parquet_columns_as_duckdb_codes_their_text(tmp_path, spark, invalid):
    """A Parquet file's integer column (and a text one beside it) through Spark's coded view,
    which matches the integers by number, gives DuckDB's tables and distinct rows (DuckDB
    reads the values as text)."""
    from privgraph.data.relation import coded_spark_engine

    rng = np.random.default_rng(4)
    n = 400
    v = pd.array(rng.integers(-8, 9, n), dtype="Int16")
    v[::37] = pd.NA
    frame = pd.DataFrame({"v": v, "w": rng.choice(["a", "b", "zz"], n)})
    frame.to_parquet(tmp_path / "i.parquet")
    d = Domain(("v", "w"), (len(TRICKY_LEVELS), 2), levels=(TRICKY_LEVELS, ("a", "b")))
    duck = DuckDBEngine(tmp_path / "i.parquet", d, invalid=invalid)
    sparked = coded_spark_engine(spark.read.parquet(str(tmp_path / "i.parquet")), d, invalid)
    assert dict(spark.read.parquet(str(tmp_path / "i.parquet")).dtypes)["v"] == "smallint"
    for columns in (["v"], ["w", "v"], []):
        assert sparked.counts(columns).tolist() == duck.counts(columns).tolist()
    rows = {e: sorted(zip(map(tuple, c.tolist()), k.tolist())) for e, (c, k) in
            (("duckdb", duck.distinct_rows(10**4)), ("spark", sparked.distinct_rows(10**4)))}
    assert rows["spark"] == rows["duckdb"] and sum(k for _, k in rows["duckdb"]) > 50
    plan = sparked.inner.data._jdf.queryExecution().analyzed().toString()  # the coded view: v by number, w by text
    assert not re.search(r"cast\(v#\d+ as string\)", plan) and re.search(r"cast\(w#\d+ as string\)", plan)
