"""PrivPC under add/remove neighbours: the size released, the data resized, replace-one PC on it.

The reduction and its proof are in :mod:`privgraph.privacy.resize`; the engines in
:mod:`privgraph.data.subset`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import hypergeom

from privgraph.causal import PrivPC
from privgraph.data import Domain, NumpyEngine, open_engine
from privgraph.data.subset import SelectedRows, WeightedRows, resize_engine
from privgraph.datasets import load_network, sample_frame
from privgraph.privacy import Budget, Neighbours, SeededSampler
from privgraph.privacy.resize import as_add_remove, public_size, size_epsilons

AR, RO = Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


class CountsOnly:
    """An engine that only counts (no codes, no distinct rows): the resize's last resort."""

    def __init__(self, engine):
        self.engine, self.domain = engine, engine.domain

    def counts(self, columns, rows=None):
        return self.engine.counts(columns, rows)


def _codes(n: int, d: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, size=(n, d))


def _engines(codes: np.ndarray, tmp_path):
    """The same rows behind each path of resize_engine: codes, the joint's cells (a Parquet
    file through DuckDB), and counts only over a domain too wide for a joint table."""
    d = codes.shape[1]
    names = tuple(f"v{i}" for i in range(d))
    narrow = Domain(names, (2,) * d, levels=(("0", "1"),) * d)
    path = tmp_path / "d.parquet"
    pd.DataFrame(codes.astype(str), columns=names).to_parquet(path)
    wide = Domain(names + ("w",), (2,) * d + (1 << 22,))
    wide_codes = np.hstack([codes, np.zeros((codes.shape[0], 1), dtype=int)])
    return {"codes": NumpyEngine(narrow, codes),
            "joint cells": open_engine(str(path), narrow, neighbours=AR),
            "counts only": CountsOnly(NumpyEngine(wide, wide_codes))}


@pytest.mark.parametrize("m", [50, 137, 200, 260])
def test_resize_engine_gives_exactly_m_rows_on_every_path(m, tmp_path):
    codes = _codes(200, 3, 0)
    for path, engine in _engines(codes, tmp_path).items():
        resized = resize_engine(engine, m, SeededSampler(m))
        one_way = [np.asarray(engine.counts([c])) for c in ("v0", "v1", "v2")]
        assert int(resized.counts([])) == m, path
        for c, before in zip(("v0", "v1", "v2"), one_way):
            after = np.asarray(resized.counts([c]))
            if m <= 200:  # a subset of the rows
                assert after.sum() == m and (after <= before).all(), path
            else:  # every row, and the pad row (code 0) m - n times
                assert after.tolist() == [before[0] + m - 200, before[1]], path
    assert isinstance(resize_engine(_engines(codes, tmp_path)["joint cells"], 100, SeededSampler(0)), WeightedRows)
    assert isinstance(resize_engine(_engines(codes, tmp_path)["counts only"], 100, SeededSampler(0)), SelectedRows)


def test_a_row_selection_means_the_same_as_on_the_expanded_rows():
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 3, size=(6, 2))
    weights = rng.integers(0, 5, size=6)
    domain = Domain.of(a=3, b=3)
    expanded = NumpyEngine(domain, np.repeat(rows, weights, axis=0))
    weighted = WeightedRows(domain, rows, weights)
    selected = SelectedRows(NumpyEngine(domain, rows), 6, np.array([1, 4]), 3)
    padded = NumpyEngine(domain, np.vstack([rows[[1, 4]], np.zeros((3, 2), dtype=int)]))
    for _ in range(20):
        pick = np.flatnonzero(rng.random(int(weights.sum())) < 0.5)
        assert weighted.counts(["b", "a"], rows=pick).tolist() == expanded.counts(["b", "a"], rows=pick).tolist()
        pick = np.flatnonzero(rng.random(5) < 0.5)
        assert selected.counts(["a", "b"], rows=pick).tolist() == padded.counts(["a", "b"], rows=pick).tolist()


def test_the_joint_cells_path_draws_a_uniform_subset():
    """Each of 10 distinct rows (weights 1..4) lands in a uniform 6-subset of the 25 rows as
    often as the hypergeometric law says: 4,000 draws, Hoeffding at 1e-9 per cell."""
    domain = Domain.of(a=10)
    weights = np.array([1, 2, 3, 4, 1, 2, 3, 4, 3, 2])
    engine = WeightedRows(domain, np.arange(10).reshape(10, 1), weights)
    sampler, draws = SeededSampler(11), 4_000
    got = np.array([resize_engine(engine, 6, sampler).counts(["a"]) for _ in range(draws)])
    tol = math.sqrt(math.log(2 / 1e-9) / (2 * draws))
    for cell, w in enumerate(weights):
        for k in range(w + 1):
            expected = hypergeom(25, w, 6).pmf(k)
            assert abs(np.mean(got[:, cell] == k) - expected) <= tol


def _geometric(p: float, support: np.ndarray, centre: int) -> np.ndarray:
    """Two-sided geometric mechanism's probabilities of ``support`` around ``centre``."""
    return (1 - p) / (1 + p) * p ** np.abs(support - centre)


@pytest.mark.parametrize("m", [5, 8])
def test_the_resize_theorem_holds_exactly_on_a_counting_mechanism(m):
    """M(S) = (ones in S) + two-sided geometric noise, epsilon-DP under replace-one at size m.
    Its output law after resize(D, m) is computed exactly (hypergeometric subset, or padding
    with zeros) for D with n rows and D plus one row (a one or a zero), n around m: the
    ratio of the laws stays within e^epsilon, as the theorem says."""
    epsilon = 0.7
    p = math.exp(-epsilon)
    support = np.arange(-60, 70)

    def law(n: int, ones: int) -> np.ndarray:
        if n <= m:  # every row, padded with zeros
            return _geometric(p, support, ones)
        return sum(hypergeom(n, ones, m).pmf(k) * _geometric(p, support, k) for k in range(min(ones, m) + 1))

    worst = 0.0
    for n in range(max(1, m - 3), m + 6):
        for ones in range(n + 1):
            for added in (0, 1):
                a, b = law(n, ones), law(n + 1, ones + added)
                worst = max(worst, float(np.max(np.abs(np.log(a) - np.log(b)))))
    assert worst <= epsilon + 1e-9
    assert worst >= 0.5 * epsilon  # and it is not vacuous: the padded side moves by a whole unit


def test_add_remove_priv_pc_and_gauss_pc_release_under_add_remove_within_the_budget():
    net = load_network("asia")
    X = sample_frame(net, 30_000, np.random.default_rng(0), labels=True)
    for method in ("priv-pc", "gauss-pc"):
        budget = Budget(2.0, 1e-6, composition="rdp" if method == "gauss-pc" else "optimal")
        est = PrivPC(epsilon=2.0, method=method, neighbours="add_remove", random_state=1).fit(
            X, domain=net.domain, budget=budget)
        assert est.ledger_.neighbours == {AR}
        assert est.ledger_.charges[0].mechanism == "laplace" and est.ledger_.charges[0].sensitivity == 1.0
        assert est.epsilon_spent_ <= 2.0 + 1e-9
        assert budget.spent().epsilon <= 2.0 + 1e-9 and budget.ledger.neighbours == {AR}
        size_eps = size_epsilons(2.0, 1e-6, est.composition_)[0]
        assert est.ledger_.charges[0].epsilon == pytest.approx(size_eps)
        assert 29_000 < est.n_rows_ < 30_000  # resized below n by the size's margin
        assert abs(est.size_estimate_ - 30_000) < 2_000
        assert est.skeleton_.number_of_nodes() == 8


def test_neighbouring_files_at_the_boundary_behave_the_same(tmp_path):
    """A table and the same table with one more row, same seed: both fits succeed with the
    same ledger (mechanisms, epsilons) and the same composition; nothing reports n."""
    net = load_network("cancer")
    X = sample_frame(net, 20_000, np.random.default_rng(2), labels=True)
    Y = pd.concat([X, X.iloc[[0]]], ignore_index=True)
    fits = [PrivPC(epsilon=3.0, method=m, neighbours="add_remove", random_state=5).fit(D, domain=net.domain)
            for D in (X, Y) for m in ("priv-pc", "gauss-pc")]
    for a, b in ((fits[0], fits[2]), (fits[1], fits[3])):
        assert [c.mechanism for c in a.ledger_] == [c.mechanism for c in b.ledger_]
        assert [c.epsilon for c in a.ledger_] == pytest.approx([c.epsilon for c in b.ledger_], rel=1e-6)
        assert a.epsilon_spent_ == pytest.approx(b.epsilon_spent_, rel=1e-9)
        assert abs(a.n_rows_ - b.n_rows_) <= 1  # the same noise on n and n + 1


def test_the_plan_is_what_the_fit_charges():
    net = load_network("asia")
    X = sample_frame(net, 20_000, np.random.default_rng(4), labels=True)
    for method in ("priv-pc", "gauss-pc", "laplace-pc", "svt-pc"):
        est = PrivPC(epsilon=4.0, method=method, neighbours="add_remove", random_state=3)
        plan = est.privacy_plan(net.domain, 20_000)
        fitted = est.fit(X, domain=net.domain).ledger_
        assert plan.neighbours == {AR}
        if method != "gauss-pc":  # gauss-pc charges the levels it reaches, at most its plan
            assert [c.mechanism for c in plan] == [c.mechanism for c in fitted]
        assert fitted.total(est.composition_, 1e-6).epsilon <= plan.total(est.composition_, 1e-6).epsilon + 1e-6


@pytest.mark.parametrize("kw, named", [(dict(method="em-pc"), "em-pc"), (dict(method="sg-pc"), "sg-pc"),
                                       (dict(orient="direction"), "orient='direction'")])
def test_methods_without_an_add_remove_form_are_refused_before_reading(kw, named):
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        PrivPC(neighbours="add_remove", **kw).fit("no/such/file.csv")


def test_relabelling_keeps_the_totals_of_unsampled_charges():
    net = load_network("asia")
    X = sample_frame(net, 20_000, np.random.default_rng(6), labels=True)
    ro = PrivPC(epsilon=2.0, method="gauss-pc", random_state=0).fit(X, domain=net.domain).ledger_
    ar = as_add_remove(ro, "test")
    assert ar.neighbours == {AR}
    assert ar.total("rdp", 1e-6).epsilon == pytest.approx(ro.total("rdp", 1e-6).epsilon, rel=1e-12)
    sampled = PrivPC(epsilon=2.0, random_state=0).fit(X, domain=net.domain).ledger_  # the sieve is sub-sampled
    assert any(c.sampling for c in sampled) and not any(c.sampling or (c.curve and c.sampling)
                                                        for c in as_add_remove(sampled, "test"))
    assert as_add_remove(sampled, "t").total("optimal", 1e-6).epsilon == pytest.approx(
        sampled.total("optimal", 1e-6).epsilon, rel=1e-9)


def test_public_size_is_below_n_but_for_the_tail():
    """m = n_hat - t exceeds n only when the Laplace noise exceeds t: probability TAIL."""
    scale = 45.0
    t = scale * math.log(1 / (2 * 1e-6))
    assert public_size(1000.5 + t, scale) == 1000
    assert public_size(1001.5 + t, scale) == 1001
    assert public_size(3.0, scale, minimum=8) == 8


def test_a_resized_fit_does_not_touch_the_input():
    net = load_network("cancer")
    X = sample_frame(net, 5_000, np.random.default_rng(7), labels=True)
    before = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PrivPC(epsilon=5.0, neighbours="add_remove", random_state=0).fit(X, domain=net.domain)
    pd.testing.assert_frame_equal(X, before)


def test_discover_cli_under_add_remove(tmp_path):
    import json

    from typer.testing import CliRunner

    from privgraph.cli import app

    out = tmp_path / "g.json"
    result = CliRunner().invoke(app, ["discover", "--network", "cancer", "--samples", "20000", "--epsilon", "3",
                                      "--neighbours", "add_remove", "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "add/remove (n private" in " ".join(result.output.split())
    privacy = json.loads(out.read_text())["privacy"]
    assert privacy["neighbours"] == "add_remove" and {r["neighbours"] for r in privacy["ledger"]} == {"add_remove"}


@pytest.mark.parametrize("estimator", ["PrivPC", "PrivateRelease"])
def test_a_refusal_after_the_size_says_the_size_was_spent(estimator):
    """Priv-PC planned at the released size refuses it (too few rows): the refusal reads m,
    a released number, and says the size was spent; nothing else is."""
    from privgraph.causal.deciders import BudgetTooSmall
    from privgraph.release import PrivateRelease

    net = load_network("cancer")
    X = sample_frame(net, 50, np.random.default_rng(0), labels=True)
    budget = Budget(1.0, 1e-6, composition="optimal")
    fit = {"PrivPC": PrivPC(epsilon=1.0, neighbours="add_remove", random_state=0),
           "PrivateRelease": PrivateRelease(epsilon=1.0, structure="priv-pc", random_state=0)}[estimator]
    with pytest.raises(BudgetTooSmall, match="number of rows was released first"):
        fit.fit(X, domain=net.domain, budget=budget)
    assert [c.mechanism for c in budget.ledger] == ["laplace"]  # the size, and nothing else


def test_the_size_carries_the_noise_its_charge_states():
    """n_hat - n is Laplace of the charged scale (1 / epsilon, sensitivity 1): over 4,000
    releases the sum of |n_hat - n| / scale is Gamma(4000, 1), within its 1e-6 two-sided
    quantiles; a size with half the noise (or the sensitivity 1/2) would fall far below."""
    from scipy.stats import gamma

    from privgraph.privacy.resize import release_size

    engine = NumpyEngine(Domain.of(a=2), np.zeros((1_000, 1), dtype=int))
    sampler, runs = SeededSampler(21), 4_000
    draws = [release_size(engine, epsilon=0.5, sampler=sampler) for _ in range(runs)]
    scale = draws[0][1]
    assert scale == pytest.approx(2.0, rel=1e-3) and draws[0][2].charges[0].sensitivity == 1.0
    total = sum(abs(n_hat - 1_000) for n_hat, _, _ in draws) / scale
    assert gamma.ppf(1e-6 / 2, runs) <= total <= gamma.isf(1e-6 / 2, runs)


@pytest.mark.parametrize("seed", range(5))
def test_a_tiny_released_size_is_at_least_three_rows(seed):
    """Two rows at epsilon 6: the released size is often 1 or 2, where the rank tests'
    sensitivities are undefined (it divided by zero); the public minimum of 3 rows
    (``MIN_ROWS``) keeps the fit running, within its budget (up to the samplers' slack)."""
    domain = Domain(("a", "b"), (2, 2), levels=((0, 1), (0, 1)))
    X = pd.DataFrame({"a": [0, 1], "b": [1, 0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = PrivPC(epsilon=6.0, neighbours="add_remove", random_state=seed).fit(X, domain=domain)
    assert est.ledger_.total("basic").epsilon <= 6.0 * (1 + 1e-6)
