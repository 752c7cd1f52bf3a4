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
    domain = _pair_codebook(tmp_path / "d.json", PUBLIC_PAIR | {"levels": ["p2", "p0", "p1"]})
    result = CliRunner().invoke(app, ["direction", str(path), "--pair-column", "pair", "--x", "a", "--y", "b",
                                      "--epsilon", "2", "--score", "kendall", "--seed", "1", "--out", str(out),
                                      "--domain", str(domain)])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [r["pair"] for r in rows] == ["p2", "p0", "p1"]  # the codebook's order
    # kendall abstains below --abstain-below on its calibrated P(causal, SIM)
    assert all(r["epsilon"] == 2.0 and r["direction"] in ("x->y", "y->x", "undecided") for r in rows)
    assert all((r["direction"] == "undecided") == (r["p_causal_sim"] < 0.6) and r["p_agreement"] is None
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
    assert rows["error"].isna().all()  # a pair under 20 rows is answered, not refused
    assert rows["direction"].iloc[1] == "undecided" and "too few rows to decide: 15" in rows["reason"].iloc[1]
    assert rows["epsilon"].tolist()[1] == 0  # nothing spent on it


def test_single_small_pair_is_undecided_and_refused_combination_is_an_error(tmp_path):
    path = tmp_path / "bad.csv"
    _frame(15, 1).to_csv(path, index=False)
    result = CliRunner().invoke(app, ["direction", str(path), "--x", "a", "--y", "b", "--epsilon", "1", *BOUNDS],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 0 and "undecided" in result.output and "too few rows to decide" in result.output
    result = CliRunner().invoke(app, ["direction", str(path), "--x", "a", "--y", "b", "--epsilon", "1",
                                      "--score", "iqr", "--privacy", "train+test", *BOUNDS])
    assert result.exit_code != 0 and "no derived guarantee" in str(result.exception)


def test_default_prints_the_probability_and_undecided_below_the_threshold(tmp_path):
    path, out = tmp_path / "pairs.csv", tmp_path / "out.json"
    rng = np.random.default_rng(9)
    frame = pd.concat([_frame(2000, 0, "clear"),
                       pd.DataFrame({"pair": "noise", "a": rng.uniform(-2, 2, 400), "b": rng.uniform(-2, 2, 400)})])
    frame.to_csv(path, index=False)
    domain = _pair_codebook(tmp_path / "d.json", PUBLIC_PAIR | {"levels": ["clear", "noise"]})
    args = ["direction", str(path), "--pair-column", "pair", "--x", "a", "--y", "b", "--epsilon", "1", "--seed", "0",
            "--domain", str(domain)]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--abstain-below", "0.99"], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    rows = {r["pair"]: r for r in json.loads(out.read_text())}
    assert rows["clear"]["direction"] == "x->y" and rows["clear"]["p_agreement"] >= 0.99
    assert rows["noise"]["direction"] == "undecided" and 0.5 <= rows["noise"]["p_agreement"] < 0.99
    assert "P(noise-free agrees)" in result.output and "undecided" in result.output
    text = " ".join(result.output.lower().split())  # never called a confidence; said what it is not
    assert "confidence" not in text and "not the chance that the direction is causal" in text
    refused = CliRunner().invoke(app, [*args, "--abstain-below", "1.5"])
    assert refused.exit_code != 0 and "--abstain-below must be in" in str(refused.exception)


# --- a long table's pair column: its groups come from the codebook's levels only (issue 43) ---

#: A token only the replaced record holds: no output, printed or written, may show it.
MARKER = "zqxj"


def _pair_codebook(path, pair_entry):
    """A codebook over a, b (continuous, bounds [-2, 2]) and the pair column's entry."""
    columns = [{"name": "a", "kind": "continuous", "bounds": [-2, 2]},
               {"name": "b", "kind": "continuous", "bounds": [-2, 2]}]
    path.write_text(json.dumps({"format": "privgraph-domain", "version": 1,
                                "columns": columns + ([pair_entry] if pair_entry else [])}))
    return path


PUBLIC_PAIR = {"name": "pair", "kind": "nominal", "levels": ["p0", "p1", "p_empty"], "public": True,
               "missing": "invalid"}  # no missing level: the pairs are the levels listed


def _neighbours(tmp_path, n=400):
    """Two long tables (pair, a, b): in the second, one record of p1 has the pair value
    ``alice_secret_zqxj`` (outside the codebook's levels) instead."""
    left = pd.concat([_frame(n, s, f"p{s}") for s in range(2)], ignore_index=True)
    right = left.copy()
    right.loc[n, "pair"] = f"alice_secret_{MARKER}"
    paths = []
    for side, frame in (("left", left), ("right", right)):
        (tmp_path / side).mkdir()
        frame.to_csv(tmp_path / side / "pairs.csv", index=False)
        paths.append(tmp_path / side / "pairs.csv")
    return paths


def _run_pairs(data, domain_args, out):
    return CliRunner().invoke(app, ["direction", str(data), "--pair-column", "pair", "--x", "a", "--y", "b",
                                    "--epsilon", "1", "--seed", "0", "--out", str(out), *domain_args],
                              env={"COLUMNS": "200"})


def _shown(result):
    return result.output + str(result.exception or "")


def test_pair_column_without_public_levels_is_refused_before_reading(tmp_path):
    """Without a codebook that declares the pair column public (nominal or ordinal, with levels),
    --pair-column is refused before any data is read: the file named does not even exist."""
    missing, out = tmp_path / "nothing.csv", tmp_path / "out.json"
    entries = {"not in the codebook": None,
               "not declared public": {k: v for k, v in PUBLIC_PAIR.items() if k != "public"},
               "continuous": {"name": "pair", "kind": "continuous", "bounds": [0, 1], "public": True}}
    for what, entry in entries.items():
        result = _run_pairs(missing, ["--domain", str(_pair_codebook(tmp_path / "d.json", entry))], out)
        message = str(result.exception)
        assert result.exit_code != 0 and "'pair'" in message and "\n" not in message, (what, message)
        assert "public" in message and "codebook" in message and "No such file" not in message, (what, message)
    result = _run_pairs(missing, BOUNDS, out)
    assert result.exit_code != 0 and "'pair'" in str(result.exception) and "codebook" in str(result.exception)
    assert not out.exists()


def test_undeclared_pair_column_refuses_both_neighbours_alike(tmp_path):
    """D, and D with one record's pair value replaced (replace-one of the long table moves a
    record between pairs, so the per-pair sizes are private): refused alike, nothing shown."""
    undeclared = {k: v for k, v in PUBLIC_PAIR.items() if k != "public"}
    seen = []
    for data in _neighbours(tmp_path):
        domain = _pair_codebook(data.parent / "d.json", undeclared)
        result = _run_pairs(data, ["--domain", str(domain)], data.parent / "out.json")
        assert MARKER not in _shown(result)
        seen.append((result.exit_code, str(result.exception).replace(str(data.parent), "DIR"),
                     sorted(p.name for p in data.parent.iterdir())))
    assert seen[0] == seen[1] and seen[0][0] != 0


def test_public_pair_column_groups_by_the_codebook_levels_only(tmp_path):
    """Declared public, the pair column's values (so each pair's size) are public knowledge:
    two files that differ in one record's pair value are then not neighbours under the
    guarantee, and their public sizes may differ. What must hold on both: the pairs are
    exactly the codebook's levels in its order (an empty level is a pair too small, with its
    public size 0), the value outside the levels goes through replace-one's fixed policy
    (recoded to the first level, never dropped: n stays public) and is never shown."""
    outputs = []
    for data in _neighbours(tmp_path):
        domain = _pair_codebook(data.parent / "d.json", PUBLIC_PAIR)
        out = data.parent / "out.json"
        result = _run_pairs(data, ["--domain", str(domain)], out)
        assert result.exit_code == 0, result.output
        assert MARKER not in result.output and MARKER not in out.read_text()
        assert "'pair'" in result.output and "public" in result.output  # the caveat names the column
        outputs.append(json.loads(out.read_text()))
    for rows in outputs:
        assert [r["pair"] for r in rows] == ["p0", "p1", "p_empty"]
        assert rows[2]["rows"] == 0 and rows[2]["direction"] == "undecided" and "too few rows" in rows[2]["reason"]
        assert all(r["error"] is None for r in rows)
    assert [r["rows"] for r in outputs[0]] == [400, 400, 0]
    assert [r["rows"] for r in outputs[1]] == [401, 399, 0]  # the replaced record recoded to p0


def test_public_pair_refusal_case_runs_the_release():
    """The audit's declared-public case compares two runs, not two refusals (a codebook key
    the command rejects would make it pass vacuously)."""
    from privgraph.cli.refusals import refusal_cases, run_case

    cases = {c.name: c for c in refusal_cases()}
    public = run_case(cases["direction_pair_column_public"])
    assert public.same and public.left.startswith("exit 0") and "wrote r.json" in public.left
    undeclared = run_case(cases["direction_pair_column_undeclared"])
    assert undeclared.same and not undeclared.left.startswith("exit 0")


def test_infer_domain_still_groups_by_the_values_that_occur(tmp_path):
    """--infer-domain (NOT private, and it says so) keeps the pairs read from the data."""
    path, out = tmp_path / "pairs.csv", tmp_path / "out.json"
    pd.concat([_frame(400, s, f"p{s}") for s in range(2)]).to_csv(path, index=False)
    result = _run_pairs(path, ["--infer-domain"], out)
    assert result.exit_code == 0, result.output
    assert [r["pair"] for r in json.loads(out.read_text())] == ["p0", "p1"] and "NOT private" in result.output
