"""Issue 11, "fail before spending": every command checks its outputs before it fits anything.

A bad output (missing directory, a directory, a wrong suffix, one bad output among good
ones) is a one-line error with exit status 2, nothing is written, and the estimator's
``fit`` (where the budget is spent) is never called. Also finding 4: ``fit-mrf`` under
add/remove prints nothing derived from the data but released values.
"""

import re
import sys

import numpy as np
import pandas as pd
import pytest

from privgraph.data import Domain, write_codebook

from privgraph.cli import main


def run_main(monkeypatch, capsys, *args):
    """``privgraph ARGS`` in-process through ``main`` (its one-line error handler): (status, out, err)."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(sys, "argv", ["privgraph", *map(str, args)])
    try:
        main()
        status = 0
    except SystemExit as stop:
        status = stop.code
    out, err = capsys.readouterr()
    return status, out, err


def never_fit(*args, **kwargs):
    raise AssertionError("fit (the privacy spend) ran before the outputs were checked")


@pytest.fixture
def no_fit(monkeypatch):
    from privgraph.causal import PrivPC
    from privgraph.causal.direction import PrivateANM
    from privgraph.mrf import PrivateMRF

    for cls in (PrivPC, PrivateANM, PrivateMRF):
        monkeypatch.setattr(cls, "fit", never_fit)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A small discrete table, in its own directory (the output directories stay empty)."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 400)
    path = tmp_path_factory.mktemp("data") / "d.csv"
    pd.DataFrame({"a": a, "b": (a + (rng.random(400) < 0.2)) % 2}).to_csv(path, index=False)
    write_codebook(Domain.of(a=2, b=2), path.parent / "d.json")
    return path


def commands(table, out_dir):
    """Each command with its inputs, and the flag and a good file name of its first output."""
    return {
        "discover": (["discover", "--network", "asia", "--samples", 2000, "--epsilon", 1, "--seed", 0], "--out", "g.json"),
        "fit-mrf": (["fit-mrf", table, "--domain", table.parent / "d.json", "--cliques", "a,b", "--epsilon", 1,
                     "--seed", 0], "--out", "m.json"),
        "direction": (["direction", table, "--x", "a", "--y", "b", "--epsilon", 1, "--seed", 0], "--out", "r.json"),
    }


BAD_TARGETS = {
    "missing directory": (lambda d, good: d / "no" / "such" / good, "directory '"),
    "a directory": (lambda d, good: d, "is a directory"),
    "wrong suffix": (lambda d, good: d / "result.txt", "must end in"),
}


@pytest.mark.parametrize("command", ["discover", "fit-mrf", "direction"])
@pytest.mark.parametrize("case", sorted(BAD_TARGETS))
def test_bad_output_is_one_line_before_any_spend(monkeypatch, capsys, no_fit, table, tmp_path, command, case):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    args, flag, good = commands(table, out_dir)[command]
    target, message = BAD_TARGETS[case]
    status, out, err = run_main(monkeypatch, capsys, *args, flag, target(out_dir, good))
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and flag in err and message in err, err
    assert "Privacy ledger" not in out and "CPDAG" not in out
    assert list(out_dir.iterdir()) == []


def test_missing_directory_is_the_same_error_for_every_command(monkeypatch, capsys, no_fit, table, tmp_path):
    messages = set()
    for command, (args, flag, good) in commands(table, tmp_path).items():
        status, _, err = run_main(monkeypatch, capsys, *args, flag, tmp_path / "missing" / good)
        assert status == 2
        messages.add(err.replace(command, "CMD").replace(good, "FILE"))
    assert len(messages) == 1 and "does not exist" in messages.pop()
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("extra,flag", [
    (["--plot", "g.txt"], "--plot"),
    (["--plot", "pictures"], "--plot"),  # an existing directory
])
def test_discover_one_bad_output_writes_none(monkeypatch, capsys, no_fit, tmp_path, extra, flag):
    (tmp_path / "pictures").mkdir()
    before = sorted(tmp_path.iterdir())
    args = ["discover", "--network", "asia", "--samples", 2000, "--epsilon", 1, "--seed", 0,
            "--out", tmp_path / "ok.json", extra[0], tmp_path / extra[1]]
    status, out, err = run_main(monkeypatch, capsys, *args)
    assert status == 2 and len(err.strip().splitlines()) == 1 and flag in err, err
    assert sorted(tmp_path.iterdir()) == before and "Privacy" not in out


def test_fit_mrf_one_bad_output_writes_none(monkeypatch, capsys, no_fit, table, tmp_path):
    args = ["fit-mrf", table, "--domain", table.parent / "d.json", "--cliques", "a,b", "--epsilon", 1,
            "--out", tmp_path / "ok.json",
            "--synthetic", 10, tmp_path / "s.txt"]
    status, out, err = run_main(monkeypatch, capsys, *args)
    assert status == 2 and "--synthetic" in err and ".csv" in err, err
    assert list(tmp_path.iterdir()) == [] and "Privacy ledger" not in out


def test_direction_bad_setting_in_a_batch_is_refused_before_any_spend(monkeypatch, capsys, no_fit, table, tmp_path):
    args = ["direction", table, table, "--x", "a", "--y", "b", "--epsilon", 1, "--score", "magic",
            "--out", tmp_path / "r.json"]
    status, _, err = run_main(monkeypatch, capsys, *args)
    assert status == 2 and "score must be one of" in err, err
    assert list(tmp_path.iterdir()) == []


def test_discover_writes_every_format_it_accepts(monkeypatch, capsys, tmp_path):
    args = ["discover", "--network", "cancer", "--samples", 2000, "--epsilon", 5, "--seed", 0,
            "--out", tmp_path / "g.dot", "--plot", tmp_path / "g.svg"]
    status, out, err = run_main(monkeypatch, capsys, *args)
    assert status == 0, err
    assert (tmp_path / "g.dot").read_text().startswith("digraph") and "privacy" in (tmp_path / "g.dot").read_text()
    assert b"<svg" in (tmp_path / "g.svg").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot", "g.svg"]


def test_fit_mrf_prints_no_row_count_under_add_remove(monkeypatch, capsys, tmp_path):
    """Finding 4: under add/remove the number of rows is private; 100 and 101 rows print alike."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 101)
    frame = pd.DataFrame({"a": a, "b": (a + (rng.random(101) < 0.2)) % 2})
    texts = []
    write_codebook(Domain.of(a=2, b=2), tmp_path / "dom.json")
    for n in (100, 101):
        path = tmp_path / f"d{n}.csv"
        frame.head(n).to_csv(path, index=False)
        status, out, err = run_main(monkeypatch, capsys, "fit-mrf", path, "--cliques", "a,b", "--epsilon", 1,
                                    "--seed", 0, "--domain", tmp_path / "dom.json")
        assert status == 0, err
        assert not [line for line in out.splitlines() if re.search(rf"(?<![\d.]){n}(?![\d.])", line)], out
        texts.append(re.sub(r"about [\d.]+, a noisy estimate", "about X, a noisy estimate", out.replace(str(path), "DATA")))
    assert texts[0] == texts[1]
    assert "noisy estimate" in texts[0]


@pytest.mark.parametrize("content,message", [
    ("a,a,b\n1,2,3\n", "names a column more than once"),
    ("", "is empty or its header (line 1) does not parse: expected a header line"),
    ("x,y\n1,2\n", "does not name the codebook's columns ['a', 'b']"),
])
def test_bad_data_files_are_one_line_errors(monkeypatch, capsys, tmp_path, content, message):
    path = tmp_path / "d.csv"
    path.write_text(content)
    write_codebook(Domain.of(a=2, b=2), tmp_path / "dom.json")
    status, out, err = run_main(monkeypatch, capsys, "discover", path, "--domain", tmp_path / "dom.json")
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_a_directory_as_data_and_missing_columns_read_plainly(monkeypatch, capsys, tmp_path, table):
    status, _, err = run_main(monkeypatch, capsys, "discover", tmp_path, "--domain", table.parent / "d.json")
    assert status == 2 and "is a directory" in err, err
    status, _, err = run_main(monkeypatch, capsys, "fit-mrf", table, "--domain", table.parent / "d.json",
                              "--cliques", "a,b", "--epsilon", 1, "--individual", "uid")
    assert status == 2 and "does not name the codebook's column 'uid'" in err and '"' not in err, err


def test_version_and_sample(monkeypatch, capsys, tmp_path):
    status, out, _ = run_main(monkeypatch, capsys, "--version")
    assert status == 0 and out.startswith("privgraph ")
    status, out, err = run_main(monkeypatch, capsys, "sample", tmp_path / "asia.csv", "--network", "asia",
                                "--samples", 300, "--domain-out", tmp_path / "asia.json")
    assert status == 0, err
    frame = pd.read_csv(tmp_path / "asia.csv")
    assert len(frame) == 300 and set(frame["asia"]) <= {"yes", "no"}
    status, out, err = run_main(monkeypatch, capsys, "discover", tmp_path / "asia.csv", "--domain",
                                tmp_path / "asia.json", "--method", "pc")
    assert status == 0 and "CPDAG" in out, err


def test_direction_refuses_one_column_as_both_variables(monkeypatch, capsys, no_fit, table):
    status, _, err = run_main(monkeypatch, capsys, "direction", table, "--x", "a", "--y", "a", "--epsilon", 1)
    assert status == 2 and "--x and --y name the same column 'a'" in err, err


def test_errors_name_the_flag_or_column(monkeypatch, capsys, tmp_path):
    status, _, err = run_main(monkeypatch, capsys, "demo", "--rows", -5)
    assert status == 2 and "--rows must be an integer >= 1, got -5" in err and "dimensions" not in err, err
    path = tmp_path / "t.csv"
    pd.DataFrame({"age": ["young", "old"] * 150, "b": np.arange(300.0)}).to_csv(path, index=False)
    status, _, err = run_main(monkeypatch, capsys, "direction", path, "--x", "age", "--y", "b", "--epsilon", 1,
                              "--infer-domain")
    assert status == 2 and "column age must have a numeric dtype" in err, err
