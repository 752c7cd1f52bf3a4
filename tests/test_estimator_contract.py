"""The one estimator contract (issues 12, 28): keyword-only parameters, clone, repr, params, fitted checks,
budget=, ``privacy_plan(domain, n_rows)`` equal to the fitted ledger for all four estimators, warnings."""

import warnings

import numpy as np
import pandas as pd
import pytest

from privgraph.causal import PrivPC
from privgraph.causal.direction import PrivateANM
from privgraph.data import Domain
from privgraph.datasets import load_network, sample_frame
from privgraph.estimator import SEEDED_WARNING, NotFittedError
from privgraph.mrf import PrivateMRF
from privgraph.privacy import Budget, Ledger, Neighbours, PrivacyPlan
from privgraph.privacy.ledger import guarantee
from privgraph.release import PrivateRelease

ASIA = load_network("asia")


@pytest.fixture(scope="module")
def asia():
    return sample_frame(ASIA, 20_000, np.random.default_rng(0))


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(1)
    return pd.DataFrame({"a": rng.integers(0, 2, 2000), "b": rng.integers(0, 3, 2000)}), Domain.of(a=2, b=3)


ESTIMATORS = [
    lambda: PrivPC(epsilon=0.7, delta=1e-7, alpha=0.01, method="svt-pc", random_state=3, max_rounds=40),
    lambda: PrivateMRF(epsilon=0.5, cliques="a,b", noise="gaussian", delta=1e-6, options={"max_iter": 5}),
    lambda: PrivateANM(epsilon=0.5, score="spearman", bounds=((-2, 2), (-2, 2)), random_state=1),
    lambda: PrivateRelease(epsilon=2.0, structure="priv-pc", split=0.5, random_state=2),
]
CLASSES = (PrivPC, PrivateANM, PrivateMRF, PrivateRelease)


@pytest.mark.parametrize("cls", CLASSES)
def test_parameters_are_keyword_only_and_led_by_the_privacy_ones(cls):
    import inspect

    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert all(p.kind is p.KEYWORD_ONLY for p in params)
    assert [p.name for p in params[:4]] == ["epsilon", "delta", "neighbours", "random_state"]
    with pytest.raises(TypeError):
        cls(1.0)
    assert list(inspect.signature(cls.privacy_plan).parameters) == ["self", "domain", "n_rows"]


@pytest.mark.parametrize("cls", CLASSES)
def test_every_parameter_is_declared_once_and_every_declaration_is_a_parameter(cls):
    import inspect

    declared = [p.name for p in cls.PARAMS]
    assert len(declared) == len(set(declared)), declared
    assert declared == list(inspect.signature(cls.__init__).parameters)[1:]  # in the signature's order
    assert all(p.help and "\n" not in p.help and p.default is not inspect.Parameter.empty for p in cls.PARAMS)


@pytest.mark.parametrize("cls", CLASSES)
def test_every_default_passes_its_declared_check(cls):
    """A declaration agrees with its default: the kind or the choices accept it."""
    for param in cls.declared_params().values():
        if param.default is not None and (param.kind or param.choices):
            param.check(param.default)


@pytest.mark.parametrize("cls", CLASSES)
def test_fit_takes_the_data_positionally_and_the_rest_by_keyword(cls):
    """One fit shape: ``fit(X, *, domain=None, infer_domain=False, budget=None)`` (PrivPC keeps
    scikit-learn's ignored ``y``; the pair estimator takes its two columns)."""
    import inspect

    params = inspect.signature(cls.fit).parameters
    data = {PrivPC: ["X", "y"], PrivateANM: ["x", "y"]}.get(cls, [list(params)[1]])
    assert [n for n, p in params.items() if p.kind is p.POSITIONAL_OR_KEYWORD] == ["self", *data]
    assert all(params[n].kind is inspect.Parameter.KEYWORD_ONLY for n in ("domain", "infer_domain", "budget"))
    assert [params[n].default for n in ("domain", "infer_domain", "budget")] == [None, False, None]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_clone_params_and_repr_follow_scikit_learn(make):
    base = pytest.importorskip("sklearn.base")
    est = make()
    twin = base.clone(est)
    assert twin is not est and twin.get_params() == est.get_params()
    given = {"max_iter": 5}
    assert PrivateMRF(cliques="a,b", options=given).options is given  # stored verbatim, not rewritten
    assert PrivateMRF(cliques="a,b").cliques == "a,b"
    assert type(est).__name__ + "(" in repr(est) and "epsilon=" in repr(est)
    assert est.set_params(epsilon=2.0).epsilon == 2.0
    with pytest.raises(ValueError, match="invalid parameters"):
        est.set_params(eps=1)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_not_fitted_is_both_value_and_attribute_error(make):
    validation = pytest.importorskip("sklearn.utils.validation")
    est = make()
    with pytest.raises(NotFittedError) as info:
        est.ledger_
    assert isinstance(info.value, ValueError) and isinstance(info.value, AttributeError)
    assert not hasattr(est, "graph_")
    with pytest.raises(validation.NotFittedError):
        validation.check_is_fitted(est)


def test_check_is_fitted_passes_after_fit(asia, small):
    validation = pytest.importorskip("sklearn.utils.validation")
    validation.check_is_fitted(PrivPC(method="laplace-pc", epsilon=5.0, random_state=0).fit(asia))
    df, d = small
    validation.check_is_fitted(PrivateMRF(epsilon=1.0, cliques="a,b", random_state=0).fit(df, domain=d))
    x = np.random.default_rng(3).uniform(-2, 2, 2000)
    validation.check_is_fitted(PrivateANM(epsilon=1.0, bounds=((-2, 2), (-2, 2)), random_state=0).fit(x, np.tanh(x)))
    validation.check_is_fitted(PrivateRelease(epsilon=2.0, structure="tree", random_state=0).fit(asia))


def test_seeded_noise_warns_and_a_generator_is_accepted(asia, small):
    with pytest.warns(UserWarning, match="NOT private"):
        PrivPC(method="laplace-pc", epsilon=5.0, random_state=np.random.default_rng(0)).fit(asia)
    df, d = small
    with pytest.warns(UserWarning, match="NOT private"):
        PrivateMRF(epsilon=1.0, cliques="a,b", random_state=2).fit(df, domain=d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # secure noise: no warning
        PrivPC(method="laplace-pc", epsilon=5.0).fit(asia)
    assert SEEDED_WARNING.endswith("(tests and experiments only)")


def test_one_budget_shared_by_several_fits(asia, small):
    df, d = small
    budget = Budget(3.0, 1e-6, composition="basic")
    mrf = PrivateMRF(epsilon=1.0, cliques="a,b", neighbours="replace_one", random_state=0)
    mrf.fit(df, domain=d, budget=budget)
    PrivPC(method="laplace-pc", epsilon=1.0, delta=0.0, max_rounds=20, random_state=0).fit(asia, budget=budget)
    assert budget.spent().epsilon == pytest.approx(2.0)
    with pytest.raises(Exception, match="budget exceeded"):
        mrf.set_params(epsilon=1.5).fit(df, domain=d, budget=budget)
    with pytest.raises(ValueError, match="cannot join a budget spent under"):  # one relation per budget
        PrivateMRF(epsilon=0.5, cliques="a,b", random_state=0).fit(df, domain=d, budget=budget)


def _same_epsilon(plan: PrivacyPlan, fitted, delta: float) -> bool:
    return plan.epsilon(delta) == pytest.approx(guarantee(fitted.ledger_, fitted.composition_, delta).epsilon,
                                                rel=1e-12)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_privpc_plan_is_the_ledger_fit_charges(asia, neighbours):
    est = PrivPC(epsilon=1.0, neighbours=neighbours, random_state=0)
    plan = est.privacy_plan(ASIA.domain, len(asia))
    fitted = est.fit(asia)
    assert isinstance(plan, PrivacyPlan) and plan.relation is Neighbours.parse(neighbours)
    assert plan == fitted.ledger_ and fitted.ledger_ == plan and plan.ledger == fitted.ledger_
    assert plan.composition == fitted.composition_ and _same_epsilon(plan, fitted, 1e-6)
    plan.check(Budget(1.0, 1e-6, composition=plan.composition))
    with pytest.raises(Exception, match="budget exceeded"):
        plan.check(Budget(0.5, 1e-6, composition=plan.composition))


def test_privpc_plan_of_the_g_test():
    rng = np.random.default_rng(2)
    z = rng.integers(0, 3, 20_000)
    nominal = pd.DataFrame({"z": pd.Categorical.from_codes(z, ["a", "b", "c"]),
                            "y": pd.Categorical.from_codes((z == 1).astype(int), ["no", "yes"])})
    g = PrivPC(epsilon=5.0, random_state=0)  # ci_test="auto" picks the G test's block votes here
    assert g.privacy_plan({"format": "privgraph-domain", "version": 1, "columns": [
        {"name": "z", "kind": "nominal", "levels": ["a", "b", "c"]},
        {"name": "y", "kind": "nominal", "levels": ["no", "yes"]}]}, len(nominal)) == g.fit(nominal).ledger_


@pytest.mark.parametrize("kw", [dict(), dict(noise="gaussian", delta=1e-6), dict(neighbours="replace_one"),
                                dict(method="psgd", delta=1e-4, options={"steps": 20}),
                                dict(method="psgd", delta=1e-4, neighbours="replace_one", options={"steps": 20})])
def test_mrf_plan_is_the_ledger_fit_charges(small, kw):
    df, d = small
    mrf = PrivateMRF(epsilon=1.0, cliques="a,b", random_state=0, **kw)
    plan = mrf.privacy_plan(d, len(df))
    fitted = mrf.fit(df, domain=d)
    assert plan == fitted.ledger_ and plan.relation is Neighbours.parse(mrf.neighbours)
    assert plan.composition == fitted.composition_ and _same_epsilon(plan, fitted, kw.get("delta", 1e-6))


@pytest.mark.parametrize("score, privacy", [("reci", "record"), ("kendall", "record"), ("iqr", "record"),
                                            ("reci", "test"), ("spearman", "test"), ("hsic", "test"),
                                            ("iqr", "test"), ("hsic", "train+test")])
def test_direction_plan_is_the_ledger_fit_charges(score, privacy):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, 3000)
    y = np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, 3000)
    est = PrivateANM(epsilon=1.0, score=score, privacy=privacy, bounds=((-2, 2), (-2, 2)), random_state=4)
    plan = est.privacy_plan(None, len(x))  # derived, not run: no data, no placeholder
    with pytest.warns(UserWarning, match="NOT private"):
        fitted = est.fit(x, y, budget=Budget(1.0, 1e-6))
    assert plan == fitted.ledger_ and plan.composition == fitted.composition_ == "basic"
    assert _same_epsilon(plan, fitted, 1e-6)


def test_direction_plan_reads_no_data_and_refuses_as_fit():
    est = PrivateANM(epsilon=1.0, score="hsic", privacy="test")
    plan = est.privacy_plan(None, 20_000)  # no data is passed: the plan cannot read any
    assert len(plan) == 2 and not plan.is_private  # the test-only caveat
    with pytest.raises(ValueError, match="needs 32 test rows"):
        PrivateANM(epsilon=1.0, score="kendall").privacy_plan(None, 40)
    # add/remove through the generic reduction (the size first; issue 49 needs it for the person unit)
    assert [c.mechanism for c in PrivateANM(neighbours="add_remove").privacy_plan(None, 2000)][0] == "laplace"
    assert PrivateANM().neighbours == "replace_one"


def _costs(ledger: Ledger):
    """What each charge costs: the parameters' tables are known once the graph is, so the
    plan fixes their (epsilon, delta), not their per-table sensitivity."""
    return [(c.mechanism, c.neighbours, c.count, pytest.approx(c.epsilon, rel=1e-12), pytest.approx(c.delta, rel=1e-12))
            for c in ledger]


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
@pytest.mark.parametrize("structure", ["priv-pc", "gauss-pc", "tree"])
def test_release_plan_is_the_ledger_fit_charges(asia, neighbours, structure):
    est = PrivateRelease(epsilon=2.0, neighbours=neighbours, structure=structure, random_state=0)
    plan = est.privacy_plan(ASIA.domain, len(asia))
    fitted = est.fit(asia)
    assert plan.relation is Neighbours.parse(neighbours) and plan.composition == fitted.composition_
    assert _costs(plan) == _costs(fitted.ledger_) and _same_epsilon(plan, fitted, 1e-6)
    assert plan.charges[:-1] == fitted.ledger_.charges[:-1]  # every stage before the parameters', exactly
    if structure == "tree":
        assert plan == fitted.ledger_
    assert est.release_plan(ASIA.domain, len(asia)).structure == structure


def test_neighbouring_relation_is_visible():
    assert PrivPC().neighbours == "replace_one" and PrivPC(neighbours="add_remove").neighbours == "add_remove"
    assert PrivateMRF(cliques="a,b").neighbours == "add_remove"


def test_auto_test_finds_a_non_monotone_nominal_dependence():
    """z in {a, b, c}, y = [z == b]: Kendall on the alphabetical order sees no trend."""
    rng = np.random.default_rng(0)
    z = rng.choice(["a", "b", "c"], 20_000)
    df = pd.DataFrame({"z": pd.Categorical(z, categories=["a", "b", "c"]),
                       "y": pd.Categorical(np.where(z == "b", "yes", "no"), categories=["no", "yes"])})
    kendall = PrivPC(method="pc", ci_test="kendall").fit(df)
    auto = PrivPC(method="pc").fit(df)
    assert kendall.skeleton_.number_of_edges() == 0 and kendall.ci_test_ == "kendall"
    assert auto.skeleton_.has_edge("z", "y") and auto.ci_test_ == "g-test"
