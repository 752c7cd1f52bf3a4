"""Each sensitivity bound holds on random and adversarial neighbours; the Kendall ones are attained."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, target

from privgraph.stats import conditional_kendall, conditional_spearman, hsic, kendall_tau_a, kendall_tau_b, spearman_rho_a
from privgraph.stats import sensitivity as S
from privgraph.stats.kendall import kendall_tie_scale, kendall_weight
from privgraph.stats.strata import two_sided_pvalue

R, C = 5, 5  # levels of x and y in the random datasets
SLACK = 1e-12  # floating-point rounding only


def table(rows, strata=1):
    t = np.zeros((R, C, strata), dtype=np.int64)
    for x, y, s in rows:
        t[x, y, s] += 1
    return t


def statistics(t):
    """(name, value, add/remove bound fn, replace-one bound fn) for the statistics of a table."""
    flat = t.sum(axis=2)
    k = t.shape[2]
    out = [
        ("cond_kendall", conditional_kendall(t).z,
         lambda n: S.conditional_kendall_sensitivity_add_remove(n, k),
         lambda n: S.conditional_kendall_sensitivity_replace_one(n, k)),
        ("cond_spearman", conditional_spearman(t).z,
         lambda n: S.conditional_spearman_sensitivity_add_remove(n, k),
         lambda n: S.conditional_spearman_sensitivity_replace_one(n, k)),
    ]
    for floor in (0.0, 0.3):  # the tie scale g = max(r, floor) of the tie-corrected Kendall test
        out.append((f"tie_scale_{floor}", max(kendall_tie_scale(t), floor),
                    lambda n, f=floor: S.kendall_tie_scale_sensitivity_add_remove(n, k, f),
                    lambda n, f=floor: S.kendall_tie_scale_sensitivity_replace_one(n, k, f)))
    if flat.sum() >= 2:
        out += [
            ("tau_a", kendall_tau_a(flat), S.kendall_tau_a_sensitivity_add_remove, S.kendall_tau_a_sensitivity_replace_one),
            ("rho_a", spearman_rho_a(flat), S.spearman_rho_a_sensitivity_add_remove, S.spearman_rho_a_sensitivity_replace_one),
        ]
    return {name: (value, ar, ro) for name, value, ar, ro in out}


def check_add_remove(small, large, ratios=None):
    """Bounds with n = the smaller dataset's size, for every statistic defined on both."""
    n = int(small.sum())
    a, b = statistics(small), statistics(large)
    for name in a.keys() & b.keys():
        _check(name + " add/remove", abs(a[name][0] - b[name][0]), a[name][1](n), ratios)


def check_replace_one(before, after, ratios=None):
    n = int(before.sum())
    a, b = statistics(before), statistics(after)
    for name in a.keys() & b.keys():
        _check(name + " replace-one", abs(a[name][0] - b[name][0]), a[name][2](n), ratios)


def _check(label, change, bound, ratios):
    assert change <= bound + SLACK, (label, change, bound)
    if ratios is not None and bound > 0:
        ratios[label] = max(ratios.get(label, 0.0), change / bound)


row = st.tuples(st.integers(0, R - 1), st.integers(0, C - 1))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.integers(1, 6), st.lists(st.tuples(row, st.integers(0, 5)), min_size=2, max_size=30),
       row, st.integers(0, 5), st.integers(0, 10**6))
def test_bounds_hold_on_random_neighbours(strata, data, new_xy, new_s, pick):
    rows = [(x, y, s % strata) for (x, y), s in data]
    new = (*new_xy, new_s % strata)
    i = pick % len(rows)
    base = table(rows, strata)
    ratios = {}
    check_add_remove(base, table(rows + [new], strata), ratios)  # add
    if len(rows) > 2:
        check_add_remove(table(rows[:i] + rows[i + 1:], strata), base, ratios)  # remove
    check_replace_one(base, table(rows[:i] + [new] + rows[i + 1:], strata), ratios)  # replace (may change stratum)
    for label, ratio in ratios.items():
        target(ratio, label=label)  # steer hypothesis towards the worst cases


def diagonal(n, anti=False):
    t = np.eye(n, dtype=np.int64)
    return t[::-1] if anti else t


@pytest.mark.parametrize("n", [2, 3, 10, 57, 400])
def test_kendall_bounds_are_attained(n):
    big = np.zeros((n + 1, n + 1), dtype=np.int64)
    big[:n, :n] = diagonal(n, anti=True)
    big[n, n] = 1  # one point beyond both maxima
    assert abs(kendall_tau_a(big) - kendall_tau_a(big[:n, :n])) == pytest.approx(S.kendall_tau_a_sensitivity_add_remove(n))
    before = np.zeros((n + 1, n + 1), dtype=np.int64)
    before[:n - 1, 1:n] = diagonal(n - 1)
    before[n, n] = 1  # concordant with the n - 1 others
    after = before.copy()
    after[n, n], after[n, 0] = 0, 1  # now discordant with all of them
    assert abs(kendall_tau_a(before) - kendall_tau_a(after)) == pytest.approx(S.kendall_tau_a_sensitivity_replace_one(n))


@pytest.mark.parametrize("n", [5, 30, 200])
def test_adversarial_sorted_and_anti_sorted_data(n):
    for anti in (False, True):
        base = np.zeros((n + 2, n + 2), dtype=np.int64)
        base[1:n + 1, 1:n + 1] = diagonal(n, anti)
        for cell in [(0, 0), (n + 1, n + 1), (0, n + 1), (n + 1, 0), (n // 2, n + 1)]:
            added = base.copy()
            added[cell] += 1
            check_add_remove(_pad(base), _pad(added))
            moved = added.copy()
            moved[1, n if anti else 1] -= 1  # remove an extreme point of the diagonal
            check_replace_one(_pad(base), _pad(moved))
            removed = base.copy()
            removed[1, n if anti else 1] -= 1
            check_add_remove(_pad(removed), _pad(base))


def _pad(t):
    """A 2-D table as a (R', C', 1) table for :func:`statistics` (any size)."""
    return t[:, :, None]


def test_a_row_moved_between_strata():
    for n0, n1 in [(3, 3), (3, 40), (40, 3), (2, 30), (60, 60)]:
        t = np.zeros((n0 + n1 + 1, n0 + n1 + 1, 2), dtype=np.int64)
        t[:n0, :n0, 0] = diagonal(n0)
        t[:n1, :n1, 1] = diagonal(n1, anti=True)
        for src, dst in [((0, 0, 0), (n0 + n1, n0 + n1, 1)), ((n0 - 1, n0 - 1, 0), (0, n0 + n1, 1)),
                         ((0, n1 - 1, 1), (n0 + n1, n0 + n1, 0))]:
            if t[src] == 0:
                continue
            moved = t.copy()
            moved[src] -= 1
            moved[dst] += 1
            n = int(t.sum())
            for stat, bound in [(conditional_kendall, S.conditional_kendall_sensitivity_replace_one),
                                (conditional_spearman, S.conditional_spearman_sensitivity_replace_one)]:
                assert abs(stat(t).z - stat(moved).z) <= bound(n, 2) + SLACK


def test_conditional_kendall_add_remove_bound_is_asymptotically_tight():
    n = 2000
    big = np.zeros((n + 1, n + 1), dtype=np.int64)
    big[:n, :n] = diagonal(n, anti=True)
    big[n, n] = 1
    change = abs(conditional_kendall(big).z - conditional_kendall(big[:n, :n]).z)
    bound = S.conditional_kendall_sensitivity_add_remove(n, 1)
    assert 0.99 * bound <= change <= bound
    assert bound * math.sqrt(n) == pytest.approx(5.25, abs=0.01)


def test_tau_b_has_no_useful_global_bound_on_binary_data():
    before = np.array([[98, 1], [1, 0]])  # n = 100
    after = np.array([[98, 1], [1, 1]])  # one row (1, 1) added
    assert abs(kendall_tau_b(after) - kendall_tau_b(before)) >= 0.3
    assert S.kendall_tau_a_sensitivity_add_remove(100) < 0.04


def test_minimum_total_weight_matches_brute_force():
    for n, k in itertools.product(range(0, 16), range(1, 5)):
        best = min(
            sum(kendall_weight(float(m)) for m in split if m >= 3)
            for split in itertools.product(range(n + 1), repeat=k) if sum(split) == n
        )
        assert S.min_total_weight(n, k, kendall_weight) == pytest.approx(best, abs=1e-12)


def test_pvalue_sensitivity_bounds_the_pvalue_change():
    rng = np.random.default_rng(5)
    z = rng.normal(scale=2, size=2000)
    dz = rng.exponential(0.3, size=2000)
    for a, d in zip(z, dz):
        assert abs(two_sided_pvalue(a) - two_sided_pvalue(a + d)) <= S.pvalue_sensitivity(d) + SLACK
    assert two_sided_pvalue(0) - two_sided_pvalue(0.2) == pytest.approx(S.pvalue_sensitivity(0.2))


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.floats(-3, 3), st.floats(-3, 3)), min_size=2, max_size=25),
       st.tuples(st.floats(-50, 50), st.floats(-50, 50)), st.integers(0, 100))
def test_hsic_bound_holds_on_random_replacements(points, new, pick):
    x, y = np.array(points).T
    i = pick % len(x)
    x2, y2 = x.copy(), y.copy()
    x2[i], y2[i] = new
    m = len(x)
    assert abs(hsic(x, y) - hsic(x2, y2)) <= S.hsic_sensitivity_replace_one(m) + SLACK


def test_sensitivity_arguments_are_checked():
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        S.kendall_tau_a_sensitivity_replace_one(1)
    with pytest.raises(ValueError, match="strata must be an integer >= 1"):
        S.conditional_kendall_sensitivity_add_remove(100, 0)
    with pytest.raises(ValueError, match="z_sensitivity must be non-negative"):
        S.pvalue_sensitivity(-1.0)
    assert S.conditional_kendall_sensitivity_add_remove(0, 3) == pytest.approx(1.6617351282209918)
