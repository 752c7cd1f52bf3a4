"""Issue 45, item 1: missing values as data (the codebook's "missing" key, the missing level)."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from privgraph.data import domain_from_codebook, domain_to_codebook, open_engine
from privgraph.data.bins import decode_codes
from privgraph.data.draft import draft_with_notes
from privgraph.data.frontdoor import first_level_notice
from privgraph.data.invalid_values import count_invalid_values
from privgraph.data.missing import MISSING, is_missing_value, missing_mask
from privgraph.privacy.neighbours import Neighbours
from privgraph.validation import InvalidInput
from tests.data.conftest import requires_spark


def codebook(missing: dict | None = None) -> dict:
    """Three columns: nominal a, ordinal b (integers), continuous x in 4 bins; ``missing`` per column."""
    cols = [{"name": "a", "kind": "nominal", "levels": ["no", "yes"]},
            {"name": "b", "kind": "ordinal", "levels": [1, 2, 3]},
            {"name": "x", "kind": "continuous", "bounds": [0, 8], "bins": 4}]
    for col in cols:
        if missing and col["name"] in missing:
            col["missing"] = missing[col["name"]]
    return {"format": "privgraph-domain", "version": 1, "columns": cols}


# a: yes, no, missing (None, "", " nan "), out of the domain ("maybe"); b: 1..3, missing (None, "NA"),
# out (7); x: numbers (clipped), missing (NaN, inf, " na ", "-Infinity"), not a number ("abc": invalid)
FRAME = pd.DataFrame({
    "a": ["yes", "no", None, "", " nan ", "maybe", "yes", "no", "yes"],
    "b": ["1", "2", "3", None, "7", "2", "NA", "1", "3"],
    "x": ["1.5", "9", "nan", " na ", "abc", "-3", "inf", "-Infinity", "7.9"],
})


def test_the_default_is_a_level_appended_last_and_invalid_keeps_the_old_domain():
    d = domain_from_codebook(codebook())
    assert d.sizes == (3, 4, 5) and d.missing_names == ("a", "b", "x")
    assert d.levels[0] == ("no", "yes", MISSING) and d.levels[2][-1] is MISSING
    old = domain_from_codebook(codebook({"a": "invalid", "b": "invalid", "x": "invalid"}))
    assert old.sizes == (2, 3, 4) and old.missing_names == ()
    for domain in (d, old):  # what privgraph writes, it reads back the same, and it always says which
        text = domain_to_codebook(domain)
        assert {c["missing"] for c in text["columns"]} == ({"level"} if domain is d else {"invalid"})
        back = domain_from_codebook(json.loads(json.dumps(text)))
        assert back == domain and back.levels == domain.levels


@pytest.mark.parametrize("entry, message", [
    ({"missing": "drop"}, "\"missing\" must be one of ('level', 'invalid'), got 'drop'"),
    ({"levels": ["no", "(missing)"]}, "has the level '(missing)', the name of its missing level"),
])
def test_a_bad_missing_key_is_one_line_naming_the_column(entry, message):
    cb = codebook()
    cb["columns"][0].update(entry)
    with pytest.raises(InvalidInput, match=None) as err:
        domain_from_codebook(cb, source="d.json")
    assert "column 'a'" in str(err.value) and message in str(err.value)


def test_the_rule_of_what_is_missing():
    assert [is_missing_value(v) for v in (None, np.nan, pd.NA, "", "  ", "NaN", "Na", "x", "nA1", 0, False, "inf")] == \
        [True] * 7 + [False] * 5
    assert missing_mask(["inf", "-Infinity", float("inf"), "1e999", "1"], continuous=True).tolist() == \
        [True, True, True, False, False]


def expected_tables(missing: bool):
    """The one-way tables of FRAME by hand: with a missing level (last) or recoded to code 0."""
    if missing:
        return {"a": [3, 3, 3], "b": [3, 2, 2, 2], "x": [3, 0, 0, 2, 4]}  # "maybe", 7, "abc": recoded to 0
    return {"a": [6, 3], "b": [5, 2, 2], "x": [7, 0, 0, 2]}


@pytest.mark.parametrize("missing", [True, False])
def test_numpy_and_duckdb_code_missing_values_alike(tmp_path, missing):
    cb = codebook(None if missing else {"a": "invalid", "b": "invalid", "x": "invalid"})
    domain = domain_from_codebook(cb)
    FRAME.to_csv(tmp_path / "d.csv", index=False)
    engines = {"numpy": open_engine(FRAME, domain, neighbours=Neighbours.REPLACE_ONE),
               "duckdb": open_engine(tmp_path / "d.csv", domain, neighbours=Neighbours.REPLACE_ONE)}
    import duckdb

    engines["relation"] = open_engine(duckdb.from_df(FRAME), domain, neighbours=Neighbours.REPLACE_ONE)
    for name, engine in engines.items():
        got = {c: engine.counts([c]).tolist() for c in domain.names}
        assert got == expected_tables(missing), name
        assert engine.counts(["a", "x"]).sum() == len(FRAME)  # one record, one cell


def test_a_typed_parquet_file_codes_null_nan_and_inf_to_the_missing_level(tmp_path):
    frame = pd.DataFrame({"a": pd.array(["yes", None, "no", "yes"], dtype="string"),
                          "b": pd.array([1, None, 3, 2], dtype="Int64"),
                          "x": [1.0, np.nan, np.inf, -np.inf]})
    frame.to_parquet(tmp_path / "d.parquet")
    domain = domain_from_codebook(codebook())
    for data in (frame, tmp_path / "d.parquet"):
        engine = open_engine(data, domain, neighbours=Neighbours.ADD_REMOVE)
        assert [engine.counts([c]).tolist() for c in domain.names] == [[1, 2, 1], [1, 1, 1, 1], [1, 0, 0, 0, 3]]


@requires_spark
def test_spark_codes_missing_values_as_duckdb_does(spark, tmp_path):
    domain = domain_from_codebook(codebook())
    FRAME.to_csv(tmp_path / "d.csv", index=False)
    from privgraph.data.frontdoor import open_file

    engine = open_engine(open_file(tmp_path / "d.csv", "spark", domain.dialect), domain,
                         neighbours=Neighbours.REPLACE_ONE)
    assert {c: engine.counts([c]).tolist() for c in domain.names} == expected_tables(True)


def test_the_owner_check_counts_missing_values_by_the_same_rule(tmp_path):
    FRAME.to_csv(tmp_path / "d.csv", index=False)
    rows, malformed, cells = count_invalid_values(tmp_path / "d.csv", domain_from_codebook(codebook()))
    assert (rows, malformed) == (9, 0)
    assert cells == {"a": (3, 1), "b": (2, 1), "x": (4, 1)}  # missing, outside (maybe, 7, abc)


def test_synthetic_rows_at_the_missing_level_are_missing_values():
    domain = domain_from_codebook(codebook())
    codes = np.array([[0, 0, 0], [1, 2, 3], [2, 3, 4]])
    rows = decode_codes(domain, codes, rng=np.random.default_rng(0))
    assert rows["a"].tolist() == ["no", "yes", None]
    assert rows["b"].dtype == "Int64" and rows["b"].isna().tolist() == [False, False, True]
    assert rows["b"].iloc[1] == 3 and rows["x"].isna().tolist() == [False, False, True]
    csv = rows.to_csv(index=False).splitlines()
    assert csv[3] == ",,"  # the missing level: empty cells, as a CSV of the data has them


def test_the_first_level_notice_leaves_the_missing_level_out():
    domain = domain_from_codebook(codebook())
    # 72% missing, the rest split: not a codebook that matched nothing
    assert first_level_notice(domain, {"a": [0.14, 0.14, 0.72]}) is None
    # every present value at the first level: named, with its share among the present ones
    notice = first_level_notice(domain, {"a": [0.28, 0.0, 0.72]})
    assert notice is not None and "100% of rows at the first level of column(s) a ('no'" in notice


def test_the_draft_reads_every_row_and_offers_the_missing_level():
    n = 300
    frame = pd.DataFrame({
        "id": [f"p{i}" for i in range(n)],
        "death": [1] * 100 + [0] * 200,
        "chapter": ["heart"] * 100 + [None] * 200,  # missing wherever death is 0
        "lab": [0.5 + i / n for i in range(n - 50)] + [np.nan] * 50,
        "days": list(range(n)),
    })
    domain, notes = draft_with_notes(frame)
    assert domain.levels[1] == (0, 1) and domain.missing_names == ("chapter", "lab")
    assert domain.levels[2] == ("heart", MISSING) and domain.sizes[2] == 2
    assert domain.sizes[3] == 11 and domain.kinds[4].value == "continuous"
    text = domain_to_codebook(domain, drafted_from="d.csv")
    assert [c["missing"] for c in text["columns"]] == ["invalid", "invalid", "level", "level", "invalid"]
    assert any("'id' looks like an identifier" in n for n in notes)
    assert any("'days'" in n for n in notes)
    assert len(notes) == 2  # one line each, nothing about the others


def _release(tmp_path, frame, name):
    """``privgraph release`` (replace-one, seeded) of ``frame`` with codebook(): (its outputs, its stdout)."""
    from typer.testing import CliRunner

    from privgraph.cli import app

    frame.to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "d.json").write_text(json.dumps(codebook()))
    out = tmp_path / name
    res = CliRunner().invoke(app, ["release", str(tmp_path / f"{name}.csv"), "--domain", str(tmp_path / "d.json"),
                                   "--epsilon", "2", "--neighbours", "replace_one", "--structure", "tree",
                                   "--seed", "0", "--out", str(out)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return out, res.output.replace(str(tmp_path), "TMP").replace(name, "NAME")


def test_a_record_missing_or_present_gives_the_same_shape_and_public_numbers(tmp_path):
    """Neighbours on the boundary of the missing level (an auditor's pair): one record's values
    missing in one file and present in the other. Everything public (the ledger, the plan, the
    synthetic table's shape and columns, the printed lines other than released counts) is equal."""
    rng = np.random.default_rng(1)
    n = 600
    frame = pd.DataFrame({"a": rng.choice(["no", "yes", None], n), "b": rng.choice(["1", "2", "3", ""], n),
                          "x": rng.uniform(0, 8, n).round(2).astype(str)})
    present, missing = frame.copy(), frame.copy()
    present.loc[0] = ["yes", "2", "3.5"]
    missing.loc[0] = [None, "", "nan"]
    (a, printed_a), (b, printed_b) = _release(tmp_path, present, "present"), _release(tmp_path, missing, "missing")
    ledger_a, ledger_b = (json.loads((d / "ledger.json").read_text()) for d in (a, b))
    assert ledger_a["ledger"] == ledger_b["ledger"] and ledger_a["n_rows_public"] == ledger_b["n_rows_public"] == n
    assert json.loads((a / "plan.json").read_text()) == json.loads((b / "plan.json").read_text())
    rows_a, rows_b = pd.read_csv(a / "synthetic.csv"), pd.read_csv(b / "synthetic.csv")
    assert rows_a.shape == rows_b.shape == (n, 3) and list(rows_a.columns) == list(rows_b.columns) == ["a", "b", "x"]

    def public_lines(text):  # the printed lines without the released counts (graph, synthetic rows) and timings
        return [re.sub(r"\[ *[0-9.]+ s\]", "", line) for line in text.splitlines() if not line.startswith("released graph")]

    assert public_lines(printed_a) == public_lines(printed_b)
