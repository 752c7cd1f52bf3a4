"""Issue 46, item 2: the report's list of where the model answers worst, from released values
only (privgraph.release.misfit): each released table against the model beside its noise's
expected distance, and the pairs no released table measures with why."""

import itertools
import math

import numpy as np
import pytest

from privgraph.data import Domain
from privgraph.mrf.noisy_tables import NoisyMarginals
from privgraph.release import PrivateRelease
from privgraph.release.misfit import (
    noise_l1, release_misfits, released_groups, table_misfits, unmeasured_pairs,
)
from privgraph.release.report import worst_answers_section

N, SIGMA = 100_000.0, 30.0


def noisy_tables(truth: list[np.ndarray], seed: int, sigma: float = SIGMA) -> NoisyMarginals:
    """Each true probability table times N with Gaussian noise of ``sigma`` (one clique per table)."""
    rng = np.random.default_rng(seed)
    names = tuple(f"c{i}" for i in range(len(truth)))
    domain = Domain.of(**{n: t.size for n, t in zip(names, truth)})
    tables = tuple(N * t + rng.normal(0, sigma, t.shape) for t in truth)
    return NoisyMarginals(domain, tuple((n,) for n in names), tuple(range(len(names))), tables, "gaussian", sigma, N)


def dirichlet_tables(count: int, cells: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.dirichlet(np.ones(cells)) for _ in range(count)]


def test_a_true_model_sits_at_the_noise_and_is_not_flagged():
    truth = dirichlet_tables(40, 25, 1)
    noisy = noisy_tables(truth, 2)
    model = dict(zip(noisy.cliques, truth))
    misfits = table_misfits(noisy, model.__getitem__, N)
    ratios = np.array([m.ratio for m in misfits])
    # each ratio has relative sd sqrt((pi/2 - 1) / 25) = 0.151; the mean of 40 about 0.024: 5 sd = 0.12
    assert abs(ratios.mean() - 1) < 0.12
    # a table past 3 sd of its noise: probability about 0.2% each (Cantelli: at most 10%)
    assert sum(m.beyond for m in misfits) <= 2
    assert math.isclose(misfits[0].noise, noise_l1("gaussian", SIGMA, 25)[0] / (2 * N))


def test_a_model_that_misses_a_table_flags_it_and_ranks_it_first():
    truth = dirichlet_tables(10, 25, 3)
    noisy = noisy_tables(truth, 4)
    model = dict(zip(noisy.cliques, truth))
    model[("c7",)] = 0.7 * truth[7] + 0.3 / 25  # off by 0.3 of the way to uniform: far past the noise
    misfits = table_misfits(noisy, model.__getitem__, N)
    assert misfits[0].clique == ("c7",) and misfits[0].beyond
    expected = 0.5 * np.abs(0.3 * (truth[7] - 1 / 25)).sum()
    assert abs(misfits[0].distance - expected) < 3 * misfits[0].noise  # the noise moves it by about its size
    assert sum(m.beyond for m in misfits[1:]) <= 1  # about 0.2% each past 3 sd (Cantelli: at most 10%)


def test_a_table_measured_twice_is_one_table_with_the_combined_noise():
    d = Domain.of(a=2, b=3)
    y = np.arange(6.0).reshape(2, 3)
    t = NoisyMarginals(d, (("a", "b"), ("b", "a")), (0, 1), (y, y.T + 2), "gaussian", 10.0, 15.0, scales=(10.0, 10.0))
    ((clique, bins, table, scale),) = released_groups(t)  # (b, a) measured again: its axes turned back
    assert clique == ("a", "b") and bins is None
    assert np.allclose(table, y + 1) and math.isclose(scale, 10 / math.sqrt(2))


def test_unmeasured_pairs_are_the_pairs_in_no_released_table_with_a_public_reason():
    d = Domain.of(a=10, b=10, c=10, e=2)
    out = unmeasured_pairs(d, [("a", "b"), ("b", "c", "e")], tree_cap=1100)
    assert {u.pair for u in out} == {("a", "c"), ("a", "e")}  # (b, e), (c, e) are inside (b, c, e)
    # (a, c) closes a, b, c into one clique: 1,000 + 200 cells; (a, e) makes (a, b, e): 200 + 200
    assert [u.reason for u in out] == ["cap", "not selected"]
    assert [u.reason for u in unmeasured_pairs(d, [("a", "b"), ("b", "c", "e")], tree_cap=10_000)] == \
        ["not selected", "not selected"]


@pytest.fixture(scope="module")
def tree_release():
    from privgraph.datasets import load_network, sample_frame

    net = load_network("asia")
    frame = sample_frame(net, 5_000, np.random.default_rng(0), labels=True)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return PrivateRelease(epsilon=1.0, structure="tree", random_state=0).fit(frame, domain=net.domain)


def test_a_release_lists_each_released_table_once_and_every_pair_outside_the_model(tree_release):
    rel = tree_release
    misfits, unmeasured, count = release_misfits(rel)
    assert count == len(unmeasured) and release_misfits(rel, limit=2)[1] == unmeasured[:2]
    model_cliques = {frozenset(c) for c in rel.parameters_.model_.cliques}
    assert {frozenset(m.clique) for m in misfits} == model_cliques  # asia has no wide column: no bins
    assert len(misfits) == len(model_cliques)
    inside = {frozenset(p) for c in model_cliques for p in itertools.combinations(sorted(c), 2)}
    every = {frozenset(p) for p in itertools.combinations(rel.domain_.names, 2)}
    assert {frozenset(u.pair) for u in unmeasured} == every - inside
    assert all(0 <= m.distance <= 1 and m.noise > 0 for m in misfits)


def test_the_report_section_names_the_worst_tables_and_the_pairs_left_to_the_structure(tree_release):
    text = worst_answers_section(tree_release)
    misfits, unmeasured, count = release_misfits(tree_release, limit=8)
    assert text.startswith("## Where the model answers worst (released values only)")
    assert f"Released tables beyond their noise: {sum(m.beyond for m in misfits)} of\n{len(misfits)};" in text
    assert f"| {', '.join(misfits[0].clique)} | {misfits[0].cells} | {misfits[0].distance:.4f} |" in text
    assert f"{count} of the 28 pairs of columns are in no released table" in text
    assert f"| {' x '.join(unmeasured[0].pair)} |" in text
