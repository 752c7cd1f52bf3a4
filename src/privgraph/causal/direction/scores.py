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

from privgraph.stats import hsic, kendall_tau_a_raw, spearman_rho_a_raw
from privgraph.stats.sensitivity import (
    hsic_sensitivity_replace_one,
    kendall_tau_a_sensitivity_replace_one,
    spearman_rho_a_sensitivity_replace_one,
)
from privgraph.validation import InvalidInput, one_of

#: Scores with a global sensitivity on the test set (released by the Laplace mechanism).
LAPLACE_SCORES = ("spearman", "kendall", "hsic")
#: Every score.
SCORES = LAPLACE_SCORES + ("iqr", "reci")
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
    one_of("score", score, LAPLACE_SCORES, alternatives=" here")
    if score == "hsic":
        return hsic(cause, residual, bandwidth_x=1.0, bandwidth_y=residual_bandwidth)
    rank = spearman_rho_a_raw if score == "spearman" else kendall_tau_a_raw
    spread = np.abs(residual)
    return max(abs(rank(cause, spread)), abs(rank(np.abs(cause), spread)))


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
    if score == "spearman":
        return spearman_rho_a_sensitivity_replace_one(m)
    if score == "kendall":
        return kendall_tau_a_sensitivity_replace_one(m)
    if score == "hsic":
        return hsic_sensitivity_replace_one(m) + HSIC_FLOAT_ALLOWANCE
    raise InvalidInput(f"score {score!r} has no global sensitivity on the test set")


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
