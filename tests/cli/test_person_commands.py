"""Every private command with the person as the unit (the codebook's ``"id"`` and
``--max-rows-per-person``): its guarantee line names the person; ``plan`` shows what each k costs."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privgraph.cli import app
from privgraph.data import Domain, domain_to_codebook

PERSON = re.compile(r"privacy: \(([^,]+), ([^)]+)\)-DP for each person \(at most (\d+) rows? each\) under "
                    r"(add/remove|replace-one), composed by (\w+)")


def invoke(*args, ok: bool = True):
    res = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    if ok:
        assert res.exit_code == 0, res.output
    return res


def the_headline(text):
    found = PERSON.findall(text)
    assert len(found) == 1, text
    eps, delta, k, relation, method = found[0]
    return float(eps), float(delta), int(k), relation, method


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("persons")
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.integers(0, 2, n)
    pids = [f"p{i // 3}" for i in range(n)]  # three rows each
    pd.DataFrame({"a": a, "b": (a + (rng.random(n) < 0.2)) % 2, "c": rng.integers(0, 3, n), "pid": pids}).to_csv(
        folder / "d.csv", index=False)
    book = domain_to_codebook(Domain.of(a=2, b=2, c=3))
    (folder / "d.json").write_text(json.dumps(book | {"id": "pid"}))
    (folder / "plain.json").write_text(json.dumps(book))
    x = rng.uniform(-2, 2, n)
    pd.DataFrame({"x": x, "y": np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, n), "pid": pids}).to_csv(
        folder / "pair.csv", index=False)
    pair = {"format": "privgraph-domain", "version": 1, "id": "pid",
            "columns": [{"name": c, "kind": "continuous", "bounds": [-2, 2]} for c in "xy"]}
    (folder / "pair.json").write_text(json.dumps(pair))
    return folder


def test_discover_names_the_person(files):
    text = invoke("discover", files / "d.csv", "--domain", files / "d.json", "--epsilon", "30", "--delta", "0",
                  "--neighbours", "add_remove", "--max-rows-per-person", "2", "--seed", "0").output
    assert the_headline(text) == (30.0, 0.0, 2, "add/remove", "basic")
    assert "per row: for each person (at most 2 rows each)" in text
    assert not re.search(r"\b[23],?000\b", text)  # neither the rows nor the kept rows (private) are shown


def test_fit_mrf_names_the_person_under_both_relations(files):
    for relation, shown in (("add_remove", "add/remove"), ("replace_one", "replace-one")):
        text = invoke("fit-mrf", files / "d.csv", "--domain", files / "d.json", "--cliques", "a,b", "--epsilon", "1",
                      "--neighbours", relation, "--max-rows-per-person", "3", "--seed", "0").output
        assert the_headline(text) == (1.0, 0.0, 3, shown, "basic")
        assert "public under replace-one" not in text  # the kept rows' number is private


def test_release_names_the_person_and_writes_the_unit(files, tmp_path):
    text = invoke("release", files / "d.csv", "--domain", files / "d.json", "--epsilon", "2", "--structure", "tree",
                  "--max-rows-per-person", "2", "--seed", "0", "--out", tmp_path / "out").output
    eps, delta, k, relation, method = the_headline(text)
    assert k == 2 and relation == "add/remove" and eps <= 2.0 + 1e-9
    ledger = json.loads((tmp_path / "out" / "ledger.json").read_text())
    assert ledger["privacy_unit"] == {"person_column": "pid", "max_rows_per_person": 2, "ledger_rows_per_person": 2}
    assert "n_rows_public" not in ledger
    assert "pid" not in (tmp_path / "out" / "synthetic.csv").read_text().splitlines()[0].split(",")


def test_direction_reads_the_person_beside_the_pair(files):
    text = invoke("direction", files / "pair.csv", "--domain", files / "pair.json", "--x", "x", "--y", "y",
                  "--epsilon", "8", "--max-rows-per-person", "2", "--seed", "0").output
    assert the_headline(text)[2:4] == (2, "replace-one")
    assert "3000" not in text  # the file's rows are private: the table shows the released size


def test_plan_shows_what_each_bound_costs(files):
    text = invoke("plan", "--domain", files / "d.json", "--rows", "20000", "--epsilon", "1").output
    assert "what each bound k on a person's rows costs" in text
    for k, eps in ((1, "1"), (2, "0.5"), (5, "0.2"), (10, "0.1")):
        assert re.search(rf"│\s+{k} │\s+{re.escape(eps)} │", text), text
    costs = json.loads(invoke("plan", "--domain", files / "d.json", "--rows", "20000", "--epsilon", "1",
                              "--json").output.splitlines()[0])
    assert [c["k"] for c in costs["per_k"]] == [1, 2, 5, 10]
    at = invoke("plan", "--domain", files / "d.json", "--rows", "20000", "--epsilon", "1",
                "--max-rows-per-person", "5").output
    assert "for each person (at most 5 rows each)" in at and "epsilon=0.2" in at


def test_a_half_given_unit_is_a_one_line_error(files):
    """Each a user's mistake (InvalidInput, which the command line prints as one line)."""
    from privgraph.validation import InvalidInput

    res = invoke("fit-mrf", files / "d.csv", "--domain", files / "plain.json", "--cliques", "a,b", "--epsilon", "1",
                 "--max-rows-per-person", "3", ok=False)
    assert isinstance(res.exception, InvalidInput) and "needs a person column" in str(res.exception)
    res = invoke("discover", files / "d.csv", "--domain", files / "d.json", "--epsilon", "1", ok=False)
    assert isinstance(res.exception, InvalidInput) and "--max-rows-per-person" in str(res.exception)
    res = invoke("fit-mrf", files / "d.csv", "--domain", files / "d.json", "--cliques", "a,b", "--epsilon", "1",
                 "--max-rows-per-person", "0", ok=False)
    assert isinstance(res.exception, InvalidInput) and "--max-rows-per-person" in str(res.exception)
