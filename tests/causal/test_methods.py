"""PC's skeleton methods as objects in one registry (privgraph.causal.methods): PrivPC and the
release's planner read it, so a method's plan, run and noise have one answer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from privgraph.causal import PrivPC
from privgraph.causal.methods import FISHER_Z_METHODS, METHODS, ROUNDS_PER_PAIR, SkeletonMethod
from privgraph.datasets import load_network, sample_frame
from privgraph.privacy import Neighbours
from privgraph.release.planner import gauss_epsilons, plan_release, structure_estimator
from privgraph.validation import InvalidInput

AR, RO = Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE


def test_the_registry_names_every_method_once_with_its_relations():
    assert list(METHODS) == ["priv-pc", "svt-pc", "em-pc", "laplace-pc", "sg-pc", "gauss-pc", "tables-pc", "pc"]
    assert all(isinstance(m, SkeletonMethod) and m.name == name for name, m in METHODS.items())
    assert {n for n, m in METHODS.items() if AR not in m.relations} == {"em-pc", "sg-pc"}
    assert all(RO in m.relations for m in METHODS.values())
    assert ROUNDS_PER_PAIR == {"priv-pc": 2, "svt-pc": 1, "laplace-pc": 4, "sg-pc": 4}
    assert FISHER_Z_METHODS == ("priv-pc", "pc")


@pytest.mark.parametrize("name", ["priv-pc", "svt-pc", "laplace-pc", "sg-pc", "gauss-pc", "tables-pc"])
def test_each_method_plans_what_privpc_plans(name):
    """PrivPC's plan is its method's plan (no name is branched on elsewhere)."""
    domain = load_network("asia").domain
    est = PrivPC(epsilon=2.0, method=name)
    shape = est._public_shape(domain, 50_000)
    assert est.privacy_plan(domain, 50_000).ledger == METHODS[name].plan(shape, est.ci_test_for(domain),
                                                                         est._search(shape))
    assert est.privacy_plan(domain, 50_000).accountant == METHODS[name].accountant(est.delta)


def test_a_method_that_cannot_plan_or_predict_says_so():
    domain = load_network("asia").domain
    with pytest.raises(InvalidInput, match="offline"):
        PrivPC(method="em-pc").privacy_plan(domain, 50_000)
    with pytest.raises(InvalidInput, match="predicts no per-level noise"):
        PrivPC(method="priv-pc").test_noise(domain, 50_000)


def test_a_run_charges_its_plan():
    net = load_network("cancer")
    X = sample_frame(net, 20_000, np.random.default_rng(0), labels=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("priv-pc", "laplace-pc"):
            est = PrivPC(epsilon=3.0, method=name, random_state=0)
            assert est.fit(X, domain=net.domain).ledger_ == est.privacy_plan(net.domain, 20_000)


def test_the_planner_predicts_gauss_pc_from_the_estimator_the_release_builds(monkeypatch):
    """The release planner's stage-1 noise is the Gauss-PC estimator's own public prediction,
    so a changed PrivPC default (here its conditioning cap) changes the plan with the fit."""
    domain = load_network("asia").domain
    plan = plan_release(domain, 100_000, epsilon=1.0, structure="gauss-pc", split=0.5, neighbours="replace_one")
    eps = gauss_epsilons(1.0, 1e-6, 0.5)[0]
    noise = structure_estimator("gauss-pc", eps, 1e-6, 0.05).test_noise(domain, 100_000)
    assert plan.stages[0].noise == noise.first and plan.stages[0].epsilon == eps

    monkeypatch.setattr(PrivPC, "_max_cond_size", lambda self, tables: 0)  # a different default: level 0 only
    shallow = plan_release(domain, 100_000, epsilon=1.0, structure="gauss-pc", split=0.5, neighbours="replace_one")
    assert shallow.stages[0].noise < plan.stages[0].noise  # level 0 gets the whole budget
