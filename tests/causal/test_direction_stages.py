"""Direction scores and privacy modes as registered stages (issue 48, item 1): a new score is one
class and one registry line, and runs through fit, the plan and the command line; every
registered score under every mode it allows meets the contract (plan equals ledger under both
relations, seeded reproducibility, clone); no branch on a score's or a mode's name remains
outside the registry modules."""

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privgraph import declarations
from privgraph.causal.direction import PrivateANM, modes, scores
from privgraph.cli import app
from privgraph.data import Domain, Kind, write_codebook
from privgraph.privacy import Neighbours
from privgraph.privacy.add_remove import AddRemove
from privgraph.validation import InvalidInput

BOUNDS = ((-2.0, 2.0), (-2.0, 2.0))


def clone(est):
    """A new estimator of the same parameters (scikit-learn's clone: get_params, then the constructor)."""
    return type(est)(**est.get_params())
RELATIONS = ("replace_one", "add_remove")


def pair(n: int, seed: int = 0):
    """x -> y with a non-linear effect and uniform noise, inside BOUNDS."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, n)
    return x, np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, n)


class ClippedError(scores.LaplaceScore):
    """Toy score (test only): each direction's mean squared residual on the unit-width scale,
    clipped at c^2 = 0.01. Replace-one: one test record changes one of the m terms, each in
    [0, c^2], so the mean moves by at most c^2 / m."""

    name = "toy-clipped-error"

    def statistic(self, cause, residual, residual_bandwidth):
        return float(np.minimum((residual / scores.COMMON_WIDTH) ** 2, 0.01).mean())

    def sensitivity(self, m):
        return 0.01 / m


@pytest.fixture
def toy(monkeypatch):
    """The toy score registered for one test (the registry line; undone after the test)."""
    monkeypatch.setitem(scores.SCORES, ClippedError.name, ClippedError())
    return ClippedError.name


def allowed():
    """Every registered (score, mode) pair the mode has a guarantee for."""
    out = []
    for score, stage in scores.SCORES.items():
        for privacy, mode in modes.MODES.items():
            try:
                mode.check(stage)
            except InvalidInput:
                continue
            out.append((score, privacy))
    return out


def assert_plan_is_ledger(est, x, y):
    """The plan (public facts: n, or under add/remove the released size's guess) equals the
    ledger fit charges."""
    fitted = clone(est).fit(x, y)
    n = len(x)
    if Neighbours.parse(est.neighbours) is Neighbours.ADD_REMOVE:  # the guess whose public size is the released one
        size = AddRemove(est.epsilon, est.delta, "basic")
        near = int(fitted.size_estimate_)
        n = next(g for g in range(near - 50, near + 50) if size.at_guess(g)[0] == fitted.n_rows_)
    plan = est.privacy_plan(None, n)
    assert plan == fitted.ledger_, (plan.ledger, fitted.ledger_)
    assert plan.composition == fitted.composition_
    return fitted


def test_the_declaration_reads_the_registry_and_a_registered_name_is_accepted(toy):
    assert tuple(declarations.DIRECTION_SCORES) == tuple(scores.SCORES) and toy in declarations.DIRECTION_SCORES
    assert PrivateANM.declared_params()["score"].check(toy) == toy
    assert scores.SCORES.missing() == []


def test_the_toy_is_gone_after_its_test():
    assert ClippedError.name not in scores.SCORES and ClippedError.name not in declarations.DIRECTION_SCORES


@pytest.mark.parametrize("neighbours", RELATIONS)
@pytest.mark.parametrize("privacy", ["record", "test"])
def test_a_registered_toy_score_fits_and_plans(toy, privacy, neighbours):
    x, y = pair(2000)
    est = PrivateANM(epsilon=2.0, score=toy, privacy=privacy, neighbours=neighbours, bounds=BOUNDS, random_state=1)
    with pytest.warns(UserWarning, match="NOT private"):
        fitted = assert_plan_is_ledger(est, x, y)
    assert fitted.direction_ in ("x->y", "y->x", "undecided") and fitted.result_.score == toy
    assert fitted.ledger_.total().epsilon == pytest.approx(2.0)


def test_a_registered_toy_score_is_refused_where_its_mode_has_no_guarantee(toy):
    with pytest.raises(InvalidInput, match=f"score='{toy}' has no derived guarantee under privacy='train"):
        PrivateANM(score=toy, privacy="train+test", bounds=BOUNDS).fit(*pair(200))


def test_a_registered_toy_score_runs_from_the_command_line(toy, tmp_path):
    x, y = pair(800)
    path, book, out = tmp_path / "p.csv", tmp_path / "p.json", tmp_path / "r.json"
    pd.DataFrame({"a": x, "b": y}).to_csv(path, index=False)
    write_codebook(Domain(("a", "b"), (0, 0), (Kind.CONTINUOUS,) * 2, ((), ()), BOUNDS), book)
    result = CliRunner().invoke(app, ["direction", str(path), "--domain", str(book), "--x", "a", "--y", "b",
                                      "--epsilon", "2", "--score", toy, "--seed", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    row = json.loads(out.read_text())[0]
    assert row["direction"] in ("x->y", "y->x") and row["epsilon"] == pytest.approx(2.0)
    refused = CliRunner().invoke(app, ["direction", str(path), "--domain", str(book), "--x", "a", "--y", "b",
                                       "--epsilon", "2", "--score", "no-such-score"])
    assert refused.exit_code != 0 and "no-such-score" in str(refused.exception) + refused.output


@pytest.mark.parametrize("neighbours", RELATIONS)
@pytest.mark.parametrize("score, privacy", allowed())
def test_every_registered_score_and_mode_meets_the_contract(score, privacy, neighbours):
    """Plan equals ledger, seeded reproducibility, clone: on a small pair (epsilon 2; 400 rows, or
    under add/remove 1500, whose public size after the 1% release of it is about 1000)."""
    x, y = pair(400 if neighbours == "replace_one" else 1500, seed=3)
    est = PrivateANM(epsilon=2.0, score=score, privacy=privacy, neighbours=neighbours, bounds=BOUNDS,
                     random_state=7)
    twin = clone(est)
    assert twin is not est and twin.get_params() == est.get_params()
    with pytest.warns(UserWarning, match="NOT private"):
        first = assert_plan_is_ledger(est, x, y)
        again = clone(est).fit(x, y)
    assert (first.direction_, first.scores_, first.ledger_) == (again.direction_, again.scores_, again.ledger_)
    assert first.result_ == again.result_


def test_every_mode_and_score_is_in_the_declarations():
    assert tuple(modes.MODES) == PrivateANM.declared_params()["privacy"].choices
    assert tuple(scores.SCORES) == PrivateANM.declared_params()["score"].choices


#: The registry modules: the only places a score's or a mode's name may be compared with.
REGISTRY_MODULES = {"causal/direction/scores.py", "causal/direction/modes.py"}
SRC = Path(__file__).resolve().parents[2] / "src" / "privgraph"


def name_branches(path: Path, names: set) -> list[str]:
    """``file:line: comparison`` of each comparison of a score's or a mode's name with something
    named after a score, a privacy mode or a mode (``score == "hsic"``, ``self.privacy in
    ("test", "record")``) in ``path``."""
    def constants(node):
        if isinstance(node, ast.Constant):
            return {node.value}
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return {e.value for e in node.elts if isinstance(e, ast.Constant)}
        return set()

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = any(isinstance(o, (ast.Name, ast.Attribute)) and
                        any(w in ast.unparse(o) for w in ("score", "privacy", "mode")) for o in operands)
            if named and any(constants(o) & names for o in operands):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_branch_on_a_score_or_mode_name_outside_the_registries():
    names = set(scores.SCORES) | set(modes.MODES)
    files = [*sorted((SRC / "causal" / "direction").glob("*.py")), SRC / "cli" / "direction.py",
             SRC / "causal" / "deciders.py"]
    found = [hit for f in files if str(f.relative_to(SRC)) not in REGISTRY_MODULES for hit in name_branches(f, names)]
    assert found == []


def test_the_scan_sees_a_branch(tmp_path):
    """The scan has teeth: the kinds of branch the registries replaced are reported, others not."""
    planted = tmp_path / "planted.py"
    planted.write_text('def f(score, self, split):\n'
                       '    if score == "iqr" or self.privacy in ("test", "record") or "hsic" != self.score:\n'
                       '        return split == "test"\n')
    hits = name_branches(planted, set(scores.SCORES) | set(modes.MODES))
    assert len(hits) == 3 and all(h.startswith("planted.py:2:") for h in hits)
