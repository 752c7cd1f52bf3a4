"""Gauss-PC's margins counted and computed a batch of sets at a time equal the margins
asked set by set (the same statistic, thresholds, units and "no information" rule)."""

from itertools import combinations

import numpy as np
import pytest

from privgraph.causal import PrivPC, RankMargin, Tables
from privgraph.causal.pc_counting import cover
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.stats import KendallTest, SpearmanTest

NET = load_network("alarm")


@pytest.fixture(scope="module")
def tables():
    return Tables.from_engine(NumpyEngine(NET.domain, sample(NET, 3000, np.random.default_rng(11))))


@pytest.mark.parametrize("test", [KendallTest(), KendallTest(degenerate="independent"),
                                  KendallTest(tie_corrected=True), SpearmanTest()])
@pytest.mark.parametrize("noise", [0.0, 0.4])
def test_batch_margins_equal_margins_set_by_set(tables, test, noise):
    margin = RankMargin(test, alpha=0.05)
    margin.expect_noise(noise, rows=tables.n)  # the degenerate shift and the tie floor
    names = NET.domain.names
    x, y, rest = names[2], names[5], [names[i] for i in (0, 7, 13, 21, 24, 30)]
    cover(tables, (x, y, *rest))
    for level in (0, 1, 2, 3):
        sets = list(combinations(rest, level))
        one_by_one = np.array([margin(tables, x, y, S) for S in sets])
        assert np.allclose(margin.batch(tables, x, y, sets), one_by_one, rtol=1e-12, atol=1e-12), (test, level)


def test_gauss_pc_skeleton_is_the_same_with_batches(monkeypatch):
    codes = sample(NET, 4000, np.random.default_rng(12))

    def fit():
        est = PrivPC(epsilon=20.0, delta=1e-6, method="gauss-pc", random_state=3).fit(NumpyEngine(NET.domain, codes))
        return {frozenset(e) for e in est.skeleton_.edges}, est.sepsets_

    batched = fit()
    monkeypatch.setattr(RankMargin, "batch",  # set by set, as before the batches
                        lambda self, view, x, y, sets: np.array([self(view, x, y, S) for S in sets], dtype=float))
    assert fit() == batched
