import math

import numpy as np
from privgraph.stats.strata import has_information
import pytest
from hypothesis import given, settings, strategies as st

from privgraph.privacy.neighbours import Neighbours
from privgraph.stats import ChiSquareTest, CITest, GTest, KendallTest, SpearmanTest
from privgraph.stats import sensitivity as S

TESTS = [KendallTest(), SpearmanTest(), GTest(), ChiSquareTest()]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 12), min_size=12, max_size=12), st.sampled_from([0.01, 0.05, 0.2]))
def test_every_test_agrees_with_itself(cells, alpha):
    table = np.array(cells).reshape(2, 3, 2)
    for test in TESTS:
        r = test.decide(table, alpha)
        assert isinstance(test, CITest) and r.statistic >= 0 and 0 <= r.pvalue <= 1
        informative = has_information(table, test.min_rows)  # no information: dependent
        assert r.is_independent == (r.statistic <= r.threshold and informative)
        if not math.isclose(r.pvalue, alpha, rel_tol=1e-9):  # away from the boundary
            assert r.is_independent == (r.pvalue > alpha and informative)


def test_rank_tests_have_public_thresholds_and_finite_sensitivities():
    shape = (3, 3, 2, 2)
    assert KendallTest().threshold(0.05) == KendallTest().threshold(0.05, np.ones(shape, dtype=int))
    assert KendallTest().sensitivity(500, Neighbours.ADD_REMOVE, shape) == S.conditional_kendall_sensitivity_add_remove(500, 4)
    assert SpearmanTest().sensitivity(500, "replace_one", shape) == S.conditional_spearman_sensitivity_replace_one(500, 4)
    assert KendallTest().has_public_threshold and not GTest().has_public_threshold


def test_chi_square_family_has_no_finite_sensitivity_and_needs_the_table():
    assert GTest().sensitivity(10**6, "add_remove", (2, 2)) == math.inf
    with pytest.raises(ValueError, match="pass table="):
        GTest().threshold(0.05)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="alpha must lie in"):
        KendallTest().decide(np.ones((2, 2), dtype=int), 0.0)
    with pytest.raises(ValueError, match="neighbours must be one of"):
        KendallTest().sensitivity(100, "neighbours?", (2, 2))
    with pytest.raises(ValueError, match="shape must list"):
        KendallTest().sensitivity(100, "add_remove", (2,))
