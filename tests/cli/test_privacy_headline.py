"""Every private command prints one headline, the guarantee its estimator claims, composed
by the estimator's own method; the comparison of accounting methods only with --compositions."""

import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privgraph.cli import app
from privgraph.data import Domain, write_codebook

HEADLINE = re.compile(r"privacy: \(([^,]+), ([^)]+)\)-DP under (add/remove|replace-one), composed by (\w+)")
COMPARISON = "Accounting methods compared"


def invoke(*args):
    res = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return res.output


def the_headline(text):
    """(epsilon, delta, relation, composition) of the one headline, which must be alone."""
    found = HEADLINE.findall(text)
    assert len(found) == 1, text
    eps, delta, relation, method = found[0]
    return float(eps), float(delta), relation, method


def no_comparison(text):
    assert COMPARISON not in text and "n/a" not in text and "inf" not in text.replace("infer", "")
    assert not re.search(r"^\W*(advanced|pld)\W", text, re.M)  # no method rows


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("headline")
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 3000)
    frame = pd.DataFrame({"a": a, "b": (a + (rng.random(3000) < 0.2)) % 2, "c": rng.integers(0, 3, 3000)})
    frame.to_csv(folder / "d.csv", index=False)
    write_codebook(Domain.of(a=2, b=2, c=3), folder / "d.json")
    x = rng.uniform(-2, 2, 800)
    pd.DataFrame({"x": x, "y": np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, 800)}).to_csv(folder / "pair.csv", index=False)
    return folder


def test_discover_headline_is_priv_pc_optimal_composition():
    args = ["discover", "--network", "cancer", "--samples", "20000", "--epsilon", "5", "--seed", "1"]
    text = invoke(*args)
    assert the_headline(text) == (5.0, 1e-6, "replace-one", "optimal")
    no_comparison(text)
    assert "seeded sampler" in text.split("privacy: (")[1]  # the caveat goes with the headline
    shown = invoke(*args, "--compositions")
    assert COMPARISON in shown and "pld" in shown and the_headline(shown)[3] == "optimal"


def test_fit_mrf_headline_is_basic_for_tables_and_rdp_for_psgd(files):
    base = ["fit-mrf", files / "d.csv", "--domain", files / "d.json", "--cliques", "a,b;b,c", "--epsilon", "1",
            "--seed", "2"]
    text = invoke(*base)
    assert the_headline(text) == (1.0, 0.0, "add/remove", "basic")
    no_comparison(text)
    psgd = invoke(*base, "--method", "psgd", "--delta", "1e-5")
    eps, delta, _, method = the_headline(psgd)
    assert method == "rdp" and delta == 1e-5 and eps <= 1.0  # basic would sum 300 steps to far above 1
    no_comparison(psgd)
    assert "basic" in invoke(*base, "--method", "psgd", "--delta", "1e-5", "--compositions")


def test_release_headline_is_the_ledger_files_guarantee(files, tmp_path):
    import json

    out = tmp_path / "out"
    out.mkdir()
    text = invoke("release", files / "d.csv", "--domain", files / "d.json", "--epsilon", "1", "--out", out,
                  "--seed", "0")
    ledger = json.loads((out / "ledger.json").read_text())
    eps, delta, relation, method = the_headline(text)
    assert (method, relation, delta) == (ledger["composition"], "add/remove", ledger["delta"])
    assert eps == float(f"{ledger['epsilon']:.4g}") and ledger["epsilon"] <= 1.0
    no_comparison(text)


def test_direction_headline_and_the_noise_only_column(files):
    base = ["direction", files / "pair.csv", "--x", "x", "--y", "y", "--epsilon", "1", "--x-bounds", "-2", "2",
            "--y-bounds", "-2", "2", "--seed", "1"]
    text = invoke(*base)
    assert the_headline(text) == (1.0, 0.0, "replace-one", "basic")
    no_comparison(text)
    assert "P(noise kept the order)" in text and "sampling error is not included" in text
    assert "confidence" not in text
    assert COMPARISON in invoke(*base, "--compositions")
