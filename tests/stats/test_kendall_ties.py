"""The tie-corrected Kendall test: calibrated on tied data, more powerful, its threshold's
sensitivity bounded (the margin's privacy rests on that bound).

Tolerances: a rejection rate over N independent tables deviates from its mean by more
than t with probability at most exp(-2 N t^2) (Hoeffding); N = 4,000 and t = 0.04 give
1.3e-6 per side.
"""

import itertools
import math

import numpy as np
import pytest

from privgraph.causal import PrivPC
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.graphs import CPDAG, skeleton_scores
from privgraph.stats import KendallTest
from privgraph.stats import sensitivity as S
from privgraph.stats.kendall import TIE_PRIOR, kendall_tie_scale

TRIALS, TOL = 4_000, 0.04
PLAIN, TIES = KendallTest(), KendallTest(tie_corrected=True)


def rare_tables(rng, n, px, py, dependence=0.0):
    """TRIALS 2 x 2 tables of two binary columns with rare levels; ``dependence`` raises
    P(y = 1 | x = 1) by that factor."""
    x = rng.random((TRIALS, n)) < px
    p1 = np.where(x, py * (1 + dependence), py)
    y = rng.random((TRIALS, n)) < p1
    return [np.array([[np.sum(~a & ~b), np.sum(~a & b)], [np.sum(a & ~b), np.sum(a & b)]]) for a, b in zip(x, y)]


def rejection_rate(test, tables, alpha=0.05):
    return np.mean([not test.decide(t, alpha).is_independent for t in tables])


def test_calibrated_under_independence_where_the_papers_variance_is_conservative():
    tables = rare_tables(np.random.default_rng(0), 2_000, 0.1, 0.05)
    ties, plain = rejection_rate(TIES, tables), rejection_rate(PLAIN, tables)
    # level kept; the pseudo-weight raises r by about 12% on these margins (cut-off 2.2, 2.8%)
    assert 0.028 - TOL <= ties <= 0.05 + TOL
    assert plain <= 0.01  # its null standard deviation is about 5x too large: almost never rejects


def test_more_powerful_on_a_rare_dependence():
    """P(y | x) = 0.15 against 0.05 over 2,000 rows: at the expected table the paper's z is
    1.21 and r is 0.235, so the calibrated z is 5.1."""
    tables = rare_tables(np.random.default_rng(1), 2_000, 0.1, 0.05, dependence=2.0)
    assert rejection_rate(TIES, tables) >= 0.95 - TOL
    assert rejection_rate(PLAIN, tables) <= 0.1 + TOL


def test_scale_is_one_without_ties_information_and_at_least_its_floor():
    assert kendall_tie_scale(np.eye(2, dtype=int)) == 1.0  # no stratum of 3 rows: r = 1
    r_min = math.sqrt(TIE_PRIOR / (1 + TIE_PRIOR))
    constant = np.array([[500, 500], [0, 0]])  # x constant: rho = 0, only the pseudo-weight
    assert kendall_tie_scale(constant) >= r_min
    assert kendall_tie_scale(np.eye(400, dtype=int)) > 0.99  # untied: the paper's variance


def test_a_floor_of_one_is_the_papers_test():
    floored = KendallTest(tie_corrected=True, tie_floor=1.0)
    assert floored.has_public_threshold
    assert floored.threshold_sensitivity(0.05, 1000, "replace_one", (2, 2)) == 0.0
    rng = np.random.default_rng(2)
    for _ in range(200):
        t = rng.integers(0, 20, size=(3, 2, 2))
        assert floored.decide(t, 0.05) == PLAIN.decide(t, 0.05)


def test_threshold_needs_the_table_and_the_floor_is_checked():
    with pytest.raises(ValueError, match="depends on the table's margins"):
        TIES.threshold(0.05)
    with pytest.raises(ValueError, match="tie_floor must be a number >= 0"):
        KendallTest(tie_corrected=True, tie_floor=-0.1)


@pytest.mark.parametrize("floor", [0.0, pytest.param(0.2, marks=pytest.mark.slow), pytest.param(0.6, marks=pytest.mark.slow)])  # 2.7 s each
def test_scale_bound_holds_on_every_small_neighbouring_pair(floor):
    """Every 2 x 2 x K table of n rows (K = 1, n = 9; K = 2, n = 6) and every replaced row."""
    worst = 0.0
    for k, n in ((1, 9), (2, 6)):
        cells = 4 * k
        bound = S.kendall_tie_scale_sensitivity_replace_one(n, k, floor)
        for counts in itertools.product(range(n + 1), repeat=cells):
            if sum(counts) != n:
                continue
            t = np.array(counts).reshape(2, 2, k)
            g = max(kendall_tie_scale(t), floor)
            for src in np.argwhere(t > 0):
                for dst in itertools.product(range(2), range(2), range(k)):
                    u = t.copy()
                    u[tuple(src)] -= 1
                    u[dst] += 1
                    change = abs(max(kendall_tie_scale(u), floor) - g)
                    assert change <= bound + 1e-12, (t.tolist(), dst, change, bound)
                    worst = max(worst, change / bound)
    assert worst > 0.01  # the pairs do move the scale


def test_non_private_pc_finds_cancers_rare_edge_with_ties_counted():
    """Pollution - Cancer: z = 1.6-1.9 under the paper's variance (removed at 0.05), about 17
    with ties counted."""
    net = load_network("cancer")
    engine = NumpyEngine(net.domain, sample(net, 100_000, np.random.default_rng(0)))
    truth = CPDAG.from_dag(net.to_networkx())
    f1 = {ci: skeleton_scores(PrivPC(method="pc", ci_test=ci).fit(engine).graph_, truth)["f1"]
          for ci in ("kendall", "kendall-ties")}
    assert f1["kendall-ties"] == 1.0 and f1["kendall"] < 0.9


def test_the_floor_follows_the_noise_and_a_sieve_screens_against_the_examines_threshold():
    from privgraph.causal.margins import RankMargin

    margin = RankMargin(TIES, 0.05)
    assert margin._test_at(100_000, (2, 2))[0].tie_floor == 0.0  # no noise: the calibrated test
    margin.expect_noise(1e6)
    assert margin._test_at(100_000, (2, 2))[0].has_public_threshold  # drowned: the paper's test
    margin.expect_noise(10.0, rows=100_000)
    full, sub = margin._test_at(100_000, (2, 2))[0], margin._test_at(5_000, (2, 2))[0]
    expected = 3 * 10.0 * TIES.sensitivity(100_000, "replace_one", (2, 2)) / TIES.critical_value(0.05)
    assert full.tie_floor == sub.tie_floor == pytest.approx(expected)


def test_priv_pc_refuses_the_same_budgets_with_or_without_ties():
    """The refusal reads the margin's unit at the floor the noise sets: near the boundary the
    noise is large, the floor 1 and the unit the paper's, so both tests refuse alike."""
    from privgraph.causal import BudgetTooSmall

    net = load_network("asia")
    engine = NumpyEngine(net.domain, sample(net, 100_000, np.random.default_rng(0)))
    for epsilon, refused in ((0.4025, True), (0.4027, False)):  # Kendall's boundary: 0.40257
        for ci in ("kendall", "kendall-ties"):
            try:
                PrivPC(epsilon=epsilon, ci_test=ci, random_state=0).fit(engine)
                outcome = False
            except BudgetTooSmall:
                outcome = True
            assert outcome == refused, (ci, epsilon)
