"""Controlled rounding (``sample_model(method="round")``): counts within one of the model's
expected counts in every separator group, in a uniformly random order."""

import numpy as np
import pytest

from privgraph.data.domain import Domain
from privgraph.mrf.inference import infer
from privgraph.mrf.model import MarkovRandomField
from privgraph.mrf.sampling import sample_model


def chain():
    """a - b - c with random log-potentials (cliques {a, b} and {b, c})."""
    rng = np.random.default_rng(3)
    d = Domain.of(a=3, b=4, c=5)
    return MarkovRandomField.of(d, ["a,b", "b,c"], [rng.normal(size=(3, 4)), rng.normal(size=(4, 5))])


def test_every_separator_group_gets_its_conditional_counts_within_one():
    model = chain()
    pab, pbc = infer(model).marginals
    n = 9_973
    x = sample_model(model, n, rng=np.random.default_rng(0), method="round")
    # One clique is the root (its counts within 1 of n p); the other is drawn given b.
    ab = np.zeros((3, 4))
    np.add.at(ab, (x[:, 0], x[:, 1]), 1)
    bc = np.zeros((4, 5))
    np.add.at(bc, (x[:, 1], x[:, 2]), 1)
    root_ab = np.abs(ab - n * pab).max() < 1
    root_bc = np.abs(bc - n * pbc).max() < 1
    assert root_ab or root_bc
    # whichever clique is drawn second: each value of b gets its conditional counts within one
    if root_ab:
        cond, groups = pbc / pbc.sum(axis=1, keepdims=True), bc.sum(axis=1)
        assert np.abs(bc - groups[:, None] * cond).max() < 1
    else:
        cond, groups = pab / pab.sum(axis=0, keepdims=True), ab.sum(axis=0)
        assert np.abs(ab - groups[None, :] * cond).max() < 1


def test_the_order_within_a_group_is_uniformly_random():
    """Row 0's value is value 1 with probability p = 0.3 (7 rows: 2 or 3 of them get 1).
    2,000 seeds; Hoeffding: |freq - p| > 0.075 has probability below 2 exp(-2 * 2000 * 0.075^2) < 2e-9."""
    d = Domain.of(a=2)
    model = MarkovRandomField.of(d, ["a"], [np.log([0.7, 0.3])])
    freq = np.mean([sample_model(model, 7, rng=np.random.default_rng(s), method="round")[0, 0]
                    for s in range(2_000)])
    assert abs(freq - 0.3) < 0.075


def test_round_and_sample_agree_on_average():
    """The means of a and b over 4,000 independent rounded draws of 5 rows equal the model's
    0.3 and 0.4: each draw's mean lies in [0, 1], so by Hoeffding a miss of 0.05 has
    probability below 2 exp(-2 * 4000 * 0.05^2) = 4e-9."""
    d = Domain.of(a=2, b=2)
    model = MarkovRandomField.of(d, ["a,b"], [np.log([[0.5, 0.2], [0.1, 0.2]])])
    draws = np.concatenate([sample_model(model, 5, rng=np.random.default_rng(s), method="round")
                            for s in range(4_000)])
    assert abs(draws[:, 0].mean() - 0.3) < 0.05
    assert abs(draws[:, 1].mean() - 0.4) < 0.05


def test_an_unknown_method_is_named():
    with pytest.raises(ValueError, match="sampling method must be one of .*'exact'"):
        sample_model(chain(), 3, rng=np.random.default_rng(0), method="exact")
