"""DELIBERATELY BROKEN mechanisms: planted bugs that the audit must catch. NOT PRIVATE.

Never use anything in this module to release data. Each function reproduces a published
mistake (or a plausible slip) with the sampler primitives, so that the tests can check
that :func:`privgraph.audit.audit` notices it:

* :func:`broken_laplace_scale_cut`: Laplace noise with its scale cut by a quarter (true
  epsilon 4/3 of the claim);
* the sparse vector (Lyu, Su and Li 2017, Section 3) without query noise (Stoddard et
  al. 2014), without its cutoff (Chen et al. 2015), with query noise not scaled with the
  cutoff c (Lee and Clifton 2014), and releasing the noisy query value with an "above"
  answer (Roth's lecture notes);
* :func:`broken_naive_float_laplace`: textbook ``numpy`` Laplace noise added to a double,
  which leaks the input through its low-order bits (Mironov 2012);
* :func:`broken_vector_laplace_rounding`: PrivateMRF's per-individual tables released
  with the old vector calibration, which rounded every cell to the grid but paid for one
  rounding unit in all (``floor(D/g) + 1``, not ``+ d``). Each cell that moves can move
  one extra unit, so an individual spread over d cells sitting just below half a unit
  moves the rounded tables by d units more than it should. At the production grid
  (2**-12 of the sensitivity) doubling the loss takes about 4096 such cells (4,095 records
  added beside an individual with 8,193), and that loss then sits on the event "every
  cell in its upper tail", of probability about 2**-4096: no run count can see it. The
  planted case therefore uses a grid as coarse as the sensitivity (``grid_bits=0``),
  where the same rule doubles the loss with four cells, to show the pair and the view
  (the smallest of B's cells) catch it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

import numpy as np

from privgraph.audit.auditor import Runner, low_bit_events, threshold_events, value_events
from privgraph.audit.cases import (
    AR,
    FULL_RUNS,
    RO,
    AuditCase,
    SVT_LEFT,
    SVT_RIGHT,
    answer_codes,
    describe_answers,
)
from privgraph.audit.estimators import individuals_pair
from privgraph.data import Domain
from privgraph.mrf.individuals import individual_tables
from privgraph.privacy import NoiseSampler
from privgraph.privacy.calibration import grid_for, grid_shift


def broken_laplace_scale_cut(epsilon: float, sensitivity: float = 1.0) -> Runner:
    """BROKEN: grid Laplace with scale 0.75 sensitivity / epsilon (really 4/3 epsilon-DP)."""
    grid = grid_for(sensitivity)

    def run(x: float, n: int, sampler: NoiseSampler) -> np.ndarray:
        scale = 0.75 * grid_shift(sensitivity, grid) * grid / epsilon
        return np.round(float(x) / grid) * grid + sampler.laplace_on_grid(scale, grid, n)

    return run


def broken_naive_float_laplace(epsilon: float, sensitivity: float = 1.0) -> Runner:
    """BROKEN: ``x + numpy Laplace(sensitivity / epsilon)`` on doubles (floating-point leak).

    numpy's generator is seeded from the sampler's words, so runs stay reproducible.
    """

    def run(x: float, n: int, sampler: NoiseSampler) -> np.ndarray:
        seed = [int(u) for u in sampler.uniform(4) * 2.0**53]
        return float(x) + np.random.default_rng(seed).laplace(0.0, sensitivity / epsilon, n)

    return run


# --- broken sparse vectors ------------------------------------------------------------------


def _svt_sessions(
    queries: Sequence[float],
    n: int,
    sampler: NoiseSampler,
    *,
    epsilon: float,
    query_noise: Callable[[int], np.ndarray],
    cutoff: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sessions of a sparse vector with threshold noise Lap(2/epsilon) (sensitivity 1).

    ``query_noise(size)`` draws the query noise in grid units; ``cutoff=None`` answers
    every query. Returns the (n, k) answers (1 / 0 / -1) and the noisy query values in
    sensitivity units (NaN where not asked).
    """
    grid = grid_for(1.0)
    units = np.round(np.asarray(queries, dtype=np.float64) / grid).astype(np.int64)
    thresholds = sampler.discrete_laplace(2 * grid_shift(1.0, grid) / epsilon, n)
    answers = np.full((n, units.size), -1, dtype=np.int8)
    noisy = np.full((n, units.size), np.nan)
    positives = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    for j, q in enumerate(units):
        value = q + query_noise(active.size)
        answers[active, j] = value >= thresholds[active]
        noisy[active, j] = value * grid
        positives[active] += answers[active, j]
        if cutoff is not None:
            active = active[positives[active] < cutoff]
    return answers, noisy


def _lap(scale_in_sensitivities: float, sampler: NoiseSampler) -> Callable[[int], np.ndarray]:
    """Query noise Lap(scale) in grid units (sensitivity 1)."""
    grid = grid_for(1.0)
    return lambda size: sampler.discrete_laplace(scale_in_sensitivities * grid_shift(1.0, grid), size)


def broken_svt_no_query_noise(epsilon: float) -> Runner:
    """BROKEN: sparse vector (cutoff 1) whose queries get no noise at all."""

    def run(queries, n, sampler):
        answers, _ = _svt_sessions(queries, n, sampler, epsilon=epsilon,
                                   query_noise=lambda size: np.zeros(size, dtype=np.int64), cutoff=1)
        return answer_codes(answers)

    return run


def broken_svt_no_cutoff(epsilon: float) -> Runner:
    """BROKEN: sparse vector with cutoff-1 noise that never halts.

    The view is a post-processing of the answers: above answers in the second half of
    the queries minus those in the first half (the threshold noise cancels out of it).
    """

    def run(queries, n, sampler):
        answers, _ = _svt_sessions(queries, n, sampler, epsilon=epsilon,
                                   query_noise=_lap(4 / epsilon, sampler), cutoff=None)
        half = answers.shape[1] // 2
        return answers[:, half:].sum(axis=1) - answers[:, :half].sum(axis=1)

    return run


def broken_svt_noise_not_scaled(epsilon: float, cutoff: int) -> Runner:
    """BROKEN: sparse vector with cutoff c whose query noise is Lap(4/epsilon), not Lap(4c/epsilon)."""

    def run(queries, n, sampler):
        answers, _ = _svt_sessions(queries, n, sampler, epsilon=epsilon,
                                   query_noise=_lap(4 / epsilon, sampler), cutoff=cutoff)
        return answer_codes(answers)

    return run


def broken_svt_releases_value(epsilon: float) -> Runner:
    """BROKEN: sparse vector (cutoff 1) that also releases the noisy value of its "above" query.

    The view is that value when the above answer is the last query, NaN otherwise.
    """

    def run(queries, n, sampler):
        answers, noisy = _svt_sessions(queries, n, sampler, epsilon=epsilon,
                                       query_noise=_lap(4 / epsilon, sampler), cutoff=1)
        return np.where(answers[:, -1] == 1, noisy[:, -1], np.nan)

    return run


def broken_vector_laplace_rounding(epsilon: float, grid_bits: int = 0, cells_paid: int = 1) -> Runner:
    """BROKEN: individual-normalised 2 x 2 tables with the old vector Laplace calibration.

    Grid ``2**-grid_bits`` (sensitivity 1), shift ``floor(1/g) + cells_paid`` (the old rule:
    1 whatever the number of cells; the corrected rule pays all 4), every cell rounded: the
    view is the smallest noisy cell. Input: a DataFrame with columns a, b and id, as for
    the ``mrf_individuals`` case.
    """
    domain = Domain.of(a=2, b=2)
    grid = 2.0**-grid_bits
    t = (int(np.floor(1.0 / grid)) + cells_paid) / epsilon  # noise scale in grid units

    def run(frame, n, sampler):
        (table,) = individual_tables(frame[["a", "b"]].to_numpy(), frame["id"].to_numpy(), domain=domain,
                                     cliques=[("a", "b")])
        snapped = np.round(table.ravel() / grid) * grid
        return (snapped + sampler.laplace_on_grid(t * grid, grid, (n, snapped.size))).min(axis=1)

    return run


def broken_cases() -> tuple[AuditCase, ...]:
    """The planted bugs, each on a pair that exposes it (every one must be caught).

    >>> all(c.is_broken and c.mechanism.startswith("BROKEN") for c in broken_cases())
    True
    """
    half = (0.0,) * 10 + (1.0,) * 10
    cut = (-0.5,) * 4 + (0.5,) * 6
    codes = value_events(describe=describe_answers)
    cases = tuple(
        AuditCase(name, "BROKEN: " + what, nb, eps, 0.0, left, right, pair, run, events, is_broken=True)
        for name, what, nb, eps, left, right, pair, run, events in (
            ("broken_laplace_scale", "Laplace, scale cut by a quarter", AR, 1.0, 0.0, 1.0, "0 vs 1",
             broken_laplace_scale_cut(1.0), threshold_events()),
            ("broken_svt_no_query_noise", "sparse vector without query noise", RO, 1.0, SVT_LEFT, SVT_RIGHT,
             "0^8 1 vs 1^8 0", broken_svt_no_query_noise(1.0), codes),
            ("broken_svt_no_cutoff", "sparse vector without cutoff", RO, 1.0, half, half[::-1],
             "0^10 1^10 vs 1^10 0^10", broken_svt_no_cutoff(1.0), threshold_events()),
            ("broken_svt_noise_not_scaled", "sparse vector, c = 6, query noise not scaled by c", RO, 1.0,
             cut, cut[::-1], "-.5^4 .5^6 vs .5^4 -.5^6", broken_svt_noise_not_scaled(1.0, 6), codes),
            ("broken_svt_releases_value", "sparse vector releasing the noisy query value", RO, 1.0,
             SVT_LEFT, SVT_RIGHT, "0^8 1 vs 1^8 0", broken_svt_releases_value(1.0), threshold_events()),
            ("broken_naive_float_laplace", "numpy Laplace on doubles, low-bit events", AR, 1.0, 0.0, 1.0,
             "0 vs 1", broken_naive_float_laplace(1.0), low_bit_events()),
            ("broken_vector_laplace_rounding", "MRF individual tables, old vector calibration, grid 1", AR, 1.0,
             *individuals_pair([(0, 0), (0, 1), (1, 0), (1, 1)]), "A, C vs + B: 1 record per cell",
             broken_vector_laplace_rounding(1.0), threshold_events()),
        )
    )
    # These two leak through rare answer patterns (a value just above a low noisy
    # threshold after many below answers; c above answers in a row): 1e6 runs to see.
    rare = ("broken_svt_noise_not_scaled", "broken_svt_releases_value")
    return tuple(replace(c, runs=2 * FULL_RUNS, quick_runs=FULL_RUNS) if c.name in rare else c for c in cases)
