"""Issue 25, part 4: each class of bad input is one line (exit 2) naming the input and what
was expected, before anything is read, spent or written (docs/checks.md, "Bad input")."""

import os
from pathlib import Path

import pytest

from privgraph.data import Domain, write_codebook

from tests.cli.test_fail_before_spending import never_fit, run_main


@pytest.fixture
def no_fit(monkeypatch):
    from privgraph.causal import PrivPC
    from privgraph.release import PrivateRelease

    for cls in (PrivPC, PrivateRelease):
        monkeypatch.setattr(cls, "fit", never_fit)


@pytest.fixture
def codebook(tmp_path):
    path = tmp_path / "d.json"
    write_codebook(Domain.of(a=2, b=2, c=2), path)
    return path


def one_line(status, out, err, *parts):
    assert status == 2 and err.count("\n") == 1 and err.startswith("privgraph: error: "), (status, out, err)
    assert "Traceback" not in err and all(p in err for p in parts), err


@pytest.mark.parametrize("command", ["sample", "discover"])
def test_samples_beyond_memory_are_refused_before_allocating(monkeypatch, capsys, no_fit, tmp_path, command):
    out = tmp_path / "out"
    out.mkdir()
    args = {"sample": ["sample", "--network", "asia", "--samples", 10**12, out / "rows.csv"],
            "discover": ["discover", "--network", "asia", "--samples", 10**12, "--out", out / "g.json"]}[command]
    one_line(*run_main(monkeypatch, capsys, *args), "--samples 1000000000000 needs about", "bytes available")
    assert list(out.iterdir()) == []


OPTIONS = [
    (["release", "DATA", "--domain", "CODEBOOK", "--epsilon", 1, "--out", "OUT", "--cap", 0], "--cap must be an integer >= 1, got 0"),
    (["release", "DATA", "--domain", "CODEBOOK", "--epsilon", 1, "--out", "OUT", "--rows", 0], "--rows must be an integer >= 1"),
    (["release", "DATA", "--domain", "CODEBOOK", "--epsilon", 1, "--out", "OUT", "--split", 1.5], "--split must lie in (0, 1)"),
    (["release", "DATA", "--domain", "CODEBOOK", "--epsilon", "inf", "--out", "OUT"], "--epsilon must be positive and finite"),
    (["release", "DATA", "--domain", "CODEBOOK", "--epsilon", 1, "--delta", 1, "--out", "OUT"], "--delta must lie in [0, 1)"),
    (["discover", "--network", "asia", "--samples", 0, "--out", "OUT/g.json"], "--samples must be an integer >= 1"),
    (["discover", "--network", "asia", "--max-cond-size", -1, "--out", "OUT/g.json"], "--max-cond-size must be an integer >= 0"),
    (["discover", "--network", "asia", "--max-rounds", 0, "--out", "OUT/g.json"], "--max-rounds must be an integer >= 1"),
    (["discover", "--network", "asia", "--alpha", 0, "--out", "OUT/g.json"], "--alpha must lie in (0, 1)"),
    (["discover", "--network", "asia", "--orient-share", 1, "--out", "OUT/g.json"], "--orient-share must lie in (0, 1)"),
    (["discover", "--network", "asia", "--data-seed", -1, "--out", "OUT/g.json"], "--data-seed must be an integer >= 0"),
    (["plan", "--domain", "CODEBOOK", "--rows", 1000, "--epsilon", 1, "--effect", 0], "--effect must lie in (0, 1)"),
    (["plan", "--domain", "CODEBOOK", "--rows", 1000, "--epsilon", 1, "--cell", 1], "--cell must lie in (0, 1)"),
    (["sample", "--network", "asia", "--seed", -3, "OUT/rows.csv"], "--seed must be an integer >= 0"),
]


@pytest.mark.parametrize("args, message", OPTIONS, ids=[" ".join(map(str, a[:1] + a[-2:])) for a, _ in OPTIONS])
def test_every_numeric_option_is_range_checked_up_front(monkeypatch, capsys, no_fit, tmp_path, codebook, args, message):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "d.csv").write_text("a,b,c\n0,1,0\n")
    swap = {"DATA": tmp_path / "d.csv", "CODEBOOK": codebook, "OUT": out}
    args = [swap.get(a, a) if not (isinstance(a, str) and a.startswith("OUT/")) else out / a[4:] for a in args]
    one_line(*run_main(monkeypatch, capsys, *args), message)
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("command", ["plan", "release"])
def test_a_budget_too_small_to_split_speaks_in_the_users_epsilon(monkeypatch, capsys, no_fit, tmp_path, codebook, command):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "d.csv").write_text("a,b,c\n0,1,0\n")
    args = {"plan": ["plan", "--domain", codebook, "--rows", 5000, "--epsilon", 1e-4],
            "release": ["release", tmp_path / "d.csv", "--domain", codebook, "--epsilon", 1e-4, "--out", out]}[command]
    status, o, err = run_main(monkeypatch, capsys, *args)
    one_line(status, o, err, "epsilon=0.0001", "--epsilon", "needs epsilon >= ")
    assert "-1e-06" not in err and list(out.iterdir()) == []


def test_an_existing_output_is_refused_unless_overwrite(monkeypatch, capsys, no_fit, tmp_path):
    out = tmp_path / "g.json"
    out.write_text("old")
    one_line(*run_main(monkeypatch, capsys, "discover", "--network", "asia", "--samples", 2000, "--out", out),
             "--out", "exists already; give --overwrite")
    assert out.read_text() == "old"
    rows = tmp_path / "rows.csv"
    rows.write_text("old")
    one_line(*run_main(monkeypatch, capsys, "sample", "--network", "asia", "--samples", 10, rows), "OUT", "--overwrite")
    status, _, err = run_main(monkeypatch, capsys, "sample", "--network", "asia", "--samples", 10, rows, "--overwrite")
    assert status == 0 and rows.read_text() != "old", err


def test_a_non_empty_release_directory_is_refused_unless_overwrite(monkeypatch, capsys, no_fit, tmp_path, codebook):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").write_text("old")
    (tmp_path / "d.csv").write_text("a,b,c\n0,1,0\n")
    one_line(*run_main(monkeypatch, capsys, "release", tmp_path / "d.csv", "--domain", codebook, "--epsilon", 1,
                       "--out", out), "is not empty; give --overwrite")
    assert [p.name for p in out.iterdir()] == ["report.md"] and (out / "report.md").read_text() == "old"


@pytest.mark.parametrize("neighbours", ["add_remove", "replace_one"])
def test_a_codebook_that_matches_no_value_is_named_from_the_released_model(monkeypatch, capsys, tmp_path, neighbours):
    """True/False in the file against levels 0/1: every value is recoded to the first level, and
    the release says so from its own synthetic rows (post-processing); a matching codebook
    says nothing."""
    import numpy as np

    rng = np.random.default_rng(0)
    rows = ["a,b"] + [f"{'True' if x else 'False'},{y}" for x, y in rng.integers(0, 2, size=(5000, 2))]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    notes = {}
    for name, levels in {"bad": ((0, 1), ("0", "1")), "good": ((False, True), ("0", "1"))}.items():
        write_codebook(Domain(("a", "b"), (2, 2), levels=levels), tmp_path / f"{name}.json")
        (tmp_path / name).mkdir()
        status, out, err = run_main(monkeypatch, capsys, "release", tmp_path / "d.csv", "--domain",
                                    tmp_path / f"{name}.json", "--epsilon", 1, "--seed", 0, "--neighbours",
                                    neighbours, "--out", tmp_path / name)
        assert status == 0, err
        notes[name] = " ".join(out.split())
    assert "first level of column(s) a ('0'; the next level" in notes["bad"], notes["bad"]
    assert " b (" not in notes["bad"]
    assert "first level" not in notes["good"]


def test_a_refusal_after_the_size_speaks_in_the_users_epsilon(monkeypatch, capsys, tmp_path):
    """Add/remove on a wide table: the size is released first, then the tests are refused at
    the size it gave; the refusal names --epsilon and the whole budget that would do."""
    import numpy as np

    d = 300
    write_codebook(Domain.of(**{f"c{i}": 3 for i in range(d)}), tmp_path / "w.json")
    codes = np.random.default_rng(0).integers(0, 3, size=(50, d))
    (tmp_path / "w.csv").write_text(",".join(f"c{i}" for i in range(d)) + "\n"
                                    + "\n".join(",".join(map(str, r)) for r in codes) + "\n")
    status, out, err = run_main(monkeypatch, capsys, "discover", tmp_path / "w.csv", "--domain", tmp_path / "w.json",
                                "--epsilon", 1, "--neighbours", "add_remove", "--method", "priv-pc",
                                "--out", tmp_path / "g.json")
    one_line(status, out, err, "--epsilon 1 is too small for this table", "the whole budget must then be epsilon >= ")
    assert not (tmp_path / "g.json").exists()


@pytest.mark.parametrize("command", ["discover", "release", "domain"])
def test_a_file_that_is_not_parquet_is_one_line(monkeypatch, capsys, tmp_path, codebook, command):
    (tmp_path / "d.parquet").write_bytes(b"not parquet at all")
    (tmp_path / "out").mkdir()
    args = {"discover": ["discover", tmp_path / "d.parquet", "--domain", codebook, "--epsilon", 1],
            "release": ["release", tmp_path / "d.parquet", "--domain", codebook, "--epsilon", 1, "--out", tmp_path / "out"],
            "domain": ["domain", tmp_path / "d.parquet", "--out", tmp_path / "out" / "d.json"]}[command]
    status, out, err = run_main(monkeypatch, capsys, *args)
    if command == "domain":  # its notice that it reads the data comes first
        err = err.splitlines(keepends=True)[-1]
    one_line(status, out, err, "d.parquet", "is not a Parquet file pyarrow can read")
    assert list((tmp_path / "out").iterdir()) == []


def test_a_value_error_from_outside_privgraph_keeps_its_traceback(monkeypatch, capsys):
    """Issue 28: an error raised in a library (here, the test's own code standing in for one) is
    a bug, not bad input: main re-raises it instead of printing one line."""
    from privgraph.causal import PrivPC

    def broken(*args, **kwargs):
        raise ValueError("operands could not be broadcast together")

    monkeypatch.setattr(PrivPC, "fit", broken)
    with pytest.raises(ValueError, match="broadcast"):
        run_main(monkeypatch, capsys, "discover", "--network", "asia", "--samples", 100, "--epsilon", 1)


# Issue 45, item 3: every check before the spend.

@pytest.fixture
def no_spend(monkeypatch, no_fit):
    """No estimator's fit (where the budget is spent) may run."""
    from privgraph.causal.direction import PrivateANM
    from privgraph.mrf import PrivateMRF

    for cls in (PrivateANM, PrivateMRF):
        monkeypatch.setattr(cls, "fit", never_fit)


def spending_commands(tmp_path, codebook, out, budget):
    (tmp_path / "d.csv").write_text("a,b,c\n0,1,0\n")
    data = [tmp_path / "d.csv", "--domain", codebook]
    return {
        "release": ["release", *data, *budget, "--out", out],
        "discover": ["discover", *data, *budget, "--out", out / "g.json"],
        "fit-mrf": ["fit-mrf", *data, "--cliques", "a,b", *budget, "--out", out / "m.json"],
        "direction": ["direction", tmp_path / "d.csv", "--x", "a", "--y", "b", "--x-bounds", 0, 1, "--y-bounds", 0, 1,
                      *budget, "--out", out / "r.json"],
        "plan": ["plan", "--domain", codebook, "--rows", 1000, *budget],
        "demo": ["demo", *budget],
    }


@pytest.mark.parametrize("command", ["release", "discover", "fit-mrf", "direction", "plan", "demo"])
@pytest.mark.parametrize("budget, message", [
    (["--epsilon", 1e9], "--epsilon 1e+09 is above 700, the largest the accountants can compose"),
    (["--epsilon", 1, "--delta", 1e-320], "--delta 9.99989e-321 is below 1e-300"),
])
def test_a_budget_beyond_the_accountants_is_refused_up_front(monkeypatch, capsys, no_spend, tmp_path, codebook,
                                                             command, budget, message):
    """epsilon 1e9 ran 99 s, then overflowed in the PLD comparison while writing the ledger."""
    out = tmp_path / "out"
    out.mkdir()
    status, o, err = run_main(monkeypatch, capsys, *spending_commands(tmp_path, codebook, out, budget)[command])
    one_line(status, o, err, message)
    assert "privacy" not in o.lower() and list(out.iterdir()) == []


def test_a_large_epsilon_is_accepted_with_one_warning_line(monkeypatch, capsys, codebook):
    status, out, err = run_main(monkeypatch, capsys, "plan", "--domain", codebook, "--rows", 1000, "--epsilon", 20)
    assert status == 0 and err.count("\n") == 1, err
    assert err.startswith("privgraph: warning: --epsilon 20 protects nothing in practice"), err
    status, out, err = run_main(monkeypatch, capsys, "plan", "--domain", codebook, "--rows", 1000, "--epsilon", 10)
    assert status == 0 and err == "", err


def test_the_accountants_compare_without_overflow_at_a_huge_epsilon():
    """What the comparison of methods met at epsilon 1e9: PLD refuses at once (shown as no total),
    advanced composition falls back to basic instead of overflowing."""
    import time

    from privgraph.privacy.composition import advanced_epsilon, pld_epsilon
    from privgraph.privacy.ledger import Charge
    from privgraph.privacy.neighbours import Neighbours
    from privgraph.validation import InvalidInput

    charges = [Charge("laplace", 1e9, 0.0, Neighbours.ADD_REMOVE), Charge("laplace", 800.0, 0.0, Neighbours.ADD_REMOVE)]
    start = time.perf_counter()
    with pytest.raises(InvalidInput, match="PLD accounting composes charges of epsilon up to"):
        pld_epsilon(charges, 1e-6)
    assert time.perf_counter() - start < 5
    assert advanced_epsilon(charges, 1e-6) == 1e9 + 800.0


@pytest.mark.parametrize("epsilon", [1e-6, 1e-9])
@pytest.mark.parametrize("neighbours", ["add_remove", "replace_one"])
def test_a_tiny_release_epsilon_speaks_in_the_users_epsilon(monkeypatch, capsys, no_fit, tmp_path, codebook, epsilon,
                                                            neighbours):
    """Under add/remove the size's share went negative first: 'got -9.99e-07' named an internal epsilon."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "d.csv").write_text("a,b,c\n0,1,0\n")
    status, o, err = run_main(monkeypatch, capsys, "release", tmp_path / "d.csv", "--domain", codebook, "--epsilon",
                              epsilon, "--neighbours", neighbours, "--out", out)
    one_line(status, o, err, f"epsilon={epsilon:g}", "(--epsilon)", "a release needs epsilon >= 0.0026")
    assert "got -" not in err and "got 0.0" not in err and list(out.iterdir()) == []


@pytest.mark.parametrize("command", ["release", "fit-mrf"])
def test_synthetic_rows_beyond_memory_are_refused_before_any_fit(monkeypatch, capsys, no_spend, tmp_path, codebook,
                                                                  command):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "d.csv").write_text("a,b,c\n0,1,0\n")
    args = {"release": ["release", tmp_path / "d.csv", "--domain", codebook, "--epsilon", 1, "--rows", 10**12,
                        "--out", out],
            "fit-mrf": ["fit-mrf", tmp_path / "d.csv", "--domain", codebook, "--cliques", "a,b", "--epsilon", 1,
                        "--synthetic", 10**12, out / "s.csv"]}[command]
    flag = {"release": "--rows", "fit-mrf": "--synthetic"}[command]
    status, o, err = run_main(monkeypatch, capsys, *args)
    one_line(status, o, err, f"{flag} 1000000000000 needs about", "(3 columns x", "give at most")
    assert "privacy" not in o.lower() and list(out.iterdir()) == []


UNWRITABLE = "/sys"  # refuses new files even to root, whom os.access lets through


@pytest.mark.skipif(not os.path.isdir(UNWRITABLE), reason="needs Linux's /sys")
@pytest.mark.parametrize("command", ["discover", "release", "fit-mrf", "direction", "sample", "domain"])
def test_an_unwritable_output_directory_is_refused_before_anything_is_read(monkeypatch, capsys, no_spend, tmp_path,
                                                                          codebook, command):
    sys_dir = Path(UNWRITABLE)
    args = spending_commands(tmp_path, codebook, sys_dir, ["--epsilon", 1])
    args["release"] += ["--overwrite"]  # /sys is not empty
    args["sample"] = ["sample", "--network", "asia", "--samples", 10, sys_dir / "rows.csv"]
    args["domain"] = ["domain", tmp_path / "d.csv", "--out", sys_dir / "d.json"]
    status, o, err = run_main(monkeypatch, capsys, *args[command])
    one_line(status, o, err, f"directory '{UNWRITABLE}' is not writable")
    assert ".tmp" not in err and "privacy" not in o.lower()


def test_nested_parquet_columns_are_named_and_scalars_are_drafted(monkeypatch, capsys, tmp_path):
    import pandas as pd

    frame = pd.DataFrame({"when": pd.to_datetime(["2020-01-01", "2021-06-30"]), "ok": [True, False],
                          "tags": [["x", "y"], ["z"]], "meta": [{"k": 1}, {"k": 2}]})
    frame.to_parquet(tmp_path / "d.parquet")
    status, out, err = run_main(monkeypatch, capsys, "domain", tmp_path / "d.parquet", "--out", tmp_path / "d.json")
    one_line(status, out, err.splitlines(keepends=True)[-1], "column 'tags'", "nested type list<", "--columns")
    assert not (tmp_path / "d.json").exists()
    status, out, err = run_main(monkeypatch, capsys, "domain", tmp_path / "d.parquet", "--columns", "meta", "--out",
                                tmp_path / "d.json")
    one_line(status, out, err.splitlines(keepends=True)[-1], "column 'meta'", "nested type struct<")
    status, out, err = run_main(monkeypatch, capsys, "domain", tmp_path / "d.parquet", "--columns", "when,ok", "--out",
                                tmp_path / "d.json")
    assert status == 0 and "Traceback" not in err, err
    from privgraph.data import read_codebook

    drafted = read_codebook(tmp_path / "d.json")
    assert drafted.sizes == (2, 2) and drafted.levels[1] == (False, True)


def test_a_bad_spark_master_is_one_line_before_a_jvm_starts(monkeypatch, capsys, tmp_path, codebook):
    (tmp_path / "d.csv").write_text("a,b,c\n0,1,0\n")
    status, out, err = run_main(monkeypatch, capsys, "discover", tmp_path / "d.csv", "--domain", codebook, "--engine",
                                "spark", "--spark-master", "bogus://x:1", "--epsilon", 1)
    one_line(status, out, err, "--spark-master 'bogus://x:1' is not a Spark master", "spark://HOST:PORT")
    assert "Privacy" not in out


def test_every_tuple_option_shows_the_syntax_its_parser_takes():
    """direction --x-bounds showed <float,float> and refused '0,100': a tuple option's metavar
    is one word per value, space-separated, as the parser reads them."""
    import typer.main

    from privgraph.cli import COMMANDS, app

    group = typer.main.get_command(app)
    found = []
    for name in COMMANDS:
        command = group.get_command(None, name)
        for param in command.params:
            if getattr(param, "nargs", 1) > 1:
                words = (param.metavar or "").split()
                found.append(param.name)
                assert len(words) == param.nargs and not any(c in param.metavar for c in "<>,"), (name, param.metavar)
                assert f"{param.opts[0]} " in param.help, (name, param.help)  # an example of the syntax
    assert {"x_bounds", "y_bounds", "synthetic"} <= set(found)
