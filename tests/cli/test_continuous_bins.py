"""Issue 27: a continuous column read through its codebook's public bins, in every command."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privgraph.cli import app

BOUNDS = (10.0, 50.0)


def codebook(bins: dict | None) -> dict:
    x = {"name": "x", "kind": "continuous", "bounds": list(BOUNDS), **(bins or {}), "missing": "invalid"}
    return {"format": "privgraph-domain", "version": 1, "columns": [  # no missing values: no missing level
        x, {"name": "a", "kind": "nominal", "levels": ["no", "yes"], "missing": "invalid"},
        {"name": "b", "kind": "ordinal", "levels": [1, 2, 3], "missing": "invalid"}]}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.choice(["no", "yes"], n)
    b = np.where(a == "yes", rng.integers(2, 4, n), rng.integers(1, 3, n))
    x = np.where(a == "yes", rng.normal(32, 5, n), rng.normal(22, 4, n))
    x[:3] = [5.0, 80.0, BOUNDS[1]]  # below, above and at the bounds: clipped, never refused
    root = tmp_path_factory.mktemp("bins")
    pd.DataFrame({"x": x, "a": a, "b": b}).to_csv(root / "d.csv", index=False)
    (root / "binned.json").write_text(json.dumps(codebook({"bins": 8})))
    (root / "log.json").write_text(json.dumps(codebook({"bins": 4, "scale": "log"})))
    nobounds = codebook(None)
    del nobounds["columns"][0]["bounds"]
    (root / "nobounds.json").write_text(json.dumps(nobounds))
    return root


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_discover_fit_mrf_and_plan_accept_a_binned_column(folder, tmp_path):
    data, cb = folder / "d.csv", folder / "binned.json"
    res = invoke("discover", data, "--domain", cb, "--epsilon", "8", "--seed", "0", "--out", tmp_path / "g.json")
    assert res.exit_code == 0, res.output
    assert set(json.loads((tmp_path / "g.json").read_text())["nodes"]) == {"x", "a", "b"}
    res = invoke("fit-mrf", data, "--domain", cb, "--cliques", "x,a;a,b", "--epsilon", "4", "--seed", "0",
                 "--synthetic", 400, tmp_path / "s.csv")
    assert res.exit_code == 0, res.output
    rows = pd.read_csv(tmp_path / "s.csv")
    assert list(rows.columns) == ["x", "a", "b"] and rows["x"].dtype == np.float64
    assert rows["x"].between(*BOUNDS).all() and set(rows["a"]) <= {"no", "yes"}
    assert "verdict: affordable" in invoke("plan", "--domain", cb, "--rows", 3000, "--epsilon", "4").output


@pytest.mark.parametrize("cb", ["binned.json", "log.json"])
def test_release_writes_rows_in_the_inputs_schema_with_values_inside_the_bounds(folder, tmp_path, cb):
    res = invoke("release", folder / "d.csv", "--domain", folder / cb, "--epsilon", "4", "--structure", "tree",
                 "--seed", "0", "--out", tmp_path)
    assert res.exit_code == 0, res.output
    rows = pd.read_csv(tmp_path / "synthetic.csv")
    source = pd.read_csv(folder / "d.csv")
    assert list(rows.columns) == list(source.columns) and rows.dtypes.to_dict() == source.dtypes.to_dict()
    assert rows["x"].between(*BOUNDS).all() and rows["x"].nunique() > 50  # values, not bin labels
    high = rows.loc[rows["a"] == "yes", "x"].mean() - rows.loc[rows["a"] == "no", "x"].mean()
    assert high > 4  # the released model keeps x's dependence on a (about 10 in the data)


def test_domain_check_counts_only_non_numbers_as_outside_a_binned_column(folder, tmp_path):
    bad = tmp_path / "bad.csv"
    frame = pd.read_csv(folder / "d.csv").astype({"x": object})
    frame.loc[5, "x"] = "n/a"
    frame.to_csv(bad, index=False)
    res = invoke("domain", bad, "--check", folder / "binned.json")
    assert res.exit_code == 0, res.output
    cells = next(r for r in res.output.splitlines() if r.startswith("│ x")).split("│")
    assert [c.strip() for c in cells[1:5]] == ["x", "continuous", "0", "1"]  # clipped values are not outside


def test_domain_drafts_bins_and_marks_the_bounds_as_read_from_the_data(folder, tmp_path):
    res = invoke("domain", folder / "d.csv", "--out", tmp_path / "draft.json")
    assert res.exit_code == 0 and "replace them with public limits" in res.output
    draft = json.loads((tmp_path / "draft.json").read_text())
    x = draft["columns"][0]
    assert x["bins"] == 10 and x["bounds"] == [5.0, 80.0] and "read from the data" in x["description"]
    assert "drafted_from_data" in draft
    res = invoke("fit-mrf", folder / "d.csv", "--domain", tmp_path / "draft.json", "--cliques", "x,a", "--epsilon", "1",
                 "--seed", "0")
    assert res.exit_code == 0 and "NOT private" in res.output


@pytest.mark.parametrize("command", [
    ["discover", "{data}", "--domain", "{cb}", "--epsilon", "1", "--seed", "0"],
    ["fit-mrf", "{data}", "--domain", "{cb}", "--cliques", "x,a;a,b", "--epsilon", "1", "--seed", "0"],
    ["release", "{data}", "--domain", "{cb}", "--epsilon", "1", "--seed", "0", "--out", "{out}"],
    ["plan", "--domain", "{cb}", "--rows", "3000", "--epsilon", "1"],
])
def test_plan_refuses_a_column_with_no_bins_and_no_bounds_exactly_where_the_commands_do(folder, tmp_path, command):
    args = [a.format(data=folder / "d.csv", cb=folder / "nobounds.json", out=tmp_path) for a in command]
    res = invoke(*args)
    assert res.exit_code != 0 and isinstance(res.exception, ValueError)
    message = str(res.exception)
    assert "['x']" in message and "no public bins" in message and "\"bins\": k" in message and "\"bounds\"" in message
    assert list(tmp_path.iterdir()) == []


# --- issue 46: bounds-only continuous columns through public default bins; --out created --------


def mixed_folder(root, bins_of_x: dict | None = None):
    """Two categorical and two bounds-only continuous columns (``income``: lo > 0, a wide range)."""
    rng = np.random.default_rng(1)
    n = 2000
    a = rng.choice(["no", "yes"], n)
    x = np.where(a == "yes", rng.normal(30, 5, n), rng.normal(20, 4, n))
    pd.DataFrame({"a": a, "x": x, "b": rng.choice(["p", "q", "r"], n), "income": np.exp(rng.normal(8, 1.5, n))}).to_csv(
        root / "d.csv", index=False)
    columns = [{"name": "a", "kind": "nominal", "levels": ["no", "yes"]},
               {"name": "x", "kind": "continuous", "bounds": [0, 60], **(bins_of_x or {})},
               {"name": "b", "kind": "nominal", "levels": ["p", "q", "r"]},
               {"name": "income", "kind": "continuous", "bounds": [1, 1e7]}]
    columns = [c | {"missing": "invalid"} for c in columns]  # complete columns: no missing level
    (root / "d.json").write_text(json.dumps({"format": "privgraph-domain", "version": 1, "columns": columns}))
    return root / "d.csv", root / "d.json"


def default_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("default bins"))


@pytest.mark.parametrize("bins_of_x", [None, {"bins": 3}])
def test_release_counts_bounds_only_columns_in_default_bins_and_writes_numbers_inside_the_bounds(tmp_path, bins_of_x):
    data, cb = mixed_folder(tmp_path, bins_of_x)
    res = invoke("release", data, "--domain", cb, "--epsilon", "4", "--structure", "tree", "--seed", "0",
                 "--out", tmp_path / "new")
    assert res.exit_code == 0, res.output
    line = default_line(res.output)
    assert "income: 10 log over [1, 1e+07]" in line
    assert ("x: 10 linear over [0, 60]" in line) == (bins_of_x is None)  # the user's bins win
    rows, source = pd.read_csv(tmp_path / "new" / "synthetic.csv"), pd.read_csv(data)
    assert list(rows.columns) == list(source.columns) and rows.dtypes.to_dict() == source.dtypes.to_dict()
    assert rows["x"].between(0, 60).all() and rows["income"].between(1, 1e7).all()
    assert rows["income"].nunique() > 50  # values drawn in the bins, not labels
    if bins_of_x:  # three bins of 20: the rows' x fall in at most three bins' ranges, and the model saw 3 levels
        model = json.loads((tmp_path / "new" / "model.json").read_text())
        assert "[0, 20)" in json.dumps(model) and "[0, 6)" not in json.dumps(model)


@pytest.mark.parametrize("bins_of_x", [None, {"edges": [0, 25, 60]}])
def test_fit_mrf_synthesises_bounds_only_columns_as_numbers_in_the_codebooks_order(tmp_path, bins_of_x):
    data, cb = mixed_folder(tmp_path, bins_of_x)
    res = invoke("fit-mrf", data, "--domain", cb, "--cliques", "income,a;a,x", "--epsilon", "4", "--seed", "0",
                 "--synthetic", 500, tmp_path / "s.csv", "--out", tmp_path / "m.json")
    assert res.exit_code == 0, res.output
    line = default_line(res.output)
    assert "income: 10 log" in line and ("x: 10 linear" in line) == (bins_of_x is None) and "b:" not in line
    rows = pd.read_csv(tmp_path / "s.csv")
    assert list(rows.columns) == ["a", "x", "income"]  # the modelled columns, in the codebook's order
    assert rows["x"].dtype == np.float64 and rows["income"].dtype == np.float64
    assert rows["x"].between(0, 60).all() and rows["income"].between(1, 1e7).all()
    model = json.dumps(json.loads((tmp_path / "m.json").read_text()))
    assert ("[25, 60]" in model) == (bins_of_x is not None)


def test_release_out_only_the_last_component_is_created_and_a_failed_run_leaves_nothing(tmp_path):
    data, cb = mixed_folder(tmp_path)
    res = invoke("release", data, "--domain", cb, "--epsilon", "1e-9", "--seed", "0", "--out", tmp_path / "failed")
    assert res.exit_code != 0 and not (tmp_path / "failed").exists()
    res = invoke("release", data, "--domain", cb, "--epsilon", "4", "--seed", "0", "--out", tmp_path / "no" / "new")
    assert res.exit_code != 0 and "does not exist" in str(res.exception) and not (tmp_path / "no").exists()
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "report.md").write_text("earlier")
    res = invoke("release", data, "--domain", cb, "--epsilon", "4", "--seed", "0", "--out", tmp_path / "old")
    assert res.exit_code != 0 and "not empty" in str(res.exception)
    assert [p.name for p in (tmp_path / "old").iterdir()] == ["report.md"]
