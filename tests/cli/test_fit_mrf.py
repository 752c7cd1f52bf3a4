"""`privgraph fit-mrf`: a model and synthetic data written atomically, bad input as one line."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from privgraph.data import Domain, write_codebook


def run(*args):
    return subprocess.run([sys.executable, "-m", "privgraph", "fit-mrf", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 3000)
    b = (a + (rng.random(3000) < 0.2)) % 2
    c = rng.integers(0, 3, 3000)
    folder = tmp_path_factory.mktemp("mrf")
    path = folder / "d.csv"
    pd.DataFrame({"a": a, "b": b, "c": c}).to_csv(path, index=False)
    write_codebook(Domain.of(a=2, b=2, c=3), folder / "d.json")
    return path


def codebook(data):
    return ["--domain", data.parent / "d.json"]


def test_fit_writes_model_and_synthetic_records(data, tmp_path):
    out, syn = tmp_path / "m.json", tmp_path / "s.csv"
    res = run(data, *codebook(data), "--cliques", "a,b;b,c", "--epsilon", "1", "--out", out,
              "--synthetic", 200, syn, "--seed", 3)
    assert res.returncode == 0, res.stderr
    model = json.loads(out.read_text())
    assert model["cliques"] == [["a", "b"], ["b", "c"]] and model["ledger"][0]["epsilon"] == 1.0
    records = pd.read_csv(syn)
    assert list(records.columns) == ["a", "b", "c"] and len(records) == 200
    assert "NOT private" in res.stdout and "Privacy ledger" in res.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["--cliques", "a,zz", "--epsilon", "1"], "zz"),
        (["--cliques", "a,b", "--epsilon", "0"], "epsilon"),
        (["--cliques", "a,b", "--epsilon", "1", "--method", "magic"], "method"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(data, tmp_path, args, message):
    out = tmp_path / "m.json"
    res = run(data, *codebook(data), *args, "--out", out)
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_file_without_a_domain_is_refused_before_reading(data, tmp_path):
    res = run(data, "--cliques", "a,b", "--epsilon", "1")
    assert res.returncode == 2 and "no public domain" in res.stderr and "privgraph domain" in res.stderr
    res = run(data, "--cliques", "a,b", "--epsilon", "1", "--infer-domain", "--seed", 0)
    assert res.returncode == 0 and "NOT PRIVATE" in res.stdout and "domain read from the data" in res.stdout


def test_missing_file(tmp_path):
    res = run(tmp_path / "nope.csv", "--cliques", "a,b", "--epsilon", "1")
    assert res.returncode == 2 and "no such data file" in res.stderr
