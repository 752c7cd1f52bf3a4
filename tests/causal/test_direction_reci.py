"""RECI, the default direction score: sensitivities, noise scale, calibrated probability, abstention.

Fixed seeds; tolerances from tail bounds (tests/privacy/bounds.py), so a correct
implementation fails with probability at most about 1e-6 per assertion.
"""

import numpy as np
import pytest

from privgraph.causal import direction as dr
from privgraph.causal.direction import scores as ds
from privgraph.causal.direction.data import FittedPair
from privgraph.causal.direction.orient import orient_by_direction
from privgraph.graphs import CPDAG
from privgraph.privacy import SeededSampler
from tests.privacy.bounds import hoeffding

C = ds.RECI_CLIP


def fitted(res_y, res_x):
    m = res_y.size
    return FittedPair(np.zeros(m), np.zeros(m), res_y, res_x, bandwidths=(1.0, 1.0), shift=0.0)


def test_replacing_one_test_record_moves_d_and_q_by_at_most_their_sensitivities():
    rng = np.random.default_rng(0)
    m = 50
    sens_d, sens_q = ds.reci_sensitivities(m)
    for trial in range(200):
        ry, rx = rng.normal(scale=rng.choice([0.01, 0.5, 5.0]), size=(2, m))
        d = ds.reci_terms(ry, rx)
        ry2, rx2 = ry.copy(), rx.copy()
        j = int(rng.integers(m))
        ry2[j], rx2[j] = rng.choice([0.0, 1e6, -3.0]), rng.choice([0.0, 1e6, 0.2])
        d2 = ds.reci_terms(ry2, rx2)
        assert abs(d.mean() - d2.mean()) <= sens_d * (1 + 1e-12)
        assert abs((d * d).mean() - (d2 * d2).mean()) <= sens_q * (1 + 1e-12)
    assert np.all(np.abs(ds.reci_terms(np.array([1e9, 0.0]), np.array([0.0, 1e9]))) <= C * C)


def test_released_difference_carries_laplace_noise_of_its_scale():
    """Fails if the noise on D is halved: scale 2 c^2 / (m (1 - share) epsilon), so the
    noise is within b ln 2 of the exact value half the time."""
    rng = np.random.default_rng(1)
    fit = fitted(*rng.normal(scale=0.3, size=(2, 200)))
    exact = ds.reci_terms(fit.res_y, fit.res_x).mean()
    runs, eps = 2000, 0.7
    b = ds.reci_sensitivities(200)[0] / ((1 - ds.RECI_SE_SHARE) * eps)
    noise = np.array([dr.release_reci_scores(fit, eps, SeededSampler(s), None).value[0][0] - exact
                      for s in range(runs)])
    assert abs(np.mean(np.abs(noise) <= b * np.log(2)) - 0.5) <= hoeffding(runs)


def calibration_trials(trials: int, m: int, epsilon: float, seed: int):
    """(probability, right) per trial: population differences Delta drawn around 0, test
    residuals with min(r^2, c^2) = c^2 s^2 U^2 (U uniform), so E d = c^2 (s_y^2 - s_x^2) / 3."""
    rng = np.random.default_rng(seed)
    probs, right = np.empty(trials), np.empty(trials, bool)
    for t in range(trials):
        s_x = rng.uniform(0.5, 0.9)
        delta = rng.uniform(-1, 1) * 4e-4
        s_y = np.sqrt(s_x ** 2 + 3 * delta / C ** 2)
        u = rng.uniform(size=(2, m)) * rng.choice([-1.0, 1.0], size=(2, m))
        fit = fitted(4 * C * s_y * u[0], 4 * C * s_x * u[1])
        ((d, q), (b_d, b_q), mm), _ = dr.release_reci_scores(fit, epsilon, SeededSampler(1000 * seed + t), None)
        probs[t] = ds.reci_agreement_probability(d, q, mm, 10**12, b_d, b_q)  # n >> m: the population
        right[t] = (d < 0) == (delta < 0)
    return probs, right


def test_reported_probability_is_calibrated_for_noise_and_sampling_error():
    """Of the decisions reported at p, about p are right (right: the released sign is the
    population sign). The probability is conservative by construction (Var(d) bounded by an
    upper estimate of E d^2), so a bin may be right more often than reported, never less."""
    probs, right = calibration_trials(3000, 400, 1.0, 0)
    edges = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0 + 1e-9)
    seen = 0
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (probs >= lo) & (probs < hi)
        if sel.sum() < 100:
            continue
        seen += 1
        tol = hoeffding(int(sel.sum()), events=len(edges) - 1)
        assert probs[sel].mean() - tol <= right[sel].mean() <= probs[sel].mean() + 0.08 + tol, (lo, sel.sum())
    assert seen >= 4
    assert abs(np.mean(probs) - np.mean(right)) <= 0.04 + hoeffding(probs.size)


def test_probability_below_the_threshold_is_undecided_at_no_extra_cost():
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-1, 1, (2, 400))  # independent: the two errors are about equal
    box = ((-1.0, 1.0), (-1.0, 1.0))
    kept, ledger_kept = dr.private_direction(x, y, epsilon=1.0, bounds=box, sampler=SeededSampler(0),
                                             rng=np.random.default_rng(0), abstain_below=0.5)
    strict, ledger_strict = dr.private_direction(x, y, epsilon=1.0, bounds=box, sampler=SeededSampler(0),
                                                 rng=np.random.default_rng(0), abstain_below=0.999)
    assert kept.direction in dr.DIRECTIONS and strict.direction == "undecided"
    assert kept.agreement_probability == strict.agreement_probability < 0.999 and kept.scores == strict.scores
    assert ledger_kept.total() == ledger_strict.total()
    with pytest.raises(ValueError, match="abstain_below must be in"):
        dr.private_direction(x, y, epsilon=1.0, bounds=box, sampler=SeededSampler(0),
                             rng=np.random.default_rng(0), abstain_below=0.4)


def test_estimator_exposes_the_probability_and_a_clear_pair_is_sure():
    rng = np.random.default_rng(4)
    x = rng.uniform(-2, 2, 3000)
    y = x ** 3 / 4 + 0.2 * rng.uniform(-1, 1, 3000)
    model = dr.PrivateANM(epsilon=1.0, random_state=0, bounds=((-2, 2), (-2.5, 2.5))).fit(x, y)
    assert model.score == "reci" and model.direction_ in dr.DIRECTIONS
    assert 0.5 <= model.agreement_probability_ <= 1.0 and model.causal_probability_sim_ is None
    kendall = dr.PrivateANM(epsilon=1.0, score="kendall", random_state=0, bounds=((-2, 2), (-2.5, 2.5))).fit(x, y)
    assert 0.5 <= kendall.causal_probability_sim_ < 1.0  # calibrated on the SIM families (test_direction_calibration.py)
    assert kendall.agreement_probability_ is None
    spearman = dr.PrivateANM(epsilon=1.0, score="spearman", random_state=0, bounds=((-2, 2), (-2.5, 2.5))).fit(x, y)
    assert spearman.agreement_probability_ is None and spearman.causal_probability_sim_ is None
    with pytest.warns(DeprecationWarning, match="agreement_probability_"):
        assert model.probability_ == model.agreement_probability_
    with pytest.warns(DeprecationWarning, match="agreement_probability"):
        assert model.result_.probability == model.agreement_probability_


def test_orientation_leaves_undecided_edges_undirected_within_the_share():
    rng = np.random.default_rng(5)
    data = dict(zip("abc", rng.uniform(-1, 1, (3, 600))))
    g = CPDAG(["a", "b", "c"], undirected=[("a", "b"), ("b", "c")])
    out, ledger = orient_by_direction(g, data, bounds=dict.fromkeys("abc", (-1.0, 1.0)), epsilon=1.0,
                                      sampler=SeededSampler(0), rng=np.random.default_rng(0), abstain_below=0.999)
    assert sorted(out.undirected_edges) == sorted(g.undirected_edges)
    assert len(ledger) == 2 and abs(ledger.total().epsilon - 1.0) < 1e-12


@pytest.mark.slow
def test_reported_probability_is_calibrated_at_more_trials_and_other_sizes():
    """The bigger version: 4,000 trials at each of (m, epsilon) = (100, 3) and (2,000, 0.3)."""
    for k, (m, eps) in enumerate(((100, 3.0), (2000, 0.3))):
        probs, right = calibration_trials(4000, m, eps, 10 + k)
        edges = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0 + 1e-9)
        for lo, hi in zip(edges[:-1], edges[1:]):
            sel = (probs >= lo) & (probs < hi)
            if sel.sum() >= 100:
                tol = hoeffding(int(sel.sum()), events=2 * (len(edges) - 1))
                assert probs[sel].mean() - tol <= right[sel].mean() <= probs[sel].mean() + 0.08 + tol, (m, lo)
