"""The Kendall decision's probability is calibrated against the causal truth on the SIM families.

The claim (``privgraph.causal.direction.calibration``): on the equal mixture of the SIM
families, of the decisions reported at p about p are right. Pairs: seeds 7000+ of
``benchmarks/direction_pairs.py`` (disjoint from the map's fitting seeds 0-119), n = 1,000,
epsilon = 1, the default ``privacy="record"``. Each pair is an independent draw, so the
number right in any set of decisions chosen by their reported probability is a sum of
independent Bernoulli variables whose mean, under calibration, is the sum of the reported
probabilities: Hoeffding bounds the gap (union over all checks, failure <= 1e-6).

Per family the map (one map for the mixture) is calibrated only up to a stated allowance,
``FAMILY_SLACK``: the per-family gap between the share right and the mean reported
probability, measured on these pairs, is +0.14 on SIM (under-confident) and -0.09 on SIM-ln
and SIM-G (where Kendall is at a coin), and on the evaluation pairs of
``benchmarks/bench_direction_real.py`` within 0.1; 0.15 is allowed. With 100 pairs per family the per-family check catches only gross
miscalibration (tolerance about 0.45), the mixture's about 0.15; the slow test (480 per
family) tightens them to about 0.28 and 0.07. ``test_the_check_rejects_a_miscalibrated_probability``
shows the check fails for a map four times as sharp and for RECI's agreement probability.
"""

import functools
import math

import numpy as np
import pytest

from benchmarks.direction_pairs import FAMILIES, sim_pair
from privgraph.causal.direction import private_direction
from privgraph.causal.direction import calibration as cal
from privgraph.privacy import SeededSampler
from tests.privacy.bounds import hoeffding

FIRST_SEED, PAIRS, N, EPSILON = 7000, 100, 1000, 1.0
BOUNDS = ((-3.0, 3.0), (-3.0, 3.0))
BINS = (0.5, 0.6, 0.75, 1.0 + 1e-9)
FAMILY_SLACK = 0.15
#: Every Hoeffding check below, for the union bound.
CHECKS = len(FAMILIES) + (len(BINS) - 1) + 1


@functools.lru_cache(maxsize=None)
def simulated(family: str, seed: int):
    return sim_pair(family, N, seed)


@functools.lru_cache(maxsize=None)
def decisions(score: str, pairs: int = PAIRS):
    """Per family: (released margin s~(Y->X) - s~(X->Y), reported probability, truth is x->y)."""
    out = {}
    for family in FAMILIES:
        rows = []
        for seed in range(FIRST_SEED, FIRST_SEED + pairs):
            x, y, truth = simulated(family, seed)
            res, _ = private_direction(x, y, epsilon=EPSILON, sampler=SeededSampler(seed),
                                       rng=np.random.default_rng((seed, 1)), score=score, bounds=BOUNDS,
                                       abstain_below=0.5)
            rows.append((res.scores["y->x"] - res.scores["x->y"], res.causal_probability_sim if score == "kendall" else res.agreement_probability, truth == "x->y"))
        out[family] = rows
    return out


def kendall_map(constants):
    from privgraph.privacy import laplace_scale
    from privgraph.stats.sensitivity import kendall_tau_a_sensitivity_replace_one

    m = N // 2
    b = laplace_scale(EPSILON / 2, kendall_tau_a_sensitivity_replace_one(m))
    return lambda margin: cal.kendall_causal_probability(margin, m, b, EPSILON, constants)


def reported(rows, probability):
    """(probability of the reported direction, whether it is the truth) per decision."""
    p = np.array([probability(r) for r in rows])
    right = np.array([(r[0] > 0) == r[2] for r in rows])
    return p, right


def calibration_failures(per_family: dict, pairs: int) -> list[str]:
    """The checks that fail: per family (with FAMILY_SLACK), per bin and overall on the mixture."""
    failures = []
    for family, (p, right) in per_family.items():
        tol = FAMILY_SLACK + hoeffding(pairs, events=CHECKS)
        if abs(right.mean() - p.mean()) > tol:
            failures.append(f"{family}: right {right.mean():.2f}, reported {p.mean():.2f}, tol {tol:.2f}")
    p = np.concatenate([v[0] for v in per_family.values()])
    right = np.concatenate([v[1] for v in per_family.values()])
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        sel = (p >= lo) & (p < hi)
        if sel.sum() >= 30 and abs(right[sel].mean() - p[sel].mean()) > (tol := hoeffding(int(sel.sum()), events=CHECKS)):
            failures.append(f"bin [{lo}, {hi}): right {right[sel].mean():.2f} of {sel.sum()}, "
                            f"reported {p[sel].mean():.2f}, tol {tol:.2f}")
    if abs(right.mean() - p.mean()) > (tol := hoeffding(p.size, events=CHECKS)):
        failures.append(f"mixture: right {right.mean():.2f}, reported {p.mean():.2f}, tol {tol:.2f}")
    return failures


@pytest.mark.slow  # simulating its 400 pairs (~10 s quiet, more loaded), shared by the slow tests here
def test_kendall_probability_is_calibrated_against_the_causal_truth_on_every_sim_family():
    data = decisions("kendall")
    per_family = {f: reported(rows, lambda r: r[1]) for f, rows in data.items()}
    assert all(0.5 <= p.min() and p.max() < 1 for p, _ in per_family.values())
    assert calibration_failures(per_family, PAIRS) == []


@pytest.mark.slow  # simulating its 400 pairs (~10 s quiet, more loaded), shared by the slow tests here
def test_the_check_rejects_a_miscalibrated_probability():
    """An over-confident map (four times the slope) and RECI's agreement probability, which is
    calibrated for agreement with the noise-free score, not for the causal direction, both fail."""
    data = decisions("kendall")
    a, k, c = cal.KENDALL_CALIBRATION
    sharp = kendall_map((4 * a, k, 4 * c))
    over = {f: reported(rows, lambda r: sharp(r[0])) for f, rows in data.items()}
    assert calibration_failures(over, PAIRS) != []
    reci = {f: reported(rows, lambda r: r[1]) for f, rows in decisions("reci", 40).items()}
    assert calibration_failures(reci, 40) != []


def test_abstention_follows_the_calibrated_probability_at_no_extra_cost():
    x, y, _ = simulated("SIM-G", FIRST_SEED)
    kw = dict(epsilon=EPSILON, sampler=SeededSampler(1), score="kendall", bounds=BOUNDS)
    kept, ledger_kept = private_direction(x, y, rng=np.random.default_rng(0), abstain_below=0.5, **kw)
    kw["sampler"] = SeededSampler(1)
    strict, ledger_strict = private_direction(x, y, rng=np.random.default_rng(0), abstain_below=0.99, **kw)
    assert kept.direction != "undecided" and strict.direction == "undecided"
    assert kept.causal_probability_sim == strict.causal_probability_sim and ledger_kept.total() == ledger_strict.total()
    assert math.isclose(kept.causal_probability_sim, kendall_map(cal.KENDALL_CALIBRATION)(
        kept.scores["y->x"] - kept.scores["x->y"]))


@pytest.mark.slow
def test_kendall_probability_is_calibrated_on_more_pairs():
    pairs = 480
    data = decisions("kendall", pairs)
    per_family = {f: reported(rows, lambda r: r[1]) for f, rows in data.items()}
    assert calibration_failures(per_family, pairs) == []
