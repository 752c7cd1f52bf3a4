"""Continuous columns read through public bins (issue 27): codebook, coding in every engine, draws."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from privgraph.data import Domain, Kind, domain_from_codebook, domain_to_codebook, open_engine
from privgraph.data.bins import bin_codes, decode_codes, draw_in_bins, edges_bins, make_bins
from privgraph.data.domain import check_countable
from privgraph.data.engines.sql import coded_source
from privgraph.data.frontdoor import column_codes, encode_public
from privgraph.privacy import Neighbours
from tests.data.conftest import requires_spark

EDGES = (0.0, 0.1, 2.5, 7.0, 10.0)
BINS = edges_bins(list(EDGES))
DOMAIN = Domain(("x",), (4,), (Kind.CONTINUOUS,), bins=(BINS,))
TRICKY = ["", " ", "abc", "1,5", "inf", "-inf", "nan", "NaN", "Infinity", "1e999", "-1e999", ".5", "5.", "+3", "-0",
          "1_0", "0x1A", "\u0661", " 7 ", "7.0", "1e1", "1E+1", "2.5e0", "0.1", "0.09999999999999999", "true", None]


def _codebook(*columns) -> dict:
    return {"format": "privgraph-domain", "version": 1, "columns": list(columns)}


# --- the codebook ---------------------------------------------------------------------


@pytest.mark.parametrize("entry", [
    {"name": "x", "kind": "continuous", "bounds": [10.0, 60.0], "bins": 5},
    {"name": "x", "kind": "continuous", "bounds": [1.0, 1000.0], "bins": 3, "scale": "log"},
    {"name": "x", "kind": "continuous", "bounds": [0.0, 50.0], "edges": [0.0, 5.0, 10.0, 50.0]},
    {"name": "x", "kind": "continuous", "bounds": [1.0, 50.0], "edges": [1.0, 5.0, 50.0], "scale": "log"},
])
def test_a_binned_column_round_trips_through_the_codebook(entry):
    domain = domain_from_codebook(_codebook(entry))
    assert domain_to_codebook(domain)["columns"] == [entry | {"missing": "level"}]  # the writer says the default
    assert domain_from_codebook(json.loads(json.dumps(domain_to_codebook(domain)))) == domain
    bins = domain.bins_of("x")
    # the bins, then the missing level ("missing": "level", the default)
    assert domain.kinds == (Kind.CONTINUOUS,) and domain.sizes == (bins.count + 1,) and domain.discrete_names == ("x",)
    assert bins.bounds == tuple(entry["bounds"]) == domain.bounds_of("x")


def test_edges_give_the_bounds_and_the_bins_are_where_the_codebook_says():
    d = domain_from_codebook(_codebook({"name": "x", "kind": "continuous", "edges": [0, 5, 10, 50]}))
    assert d.bounds_of("x") == (0.0, 50.0) and d.levels[0] == ("[0, 5)", "[5, 10)", "[10, 50]", "(missing)")
    log = domain_from_codebook(_codebook({"name": "x", "kind": "continuous", "bounds": [1, 1e4], "bins": 4,
                                          "scale": "log"}))
    assert np.allclose(log.bins_of("x").edges, [1, 10, 100, 1000, 1e4]) and log.bins_of("x").edges[-1] == 1e4
    assert make_bins((0.0, 1.0), 3).edges[-1] == 1.0  # the end edges are the bounds exactly


@pytest.mark.parametrize("entry, expected", [
    ({"bounds": [0, 1], "bins": 0}, "column 'x': \"bins\" must be a whole number from 1 to 65536, got 0"),
    ({"bounds": [0, 1], "bins": "10"}, "\"bins\" must be a whole number"),
    ({"bounds": [0, 1], "bins": True}, "\"bins\" must be a whole number"),
    ({"bins": 10}, "column 'x': \"bins\": 10 needs \"bounds\": [lo, hi] (or give \"edges\")"),
    ({"bounds": [0, 1], "bins": 4, "scale": "log"}, "column 'x': \"scale\": \"log\" needs a lower bound above 0, got 0.0"),
    ({"bounds": [1, 2], "bins": 4, "scale": "cubic"}, "\"scale\" must be one of ['linear', 'log'], got 'cubic'"),
    ({"bounds": [0, 1], "scale": "log"}, "column 'x': \"scale\" needs \"bins\": k (or \"edges\")"),
    ({"edges": [0, 2, 1]}, "column 'x': \"edges\" must be at least two finite numbers in strictly increasing order"),
    ({"edges": [0]}, "\"edges\" must be at least two finite numbers"),
    ({"edges": [0, "1"]}, "\"edges\" must be at least two finite numbers"),
    ({"bounds": [0, 10], "edges": [0, 5, 9]}, "column 'x' has \"edges\" from 0 to 9 but \"bounds\" [0.0, 10.0]: "
                                             "expected the first and last edge to be the bounds"),
    ({"bounds": [0, 10], "bins": 2, "edges": [0, 5, 10]}, "gives both \"bins\" and \"edges\": expected one of them"),
    ({"bounds": [0, 5e-324], "bins": 3}, "would not have strictly increasing edges"),
])
def test_bad_bins_are_refused_naming_the_column_and_what_was_expected(entry, expected):
    with pytest.raises(ValueError) as err:
        domain_from_codebook(_codebook({"name": "x", "kind": "continuous", **entry}), source="d.json")
    assert str(err.value).startswith("d.json: column 'x'") and expected in str(err.value)


def test_bins_on_a_discrete_column_are_refused():
    with pytest.raises(ValueError, match="column 'a' is nominal: it takes \"levels\", not \"bins\""):
        domain_from_codebook(_codebook({"name": "a", "kind": "nominal", "levels": ["x", "y"], "bins": 2}))


def test_a_domain_with_bins_keeps_equality_hash_and_projection_sane():
    a = Domain(("x", "a"), (4, 2), (Kind.CONTINUOUS, Kind.CATEGORICAL), bins=(BINS, None))
    b = Domain(("x", "a"), (4, 2), (Kind.CONTINUOUS, Kind.CATEGORICAL), bins=(edges_bins([0, 1, 2, 3, 4]), None))
    assert a != b and len({a, b, a}) == 2
    assert a.project(["x"]).bins_of("x") == BINS and a.project(["a"]).bins == (None,)
    with pytest.raises(ValueError, match="column 'x' has 4 bins: it must be continuous of size 4, got continuous of size 3"):
        Domain(("x",), (3,), (Kind.CONTINUOUS,), bins=(BINS,))


def test_a_continuous_column_with_bounds_only_gets_the_public_default_bins():
    d = Domain(("x", "a", "w"), (0, 2, 0), (Kind.CONTINUOUS, Kind.CATEGORICAL, Kind.CONTINUOUS),
               bounds=((0.0, 1.0), None, (2.0, 2e4)))
    counted = check_countable(d)
    assert counted.sizes == (10, 2, 10) and counted.bins_of("x").edges[1] == pytest.approx(0.1)
    assert counted.bins_of("w").scale == "log" and counted.bins_of("w").edges[1] == pytest.approx(2.0 * 10 ** 0.4)
    engine = open_engine(pd.DataFrame({"x": [0.05, 0.95], "a": [0, 1], "w": [3.0, 2e4]}), d,
                         neighbours=Neighbours.REPLACE_ONE)
    assert engine.domain == counted and engine.counts(["x"]).tolist() == [1] + [0] * 8 + [1]


def test_a_continuous_column_without_bins_or_bounds_is_refused_with_how_to_bin_it():
    d = Domain(("x", "a"), (0, 2), (Kind.CONTINUOUS, Kind.CATEGORICAL))
    with pytest.raises(ValueError, match=r"columns \['x'\] are continuous with no public bins.*\"bins\": k"):
        check_countable(d)
    with pytest.raises(ValueError, match="no public bins"):
        open_engine(pd.DataFrame({"x": [0.5], "a": [0]}), d, neighbours=Neighbours.REPLACE_ONE)


# --- the map from values to bins ----------------------------------------------------------


def test_the_bin_rule_half_open_bins_the_last_closed_clipped_outside():
    values = [-1e300, -0.0, 0.0, 0.1, np.nextafter(0.1, 0), 2.5, 9.999, 10.0, 10.5, 1e300, np.nan, np.inf]
    assert bin_codes(values, BINS).tolist() == [0, 0, 0, 1, 0, 2, 3, 3, 3, 3, -1, -1]
    assert bin_codes(pd.Series(values), BINS).tolist() == bin_codes([repr(float(v)) for v in values], BINS).tolist()


def test_a_non_number_is_invalid_under_the_relations_policy():
    frame = pd.DataFrame({"x": ["3", "n/a", None, "12"], "a": ["no", "no", "yes", "?"]})
    d = Domain(("x", "a"), (4, 2), (Kind.CONTINUOUS, Kind.CATEGORICAL), ((), ("no", "yes")), bins=(BINS, None))
    assert encode_public(frame, d, "recode").tolist() == [[2, 0], [0, 0], [0, 1], [3, 0]]
    assert encode_public(frame, d, "drop").tolist() == [[2, 0]]


_VALUES = st.one_of(
    st.sampled_from(TRICKY),
    st.sampled_from([*EDGES, -5.0, 11.0, *(np.nextafter(e, s) for e in EDGES for s in (-np.inf, np.inf))]).map(repr),
    st.floats(-20, 20, allow_nan=False).map(repr),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.floats(-20, 20).map(lambda v: f" {v:.3e}"),
    st.integers(-30, 30).map(str),
    st.text(max_size=4),
)


def _sql_codes(frame: pd.DataFrame, domain: Domain, invalid: str) -> list:
    import duckdb

    con = duckdb.connect()
    con.register("t", frame)
    return [r[0] for r in con.execute(f"SELECT * FROM {coded_source('t', domain, invalid)}").fetchall()]


@settings(max_examples=60, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=30))
def test_numpy_and_duckdb_sql_give_identical_codes(values):
    frame = pd.DataFrame({"x": pd.Series(values, dtype=object)})
    ours = column_codes(frame["x"], DOMAIN, "x").tolist()
    assert _sql_codes(frame, DOMAIN, "drop") == [None if c < 0 else c for c in ours]
    assert _sql_codes(frame, DOMAIN, "recode") == [max(c, 0) for c in ours]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(list(EDGES)), min_size=1, max_size=30))
def test_a_numeric_column_is_coded_alike_by_numpy_and_sql(values):
    frame = pd.DataFrame({"x": np.asarray(values, dtype=np.float64)})
    ours = column_codes(frame["x"], DOMAIN, "x").tolist()
    assert _sql_codes(frame, DOMAIN, "drop") == [None if c < 0 else c for c in ours]
    assert ours == column_codes(frame["x"].map(repr).astype(object), DOMAIN, "x").tolist()  # as text, the same


@settings(max_examples=40, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=20), st.integers(0, 19), _VALUES)
def test_changing_one_record_changes_at_most_one_code(values, i, new):
    i %= len(values)
    changed = values[:i] + [new] + values[i + 1:]
    before, after = bin_codes(values, BINS), bin_codes(changed, BINS)
    assert np.flatnonzero(before != after).tolist() in ([], [i])


def test_files_relations_and_frames_count_the_same_tables(tmp_path):
    rng = np.random.default_rng(3)
    n = 400
    x = [repr(v) for v in rng.uniform(-2, 12, n)]
    x[:len(TRICKY)] = [v if v is not None else "" for v in TRICKY]
    x[len(TRICKY):len(TRICKY) + len(EDGES)] = [repr(e) for e in EDGES]
    frame = pd.DataFrame({"x": x, "a": rng.choice(["no", "yes", "??"], n)})
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_parquet(tmp_path / "d.parquet")
    d = Domain(("x", "a"), (4, 2), (Kind.CONTINUOUS, Kind.CATEGORICAL), ((), ("no", "yes")), bins=(BINS, None))
    import duckdb

    for neighbours in (Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE):
        tables = [open_engine(X, d, neighbours=neighbours).counts(["x", "a"]).tolist()
                  for X in (frame, tmp_path / "d.csv", tmp_path / "d.parquet", duckdb.sql("SELECT * FROM frame"))]
        assert all(t == tables[0] for t in tables)
    numeric = pd.DataFrame({"x": pd.to_numeric(frame["x"], errors="coerce"), "a": frame["a"]})
    numeric.to_parquet(tmp_path / "n.parquet")
    assert (open_engine(numeric, d, neighbours=Neighbours.REPLACE_ONE).counts(["x"]).tolist()
            == open_engine(tmp_path / "n.parquet", d, neighbours=Neighbours.REPLACE_ONE).counts(["x"]).tolist())


@requires_spark
def test_spark_sql_gives_the_same_codes(spark, tmp_path):
    rng = np.random.default_rng(4)
    values = [v if v is not None else "" for v in TRICKY] + [repr(e) for e in EDGES] + \
        [repr(float(np.nextafter(e, s))) for e in EDGES for s in (-np.inf, np.inf)] + \
        [repr(v) for v in rng.uniform(-2, 12, 50)] + [f"{v:.2e}" for v in rng.uniform(-2, 12, 20)]
    frame = pd.DataFrame({"x": values})
    sdf = spark.createDataFrame(frame)
    sdf.createOrReplaceTempView("bins_t")
    for invalid in ("drop", "recode"):
        got = [r[0] for r in spark.sql(f"SELECT * FROM {coded_source('bins_t', DOMAIN, invalid, style='spark')}").collect()]
        assert got == _sql_codes(frame, DOMAIN, invalid)
    frame.to_csv(tmp_path / "d.csv", index=False)
    from privgraph.data.frontdoor import open_file

    for neighbours in (Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE):
        via_spark = open_engine(open_file(tmp_path / "d.csv", "spark"), DOMAIN, neighbours=neighbours).counts(["x"])
        assert via_spark.tolist() == open_engine(frame, DOMAIN, neighbours=neighbours).counts(["x"]).tolist()


# --- values drawn back within the bins ----------------------------------------------------


@pytest.mark.parametrize("bins", [BINS, make_bins((1.0, 1e4), 4, "log"), make_bins((-3.0, 3.0), 1)])
def test_draws_fall_in_their_bin_inside_the_bounds(bins):
    codes = np.random.default_rng(0).integers(0, bins.count, 20_000)
    x = draw_in_bins(codes, bins, rng=np.random.default_rng(1))
    assert (bin_codes(x, bins) == codes).all()
    assert x.min() >= bins.bounds[0] and x.max() <= bins.bounds[1]


def test_draws_are_uniform_within_a_linear_bin():
    n = 50_000
    x = draw_in_bins(np.full(n, 2), BINS, rng=np.random.default_rng(5))
    u = (x - 2.5) / 4.5
    tol = math.sqrt(math.log(2 / 1e-6) / (2 * n))  # Hoeffding, for the share below the midpoint
    assert abs(np.mean(u < 0.5) - 0.5) <= tol


def test_decoded_rows_are_reproducible_from_the_generator():
    d = Domain(("x", "a"), (4, 2), (Kind.CONTINUOUS, Kind.CATEGORICAL), ((), ("no", "yes")), bins=(BINS, None))
    codes = np.array([[0, 1], [3, 0], [2, 1]])
    first, second = (decode_codes(d, codes, rng=np.random.default_rng(9)) for _ in range(2))
    assert first.equals(second) and first["a"].tolist() == ["yes", "no", "yes"]
    assert bin_codes(first["x"], BINS).tolist() == [0, 3, 2]
