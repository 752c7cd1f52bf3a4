"""``privgraph direction``: one pair, a long table of pairs, several files, bad input, atomic output."""

import json

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from privgraph.cli import app
from privgraph.data import Domain, Kind, write_codebook


def _frame(n, seed, pair=None):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, n)
    frame = pd.DataFrame({"a": a, "b": np.tanh(2 * a) + 0.3 * rng.uniform(-1, 1, n) ** 3})
    if pair is not None:
        frame.insert(0, "pair", pair)
    return frame


BOUNDS = ["--x-bounds", "-2", "2", "--y-bounds", "-2", "2"]


def test_one_pair_prints_result_and_ledger(tmp_path):
    path = tmp_path / "one.csv"
    _frame(800, 0).to_csv(path, index=False)
    refused = CliRunner().invoke(app, ["direction", str(path), "--x", "a", "--y", "b", "--epsilon", "1"])
    assert "no public domain" in str(refused.exception) and "--x-bounds" in str(refused.exception)
    write_codebook(Domain(("a", "b"), (0, 0), (Kind.CONTINUOUS,) * 2, ((), ()), ((-2, 2), (-2, 2))),
                   tmp_path / "d.json")
    result = CliRunner().invoke(app, ["direction", str(path), "--x", "a", "--y", "b", "--epsilon", "1",
                                      "--seed", "3", "--domain", str(tmp_path / "d.json")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "NOT private" in result.output and "Privacy ledger" in result.output  # the seeded sampler says so
    assert "only the test part's records are protected" not in result.output  # the default covers every record
    test_only = CliRunner().invoke(app, ["direction", str(path), "--x", "a", "--y", "b", "--epsilon", "1", "--seed",
                                         "3", "--privacy", "test", "--domain", str(tmp_path / "d.json")],
                                   env={"COLUMNS": "200"})
    assert "only the test part's records are protected" in test_only.output


def test_long_table_batch_writes_one_row_per_pair(tmp_path):
    path, out = tmp_path / "pairs.parquet", tmp_path / "res" / "out.json"
    pd.concat([_frame(600, s, f"p{s}") for s in range(3)]).to_parquet(path)
    out.parent.mkdir()  # a missing directory is an error, as in every command (issue 11)
    result = CliRunner().invoke(app, ["direction", str(path), "--pair-column", "pair", "--x", "a", "--y", "b",
                                      "--epsilon", "2", "--score", "kendall", "--seed", "1", "--out", str(out), *BOUNDS])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [r["pair"] for r in rows] == ["p0", "p1", "p2"]
    # kendall abstains below --abstain-below on its calibrated P(causal, SIM)
    assert all(r["epsilon"] == 2.0 and r["direction"] in ("x->y", "y->x", "undecided") for r in rows)
    assert all((r["direction"] == "undecided") == (r["p_causal_sim"] < 0.6) and r["p_error_order"] is None
               for r in rows)
    assert all(0.5 <= r["p_noise_kept_order"] <= 1 and "confidence_estimate" not in r for r in rows)  # noise only
    assert not list(out.parent.glob(".*tmp"))  # no temporary file left behind


def test_batch_of_files_records_bad_pairs_and_goes_on(tmp_path):
    good, bad, out = tmp_path / "good.csv", tmp_path / "bad.csv", tmp_path / "out.csv"
    _frame(600, 0).to_csv(good, index=False)
    _frame(15, 1).to_csv(bad, index=False)  # too few rows (n is public); a constant column is valid
    result = CliRunner().invoke(app, ["direction", str(good), str(bad), "--x", "a", "--y", "b", "--epsilon", "1",
                                      "--seed", "0", "--out", str(out), *BOUNDS])
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(out)
    assert rows["error"].isna().tolist() == [True, False]
    assert "need at least 20 rows" in rows["error"].iloc[1]


def test_single_bad_pair_and_refused_combination_are_errors(tmp_path):
    path = tmp_path / "bad.csv"
    _frame(15, 1).to_csv(path, index=False)
    result = CliRunner().invoke(app, ["direction", str(path), "--x", "a", "--y", "b", "--epsilon", "1", *BOUNDS])
    assert result.exit_code != 0 and "need at least 20 rows" in str(result.exception)
    result = CliRunner().invoke(app, ["direction", str(path), "--x", "a", "--y", "b", "--epsilon", "1",
                                      "--score", "iqr", "--privacy", "train+test", *BOUNDS])
    assert result.exit_code != 0 and "no derived guarantee" in str(result.exception)


def test_default_prints_the_probability_and_undecided_below_the_threshold(tmp_path):
    path, out = tmp_path / "pairs.csv", tmp_path / "out.json"
    rng = np.random.default_rng(9)
    frame = pd.concat([_frame(2000, 0, "clear"),
                       pd.DataFrame({"pair": "noise", "a": rng.uniform(-2, 2, 400), "b": rng.uniform(-2, 2, 400)})])
    frame.to_csv(path, index=False)
    args = ["direction", str(path), "--pair-column", "pair", "--x", "a", "--y", "b", "--epsilon", "1", "--seed", "0",
            *BOUNDS]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--abstain-below", "0.99"], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    rows = {r["pair"]: r for r in json.loads(out.read_text())}
    assert rows["clear"]["direction"] == "x->y" and rows["clear"]["p_error_order"] >= 0.99
    assert rows["noise"]["direction"] == "undecided" and 0.5 <= rows["noise"]["p_error_order"] < 0.99
    assert "P(error order)" in result.output and "undecided" in result.output
    refused = CliRunner().invoke(app, [*args, "--abstain-below", "1.5"])
    assert refused.exit_code != 0 and "--abstain-below must be in" in str(refused.exception)
