"""Issue 25, part 4: planning from public facts at 1,000 columns is bounded work.

``privgraph plan`` on a 1,000-column codebook printed nothing in 180 s: exact optimal
composition was inverted by bisection inside a bisection over the per-round epsilon (each
step summing the whole support), and Gauss-PC's plan built a networkx graph of half a
million edges it never read. The work is bounded here by counting, not by timing (the
measured times are in docs/checks.md's bad-input section, from benchmarks/bench_wide_files.py).
"""

import numpy as np
import pytest

from privgraph.data import Domain
from privgraph.privacy import Charge, Neighbours, Ledger
from privgraph.privacy import composition
from privgraph.privacy.sieve import fit_rounds_to_budget


def sieve_round(r):
    return (Charge("sieve", 0.5 * r, 0.0, Neighbours.REPLACE_ONE), Charge("examine", 0.5 * r, 0.0, Neighbours.REPLACE_ONE))


@pytest.mark.parametrize("rounds", [1, 56, 2_000, 999_000])
def test_fitted_scale_is_the_largest_that_fits_to_1e_9(rounds):
    r = fit_rounds_to_budget(sieve_round, rounds, 1.0, 1e-6, "optimal")

    def total(scale):
        return Ledger(tuple(c.times(rounds) for c in sieve_round(scale))).total("optimal", 1e-6).epsilon

    assert total(r) <= 1.0 < total(r * (1 + 1e-9))


def test_tail_sums_agree_with_the_direct_sum():
    charges = [Charge("a", 0.3, 0.0, Neighbours.ADD_REMOVE).times(40), Charge("b", 0.05, 0.0, Neighbours.ADD_REMOVE).times(300)]
    loss, logp = composition._rr_loss_distribution(charges)
    tail = composition._rr_tail(loss, logp)
    for eps in np.linspace(0, float(loss.max()), 37):
        assert abs(tail(eps) - composition._rr_delta(loss, logp, eps)) <= 1e-14


def test_plan_at_1000_columns_sums_a_bounded_support_and_builds_no_graph(monkeypatch):
    from privgraph.causal import gauss_pc
    from privgraph.release import plan_release

    def no_graph(*args, **kwargs):
        raise AssertionError("the plan built the start graph")

    points = []
    distribution = composition._rr_loss_distribution

    def counted(charges):
        loss, logp = distribution(charges)
        points.append(loss.size)
        return loss, logp

    monkeypatch.setattr(gauss_pc, "start_graph", no_graph)
    monkeypatch.setattr(composition, "_rr_loss_distribution", counted)
    wide = Domain.of(**{f"c{i}": 2 for i in range(1000)})
    for neighbours in ("add_remove", "replace_one"):
        plan = plan_release(wide, 100_000, epsilon=1.0, neighbours=neighbours)
        assert plan.stages
    # measured: 911 distributions, 3.4e7 points in all; before, the first 90 s alone built 170
    # distributions of 2e6 points (3.4e8) and summed each ~50 times in bisection
    assert len(points) < 2_000 and sum(points) < 1e8, (len(points), sum(points))
