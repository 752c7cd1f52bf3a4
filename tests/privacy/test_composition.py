import math

import numpy as np
import pytest
from scipy.special import comb

from privgraph.privacy import (
    Charge,
    Ledger,
    Neighbours,
    SeededSampler,
    amplify_poisson,
    amplify_without_replacement,
    epsilon_before_amplification,
    gaussian_mechanism,
    laplace_mechanism,
)

AR, RO = Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE


def pure(eps, count=1, nb=AR):
    return Charge("test", eps, 0.0, nb).times(count)


def kov_homogeneous_delta(eps0: float, k: int, eps: float) -> float:
    """Kairouz-Oh-Viswanath Theorem 3.3, written independently: delta(eps) for k-fold eps0-DP."""
    total = 0.0
    for i in range(k + 1):  # i = number of "-" losses
        loss = (k - 2 * i) * eps0
        if loss > eps:
            total += comb(k, i) * (math.exp((k - i) * eps0) - math.exp(eps + i * eps0))
    return total / (1 + math.exp(eps0)) ** k


def test_basic_sums():
    led = Ledger.of(pure(0.3, 2), Charge("g", 0.5, 1e-6, AR))
    assert led.total() .epsilon == pytest.approx(1.1) and led.total().delta == pytest.approx(1e-6)


def test_advanced_matches_closed_form():
    k, eps0, delta = 40, 0.05, 1e-5
    expected = math.sqrt(2 * k * math.log(1 / delta)) * eps0 + k * eps0 * math.expm1(eps0)
    assert Ledger.of(pure(eps0, k)).total("advanced", delta).epsilon == pytest.approx(expected)


@pytest.mark.parametrize("eps0,k,delta", [(0.1, 100, 1e-6), (0.5, 20, 1e-3), (1.0, 7, 1e-2)])
def test_optimal_matches_kov_closed_form(eps0, k, delta):
    eps = Ledger.of(pure(eps0, k)).total("optimal", delta).epsilon
    assert kov_homogeneous_delta(eps0, k, eps) <= delta * (1 + 1e-9)
    assert kov_homogeneous_delta(eps0, k, eps - 1e-6) > delta


def test_optimal_heterogeneous_and_approximate_parts():
    led = Ledger.of(pure(0.2, 5), pure(0.05, 30), Charge("g", 0.1, 1e-7, AR).times(3))
    opt = led.total("optimal", 1e-5).epsilon
    assert opt <= led.total("advanced", 1e-5).epsilon <= led.total().epsilon


@pytest.mark.parametrize("eps0,k", [(0.1, 100), (0.3, 30), (1.0, 5)])
def test_order_theory_predicts(eps0, k):
    led = Ledger.of(pure(eps0, k))
    basic, adv = led.total().epsilon, led.total("advanced", 1e-6).epsilon
    opt = led.total("optimal", 1e-6).epsilon
    assert opt <= adv + 1e-12 and opt <= basic + 1e-12


def test_pld_of_laplace_against_dp_accounting_directly():
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    rel = laplace_mechanism(0.0, epsilon=0.1, sensitivity=1.0, neighbours=AR, sampler=SeededSampler(0))
    ours = Ledger.of(rel.ledger.charges[0].times(100)).total("pld", 1e-6).epsilon
    acc = PLDAccountant()
    acc.compose(dp_accounting.LaplaceDpEvent(10.0), 100)
    assert ours == pytest.approx(acc.get_epsilon(1e-6), abs=0.02)
    assert ours <= Ledger.of(pure(0.1, 100)).total("optimal", 1e-6).epsilon + 0.01


def test_rdp_of_gaussian_against_closed_form():
    # k Gaussian releases with noise multiplier z: RDP(a) = k a / (2 z^2); convert at integer orders
    rel = gaussian_mechanism(0.0, epsilon=1.0, delta=1e-6, sensitivity=1.0, neighbours=AR,
                             sampler=SeededSampler(0))
    charge = rel.ledger.charges[0]
    z = charge.curve.sigma / charge.curve.sensitivity
    k, delta = 20, 1e-5
    from privgraph.privacy.composition import RDP_ORDERS

    orders = np.array(RDP_ORDERS, dtype=float)
    rdp = k * orders / (2 * z**2)
    closed = np.min(rdp + np.log1p(-1 / orders) - (np.log(delta) + np.log(orders)) / (orders - 1))
    assert Ledger.of(charge.times(k)).total("rdp", delta).epsilon == pytest.approx(closed, rel=1e-3)


def test_rdp_refuses_generic_approximate_charges():
    with pytest.raises(ValueError, match="RDP cannot compose"):
        Ledger.of(Charge("ptr", 1.0, 1e-6, RO)).total("rdp", 1e-3)


def test_mixed_relations_refused():
    with pytest.raises(ValueError, match="neighbouring relations"):
        (Ledger.of(pure(1.0)) + Ledger.of(pure(1.0, nb=RO))).total()


def test_amplification_matches_relation():
    assert amplify_poisson(1.0, 1e-6, 0.01, AR) == (pytest.approx(math.log1p(0.01 * math.expm1(1.0))), 1e-8)
    eps, dlt = amplify_without_replacement(2.0, 0.0, 50, 1000, RO)
    assert eps == pytest.approx(math.log1p(0.05 * math.expm1(2.0))) and dlt == 0.0
    with pytest.raises(ValueError, match="add_remove"):
        amplify_poisson(1.0, 0.0, 0.5, RO)
    with pytest.raises(ValueError, match="replace_one"):
        amplify_without_replacement(1.0, 0.0, 5, 10, AR)
    assert epsilon_before_amplification(amplify_poisson(0.7, 0, 0.2, AR)[0], 0.2) == pytest.approx(0.7)
