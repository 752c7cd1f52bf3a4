"""Off a terminal: one line per stage and a heartbeat during a slow stage, nothing else changed."""

import io
import re
import threading

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import privgraph.cli.progress as progress
from privgraph.cli import app
from privgraph.data import Domain, write_codebook
from privgraph.mrf.estimator import PrivateMRF

STAGE = re.compile(r"^privgraph: (stage \d+/\d+: |still in stage \d+/\d+ \().*$", re.M)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 500)
    folder = tmp_path_factory.mktemp("progress")
    path = folder / "d.csv"
    pd.DataFrame({"c": rng.integers(0, 3, 500), "b": (a + (rng.random(500) < 0.2)) % 2, "a": a,
                  "z": rng.integers(0, 2, 500)}).to_csv(path, index=False)
    write_codebook(Domain.of(c=3, b=2, a=2, z=2), folder / "d.json")
    return path


def fit_mrf(data, folder):
    return CliRunner().invoke(app, ["fit-mrf", str(data), "--domain", str(data.parent / "d.json"), "--cliques", "a,b;b,c",
                                    "--epsilon", "1", "--seed", "3", "--synthetic", "50", str(folder / "s.csv")])


def slow_sample(monkeypatch, beats: int):
    """PrivateMRF.sample waits until the heartbeat has printed ``beats`` lines (no clock involved)."""
    seen = threading.Semaphore(0)
    real_sample = PrivateMRF.sample
    real_print = print

    def watching_print(*args, **kwargs):
        real_print(*args, **kwargs)
        if args and str(args[0]).startswith("privgraph: still in stage 2/3"):
            seen.release()

    def sample(self, *args, **kwargs):
        for _ in range(beats):
            assert seen.acquire(timeout=60), "no heartbeat within 60 s"
        return real_sample(self, *args, **kwargs)

    monkeypatch.setattr(progress, "print", watching_print, raising=False)
    monkeypatch.setattr(PrivateMRF, "sample", sample)


def test_fit_mrf_prints_stages_and_a_heartbeat_off_a_terminal_and_nothing_else(data, tmp_path, monkeypatch):
    (tmp_path / "q").mkdir()
    quick = fit_mrf(data, tmp_path / "q")
    assert quick.exit_code == 0, quick.output
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.01)
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0)  # every stage's line at once
    slow_sample(monkeypatch, beats=2)
    (tmp_path / "s").mkdir()
    slow = fit_mrf(data, tmp_path / "s")
    assert slow.exit_code == 0, slow.output
    lines = [m.group(0) for m in STAGE.finditer(slow.stderr)]
    starts = [line for line in lines if ": stage " in line]
    assert starts == ["privgraph: stage 1/3: counting the data, releasing the tables, fitting the model",
                      "privgraph: stage 2/3: synthetic records", "privgraph: stage 3/3: writing the outputs"]
    beats = [line for line in lines if "still in" in line]
    assert "privgraph: still in stage 2/3 (synthetic records), 0s elapsed" in beats
    assert all(re.fullmatch(r"privgraph: still in stage (1/3 \(counting.*model|2/3 \(synthetic records|3/3 \(writing"
                            r" the outputs)\)(: .+)?, \d+s elapsed", b) for b in beats), beats
    assert slow.stdout.replace(str(tmp_path / "s"), "") == quick.stdout.replace(str(tmp_path / "q"), "")
    assert STAGE.sub("", slow.stderr).strip() == STAGE.sub("", quick.stderr).strip()
    assert (tmp_path / "s" / "s.csv").read_text() == (tmp_path / "q" / "s.csv").read_text()


class BeatLog(io.StringIO):
    """A stream that sets ``beat`` when a heartbeat line is written."""

    def __init__(self, beat: threading.Event):
        super().__init__()
        self.beat = beat

    def write(self, text):
        out = super().write(text)
        if "still in" in text:
            self.beat.set()
        return out


def test_the_heartbeat_reports_the_stage_and_its_elapsed_time_from_the_clock():
    ticks, beat = iter([100.0, 190.0, 191.0, 192.0]), threading.Event()
    log = BeatLog(beat)
    with progress.stages(("one", "two"), stream=log, clock=lambda: next(ticks), interval=0.001, quiet=0) as stage:
        stage("one")
        assert beat.wait(60)
    lines = log.getvalue().splitlines()
    assert lines[0] == "privgraph: stage 1/2: one"
    assert lines[1] == "privgraph: still in stage 1/2 (one), 1m30s elapsed"


def test_the_heartbeat_stops_with_the_stage():
    log = io.StringIO()
    with progress.stages(("one",), stream=log, interval=0.001) as stage:
        stage("one")
    assert not [t for t in threading.enumerate() if t.name == "privgraph-heartbeat"]
    after = log.getvalue()
    threading.Event().wait(0.05)
    assert log.getvalue() == after


def test_a_terminal_gets_no_lines():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    log = Terminal()
    with progress.stages(("one",), stream=log, interval=0.001) as stage:
        stage("one")
    assert log.getvalue() == ""


def test_synthetic_records_have_the_codebook_columns_in_its_order_and_say_what_is_left_out(data, tmp_path):
    result = fit_mrf(data, tmp_path)
    assert result.exit_code == 0, result.output
    records = pd.read_csv(tmp_path / "s.csv")
    assert list(records.columns) == ["c", "b", "a"]  # codebook order, not the cliques' (a, b, c)
    assert "left out of the synthetic records: ['z']" in result.stdout


def test_a_stage_that_ends_at_once_prints_nothing():
    """A run that stops at once (a bad input's one-line error) adds no stage line; a stage
    still running after the quiet time prints its line, then its heartbeats."""
    import io
    import threading

    log = io.StringIO()
    with progress.stages(("one", "two"), stream=log, interval=60, quiet=60) as stage:
        stage("one")
        stage("two")
    assert log.getvalue() == ""
    seen = threading.Event()
    log = BeatLog(seen)
    with progress.stages(("one",), stream=log, interval=0.001, quiet=0.001) as stage:
        stage("one")
        assert seen.wait(10)
    assert log.getvalue().splitlines()[0] == "privgraph: stage 1/1: one"
