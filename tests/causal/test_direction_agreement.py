"""RECI's agreement probability is calibrated for what it claims, on seeded simulated data.

The claim (``scores.reci_agreement_probability``): the chance that the noise-free score on
this data (the same released regressions, the same clip, every one of the n rows, no
privacy noise) points the same way as the released one. The check: run the default
pipeline (``privacy="record"``, RECI, epsilon 1) on 2,000 seeded simulated pairs whose two
regression errors are close (linear pairs, slope 0.7 to 1.3: either direction may win), and
replay its public split and its released table to compute the noise-free score over all
rows. Trials are independent, so within a bin of reported probabilities the number that
agree is a sum of independent Bernoulli variables whose mean, under calibration, is the sum
of the reported probabilities: Hoeffding bounds the gap (union over the bins and the
overall check; a correct implementation fails with probability at most 1e-6).

The probability is a flat-prior posterior, so calibration is a property of the ensemble
too: here the noise-free score's spread is wide against the noise, as the derivation assumes.
"""

import functools

import numpy as np

from privgraph.causal import direction as dr
from privgraph.causal.direction import scores as ds
from privgraph.causal.direction.data import TRAIN_RESIDUAL_BANDWIDTH, FittedPair
from privgraph.causal.direction.noisy_table import released_regressions
from privgraph.privacy import SeededSampler
from tests.privacy.bounds import hoeffding

N, EPSILON, TRIALS = 400, 1.0, 2000
BOUNDS = ((-2.0, 2.0), (-2.0, 2.0))
EDGES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1.0 + 1e-9)
MIN_IN_BIN = 100
#: The negative control's over-confidence: its margin read four times as large.
SHARPER = 4.0


def linear_pair(seed: int):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, N) * rng.uniform(0.5, 1.0)
    y = x * rng.uniform(0.7, 1.3) + rng.uniform(0.1, 0.3) * rng.normal(size=N)
    return x, y


def replay(seed: int):
    """(released D~, agreement probability, noise-free score over all rows, an over-confident probability):
    the pipeline's own steps with its seeds (the split from ``rng``, the table's then D's and Q's noise
    from ``sampler``), as ``private_direction`` runs them."""
    x, y = linear_pair(seed)
    sampler = SeededSampler(seed)
    reg, _ = released_regressions(x, y, bounds=BOUNDS, test_fraction=0.5, epsilon=EPSILON, sampler=sampler,
                                  rng=np.random.default_rng((seed, 1)), fit="polynomial")
    noise_free = ds.reci_terms(*reg.residuals()).mean()
    res_y, res_x = reg.residuals(reg.test)
    fit = FittedPair(reg.zx[reg.test], reg.zy[reg.test], res_y, res_x, (TRAIN_RESIDUAL_BANDWIDTH,) * 2, 0.0)
    ((d, q), (b_d, b_q), m), _ = dr.release_reci_scores(fit, EPSILON, sampler, None)
    sharp = ds.reci_agreement_probability(SHARPER * d, q, m, N, b_d, b_q)  # the margin read SHARPER times as large
    return d, ds.reci_agreement_probability(d, q, m, N, b_d, b_q), noise_free, sharp


@functools.lru_cache(maxsize=None)
def trials():
    rows = np.array([replay(seed) for seed in range(TRIALS)])
    d, p, noise_free, sharp = rows.T
    return p, sharp, (d < 0) == (noise_free < 0)


def miscalibrated_bins(p: np.ndarray, agree: np.ndarray) -> list[tuple[float, int]]:
    """The bins (and the overall mean) where the share agreeing is off the mean reported p by more
    than Hoeffding's bound; bins with fewer than MIN_IN_BIN answers are not checked."""
    events = len(EDGES)  # the bins and the overall check
    bad = []
    for lo, hi in zip(EDGES[:-1], EDGES[1:]):
        sel = (p >= lo) & (p < hi)
        if sel.sum() >= MIN_IN_BIN and abs(agree[sel].mean() - p[sel].mean()) > hoeffding(int(sel.sum()),
                                                                                           events=events):
            bad.append((lo, int(sel.sum())))
    if abs(agree.mean() - p.mean()) > hoeffding(p.size, events=events):
        bad.append((0.0, p.size))
    return bad


def test_the_replay_is_the_pipeline():
    for seed in (0, 1, 2):
        result, _ = dr.private_direction(*linear_pair(seed), epsilon=EPSILON, bounds=BOUNDS,
                                         sampler=SeededSampler(seed), rng=np.random.default_rng((seed, 1)),
                                         abstain_below=0.5)
        d, p, _, _ = replay(seed)
        assert result.agreement_probability == p and result.scores["x->y"] == d / 2


def test_agreement_probability_is_calibrated_against_the_noise_free_score_on_the_same_data():
    p, _, agree = trials()
    checked = [lo for lo, hi in zip(EDGES[:-1], EDGES[1:]) if ((p >= lo) & (p < hi)).sum() >= MIN_IN_BIN]
    assert len(checked) == len(EDGES) - 1  # every bin is populated: the check is not vacuous
    assert miscalibrated_bins(p, agree) == []


def test_the_check_rejects_an_over_confident_probability():
    """The same law with the margin read four times as large (an over-confident probability) fails."""
    _, sharp, agree = trials()
    assert miscalibrated_bins(sharp, agree) != []
