"""Every long command, off a terminal: a line per stage and heartbeats naming where its long loop is.

Each test lowers the heartbeat's period, then holds the command inside its long loop (a
function the loop calls, wrapped to wait) until a heartbeat naming that loop's position has
been printed: no clock is read, so a loaded machine only makes the test slower, never wrong.
"""

import re
import threading

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import privgraph.cli.progress as progress
from privgraph.cli import app
from privgraph.data import Domain, write_codebook

BEAT = re.compile(r"^privgraph: still in stage \d+/\d+ \(.*\)(: .*)?, \d+(m\d\ds|s) elapsed$")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 3000)
    folder = tmp_path_factory.mktemp("beats")
    pd.DataFrame({"a": a, "b": (a + (rng.random(3000) < 0.2)) % 2, "c": rng.integers(0, 3, 3000),
                  "z": rng.integers(0, 2, 3000)}).to_csv(folder / "d.csv", index=False)
    write_codebook(Domain.of(a=2, b=2, c=3, z=2), folder / "d.json")
    x = rng.uniform(0, 1, 300)
    pd.DataFrame({"x": x, "y": x**2 + rng.normal(0, 0.05, 300)}).to_csv(folder / "p1.csv", index=False)
    pd.DataFrame({"x": x, "y": np.sqrt(x) + rng.normal(0, 0.05, 300)}).to_csv(folder / "p2.csv", index=False)
    return folder


class Beats:
    """The heartbeat lines printed, and a wait until one names ``needle``."""

    def __init__(self, monkeypatch):
        self.monkeypatch, self.lines, self.needle, self.seen = monkeypatch, [], None, threading.Event()
        real_print = print

        def watching_print(*args, **kwargs):
            real_print(*args, **kwargs)
            text = str(args[0]) if args else ""
            self.lines.append(text)
            if text.startswith("privgraph: still in") and self.needle is not None and self.needle in text:
                self.seen.set()

        monkeypatch.setattr(progress, "print", watching_print, raising=False)

    def wait(self) -> None:
        assert self.seen.wait(60), f"no heartbeat naming {self.needle!r} within 60 s"

    def hold(self, owner, name: str, needle: str) -> list:
        """``owner.name`` waits, on its first call, until a heartbeat names ``needle``."""
        real, self.needle = getattr(owner, name), needle

        def held(*args, **kwargs):
            self.wait()
            return real(*args, **kwargs)

        self.monkeypatch.setattr(owner, name, held)
        return self.lines


@pytest.fixture
def beats(monkeypatch):
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0)
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.01)
    return Beats(monkeypatch)


def run(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def check(lines, needle):
    beats = [line for line in lines if line.startswith("privgraph: still in")]
    assert any(needle in b for b in beats), beats[:5]
    assert all(BEAT.fullmatch(b) for b in beats), [b for b in beats if not BEAT.fullmatch(b)][:3]


#: sg-pc's sub-sampled tests take some 10 s on this table: in the slow run.
METHODS = ["priv-pc", "svt-pc", "laplace-pc", pytest.param("sg-pc", marks=pytest.mark.slow), "em-pc", "gauss-pc",
           "tables-pc", "pc"]


@pytest.mark.parametrize("method", METHODS)
def test_discover_beats_with_the_level_and_the_edges_left(data, beats, monkeypatch, method):
    from privgraph.causal import PrivPC

    real_fit = PrivPC.fit
    beats.needle = "level 0, 6 edges left"

    def fit(self, *args, on_level=None, **kwargs):  # every method's loop reports its levels through on_level
        def held(level, edges):
            on_level(level, edges)
            if level == 0:
                beats.wait()

        return real_fit(self, *args, on_level=held, **kwargs)

    monkeypatch.setattr(PrivPC, "fit", fit)
    relation = "replace_one" if method in ("em-pc", "sg-pc") else "add_remove"
    result = run("discover", data / "d.csv", "--domain", data / "d.json", "--method", method, "--epsilon", 2,
                 "--seed", 1, "--neighbours", relation)
    assert "privgraph: stage 2/2: the PC search" in result.stderr
    check(beats.lines, "level 0, 6 edges left")


def test_discover_beats_with_the_edge_of_the_level(data, beats):
    import privgraph.causal.skeleton as skeleton

    lines = beats.hold(skeleton, "_test_side", "level 0: edge 1 of 6")
    run("discover", data / "d.csv", "--domain", data / "d.json", "--method", "priv-pc", "--epsilon", 2, "--seed", 1)
    check(lines, "level 0: edge 1 of 6")


def test_release_beats_with_the_adaptive_round(data, beats, tmp_path):
    import privgraph.release.adaptive as adaptive

    lines = beats.hold(adaptive, "model_pair_tables", "the adaptive round 1 of at most 64")
    result = run("release", data / "d.csv", "--domain", data / "d.json", "--epsilon", 1, "--structure", "tree",
                 "--seed", 1, "--out", tmp_path / "out")
    assert "privgraph: stage 1/3: the structure and the model's tables" in result.stderr
    check(lines, "the adaptive round 1 of at most 64")


def test_writing_the_outputs_beats_with_the_output(beats, tmp_path):
    from privgraph.outputs import write_all

    beats.needle = "writing b.txt, output 2 of 2"

    def slow(tmp):
        beats.wait()
        (tmp_path / "done").touch()

    with progress.stages(("writing the outputs",)) as stage:
        stage("writing the outputs")
        write_all({tmp_path / "a.txt": lambda tmp: None, tmp_path / "b.txt": slow})
    check(beats.lines, "writing b.txt, output 2 of 2")


def test_fit_mrf_beats_with_the_fit_iteration(data, beats, tmp_path):
    import privgraph.mrf.cgm as cgm

    lines = beats.hold(cgm, "_evaluate", "the model fit (CGM-EM): iteration 1 of at most")
    run("fit-mrf", data / "d.csv", "--domain", data / "d.json", "--cliques", "a,b;b,c", "--epsilon", 1, "--seed", 3,
        "--synthetic", 50, tmp_path / "s.csv")
    check(lines, "iteration 1 of at most")


def test_fit_mrf_beats_with_the_sampler_chunk(data, beats, tmp_path):
    import privgraph.mrf.sampling as sampling

    lines = beats.hold(sampling, "_draw_rows", "drawing 50 rows: chunk 1 of 1")
    run("fit-mrf", data / "d.csv", "--domain", data / "d.json", "--cliques", "a,b;b,c", "--epsilon", 1, "--seed", 3,
        "--synthetic", 50, tmp_path / "s.csv")
    check(lines, "drawing 50 rows: chunk 1 of 1")


def test_direction_beats_with_the_pair(data, beats):
    from privgraph.causal.direction import PrivateANM

    lines = beats.hold(PrivateANM, "fit", "pair 1 of 2")
    run("direction", data / "p1.csv", data / "p2.csv", "--x", "x", "--y", "y", "--x-bounds", 0, 1, "--y-bounds", -1, 2,
        "--epsilon", 1, "--seed", 0)
    check(lines, "pair 1 of 2")


def test_plan_beats(data, beats):
    import privgraph.release as release

    lines = beats.hold(release, "plan_release", "(the planner's predictions (public facts only))")
    run("plan", "--domain", data / "d.json", "--rows", 1000, "--epsilon", 1)
    check(lines, "(the planner's predictions (public facts only))")


def test_domain_beats(data, beats, tmp_path):
    import privgraph.data.draft as draft

    lines = beats.hold(draft, "draft_with_notes", "(drafting the codebook (every row))")
    run("domain", data / "d.csv", "--out", tmp_path / "draft.json")
    check(lines, "(drafting the codebook (every row))")
