"""Dependence scores of the additive-noise direction test, their sensitivities, and the flip probabilities.

A score ``s(cause, residual)`` measures how dependent a putative cause is on the residual
of the regression of the putative effect on it; the direction with the smaller score wins.
Scores (``m`` test rows):

* ``"spearman"``: ``max(|rho_a(cause, |residual|)|, |rho_a(|cause|, |residual|)|)``, Spearman's
  rho with mid-ranks and no tie correction (rho-a, whose global bound holds on tied
  data too); the cause is on a scale centred by a public or training-only constant;
* ``"kendall"``: the same with Kendall's tau-a;
* ``"hsic"``: HSIC with Gaussian kernels of fixed bandwidths (values in (0, 1]);
* ``"iqr"``: ``log IQR(cause) + log IQR(residual)``, the spread (entropy proxy) score of
  Theorem 5;
* ``"reci"`` (the default; Bloebaum, Janzing, Washio, Shimizu, Schoelkopf, AISTATS 2018):
  the regression-error comparison, with cubic fits from the released training table
  (:func:`~privgraph.causal.direction.noisy_table.polynomial_from_table`). On the bounds-scaled data (the common scale [-2, 2]
  divided by its width 4: every value in a range of width 1) the direction whose regression
  leaves the smaller mean squared test residual wins. Each squared residual is clipped at
  ``RECI_CLIP ** 2`` (a fixed per-record map), and only the difference of the two errors is
  released, with a second moment that bounds its sampling error: see :func:`reci_terms`
  and :func:`reci_sensitivities`; the decision's agreement probability is
  :func:`reci_agreement_probability`. Unlike the dependence scores it does not need the noise to
  be independent of the cause, which is what the real pairs lack (docs/direction.md).

Each score is one class registered in :data:`SCORES` (:class:`Score`; :class:`LaplaceScore`
for those with a global test-set sensitivity): its statistic, sensitivity, charges and
release, the regression ``privacy="record"`` fits for it, its calibration map and its
refusals, read alike by the plan and the run. A new score is a subclass and one line
``SCORES.register(MyScore())``; the privacy modes are :mod:`privgraph.causal.direction.modes`.

Why not the text's literal ``rho(cause, residual)``: a least-squares fit leaves residuals
that are uncorrelated with the regressor in *both* directions, so that score is near 0
either way. In the anti-causal direction it is the residual's *spread* that depends on
the regressor (heteroscedasticity): ``|residual|`` exposes it, against the cause (a
monotone pattern) and against ``|cause|`` (a symmetric one). Non-private accuracy at
n = 1000 on the tuning pairs of ``benchmarks/bench_direction.py``: literal rho 0.73,
``|residual|`` alone 0.78, the maximum of both 0.92. Absolute values are per-record
transforms, and the maximum of two functions that each move by at most Delta moves by
at most Delta, so the rank sensitivities are unchanged.

Degenerate data (ties, constant columns) is valid input, with no refusal that one record
could flip, and every score is defined on it without a special case: tau-a counts a tied
pair as 0 (a constant column gives ``S = 0``), rho-a's centred mid-ranks of a constant
column are all 0, and HSIC's kernel matrix of a constant column is all ones, which the
centring sends to 0: each score is then 0, and there is no tie-corrected denominator
(tau-b, rho-b) that could vanish. The sensitivities hold on such data: tau-a's ``4/m``
bounds each of the replaced record's m - 1 sign terms, whatever their value in {-1, 0, 1};
rho-a's derivation bounds mid-ranks, which move by at most 1 under a replacement with or
without ties; HSIC's holds for any kernel values in [0, 1]. The IQR score goes through its
mechanism: an IQR of 0 has stability ``g = 0``, so propose-test-release answers bottom
("undecided") except with probability at most delta/2 per grid.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from dataclasses import dataclass
from typing import Callable

from privgraph.causal.direction.calibration import kendall_causal_probability
from privgraph.declarations import DIRECTION_SCORES
from privgraph.privacy import (
    Charge,
    Ledger,
    Neighbours,
    Release,
    laplace_charge,
    laplace_mechanism,
    laplace_scale,
    log_iqr_release,
    log_iqr_scale,
)
from privgraph.privacy.log_iqr import log_iqr_charge
from privgraph.registry import Registry
from privgraph.stats import hsic, kendall_tau_a_raw, spearman_rho_a_raw
from privgraph.stats.iqr import quartile_ranks
from privgraph.stats.sensitivity import (
    hsic_sensitivity_replace_one,
    kendall_tau_a_sensitivity_replace_one,
    spearman_rho_a_sensitivity_replace_one,
)
from privgraph.validation import InvalidInput

#: Fewest rows in each part (training and test) whatever the score: a public floor below which
#: a part's statistics are not defined usefully (a score on fewer than 10 test rows has fewer
#: than 45 pairs; a table row on fewer than 10 training rows is mostly empty bins).
MIN_PART_ROWS = 10
#: Largest Laplace scale allowed on a score (each score gets epsilon/2): at this scale Theorem 3
#: keeps a margin of 0.5 with probability 1 - e^-2 = 0.865; see :meth:`Score.min_test_rows`.
MAX_SCORE_NOISE = 0.25
#: The default score: the most accurate on the real pairs, non-private and at epsilon = 1
#: (benchmarks/bench_direction_real.py; docs/direction.md, "Which score").
DEFAULT_SCORE = "reci"
#: RECI: largest |residual| counted, on the unit-width scale (a public constant; tuned on the
#: Tuebingen pairs and SIM families, re-examined on them for issue 47, never on the held-out
#: pairs: docs/direction.md, "Tuning").
RECI_CLIP = 0.1
#: RECI: share of epsilon spent on the second moment that bounds the sampling error.
RECI_SE_SHARE = 0.2
#: Width of the common scale [-2, 2] (residuals are divided by it for RECI).
COMMON_WIDTH = 4.0
#: Absolute floating-point allowance added to the HSIC sensitivity (twice the 5e-10 rounding
#: bound of :func:`privgraph.stats.hsic.hsic` on 1-D samples).
HSIC_FLOAT_ALLOWANCE = 1e-9


def dependence(score: str, cause: np.ndarray, residual: np.ndarray, *, residual_bandwidth: float) -> float:
    """The dependence score between a putative cause and its residual (see module doc).

    The cause kernel has bandwidth 1 (causes are standardised); ``residual_bandwidth`` is
    the residual kernel's, fixed before the test data is seen.

    >>> rng = np.random.default_rng(0)
    >>> c = rng.normal(size=500)
    >>> dependence("kendall", c, rng.normal(size=500) * np.exp(c), residual_bandwidth=1.0) > 0.1
    True
    """
    return laplace_score(score, alternatives=" here").statistic(cause, residual, residual_bandwidth)


def sensitivity_on_test_set(score: str, m: int) -> float:
    """Global sensitivity of a Laplace score when one of m test records is replaced.

    Spearman: rho-a's ``18 (m - 1) / (m (m + 1))``, tighter than the text's 30/m
    (Theorem 2) and valid with ties. Kendall: ``4/m`` (Theorem 2, tight). HSIC:
    ``(16 m - 8) / (m - 1)^2`` (Theorem 4 as proven; the text's 12m - 11 is not) plus the
    floating-point allowance. Absolute values and the per-record map (x, y) -> (cause,
    residual) with a fixed regression function do not change them.

    >>> round(sensitivity_on_test_set("kendall", 400), 4), round(sensitivity_on_test_set("spearman", 400), 5)
    (0.01, 0.04478)
    """
    return test_set_score(score).sensitivity(m)


def hsic_training_sensitivity(m: int, residual_shift: float, residual_bandwidth: float) -> float:
    """Bound on the HSIC change when one *training* record changes every residual by <= beta.

    ``beta = residual_shift`` (:func:`privgraph.causal.direction.regression.stability_bound`). The
    test causes do not move, so K is fixed and ``HSIC - HSIC' = tr(K H (L - L') H) / (m-1)^2``.
    The Gaussian kernel ``exp(-t^2 / (2 h^2))`` is ``1 / (h sqrt(e))``-Lipschitz in t and
    ``t = r_i - r_j`` moves by at most ``2 beta``, so ``|L - L'|_ij <= 2 beta / (h sqrt(e))``,
    zero on the diagonal. By Cauchy-Schwarz and ``||H A H||_F <= ||A||_F`` (H is an
    orthogonal projection): ``|tr(K H D H)| <= ||K||_F ||D||_F <= m sqrt(m (m - 1)) 2 beta / (h sqrt(e))``.

    >>> round(hsic_training_sensitivity(1000, 0.01, 0.5), 5)
    0.0243
    """
    lip = 2.0 * residual_shift / (residual_bandwidth * math.sqrt(math.e))
    return m * math.sqrt(m * (m - 1.0)) * lip / (m - 1.0) ** 2 + HSIC_FLOAT_ALLOWANCE


def laplace_flip_free(margin: float, scale: float) -> float:
    """Theorem 3: ``P(p_xy < p_yx) = 1 - (gamma + 2 sigma) / (4 sigma) exp(-gamma / sigma)``.

    The probability that two independent Laplace(sigma) noises keep the order of two
    scores that differ by ``gamma >= 0`` (checked by simulation in the tests; it is
    ``1 - P(L1 - L2 > gamma)``, the difference of two Laplace variables having the tail
    ``(1/2 + gamma / (4 sigma)) exp(-gamma/sigma)``).

    >>> laplace_flip_free(0.0, 1.0)
    0.5
    >>> round(laplace_flip_free(3.0, 1.0), 4)
    0.9378
    """
    g = abs(margin) / scale
    return 1.0 - (g + 2.0) / 4.0 * math.exp(-g)


def iqr_flip_free(margin: float, scale: float) -> float:
    """Theorem 5 (2): the order of ``a + b`` and ``c + d`` kept under four Laplace(sigma) noises.

    ``1 - exp(-gamma/sigma) (48 s^3 + 33 s^2 g + 9 s g^2 + g^3) / (96 s^3)`` with
    ``g = gamma``, ``s = sigma``: the tail of a sum of two differences of Laplace
    variables (checked by simulation in the tests).

    >>> iqr_flip_free(0.0, 2.0)
    0.5
    >>> round(iqr_flip_free(5.0, 1.0), 4)
    0.9605
    """
    g = abs(margin) / scale
    return 1.0 - math.exp(-g) * (48.0 + 33.0 * g + 9.0 * g * g + g**3) / 96.0


def reci_terms(res_y: np.ndarray, res_x: np.ndarray, clip: float = RECI_CLIP) -> np.ndarray:
    """Per test record ``d_i = min(r_y,i^2, c^2) - min(r_x,i^2, c^2)`` on the unit-width scale.

    ``r_y = res_y / 4`` and ``r_x = res_x / 4`` are the two directions' residuals on the
    bounds-scaled data (the common scale [-2, 2] has width 4; under public bounds each value
    then lies in an interval of width 1). ``c = clip``. A negative mean of ``d`` favours
    X -> Y. Each ``d_i`` depends on its own test record and on the released regressions only
    (a fixed per-record map), and lies in ``[-c^2, c^2]`` whatever the data.

    >>> reci_terms(np.array([0.4, 4.0]), np.array([0.0, 0.0]), clip=0.3).round(4).tolist()
    [0.01, 0.09]
    """
    cap = clip * clip
    return (np.minimum((np.asarray(res_y) / COMMON_WIDTH) ** 2, cap)
            - np.minimum((np.asarray(res_x) / COMMON_WIDTH) ** 2, cap))


def reci_sensitivities(m: int, clip: float = RECI_CLIP) -> tuple[float, float]:
    """Replace-one sensitivities of the RECI statistics ``D = mean(d)`` and ``Q = mean(d^2)``.

    With ``d_i`` in ``[-c^2, c^2]`` (:func:`reci_terms`): replacing one of the m test records
    changes one term of each mean and nothing else (the regressions come from the released
    training table, or from the training part, which a test record is not in), so
    ``|D - D'| = |d_j - d'_j| / m <= 2 c^2 / m`` and, as ``d_j^2`` lies in ``[0, c^4]``,
    ``|Q - Q'| <= c^4 / m``. Both are tight (d_j from -c^2 to c^2). Without the clip each
    squared residual on the unit-width scale is in [0, 1] under public bounds and the
    bounds would be 2/m and 1/m; the clip cuts them by ``c^2`` and ``c^4``.

    >>> tuple(round(v, 6) for v in reci_sensitivities(100, clip=0.5))
    (0.005, 0.000625)
    """
    cap = clip * clip
    return 2.0 * cap / m, cap * cap / m


def reci_agreement_probability(d: float, q: float, m: int, n: int, scale_d: float, scale_q: float,
                               clip: float = RECI_CLIP) -> float:
    """The agreement probability: the chance that the noise-free score on this data points the same way.

    What it covers, and only that. The reference is the **noise-free score on this data**: the
    mean ``D_all`` of the same per-record terms ``d_i`` (:func:`reci_terms`, the same released
    regressions, the same clip) over **all n rows** of the data, with no privacy noise. The
    released ``D~`` differs from it by two errors: the test part's sampling (the test part is
    m of the n rows, drawn by the public split) and the Laplace noise ``L`` of scale
    ``scale_d``. This is the probability that ``D_all`` has the sign of ``D~``. It is NOT a
    probability that the direction is causal (whether the smaller regression error marks the
    cause is RECI's assumption; docs/direction.md measures how often it holds), and it does
    not cover the noise of the released regressions (they are the same in both).

    Derivation (post-processing of ``D~`` and ``Q~``). The test mean of m of n values drawn
    without replacement has ``Var = (1 - m/n) S^2 / m`` around ``D_all`` (S^2 the variance of
    the n terms; finite-population correction), about normal (central limit theorem). S^2 is
    bounded by the released second moment: ``S^2 <= mean(d^2)``, and ``Q~ + 3 scale_q``
    exceeds Q except with probability ``e^-3 / 2`` (the Laplace tail), clipped to the public
    range ``[0, c^4]``; so ``s^2 = (1 - m/n) min(max(Q~ + 3 scale_q, 0), c^4) / m`` bounds the
    sampling variance. With a flat prior on ``D_all``, the probability that it has the sign
    of ``D~`` is ``F(|D~|)``, F the CDF of ``N(0, s^2) + Laplace(b)``:

    ``F(t) = Phi(t/s) - 1/2 e^(s^2/(2b^2) - t/b) Phi(t/s - s/b) + 1/2 e^(s^2/(2b^2) + t/b) Phi(-t/s - s/b)``

    (the normal-Laplace law; evaluated in log space). The calibration of that claim is
    checked on simulated data in ``tests/causal/test_direction_agreement.py``.

    >>> round(reci_agreement_probability(0.0, 0.01, 100, 200, 0.001, 0.001), 3)
    0.5
    >>> reci_agreement_probability(0.05, 0.01, 1000, 2000, 0.001, 0.0001) > 0.99
    True
    """
    t, b = abs(d), max(scale_d, 1e-300)
    var = (1.0 - m / n) * min(max(q + 3.0 * scale_q, 0.0), clip ** 4) / m
    s = math.sqrt(max(var, 0.0))
    if s == 0.0:
        return 1.0 - 0.5 * math.exp(-t / b)
    r = s / b
    lower = 0.5 * math.exp(0.5 * r * r - t / b + log_ndtr(t / s - r))
    upper = 0.5 * math.exp(min(0.5 * r * r + t / b + log_ndtr(-t / s - r), 700.0))
    return float(min(max(math.exp(log_ndtr(t / s)) - lower + upper, 0.5), 1.0))


def single_laplace_flip_free(margin: float, scale: float) -> float:
    """The order of a released difference and 0 kept under one Laplace(sigma) noise: ``1 - e^(-g/s) / 2``.

    >>> single_laplace_flip_free(0.0, 1.0), round(single_laplace_flip_free(2.0, 1.0), 4)
    (0.5, 0.9323)
    """
    return 1.0 - 0.5 * math.exp(-abs(margin) / scale)


def release_laplace_scores(raw, sensitivity: float, epsilon: float, sampler, budget) -> Release:
    """Both scores with Laplace noise, epsilon/2 each; the value is (scores, noise scale).

    Replace-one: one test record moves each score by at most ``sensitivity`` (the score's
    test-set bound, :meth:`LaplaceScore.sensitivity`, or under train+test the larger of it and
    the training part's, :meth:`~privgraph.causal.direction.modes.Mode.sensitivity`), so each
    release is (epsilon/2)-DP and the two compose to epsilon.

    >>> from privgraph.privacy import SeededSampler
    >>> (scores, scale), ledger = release_laplace_scores((0.1, 0.3), 0.01, 1.0, SeededSampler(0), None)
    >>> len(scores), round(scale, 3), ledger.total().epsilon
    (2, 0.02, 1.0)
    """
    ledger, noisy = Ledger(), []
    for value in raw:
        rel = laplace_mechanism(value, epsilon=epsilon / 2, sensitivity=sensitivity,
                                neighbours=Neighbours.REPLACE_ONE, sampler=sampler, budget=budget)
        noisy.append(rel.value)
        ledger = ledger + rel.ledger
    return Release((tuple(noisy), laplace_scale(epsilon / 2, sensitivity)), ledger)


def release_iqr_scores(fit, epsilon, delta, sampler, budget) -> Release:
    """The four log-IQRs (x, y and both residuals: one test record enters all four).

    Each is :func:`~privgraph.privacy.log_iqr.log_iqr_release` at (epsilon/4, delta/4) under
    replace-one (propose-test-release on the log-IQR, whose local sensitivity it tests);
    the ledger composes the four charges. The value is ``(scores or None, noise scale)``.

    >>> from privgraph.privacy import SeededSampler
    >>> from privgraph.causal.direction.data import FittedPair
    >>> v = np.random.default_rng(0).normal(size=(4, 5000))
    >>> fit = FittedPair(*v, bandwidths=(1.0, 1.0), shift=0.0)
    >>> (scores, scale), ledger = release_iqr_scores(fit, 40.0, 1e-6, SeededSampler(0), None)
    >>> scores is not None, round(scale, 2), tuple(ledger.total()), len(ledger)
    (True, 0.3, (40.0, 1e-06), 4)
    """
    ranks = quartile_ranks(fit.x.size)
    ledger, logs = Ledger(), []
    for values in (fit.x, fit.res_y, fit.y, fit.res_x):
        rel = log_iqr_release(values, ranks=ranks, epsilon=epsilon / 4, delta=delta / 4,
                              neighbours=Neighbours.REPLACE_ONE, sampler=sampler, budget=budget)
        logs.append(rel.value)
        ledger = ledger + rel.ledger
    scores = None if any(v is None for v in logs) else (logs[0] + logs[1], logs[2] + logs[3])
    return Release((scores, log_iqr_scale(epsilon / 4)), ledger)


def release_reci_scores(fit, epsilon: float, sampler, budget) -> Release:
    """RECI: the clipped error difference D at ``(1 - RECI_SE_SHARE) epsilon``, its second
    moment Q at ``RECI_SE_SHARE epsilon`` (Laplace, replace-one, sensitivities
    :func:`reci_sensitivities`; one test record enters both, so they compose to epsilon).
    The value is ``((D~, Q~), (scale_D, scale_Q), m)``.

    >>> from privgraph.privacy import SeededSampler
    >>> from privgraph.causal.direction.data import FittedPair
    >>> v = np.random.default_rng(0).normal(size=(4, 500))
    >>> fit = FittedPair(v[0], v[1], 0.1 * v[2], v[3], bandwidths=(1.0, 1.0), shift=0.0)
    >>> ((d, q), scales, m), ledger = release_reci_scores(fit, 1.0, SeededSampler(0), None)
    >>> d < 0, m, round(ledger.total().epsilon, 12), len(ledger)
    (True, 500, 1.0, 2)
    """
    m = fit.x.size
    terms = reci_terms(fit.res_y, fit.res_x)
    sens_d, sens_q = reci_sensitivities(m)
    ledger, values, scales = Ledger(), [], []
    for stat, sens, eps in ((float(terms.mean()), sens_d, epsilon * (1 - RECI_SE_SHARE)),
                            (float((terms * terms).mean()), sens_q, epsilon * RECI_SE_SHARE)):
        rel = laplace_mechanism(stat, epsilon=eps, sensitivity=sens, neighbours=Neighbours.REPLACE_ONE,
                                sampler=sampler, budget=budget)
        values.append(float(rel.value))
        scales.append(laplace_scale(eps, sens))
        ledger = ledger + rel.ledger
    return Release((tuple(values), tuple(scales), m), ledger)


@dataclass(frozen=True)
class Released:
    """What a score's release gives the decision (:func:`~privgraph.causal.direction.decide`):
    the private scores ``(s(X->Y), s(Y->X))`` (None: no answer), the noise scale, the flip
    probability's function of (margin, scale), and the probability the score carries, if any."""

    scores: tuple | None
    scale: float
    flip_free: Callable[[float, float], float]
    agreement_probability: float | None = None
    causal_probability_sim: float | None = None


class Score:
    """A direction score as a registered stage: what the plan
    (:func:`~privgraph.causal.direction.estimator.direction_charges`) and the run
    (:func:`~privgraph.causal.direction.private_direction`) read of it, so that they cannot
    disagree. A new score is one subclass and one line ``SCORES.register(MyScore())`` (the
    command line's ``--score`` then accepts its name: :data:`~privgraph.declarations.DIRECTION_SCORES`).

    ``charges`` and ``release`` are the test part's releases (the privacy mode decides what
    else is charged: :mod:`privgraph.causal.direction.modes`); ``release`` must spend exactly
    ``charges``.
    """

    #: The registry's name (``score=``).
    name = ""
    #: The regression ``privacy="record"`` fits from the released training table:
    #: ``"binned"`` (smoothed bin means) or ``"polynomial"``
    #: (:func:`~privgraph.causal.direction.noisy_table.released_fit`).
    fit = "binned"
    #: Whether the score spends delta; the others are pure (their releases' delta is 0).
    uses_delta = False
    #: Whether one training record's effect on the score is bounded (``privacy="train+test"``).
    training_stable = False

    def check(self, delta: float) -> None:
        """The score's own refusals, of public inputs only (none by default)."""

    def spent_delta(self, delta: float) -> float:
        """The delta the releases spend: ``delta`` if the score uses it, else 0.

        >>> SCORES["iqr"].spent_delta(1e-6), SCORES["kendall"].spent_delta(1e-6)
        (1e-06, 0.0)
        """
        return delta if self.uses_delta else 0.0

    def min_test_rows(self, epsilon: float) -> int:
        """The fewest test rows a decision accepts at ``epsilon`` (public; see
        :func:`~privgraph.causal.direction.data.min_test_rows`): :data:`MIN_PART_ROWS` unless
        the score says otherwise."""
        return MIN_PART_ROWS

    def charges(self, m: int, epsilon: float, delta: float, *, sensitivity: Callable[[], float]) -> tuple[Charge, ...]:
        """The charges of :meth:`release` on ``m`` test rows (replace-one); ``sensitivity()``:
        the Laplace sensitivity under the privacy mode, for the scores that use one."""
        raise NotImplementedError

    def release(self, fit, n: int, mode, epsilon: float, delta: float, sampler, budget) -> Release:
        """The test part's private scores on ``fit`` (a
        :class:`~privgraph.causal.direction.data.FittedPair`; ``n``: all rows), as
        ``Release(Released, ledger)``."""
        raise NotImplementedError


class LaplaceScore(Score):
    """A dependence score ``s(cause, residual)`` with a global test-set sensitivity, both
    directions' scores released by the Laplace mechanism at epsilon/2 each
    (:func:`release_laplace_scores`)."""

    def statistic(self, cause: np.ndarray, residual: np.ndarray, residual_bandwidth: float) -> float:
        """The non-private score (see the module docstring)."""
        raise NotImplementedError

    def sensitivity(self, m: int) -> float:
        """Global sensitivity when one of ``m`` test records is replaced (its derivation in the subclass)."""
        raise NotImplementedError

    def min_test_rows(self, epsilon: float) -> int:
        """The smallest m whose score noise ``2 Delta(m) / epsilon`` is at most :data:`MAX_SCORE_NOISE`
        (the sensitivities decrease in m); :data:`MIN_PART_ROWS` for a non-private epsilon.

        >>> SCORES["kendall"].min_test_rows(1.0), SCORES["kendall"].min_test_rows(0.5)
        (32, 64)
        """
        if math.isinf(epsilon):
            return MIN_PART_ROWS
        m = MIN_PART_ROWS
        while 2.0 * self.sensitivity(m) / epsilon > MAX_SCORE_NOISE:
            m = m * 2
        lo = m // 2
        while lo + 1 < m:  # the smallest m in (lo, m] that passes (the sensitivities decrease in m)
            mid = (lo + m) // 2
            lo, m = (lo, mid) if 2.0 * self.sensitivity(mid) / epsilon <= MAX_SCORE_NOISE else (mid, m)
        return max(m, MIN_PART_ROWS)

    def charges(self, m, epsilon, delta, *, sensitivity):
        """Two Laplace charges at epsilon/2 and the mode's sensitivity.

        >>> [c.epsilon for c in SCORES["kendall"].charges(400, 1.0, 0.0, sensitivity=lambda: 0.01)]
        [0.5, 0.5]
        """
        return (laplace_charge(epsilon / 2, sensitivity(), Neighbours.REPLACE_ONE),) * 2

    def raw(self, fit) -> tuple[float, float]:
        """The non-private scores ``(s(X->Y), s(Y->X))`` on ``fit`` (never released as is)."""
        return (self.statistic(fit.x, fit.res_y, fit.bandwidths[0]),
                self.statistic(fit.y, fit.res_x, fit.bandwidths[1]))

    def release(self, fit, n, mode, epsilon, delta, sampler, budget):
        sens = mode.sensitivity(self, fit.x.size, fit.shift, fit.bandwidths)
        (scores, scale), ledger = release_laplace_scores(self.raw(fit), sens, epsilon, sampler, budget)
        causal = self.causal_probability(scores, fit.x.size, scale, epsilon, mode)
        return Release(Released(scores, scale, laplace_flip_free, causal_probability_sim=causal), ledger)

    def causal_probability(self, scores, m: int, scale: float, epsilon: float, mode) -> float | None:
        """A calibrated probability that the direction is causal, where the score has one (post-processing)."""
        return None


class RankScore(LaplaceScore):
    """``max(|r(cause, |residual|)|, |r(|cause|, |residual|)|)`` for a rank correlation r."""

    rank = staticmethod(kendall_tau_a_raw)

    def statistic(self, cause, residual, residual_bandwidth):
        spread = np.abs(residual)
        return max(abs(self.rank(cause, spread)), abs(self.rank(np.abs(cause), spread)))


class Spearman(RankScore):
    """Spearman's rho-a of the cause and the residual's spread."""

    name = "spearman"
    rank = staticmethod(spearman_rho_a_raw)

    def sensitivity(self, m):
        """rho-a's ``18 (m - 1) / (m (m + 1))``, tighter than the text's 30/m (Theorem 2) and valid
        with ties (mid-ranks move by at most 1 under a replacement); absolute values and the
        per-record map to (cause, residual) with a fixed regression do not change it.

        >>> round(SCORES["spearman"].sensitivity(400), 5)
        0.04478
        """
        return spearman_rho_a_sensitivity_replace_one(m)


class Kendall(RankScore):
    """Kendall's tau-a of the cause and the residual's spread; under ``privacy="record"`` with a
    probability that the direction is causal, calibrated on the SIM families."""

    name = "kendall"
    rank = staticmethod(kendall_tau_a_raw)
    #: The privacy modes the calibration map was fitted under (:mod:`privgraph.causal.direction.calibration`).
    calibrated_modes = ("record",)

    def sensitivity(self, m):
        """tau-a's ``4/m`` (Theorem 2, tight): each of the replaced record's m - 1 sign terms in
        {-1, 0, 1} moves by at most 2, over the m (m - 1) / 2 pairs.

        >>> SCORES["kendall"].sensitivity(400)
        0.01
        """
        return kendall_tau_a_sensitivity_replace_one(m)

    def causal_probability(self, scores, m, scale, epsilon, mode):
        if mode.name not in self.calibrated_modes or scores is None:  # the map's setting (calibration.py)
            return None
        return kendall_causal_probability(scores[1] - scores[0], m, scale, epsilon)


class Hsic(LaplaceScore):
    """HSIC with Gaussian kernels of fixed bandwidths; the one score with a training-record bound."""

    name = "hsic"
    training_stable = True

    def statistic(self, cause, residual, residual_bandwidth):
        return hsic(cause, residual, bandwidth_x=1.0, bandwidth_y=residual_bandwidth)

    def sensitivity(self, m):
        """``(16 m - 8) / (m - 1)^2`` (Theorem 4 as proven; the text's 12m - 11 is not) plus the
        floating-point allowance :data:`HSIC_FLOAT_ALLOWANCE`.

        >>> round(SCORES["hsic"].sensitivity(400), 5)
        0.04015
        """
        return hsic_sensitivity_replace_one(m) + HSIC_FLOAT_ALLOWANCE

    def training_sensitivity(self, m: int, shift: float, bandwidth: float) -> float:
        """One training record's bound: :func:`hsic_training_sensitivity`."""
        return hsic_training_sensitivity(m, shift, bandwidth)


class Iqr(Score):
    """``log IQR(cause) + log IQR(residual)``, four log-IQRs released by propose-test-release
    (Theorem 5, :func:`release_iqr_scores`); the one score that spends delta."""

    name = "iqr"
    uses_delta = True

    def check(self, delta):
        """Propose-test-release needs a delta in (0, 1).

        >>> SCORES["iqr"].check(0.0)
        Traceback (most recent call last):
        ...
        privgraph.validation.InvalidInput: the IQR score needs 0 < delta < 1, got 0.0
        """
        if not (0 < delta < 1):
            raise InvalidInput(f"the IQR score needs 0 < delta < 1, got {delta!r}")

    def charges(self, m, epsilon, delta, *, sensitivity):
        """Four log-IQR charges at (epsilon/4, delta/4).

        >>> len(SCORES["iqr"].charges(400, 1.0, 1e-6, sensitivity=None))
        4
        """
        return (log_iqr_charge(epsilon / 4, delta / 4),) * 4

    def release(self, fit, n, mode, epsilon, delta, sampler, budget):
        (scores, scale), ledger = release_iqr_scores(fit, epsilon, delta, sampler, budget)
        return Release(Released(scores, scale, iqr_flip_free), ledger)


class Reci(Score):
    """RECI, the regression-error comparison (the default): the clipped error difference and its
    second moment (:func:`release_reci_scores`), with the agreement probability."""

    name = "reci"
    fit = "polynomial"

    def min_test_rows(self, epsilon):
        """``m >= 2 / ((1 - share) epsilon MAX_SCORE_NOISE)``: the noise on D at most
        :data:`MAX_SCORE_NOISE` of its range (:func:`~privgraph.causal.direction.data.min_test_rows`).

        >>> SCORES["reci"].min_test_rows(1.0), SCORES["reci"].min_test_rows(0.1)
        (10, 100)
        """
        if math.isinf(epsilon):
            return MIN_PART_ROWS
        return max(MIN_PART_ROWS, math.ceil(2.0 / ((1 - RECI_SE_SHARE) * epsilon * MAX_SCORE_NOISE) - 1e-9))

    def charges(self, m, epsilon, delta, *, sensitivity):
        """D's and Q's Laplace charges at their sensitivities :func:`reci_sensitivities`.

        >>> [round(c.epsilon, 2) for c in SCORES["reci"].charges(400, 1.0, 0.0, sensitivity=None)]
        [0.8, 0.2]
        """
        sens_d, sens_q = reci_sensitivities(m)
        ro = Neighbours.REPLACE_ONE
        return (laplace_charge(epsilon * (1 - RECI_SE_SHARE), sens_d, ro),
                laplace_charge(epsilon * RECI_SE_SHARE, sens_q, ro))

    def release(self, fit, n, mode, epsilon, delta, sampler, budget):
        ((d, q), (scale_d, scale_q), m), ledger = release_reci_scores(fit, epsilon, sampler, budget)
        agreement = reci_agreement_probability(d, q, m, n, scale_d, scale_q)
        return Release(Released((d / 2, -d / 2), scale_d, single_laplace_flip_free, agreement_probability=agreement),
                       ledger)


#: The scores by name (:mod:`privgraph.registry`: registering one here adds its name to
#: :data:`privgraph.declarations.DIRECTION_SCORES`, the ``score`` parameter's choices).
SCORES = Registry(DIRECTION_SCORES)
SCORES.register(Spearman())
SCORES.register(Kendall())
SCORES.register(Hsic())
SCORES.register(Iqr())
SCORES.register(Reci())


def laplace_score(score: str, *, alternatives: str = "") -> LaplaceScore:
    """The registered Laplace score ``score``, or InvalidInput naming those there are.

    >>> laplace_score("iqr")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: score must be one of ('spearman', 'kendall', 'hsic'), got 'iqr'
    """
    found = SCORES.get(score) if isinstance(score, str) else None
    if not isinstance(found, LaplaceScore):
        names = tuple(name for name, s in SCORES.items() if isinstance(s, LaplaceScore))
        raise InvalidInput(f"score must be one of {names}{alternatives}, got {score!r}")
    return found


def test_set_score(score: str) -> LaplaceScore:
    """The registered score ``score`` if it has a global sensitivity on the test set, else InvalidInput.

    >>> test_set_score("reci")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: score 'reci' has no global sensitivity on the test set
    """
    found = SCORES.get(score) if isinstance(score, str) else None
    if not isinstance(found, LaplaceScore):
        raise InvalidInput(f"score {score!r} has no global sensitivity on the test set")
    return found
