import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from privgraph.data import poisson_rows, poisson_table, rows_without_replacement, table_without_replacement
from privgraph.privacy.samplers import SecureSampler, SeededSampler

FAIL = 1e-6


def hoeffding(n: int, fail: float = FAIL) -> float:
    return math.sqrt(math.log(2 / fail) / (2 * n))


def test_poisson_rows_keep_each_row_with_the_rate():
    n, q = 200_000, 0.1
    rows = poisson_rows(n, q, sampler=SeededSampler(0))
    assert (np.diff(rows) > 0).all() and rows[0] >= 0 and rows[-1] < n
    assert abs(len(rows) / n - q) <= hoeffding(n)


def test_rows_without_replacement_are_exactly_m_distinct():
    rows = rows_without_replacement(10_000, 2500, sampler=SeededSampler(1))
    assert len(rows) == 2500 and (np.diff(rows) > 0).all()
    assert len(rows_without_replacement(5, 5)) == 5  # secure by default


def test_table_draws_are_exact_and_cheap_to_refresh():
    table = np.array([[500, 0, 3], [40, 1000, 7]])
    s = SeededSampler(2)
    reps, m = 2000, 100
    first_cell = np.empty(reps)
    for i in range(reps):
        t = table_without_replacement(table, m, sampler=s)
        assert t.sum() == m and (t <= table).all()
        first_cell[i] = t[0, 0] / m
    assert abs(first_cell.mean() - 500 / table.sum()) <= hoeffding(reps)
    thinned = poisson_table(table, 0.3, sampler=s)
    assert (thinned <= table).all() and thinned[0, 1] == 0


def test_thinning_total_is_binomial():
    table = np.full((10, 10), 1000)
    total = int(poisson_table(table, 0.25, sampler=SeededSampler(3)).sum())
    assert abs(total / table.sum() - 0.25) <= hoeffding(int(table.sum()))


def test_seeded_draws_repeat_and_secure_ones_are_default():
    a = poisson_table(np.arange(20).reshape(4, 5), 0.5, sampler=SeededSampler(9))
    b = poisson_table(np.arange(20).reshape(4, 5), 0.5, sampler=SeededSampler(9))
    assert np.array_equal(a, b)
    assert poisson_table(np.arange(4), 0.5).shape == (4,)
    assert poisson_rows(10, 1.0, sampler=SecureSampler()).tolist() == list(range(10))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=12), st.integers(0, 2**31))
def test_hypergeometric_table_never_exceeds_the_cells(cells, seed):
    table = np.array(cells)
    m = int(table.sum()) // 2
    t = table_without_replacement(table, m, sampler=SeededSampler(seed))
    assert t.sum() == m and (t >= 0).all() and (t <= table).all()


def test_bad_sampling_arguments_are_named():
    with pytest.raises(ValueError, match="rate must lie in"):
        poisson_rows(10, 0.0)
    with pytest.raises(ValueError, match="cannot draw m=11"):
        table_without_replacement(np.array([5, 5]), 11)
    with pytest.raises(ValueError, match="non-negative"):
        poisson_table(np.array([3, -1]), 0.5)
    with pytest.raises(TypeError, match="sampler must be a NoiseSampler"):
        poisson_rows(10, 0.5, sampler=np.random.default_rng(0))
