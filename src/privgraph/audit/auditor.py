"""The empirical privacy auditor: a statistical lower bound on a mechanism's epsilon.

An (epsilon, delta)-DP mechanism M satisfies, for neighbouring inputs x and x' and every
set S of outputs, ``P[M(x) in S] <= exp(epsilon) P[M(x') in S] + delta``. The auditor runs
M many times on x and on x', *chooses* an event S on one batch of runs, then counts S on a
fresh batch and turns the counts into one-sided Clopper-Pearson bounds ``p_hi`` (the
likelier side, from below) and ``p_lo`` (the other side, from above), each at level
``alpha / 2``. With probability at least ``1 - alpha``

    epsilon >= ln((p_hi_lower - delta) / p_lo_upper),

whatever the mechanism. Choosing S on a batch that is then thrown away is what keeps the
bound valid: the fresh counts are binomial for a fixed S.

An audit is a lower bound, never a proof: a mechanism that passes (bound <= claim) may
still leak on inputs or events the audit did not try.

Event families (how S is chosen) are callables ``family(left_outputs, right_outputs)``
returning candidate :class:`Event` objects: :func:`threshold_events` for real outputs,
:func:`value_events` for discrete outputs, :func:`low_bit_events` for the floating-point
attack, and :func:`given_events` for events the user supplies.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from privgraph.privacy.samplers import NoiseSampler
from privgraph.validation import InvalidInput, positive_int

#: Fewest runs per side the auditor accepts, for the choice and for the bound alike.
MIN_RUNS = 100

#: ``run(input, runs, sampler)`` returns ``runs`` independent outputs of the mechanism on
#: ``input`` (first axis = runs), drawing all noise from ``sampler``.
Runner = Callable[[Any, int, NoiseSampler], np.ndarray]


@dataclass(frozen=True)
class Event:
    """A set of outputs, given as a vectorised membership test.

    >>> e = Event("y >= 1", lambda y: y >= 1)
    >>> e.contains(np.array([0.0, 1.0, 2.0])).tolist()
    [False, True, True]
    """

    description: str
    contains: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class AuditResult:
    """What one audit found: the lower bound and the evidence behind it.

    ``favoured`` is the input (0 for left, 1 for right) on which the event was likelier;
    ``counts`` are the fresh-batch counts of the event on (left, right).
    """

    epsilon_bound: float
    event: str
    favoured: int
    counts: tuple[int, int]
    runs: int
    alpha: float
    delta: float
    seconds: float

    def violates(self, epsilon: float) -> bool:
        """True when the bound exceeds a claimed epsilon: a violation at level alpha.

        >>> AuditResult(1.2, "y >= 1", 1, (10, 30), 100, 1e-3, 0.0, 0.1).violates(1.0)
        True
        """
        return self.epsilon_bound > epsilon


# --- Clopper-Pearson and the bound ---------------------------------------------------


def clopper_pearson(successes: float, trials: float, alpha: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds ``(lower, upper)``, each failing with prob. <= alpha.

    ``lower`` is the exact binomial lower confidence bound at level ``1 - alpha`` and
    ``upper`` the upper one (0 and 1 at the ends). Counts may be non-integer (used to
    project a count to another number of trials when choosing an event).

    >>> lo, hi = clopper_pearson(0, 1000, 0.05)
    >>> lo, round(hi, 6) == round(1 - 0.05 ** (1 / 1000), 6)
    (0.0, True)
    >>> lo, hi = clopper_pearson(500, 1000, 1e-3)
    >>> bool(0.44 < lo < 0.5 < hi < 0.56)
    True
    """
    from scipy.special import betaincinv  # lazy: keeps import privgraph.audit free of scipy

    lower = 0.0 if successes <= 0 else float(betaincinv(successes, trials - successes + 1, alpha))
    upper = 1.0 if successes >= trials else float(betaincinv(successes + 1, trials - successes, 1 - alpha))
    return lower, upper


def epsilon_lower_bound(likely: float, unlikely: float, runs: float, alpha: float, delta: float = 0.0) -> float:
    """``ln((p_lower - delta) / q_upper)`` from event counts on the two sides (0 if none).

    ``likely`` and ``unlikely`` count the event in ``runs`` runs on the input where it is
    likelier and on the other input; each Clopper-Pearson bound takes ``alpha / 2``, so
    the result is a lower bound on epsilon (at this delta) with probability ``1 - alpha``.

    >>> round(epsilon_lower_bound(500_000, 183_940, 1_000_000, 1e-3), 2)
    0.99
    >>> epsilon_lower_bound(100, 100, 1000, 1e-3)
    0.0
    """
    p_lower = clopper_pearson(likely, runs, alpha / 2)[0]
    q_upper = clopper_pearson(unlikely, runs, alpha / 2)[1]
    if p_lower <= delta:
        return 0.0
    return max(0.0, math.log((p_lower - delta) / q_upper))


# --- event families --------------------------------------------------------------------


def _tail_levels(count: int) -> np.ndarray:
    """Quantile levels: ``count`` evenly spaced ones plus geometric ones in both tails."""
    tails = np.geomspace(1e-5, 0.02, 16)
    return np.unique(np.concatenate([np.linspace(0, 1, count + 2)[1:-1], tails, 1 - tails]))


def threshold_events(count: int = 99) -> Callable[[np.ndarray, np.ndarray], list[Event]]:
    """Events ``{y >= t}`` and ``{y <= t}`` at quantiles of the pooled real outputs.

    NaN outputs (a view that has no value for some runs) belong to no event.

    >>> events = threshold_events(3)(np.arange(10.0), np.arange(10.0) + 1)
    >>> [e.description for e in events[:2]], len(events)
    (['y >= 0', 'y <= 0'], 10)
    """

    def family(left: np.ndarray, right: np.ndarray) -> list[Event]:
        pooled = np.concatenate([left, right]).astype(np.float64)
        cuts = np.unique(np.nanquantile(pooled, _tail_levels(count), method="nearest"))
        events = []
        for t in cuts[np.isfinite(cuts)]:
            t = float(t)
            events.append(Event(f"y >= {t:.6g}", lambda y, t=t: y >= t))
            events.append(Event(f"y <= {t:.6g}", lambda y, t=t: y <= t))
        return events

    return family


def value_events(most: int = 256, describe: Callable[[Any], str] = repr) -> Callable[[np.ndarray, np.ndarray], list[Event]]:
    """Events ``{y == v}`` for the ``most`` commonest values of discrete (1-D) outputs.

    >>> events = value_events()(np.array([0, 0, 1]), np.array([1, 2, 2]))
    >>> sorted(e.description for e in events)
    ['y == 0', 'y == 1', 'y == 2']
    """

    def family(left: np.ndarray, right: np.ndarray) -> list[Event]:
        values, counts = np.unique(np.concatenate([left, right]), return_counts=True)
        top = values[np.argsort(-counts, kind="stable")[:most]]
        return [Event(f"y == {describe(v.item())}", lambda y, v=v: y == v) for v in top]

    return family


def low_bit_events(bits: Sequence[int] = range(1, 64)) -> Callable[[np.ndarray, np.ndarray], list[Event]]:
    """Events ``{y is not a multiple of 2**-k}``: the floating-point attack (Mironov 2012).

    ``fl(1 + noise)`` is always a multiple of 2**-53, while ``0 + noise`` below 1/2 in size
    usually is not: textbook Laplace noise on doubles lets these events separate 0 from 1.
    Outputs on a power-of-two grid give every event the same probability on both sides.

    >>> e = low_bit_events([2])(None, None)[0]
    >>> e.description, e.contains(np.array([0.25, 0.125])).tolist()
    ('y not a multiple of 2**-2', [False, True])
    """

    def family(left: np.ndarray, right: np.ndarray) -> list[Event]:
        return [
            Event(f"y not a multiple of 2**-{k}", lambda y, k=k: np.ldexp(y, k) % 1 != 0) for k in bits
        ]

    return family


def orthant_events(count: int = 11) -> Callable[[np.ndarray, np.ndarray], list[Event]]:
    """Events ``{y_j >= t_j or y_j <= t_j (or free) for every column j}`` of (runs, k) outputs.

    Each column is cut at ``count`` evenly spaced quantiles of its pooled values (and six
    tail quantiles when ``count > 3``);
    every combination of a side and a cut, or no constraint, per column is an event (all
    free excepted): ``(2 count + 1)^k - 1`` events, so keep k small. A product of tails is
    where a release of k independently noised values reaches its whole epsilon.

    >>> events = orthant_events(1)(np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[2.0, 2.0]]))
    >>> len(events), events[0].description
    (8, 'y0 >= 1, y1 >= 1')
    >>> [int(n) for n in (events[0].contains(np.array([[1.0, 1.0], [1.0, 0.0]])))]
    [1, 0]
    """
    def family(left: np.ndarray, right: np.ndarray) -> list[Event]:
        pooled = np.concatenate([left, right]).astype(np.float64)
        levels = np.linspace(0, 1, count + 2)[1:-1]
        if count > 3:
            levels = np.unique(np.concatenate([levels, [0.003, 0.01, 0.03, 0.97, 0.99, 0.997]]))
        per_column = []
        for j in range(pooled.shape[1]):
            cuts = np.unique(np.nanquantile(pooled[:, j], levels, method="nearest"))
            sides = [(j, ">=", float(t)) for t in cuts] + [(j, "<=", float(t)) for t in cuts]
            per_column.append(sides + [None])
        events = []
        for combo in itertools.product(*per_column):
            terms = [c for c in combo if c is not None]
            if terms:
                events.append(Event(", ".join(f"y{j} {op} {t:.6g}" for j, op, t in terms),
                                    lambda y, terms=terms: _in_orthant(y, terms)))
        return events

    return family


def _in_orthant(y: np.ndarray, terms) -> np.ndarray:
    inside = np.ones(len(y), dtype=bool)
    for j, op, t in terms:
        inside &= (y[:, j] >= t) if op == ">=" else (y[:, j] <= t)
    return inside


def given_events(*events: Event) -> Callable[[np.ndarray, np.ndarray], list[Event]]:
    """A family that always offers the same user-supplied events.

    >>> given_events(Event("y > 0", lambda y: y > 0))(None, None)[0].description
    'y > 0'
    """
    return lambda left, right: list(events)


# --- the audit -------------------------------------------------------------------------


#: One-sided level of the cautious estimates used to choose an event (about one sigma).
CHOICE_LEVEL = 0.16


def _projected_bound(k: tuple[int, int], side: int, choice_runs: int, runs: int, alpha: float, delta: float) -> float:
    """The bound an event would give on ``runs`` fresh runs, from choice-batch counts ``k``.

    The event's probabilities are estimated cautiously (Clopper-Pearson at
    :data:`CHOICE_LEVEL`, so rare events that look good by luck do not win) and projected
    to the fresh batch, which weighs the ratio against how precisely it can be measured.
    """
    likely = clopper_pearson(k[side], choice_runs, CHOICE_LEVEL)[0]
    unlikely = clopper_pearson(k[1 - side], choice_runs, CHOICE_LEVEL)[1]
    return epsilon_lower_bound(likely * runs, unlikely * runs, runs, alpha, delta)


def _choose(events: Sequence[Event], left: np.ndarray, right: np.ndarray, runs: int, alpha: float, delta: float) -> tuple[Event, int, float]:
    """The event and favoured side with the best projected bound (see :func:`_projected_bound`)."""
    if not events:
        raise InvalidInput("the event family offered no events")
    best = (events[0], 0, -1.0)
    for event in events:
        k = (int(np.count_nonzero(event.contains(left))), int(np.count_nonzero(event.contains(right))))
        for side in (0, 1):
            bound = _projected_bound(k, side, len(left), runs, alpha, delta)
            if bound > best[2]:
                best = (event, side, bound)
    return best


def _check_runs(value: int, name: str) -> int:
    return positive_int(name, value, MIN_RUNS)


def audit(
    run: Runner,
    left: Any,
    right: Any,
    *,
    runs: int,
    sampler: NoiseSampler,
    events: Callable[[np.ndarray, np.ndarray], Sequence[Event]] | None = None,
    alpha: float = 1e-3,
    delta: float = 0.0,
    choice_runs: int | None = None,
) -> AuditResult:
    """Lower-bound the epsilon of ``run`` on the neighbouring inputs ``left`` and ``right``.

    Parameters
    ----------
    run : callable
        ``run(input, runs, sampler)`` -> array of ``runs`` independent outputs.
    left, right : any
        A pair of neighbouring inputs (under the relation the mechanism claims).
    runs : int
        Runs per side in the fresh batch that gives the bound.
    sampler : NoiseSampler
        All noise comes from it: ``SeededSampler(seed)`` makes an audit reproducible.
    events : callable, optional
        An event family (default :func:`threshold_events`).
    alpha : float
        The bound holds with probability at least ``1 - alpha``.
    delta : float
        The claimed delta: the bound is then on epsilon at this delta.
    choice_runs : int, optional
        Runs per side of the batch that chooses the event (default ``runs // 4``).

    Examples
    --------
    >>> from privgraph.privacy import Neighbours, SeededSampler, laplace_mechanism
    >>> def run(x, n, sampler):
    ...     return laplace_mechanism(np.full(n, x), epsilon=1.0, sensitivity=1.0,
    ...                              neighbours=Neighbours.ADD_REMOVE, sampler=sampler).value
    >>> result = audit(run, 0.0, 1.0, runs=200_000, sampler=SeededSampler(0))
    >>> bool(0.9 < result.epsilon_bound <= 1.0), result.violates(1.0)
    (True, False)
    """
    if not (0 < alpha < 1):
        raise InvalidInput(f"alpha must be in (0, 1), got {alpha!r}")
    if not (0 <= delta < 1):
        raise InvalidInput(f"delta must be in [0, 1), got {delta!r}")
    runs = _check_runs(runs, "runs")
    choice_runs = _check_runs(max(MIN_RUNS, runs // 4) if choice_runs is None else choice_runs, "choice_runs")
    family = threshold_events() if events is None else events
    start = time.perf_counter()
    chosen_left, chosen_right = run(left, choice_runs, sampler), run(right, choice_runs, sampler)
    event, side, _ = _choose(family(chosen_left, chosen_right), chosen_left, chosen_right, runs, alpha, delta)
    counts = tuple(int(np.count_nonzero(event.contains(run(x, runs, sampler)))) for x in (left, right))
    bound = epsilon_lower_bound(counts[side], counts[1 - side], runs, alpha, delta)
    return AuditResult(bound, event.description, side, counts, runs, alpha, delta, time.perf_counter() - start)
