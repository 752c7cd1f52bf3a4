"""The privacy-core mechanism behind Priv-PC (privgraph/privacy/sieve.py).

Kept here, with the causal tests, because this module's owner writes only tests/causal.
"""

import math

import numpy as np
import pytest

from privgraph.privacy import (
    Budget,
    BudgetExceeded,
    Charge,
    Neighbours,
    SeededSampler,
    SieveAndExamine,
    amplify_without_replacement,
    fit_rounds_to_budget,
    sieve_and_examine,
    sieve_rate,
)
from privgraph.privacy.sieve import MIN_RATE
from tests.privacy.bounds import hoeffding

RO = Neighbours.REPLACE_ONE


def session(**kw):
    args = dict(epsilon_sieve=0.5, epsilon_examine=0.5, rounds=3, sample_size=100, population=1000,
                tweak=0.0, sampler=SeededSampler(0), resample=lambda: None)
    args.update(kw)
    return SieveAndExamine(**args)


def test_the_whole_cap_is_reserved_up_front_and_amplified():
    budget = Budget(10.0)
    s = session(rounds=4, budget=budget)
    assert budget.spent().epsilon == pytest.approx(4.0)
    sieve = s.ledger.charges[0]
    assert sieve.count == 4 and sieve.sampling.as_tuple() == ("without_replacement", 100, 1000)
    eps_pre = s._eps_pre
    assert amplify_without_replacement(eps_pre, 0.0, 100, 1000, RO)[0] <= 0.5
    assert eps_pre == pytest.approx(math.log1p(math.expm1(0.5) * 10), rel=1e-12)


def test_a_budget_too_small_for_the_cap_refuses_before_anything():
    budget = Budget(1.0)
    resampled = []
    with pytest.raises(BudgetExceeded):
        session(rounds=2, budget=budget, resample=lambda: resampled.append(1))
    assert len(budget.ledger) == 0 and not resampled


def test_rounds_resample_and_end_at_the_cap():
    resampled = []
    s = session(rounds=2, resample=lambda: resampled.append(1))
    hi = (lambda: 1e6, lambda: 1e6)
    lo = (lambda: -1e6, lambda: -1e6)
    assert s.test(*lo) is False and len(resampled) == 1     # one round open, not ended
    assert s.test(*hi) is True and s.rounds_used == 1
    assert s.test(*hi) is True and len(resampled) == 2 and s.exhausted
    with pytest.raises(RuntimeError, match="cap of 2 rounds"):
        s.test(*hi)


def test_examine_is_laplace_on_the_full_data_at_the_examine_epsilon():
    # sieve always passes; P(v + Lap(1/eps2) >= 0) = 1 - exp(-v eps2) / 2 for v >= 0
    eps2, v, n = 0.5, 1.0, 3000
    sampler = SeededSampler(5)
    s = session(epsilon_examine=eps2, rounds=n, sampler=sampler)
    hits = np.mean([s.test(lambda: 1e6, lambda: v) for _ in range(n)])
    assert abs(hits - (1 - math.exp(-v * eps2) / 2)) <= hoeffding(n)


def test_sieve_and_examine_function_stops_at_the_cap():
    pairs = [(lambda: 1e6, lambda: 1e6)] * 5
    answers, ledger = sieve_and_examine(pairs, epsilon_sieve=0.1, epsilon_examine=0.1, rounds=3, sample_size=10,
                                        population=100, tweak=0.0, sampler=SeededSampler(2), resample=lambda: None)
    assert answers == [True, True, True] and ledger.total().epsilon == pytest.approx(0.6)


def test_sieve_rate_minimises_over_the_bounded_interval():
    grid = np.exp(np.linspace(math.log(MIN_RATE), 0.0, 4001))
    for eps in (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0):
        c = math.expm1(eps)
        noise = np.sqrt(1 / grid) / np.log1p(c / grid)
        q = sieve_rate(eps)
        assert MIN_RATE <= q <= 1.0
        assert math.sqrt(1 / q) / math.log1p(c / q) <= noise.min() * (1 + 1e-6)
    # the reference code's unconstrained optimiser collapsed to 1/20 for large budgets
    assert sieve_rate(5.0) == 1.0 and sieve_rate(0.01) == MIN_RATE


def test_fit_rounds_to_budget_meets_the_budget_from_below():
    def one(r):
        return [Charge("sieve", r, 0.0, RO), Charge("examine", r, 0.0, RO)]

    for method, delta in (("basic", 0.0), ("optimal", 1e-6), ("advanced", 1e-6)):
        r = fit_rounds_to_budget(one, 30, 1.0, delta, method)
        from privgraph.privacy import Ledger
        total = Ledger(tuple(c.times(30) for c in one(r))).total(method, None if method == "basic" else delta)
        assert total.epsilon <= 1.0 and total.epsilon == pytest.approx(1.0, rel=1e-8)


def test_sieve_noise_scales_are_lyu_su_li_at_the_pre_amplification_epsilon():
    # m = n: eps' = eps_sieve; threshold Lap(2/eps'), query Lap(4/eps') (c = 1). A query
    # `gap` below the threshold clears the sieve with P(nu - rho > gap); the examine always
    # says "above", so the session's answer is the sieve's. Halving either scale moves it.
    from tests.privacy.test_mechanisms import _laplace_difference_survival

    n, eps, gap = 20_000, 1.0, 3.0
    above = 0
    for i in range(n):
        s = SieveAndExamine(epsilon_sieve=eps, epsilon_examine=1.0, rounds=1, sample_size=10,
                            population=10, tweak=0.0, sampler=SeededSampler(i), resample=lambda: None,
                            max_queries=1)
        above += s.test(lambda: -gap, lambda: 1e6)
    expected = _laplace_difference_survival(gap, 4 / eps, 2 / eps)
    assert abs(above / n - expected) <= hoeffding(n) + 1e-3
