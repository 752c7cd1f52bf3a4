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
  Theorem 5.

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

from privgraph.stats import hsic, kendall_tau_a_raw, spearman_rho_a_raw
from privgraph.stats.sensitivity import (
    hsic_sensitivity_replace_one,
    kendall_tau_a_sensitivity_replace_one,
    spearman_rho_a_sensitivity_replace_one,
)

#: Scores with a global sensitivity on the test set (released by the Laplace mechanism).
LAPLACE_SCORES = ("spearman", "kendall", "hsic")
#: Every score.
SCORES = LAPLACE_SCORES + ("iqr",)
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
    if score in ("spearman", "kendall"):
        rank = spearman_rho_a_raw if score == "spearman" else kendall_tau_a_raw
        spread = np.abs(residual)
        return max(abs(rank(cause, spread)), abs(rank(np.abs(cause), spread)))
    if score == "hsic":
        return hsic(cause, residual, bandwidth_x=1.0, bandwidth_y=residual_bandwidth)
    raise ValueError(f"score must be one of {LAPLACE_SCORES} here, got {score!r}")


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
    raise ValueError(f"score {score!r} has no global sensitivity on the test set")


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
