"""Deciders for :func:`~privgraph.causal.skeleton.stable_pc_skeleton`.

A decider answers ``decide(x, y, S) -> bool`` (True: independent, remove the edge). The
private ones hold a :class:`~privgraph.privacy.Ledger` (``.ledger``) and become
``.exhausted`` when their cap, fixed in advance, is used up.

**Neighbouring relation: replace-one, n public.** Every private decider works on n rows
whose count is public, draws sub-samples of exactly m rows without replacement (Balle,
Barthe, Gaboardi 2018, Theorem 9), and uses the replace-one sensitivities of
:mod:`privgraph.stats.sensitivity` (through :mod:`privgraph.causal.margins`).

**Budget.** The caller gives a *total* (epsilon, delta). Each decider fixes a cap of
rounds (or tests) in advance, finds the per-round epsilon by inverting the composition
over that cap (:func:`~privgraph.privacy.fit_rounds_to_budget`), and reserves the whole cap
before anything is drawn. With delta > 0 the pure-DP rounds compose by exact optimal
composition (Kairouz, Oh, Viswanath 2015); with delta = 0, by basic composition; the
sub-sampled Gaussian by optimal composition of its amplified (epsilon, delta). If the noise that budget buys would drown even a marginal
test, :class:`BudgetTooSmall` is raised before any budget is spent, saying what would do.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

import privgraph.caches as caches
from privgraph.causal import pc_counting
from privgraph.causal.margins import RO, noise_needed
from privgraph.data.tables import Tables
from privgraph.privacy.composition import RDP, accountant_for, as_accountant
from privgraph.privacy import (
    Budget,
    Charge,
    Ledger,
    NoiseSampler,
    SieveAndExamine,
    SparseVector,
    amplify_without_replacement,
    fit_rounds_to_budget,
    gaussian_calibration,
    gaussian_mechanism,
    laplace_mechanism,
    reserve_plan,
    sieve_rate,
)
from privgraph.privacy.budget import BudgetTooSmall
from privgraph.privacy.events import WithoutReplacementSampling
from privgraph.privacy.sieve import MIN_RATE, pre_amplification_epsilon
from privgraph.stats import ChiSquareTest, CITest, GTest
from privgraph.stats.ci_test import check_alpha
from privgraph.stats.gtest import ColumnBlocks
from privgraph.validation import InvalidInput, positive_int

#: Sets in the first batch of a side of an edge (:meth:`NonPrivate.first_independent`).
FIRST_BATCH = 4
#: Smallest sub-sample the sieve or the sub-sampled Gaussian will test on.
MIN_SAMPLE = 100

#: Per-round epsilons kept (:meth:`_Capped._plan`, by public parameters), the oldest out beyond.
ROUND_PLANS_KEPT = 1024
_PLANS: dict = {}  # per-round epsilons already fitted, by public parameters
caches.register(f"{__name__}.round_plans", f"{ROUND_PLANS_KEPT} entries", _PLANS.clear, _PLANS)


class NonPrivate:
    """The plain test: ``decide`` is ``test.decide(table, alpha).is_independent``. No privacy.

    >>> import numpy as np
    >>> from privgraph.data import Domain, NumpyEngine
    >>> from privgraph.stats import GTest
    >>> x = np.random.default_rng(0).integers(0, 2, size=(500, 2))
    >>> NonPrivate(Tables.from_engine(NumpyEngine(Domain.of(a=2, b=2), x)), GTest(), 0.05)("a", "b", ())
    True
    """

    exhausted = False

    def __init__(self, tables: Tables, test: CITest, alpha: float):
        self.tables, self.test, self.alpha = tables, test, check_alpha(alpha)
        self.ledger = Ledger()
        self._marginal: dict = {}  # (x, y) -> verdict given nothing, decided at level 0
        self._batch = self._Batch(test, self.alpha) if self._Batch.fits(test) else None

    class _Batch:
        """``test.decide_strata`` at ``alpha`` as a hashable callable (equal for equal tests
        and alphas), so that verdicts kept with a gram serve every decider that agrees."""

        def __init__(self, test: CITest, alpha: float):
            self.test, self.alpha = test, alpha
            self._hash = hash((test, alpha))  # a key of every verdict kept: hashed once

        @staticmethod
        def fits(test: CITest) -> bool:
            """A vectorised ``decide_strata`` (deciding a whole gram one table at a time
            would cost more than it saves) and a hashable test."""
            try:
                hash(test)
            except TypeError:
                return False
            return type(test).decide_strata is not CITest.decide_strata

        def __call__(self, strata: np.ndarray, owner: np.ndarray, count: int) -> np.ndarray:
            return self.test.decide_strata(strata, owner, count, self.alpha)

        @property
        def takes_blocks(self) -> bool:
            """Whether :meth:`blocks` may be called: the test (G or chi-square) decides strata
            given as column blocks (:class:`privgraph.stats.gtest.ColumnBlocks`)."""
            return isinstance(self.test, (GTest, ChiSquareTest))

        def blocks(self, counts: np.ndarray, bounds: np.ndarray, owner: np.ndarray, count: int) -> np.ndarray:
            return self.test.decide_strata(ColumnBlocks(counts, bounds), owner, count, self.alpha)

        def __eq__(self, other) -> bool:
            return isinstance(other, type(self)) and (self.test, self.alpha) == (other.test, other.alpha)

        def __hash__(self) -> int:
            return self._hash

    def __call__(self, x: str, y: str, S: tuple) -> bool:
        return self.test.decide(self.tables.table((x, y, *S)), self.alpha).is_independent

    def first_independent(self, x: str, y: str, sets: Sequence[tuple]) -> int | None:
        """Index of the first S in ``sets`` (all of one size) with ``self(x, y, S)`` True, or
        None: first the verdicts that grams give (levels 1 and 2, every table of a gram
        decided at once: :func:`~privgraph.causal.pc_counting.verdicts`), then those of x's cover
        set by set (every table of the cover given S decided at once and kept for x's other
        edges: :func:`~privgraph.causal.pc_counting.set_verdicts`), then the tables counted and
        tested in batches of growing size (4, 16, 64, ..., at most
        :func:`~privgraph.causal.pc_counting.sets_per_batch`), so
        that an edge removed early wastes little."""
        if sets == [()] and (x, y) in self._marginal:
            return 0 if self._marginal[(x, y)] else None
        start = 0
        if self._batch is not None:
            for verdicts in (pc_counting.verdicts, pc_counting.set_verdicts):
                known = verdicts(self.tables, x, y, sets[start:], self._batch)
                if (hits := np.flatnonzero(known)).size:
                    return start + int(hits[0])
                start += len(known)
        size, most = FIRST_BATCH, pc_counting.sets_per_batch(self.tables, x, y)
        while start < len(sets):
            batch = sets[start:start + min(size, most)]
            strata, owner = pc_counting.strata(self.tables, x, y, batch)
            hits = np.flatnonzero(self.test.decide_strata(strata, owner, len(batch), self.alpha))
            if hits.size:
                return start + int(hits[0])
            start, size = start + len(batch), size * 4
        return None

    def start_level(self, level: int) -> None:
        if level == 0 and self.tables.count_pairs():  # the marginal tests in a batch per shape
            names, by_shape = self.tables.names, {}
            size = dict(zip(names, self.tables.shape(names)))
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    by_shape.setdefault((size[a], size[b]), []).append((a, b))
            for pairs in by_shape.values():
                tables = np.stack([self.tables.table(pair) for pair in pairs]).astype(np.int64, copy=False)
                owner = np.flatnonzero(tables.reshape(len(pairs), -1).any(axis=1))  # a table: one stratum
                verdicts = self.test.decide_strata(tables[owner], owner, len(pairs), self.alpha)
                self._marginal.update(zip(pairs, verdicts.tolist()))

    def focus(self, x: str, adjacent) -> None:
        pc_counting.cover(self.tables, (x, *adjacent))


class _Capped:
    """Shared by the private deciders: a cap, a per-round epsilon fitted to the budget."""

    mechanism = "round"

    def _plan(self, epsilon: float, delta: float, rounds: int, method) -> float:
        self.rounds = positive_int("the cap of rounds", rounds, whole_floats=True)
        self.method = as_accountant(method) if method else accountant_for(delta)
        self.epsilon, self.delta = epsilon, delta
        key = (type(self).__name__, epsilon, delta, self.rounds, self.method, getattr(self, "share", None),
               getattr(self, "sample_size", None), getattr(self, "test_delta", None),
               getattr(getattr(self, "tables", None), "n", None))
        if key not in _PLANS:  # a pure function of public parameters: safe to remember
            if len(_PLANS) >= ROUND_PLANS_KEPT:
                del _PLANS[next(iter(_PLANS))]
            _PLANS[key] = fit_rounds_to_budget(self.charges_of, self.rounds, epsilon, delta, self.method)
        return _PLANS[key]

    def charges_of(self, r: float) -> Sequence[Charge]:
        return (Charge(self.mechanism, r, 0.0, RO, sensitivity=1.0),)

    def _check_useful(self, margin, noise_at_unit_eps: float, n: int) -> None:
        """Tell the margin its noise scale (public), then refuse (before spending) if that
        noise drowns a marginal test at n rows (the margin's unit may depend on the noise:
        the tie-corrected Kendall test's floor)."""
        margin.expect_noise(noise_at_unit_eps / self.per_round, rows=n)
        useful = margin.useful_noise(n)
        if noise_at_unit_eps / self.per_round <= useful:
            return
        needed_r = noise_needed(useful, noise_at_unit_eps)
        plan = Ledger(tuple(c.times(self.rounds) for c in self.charges_of(needed_r)))
        needed = plan.total(self.method, self.delta).epsilon  # basic reads no target
        raise BudgetTooSmall(
            f"epsilon={self.epsilon:g} (delta={self.delta:g}) over a cap of {self.rounds} rounds "
            f"buys noise {noise_at_unit_eps / self.per_round:.3g} against a margin of {useful:.3g} "
            f"(noise scale / margin in sensitivity units): the tests would be coin flips. "
            f"This cap needs epsilon >= {needed:.3g}; or lower the cap, or use more rows", needed
        )

    def _reserve(self, budget: Budget | None) -> Ledger:
        return reserve_plan(tuple(c.times(self.rounds) for c in self.charges_of(self.per_round)), budget)


class SieveExamineDecider(_Capped):
    """Priv-PC: sieve on a secret sub-sample with the sparse vector, examine on the full data.

    Each round is :class:`~privgraph.privacy.SieveAndExamine` (see its module for the
    corrections to the paper). Per round the budget is split ``sieve_share`` /
    ``1 - sieve_share`` between sieve (after amplification) and examine (the reference
    code's 1/2, 1/2); the sub-sampling rate minimises the sieve's noise over
    q in [1/20, 1]; the sieve's threshold is lowered by ``tweak`` threshold-noise scales.
    The sieve screens without the degenerate-table rule (a sub-sample with no information
    passes the test to the examine step), the examine applies it on the full data, so at a
    huge budget the decisions are exactly non-private PC's.

    Examples
    --------
    >>> import numpy as np
    >>> from privgraph.causal import make_margin, stable_pc_skeleton
    >>> from privgraph.data import NumpyEngine
    >>> from privgraph.datasets import load_network, sample
    >>> from privgraph.privacy import SeededSampler
    >>> from privgraph.stats import KendallTest
    >>> net = load_network("cancer")
    >>> tables = Tables.from_engine(NumpyEngine(net.domain, sample(net, 100_000, np.random.default_rng(0))))
    >>> budget = Budget(1.0, 1e-6, composition="optimal")
    >>> decide = SieveExamineDecider(tables, make_margin(KendallTest(), 0.05), epsilon=1.0, delta=1e-6, rounds=20,
    ...                       sampler=SeededSampler(0), budget=budget)
    >>> decide.sample_size, round(budget.spent().epsilon, 6)   # the whole cap, reserved up front
    (5000, 1.0)
    >>> sk = stable_pc_skeleton(tables.names, decide)
    >>> decide.rounds_used <= 20
    True
    """

    def __init__(self, tables: Tables, margin, *, epsilon: float, delta: float, rounds: int,
                 sampler: NoiseSampler, budget: Budget | None = None, sieve_share: float = 0.5,
                 tweak: float = 0.5, min_rate: float = MIN_RATE, max_queries: int | None = None,
                 method: str | None = None):
        if not (0 < sieve_share < 1):
            raise InvalidInput(f"sieve_share must lie in (0, 1), got {sieve_share!r}")
        self.share, self.margin, self.sampler = sieve_share, margin, sampler
        self.per_round = self._plan(epsilon, delta, rounds, method)
        eps_sieve, eps_examine = self.share * self.per_round, (1 - self.share) * self.per_round
        self.rate = sieve_rate(eps_sieve, lower=min_rate)
        m = min(tables.n, max(MIN_SAMPLE, round(self.rate * tables.n)))
        self._check_useful(margin, 1.0 / (1 - self.share), tables.n)
        eps_pre = pre_amplification_epsilon(eps_sieve, m, tables.n)
        self.tables, self.sample_size = tables, m
        self.full = margin.prepare(tables, sampler)
        self._view = None
        self.session = SieveAndExamine(
            epsilon_sieve=eps_sieve, epsilon_examine=eps_examine, rounds=self.rounds, sample_size=m,
            population=tables.n, tweak=tweak * 2.0 / eps_pre, sampler=sampler, resample=self._resample,
            max_queries=max_queries or queries_bound(len(tables.names)), budget=budget,
        )
        self.ledger = self.session.ledger

    def charges_of(self, r: float) -> Sequence[Charge]:
        return (Charge("sieve", self.share * r, 0.0, RO, sensitivity=1.0),
                Charge("examine", (1 - self.share) * r, 0.0, RO, sensitivity=1.0))

    @property
    def exhausted(self) -> bool:
        return self.session.exhausted

    @property
    def rounds_used(self) -> int:
        return self.session.rounds_used

    def _resample(self) -> None:
        self._view = None  # the last round's sub-sample is freed before the next is drawn
        sub = self.tables.subsample(self.sample_size, self.sampler)
        self._view = self.margin.prepare(sub, self.sampler)

    def __call__(self, x: str, y: str, S: tuple) -> bool:
        try:
            return self.session.test(lambda: self.margin(self._view, x, y, S, screening=True),
                                     lambda: self.margin(self.full, x, y, S))
        except RuntimeError:  # a round reached its query cap: the session is over, keep the edge
            return False


class SparseVectorPC(_Capped):
    """SVT-PC: rounds of the sparse vector (cutoff 1) on the full data; a hit removes the edge.

    The threshold is redrawn with Laplace noise (Lyu-Su-Li) at every round, unlike the
    reference code's Gaussian redraw.
    """

    mechanism = "sparse_vector"

    def __init__(self, tables: Tables, margin, *, epsilon: float, delta: float, rounds: int,
                 sampler: NoiseSampler, budget: Budget | None = None, max_queries: int | None = None,
                 method: str | None = None):
        self.per_round = self._plan(epsilon, delta, rounds, method)
        self._check_useful(margin, 4.0, tables.n)
        self.margin, self.sampler = margin, sampler
        self.max_queries = max_queries or queries_bound(len(tables.names))
        self.full = margin.prepare(tables, sampler)
        self.ledger = self._reserve(budget)
        self.rounds_used, self._svt = 0, None

    @property
    def exhausted(self) -> bool:
        return self._svt is None and self.rounds_used >= self.rounds

    def __call__(self, x: str, y: str, S: tuple) -> bool:
        if self._svt is None:
            self.rounds_used += 1
            self._svt = SparseVector(threshold=0.0, cutoff=1, epsilon=self.per_round, sensitivity=1.0,
                                     neighbours=RO, sampler=self.sampler, max_queries=self.max_queries)
        try:
            hit = self._svt.test(self.margin(self.full, x, y, S))
        except RuntimeError:  # the round's query cap: stop here, keep the edge
            self._svt, self.rounds_used = None, self.rounds
            return False
        if hit:
            self._svt = None
        return hit


class LaplacePerTest(_Capped):
    """Laplace-per-test: every test's margin released with Laplace noise, a cap of tests."""

    mechanism = "laplace"

    def __init__(self, tables: Tables, margin, *, epsilon: float, delta: float, rounds: int,
                 sampler: NoiseSampler, budget: Budget | None = None, method: str | None = None):
        self.per_round = self._plan(epsilon, delta, rounds, method)
        self._check_useful(margin, 1.0, tables.n)
        self.margin, self.sampler = margin, sampler
        self.full = margin.prepare(tables, sampler)
        self.ledger = self._reserve(budget)
        self.rounds_used = 0

    @property
    def exhausted(self) -> bool:
        return self.rounds_used >= self.rounds

    def __call__(self, x: str, y: str, S: tuple) -> bool:
        self.rounds_used += 1
        value = self.margin(self.full, x, y, S)
        return laplace_mechanism(value, epsilon=self.per_round, sensitivity=1.0, neighbours=RO,
                                 sampler=self.sampler).value >= 0.0


class SubsampledGaussian(_Capped):
    """Sub-sampled Gaussian: each test's margin on a fresh secret sub-sample, Gaussian noise.

    The paper does not specify it; here each test draws exactly m = ``rate`` n rows
    without replacement (replace-one, n public) and releases its margin with the discrete
    Gaussian; the cap of tests composes by the RDP accountant (``dp_accounting``'s
    sub-sampling without replacement, Wang, Balle, Kasiviswanathan 2019) on each charge's
    exact Gaussian curve, and the per-test noise is the smallest whose RDP total over the cap
    meets (epsilon, delta). Each charge also states its amplified (epsilon, delta) (Balle et
    al. Theorem 9), with per-test deltas taking half of the total delta, so basic and optimal
    composition of the same ledger remain valid (looser) readings. ``method="optimal"``
    calibrates by exact optimal composition of those instead.
    """

    mechanism = "gaussian"

    def __init__(self, tables: Tables, margin, *, epsilon: float, delta: float, rounds: int,
                 sampler: NoiseSampler, budget: Budget | None = None, rate: float = 0.1,
                 method: str | None = None):
        if not (0 < rate <= 1):
            raise InvalidInput(f"rate must lie in (0, 1], got {rate!r}")
        if delta <= 0:
            raise InvalidInput(f"the sub-sampled Gaussian needs delta > 0, got {delta!r}")
        self.tables, self.margin, self.sampler = tables, margin, sampler
        self.sample_size = min(tables.n, max(MIN_SAMPLE, round(rate * tables.n)))
        q = self.sample_size / tables.n
        self.test_delta = min(0.1, delta / (2 * int(rounds) * q))  # amplified: half of delta over the cap
        self.per_round = self._plan(epsilon, delta, rounds, method or RDP)
        sigma = gaussian_calibration(self.per_round, self.test_delta, 1.0)[0]
        margin.expect_noise(sigma, rows=self.sample_size)  # public; may set the margin's unit (tie floor)
        if sigma > margin.useful_noise(self.sample_size):
            raise BudgetTooSmall(
                f"epsilon={epsilon:g} (delta={delta:g}) over a cap of {self.rounds} tests buys Gaussian "
                f"noise sigma {sigma:.3g} against a margin of {margin.useful_noise(self.sample_size):.3g} "
                "(sensitivity units): raise epsilon, lower the cap, or use more rows"
            )
        self.ledger = self._reserve(budget)
        self.rounds_used = 0

    def charges_of(self, r: float) -> Sequence[Charge]:
        n, m = self.tables.n, self.sample_size
        _, _, curve = gaussian_calibration(r, self.test_delta, 1.0)
        eps, dlt = amplify_without_replacement(r, self.test_delta, m, n, RO)
        return (Charge("gaussian", eps, dlt, RO, sensitivity=1.0, curve=curve,
                       sampling=WithoutReplacementSampling(m, n), note=f"m={m} of n={n}"),)

    @property
    def exhausted(self) -> bool:
        return self.rounds_used >= self.rounds

    def __call__(self, x: str, y: str, S: tuple) -> bool:
        self.rounds_used += 1
        view = self.margin.prepare(self.tables.subsample(self.sample_size, self.sampler), self.sampler)
        value = self.margin(view, x, y, S)
        return gaussian_mechanism(value, epsilon=self.per_round, delta=self.test_delta, sensitivity=1.0,
                                  neighbours=RO, sampler=self.sampler).value >= 0.0


def queries_bound(d: int) -> int:
    """A cap on the tests one PC run can ask over d variables: ``d (d-1) 2^(d-2)``, at most 2^20.

    (Each unordered pair, each side, each subset of the other d - 2 variables, at most
    once.) The sparse vector's slack for the sampler's error is sized to it.

    >>> queries_bound(8), queries_bound(40)
    (3584, 1048576)
    """
    return int(min(2**20, d * (d - 1) * 2 ** max(0, d - 2)))


def spent(ledger: Ledger, method, delta: float) -> float:
    """Total epsilon of ``ledger`` by ``method`` (an accountant or its name) at ``delta`` (basic ignores delta).

    >>> spent(Ledger.of(Charge("laplace", 0.5, 0.0, RO).times(2)), "basic", 0.0)
    1.0
    """
    if not ledger.charges:
        return 0.0
    return ledger.total(method, delta).epsilon if math.isfinite(delta) else math.inf
