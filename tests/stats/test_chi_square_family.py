import numpy as np
import pytest
import scipy.stats as ss

from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.stats import ChiSquareTest, GTest, KendallTest, SpearmanTest, chi_square_test, degrees_of_freedom, g_test


def test_two_way_tests_equal_scipy():
    rng = np.random.default_rng(0)
    for _ in range(50):
        t = rng.integers(1, 30, size=(rng.integers(2, 5), rng.integers(2, 5)))
        g, chi = g_test(t), chi_square_test(t)
        ref_g = ss.chi2_contingency(t, correction=False, lambda_="log-likelihood")
        ref_c = ss.chi2_contingency(t, correction=False)
        assert g.statistic == pytest.approx(ref_g.statistic, rel=1e-10) and g.dof == ref_g.dof
        assert g.pvalue == pytest.approx(ref_g.pvalue, rel=1e-8, abs=1e-300)
        assert chi.statistic == pytest.approx(ref_c.statistic, rel=1e-10)


def test_conditional_test_sums_the_strata_and_drops_empty_levels():
    rng = np.random.default_rng(1)
    t = rng.integers(0, 20, size=(3, 3, 4))
    t[2, :, 0] = 0  # x level 2 unseen in stratum 0: (2-1)(3-1) = 2 dof there
    t[:, :, 3] = 0  # empty stratum: nothing
    parts = [g_test(t[:, :, k]) for k in range(3)]
    assert g_test(t).statistic == pytest.approx(sum(p.statistic for p in parts))
    assert degrees_of_freedom(t) == 2 + 4 + 4 == sum(p.dof for p in parts)


def test_zero_degrees_of_freedom_rule_on_asia():
    """asia's `either` is tub OR lung: given both, it is constant and the test has no dof.

    By default no information is not independence: the verdict is "dependent" and the
    true arc either -> xray stays. Under causal-learn's convention (p = 1, independent) it
    would be removed by any PC run that tests it given {tub, lung}. Every test, alike.
    """
    net = load_network("asia")
    e = NumpyEngine(net.domain, sample(net, 50_000, np.random.default_rng(2)))
    t = e.counts(["either", "xray", "tub", "lung"])
    assert ("either", "xray") in net.edges
    assert degrees_of_freedom(t) == 0 < (2 - 1) * (2 - 1) * 4  # the nominal dof would be 4
    r = GTest().decide(t, alpha=0.05)
    assert (r.is_independent, r.pvalue, r.statistic, r.threshold) == (False, 1.0, 0.0, np.inf)
    r = GTest(degenerate="independent").decide(t, alpha=0.05)
    assert (r.is_independent, r.pvalue, r.statistic, r.threshold) == (True, 1.0, 0.0, np.inf)
    for test in (ChiSquareTest, KendallTest, SpearmanTest):
        assert not test().decide(t, alpha=0.05).is_independent
        assert test(degenerate="independent").decide(t, alpha=0.05).is_independent
    dependent = GTest().decide(e.counts(["either", "xray"]), alpha=0.05)
    assert not dependent.is_independent  # unconditionally the arc is plainly there


def test_bad_tables_are_errors():
    with pytest.raises(ValueError, match="at least 2 axes"):
        g_test(np.array([3, 4]))
    with pytest.raises(ValueError, match="no cells"):
        chi_square_test(np.zeros((0, 2), dtype=int))
