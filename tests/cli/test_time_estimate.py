"""The planner's time estimate (privgraph.release.timing): printed once before the long work of
``release`` off a terminal, and by ``plan`` (``discover`` prints none: no committed file calibrates
each of its methods); read from public facts only, so two
neighbouring files (one record more) under add/remove get the same line."""

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import privgraph.cli.progress as progress
from privgraph.cli import app
from privgraph.data import Domain, write_codebook
from privgraph.release.timing import release_time

PREFIX = "privgraph: the planner's estimate: about "


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two neighbouring files under add/remove (the second has one record more) and their codebook."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 2000)
    frame = pd.DataFrame({"a": a, "b": (a + (rng.random(2000) < 0.2)) % 2, "c": rng.integers(0, 3, 2000),
                          "z": rng.integers(0, 2, 2000)})
    folder = tmp_path_factory.mktemp("estimate")
    frame.to_csv(folder / "small.csv", index=False)
    pd.concat([frame, pd.DataFrame({"a": [1], "b": [1], "c": [2], "z": [0]})]).to_csv(folder / "large.csv", index=False)
    write_codebook(Domain.of(a=2, b=2, c=3, z=2), folder / "d.json")
    return folder


def _estimate_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(PREFIX)]


@pytest.mark.parametrize("command", ["release"])
def test_printed_once_before_the_long_work_and_the_same_for_neighbours(files, tmp_path, monkeypatch, command):
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0)  # the stage lines on (tests/conftest.py silences them)
    seen = []
    for name in ("small", "large"):
        args = [command, str(files / f"{name}.csv"), "--domain", str(files / "d.json"), "--epsilon", "1",
                "--seed", "0", "--neighbours", "add_remove"]
        if command == "release":
            args += ["--out", str(tmp_path / name)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        lines = _estimate_lines(result.stderr)
        assert len(lines) == 1 and "per million rows" in lines[0] and "the data's size is private" in lines[0], lines
        stage_lines = [line for line in result.stderr.splitlines() if line.startswith("privgraph: stage ")]
        last = "the PC search" if command == "discover" else "the structure and the model's tables"
        long_work = result.stderr.index(next(line for line in stage_lines if line.endswith(last)))
        assert result.stderr.index(lines[0]) < long_work  # before the long stage starts
        seen.append(lines[0])
    assert seen[0] == seen[1]


def test_silenced_with_the_stage_lines(files, tmp_path):
    result = CliRunner().invoke(app, ["release", str(files / "small.csv"), "--domain", str(files / "d.json"),
                                      "--epsilon", "1", "--seed", "0", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert _estimate_lines(result.stderr) == []


@pytest.mark.parametrize("extra, estimate", [([], release_time([2, 2, 3, 2], 1.0))])
def test_plan_shows_it_at_its_rows(files, extra, estimate):
    result = CliRunner().invoke(app, ["plan", "--domain", str(files / "d.json"), "--rows", "2000000",
                                      "--epsilon", "1", *extra], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert estimate.line(2_000_000) in result.stdout


def test_the_estimate_grows_with_the_public_facts():
    assert release_time([10] * 8, 1.0).fixed > release_time([10] * 4, 1.0).fixed
    assert release_time([10] * 4, 1.0).fixed > release_time([2] * 4, 1.0).fixed
    assert release_time([10] * 4, 3.0).fixed > release_time([10] * 4, 0.3).fixed
    assert release_time([10] * 4, 1.0).at(10_000_000) > release_time([10] * 4, 1.0).at(1_000_000)
