"""PrivateANM and private_direction: accounting, bad input, refusals, limits, non-private accuracy."""

import numpy as np
import pytest

from privgraph.causal import direction as dr
from privgraph.causal.direction import PrivateANM, private_direction
from privgraph.privacy import Budget, BudgetExceeded, Neighbours, SeededSampler


def anm_pair(n, seed):
    """X -> Y with a smooth non-linear mechanism and non-Gaussian noise."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n) ** 3 / 3 + rng.uniform(-1, 1, n)
    w = rng.normal(size=3)
    y = w[0] * np.tanh(1.5 * x) + w[1] * np.sin(x) + 0.3 * x**2 * w[2]
    y = y + 0.3 * y.std() * rng.uniform(-1, 1, n) ** 3 * 2
    return x, y


BOUNDS = ((-3.0, 3.0), (-3.0, 3.0))


@pytest.mark.parametrize("privacy", ["record", "test"])
@pytest.mark.parametrize("score", ["hsic", "spearman", "kendall", "iqr"])
def test_ledger_total_equals_the_budget_asked_for(score, privacy):
    x, y = anm_pair(1000, 0)
    budget = Budget(1.0, 1e-6)
    result, ledger = private_direction(x, y, epsilon=1.0, delta=1e-6, score=score, privacy=privacy, bounds=BOUNDS,
                                       sampler=SeededSampler(0), rng=np.random.default_rng(0), budget=budget)
    total = ledger.total()
    assert abs(total.epsilon - 1.0) < 1e-12
    assert total.delta == (1e-6 if score == "iqr" else 0.0)
    assert ledger.neighbours == {Neighbours.REPLACE_ONE}
    assert budget.ledger.total().epsilon == total.epsilon
    # record: one parallel charge (training table | test scores); test: the score releases compose
    assert len(ledger) == (1 if privacy == "record" else 4 if score == "iqr" else 2)


def test_train_and_test_privacy_accounts_for_the_larger_sensitivity():
    x, y = anm_pair(1000, 1)
    result, ledger = private_direction(x, y, epsilon=2.0, score="hsic", privacy="train+test", bounds=BOUNDS,
                                       sampler=SeededSampler(0), rng=np.random.default_rng(0))
    _, test_ledger = private_direction(x, y, epsilon=2.0, score="hsic", privacy="test", sampler=SeededSampler(0),
                                       rng=np.random.default_rng(0))
    assert ledger.total().epsilon == 2.0
    assert ledger.charges[0].sensitivity > 3 * test_ledger.charges[0].sensitivity


@pytest.mark.parametrize("score", ["spearman", "kendall", "iqr"])
def test_train_privacy_refused_for_scores_without_a_bound(score):
    with pytest.raises(ValueError, match="no derived guarantee under privacy='train\\+test'"):
        PrivateANM(epsilon=1.0, score=score, privacy="train+test", bounds=BOUNDS, random_state=0).fit(*anm_pair(500, 0))


def test_train_privacy_needs_public_bounds():
    with pytest.raises(ValueError, match="needs public bounds"):
        PrivateANM(epsilon=1.0, score="hsic", privacy="train+test", random_state=0).fit(*anm_pair(500, 0))


def _bad_inputs():
    x, y = anm_pair(400, 3)
    # public properties only: no data value is refused (tests/causal/test_direction_refusals.py)
    yield "text", x.astype(str).astype(object) + "a", y, "column x must have a numeric dtype"
    yield "lengths", x, y[:-1], "same length"


@pytest.mark.parametrize("case", list(_bad_inputs()), ids=lambda c: c[0])
def test_bad_input_fails_before_any_budget_is_spent(case):
    _, x, y, message = case
    budget = Budget(1.0)
    with pytest.raises(ValueError, match=message):
        private_direction(x, y, epsilon=1.0, bounds=BOUNDS, sampler=SeededSampler(0), rng=np.random.default_rng(0),
                          budget=budget)
    assert len(budget.ledger) == 0


@pytest.mark.parametrize("privacy", ["record", "test"])
def test_a_pair_under_20_rows_is_undecided_with_its_reason_and_spends_nothing(privacy):
    """n is public: 19 rows are answered "undecided" whatever their values (two neighbouring
    pairs alike), nothing released or reserved; 20 rows are decided."""
    x, y = anm_pair(400, 3)
    for values in ((x[:19], y[:19]), (np.r_[x[:18], 1e9], np.r_[y[:18], np.nan])):  # neighbours
        budget = Budget(1.0)
        result, ledger = private_direction(*values, epsilon=1.0, privacy=privacy, bounds=BOUNDS,
                                           sampler=SeededSampler(0), rng=np.random.default_rng(0), budget=budget)
        assert result.direction == "undecided" and "too few rows to decide: 19" in result.reason
        assert result.scores == {"x->y": None, "y->x": None} and result.agreement_probability is None
        assert len(ledger) == 0 and len(budget.ledger) == 0
    model = PrivateANM(epsilon=1.0, privacy=privacy, bounds=BOUNDS, random_state=0).fit(x[:19], y[:19])
    assert model.direction_ == "undecided" and model.reason_ == result.reason and len(model.ledger_) == 0
    assert len(PrivateANM(epsilon=1.0, privacy=privacy).privacy_plan(None, 19)) == 0
    result, ledger = private_direction(x[:20], y[:20], epsilon=3.0, privacy=privacy, bounds=BOUNDS,
                                       sampler=SeededSampler(0), rng=np.random.default_rng(0))
    assert result.reason is None and len(ledger) >= 1


@pytest.mark.parametrize("privacy", ["record", "test"])
def test_small_test_part_is_refused_on_public_sizes(privacy):
    """Kendall at epsilon = 1 needs 32 test rows (min_test_rows): 20 are refused, 40 are not."""
    x, y = anm_pair(400, 3)
    with pytest.raises(ValueError, match="20 test and 380 training rows.*needs 32 test rows"):
        private_direction(x, y, epsilon=1.0, test_fraction=0.05, privacy=privacy, bounds=BOUNDS, score="kendall",
                          sampler=SeededSampler(0), rng=np.random.default_rng(0))
    result, _ = private_direction(x, y, epsilon=1.0, test_fraction=0.1, privacy=privacy, bounds=BOUNDS,
                                  score="kendall", sampler=SeededSampler(0), rng=np.random.default_rng(0))
    assert result.direction in dr.DIRECTIONS


def test_budget_exceeded_before_any_noise():
    budget = Budget(0.5)
    for privacy in ("record", "test"):
        with pytest.raises(BudgetExceeded):
            private_direction(*anm_pair(500, 0), epsilon=1.0, privacy=privacy, bounds=BOUNDS,
                              sampler=SeededSampler(0), rng=np.random.default_rng(0), budget=budget)
        assert len(budget.ledger) == 0


@pytest.mark.parametrize("score", ["hsic", "spearman", "kendall", "iqr"])
def test_large_epsilon_agrees_with_the_non_private_decision(score):
    for seed in range(3):
        x, y = anm_pair(1000, seed)
        fit = dr.fit_both_directions(*dr.validate_pair(x, y), privacy="test", bounds=(None, None),
                                     test_fraction=0.5, ridge=1e-3, lengthscale=1.0, rng=np.random.default_rng(seed))
        if score == "iqr":
            from privgraph.stats import iqr

            q = [np.log(iqr(v)) for v in (fit.x, fit.res_y, fit.y, fit.res_x)]
            raw = (q[0] + q[1], q[2] + q[3])
        else:
            raw = dr.raw_scores(fit, score)
        result, _ = private_direction(x, y, epsilon=1e5, score=score, privacy="test", sampler=SeededSampler(seed),
                                      rng=np.random.default_rng(seed))
        assert result.direction == ("x->y" if raw[0] < raw[1] else "y->x")


@pytest.mark.parametrize("score", ["kendall", "hsic"])
def test_non_private_accuracy_on_synthetic_pairs(score):
    """Fixed pairs: at n = 1000 Kendall and HSIC find the direction in at least 85% of them."""
    hits = 0
    pairs = 24
    for seed in range(pairs):
        x, y = anm_pair(1000, 100 + seed)
        flip = seed % 2 == 1
        a, b = (y, x) if flip else (x, y)
        # abstain_below=0.5: every decision counts (Kendall otherwise abstains on its calibrated probability)
        model = PrivateANM(epsilon=1e6, score=score, random_state=seed, abstain_below=0.5).fit(a, b, infer_domain=True)
        hits += model.direction_ == ("y->x" if flip else "x->y")
    assert hits / pairs >= 0.85


def test_random_state_int_is_reproducible_and_none_is_secure():
    x, y = anm_pair(600, 4)
    a = PrivateANM(epsilon=1.0, random_state=7, bounds=BOUNDS).fit(x, y)
    b = PrivateANM(epsilon=1.0, random_state=7, bounds=BOUNDS).fit(x, y)
    assert a.scores_ == b.scores_ and a.direction_ in ("x->y", "y->x")
    c = PrivateANM(epsilon=1.0, bounds=BOUNDS).fit(x, y)
    assert 0.5 <= c.noise_kept_order_ <= 1.0 and c.ledger_.total().epsilon == 1.0


def test_a_pair_needs_a_public_domain_and_says_what_is_not_private(tmp_path):
    import pandas as pd

    from privgraph.data import NOT_PRIVATE_DOMAIN, Domain, DomainRequired, Kind, write_codebook

    x, y = anm_pair(600, 4)
    with pytest.raises(DomainRequired, match="bounds="):
        PrivateANM(epsilon=1.0, random_state=0).fit(x, y)
    inferred = PrivateANM(epsilon=1.0, random_state=0).fit(x, y, infer_domain=True)
    assert NOT_PRIVATE_DOMAIN in inferred.ledger_.caveats
    path = write_codebook(Domain(("cause", "effect"), (0, 0), (Kind.CONTINUOUS,) * 2, ((), ()), BOUNDS),
                          tmp_path / "pair.json")
    text = pd.Series(x.astype(str), name="cause").where(np.arange(600) != 3, "n/a")  # one unreadable cell
    model = PrivateANM(epsilon=1.0, random_state=0).fit(text, pd.Series(y, name="effect"), domain=path)
    assert NOT_PRIVATE_DOMAIN not in model.ledger_.caveats and model.direction_ in dr.DIRECTIONS
    assert model.ledger_.is_private  # the default protects every record: no caveat
    test_only = PrivateANM(epsilon=1.0, privacy="test", random_state=0).fit(text, pd.Series(y, name="effect"),
                                                                           domain=path)
    assert dr.TEST_ONLY_CAVEAT in test_only.ledger_.caveats  # the test-only variant says what it leaves out
    full = PrivateANM(epsilon=1.0, score="hsic", privacy="train+test", random_state=0).fit(x, y, domain=path)
    assert full.ledger_.is_private
