"""PrivPC: accounting, limits, inputs, bad input, scikit-learn compatibility."""

import numpy as np
import pandas as pd
import pytest

from privgraph.causal import BudgetTooSmall, PrivPC, SieveExamineDecider, Tables, make_margin
from privgraph.data import Domain, NumpyEngine
from privgraph.datasets import load_network, sample, sample_frame
from privgraph.privacy import Budget, SeededSampler
from privgraph.stats import KendallTest

PRIVATE = ("priv-pc", "svt-pc", "laplace-pc", "sg-pc", "em-pc")


def frame(name="asia", n=100_000, seed=0):
    """Categorical columns: the public domain comes with the dtypes."""
    return sample_frame(load_network(name), n, np.random.default_rng(seed))


@pytest.fixture(scope="module")
def asia():
    return frame()


def edges(est):
    return {frozenset(e) for e in est.skeleton_.edges}


@pytest.mark.parametrize("method", PRIVATE)
def test_ledger_total_equals_the_budget_asked(method, asia):
    est = PrivPC(epsilon=2.0, delta=1e-6, method=method, random_state=1).fit(asia)
    assert est.epsilon_spent_ <= 2.0 and est.epsilon_spent_ == pytest.approx(2.0, rel=1e-8)
    total = est.ledger_.total(est.composition_, est.delta)
    assert total.epsilon == est.epsilon_spent_ and total.delta <= 1e-6
    assert est.ledger_.neighbours == {est.ledger_.charges[0].neighbours} and \
        est.ledger_.charges[0].neighbours.value == "replace_one"


def test_spearman_pays_the_budget_and_reaches_non_private_spearman_pc():
    X = frame("survey", 50_000, seed=6)
    truth = edges(PrivPC(method="pc", ci_test="spearman").fit(X))
    est = PrivPC(epsilon=1e4, ci_test="spearman", random_state=0).fit(X)
    assert edges(est) == truth and est.epsilon_spent_ == pytest.approx(1e4, rel=1e-8)


def test_ledger_total_with_a_pure_budget_is_basic(asia):
    est = PrivPC(epsilon=3.0, delta=0.0, random_state=2).fit(asia)
    assert est.composition_ == "basic" and est.epsilon_spent_ == pytest.approx(3.0, rel=1e-8)


@pytest.mark.parametrize("method", ["priv-pc", "laplace-pc"])
def test_block_votes_for_the_g_test_pay_the_budget_too(method, asia):
    est = PrivPC(epsilon=50.0, method=method, ci_test="g", random_state=3).fit(asia)
    assert est.epsilon_spent_ == pytest.approx(50.0, rel=1e-8)


@pytest.mark.parametrize("name", ["asia", "cancer", "survey"])
@pytest.mark.parametrize("method", ["priv-pc", "svt-pc"])
def test_limit_at_huge_epsilon_is_non_private_kendall_pc(name, method):
    X = frame(name, 50_000, seed=4)
    truth = edges(PrivPC(method="pc").fit(X))
    for seed in range(3):
        assert edges(PrivPC(epsilon=1e4, method=method, random_state=seed).fit(X)) == truth


def test_priv_pc_converges_to_non_private_kendall_pc(asia):
    """The mean number of skeleton disagreements with non-private PC falls to 0 as the budget grows."""
    truth = edges(PrivPC(method="pc").fit(asia))
    pairs = {frozenset((a, b)) for i, a in enumerate(asia.columns) for b in asia.columns[i + 1:]}

    def errors(eps):
        return np.mean([len(edges(PrivPC(epsilon=eps, random_state=s).fit(asia)) ^ truth) for s in range(4)])

    e = [errors(eps) for eps in (0.5, 5.0, 1e4)]
    assert e[0] <= len(pairs) and e[1] <= e[0] + 1 and e[2] == 0


def test_budget_too_small_is_refused_before_any_budget_is_spent(asia):
    tables = Tables.from_engine(NumpyEngine.from_frame(asia))
    budget = Budget(0.05, 1e-6, composition="optimal")
    with pytest.raises(BudgetTooSmall, match=r"needs epsilon >= \d"):
        SieveExamineDecider(tables, make_margin(KendallTest(), 0.05), epsilon=0.05, delta=1e-6, rounds=56,
                     sampler=SeededSampler(0), budget=budget)
    assert len(budget.ledger) == 0
    with pytest.raises(BudgetTooSmall, match=r"method='gauss-pc' \(--method gauss-pc\).* not with the 28 pairs"):
        PrivPC(epsilon=0.01).fit(asia)  # the default cap grows with the pairs: the scalable method is named
    with pytest.raises(BudgetTooSmall) as refused:
        PrivPC(epsilon=0.01, max_rounds=56).fit(asia)
    assert "gauss-pc" not in str(refused.value)  # a cap the user chose: only the cap's own advice


@pytest.mark.parametrize("params,match", [
    (dict(alpha=1.5), "alpha must lie in"),
    (dict(alpha=0.0), "alpha must lie in"),
    (dict(method="magic"), "method must be one of"),
    (dict(ci_test="pearson"), "ci_test must be .auto. or one of"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(max_rounds=0), "max_rounds"),
    (dict(max_cond_size=-2), "max_cond_size"),
])
def test_bad_parameters_are_refused(params, match, asia):
    with pytest.raises(ValueError, match=match):
        PrivPC(**params).fit(asia)


def test_bad_data_is_refused():
    X = frame("cancer", 200)
    dup = pd.concat([X, X.iloc[:, :1]], axis=1)
    with pytest.raises(ValueError, match="duplicate column names"):
        PrivPC().fit(dup)
    with pytest.raises(ValueError, match="one value only|single value"):
        PrivPC().fit(X.assign(const=1), infer_domain=True)
    with pytest.raises(ValueError, match="fewer than the 5 variables"):
        PrivPC().fit(NumpyEngine(load_network("cancer").domain, X.iloc[:3].apply(lambda c: c.cat.codes).to_numpy()))
    with pytest.raises(ValueError, match="continuous"):
        PrivPC().fit(X.assign(weight=np.linspace(0, 1, len(X))), infer_domain=True)
    engine = NumpyEngine(Domain(("a", "b"), (2, 1)), np.zeros((10, 2), dtype=int))
    with pytest.raises(ValueError, match=r"\['b'\] take a single value"):
        PrivPC().fit(engine)


def test_inputs_dataframe_array_and_path_agree(tmp_path):
    X = frame("cancer", 20_000, seed=5)
    path = tmp_path / "cancer.parquet"
    X.to_parquet(path)
    net = load_network("cancer").domain
    domain = Domain(net.names, net.sizes, net.kinds)  # levels 0..k-1: the file holds codes
    codes = X.apply(lambda c: c.cat.codes).to_numpy()
    a = edges(PrivPC(method="pc").fit(X))
    b = edges(PrivPC(method="pc").fit(codes, names=list(X.columns), domain=domain))
    c = edges(PrivPC(method="pc").fit(str(path), domain=domain))
    assert a == b == c
    with pytest.raises(ValueError, match="names"):
        PrivPC().fit(codes, domain=domain)


def test_parameters_are_stored_verbatim_and_clone_works():
    base = pytest.importorskip("sklearn.base")
    est = PrivPC(epsilon=0.7, delta=1e-7, alpha=0.01, ci_test="spearman", max_cond_size=2, method="svt-pc",
                 random_state=3, max_rounds=40)
    twin = base.clone(est)
    assert twin.get_params() == est.get_params() and twin is not est
    assert est.set_params(alpha=0.2).alpha == 0.2
    with pytest.raises(ValueError, match="invalid parameters"):
        est.set_params(eps=1)


def test_random_state_none_is_secure_and_an_int_is_not():
    X = frame("cancer", 20_000)
    assert PrivPC(epsilon=5.0).fit(X).sampler_.is_secure
    assert not PrivPC(epsilon=5.0, random_state=1).fit(X).sampler_.is_secure


def test_background_knowledge_reaches_the_driver(asia):
    est = PrivPC(method="pc", forbidden=[("tub", "either")], required=[("asia", "dysp")]).fit(asia)
    assert not est.skeleton_.has_edge("tub", "either") and est.skeleton_.has_edge("asia", "dysp")


def test_attributes_after_fit(asia):
    est = PrivPC(epsilon=1.0, random_state=0).fit(asia)
    assert est.graph_.nodes == tuple(asia.columns)
    assert est.n_tests_ > 0 and est.rounds_ == 56 and 1 <= est.rounds_used_ <= 56
    assert set(est.sepsets_) <= {frozenset((a, b)) for a in asia.columns for b in asia.columns if a != b}


def test_a_round_that_reaches_its_query_cap_ends_the_run(asia):
    from privgraph.causal import stable_pc_skeleton

    tables = Tables.from_engine(NumpyEngine.from_frame(asia))
    decider = SieveExamineDecider(tables, make_margin(KendallTest(), 0.05), epsilon=1.0, delta=1e-6, rounds=56,
                           sampler=SeededSampler(0), max_queries=2)
    sk = stable_pc_skeleton(tables.names, decider)
    assert decider.exhausted and not sk.complete and sk.n_tests <= 3 * 56


def test_orientation_by_direction_tests_under_the_same_budget(asia):
    base = PrivPC(epsilon=2.0, random_state=1).fit(asia)
    est = PrivPC(epsilon=2.0, orient="direction", orient_share=0.3, random_state=1).fit(asia)
    assert len(est.graph_.undirected_edges) <= len(base.graph_.undirected_edges)
    assert est.epsilon_spent_ <= 2.0 + 1e-9
    assert any(c.mechanism.startswith("private_anm") for c in est.ledger_) or not base.graph_.undirected_edges
    plan = PrivPC(epsilon=2.0, orient="direction", orient_share=0.3).privacy_plan(load_network("asia").domain, len(asia))
    assert plan.charges[-1].epsilon == pytest.approx(0.6) and plan.total("basic").epsilon > 0.6
    outer = Budget(2.0, 1e-6, composition="basic")
    with pytest.raises(Exception, match="budget exceeded"):  # the structure's plan by basic composition is too dear
        PrivPC(epsilon=2.0, orient="direction", random_state=1).fit(asia, budget=outer)
    with pytest.raises(ValueError, match="private method"):
        PrivPC(method="pc", orient="direction").fit(asia)
    with pytest.raises(ValueError, match="orient_share"):
        PrivPC(orient="direction", orient_share=1.5).fit(asia)


def test_orientation_never_fails_after_the_structure_is_spent():
    """Edges touching a nominal column, or a share too small for the rows, stay undirected:
    decided from public facts, never an error after the structure's budget is spent."""
    rng = np.random.default_rng(3)
    z = rng.integers(0, 3, 400)
    a = (z == 1).astype(int)
    b = (a + (rng.random(400) < 0.1)) % 2
    df = pd.DataFrame({"z": pd.Categorical.from_codes(z, ["p", "q", "r"]),
                       "a": pd.Categorical.from_codes(a, ["no", "yes"], ordered=True),
                       "b": pd.Categorical.from_codes(b, ["no", "yes"], ordered=True)})
    est = PrivPC(method="laplace-pc", epsilon=50.0, orient="direction", orient_share=0.01, random_state=0).fit(df)
    assert est.epsilon_spent_ <= 50.0 and est.graph_.nodes == ("z", "a", "b")
