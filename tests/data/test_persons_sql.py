"""Truncation to k rows per person inside DuckDB and Spark (privgraph.data.persons_sql).

Every property is checked in both engines (``engine``: DuckDB, and Spark where pyspark is
installed), so the two agree in what they promise, not in the rows they keep (their hashes
differ). A row is told apart by ``who`` (a copy of the person) and ``pos`` (its place among
the person's rows), value columns that the truncation keeps.
"""

import math
from itertools import combinations

import duckdb
import numpy as np
import pandas as pd
import pytest

from privgraph.data.persons_sql import truncate_relation, truncate_spark
from privgraph.validation import InvalidInput
from tests.data.conftest import HAS_PYSPARK

ENGINES = ["duckdb", pytest.param("spark", marks=pytest.mark.skipif(not HAS_PYSPARK, reason="pyspark is not installed"))]
FAIL = 1e-6  # the false-failure probability each statistical check allows


@pytest.fixture(params=ENGINES)
def truncate(request):
    """``truncate(frame, k, salt)``: the truncated rows (a DataFrame) of a pandas frame whose
    person column is ``pid``, in the engine of the parameter."""
    if request.param == "duckdb":
        con = duckdb.connect()
        return lambda frame, k, salt: truncate_relation(con.from_df(frame), "pid", k, salt).df()
    spark = request.getfixturevalue("spark")
    return lambda frame, k, salt: truncate_spark(spark.createDataFrame(frame), "pid", k, salt).toPandas()


def persons(sizes, first: int = 0) -> pd.DataFrame:
    """Person ``first + i`` with ``sizes[i]`` rows; columns pid, who (= pid), pos, a (pos % 3)."""
    pid = np.repeat(np.arange(first, first + len(sizes)), sizes)
    pos = np.concatenate([np.arange(r) for r in sizes]) if len(sizes) else np.array([], dtype=int)
    return pd.DataFrame({"pid": pid, "who": pid, "pos": pos, "a": pos % 3})


def rows_of(frame: pd.DataFrame) -> dict:
    """Each person's kept rows, as a sorted tuple of (pos, a)."""
    return {int(w): tuple(sorted(zip(g.pos.tolist(), g.a.tolist()))) for w, g in frame.groupby("who")}


def test_at_most_k_rows_per_person_small_persons_whole_and_no_person_column(truncate):
    sizes = np.random.default_rng(3).integers(1, 9, size=300)
    frame = persons(sizes)
    for k in (1, 3):
        out = truncate(frame, k, 11)
        assert list(out.columns) == ["who", "pos", "a"]
        kept = out.groupby("who").size().reindex(range(len(sizes)), fill_value=0).to_numpy()
        assert kept.tolist() == np.minimum(sizes, k).tolist()
        whole = rows_of(frame[frame.pid.isin(np.flatnonzero(sizes <= k))])
        assert {w: r for w, r in rows_of(out).items() if sizes[w] <= k} == whole


def test_a_row_without_a_person_is_dropped(truncate):
    frame = persons([2, 1]).astype({"pid": "Int64"})
    frame.loc[1, "pid"] = pd.NA  # person 0's second row has no person
    out = truncate(frame, 5, 0)
    assert sorted(out.pos.tolist()) == [0, 0] and len(out) == 2


def test_a_text_id_is_read_without_its_spaces_and_a_nan_id_is_no_person(truncate):
    text = pd.DataFrame({"pid": ["u", " u ", "u", "", "  ", None, "v"], "pos": range(7)})
    assert sorted(truncate(text, 2, 4).pos.tolist())[-1] == 6 and len(truncate(text, 2, 4)) == 3
    numbers = pd.DataFrame({"pid": [1.0, float("nan"), 1.0, 2.0], "pos": range(4)})
    assert sorted(truncate(numbers, 5, 4).pos.tolist()) == [0, 2, 3]


@pytest.mark.parametrize("salt", [0, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1])
def test_every_64_bit_salt_is_taken(truncate, salt):
    assert len(truncate(persons([3, 1]), 2, salt)) == 3


def test_the_same_salt_keeps_the_same_rows_and_another_salt_others(truncate):
    frame = persons([6] * 200)
    first, again, other = (rows_of(truncate(frame, 2, s)) for s in (5, 5, 6))
    assert first == again
    changed = sum(first[w] != other[w] for w in first)  # 1 - 1/15 of the persons expected
    assert changed >= 150


def test_a_persons_rows_do_not_depend_on_other_persons_or_the_order(truncate):
    base = persons(np.arange(1, 40) % 7 + 1)
    extra = persons([9, 30], first=1000)  # neighbours: one person added, then another
    mixed = pd.concat([base, extra]).sample(frac=1.0, random_state=4).reset_index(drop=True)
    for salt in (0, 99):
        alone, beside = rows_of(truncate(base, 3, salt)), rows_of(truncate(mixed, 3, salt))
        assert {w: r for w, r in beside.items() if w < 1000} == alone
        assert sum(len(r) for w, r in beside.items() if w >= 1000) == 6  # each added person: k rows


def test_a_parallel_scan_keeps_the_same_rows_as_a_serial_one(tmp_path):
    # 20 row groups read by 4 threads in any order, against 1 thread: the same kept rows
    path = tmp_path / "p.parquet"
    frame = persons(np.arange(4000) % 9 + 1).sample(frac=1.0, random_state=1)
    frame.to_parquet(path, row_group_size=len(frame) // 20)
    kept = []
    for threads in (1, 4):
        con = duckdb.connect()
        con.execute(f"SET threads = {threads}")
        kept.append(sorted(truncate_relation(con.read_parquet(str(path)), "pid", 3, 17).fetchall()))
    assert kept[0] == kept[1] and len(kept[0]) == int(np.minimum(np.arange(4000) % 9 + 1, 3).sum())


def test_every_k_subset_of_a_persons_rows_is_kept_alike(truncate):
    # 6,000 persons of 4 distinct rows, k = 2: the 6 pairs are equally likely. The statistic is
    # chi-square with 5 degrees of freedom (asymptotically; ~1,000 per cell), bounded by
    # Laurent & Massart: P(X >= d + 2 sqrt(d x) + 2 x) <= exp(-x).
    n, r, k = 6000, 4, 2
    out = truncate(persons([r] * n), k, 2024)
    pairs = out.groupby("who").pos.apply(lambda s: tuple(sorted(s))).value_counts()
    cells = list(combinations(range(r), k))
    observed = np.array([pairs.get(c, 0) for c in cells])
    expected = n / len(cells)
    statistic = float(((observed - expected) ** 2 / expected).sum())
    d, x = len(cells) - 1, math.log(1 / FAIL)
    assert observed.sum() == n and statistic <= d + 2 * math.sqrt(d * x) + 2 * x


def test_each_row_is_kept_with_probability_k_over_r(truncate):
    # persons of r = 3, 5, 8 rows, k = 2; each of the 16 (r, pos) rates against k / r by
    # Hoeffding over the persons (independent keys), union-bounded over the 16.
    n, k, sizes = 3000, 2, (3, 5, 8)
    frame = persons(np.repeat(sizes, n))
    out = truncate(frame, k, 77).assign(r=lambda f: np.array(sizes)[f.who.to_numpy() // n])
    tol = math.sqrt(math.log(2 * sum(sizes) / FAIL) / (2 * n))
    rates = out.groupby(["r", "pos"]).size() / n
    for r in sizes:
        assert np.all(np.abs(rates.loc[r].reindex(range(r), fill_value=0) - k / r) <= tol), r


def test_identical_rows_of_a_person_count_as_rows(truncate):
    # rows x, x, y and k = 1: x is kept with probability 2/3 (Hoeffding), not 1/2
    n = 6000
    frame = pd.DataFrame({"pid": np.repeat(np.arange(n), 3), "v": np.tile(["x", "x", "y"], n)})
    out = truncate(frame, 1, 8)
    assert len(out) == n
    assert abs(np.mean(out.v == "x") - 2 / 3) <= math.sqrt(math.log(2 / FAIL) / (2 * n))


@pytest.mark.parametrize("args, message", [
    (("pid", 0, 1), "max_rows_per_person must be an integer >= 1, got 0"),
    (("pid", True, 1), "max_rows_per_person must be an integer >= 1, got True"),
    (("pid", 2, -1), "salt must be an integer in [0, 2**64), got -1"),
    (("pid", 2, 2 ** 64), "salt must be an integer in [0, 2**64)"),
    (("pid", 2, 1.0), "salt must be an integer in [0, 2**64), got 1.0"),
    (("person", 2, 1), "column 'person' is not in the DuckDB relation"),
    ((3, 2, 1), "the person column must be a column name (a str), got 3"),
])
def test_bad_arguments_are_named(args, message):
    rel = duckdb.connect().from_df(persons([2, 3]))
    with pytest.raises(InvalidInput) as e:
        truncate_relation(rel, *args)
    assert message in str(e.value)


def test_a_relation_of_the_person_column_alone_or_with_a_reserved_name_is_refused():
    con = duckdb.connect()
    with pytest.raises(InvalidInput, match="no column besides the person column 'pid'"):
        truncate_relation(con.sql("SELECT 1 AS pid"), "pid", 1, 0)
    with pytest.raises(InvalidInput, match="column named 'privgraph_rank'"):
        truncate_relation(con.sql("SELECT 1 AS pid, 2 AS privgraph_rank"), "pid", 1, 0)
    with pytest.raises(InvalidInput, match="must be a DuckDB relation, got DataFrame"):
        truncate_relation(persons([1]), "pid", 1, 0)


def test_odd_column_names_are_quoted(truncate):
    frame = persons([3, 1]).rename(columns={"a": 'a "b` c'})
    out = truncate(frame, 2, 1)
    assert list(out.columns) == ["who", "pos", 'a "b` c'] and len(out) == 3


@pytest.mark.slow
def test_a_parquet_file_is_truncated_under_a_small_memory_limit(tmp_path):
    # 4e6 rows of 2e5 persons under 64 MB: the windows spill; the count is exact
    path = tmp_path / "p.parquet"
    con = duckdb.connect()
    con.execute("SET memory_limit = '64MB'; SET threads = 1; SET preserve_insertion_order = false")
    con.execute(f"COPY (SELECT (i * 7919) % 200000 AS pid, i % 5 AS a, i % 3 AS b FROM range(4000000) t(i)) "
                f"TO '{path}' (FORMAT parquet)")
    kept = truncate_relation(con.read_parquet(str(path)), "pid", 5, 3)
    assert kept.aggregate("count(*)").fetchall()[0][0] == 200000 * 5
