import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings, strategies as st

from privgraph.stats import (
    conditional_kendall,
    conditional_spearman,
    kendall_tau_a,
    kendall_tau_a_raw,
    kendall_tau_b,
    spearman_rho_a,
    spearman_rho_b,
    spearman_rho_raw,
)
from privgraph.stats.kendall import kendall_weight


def table_of(x, y, r, c):
    t = np.zeros((r, c), dtype=np.int64)
    np.add.at(t, (x, y), 1)
    return t


def brute_s(x, y) -> int:
    return int(sum(np.sign(x[i] - x[:i]) @ np.sign(y[i] - y[:i]) for i in range(len(x))))


def test_table_tau_b_equals_scipy_on_random_discrete_data():
    rng = np.random.default_rng(0)
    for _ in range(300):
        r, c, n = rng.integers(2, 7), rng.integers(2, 7), rng.integers(2, 2000)
        x, y = rng.integers(0, r, n), rng.integers(0, c, n)
        if len(set(x)) < 2 or len(set(y)) < 2:
            continue
        assert abs(kendall_tau_b(table_of(x, y, r, c)) - ss.kendalltau(x, y).statistic) <= 1e-12


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=2, max_size=60))
def test_tau_a_from_table_and_raw_equal_the_pair_count(rows):
    x, y = np.array(rows).T
    expected = brute_s(x, y) / (len(x) * (len(x) - 1) / 2)
    assert kendall_tau_a(table_of(x, y, 4, 5)) == pytest.approx(expected, abs=1e-15)
    assert kendall_tau_a_raw(x + 0.5, y * 1.5) == pytest.approx(expected, abs=1e-15)


def test_raw_tau_a_on_continuous_data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=400)
    y = x + rng.normal(size=400)
    expected = brute_s(x, y) / (400 * 399 / 2)
    assert kendall_tau_a_raw(x, y) == pytest.approx(expected, abs=1e-15)
    assert kendall_tau_a_raw(x, np.ones(400)) == 0.0


def test_conditional_tau_matches_a_direct_per_stratum_computation():
    rng = np.random.default_rng(2)
    for _ in range(40):
        shape = (3, 4, 2, 3)
        t = rng.integers(0, 4, size=shape) * (rng.random(shape) < 0.7)
        num, den = 0.0, 0.0
        for s1 in range(2):
            for s2 in range(3):
                x, y = np.nonzero(t[:, :, s1, s2])
                reps = t[x, y, s1, s2]
                x, y = np.repeat(x, reps), np.repeat(y, reps)
                m = len(x)
                if m < 3:
                    continue
                tau = brute_s(x, y) / (m * (m - 1) / 2)
                var = (4 * m + 10) / (9 * m * (m - 1))
                num, den = num + tau / var, den + 1 / var
        z = num / np.sqrt(den) if den else 0.0
        got = conditional_kendall(t)
        assert got.z == pytest.approx(z, abs=1e-12)
        assert got.pvalue == pytest.approx(2 * ss.norm.sf(abs(z)), abs=1e-12)


def test_spearman_tables_equal_scipy_and_the_rank_formula():
    rng = np.random.default_rng(3)
    for _ in range(200):
        r, c, n = rng.integers(2, 6), rng.integers(2, 6), rng.integers(3, 500)
        x, y = rng.integers(0, r, n), rng.integers(0, c, n)
        if len(set(x)) < 2 or len(set(y)) < 2:
            continue
        t = table_of(x, y, r, c)
        assert abs(spearman_rho_b(t) - ss.spearmanr(x, y).statistic) <= 1e-12
        u, v = ss.rankdata(x) - (n + 1) / 2, ss.rankdata(y) - (n + 1) / 2
        assert spearman_rho_a(t) == pytest.approx(12 * (u @ v) / (n * (n * n - 1)), abs=1e-12)
    assert spearman_rho_raw(x, y) == pytest.approx(ss.spearmanr(x, y).statistic)


def test_conditional_spearman_matches_a_direct_per_stratum_computation():
    rng = np.random.default_rng(4)
    t = rng.integers(0, 5, size=(3, 3, 4))
    t[:, :, 2] = 0
    t[0, 0, 2] = 2  # two rows: skipped
    num, den, rows = 0.0, 0.0, 0
    for k in range(4):
        x, y = np.nonzero(t[:, :, k])
        reps = t[x, y, k]
        x, y = np.repeat(x, reps), np.repeat(y, reps)
        m = len(x)
        if m < 3:
            continue
        u, v = ss.rankdata(x) - (m + 1) / 2, ss.rankdata(y) - (m + 1) / 2
        num, den, rows = num + (m - 1) * 12 * (u @ v) / (m * (m * m - 1)), den + m - 1, rows + m
    got = conditional_spearman(t)
    assert got.z == pytest.approx(num / np.sqrt(den), abs=1e-12) and got.strata == 3 and got.rows == rows


def test_tiny_and_empty_strata_give_the_documented_result():
    empty = conditional_kendall(np.zeros((2, 2, 3), dtype=int))
    assert (empty.z, empty.pvalue, empty.strata, empty.rows) == (0.0, 1.0, 0, 0)
    assert conditional_spearman(np.ones((1, 2, 5), dtype=int)).pvalue == 1.0
    assert kendall_weight(3.0) == pytest.approx(27 / 11)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: kendall_tau_a([[1, 0], [0, 0]]), "needs at least 2 rows"),
        (lambda: kendall_tau_b([[1, 1], [0, 0]]), "x takes one value only"),
        (lambda: spearman_rho_b([[1, 0], [1, 0]]), "y takes one value only"),
        (lambda: spearman_rho_a([[1]]), "needs at least 2 rows"),
        (lambda: kendall_tau_a(np.ones((2, 2, 2), dtype=int)), "must be 2-D"),
        (lambda: conditional_kendall(np.array([1, 2])), "at least 2 axes"),
        (lambda: conditional_kendall(np.array([[1, -1]])), "non-negative"),
        (lambda: conditional_kendall(np.array([[0.5, 1.0]])), "integer counts"),
        (lambda: kendall_tau_a_raw([1.0, np.nan], [1.0, 2.0]), "NaN"),
        (lambda: kendall_tau_a_raw([1.0, 2.0], [1.0]), "same length"),
        (lambda: spearman_rho_raw([1, 1, 1], [1, 2, 3]), "x takes one value only"),
    ],
)
def test_bad_input_is_a_clear_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
