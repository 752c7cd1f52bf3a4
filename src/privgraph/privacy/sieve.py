"""Sieve-and-examine: priv-pc.txt Algorithm 1, generalised to the Priv-PC loop.

Each *round* is one-off sieve-and-examine on a fresh secret sub-sample:

1. **Sieve.** Draw exactly ``m`` of the ``n`` rows without replacement (the caller's
   ``resample`` callback, from the privacy core's sampler) and run the sparse vector with
   cutoff c = 1 (:class:`~privgraph.privacy.sparse_vector.SparseVector`, Lyu-Su-Li
   Algorithm 1) on queries evaluated on the sub-sample, against the threshold lowered by
   the *tweak*. On the sub-sample it spends ``eps' = ln(1 + (n/m)(e^eps_sieve - 1))``;
   Balle, Barthe and Gaboardi (2018), Theorem 9 (replace-one, n public, exactly m rows)
   brings that down to ``eps_sieve`` on the full data.
2. **Examine.** The first query that clears the sieve is answered again on the *full*
   data with the Laplace mechanism at ``eps_examine``; the answer ("above" or not) is
   released. The round then ends: the next query starts a new round, with a new
   sub-sample and a new threshold noise drawn at the same scale as the first.

A round costs ``eps_sieve + eps_examine`` (pure DP). The number of rounds is **capped in
advance** and the whole cap is reserved when the session opens, so the ledger composes a
plan fixed before the data is seen (a tighter method than basic composition is valid),
never a count the data chose; unused rounds are simply not run.

Corrections to the paper, all in the direction of privacy:

* Algorithm 2 line 15 redraws the threshold as ``Lap(2 Delta / eps')`` without the
  ``sqrt(n/m)`` of line 5: with the sub-sample's sensitivity that is too little noise.
  Here every threshold (first or redrawn) is ``Lap(2 Delta_m / eps')`` with ``Delta_m`` the
  sensitivity *on the sub-sample*: the callers normalise each query by it.
* Algorithm 2 line 12 puts ``sqrt(n/m)`` on the full-data examine: not needed, the examine
  sees all n rows and uses the sensitivity at n.
* The reference code composes by advanced composition over the number of hits (chosen
  by the data) and passes add/remove sensitivities to a replace-one theorem: here the cap
  is fixed and the relation is replace-one throughout.
* The sub-sampling rate minimises the noise level over q in [1/20, 1]
  (:func:`sieve_rate`), bounded, rather than clipping an unconstrained minimiser (which
  collapses to 1/20 for large epsilon in the reference code).

Queries are passed *normalised*: ``(value - threshold) / sensitivity`` (sensitivity under
replace-one of the rows the value is computed on), so that "above" means ``>= 0`` and every
query has sensitivity 1.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Sequence

from privgraph.privacy.amplification import amplify_without_replacement, epsilon_before_amplification
from privgraph.privacy.budget import Budget, reserve_plan
from privgraph.privacy.composition import OPTIMAL, Accountant, as_accountant, optimal_shortfall
from privgraph.privacy.events import WithoutReplacementSampling
from privgraph.privacy.ledger import Charge, Ledger
from privgraph.privacy.mechanisms import Release, laplace_mechanism
from privgraph.privacy.neighbours import Neighbours, check_epsilon
from privgraph.privacy.samplers import NoiseSampler
from privgraph.privacy.sparse_vector import SparseVector
from privgraph.validation import InvalidInput, positive_int

#: Smallest sub-sampling rate :func:`sieve_rate` considers (the paper's n/20).
MIN_RATE = 1.0 / 20.0
_RO = Neighbours.REPLACE_ONE


def sieve_rate(epsilon_sieve: float, *, lower: float = MIN_RATE) -> float:
    """The rate q in [lower, 1] minimising the sieve's noise ``sqrt(1/q) / ln(1 + (e^eps - 1)/q)``.

    The sieve's noise scale on a sub-sample of rate q is ``Delta_m / eps'`` with
    ``Delta_m ~ 1/sqrt(q n)`` (the rank statistics) and ``eps'`` the budget before
    amplification. Minimised over ``log q`` with a bounded method, endpoints included.
    Small budgets favour small rates, large ones q = 1 (no sub-sampling).

    Examples
    --------
    >>> sieve_rate(0.01)
    0.05
    >>> sieve_rate(10.0)
    1.0
    """
    from scipy.optimize import minimize_scalar  # lazy: keeps import privgraph.audit free of scipy

    epsilon = check_epsilon(epsilon_sieve, "epsilon_sieve")
    if not (0 < lower <= 1):
        raise InvalidInput(f"lower rate must lie in (0, 1], got {lower!r}")

    def noise(log_q: float) -> float:
        q = math.exp(log_q)  # ln(1 + (e^eps - 1)/q), written to stay finite for any eps
        return math.sqrt(1 / q) / (epsilon - log_q + math.log1p((q - 1) * math.exp(-epsilon)))

    res = minimize_scalar(noise, bounds=(math.log(lower), 0.0), method="bounded", options={"xatol": 1e-6})
    best = min((noise(math.log(lower)), lower), (noise(0.0), 1.0), (float(res.fun), math.exp(res.x)))
    return best[1]


def fit_rounds_to_budget(
    charges_of: Callable[[float], Sequence[Charge]],
    rounds: int,
    epsilon: float,
    delta: float,
    method: Accountant | str,
) -> float:
    """Largest per-round scale r whose ``rounds``-fold plan composes to at most ``epsilon``.

    ``charges_of(r)`` lists one round's charges at scale r (their epsilons increasing in
    r); the plan is every charge ``.times(rounds)``, composed by ``method`` (an accountant or its name) at ``delta``
    (:meth:`~privgraph.privacy.ledger.Ledger.total`). Found to a relative 1e-10, from
    below, so the plan never exceeds the budget: by bisection, or under exact optimal
    composition of pure charges by Brent's method on its shortfall (:func:`_optimal_shortfall`).

    Examples
    --------
    >>> one = lambda r: [Charge("laplace", r, 0.0, Neighbours.REPLACE_ONE)]
    >>> round(fit_rounds_to_budget(one, 10, 1.0, 0.0, "basic"), 9)
    0.1
    >>> fit_rounds_to_budget(one, 100, 1.0, 1e-6, "optimal") > 0.01
    True
    """
    rounds, epsilon = positive_int("rounds", rounds), check_epsilon(epsilon)
    method = as_accountant(method)

    def total(r: float) -> float:
        plan = Ledger(tuple(c.times(rounds) for c in charges_of(r)))
        return plan.total(method, delta).epsilon  # basic reads no target

    shortfall = _optimal_shortfall(charges_of, rounds, epsilon, delta, method)
    affords = (lambda r: total(r) <= epsilon) if shortfall is None else (lambda r: shortfall(r) <= 0)
    lo, hi = 0.0, epsilon
    while affords(hi):
        lo, hi = hi, hi * 2
    if shortfall is not None:
        lo = _root_from_below(shortfall, lo, hi)
    for _ in range(200 if shortfall is None else 0):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if affords(mid) else (lo, mid)
        if hi - lo <= 1e-10 * hi:
            break
    while shortfall is not None and lo > 0.0 and total(lo) > epsilon:  # the total a ledger reports
        lo *= 1 - 1e-10
    if lo == 0.0:
        raise InvalidInput(f"no positive per-round budget fits epsilon={epsilon!r} over {rounds} rounds")
    return lo


def _optimal_shortfall(charges_of, rounds: int, epsilon: float, delta: float, method: Accountant):
    """``r -> optimal_shortfall`` of the plan at scale r (<= 0: affordable), or None where
    the plan is not pure charges under exact optimal composition.

    It answers "does scale r fit?" in one pass over the support
    (:func:`~privgraph.privacy.composition.optimal_shortfall`) where inverting the
    composition takes two hundred, and it is continuous in r, so a root finder needs a few
    tens of steps fewer than bisection: a plan over a wide table's million rounds in
    seconds instead of minutes.
    """
    if method != OPTIMAL or any(c.delta > 0 for c in charges_of(epsilon)):
        return None
    return lambda r: optimal_shortfall([c.times(rounds) for c in charges_of(r)], epsilon, delta)


def _root_from_below(shortfall, lo: float, hi: float) -> float:
    """The largest r in [lo, hi) with ``shortfall(r) <= 0`` (shortfall increasing in r), to a
    relative 1e-10, from below (Brent's method, then steps down until it holds)."""
    from scipy.optimize import brentq  # lazy: keeps import privgraph.audit free of scipy

    if shortfall(lo) > 0 or lo == hi:
        return lo
    root = brentq(shortfall, lo, hi, xtol=1e-300, rtol=1e-11, maxiter=400)
    step = 1e-11 * root
    while root > lo and shortfall(root) > 0:
        root -= step
        step *= 2
    return max(root, lo)


class SieveAndExamine:
    """An online Priv-PC session: :meth:`test` one normalised query at a time.

    Parameters
    ----------
    epsilon_sieve, epsilon_examine : float
        Per-round cost of the sieve (after amplification) and of the examine.
    rounds : int
        The cap of rounds, reserved in full when the session opens.
    sample_size, population : int
        m rows drawn without replacement out of n (both public: replace-one).
    tweak : float
        How far below the threshold the sieve's threshold sits, in sensitivity units of
        the sieve query (> 0 lets more queries through to the examine).
    sampler : NoiseSampler
        Noise, and the secret sub-samples (``resample`` must draw them from it).
    resample : callable
        Called with no argument at the start of every round: must draw a fresh secret
        sub-sample of exactly ``sample_size`` rows, on which the next sieve values are
        computed.
    max_queries : int
        Cap on the queries one round may see (the sparse vector's slack is sized to it).
    budget : Budget, optional
        Reserved against (``charge.times(rounds)``) before anything is drawn.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> s = SieveAndExamine(epsilon_sieve=0.5, epsilon_examine=0.5, rounds=2, sample_size=500,
    ...                     population=1000, tweak=0.0, sampler=SeededSampler(0), resample=lambda: None)
    >>> s.test(lambda: -1e4, lambda: -1e4), s.test(lambda: 1e4, lambda: 1e4), s.rounds_used
    (False, True, 1)
    >>> round(s.ledger.total().epsilon, 6)
    2.0
    """

    def __init__(
        self,
        *,
        epsilon_sieve: float,
        epsilon_examine: float,
        rounds: int,
        sample_size: int,
        population: int,
        tweak: float,
        sampler: NoiseSampler,
        resample: Callable[[], None],
        max_queries: int = 2**20,
        budget: Budget | None = None,
    ):
        self.rounds = positive_int("rounds", rounds)
        self.max_queries = positive_int("max_queries", max_queries)
        if not math.isfinite(tweak):
            raise InvalidInput(f"tweak must be finite, got {tweak!r}")
        self.tweak = float(tweak)
        self._eps_pre = pre_amplification_epsilon(check_epsilon(epsilon_sieve, "epsilon_sieve"), sample_size, population)
        self.epsilon_sieve, self.epsilon_examine = epsilon_sieve, check_epsilon(epsilon_examine, "epsilon_examine")
        self.sample_size, self.population = sample_size, population
        self.ledger = _reserve(self.round_charges(), self.rounds, budget)
        self._sampler, self._resample = sampler, resample
        self._svt: SparseVector | None = None
        self.rounds_used = 0
        self.queries = 0

    def round_charges(self) -> tuple[Charge, Charge]:
        """The two charges of one round (sieve after amplification, then examine)."""
        note = f"sparse vector c=1, eps' {self._eps_pre:.4g} on m={self.sample_size} of n={self.population}"
        sieve = Charge("sieve", self.epsilon_sieve, 0.0, _RO, sensitivity=1.0,
                       sampling=WithoutReplacementSampling(self.sample_size, self.population), note=note)
        examine = Charge("examine", self.epsilon_examine, 0.0, _RO, sensitivity=1.0,
                         note="Laplace on the full data")
        return sieve, examine

    @property
    def exhausted(self) -> bool:
        """True once every reserved round has been used up."""
        return self._svt is None and self.rounds_used >= self.rounds

    def test(self, sieve: Callable[[], float], examine: Callable[[], float]) -> bool:
        """Whether a query is "above" (True only if it cleared the sieve and the examine).

        ``sieve()`` is the normalised query on the round's sub-sample (called after any
        resampling), ``examine()`` the normalised query on the full data (called only
        if the sieve let it through). Raises RuntimeError once :attr:`exhausted`.
        """
        if self._svt is None:
            self._open_round()
        self.queries += 1
        try:
            passed = self._svt.test(float(sieve()) + self.tweak)
        except RuntimeError:  # the round's query cap: end the session
            self._svt, self.rounds_used = None, self.rounds
            raise
        if not passed:
            return False
        self._svt = None
        noisy = laplace_mechanism(float(examine()), epsilon=self.epsilon_examine, sensitivity=1.0,
                                  neighbours=_RO, sampler=self._sampler).value
        return noisy >= 0.0

    def _open_round(self) -> None:
        if self.rounds_used >= self.rounds:
            raise RuntimeError(f"sieve-and-examine used its cap of {self.rounds} rounds")
        self.rounds_used += 1
        self._resample()
        self._svt = SparseVector(threshold=0.0, cutoff=1, epsilon=self._eps_pre, sensitivity=1.0,
                                 neighbours=_RO, sampler=self._sampler, max_queries=self.max_queries)


def sieve_and_examine(
    queries: Iterable[tuple[Callable[[], float], Callable[[], float]]],
    *,
    epsilon_sieve: float,
    epsilon_examine: float,
    rounds: int,
    sample_size: int,
    population: int,
    tweak: float,
    sampler: NoiseSampler,
    resample: Callable[[], None],
    budget: Budget | None = None,
) -> Release:
    """Answer ``(sieve, examine)`` query pairs in order until the cap of rounds is used.

    A Release of the list of answers given (True: "above" after the examine) and the
    ledger of the whole cap. See :class:`SieveAndExamine` and the module docstring.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> pairs = [(lambda: -1e4, lambda: -1e4), (lambda: 1e4, lambda: 1e4), (lambda: 1e4, lambda: 1e4)]
    >>> answers, ledger = sieve_and_examine(pairs, epsilon_sieve=0.2, epsilon_examine=0.3, rounds=1,
    ...     sample_size=100, population=1000, tweak=0.0, sampler=SeededSampler(1), resample=lambda: None)
    >>> answers, round(ledger.total().epsilon, 6)
    ([False, True], 0.5)
    """
    session = SieveAndExamine(
        epsilon_sieve=epsilon_sieve, epsilon_examine=epsilon_examine, rounds=rounds,
        sample_size=sample_size, population=population, tweak=tweak, sampler=sampler,
        resample=resample, budget=budget,
    )
    answers = []
    for sieve, examine in queries:
        if session.exhausted:
            break
        answers.append(session.test(sieve, examine))
    return Release(answers, session.ledger)


def pre_amplification_epsilon(epsilon_sieve: float, m: int, n: int) -> float:
    """eps' whose Theorem-9 amplification over m of n rows is at most ``epsilon_sieve``.

    >>> pre_amplification_epsilon(0.5, 1000, 1000), round(pre_amplification_epsilon(0.1, 100, 1000), 4)
    (0.5, 0.7187)
    """
    m, n = positive_int("sample_size", m), positive_int("population", n)
    if m > n:
        raise InvalidInput(f"sample_size {m} exceeds population {n}")
    if m == n:
        return epsilon_sieve
    eps = epsilon_before_amplification(epsilon_sieve, m / n)
    while amplify_without_replacement(eps, 0.0, m, n, _RO)[0] > epsilon_sieve:
        eps = math.nextafter(eps, 0.0)
    return eps


def _reserve(charges: Sequence[Charge], rounds: int, budget: Budget | None) -> Ledger:
    """Reserve the whole cap of rounds, or none of it (:func:`~privgraph.privacy.budget.reserve_plan`)."""
    return reserve_plan([c.times(rounds) for c in charges], budget)
