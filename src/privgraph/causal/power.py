"""The smallest effect a level-0 test can detect, predicted from public facts only: say before
spending when the answer will be empty, and after a run that its graph is uninformative.

A private test adds noise to its statistic; when that noise is large against the effect, the
test answers "independent" whatever the data, and an empty graph says nothing. This module
predicts, for each test family, the smallest marginal effect (level 0: no conditioning set)
that the test detects with probability :data:`POWER` at its level alpha, from n (public under
replace-one), d, epsilon, delta, the domain and the method's noise calibration, never from a
data value. "Detects at level alpha" means: the released statistic exceeds, with probability
:data:`POWER`, the value the null (no dependence, plus the same noise) exceeds with probability
alpha; so the prediction is the release's resolution, whatever threshold a decider then uses.

* **Fisher-z** (:func:`fisher_z_detectable`, the bounded covariance): the smallest |correlation|
  ``rho`` with ``atanh(rho) >= T sqrt(1/(n-3) + Var(r)/(1-rho^2)^2)`` (the noise-aware test's
  own widening, :func:`~privgraph.stats.fisher_z.partial_correlation_noise`), Var(r) from the
  noise on a covariance entry (:func:`~privgraph.causal.fisher_pc.covariance_noise`, columns
  centred in their bounds) against the columns' scaled variance (at most ``C^2 / d`` after the
  records' norm clip to C). The columns' spread is
  private, so the prediction takes the optimistic one the refusal takes (a uniform over the
  bounds, scaled variance 1/12) and also states the spread below which a plausible effect is
  out of reach (:attr:`Detectable.spread`: a column spread over a share f of its bounds as a
  uniform has variance f^2/12; the noise on its correlations grows as 1/f^2).
* **rank** (:func:`rank_detectable`): the same test on ``sin(pi tau / 2)``, its noise
  ``(pi/2) cos(pi tau/2) sigma`` (sigma on tau, :func:`~privgraph.causal.rank_pc.kendall_noise`)
  and ``n_eff = 9 n / pi^2``; no bounds enter.
* **Tests on tables** (:func:`method_detectable`; Priv-PC's examine step, Laplace-PC, SVT-PC:
  Laplace noise; Gauss-PC's level 0: Gaussian): a rank margin's noise in z units (noise scale
  times the margin's unit) is added to the marginal z; the smallest z is the ``1 - alpha/2``
  quantile of ``N(0, 1) + noise``, reported as Kendall's tau (``z = tau n u_n / 4``,
  :func:`~privgraph.causal.margins.kendall_pair_unit`) or Spearman's rho (``z = rho sqrt(n-1)``).
  Block votes (G, chi-square): the null's votes ``Bin(B, 1 - alpha)`` plus noise, their alpha
  quantile t; the blocks' G test must then say "dependent" with probability ``1 - t / B``,
  reached at the phi coefficient (Cramér's V of a 2x2 table) with that power on n/B rows.
* **Tables-PC** (:func:`tables_detectable`): level 0's released r x c table and its
  noise-aware statistic (:func:`~privgraph.causal.table_pc.noisy_independent`; with uniform
  margins every cell has the weight ``1 / (E + sigma^2)`` and it is, to first order, Pearson's
  ``sum (O - E)^2 / (E + sigma^2)``) against chi-square with ``(r - 1)(c - 1)`` degrees of freedom,
  sigma the level's Gaussian noise per cell (:func:`~privgraph.causal.table_pc.level0_noise`).
  With uniform margins (E = n / (r c) in every cell) an effect of Cramér's V gives the
  noncentrality ``n V^2 (min(r, c) - 1) E / (E + sigma^2)``; the smallest V detected with
  probability :data:`POWER` is read from the noncentral chi-square. The table is the best
  case the domain offers (its two smallest columns, uniform margins): a larger table or
  skewed margins detect less.

**Plausible sizes** (:data:`PLAUSIBLE`): a correlation of 0.3 (Cohen's medium effect), a
Kendall's tau of 0.2 (the tau of a Gaussian correlation of 0.31), a phi of 0.3. A run whose
tests cannot detect an effect of that size is called uninformative: its missing edges are not
evidence of independence. The methods with no prediction here (EM-PC, the sub-sampled
Gaussian, non-private PC) get None.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr
from scipy.stats import binom, chi2, ncx2, norm

from privgraph.causal.deciders import LaplacePerTest, SieveExamineDecider, SparseVectorPC
from privgraph.causal.fisher_pc import UNIFORM_VARIANCE, covariance_noise
from privgraph.causal.margins import BlockVotes, kendall_pair_unit, make_margin
from privgraph.causal.rank_pc import kendall_noise
from privgraph.privacy import resolve_sampler
from privgraph.stats import KendallTest, SpearmanTest
from privgraph.stats.fisher_z import partial_correlation_noise
from privgraph.stats.rank_correlation import effective_n
from privgraph.validation import InvalidInput

#: The probability with which an effect counts as detected (at the test's alpha).
POWER = 0.5

#: The smallest effect of each kind an edge of plausible size has (public constants).
PLAUSIBLE = {"correlation": 0.3, "Kendall's tau": 0.2, "Spearman's rho": 0.3, "phi (Cramer's V)": 0.3}


class NoPowerWarning(UserWarning):
    """Said before any noise is drawn when the tests cannot detect an effect of plausible size."""


@dataclass(frozen=True)
class Detectable:
    """The smallest effect a run's level-0 tests detect (public facts only).

    ``smallest``: inf when no effect is detectable. ``spread`` (Fisher-z only): the share of
    its bounds a column must spread over, as a uniform, for a plausible correlation to be
    detectable (None when none is, even at a uniform spread).

    >>> d = Detectable("fisher-z", "correlation", 0.62, 1.0, 7466, 0.05)
    >>> d.is_informative
    False
    >>> print(d.warning())
    at epsilon 1 with 7466 rows, the fisher-z test cannot detect a correlation below 0.62 (alpha 0.05): an empty graph would be uninformative; try --ci-test rank, more epsilon, or tighter bounds (and concentrated data, small variance against the bounds, makes it worse)
    """

    test: str
    effect: str
    smallest: float
    epsilon: float
    n: int
    alpha: float
    spread: float | None = None

    @property
    def plausible(self) -> float:
        return PLAUSIBLE[self.effect]

    @property
    def is_informative(self) -> bool:
        """Whether an effect of plausible size is detectable (an empty answer then means something)."""
        return self.smallest <= self.plausible

    def _reach(self) -> str:
        if math.isinf(self.smallest):
            return f"cannot detect any {self.effect}"
        return f"cannot detect a {self.effect} below {self.smallest:.2g}"

    def warning(self) -> str | None:
        """The one line said before spending when the run is uninformative (None otherwise)."""
        if self.is_informative:
            return None
        hint = {"fisher-z": "try --ci-test rank, more epsilon, or tighter bounds (and concentrated data, small "
                            "variance against the bounds, makes it worse)",
                "rank": "try more epsilon or more rows",
                "chi-square (released tables)": "try more epsilon or more rows"}.get(self.test, "try more epsilon, more rows or a smaller "
                                                                         "cap of rounds (--max-rounds)")
        return (f"at epsilon {self.epsilon:g} with {self.n} rows, the {self.test} test {self._reach()} (alpha "
                f"{self.alpha:g}): an empty graph would be uninformative; {hint}")

    def spread_note(self) -> str | None:
        """Fisher-z with a plausible effect in reach at a uniform spread: the spread it needs."""
        if self.spread is None or not self.is_informative:
            return None
        sd = self.spread / math.sqrt(12)
        return (f"if your columns spread over less than {100 * self.spread:.0f}% of their bounds (a standard "
                f"deviation below {100 * sd:.1f}% of the bounds' width), the fisher-z test cannot detect a "
                f"correlation below {self.plausible:g} and an empty graph would be uninformative: tighter bounds "
                f"or --ci-test rank help")

    def line(self) -> str:
        """What a run or a plan says: the warning, or the reach (and Fisher-z's spread)."""
        if not self.is_informative:
            return self.warning()
        where = " if the columns spread over their bounds like uniforms" if self.spread is not None else ""
        text = (f"at level 0 the {self.test} test detects a {self.effect} of {self.smallest:.2g} or more{where} "
                f"(alpha {self.alpha:g}, power {POWER:g}; predicted from public facts)")
        return text + (f"; {self.spread_note()}" if self.spread_note() else "")

    def record(self) -> dict:
        """JSON-ready: the prediction and whether the run is informative."""
        return {"test": self.test, "effect": self.effect,
                "smallest_detectable": None if math.isinf(self.smallest) else self.smallest,
                "plausible": self.plausible, "alpha": self.alpha, "power": POWER, "n": self.n,
                "informative": self.is_informative, "uniform_spread_needed": self.spread}

    def notice(self) -> str | None:
        """What to say before spending: the warning when uninformative, else Fisher-z's spread
        (the columns' spread is private, so that condition is said on every Fisher-z run)."""
        return self.warning() or self.spread_note()

    def warn(self) -> None:
        """:class:`NoPowerWarning` with :meth:`notice`, if any (called before the spend)."""
        if (text := self.notice()) is not None:
            warnings.warn(text, NoPowerWarning, stacklevel=3)


def smallest_correlation(n_eff: float, alpha: float, noise_var: Callable[[float], float]) -> float:
    """The smallest rho at which Fisher's z, widened by the noise ``noise_var(rho)`` on r, reaches
    its threshold (power 1/2); inf when none does (the noise grows faster than atanh).

    >>> round(smallest_correlation(1003, 0.05, lambda r: 0.0), 4)   # plain: tanh(1.96 / sqrt(1000))
    0.0619
    >>> smallest_correlation(1003, 0.05, lambda r: 4.0)
    inf
    """
    if n_eff <= 3:
        return math.inf
    T = norm.ppf(1 - alpha / 2)

    def gap(r: float) -> float:
        return math.atanh(r) - T * math.sqrt(1.0 / (n_eff - 3) + noise_var(r) / (1 - r * r) ** 2)

    grid = np.linspace(0.0, 0.999, 200)  # a bracket every 0.005; brentq refines it
    for lo, hi in zip(grid[:-1], grid[1:]):
        if gap(hi) >= 0:
            return float(brentq(gap, lo, hi, xtol=1e-6))
    return math.inf


def fisher_z_detectable(d: int, n: float, *, epsilon: float, delta: float, neighbours, norm_: float | None,
                        alpha: float) -> Detectable:
    """Fisher-z on the bounded covariance: the reach at a uniform spread, and the spread a
    plausible correlation needs (module docstring).

    >>> far = fisher_z_detectable(11, 7466, epsilon=1.0, delta=1e-6, neighbours="replace_one", norm_=0.83, alpha=0.05)
    >>> far.is_informative, 0.2 < far.spread < 0.3
    (True, True)
    >>> fisher_z_detectable(11, 300, epsilon=0.1, delta=1e-6, neighbours="replace_one", norm_=0.83, alpha=0.05).is_informative
    False
    """
    s = covariance_noise(d, n, epsilon=epsilon, delta=delta, neighbours=neighbours, norm=norm_)

    def at(spread: float) -> float:  # the norm clip shrinks each record to norm_: variance at most norm_^2 / d
        v = np.full(2, min(UNIFORM_VARIANCE * spread**2, math.inf if norm_ is None else norm_**2 / d))
        return smallest_correlation(n, alpha, lambda r: partial_correlation_noise(
            np.linalg.inv([[1.0, r], [r, 1.0]]), r, v, s))

    uniform = at(1.0)
    plausible = PLAUSIBLE["correlation"]
    spread = None
    if uniform <= plausible:
        lo, hi = 1e-4, 1.0  # the reach falls as the spread grows: the least spread that keeps it plausible
        for _ in range(20):  # a ratio of 1e4 ** 2**-20: far below any figure printed
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if at(mid) > plausible else (lo, mid)
        spread = hi
    return Detectable("fisher-z", "correlation", uniform, epsilon, int(n), alpha, spread)


def rank_detectable(d: int, n: int, *, epsilon: float, delta: float, alpha: float) -> Detectable:
    """The rank test: Fisher's z on ``sin(pi tau / 2)`` with the released tau's noise (no bounds).

    >>> rank_detectable(11, 7466, epsilon=1.0, delta=1e-6, alpha=0.05).is_informative
    True
    """
    sigma = kendall_noise(d, n, epsilon=epsilon, delta=delta)

    def noise_var(r: float) -> float:
        s = (math.pi / 2) * math.sqrt(1 - r * r) * sigma  # (pi/2) cos(pi tau / 2) sigma at tau = 2 asin(r) / pi
        return partial_correlation_noise(np.linalg.inv([[1.0, r], [r, 1.0]]), r, np.ones(2),
                                         np.array([[0.0, s], [s, 0.0]]))

    return Detectable("rank", "correlation", smallest_correlation(effective_n(n), alpha, noise_var), epsilon, int(n),
                      alpha)


def noisy_quantile(p: float, scale: float, law: str) -> float:
    """The p-quantile of ``N(0, 1) + scale E``, E a unit Laplace (``law="laplace"``) or normal.

    >>> round(noisy_quantile(0.975, 0.0, "laplace"), 4), round(noisy_quantile(0.975, 1.0, "gaussian"), 4)
    (1.96, 2.7718)
    """
    if law == "gaussian" or scale <= 0:
        return float(norm.ppf(p) * math.sqrt(1 + scale**2))
    return float(brentq(lambda x: _normal_laplace_cdf(x, scale) - p, -50 - 60 * scale, 50 + 60 * scale))


def _normal_laplace_cdf(x: float, s: float) -> float:
    """CDF of ``N(0, 1) + Laplace(0, s)`` (closed form, in log space against overflow)."""
    a = 1.0 / (2 * s * s)
    return float(norm.cdf(x) - 0.5 * (math.exp(a - x / s + log_ndtr(x - 1 / s))
                                      - math.exp(a + x / s + log_ndtr(-x - 1 / s))))


def _noise_cdf(x: np.ndarray, scale: float, law: str) -> np.ndarray:
    if scale <= 0:
        return (x >= 0).astype(float)
    if law == "gaussian":
        return norm.cdf(x / scale)
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / scale), 1 - 0.5 * np.exp(-np.maximum(x, 0) / scale))


def votes_detectable(blocks: int, n: int, noise: float, law: str, alpha: float) -> float:
    """The phi a block-votes test (B blocks of n/B rows, votes released with noise) detects.

    >>> votes_detectable(50, 100_000, 0.0, "laplace", 0.05) < 0.05
    True
    >>> votes_detectable(50, 100_000, 1e4, "laplace", 0.05)
    inf
    """
    ks = np.arange(blocks + 1)
    pmf = binom.pmf(ks, blocks, 1 - alpha)

    def null_cdf(t: float) -> float:
        return float(np.sum(pmf * _noise_cdf(t - ks, noise, law)))

    t = brentq(lambda t: null_cdf(t) - alpha, -blocks - 200 * max(noise, 1), blocks + 1.0)
    power = 1 - t / blocks
    if power >= 1:
        return math.inf
    rows, critical = n // blocks, chi2.ppf(1 - alpha, 1)
    if power <= alpha or rows < 1:
        return 0.0 if power <= alpha else math.inf
    nc = brentq(lambda nc: ncx2.sf(critical, 1, nc) - power, 1e-9, 1e6)
    phi = math.sqrt(nc / rows)
    return phi if phi <= 1 else math.inf


def margin_detectable(test, margin, n: int, noise: float, law: str, *, alpha: float, epsilon: float,
                      unit: float | None = None) -> Detectable:
    """A table test whose margin (sensitivity 1) is released with noise of scale ``noise``
    (margin units; ``law`` "laplace" or "gaussian"); ``unit``: the margin's unit in z at n rows
    (default: the margin's own for a marginal test)."""
    if isinstance(margin, BlockVotes):
        return Detectable(test.name, "phi (Cramer's V)", votes_detectable(margin.blocks, n, noise, law, alpha),
                          epsilon, n, alpha)
    unit = margin.units(n) if unit is None else unit
    z = noisy_quantile(1 - alpha / 2, noise * unit, law)
    if isinstance(test, SpearmanTest):
        return Detectable(test.name, "Spearman's rho", z / math.sqrt(max(n - 1, 1)), epsilon, n, alpha)
    tau = 4 * z / (n * kendall_pair_unit(n))
    return Detectable(test.name, "Kendall's tau", tau if tau <= 1 else math.inf, epsilon, n, alpha)


def tables_detectable(sizes: tuple[int, int], n: int, sigma: float, *, alpha: float, epsilon: float,
                      test: str = "chi-square (released tables)") -> Detectable:
    """The Cramér's V an r x c table released with Gaussian noise ``sigma`` per cell and tested
    by the noise-aware chi-square detects with probability :data:`POWER` (module docstring).

    >>> round(tables_detectable((2, 2), 100_000, 0.0, alpha=0.05, epsilon=1.0).smallest, 4)  # plain: sqrt(3.84 / n)
    0.0062
    >>> tables_detectable((2, 2), 1_000, 1e4, alpha=0.05, epsilon=0.01).smallest
    inf
    """
    r, c = sizes
    df, cells = (r - 1) * (c - 1), r * c
    expected = n / cells
    critical = chi2.ppf(1 - alpha, df)
    nc = brentq(lambda nc: ncx2.sf(critical, df, nc) - POWER, 1e-9, 1e9)
    v = math.sqrt(nc * (expected + sigma**2) / (expected * n * (min(r, c) - 1))) if n > 0 else math.inf
    return Detectable(test, "phi (Cramer's V)", v if v <= 1 else math.inf, epsilon, int(n), alpha)


#: The Laplace noise each capped decider's test carries, in margin units (its ``per_round``).
_LAPLACE = {SieveExamineDecider: lambda d: 1.0 / ((1 - d.share) * d.per_round),  # the examine step
            LaplacePerTest: lambda d: 1.0 / d.per_round,
            SparseVectorPC: lambda d: 4.0 / d.per_round}  # the sparse vector's query noise


def method_detectable(method, shape, test, search) -> Detectable | None:
    """The reach of ``method``'s level-0 tests with ``test`` on public ``shape`` (domain, n),
    from the method's own calibration; None for a method with no prediction here."""
    if not method.is_private:
        return None
    if hasattr(method, "table_noise"):  # tables-pc: the best-case table, its two smallest columns
        r, c = sorted(shape.domain.sizes)[:2]
        return tables_detectable((r, c), shape.n, method.table_noise(shape, search), alpha=search.alpha,
                                 epsilon=search.epsilon, test=method.test_name)
    if hasattr(method, "decider"):
        if method.decider not in _LAPLACE:
            return None
        decider = method.make(shape, test, search, sampler=resolve_sampler(None))
        return margin_detectable(test, decider.margin, shape.n, _LAPLACE[method.decider](decider), "laplace",
                                 alpha=search.alpha, epsilon=search.epsilon)
    try:
        sigma = method.noise(shape, test, search).first
    except InvalidInput:  # a method with no per-level prediction (EM-PC)
        return None
    margin = make_margin(test, search.alpha)
    unit = kendall_pair_unit(shape.n) if isinstance(test, KendallTest) else None
    return margin_detectable(test, margin, shape.n, sigma, "gaussian", alpha=search.alpha, epsilon=search.epsilon,
                             unit=unit)


__all__ = ["Detectable", "NoPowerWarning", "PLAUSIBLE", "POWER", "fisher_z_detectable", "margin_detectable",
           "method_detectable", "noisy_quantile", "rank_detectable", "smallest_correlation", "tables_detectable", "votes_detectable"]
