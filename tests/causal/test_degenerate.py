"""No information is not independence: the convention, non-private and private.

A table whose strata are all degenerate (x or y constant in each, or too few rows) keeps
the edge by default, for every test; causal-learn's convention removes it. In the
private deciders the rule lives inside the normalised margin
``min((T - |z|) / Delta, H - T / Delta)``, which must keep sensitivity 1 under replace-one:
checked here on adversarial neighbours at the rule's boundary (one row makes a stratum
degenerate or not) and on random neighbouring tables.
"""

import numpy as np
import pytest

from privgraph.causal import NonPrivate, RankMargin, Tables, stable_pc_skeleton
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.stats import KendallTest, SpearmanTest


class View:
    """A one-table stand-in for Tables: what RankMargin reads (table, n, shape)."""

    def __init__(self, table):
        self.t, self.n = np.asarray(table), int(np.sum(table))

    def table(self, cols):
        return self.t

    def shape(self, cols):
        return self.t.shape


def margin_of(test, table, noise=0.0):
    margin = RankMargin(test, 0.05)
    margin.expect_noise(noise)  # the tie-corrected test's floor: 0 without noise
    return margin(View(table), "x", "y", tuple(f"s{i}" for i in range(np.ndim(table) - 2)))


RANK_TESTS = [KendallTest(), SpearmanTest(), KendallTest(tie_corrected=True)]


def replace_one(table, src, dst):
    out = np.array(table, copy=True)
    out[src] -= 1
    out[dst] += 1
    return out


def test_kendall_pc_keeps_asias_deterministic_arcs():
    """asia's either = tub OR lung: under causal-learn's rule either-xray and either-dysp go."""
    net = load_network("asia")
    tables = Tables.from_engine(NumpyEngine(net.domain, sample(net, 100_000, np.random.default_rng(0))))
    truth = {frozenset(e) for e in net.edges}
    found = {}
    for rule in ("dependent", "independent"):
        sk = stable_pc_skeleton(net.domain.names, NonPrivate(tables, KendallTest(degenerate=rule), 0.05))
        found[rule] = {frozenset(e) for e in sk.graph.edges}
    assert {frozenset(("either", "xray")), frozenset(("either", "dysp"))} <= found["dependent"]
    assert not {frozenset(("either", "xray")), frozenset(("either", "dysp"))} & found["independent"]
    assert found["dependent"] <= truth


@pytest.mark.parametrize("test", RANK_TESTS)
def test_margin_rule_boundary_neighbours_move_it_by_at_most_one(test):
    """Adversarial pairs: one row decides whether a stratum (or the whole table) is degenerate."""
    pairs = []
    for n in (30, 200, 5000):
        t = np.zeros((2, 2), dtype=np.int64)
        t[0, 0] = n - 1
        t[1, 1] = 1  # one row makes x (and y) non-constant: perfectly concordant with all
        pairs.append((t, replace_one(t, (1, 1), (0, 0))))  # now constant: no information
        t = np.zeros((3, 3, 2), dtype=np.int64)
        t[0, :, 0] = [n // 2, n // 4, n - n // 2 - n // 4 - 1]
        t[2, 2, 1] = 1  # stratum 1 has one row: skipped; stratum 0 has x constant
        pairs.append((t, replace_one(t, (0, 2, 0), (1, 0, 0))))  # x takes a second value
        t = np.zeros((2, 2, 2), dtype=np.int64)
        t[:, :, 0] = [[n // 2, 0], [0, 1]]
        t[:, :, 1] = [[2, 0], [0, 0]]
        pairs.append((t, replace_one(t, (1, 1, 0), (1, 1, 1))))  # stratum 1 reaches 3 rows
    for d, d2 in pairs:
        a, b = margin_of(test, d), margin_of(test, d2)
        assert abs(a - b) <= 1 + 1e-9, (d.tolist(), a, b)
    assert margin_of(test, pairs[0][1]) < 0  # the degenerate side keeps the edge


@pytest.mark.parametrize("test", RANK_TESTS)
@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_margin_with_rule_random_neighbours(test, noise):
    rng = np.random.default_rng(3)
    for _ in range(300):
        shape = (int(rng.integers(2, 4)), int(rng.integers(2, 4)), int(rng.integers(1, 4)))
        p = rng.dirichlet(np.full(np.prod(shape), 0.2))  # sparse tables: many degenerate strata
        t = rng.multinomial(int(rng.integers(3, 40)), p).reshape(shape)
        src = np.unravel_index(rng.choice(t.size, p=t.ravel() / t.sum()), shape)
        dst = np.unravel_index(rng.integers(t.size), shape)
        a, b = margin_of(test, t, noise), margin_of(test, replace_one(t, src, dst), noise)
        assert abs(a - b) <= 1 + 1e-9, (t.tolist(), src, dst, a, b)
