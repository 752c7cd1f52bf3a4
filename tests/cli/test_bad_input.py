"""Issue 25, part 4: each class of bad input is one line (exit 2) naming the input and what
was expected, before anything is read, spent or written (docs/checks.md, "Bad input")."""

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
    assert "first level of column(s) a (" in notes["bad"] and "% at '0')" in notes["bad"], notes["bad"]
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
                                "--epsilon", 1, "--neighbours", "add_remove", "--out", tmp_path / "g.json")
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
