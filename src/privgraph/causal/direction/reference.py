"""The non-private reference: ANM-pHSIC of Mooij et al. (JMLR 17(32), 2016), the published ANM level.

NOT private: a baseline to measure the private test against, never a release. The
configuration is the paper's best additive-noise method on real pairs (about 63% weighted
accuracy on CauseEffectPairs), as we read it:

* no split: both regressions are fitted on the data and the residuals are tested on the
  same rows;
* at most ``max_rows`` rows (default 1,000), drawn uniformly at random without
  replacement from ``rng`` when a pair has more (the paper subsamples large pairs for the
  O(n^3) Gaussian process);
* each column standardised (mean 0, standard deviation 1; a constant column stays 0);
* Gaussian-process regression, squared-exponential kernel plus white noise, with the three
  hyperparameters chosen by maximising the marginal likelihood (ML-II, L-BFGS-B from
  signal variance 1, lengthscale 1, noise variance 0.1; the bounds of causal-learn's and
  scikit-learn's usual setup): :func:`fit_gaussian_process`;
* HSIC between the putative cause and its residual, Gaussian kernels of median-heuristic
  width, and the p-value of the gamma approximation to its null law (Gretton et al. 2008):
  :func:`hsic_gamma_log_pvalue`;
* the direction with the larger p-value wins. p-values of both directions often underflow
  to 0 at a few hundred rows, so they are compared on the log scale (``gamma.logsf``); an
  exact tie goes to a fair coin from ``rng`` (public randomness).

Rows where either value is missing or non-finite are dropped (a non-private convention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import minimize
from scipy.stats import gamma

from privgraph.causal.direction.data import validate_pair
from privgraph.stats.hsic import centred
from privgraph.threads import single_threaded_blas
from privgraph.validation import InvalidInput

#: Most rows the reference uses per pair (a uniform subsample beyond; O(rows^3) per fit).
MAX_REFERENCE_ROWS = 1000
#: Fewest finite rows: the gamma approximation's variance has a factor (m - 4)(m - 5).
MIN_REFERENCE_ROWS = 6
#: log-hyperparameter bounds: signal variance, lengthscale, noise variance (on standardised data).
LOG_BOUNDS = ((math.log(1e-3), math.log(1e3)), (math.log(1e-2), math.log(1e2)), (math.log(1e-5), math.log(1e1)))
#: Starting point of the marginal-likelihood search.
LOG_START = (0.0, 0.0, math.log(0.1))


@dataclass(frozen=True)
class ReferenceDecision:
    """The reference's answer: the direction and both log p-values (larger wins)."""

    direction: str
    log_p_values: dict
    rows: int


@dataclass(frozen=True)
class GaussianProcess:
    """A fitted GP regression of a standardised effect on a standardised cause."""

    inputs: np.ndarray
    weights: np.ndarray  # K^-1 y
    signal: float  # signal variance
    lengthscale: float
    noise: float  # noise variance

    def predict(self, v) -> np.ndarray:
        """Posterior mean at ``v``.

        >>> gp = fit_gaussian_process(np.linspace(-2, 2, 60), np.sin(np.linspace(-2, 2, 60)))
        >>> float(np.abs(gp.predict([0.5]) - np.sin(0.5)).max()) < 0.05
        True
        """
        d2 = np.square(np.asarray(v, dtype=np.float64)[:, None] - self.inputs[None, :])
        return self.signal * np.exp(-0.5 * d2 / self.lengthscale**2) @ self.weights


def anm_reference(x, y, *, rng: np.random.Generator, max_rows: int = MAX_REFERENCE_ROWS) -> ReferenceDecision:
    """ANM-pHSIC: fit both ways by GP regression, keep the direction whose residual looks independent.

    Parameters
    ----------
    x, y : array_like
        The pair (numeric, same length). Non-finite rows are dropped.
    rng : numpy.random.Generator
        Public randomness: the subsample (when more than ``max_rows`` rows) and the coin of
        an exact tie.
    max_rows : int
        Most rows used (a uniform subsample beyond).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-2, 2, 150)
    >>> y = np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, 150)
    >>> anm_reference(x, y, rng=np.random.default_rng(1)).direction
    'x->y'
    """
    zx, zy = reference_rows(x, y, rng=rng, max_rows=max_rows)
    with single_threaded_blas():  # once per pair: the fits are many small solves
        log_p = {"x->y": direction_log_pvalue(zx, zy), "y->x": direction_log_pvalue(zy, zx)}
    if log_p["x->y"] == log_p["y->x"]:
        direction = "x->y" if rng.random() < 0.5 else "y->x"
    else:
        direction = max(log_p, key=log_p.get)
    return ReferenceDecision(direction, log_p, int(zx.size))


def reference_rows(x, y, *, rng: np.random.Generator, max_rows: int = MAX_REFERENCE_ROWS):
    """The rows the reference uses: finite ones, at most ``max_rows`` drawn from ``rng``, standardised.

    >>> zx, zy = reference_rows(np.arange(10.0), [1.0] * 9 + [np.nan], rng=np.random.default_rng(0), max_rows=6)
    >>> zx.size, float(zy.std())
    (6, 0.0)
    """
    if int(max_rows) < MIN_REFERENCE_ROWS:
        raise InvalidInput(f"max_rows must be at least {MIN_REFERENCE_ROWS}, got {max_rows!r}")
    x, y = validate_pair(x, y, min_rows=0)
    keep = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    if keep.size < MIN_REFERENCE_ROWS:
        raise InvalidInput(f"the reference needs {MIN_REFERENCE_ROWS} rows with both values finite, got {keep.size}")
    if keep.size > max_rows:
        keep = np.sort(rng.choice(keep, size=int(max_rows), replace=False))
    return standardise(x[keep]), standardise(y[keep])


def standardise(v: np.ndarray) -> np.ndarray:
    """Mean 0 and standard deviation 1 (a constant column maps to 0).

    >>> standardise(np.array([1.0, 3.0])).tolist(), standardise(np.array([2.0, 2.0])).tolist()
    ([-1.0, 1.0], [0.0, 0.0])
    """
    spread = float(v.std())
    return (v - v.mean()) / (spread if spread > 0 else 1.0)


def direction_log_pvalue(cause: np.ndarray, effect: np.ndarray) -> float:
    """log p-value of HSIC(cause, effect - GP fit of effect on cause) on the same rows.

    >>> c = np.linspace(-2, 2, 200)
    >>> direction_log_pvalue(c, np.sin(c) + 0.1 * np.cos(37 * c)) > direction_log_pvalue(np.sin(c), c) - 1e-9
    True
    """
    residual = effect - fit_gaussian_process(cause, effect).predict(cause)
    return hsic_gamma_log_pvalue(cause, residual)


def fit_gaussian_process(cause: np.ndarray, effect: np.ndarray) -> GaussianProcess:
    """GP regression with squared-exponential + white-noise kernel, hyperparameters by ML-II.

    Maximises the log marginal likelihood over (log signal variance, log lengthscale, log
    noise variance) within :data:`LOG_BOUNDS` by L-BFGS-B with the analytic gradient,
    started at :data:`LOG_START` (one start, as scikit-learn's default).

    >>> c = np.linspace(-2, 2, 100)
    >>> gp = fit_gaussian_process(c, 0.5 * c)
    >>> round(float(gp.predict([1.0])[0]), 2)
    0.5
    """
    cause, effect = np.asarray(cause, dtype=np.float64), np.asarray(effect, dtype=np.float64)
    d2 = np.square(cause[:, None] - cause[None, :])
    best = minimize(negative_log_marginal_likelihood, np.array(LOG_START), args=(d2, effect), jac=True,
                    method="L-BFGS-B", bounds=LOG_BOUNDS)
    signal, lengthscale, noise = np.exp(best.x)
    gram = signal * np.exp(-0.5 * d2 / lengthscale**2)
    gram[np.diag_indices_from(gram)] += noise
    return GaussianProcess(cause, _solve_psd(gram, effect), float(signal), float(lengthscale), float(noise))


def negative_log_marginal_likelihood(log_params: np.ndarray, d2: np.ndarray, y: np.ndarray):
    """``-log p(y | theta)`` of the GP and its gradient in the log-hyperparameters.

    ``0.5 y' K^-1 y + sum log diag(chol K) + n/2 log 2 pi``; the gradient is
    ``-0.5 tr((a a' - K^-1) dK/dtheta)`` with ``a = K^-1 y``.

    >>> d2 = np.square(np.subtract.outer([0.0, 1.0], [0.0, 1.0]))
    >>> value, grad = negative_log_marginal_likelihood(np.zeros(3), d2, np.array([0.3, -0.2]))
    >>> grad.shape
    (3,)
    """
    signal, lengthscale, noise = np.exp(log_params)
    shape = np.exp(-0.5 * d2 / lengthscale**2)
    gram = signal * shape
    gram[np.diag_indices_from(gram)] += noise
    try:
        factor = cho_factor(gram, lower=True)
    except np.linalg.LinAlgError:  # numerically singular: a large value steers the search away
        return 1e25, np.zeros(3)
    alpha = cho_solve(factor, y)
    inverse = cho_solve(factor, np.eye(y.size))
    inner = np.outer(alpha, alpha) - inverse
    d_signal = signal * shape
    d_length = d_signal * d2 / lengthscale**2
    grad = -0.5 * np.array([np.sum(inner * d_signal), np.sum(inner * d_length), noise * np.trace(inner)])
    value = 0.5 * y @ alpha + np.log(np.diag(factor[0])).sum() + 0.5 * y.size * math.log(2 * math.pi)
    return float(value), grad


def _solve_psd(gram: np.ndarray, y: np.ndarray) -> np.ndarray:
    return cho_solve(cho_factor(gram, lower=True), y)


def median_width(v: np.ndarray) -> float:
    """Gretton's median heuristic: ``sqrt(1/2) median |v_i - v_j|`` over pairs i < j (1 if that is 0).

    >>> round(median_width(np.array([0.0, 1.0, 3.0])), 4)
    1.4142
    """
    diffs = np.abs(v[:, None] - v[None, :])[np.triu_indices(v.size, 1)]
    med = float(np.median(diffs)) if diffs.size else 0.0
    return math.sqrt(0.5) * med if med > 0 else 1.0


def hsic_gamma_log_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """log p-value of the HSIC independence test with the gamma approximation (Gretton et al. 2008).

    Gaussian kernels ``exp(-d^2 / (2 w^2))`` with median-heuristic widths
    (:func:`median_width`). The statistic is ``m HSIC_b = tr(K~ L~) / m`` with centred Gram
    matrices; its null law is approximated by a gamma law matching the null mean
    ``(1 + mu_x mu_y - mu_x - mu_y) / m`` and variance
    ``72 (m-4)(m-5) / (m (m-1)(m-2)(m-3)) * mean_{i != j} (K~_ij L~_ij / 6)^2`` (the
    formulas of Gretton's ``hsicTestGamma``).

    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(size=300)
    >>> hsic_gamma_log_pvalue(a, rng.normal(size=300)) > math.log(0.001) > hsic_gamma_log_pvalue(a, a ** 2)
    True
    """
    m = a.size
    k, l_ = _gram(a), _gram(b)
    kc, lc = centred(k), centred(l_)
    statistic = float(np.sum(kc * lc)) / m
    cross = np.square(kc * lc / 6.0)
    var = (cross.sum() - np.trace(cross)) / (m * (m - 1.0))
    var *= 72.0 * (m - 4.0) * (m - 5.0) / (m * (m - 1.0) * (m - 2.0) * (m - 3.0))
    mu_x = (k.sum() - np.trace(k)) / (m * (m - 1.0))
    mu_y = (l_.sum() - np.trace(l_)) / (m * (m - 1.0))
    mean = (1.0 + mu_x * mu_y - mu_x - mu_y) / m
    if not (var > 0 and mean > 0):  # a constant column: no evidence of dependence
        return 0.0
    return float(gamma.logsf(statistic, a=mean**2 / var, scale=var * m / mean))


def _gram(v: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * np.square(v[:, None] - v[None, :]) / median_width(v) ** 2)
