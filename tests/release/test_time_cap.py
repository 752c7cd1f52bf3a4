"""The release's public time cap (``--max-seconds``, :mod:`privgraph.timecap`): past it the run
stops cleanly, nothing written; without it, or under a generous one, the same run completes."""

import numpy as np
import pytest
from typer.testing import CliRunner

from privgraph.cli import app
from privgraph.data.codebook import write_codebook
from privgraph.datasets import load_network, sample_frame
from privgraph.release import PrivateRelease
from privgraph.timecap import TimeCapReached, time_cap


@pytest.fixture(scope="module")
def child(tmp_path_factory):
    net = load_network("child")
    d = tmp_path_factory.mktemp("child")
    sample_frame(net, 2_000, np.random.default_rng(0), labels=True).to_csv(d / "child.csv", index=False)
    write_codebook(net.domain, d / "child.json")
    return d / "child.csv", d / "child.json"


def _release(child, out, *extra):
    data, domain = child
    out.mkdir()
    return CliRunner().invoke(app, ["release", str(data), "--domain", str(domain), "--epsilon", "1", "--out", str(out),
                                    "--structure", "tree", "--seed", "1", *extra])


def test_past_the_cap_the_release_stops_and_writes_nothing(child, tmp_path):
    result = _release(child, tmp_path / "capped", "--max-seconds", "0")
    assert result.exit_code == 1, result.output
    assert "stopped at" in result.output and "past its time cap of 0 s" in result.output
    assert list((tmp_path / "capped").iterdir()) == []


def test_under_a_generous_cap_the_release_completes(child, tmp_path):
    result = _release(child, tmp_path / "free", "--max-seconds", "3600")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "free" / "synthetic.csv").exists()


def test_a_bad_cap_is_refused_before_anything_is_read(child, tmp_path):
    result = _release(child, tmp_path / "bad", "--max-seconds", "-1")
    assert result.exit_code != 0 and "--max-seconds must be a number of seconds >= 0, got -1.0" in str(result.exception)


def test_the_python_cap_stops_a_fit_and_lifts_after_it():
    net = load_network("asia")
    X = sample_frame(net, 2_000, np.random.default_rng(1), labels=True)
    with time_cap(0.0), pytest.raises(TimeCapReached, match="past its time cap"):
        PrivateRelease(epsilon=1.0, structure="tree", random_state=0).fit(X, domain=net.domain)
    rel = PrivateRelease(epsilon=1.0, structure="tree", random_state=0).fit(X, domain=net.domain)
    assert rel.sample(100).shape == (100, len(net.domain.names))
