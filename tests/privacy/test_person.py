"""The person as the privacy unit (privgraph.privacy.person): the group conversion, the ledger
that carries the unit, the headline, the salt."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privgraph.privacy import Charge, Ledger, Neighbours, PrivacyCost, PrivacyPlan, SecureSampler, SeededSampler
from privgraph.privacy.ledger import guarantee
from privgraph.privacy.person import (
    PersonUnit, check_unit, person_cost, row_target, truncation_salt, with_unit,
)
from privgraph.validation import InvalidInput

AR, RO = Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE


def test_person_cost_of_the_row_target_is_the_target_whatever_the_budget():
    rng = np.random.default_rng(0)
    for _ in range(500):
        epsilon, delta, group = rng.uniform(0.01, 20), 10 ** rng.uniform(-12, -3), int(rng.integers(1, 40))
        cost = person_cost(PrivacyCost(*row_target(epsilon, delta, group), "basic"), group)
        assert cost.epsilon <= epsilon * (1 + 1e-12) and cost.delta <= delta * (1 + 1e-12)
        assert cost.epsilon >= epsilon * (1 - 1e-12) and cost.delta >= delta * (1 - 1e-12)  # nothing left unspent


def test_one_row_per_person_under_add_remove_is_the_row_budget_itself():
    assert row_target(1.0, 1e-6, 1) == (1.0, 1e-6)
    assert tuple(person_cost(PrivacyCost(0.7, 3e-7, "rdp"), 1)) == (0.7, 3e-7)
    assert row_target(2.0, 0.0, 5) == (0.4, 0.0) and row_target(2.0, None, 5) == (0.4, None)


def test_group_privacy_is_vadhans_lemma():
    cost = person_cost(PrivacyCost(0.25, 1e-8, "optimal"), 4)
    assert cost.epsilon == 1.0 and math.isclose(cost.delta, 4 * math.exp(0.75) * 1e-8)


def test_replace_one_of_a_person_is_twice_the_rows_of_add_remove():
    assert PersonUnit("pid", 5, AR).group == 5 and PersonUnit("pid", 5, RO).group == 10


def test_the_black_box_costs_a_few_per_cent_of_rho_against_zcdp_group_privacy():
    """At epsilon 1, delta 1e-6, k = 5 the row target leaves 0.948 of the zCDP-native rho / k^2
    (Bun and Steinke, Proposition 1.9): the figure the module docstring states."""
    from privgraph.privacy.zcdp import total_rho

    native = total_rho(1.0, 1e-6) / 25
    black_box = total_rho(*row_target(1.0, 1e-6, 5))
    assert 0.94 < black_box / native < 0.96


def test_a_unit_needs_both_the_person_column_and_the_bound():
    assert check_unit(None, None, "add_remove") is None
    with pytest.raises(InvalidInput, match="give max_rows_per_person"):
        check_unit("pid", None, "add_remove")
    with pytest.raises(InvalidInput, match="needs a person column"):
        check_unit(None, 4, "add_remove")
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(InvalidInput, match="max_rows_per_person"):
            check_unit("pid", bad, "add_remove")
    assert check_unit("pid", 3.0, "replace_one") == PersonUnit("pid", 3, RO)


def _rows(epsilon: float, delta: float = 0.0, count: int = 1) -> Ledger:
    return Ledger.of(Charge("laplace", epsilon, delta, AR, sensitivity=1.0).times(count))


def test_a_ledger_with_a_unit_composes_per_row_then_converts_once():
    unit = PersonUnit("pid", 5, AR).at(row_target(1.0, 1e-6, 5)[1])
    ledger = with_unit(_rows(0.02, count=10), unit)
    assert tuple(guarantee(ledger, "basic", None)) == pytest.approx((1.0, 0.0))
    cost = guarantee(ledger, "optimal", 1e-6)  # optimal composition at the row delta, then converted
    rows = guarantee(Ledger(ledger.charges), "optimal", unit.row_delta)
    assert cost.epsilon == pytest.approx(5 * rows.epsilon) and cost.delta <= 1e-6 * (1 + 1e-12)


def test_a_unit_survives_addition_and_caveats_and_different_units_do_not_compose():
    a = with_unit(_rows(0.1), PersonUnit("pid", 2, AR))
    assert (a + a).unit == a.unit and (Ledger() + a).unit == a.unit and (a + Ledger()).unit == a.unit
    assert a.with_caveat("x").unit == a.unit
    with pytest.raises(InvalidInput, match="different privacy units"):
        _ = a + with_unit(_rows(0.1), PersonUnit("pid", 3, AR))
    with pytest.raises(InvalidInput, match="different privacy units"):
        _ = a + _rows(0.1)


def test_a_plan_with_a_unit_equals_the_ledger_with_it_only():
    ledger = with_unit(_rows(0.1), PersonUnit("pid", 2, AR))
    plan = PrivacyPlan.of_ledger(ledger, AR, "basic")
    assert plan == ledger and plan.ledger.unit == ledger.unit and plan != _rows(0.1)
    assert plan.epsilon() == pytest.approx(0.2)


def test_the_headline_names_the_person():
    from privgraph.cli.guarantee import headline, relation_of

    unit = PersonUnit("patient_id", 5, AR).at(row_target(1.0, 1e-6, 5)[1])
    ledger = with_unit(_rows(0.2), unit)
    assert headline(PrivacyCost(0.99995, 9.9999e-7, "rdp"), "add_remove", unit=unit) == \
        "privacy: (1, 1e-06)-DP for each person (at most 5 rows each) under add/remove, composed by rdp"
    assert relation_of(with_unit(_rows(0.2), PersonUnit("pid", 1, RO)), "add_remove") == "replace_one"
    assert "for each person (at most 1 row each)" in headline(PrivacyCost(1, 0, "basic"), "add_remove",
                                                               unit=PersonUnit("pid", 1, AR))
    assert relation_of(ledger, "replace_one") == "add_remove"


def test_the_salt_is_secret_with_the_secure_sampler_and_the_seeds_otherwise():
    assert truncation_salt(SeededSampler(5)) == truncation_salt(SeededSampler(5)) != truncation_salt(SeededSampler(6))
    seeds = {truncation_salt(SecureSampler()) for _ in range(8)}
    assert len(seeds) == 8 and all(0 <= s < 2 ** 64 for s in seeds)
    sampler = SeededSampler(3)
    before = sampler.discrete_laplace(1.0, size=4)
    truncation_salt(sampler)  # draws nothing from the noise sampler
    again = SeededSampler(3)
    again.discrete_laplace(1.0, size=4)
    assert sampler.discrete_laplace(1.0, size=4).tolist() == again.discrete_laplace(1.0, size=4).tolist()
    assert before is not None
