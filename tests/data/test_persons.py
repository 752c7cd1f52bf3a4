"""At most k rows per person (privgraph.data.persons) and the codebook's person column."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from privgraph.data.codebook import domain_from_codebook, person_column, read_codebook
from privgraph.data.persons import person_unit, truncate, truncate_frame
from privgraph.validation import InvalidInput, UnknownName

CODEBOOK = {"format": "privgraph-domain", "version": 1, "id": "pid",
            "columns": [{"name": "a", "kind": "nominal", "levels": [0, 1, 2]}]}


def visits(counts: dict, seed: int = 0) -> pd.DataFrame:
    """Rows of each person (``counts[person]`` of them), shuffled, a distinct value per row."""
    rng = np.random.default_rng(seed)
    pids = [p for p, c in counts.items() for _ in range(c)]
    frame = pd.DataFrame({"pid": pids, "row": np.arange(len(pids))})
    return frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)


def kept(frame: pd.DataFrame, k: int, salt: int) -> pd.DataFrame:
    """The kept rows with their person (read back through the distinct row values)."""
    out = truncate_frame(frame, "pid", k, salt)
    return frame.set_index("row").loc[out["row"]].reset_index()


def test_each_person_keeps_at_most_k_rows_and_all_of_theirs_below_k():
    counts = {"u": 1, "v": 3, "w": 7, "x": 12}
    for k in (1, 2, 5):
        got = kept(visits(counts), k, salt=11)["pid"].value_counts().to_dict()
        assert got == {p: min(c, k) for p, c in counts.items()}


def test_the_person_column_is_dropped_and_the_input_left_unmodified():
    frame = visits({"u": 4, "v": 2})
    before = frame.copy()
    out = truncate_frame(frame, "pid", 1, salt=3)
    assert list(out.columns) == ["row"] and frame.equals(before)


def test_one_row_per_person_is_kept_whole_and_in_order():
    frame = pd.DataFrame({"pid": [9, 4, 7, 1], "a": [2, 0, 1, 1]})
    assert truncate_frame(frame, "pid", 1, salt=5).equals(frame.drop(columns=["pid"]))


def test_a_persons_rows_never_depend_on_another_persons_rows():
    """Adding a person (anywhere in the file) changes the kept rows by that person's only."""
    base = visits({"u": 6, "v": 5, "w": 9}, seed=1)
    extra = pd.DataFrame({"pid": ["P"] * 8, "row": np.arange(100, 108)})
    for at in (0, 7, len(base)):
        with_p = pd.concat([base.iloc[:at], extra, base.iloc[at:]], ignore_index=True)
        for salt in (1, 2, 3):
            without = set(kept(base, 2, salt)["row"])
            withp = kept(with_p, 2, salt)
            assert set(withp.loc[withp["pid"] != "P", "row"]) == without
            assert (withp["pid"] == "P").sum() == 2


def test_rows_without_a_person_are_dropped():
    frame = pd.DataFrame({"pid": ["u", None, np.nan, "", "  ", "v"], "a": range(6)})
    assert truncate_frame(frame, "pid", 3, salt=1)["a"].tolist() == [0, 5]


def test_the_choice_is_uniform_over_the_salt():
    """Each of a person's 6 rows is kept with probability k/6 = 1/3 over secret salts (Hoeffding
    at 1e-6 for each of the 6 rows)."""
    from privgraph.data.persons import kept_rows

    ids = pd.Series(["u", "v", "u", "u", "u", "u", "u"])
    salts = 1_000
    hits = np.zeros(6)
    for salt in range(salts):
        hits += kept_rows(ids, 2, salt)[ids.to_numpy() == "u"]
    tol = math.sqrt(math.log(2 * 6 / 1e-6) / (2 * salts))
    assert np.all(np.abs(hits / salts - 1 / 3) <= tol), hits / salts


def test_the_numpy_path_needs_the_person_column():
    with pytest.raises(UnknownName, match="person column 'pid'"):
        truncate_frame(pd.DataFrame({"a": [1]}), "pid", 1, salt=0)
    with pytest.raises(InvalidInput, match="needs data that holds it"):
        truncate(np.zeros((2, 2)), "pid", 1, salt=0)


def test_the_codebook_names_the_person_column_at_its_top_level(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(CODEBOOK))
    assert person_column(path) == "pid" and person_column(CODEBOOK) == "pid"
    assert read_codebook(path).names == ("a",)  # never a column of the domain
    assert person_column(read_codebook(path)) is None and person_column(None) is None
    without = {k: v for k, v in CODEBOOK.items() if k != "id"}
    assert person_column(without) is None


@pytest.mark.parametrize("bad, message", [
    ("", "must name the person column"), (7, "must name the person column"),
    ("a", "is also one of the columns"),
])
def test_a_bad_person_column_is_a_one_line_error(bad, message):
    with pytest.raises(InvalidInput, match=message):
        domain_from_codebook(CODEBOOK | {"id": bad}, source="d.json")


def test_the_unit_needs_both_the_codebooks_person_and_the_bound():
    assert person_unit(CODEBOOK, 2, "add_remove").k == 2
    with pytest.raises(InvalidInput, match='"id"'):
        person_unit({k: v for k, v in CODEBOOK.items() if k != "id"}, 2, "add_remove")
    with pytest.raises(InvalidInput, match="max-rows-per-person"):
        person_unit(CODEBOOK, None, "add_remove")


def test_a_file_and_a_relation_are_truncated_in_duckdb(tmp_path):
    pytest.importorskip("privgraph.data.persons_sql")
    import duckdb

    frame = visits({"u": 5, "v": 1, "w": 3})
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    from_file = truncate(path, "pid", 2, salt=4, columns=["row"]).df()
    relation = duckdb.sql("SELECT * FROM frame")
    from_relation = truncate(relation, "pid", 2, salt=4).df()
    for out in (from_file, from_relation):
        assert list(out.columns) == ["row"] and len(out) == 2 + 1 + 2
        assert frame.set_index("row").loc[out["row"].astype(int), "pid"].value_counts().to_dict() == \
            {"u": 2, "v": 1, "w": 2}
