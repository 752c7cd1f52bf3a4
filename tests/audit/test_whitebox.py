"""White-box sensitivity checks (privgraph.audit.whitebox): each estimator run with zero noise on
an adversarial neighbouring pair per relation, every release checked against its claim; and
planted bugs, each shown to be caught.

No randomness decides a check: the noise is zero and the selections' seed is fixed, and the
tolerances are one grid unit (the mechanisms' own rounding allowance) or 1e-9 relative.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from privgraph.audit.estimators import (
    RECORD_ROWS,
    RECORD_TEST_FRACTION,
    SPLIT_SEED,
    anm_record_test_pair,
    anm_reci_test_pair,
    keep_release,
    pc_pair,
    pc_rows_pair,
)
from privgraph.audit.release_cases import added_row, coarse_pair, levels_pair, rounds_pair
from privgraph.audit.whitebox import RecordingSampler, capture, matched, problems, reach, uncovered
from privgraph.causal import deciders
from privgraph.causal.direction import private_direction
from privgraph.causal.direction.data import split_indices
from privgraph.causal.estimators import PrivPC
from privgraph.data import Domain, Kind, NumpyEngine, moments
from privgraph.mrf import noisy_tables
from privgraph.mrf.estimator import PrivateMRF
from privgraph.privacy import Neighbours, SeededSampler, mechanisms, zcdp
from privgraph.release import PrivateRelease, adaptive, tree
from privgraph.stats import KendallTest

RO, AR = Neighbours.REPLACE_ONE, Neighbours.ADD_REMOVE


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "random_state seeds the noise": intended here
        yield


@dataclass
class Outcome:
    pairs: list
    problems: list
    left: object
    right: object

    def reach(self, site: str) -> float:
        """The largest fraction of its claim any matched release at ``site`` moves by."""
        return max((reach(a, b) for a, b in self.pairs if a.site == site), default=0.0)


def white_box(fit, left, right, relation, *, ledger=lambda est: est.ledger_, parts=None) -> Outcome:
    """Fit on D, then on D' with D's releases replayed (same history), with zero noise and the
    same seed; check every matched release, and that each side's releases spend no more than
    its ledger pays."""
    runs = []
    for data in (left, right):
        with capture(replay=runs[0][0] if runs else None) as seen:
            est = fit(data, RecordingSampler(0))
        runs.append((seen, est))
    pairs = matched(runs[0][0], runs[1][0])
    assert pairs, "no release to compare"
    found = problems(pairs, relation)
    for seen, est in runs:
        if (gap := uncovered(seen, ledger(est), parts)) is not None:
            found.append(gap)
    return Outcome(pairs, found, runs[0][1], runs[1][1])


# --- PrivPC -----------------------------------------------------------------------------------

PC_DOMAIN = Domain.of(a=2, b=3)


def pc_fit(method: str, *, neighbours: str = "replace_one", ci_test: str = "kendall"):
    delta = 1e-6 if method == "gauss-pc" else 0.0
    rounds = None if method == "gauss-pc" else 1
    epsilon = 4.0 if method == "gauss-pc" else 1.0  # gauss-pc refuses a budget its noise would drown

    def fit(codes, sampler):
        return PrivPC(epsilon=epsilon, delta=delta, method=method, ci_test=ci_test, neighbours=neighbours,
                      max_rounds=rounds, random_state=sampler).fit(NumpyEngine(PC_DOMAIN, codes))

    return fit


SITES = {"laplace-pc": "LaplacePerTest.__call__", "priv-pc": "SieveAndExamine.test", "gauss-pc": "Level0._noisy"}


def gauss_pc_pair():
    """188 x (0,1) + 12 x (1,2) and one (0,1) -> (1,0): the row leaves both columns' modes, so
    it moves both h's by 1 and the margin by 0.5 (L2 1.5 of the vector's sqrt(3))."""
    left, _ = pc_pair()
    right = left.copy()
    right[0] = (1, 0)
    return left, right


@pytest.mark.parametrize("method", ["laplace-pc", "priv-pc"])
def test_privpc_kendall_replace_one(method):
    # pc_pair: 188 x (0,1) + 12 x (1,2), one (1,2) -> (1,0): Kendall's S moves by 2 * 188 of 2 (n - 1)
    out = white_box(pc_fit(method), *pc_pair(), RO)
    assert out.problems == []
    assert out.reach(SITES[method]) >= 0.9


def test_privpc_gauss_pc_replace_one():
    out = white_box(pc_fit("gauss-pc"), *gauss_pc_pair(), RO)
    assert out.problems == []
    assert out.reach(SITES["gauss-pc"]) >= 0.85


FZ_DOMAIN = Domain(("a", "b"), (0, 0), (Kind.CONTINUOUS, Kind.CONTINUOUS), bounds=((-1.0, 1.0), (-1.0, 1.0)))


def fisher_z_fit(neighbours: str):
    def fit(values, sampler):
        return PrivPC(epsilon=1.0, delta=1e-6, ci_test="fisher-z", neighbours=neighbours,
                      random_state=sampler).fit(pd.DataFrame(values, columns=["a", "b"]), domain=FZ_DOMAIN)

    return fit


def fisher_z_pair(relation: Neighbours):
    """199 records at the origin and one far outside the bounds at (50, 50); replace-one: that one
    moved to the opposite corner (-50, -50); add/remove: (50, 50) added to the 199."""
    base = np.zeros((199, 2))
    if relation is RO:
        return np.vstack([base, [[50.0, 50.0]]]), np.vstack([base, [[-50.0, -50.0]]])
    return base, np.vstack([base, [[50.0, 50.0]]])


@pytest.mark.parametrize("relation", [RO, AR])
def test_fisher_z_covariance(relation):
    out = white_box(fisher_z_fit(relation.value), *fisher_z_pair(relation), relation)
    assert out.problems == []
    # the clipped record (1/4, 1/4) against (-1/4, -1/4) moves the weighted sums by 0.354 of 0.395
    assert out.reach("release_moments") >= 0.5


def test_priv_pc_add_remove_sizes_then_runs_replace_one_inside():
    # add/remove Priv-PC: the size's release (add/remove) first, then Priv-PC on a secret resize
    # to a public m rows, whose releases hold under replace-one (privgraph.privacy.resize)
    left = np.array([[a, b] for a in range(2) for b in range(3)] * 334)  # independent: the examine runs
    right = np.vstack([left, [[1, 0]]])
    out = white_box(pc_fit("priv-pc", neighbours="add_remove"), left, right, AR)
    size, _ = out.pairs[0]
    assert size.neighbours is AR and out.reach(size.site) == 1.0
    assert not [p for p in out.problems if "release 0 " in p or "spend" in p]
    inner = [a for a, _ in out.pairs[1:]]
    assert inner and all(m.neighbours is RO and m.requested >= m.required for m in inner)


#: Tables-PC's case: 10 binary columns, so method="auto" takes tables-pc (AUTO_MIN_COLUMNS).
TABLES_DOMAIN = Domain.of(**{f"v{i}": 2 for i in range(10)})


def tables_pc_pair(n: int = 20_000):
    """A chain v0 -> v1 -> ... -> v9 (each column copies its parent with probability 0.8, fixed
    seed) with row 0 all zeros, against the same with row 0 all ones: the replaced record
    differs in every column, so it leaves one cell and enters another of every table, 2-, 3-
    and 4-way: each moves by sqrt(2) in L2, every release by all of its sqrt(2 T) claim. At
    20,000 rows the chain's edges survive level 0's noise at epsilon 1, so level 1 releases
    3-way tables too (its skeleton is then the chain: no node has the two other neighbours a
    level-2 test needs)."""
    rng = np.random.default_rng(5)
    codes = np.zeros((n, 10), dtype=int)
    codes[:, 0] = rng.integers(0, 2, n)
    for j in range(1, 10):
        codes[:, j] = np.where(rng.uniform(size=n) < 0.8, codes[:, j - 1], rng.integers(0, 2, n))
    codes[0] = 0
    right = codes.copy()
    right[0] = 1
    return codes, right


def tables_pc_fit(codes, sampler):
    return PrivPC(epsilon=1.0, delta=1e-6, random_state=sampler).fit(NumpyEngine(TABLES_DOMAIN, codes))


def test_privpc_tables_pc_replace_one():
    out = white_box(tables_pc_fit, *tables_pc_pair(), RO)
    assert out.left.method_ == out.right.method_ == "tables-pc"  # auto on 10 columns, delta > 0
    assert out.problems == []
    level0, _ = out.pairs[0]
    assert level0.site == "release_tables" and level0.value.size == 45 * 4  # every pair's 2x2 table
    assert reach(*out.pairs[0]) >= 0.9  # one count moved in each of the 45 tables: L2 sqrt(90), all of the claim
    later = [(a, b) for a, b in out.pairs[1:] if a.site == "release_tables"]
    assert later and all(reach(a, b) >= 0.9 for a, b in later)  # level 1's 3-way tables
    assert len(out.pairs) == len(later) + 1  # every level's release matched: the replay kept one history


# --- PrivateMRF -------------------------------------------------------------------------------


def mrf_fit(neighbours: str, noise: str = "laplace"):
    def fit(codes, sampler):
        return PrivateMRF(epsilon=1.0, cliques="a,b", method=keep_release, neighbours=neighbours, noise=noise,
                          delta=1e-6 if noise == "gaussian" else None, random_state=sampler).fit(
            codes, domain=Domain.of(a=2, b=2))

    return fit


def mrf_pair(relation: Neighbours):
    base = np.array([[0, 0], [0, 1], [1, 0], [0, 0]])
    if relation is RO:  # one (0, 0) moved to the opposite corner: two cells move by one
        right = base.copy()
        right[-1] = (1, 1)
        return base, right
    return base, np.vstack([base, [[1, 1]]])


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("relation", [RO, AR])
def test_mrf_tables(relation, noise):
    out = white_box(mrf_fit(relation.value, noise), *mrf_pair(relation), relation)
    assert out.problems == []
    assert out.reach("release_tables") >= 0.99  # one table: a replaced (added) record moves it by all of it


# --- planted bugs -------------------------------------------------------------------------------


def test_planted_fisher_z_without_record_clip_is_caught(monkeypatch):
    """The record-norm clip of the moments dropped, the sensitivity still claiming it (issue 43)."""
    frame_moments = moments.frame_moments

    def unclipped(frame, domain, lo, width, invalid, norm=None):
        m = frame_moments(frame, domain, lo, width, invalid, None)
        return moments.Moments(m.count, m.first, m.second, norm)

    monkeypatch.setattr(moments, "frame_moments", unclipped)
    out = white_box(fisher_z_fit("replace_one"), *fisher_z_pair(RO), RO)
    assert any("> claimed sensitivity" in p for p in out.problems)


def test_planted_laplace_pc_noise_halved_is_caught(monkeypatch):
    """The examine's call passing twice its epsilon while the ledger charges it once."""
    def doubled(value, *, epsilon, **kw):
        return mechanisms.laplace_mechanism(value, epsilon=2 * epsilon, **kw)

    monkeypatch.setattr(deciders, "laplace_mechanism", doubled)
    out = white_box(pc_fit("laplace-pc"), *pc_pair(), RO)
    assert [p for p in out.problems if "spend" in p] and len(out.problems) == 2  # both sides, nothing else


def test_planted_sampler_halving_scales_is_caught(monkeypatch):
    """A sampler drawing half the scale the mechanism asks for."""
    draw = RecordingSampler.discrete_gaussian
    monkeypatch.setattr(RecordingSampler, "discrete_gaussian", lambda self, sigma, size=1: draw(self, sigma / 2, size))
    out = white_box(pc_fit("gauss-pc"), *gauss_pc_pair(), RO)
    assert any("its charge requires" in p for p in out.problems)


def test_planted_kendall_add_remove_sensitivity_under_replace_one_is_caught(monkeypatch):
    """Priv-PC's Kendall margin normalised by the add/remove sensitivity of z."""
    sensitivity = KendallTest.sensitivity
    monkeypatch.setattr(KendallTest, "sensitivity", lambda self, n, neighbours, shape: sensitivity(self, n, AR, shape))
    out = white_box(pc_fit("priv-pc"), *pc_pair(), RO)
    assert any("> claimed sensitivity" in p for p in out.problems)


def test_planted_mrf_add_remove_sensitivity_under_replace_one_is_caught(monkeypatch):
    monkeypatch.setattr(noisy_tables, "histogram_l1_sensitivity", lambda neighbours: 1)
    out = white_box(mrf_fit("replace_one"), *mrf_pair(RO), RO)
    assert any("> claimed sensitivity" in p for p in out.problems)


def test_planted_tables_pc_sensitivity_without_the_root_two_is_caught(monkeypatch):
    """Tables-PC's T tables claimed at sqrt(T) (a count moved counted once, not out and in)."""
    from privgraph.causal import table_pc

    monkeypatch.setattr(table_pc, "tables_l2_sensitivity", lambda count: math.sqrt(count))
    out = white_box(tables_pc_fit, *tables_pc_pair(), RO)
    assert out.problems and all("> claimed sensitivity" in p for p in out.problems)
    assert any(p.startswith("release 0 ") for p in out.problems)  # level 0 too


def test_planted_tables_pc_noise_halved_is_caught(monkeypatch):
    """Tables-PC's levels drawn at four times their rho (half the noise), the plan's charges unchanged."""
    from privgraph.causal import table_pc

    def quartered(values, *, rho, **kw):
        return zcdp.zcdp_gaussian_vector(values, rho=4 * rho, **kw)

    monkeypatch.setattr(table_pc, "zcdp_gaussian_vector", quartered)
    out = white_box(tables_pc_fit, *tables_pc_pair(), RO)
    assert [p for p in out.problems if "spend rho" in p]


def test_capture_wraps_and_restores_the_mechanisms():
    original = mechanisms.laplace_mechanism
    with capture():
        assert deciders.laplace_mechanism is mechanisms.laplace_mechanism is not original
    assert deciders.laplace_mechanism is mechanisms.laplace_mechanism is original
    assert zcdp.zcdp_gaussian_vector.__module__ == "privgraph.privacy.zcdp"


def test_capture_refuses_a_noisy_sampler():
    with capture(), pytest.raises(TypeError, match="RecordingSampler"):
        mechanisms.laplace_mechanism(1.0, epsilon=1.0, sensitivity=1.0, neighbours=AR, sampler=SeededSampler(0))


# --- PrivateRelease -----------------------------------------------------------------------------


def release_fit(structure: str, neighbours: str = "replace_one", delta: float = 0.0, domain: Domain | None = None):
    """The tree on binary columns a, b, c(, e); priv-pc (one round) and gauss-pc on the PC
    cases' a = 2, b = 3, ordinal so that Priv-PC takes Kendall's test; or on ``domain`` if given."""
    options = {"max_rounds": 1} if structure == "priv-pc" else {}

    def fit(codes, sampler, domain=domain):
        names = tuple("abce"[:codes.shape[1]])
        if domain is None and structure == "tree":
            domain = Domain.of(**{v: 2 for v in names})
        elif domain is None:
            domain = Domain(names, (2, 3), (Kind.ORDINAL, Kind.ORDINAL))
        return PrivateRelease(epsilon=4.0, delta=delta, structure=structure, method=keep_release, neighbours=neighbours,
                              random_state=sampler, **options).fit(NumpyEngine(domain, codes))

    return fit


def test_release_tree_adaptive_replace_one():
    # 13 x each of {0,1}^4, one 0000 -> 1110: every table holding two of a, b, c moves a count
    # between cells (L2 sqrt 2, L1 2), every pair score by 2
    out = white_box(release_fit("tree", delta=1e-6), *rounds_pair(), RO)
    assert out.problems == []
    assert out.reach("adaptive_rounds") >= 0.99 and out.reach("release_tables") >= 0.99
    assert sum(a.site == "adaptive_rounds" and a.mechanism == "gaussian_vector" for a, _ in out.pairs) >= 2


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_release_tree_add_remove(delta):
    out = white_box(release_fit("tree", "add_remove", delta), *added_row(), AR)
    assert out.problems == []
    assert out.reach("release_tables") >= 0.99 and out.reach("select_tree") >= 0.99


@pytest.mark.parametrize("structure", ["priv-pc", "gauss-pc"])
def test_release_pc_structures_replace_one(structure):
    left, right = pc_pair()
    out = white_box(release_fit(structure, delta=1e-6 if structure == "gauss-pc" else 0.0), left, right, RO)
    assert out.problems == []
    assert out.reach("release_tables") >= 0.99


#: The coarse case's domain: a wide ordered column (14 ordinal levels) beside two binary ones.
COARSE_DOMAIN = Domain(("a", "b", "c"), (14, 2, 2), (Kind.ORDINAL, Kind.CATEGORICAL, Kind.CATEGORICAL))


def test_release_tree_coarse():
    """coarse_pair (the case's own): the replaced row (0, 0, 0) -> (13, 1, 0) leaves a's first bin
    and b's level 0 for a's last bin and b's level 1, so every table the adaptive rounds measure
    of a pair holding a or b, binned or not, moves a count between two cells: L2 sqrt 2, all of
    the replace-one claim (1.0 of it; no pair can do more). The bins are read from the released
    one-way tables, replayed, so they are the same on both sides."""
    out = white_box(release_fit("tree", delta=1e-6, domain=COARSE_DOMAIN), *coarse_pair(), RO)
    assert out.problems == []
    plan = out.left.structure_.adaptive
    assert plan.bins == out.right.structure_.adaptive.bins
    rounds = [(a, b) for a, b in out.pairs if a.site == "adaptive_rounds" and a.mechanism == "gaussian_vector"]
    assert len(rounds) == len(plan.pairs)  # every measurement of the rounds matched
    binned = [(a, b) for (a, b), bins in zip(rounds, plan.bins) if bins is not None and any(x is not None for x in bins)]
    assert binned and all(reach(a, b) >= 0.99 for a, b in binned)
    assert out.reach("release_tables") >= 0.99 and out.reach("select_tree") >= 0.99


def levels_flipped_pair():
    """levels_pair with the replaced row's b and c flipped too: a = 2 -> 0 as in the case (13 and
    12 on either side of the rare threshold), and the row leaves its cell of every one-way table."""
    left, right = levels_pair()
    i = np.flatnonzero((left != right).any(axis=1))[0]
    right[i, 1:] = 1 - left[i, 1:]
    return left, right


def test_release_tree_levels():
    """A more adversarial pair than the case's (levels_flipped_pair): the replaced row moves a count
    in each of the three one-way tables the merge reads, L1 6 of the claimed 6 (1.0; the case's own
    pair moves a alone, a third), and every later table by all of its claim. With D's one-way
    tables replayed the merge is the same on both sides: a release that merged on the true counts
    (13 against 12, about the threshold) would merge a's level 2 on D' only."""
    domain = Domain.of(a=4, b=2, c=2)
    out = white_box(release_fit("tree", domain=domain), *levels_flipped_pair(), RO)
    assert out.problems == []
    ones, _ = out.pairs[0]
    assert ones.site == "release_tables" and ones.value.size == 8 and reach(*out.pairs[0]) >= 0.99
    assert all(np.array_equal(x, y) for x, y in zip(out.left.levels_.codes, out.right.levels_.codes))
    assert out.reach("select_tree") >= 0.99


def test_release_sized_cell():
    """pc_rows_pair (the case's own; 1,995 x (0, 1) + 5 x (1, 2), plus (1, 0)): the added row moves
    the size by 1 and the table (a, b) by 1 in L1, all of each add/remove claim (1.0). Priv-PC runs
    between them on a secret resize to the public m rows, its releases under replace-one
    (privgraph.privacy.resize): checked against that relation."""
    out = white_box(release_fit("priv-pc", "add_remove"), *pc_rows_pair(), AR)
    inner = [(a, b) for a, b in out.pairs if a.site == SITES["priv-pc"]]
    outer = [(a, b) for a, b in out.pairs if a.site != SITES["priv-pc"]]
    assert inner and problems(inner, RO) == [] and problems(outer, AR) == []
    assert [p for p in out.problems if SITES["priv-pc"] not in p] == []  # the ledgers pay for every release
    assert outer[0][0].site == "release_size" and reach(*outer[0]) == 1.0
    assert out.reach("release_tables") >= 0.99


def test_planted_adaptive_rounds_with_add_remove_sensitivity_is_caught(monkeypatch):
    """Issue 43: the adaptive rounds' replace-one measurements noised as if add/remove."""
    monkeypatch.setattr(adaptive, "histogram_l2_sensitivity", lambda neighbours: 1.0)
    out = white_box(release_fit("tree", delta=1e-6), *rounds_pair(), RO)
    assert out.problems and all("adaptive_rounds" in p and "> claimed" in p for p in out.problems)


def test_planted_pair_scores_with_add_remove_sensitivity_is_caught(monkeypatch):
    """The tree's and the rounds' pair scores (L1 distances of tables) claiming the add/remove 1."""
    from privgraph.release import pair_scores  # where pair_score_sensitivity reads it (moved from tree)

    monkeypatch.setattr(pair_scores, "histogram_l1_sensitivity", lambda neighbours: 1)
    out = white_box(release_fit("tree", delta=1e-6), *rounds_pair(), RO)
    assert {p.split(" at ")[1].split(")")[0] for p in out.problems} >= {"select_tree", "adaptive_rounds"}


# --- PrivateANM -------------------------------------------------------------------------------------


def anm_fit(score: str, bounds):
    # private_direction is what PrivateANM.fit runs; called directly for a fixed public split
    def fit(xy, sampler):
        return private_direction(*xy, epsilon=1.0, sampler=sampler, rng=np.random.default_rng(SPLIT_SEED), score=score,
                                 privacy="record", bounds=bounds, test_fraction=RECORD_TEST_FRACTION)

    return fit


#: The direction's ledger composes in parallel: the training table and the test scores hold disjoint records.
ANM_PARTS = {"ledger": lambda rel: rel.ledger, "parts": lambda m: m.site == "release_table"}


def anm_train_far_pair():
    """anm_record_test_pair's records with the top *training* record's y moved far outside the
    bounds (to 50, clipped to 1): it moves one count of the training table to another cell."""
    (x, y), _ = anm_record_test_pair()
    train, _ = split_indices(RECORD_ROWS, RECORD_TEST_FRACTION, np.random.default_rng(SPLIT_SEED))
    moved = y.copy()
    moved[train[np.argmax(x[train])]] = 50.0
    return (x, y), (x, moved)


@pytest.mark.parametrize("score", ["kendall", "reci"])
def test_anm_record_privacy_test_record(score):
    pair = anm_record_test_pair() if score == "kendall" else anm_reci_test_pair()
    out = white_box(anm_fit(score, ((-1.0, 1.0), (-1.0, 1.0))), *pair, RO, **ANM_PARTS)
    assert out.problems == []
    site = "release_laplace_scores" if score == "kendall" else "release_reci_scores"
    assert out.reach(site) >= 0.5


def test_anm_record_privacy_training_record():
    out = white_box(anm_fit("kendall", ((-1.0, 1.0), (-1.0, 1.0))), *anm_train_far_pair(), RO, **ANM_PARTS)
    assert out.problems == []
    assert out.reach("release_table") >= 0.99


def test_planted_adaptive_measurement_noise_halved_is_caught(monkeypatch):
    """The rounds' measurements drawn at four times their rho (half the noise), the filter charge unchanged."""
    def quartered(values, *, rho, **kw):
        return zcdp.zcdp_gaussian_vector(values, rho=4 * rho, **kw)

    monkeypatch.setattr(adaptive, "zcdp_gaussian_vector", quartered)
    out = white_box(release_fit("tree", delta=1e-6), *rounds_pair(), RO)
    assert [p for p in out.problems if "spend rho" in p]
