"""The sparse vector technique: AboveThreshold with a cutoff of c positive answers.

Lyu, Su and Li (2017), "Understanding the Sparse Vector Technique for Differential
Privacy", Algorithm 1, with eps1 = eps2 = epsilon / 2:

* threshold noise ``rho ~ Lap(sensitivity / eps1)`` drawn once;
* query noise ``nu_i ~ Lap(2 c sensitivity / eps2)`` per query (``c sensitivity / eps2`` for
  monotone queries, their Section 4.2);
* answer "above" iff ``q_i + nu_i >= T + rho``; halt after c "above" answers.

It is epsilon-DP for any number of "below" answers. Textbook variants that are NOT
private (Lyu et al., Section 3, and the audit cases of ``privgraph.audit``): no query
noise (Stoddard et al. 2014); no cutoff, i.e. answering forever (Chen et al. 2015);
query noise not scaled with c (Lee and Clifton 2014); releasing the noisy query value with
a positive answer (Roth's lecture notes). Redrawing the threshold with a different noise
law than the proof uses (the Priv-PC reference code redraws it with Gaussian noise) is
not covered by this proof either.

Noise is on a power-of-two grid and all comparisons are exact integer comparisons. The
sampler's relative error enters once per answer, so the calibration reserves
``PURE_DP_SLACK * (max_queries + cutoff + 1)`` of epsilon; the number of queries is
therefore capped in advance (``max_queries``, default 2**20).

One implementation serves all three entry points: :class:`SparseVector` (online, one
query at a time), :func:`above_threshold` (a fixed list) and
:func:`sparse_vector_sessions` (many independent sessions over one list at once, for audits
and simulations) share the calibration, the threshold noise, the comparison and the halting
rule below (:func:`_is_above`, :func:`_run_sessions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from privgraph.privacy.budget import Budget
from privgraph.privacy.calibration import grid_for, grid_shift
from privgraph.privacy.ledger import Charge, Ledger
from privgraph.privacy.mechanisms import Release, pay
from privgraph.privacy.neighbours import (
    Neighbours,
    check_epsilon,
    check_sensitivity,
)
from privgraph.privacy.samplers import PURE_DP_SLACK, NoiseSampler
from privgraph.validation import InvalidInput, positive_int

_CLAMP_UNITS = 2**50


@dataclass(frozen=True)
class _Calibration:
    """Public parameters of one session, in grid units (nothing here depends on data)."""

    grid: float
    threshold_scale: float
    query_scale: float
    cutoff: int


def _calibrate(
    *, cutoff, epsilon, sensitivity, neighbours, monotone, max_queries, budget, sessions=1
) -> tuple[_Calibration, Ledger]:
    """Check the arguments, charge ``sessions`` sessions (before any noise), calibrate.

    Each session is charged (epsilon, 0) with the sampler slack of ``max_queries`` queries.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    if sensitivity == 0:
        raise InvalidInput("sensitivity must be positive for the sparse vector, got 0")
    cutoff = positive_int("cutoff", cutoff)
    max_queries = positive_int("max_queries", max_queries)
    slack = PURE_DP_SLACK * (max_queries + cutoff + 1)
    if epsilon <= 2 * slack:
        raise InvalidInput(f"epsilon must exceed {2 * slack:.3g} for {max_queries} queries, got {epsilon!r}")
    charge = Charge(
        "sparse_vector", epsilon, 0.0, Neighbours.parse(neighbours), sensitivity=sensitivity,
        slack=slack, note=f"cutoff {cutoff}" + (", monotone" if monotone else ""),
    )
    ledger = pay(charge.times(sessions), budget)
    grid = grid_for(sensitivity)
    shift = grid_shift(sensitivity, grid)
    eps1 = (epsilon - slack) / 2
    eps2 = (epsilon - slack) - eps1
    query_scale = (1 if monotone else 2) * cutoff * shift / eps2
    return _Calibration(grid, shift / eps1, query_scale, cutoff), ledger


def _to_units(values, grid: float) -> np.ndarray:
    """Clamp to +-2**50 grid units and round to integer grid units (int64)."""
    return np.round(np.clip(np.asarray(values, dtype=np.float64) / grid, -_CLAMP_UNITS, _CLAMP_UNITS)).astype(np.int64)


def _noisy_thresholds(cal: _Calibration, threshold: float, sampler: NoiseSampler, sessions: int) -> np.ndarray:
    """``T + rho`` in grid units, one per session: rho ~ discrete Laplace(sensitivity / eps1)."""
    return _to_units(threshold, cal.grid) + sampler.discrete_laplace(cal.threshold_scale, sessions)


def _is_above(cal: _Calibration, query_units: np.ndarray, thresholds: np.ndarray, sampler: NoiseSampler) -> np.ndarray:
    """Whether ``q + nu >= T + rho``, one fresh ``nu ~ discrete Laplace(query_scale)`` per entry."""
    return query_units + sampler.discrete_laplace(cal.query_scale, thresholds.size) >= thresholds


def _run_sessions(cal: _Calibration, query_units: np.ndarray, thresholds: np.ndarray, sampler: NoiseSampler) -> np.ndarray:
    """Answers of independent sessions (one per threshold) to the same queries, in order.

    Query noise is drawn only for sessions still running, as an online session would.
    Returns int8 of shape (sessions, k): 1 "above", 0 "below", -1 not asked (halted).
    """
    answers = np.full((thresholds.size, query_units.size), -1, dtype=np.int8)
    positives = np.zeros(thresholds.size, dtype=np.int64)
    active = np.arange(thresholds.size)
    for j, q in enumerate(query_units):
        above = _is_above(cal, q, thresholds[active], sampler)
        answers[active, j] = above
        positives[active] += above
        active = active[positives[active] < cal.cutoff]
    return answers


class SparseVector:
    """An online AboveThreshold session: ask queries one at a time with :meth:`test`.

    The whole session is charged (epsilon, 0) when it is created, before any noise is
    drawn; the queries may be chosen adaptively (e.g. by a PC loop that removes edges).
    It shares its calibration, threshold noise and comparison with
    :func:`sparse_vector_sessions`.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> svt = SparseVector(threshold=10.0, cutoff=1, epsilon=1.0, sensitivity=1.0,
    ...                    neighbours=Neighbours.REPLACE_ONE, sampler=SeededSampler(0))
    >>> svt.test(-1000.0), svt.test(1000.0), svt.halted
    (False, True, True)
    >>> svt.ledger.total().epsilon
    1.0
    """

    def __init__(
        self,
        *,
        threshold: float,
        cutoff: int,
        epsilon: float,
        sensitivity: float,
        neighbours: Neighbours,
        sampler: NoiseSampler,
        monotone: bool = False,
        max_queries: int = 2**20,
        budget: Budget | None = None,
    ):
        if not np.isfinite(threshold):  # checked before the budget is charged
            raise InvalidInput(f"threshold must be finite, got {threshold!r}")
        self._cal, self.ledger = _calibrate(
            cutoff=cutoff, epsilon=epsilon, sensitivity=sensitivity, neighbours=neighbours,
            monotone=monotone, max_queries=max_queries, budget=budget,
        )
        self.cutoff = self._cal.cutoff
        self.max_queries = int(max_queries)
        self._sampler = sampler
        self._thresholds = _noisy_thresholds(self._cal, threshold, sampler, 1)
        self.asked = 0
        self.positives = 0

    @property
    def halted(self) -> bool:
        return self.positives >= self.cutoff

    def test(self, query_value: float) -> bool:
        """Whether the noisy query clears the noisy threshold (only the bit is released)."""
        if self.halted:
            raise RuntimeError(f"sparse vector halted after {self.cutoff} positive answers")
        if self.asked >= self.max_queries:
            raise RuntimeError(f"sparse vector reached its cap of {self.max_queries} queries")
        if not np.isfinite(query_value):
            raise InvalidInput(f"query value must be finite, got {query_value!r}")
        self.asked += 1
        above = bool(_is_above(self._cal, _to_units(query_value, self._cal.grid), self._thresholds, self._sampler)[0])
        self.positives += int(above)
        return above


def _query_values(queries: Iterable[float]) -> np.ndarray:
    try:
        values = np.asarray(list(queries), dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput(f"queries must be numbers, got {queries!r}") from None
    if values.ndim != 1 or not np.all(np.isfinite(values)):
        raise InvalidInput(f"queries must be a 1-D sequence of finite numbers, got {values!r}")
    return values


def sparse_vector_sessions(
    queries: Iterable[float],
    *,
    sessions: int,
    threshold: float,
    cutoff: int,
    epsilon: float,
    sensitivity: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    monotone: bool = False,
    budget: Budget | None = None,
) -> Release:
    """Run ``sessions`` independent AboveThreshold sessions over the same queries at once.

    Each session is exactly :func:`above_threshold` on ``queries`` (its own threshold
    noise and query noise, halting after ``cutoff`` positives) and costs (epsilon, 0);
    the ledger holds one charge reserved ``sessions`` times, so running many sessions on
    the same data is charged as what it is. Meant for audits and simulations.

    Returns
    -------
    Release
        ``value`` is an int8 array of shape (sessions, len(queries)): 1 for "above",
        0 for "below" and -1 for queries after the session halted.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> answers, ledger = sparse_vector_sessions([0.0, 500.0, 500.0], sessions=4, threshold=250.0,
    ...     cutoff=1, epsilon=1.0, sensitivity=1.0, neighbours=Neighbours.ADD_REMOVE,
    ...     sampler=SeededSampler(0))
    >>> answers.tolist()
    [[0, 1, -1], [0, 1, -1], [0, 1, -1], [0, 1, -1]]
    >>> ledger.total().epsilon
    4.0
    """
    values = _query_values(queries)
    if not np.isfinite(threshold):
        raise InvalidInput(f"threshold must be finite, got {threshold!r}")
    cal, ledger = _calibrate(
        cutoff=cutoff, epsilon=epsilon, sensitivity=sensitivity, neighbours=neighbours,
        monotone=monotone, max_queries=max(1, values.size), budget=budget,
        sessions=positive_int("sessions", sessions),
    )
    thresholds = _noisy_thresholds(cal, threshold, sampler, sessions)
    return Release(_run_sessions(cal, _to_units(values, cal.grid), thresholds, sampler), ledger)


def above_threshold(
    queries: Iterable[float],
    *,
    threshold: float,
    cutoff: int,
    epsilon: float,
    sensitivity: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    monotone: bool = False,
    budget: Budget | None = None,
) -> Release:
    """Answer queries in order until ``cutoff`` are above the threshold: epsilon-DP.

    Sensitivity: of each query under ``neighbours``. Returns a Release of the list of
    answers given (True for "above"), whose length is the number of queries answered.
    See the module docstring for the construction and the non-private variants. It is one
    session of :func:`sparse_vector_sessions`.

    >>> from privgraph.privacy import SeededSampler
    >>> answers, ledger = above_threshold([0.0, 0.0, 500.0, 0.0], threshold=250.0, cutoff=1,
    ...     epsilon=1.0, sensitivity=1.0, neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(4))
    >>> answers
    [False, False, True]
    """
    answers, ledger = sparse_vector_sessions(
        queries, sessions=1, threshold=threshold, cutoff=cutoff, epsilon=epsilon,
        sensitivity=sensitivity, neighbours=neighbours, sampler=sampler, monotone=monotone,
        budget=budget,
    )
    return Release([bool(a) for a in answers[0] if a >= 0], ledger)
