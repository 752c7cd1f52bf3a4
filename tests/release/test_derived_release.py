"""A release with derived columns (privgraph.data.derived): never read, counted or modelled,
computed on the synthetic rows by their public rules, at no cost."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from privgraph.release import PrivateRelease

BOOK = {"format": "privgraph-domain", "version": 1, "columns": [
    {"name": "a", "kind": "ordinal", "levels": list(range(5))},
    {"name": "s", "kind": "ordinal", "levels": list(range(9)), "derived": "a + b"},
    {"name": "b", "kind": "ordinal", "levels": list(range(5)), "missing": "invalid"},
    {"name": "c", "kind": "nominal", "levels": [0, 1, 2]},
    {"name": "h", "kind": "ordinal", "levels": [0, 1, 2], "missing": "invalid", "derived": "floor(b / 2)"}]}
WITHOUT = {**BOOK, "columns": [c for c in BOOK["columns"] if "derived" not in c]}


def table(n: int = 2_000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(0, 2, n)) % 5
    c = (b + rng.integers(0, 2, n)) % 3
    frame = pd.DataFrame({"a": a, "s": a + b, "b": b, "c": c, "h": b // 2}).astype(object)
    frame.loc[:20, "a"] = None  # a missing level of its own
    return frame


def fitted(frame, structure="tree", book=BOOK, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded-noise warning
        return PrivateRelease(epsilon=2.0, random_state=0, structure=structure, **kw).fit(frame, domain=book)


@pytest.mark.parametrize("structure", ["tree", "priv-pc"])
def test_synthetic_rows_follow_each_rule_on_every_row(structure):
    rel = fitted(table(), structure)
    assert rel.domain_.names == ("a", "b", "c")  # the modelled columns
    rows = rel.sample(random_state=1)
    assert list(rows.columns) == ["a", "s", "b", "c", "h"]  # the codebook's order
    answered = rows["a"].notna()
    assert (rows.loc[answered, "s"] == rows.loc[answered, "a"] + rows.loc[answered, "b"]).all()
    assert rows.loc[~answered, "s"].isna().all() and (~answered).any()
    assert (rows["h"] == rows["b"] // 2).all()


def test_the_derived_values_are_never_read():
    """An auditor's pair: the same rows, the derived columns true in one and anything (out of the
    domain, missing, text) in the other: the same seeded release, ledger and rows."""
    true = table()
    junk = true.assign(s=["junk"] * len(true), h=[None] * len(true))
    first, second = fitted(true), fitted(junk)
    assert first.ledger_ == second.ledger_
    pd.testing.assert_frame_equal(first.sample(random_state=3), second.sample(random_state=3))
    absent = fitted(true.drop(columns=["s", "h"]))  # not even needed in the input
    pd.testing.assert_frame_equal(first.sample(random_state=3), absent.sample(random_state=3))


def test_a_derived_column_costs_nothing_and_changes_no_draw():
    frame = table()
    rel, plain = fitted(frame), fitted(frame.drop(columns=["s", "h"]), book=WITHOUT)
    assert rel.privacy_plan(BOOK, 2_000) == plain.privacy_plan(WITHOUT, 2_000)
    assert rel.ledger_ == plain.ledger_
    pd.testing.assert_frame_equal(rel.sample(random_state=5)[["a", "b", "c"]], plain.sample(random_state=5))


def test_cli_release_writes_the_derived_columns_and_says_so(tmp_path):
    from typer.testing import CliRunner

    from privgraph.cli import app

    table().to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "t.json").write_text(json.dumps(BOOK))
    res = CliRunner().invoke(app, ["release", str(tmp_path / "t.csv"), "--domain", str(tmp_path / "t.json"),
                                   "--epsilon", "2", "--out", str(tmp_path / "out"), "--seed", "0",
                                   "--structure", "tree"])
    assert res.exit_code == 0, res.output
    rows = pd.read_csv(tmp_path / "out" / "synthetic.csv")
    assert list(rows.columns) == ["a", "s", "b", "c", "h"]
    answered = rows["a"].notna()
    assert (rows.loc[answered, "s"] == rows.loc[answered, "a"] + rows.loc[answered, "b"]).all()
    report = (tmp_path / "out" / "report.md").read_text()
    assert "`s` = `a + b`; `h` = `floor(b / 2)`" in report and "never read from the data" in report


def test_cli_plan_plans_the_modelled_columns(tmp_path):
    from typer.testing import CliRunner

    from privgraph.cli import app

    plans = []
    for name, book in (("with", BOOK), ("without", WITHOUT)):
        (tmp_path / f"{name}.json").write_text(json.dumps(book))
        res = CliRunner().invoke(app, ["plan", "--domain", str(tmp_path / f"{name}.json"), "--rows", "2000",
                                       "--epsilon", "1", "--json"])
        assert res.exit_code == 0, res.output
        plans.append(json.loads(res.output))
    assert plans[0] == plans[1]


def test_the_person_unit_reads_no_derived_column_either(tmp_path):
    """With the codebook's person column and a bound on each person's rows (the file truncated inside
    DuckDB): junk in the derived columns changes no byte of the synthetic rows."""
    from typer.testing import CliRunner

    from privgraph.cli import app

    (tmp_path / "p.json").write_text(json.dumps({**BOOK, "id": "pid"}))
    true = table().assign(pid=np.arange(2_000) // 2)
    outputs = []
    for name, frame in (("true", true), ("junk", true.assign(s="junk", h="?"))):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        res = CliRunner().invoke(app, ["release", str(tmp_path / f"{name}.csv"), "--domain", str(tmp_path / "p.json"),
                                       "--epsilon", "2", "--max-rows-per-person", "2", "--out", str(tmp_path / name),
                                       "--seed", "0", "--structure", "tree"])
        assert res.exit_code == 0, res.output
        outputs.append((tmp_path / name / "synthetic.csv").read_text())
    assert outputs[0] == outputs[1] and outputs[0].startswith("a,s,b,c,h")
