"""The one add/remove wrapper (privgraph.privacy.add_remove) on an estimator that is not PC:
anything with the contract (a replace-one fit and privacy_plan) gets an add/remove form."""

from __future__ import annotations

import numpy as np
import pytest

from privgraph.data import Domain, NumpyEngine
from privgraph.data.subset import resize_engine
from privgraph.privacy import Budget, Ledger, Neighbours, SeededSampler, laplace_mechanism
from privgraph.privacy.mechanisms import laplace_charge
from privgraph.privacy.add_remove import AddRemove

AR, RO = Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE


class CountOfOnes:
    """A replace-one estimator: the number of rows with a = 1, Laplace noise (sensitivity 1)."""

    def __init__(self, epsilon, sampler):
        self.epsilon, self.sampler = epsilon, sampler

    def privacy_plan(self, domain, n_rows):
        return Ledger.of(laplace_charge(self.epsilon, 1.0, RO))

    def fit(self, engine, budget=None):
        self.n_rows_ = int(engine.counts([]))
        released = laplace_mechanism(float(engine.counts(["a"])[1]), epsilon=self.epsilon, sensitivity=1.0,
                                     neighbours=RO, sampler=self.sampler, budget=budget)
        self.value_, self.ledger_ = released.value, released.ledger
        return self


def test_any_estimator_with_the_contract_gets_an_add_remove_form():
    engine = NumpyEngine(Domain.of(a=2, b=2), np.array([[1, 0]] * 3_000 + [[0, 1]] * 7_000))
    wrapper = AddRemove(1.0, 0.0, "basic", minimum=2)
    budget = Budget(1.0, 0.0)
    fitted, ledger, m, n_hat = wrapper.fit(CountOfOnes, engine, resize=resize_engine, sampler=SeededSampler(0),
                                           budget=budget)
    assert ledger.neighbours == {AR} and [c.mechanism for c in ledger] == ["laplace", "laplace"]
    assert ledger == wrapper.plan(CountOfOnes, engine.domain, 10_000)  # the guess's m gives the same charges
    assert fitted.n_rows_ == m < 10_000 and abs(n_hat - 10_000) < 2_000
    assert budget.spent().epsilon == pytest.approx(1.0)
    assert abs(fitted.value_ - 0.3 * m) < 500  # a uniform subset of m rows, then its count with noise
