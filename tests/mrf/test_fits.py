"""PrivateMRF's fits as registered objects (issue 48): a contract every registered fit keeps, and a
toy fit registered in one line that runs through ``fit``, ``privacy_plan`` and ``privgraph fit-mrf``."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from privgraph.data import Domain, count_tables, write_codebook
from privgraph.declarations import MRF_FITS
from privgraph.mrf import PrivateMRF
from privgraph.mrf.baselines import naive_mle
from privgraph.mrf.fits import FITS, FitRun, MRFFit
from privgraph.mrf.noisy_tables import plan_release, release_tables
from privgraph.privacy import Neighbours

DOMAIN = Domain.of(a=2, b=2, c=3)
RELATIONS = ("add_remove", "replace_one")


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 1000)
    return pd.DataFrame({"a": a, "b": (a + (rng.random(1000) < 0.2)) % 2, "c": rng.integers(0, 3, 1000)})


def estimator(method, relation, seed=0):
    return PrivateMRF(epsilon=1.0, delta=1e-4, cliques="a,b;b,c", method=method, neighbours=relation,
                      random_state=seed)


def fitted(est, frame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # seeded noise: NOT private, said by every seeded fit
        return est.fit(frame, domain=DOMAIN)


def test_the_registry_is_the_declarations_choices():
    assert tuple(FITS) == tuple(MRF_FITS) == ("cgm-em", "naive-mle", "psgd") and not FITS.missing()
    assert all(isinstance(fit, MRFFit) and fit.name == name for name, fit in FITS.items())


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("name", list(FITS))
def test_every_registered_fit_keeps_the_contract(frame, name, relation):
    """Plan equals ledger under both relations, the composition is the fit's, a seeded fit is
    reproducible, and a clone plans the same."""
    est = estimator(name, relation)
    plan = est.privacy_plan(DOMAIN, len(frame))
    first = fitted(est, frame)
    assert plan == first.ledger_ and plan.relation is Neighbours.parse(relation)
    assert plan.composition == first.composition_ == FITS[name].accountant.name
    again = fitted(estimator(name, relation), frame)
    assert again.ledger_ == first.ledger_
    assert all(np.array_equal(p, q) for p, q in zip(again.model_.potentials, first.model_.potentials))
    clone = type(est)(**est.get_params())
    assert clone.get_params() == est.get_params() and clone.privacy_plan(DOMAIN, len(frame)) == plan


class HalfTables(MRFFit):
    """A toy fit: the tables released with half the budget (the other half left unspent), naive
    MLE on them. One class; registered by one line."""

    name = "toy-half"

    def plan(self, domain, cliques, setting, n_rows):
        return plan_release(domain=domain, cliques=cliques, epsilon=setting.epsilon / 2, neighbours=setting.relation,
                            noise=setting.noise, delta=setting.delta, unit=setting.unit)

    def run(self, data, setting, *, sampler, budget):
        records = int(data.engine.counts([])) if setting.relation is Neighbours.REPLACE_ONE else None
        marginals, ledger = release_tables(count_tables(data.engine, data.cliques), domain=data.domain,
                                           cliques=data.cliques, epsilon=setting.epsilon / 2,
                                           neighbours=setting.relation, sampler=sampler, noise=setting.noise,
                                           delta=setting.delta, records=records, unit=setting.unit, budget=budget)
        return FitRun(naive_mle(marginals), marginals, ledger)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(FITS, HalfTables.name, HalfTables())  # the one registry line
    yield HalfTables.name
    monkeypatch.undo()
    assert HalfTables.name not in MRF_FITS  # unregistered: no longer a choice


@pytest.mark.parametrize("relation", RELATIONS)
def test_a_registered_toy_fit_runs_through_fit_and_plan(frame, toy, relation):
    est = estimator(toy, relation)
    plan = est.privacy_plan(DOMAIN, len(frame))
    assert plan == fitted(est, frame).ledger_ and plan.epsilon() == pytest.approx(0.5)
    assert est.composition_ == "basic" and est.marginals_ is not None


def test_a_registered_toy_fit_is_a_command_line_choice(frame, toy, tmp_path):
    from typer.testing import CliRunner

    from privgraph.cli import app

    frame.to_csv(tmp_path / "d.csv", index=False)
    write_codebook(DOMAIN, tmp_path / "d.json")
    out = tmp_path / "m.json"
    result = CliRunner().invoke(app, ["fit-mrf", str(tmp_path / "d.csv"), "--domain", str(tmp_path / "d.json"),
                                      "--cliques", "a,b;b,c", "--epsilon", "1", "--method", toy, "--seed", "0",
                                      "--out", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    model = json.loads(out.read_text())
    assert model["method"] == toy and sum(row["epsilon"] for row in model["ledger"]) == pytest.approx(0.5)


def test_an_unregistered_name_is_refused_naming_the_fits():
    with pytest.raises(ValueError, match=r"method must be one of \('cgm-em', 'naive-mle', 'psgd'\) or a function"):
        estimator("toy-half", "add_remove").privacy_plan(DOMAIN, None)


def test_a_custom_function_is_a_table_fit(frame):
    """A function of the released tables is still accepted (wrapped as a table fit)."""
    est = estimator(naive_mle, "add_remove")
    assert est.privacy_plan(DOMAIN, None) == fitted(est, frame).ledger_ == fitted(estimator("naive-mle", "add_remove"),
                                                                                 frame).ledger_
