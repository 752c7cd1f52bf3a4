"""Every estimator with the person as the unit (``max_rows_per_person`` and the codebook's
``"id"``; privgraph.privacy.person): one row per person and k = 1 is today's run byte for byte,
the plan equals the ledger, and a unit half given is a one-line error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privgraph.causal import PrivPC
from privgraph.causal.direction import PrivateANM
from privgraph.data.codebook import domain_to_codebook
from privgraph.datasets import load_network, sample_frame
from privgraph.mrf import PrivateMRF
from privgraph.privacy import Budget, Neighbours
from privgraph.privacy.ledger import guarantee
from privgraph.release import PrivateRelease
from privgraph.validation import InvalidInput

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # seeded noise, said by every fit

NET = load_network("asia")
ROWS = 8_000


@pytest.fixture(scope="module")
def asia():
    """(frame, codebook without and with the person column, the frame with one person per row)."""
    frame = sample_frame(NET, ROWS, np.random.default_rng(0), labels=True)
    book = domain_to_codebook(NET.domain)
    return frame, book, book | {"id": "pid"}, frame.assign(pid=[f"id{i}" for i in range(ROWS)])


def test_discover_with_one_row_per_person_and_k_1_is_todays_run(asia):
    frame, book, with_id, persons = asia
    today = PrivPC(epsilon=2.0, neighbours="add_remove", random_state=3).fit(frame, domain=book)
    unit = PrivPC(epsilon=2.0, neighbours="add_remove", random_state=3, max_rows_per_person=1).fit(persons,
                                                                                                  domain=with_id)
    assert str(unit.graph_) == str(today.graph_) and unit.ledger_.charges == today.ledger_.charges
    assert [c.note for c in unit.ledger_.charges] == [c.note for c in today.ledger_.charges]
    assert unit.n_rows_ == today.n_rows_ and unit.size_estimate_ == today.size_estimate_
    assert guarantee(unit.ledger_, unit.composition_, 1e-6) == guarantee(today.ledger_, today.composition_, 1e-6)


def test_release_with_one_row_per_person_and_k_1_is_todays_run(asia, tmp_path):
    frame, book, with_id, persons = asia
    today = PrivateRelease(epsilon=2.0, random_state=4).fit(frame, domain=book)
    unit = PrivateRelease(epsilon=2.0, random_state=4, max_rows_per_person=1).fit(persons, domain=with_id)
    today.sample(500, random_state=1).to_csv(tmp_path / "a.csv", index=False)
    unit.sample(500, random_state=1).to_csv(tmp_path / "b.csv", index=False)
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert unit.ledger_.charges == today.ledger_.charges and str(unit.graph_) == str(today.graph_)
    assert "pid" not in unit.sample(5).columns


def test_several_rows_per_person_are_bounded_and_the_guarantee_is_per_person(asia):
    frame, _, with_id, _ = asia
    persons = frame.assign(pid=[f"id{i // 4}" for i in range(ROWS)])  # four rows each
    est = PrivateMRF(epsilon=1.0, cliques="asia,tub;tub,either", max_rows_per_person=2, random_state=0)
    est.fit(persons, domain=with_id)
    assert est.ledger_.unit.k == 2 and est.ledger_.neighbours == {Neighbours.ADD_REMOVE}
    assert [c.epsilon for c in est.ledger_] == [0.5]  # per row: epsilon / k
    assert guarantee(est.ledger_, est.composition_, None).epsilon == pytest.approx(1.0)
    assert abs(est.marginals_.records - ROWS / 2) < 200  # half the rows kept (noisy total, scale 4 per table)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_each_estimators_plan_equals_its_ledger_with_the_unit(asia, relation):
    frame, _, with_id, _ = asia
    persons = frame.assign(pid=[f"id{i // 3}" for i in range(ROWS)])
    fits = [
        (PrivPC(epsilon=12.0, delta=0.0, method="priv-pc", max_rounds=5, neighbours=relation, max_rows_per_person=2,
                random_state=0),
         lambda e: e.fit(persons, domain=with_id)),
        (PrivateMRF(epsilon=1.0, cliques="asia,tub", neighbours=relation, max_rows_per_person=2, random_state=0),
         lambda e: e.fit(persons, domain=with_id)),
        (PrivateRelease(epsilon=4.0, delta=0.0, structure="tree", neighbours=relation, max_rows_per_person=2,
                        random_state=0), lambda e: e.fit(persons, domain=with_id)),
    ]
    for est, fit in fits:
        plan = est.privacy_plan(with_id, 5_000)
        fit(est)
        assert plan == est.ledger_, type(est).__name__
        assert plan.relation is Neighbours.parse(relation) and est.ledger_.unit.relation is plan.relation
        assert est.ledger_.unit.group == (2 if relation == "add_remove" else 4)


def test_the_pair_takes_its_persons_as_a_third_column():
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, 6_000)
    y = np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, 6_000)
    book = {"format": "privgraph-domain", "version": 1, "id": "pid", "columns": [
        {"name": n, "kind": "continuous", "bounds": [-2, 2]} for n in ("x", "y")]}
    est = PrivateANM(epsilon=4.0, max_rows_per_person=2, random_state=0)
    est.fit(pd.Series(x, name="x"), pd.Series(y, name="y"), persons=np.arange(6_000) // 3, domain=book)
    assert est.direction_ == "x->y" and est.ledger_.unit.group == 4  # replace-one of a person: 2k rows
    assert est.privacy_plan(book, 6_000) == est.ledger_  # the charges do not depend on the size
    assert guarantee(est.ledger_, "basic", 1e-6).epsilon == pytest.approx(4.0)
    with pytest.raises(InvalidInput, match="give persons="):
        PrivateANM(epsilon=4.0, max_rows_per_person=2).fit(x, y, domain=book)


@pytest.mark.parametrize("make", [
    lambda: PrivPC(max_rows_per_person=3), lambda: PrivateMRF(cliques="asia,tub", max_rows_per_person=3),
    lambda: PrivateRelease(max_rows_per_person=3), lambda: PrivateANM(max_rows_per_person=3),
])
def test_a_bound_without_a_person_column_is_a_one_line_error(asia, make):
    frame, book, _, _ = asia
    with pytest.raises(InvalidInput, match="needs a person column"):
        make().privacy_plan(book, 1000)


@pytest.mark.parametrize("make", [
    lambda: PrivPC(), lambda: PrivateMRF(cliques="asia,tub"), lambda: PrivateRelease(), lambda: PrivateANM(),
])
def test_a_person_column_without_a_bound_is_a_one_line_error(asia, make):
    _, _, with_id, persons = asia
    with pytest.raises(InvalidInput, match="give max_rows_per_person"):
        make().privacy_plan(with_id, 1000)
    with pytest.raises(InvalidInput, match="give max_rows_per_person"):
        if isinstance(make(), PrivateANM):
            make().fit(persons["asia"], persons["tub"], domain=with_id)
        else:
            make().fit(persons, domain=with_id)


def test_an_outside_budget_and_the_individual_normalisation_are_refused_with_a_unit(asia):
    _, _, with_id, persons = asia
    with pytest.raises(InvalidInput, match="budget= is spent row by row"):
        PrivPC(max_rows_per_person=1, random_state=0).fit(persons, domain=with_id, budget=Budget(1.0))
    with pytest.raises(InvalidInput, match="two ways to make the person the unit"):
        PrivateMRF(cliques="asia,tub", individual="pid", max_rows_per_person=1).fit(persons, domain=with_id)


def test_a_budget_too_small_is_said_per_person(asia):
    _, _, with_id, persons = asia
    with pytest.raises(InvalidInput, match=r"epsilon 1 for each person \(at most 10 rows each\) is epsilon 0.1 per "
                                           r"row.*budget per person must then be epsilon >="):
        PrivPC(epsilon=1.0, method="priv-pc", max_rows_per_person=10, neighbours="add_remove").privacy_plan(
            with_id, 8_000)
