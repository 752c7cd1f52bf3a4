"""Audit cases: each mechanism of the privacy core on its known worst-case neighbouring pair.

A case names the mechanism, the relation and the claim, a pair of neighbouring inputs,
how to run the mechanism many times at once, and which events to try. The runners call
the public mechanisms (vectorised where the mechanism allows); the deliberately broken
mechanisms, which must be caught, live in :mod:`privgraph.audit.broken`.

Worst-case pairs (why each case can come close to its claim):

* Laplace: 0 against 1 at sensitivity 1; ``{y >= t}`` has ratio e^epsilon for any t >= 1.
* Gaussian: 0 against 1 at sensitivity 1; the event ``{y >= t}`` at the right t attains
  the claimed (epsilon, delta) exactly. delta = 0.01 keeps that event frequent enough to
  measure with 1e6 runs; at delta = 1e-5 it has probability ~1e-3 and the bound is weak.
* Report noisy max (exponential noise, i.e. permute-and-flip): scores (0, 2) against
  (1, 1); index 0 has probability e^-epsilon / 2 against 1/2, exactly e^epsilon apart.
* Exponential mechanism: utilities (0, 4) against (1, 3); the ratio tends to e^epsilon
  only as the gap grows, so this case is not tight (about 0.8 of the claim). Monotone
  (only one utility moves, by 1): (0, 3) against (1, 3), about 0.9.
* Report noisy max, monotone (scale sensitivity / epsilon): (0, 1) against (1, 1), tight.
* Gaussian on a vector of two values (zCDP calibration): (0, 0) against (0.71, 0.71), seen
  through the sum of the release; the zCDP conversion is not tight (a few per cent more
  noise than needed), so neither is this case.
* Sparse vector (cutoff 1): queries eight 0s then a 1 against eight 1s then a 0, at
  threshold 0; "below eight times, then above" reaches about 0.98 of the claim. The
  below answers push the threshold noise into its tail, where its ratio is exactly
  e^(epsilon/2); the above answer takes the other e^(epsilon/2). Five 0s and five 1s (the
  classic X shape) reach only about 0.9 of the claim, too close to measure as tight.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from privgraph.audit.auditor import (
    AuditResult,
    Runner,
    audit,
    low_bit_events,
    threshold_events,
    value_events,
)
from privgraph.privacy import (
    Neighbours,
    NoiseSampler,
    SecureSampler,
    SeededSampler,
    exponential_mechanism,
    gaussian_calibration,
    laplace_mechanism,
    report_noisy_max,
)
from privgraph.privacy.sparse_vector import sparse_vector_sessions
from privgraph.validation import InvalidInput

AR = Neighbours.ADD_REMOVE
RO = Neighbours.REPLACE_ONE

#: Runs per side of the fresh batch in a full audit and in a quick (CI-sized) one.
FULL_RUNS = 1_000_000
QUICK_RUNS = 200_000


@dataclass(frozen=True)
class AuditCase:
    """One mechanism, its claim, and the neighbouring pair it is audited on.

    ``runs`` and ``quick_runs`` are the runs per side of a full and of a quick audit (fewer
    for mechanisms that only run one at a time). ``is_broken`` marks planted bugs the audit must catch;
    ``is_known_failure`` marks a documented gap of a real estimator (an expected violation);
    ``is_secure_only`` cases always run on :class:`SecureSampler` (the floating-point
    attack must find nothing on the production sampler). ``group`` is ``"primitives"`` (a
    mechanism of the privacy core) or ``"estimators"`` (a whole estimator,
    :mod:`privgraph.audit.estimators`).
    """

    name: str
    mechanism: str
    neighbours: Neighbours
    epsilon: float
    delta: float
    left: Any
    right: Any
    pair: str
    run: Runner
    events: Callable
    runs: int = FULL_RUNS
    quick_runs: int = QUICK_RUNS
    is_broken: bool = False
    is_secure_only: bool = False
    group: str = "primitives"
    is_known_failure: bool = False

    def sampler(self, seed: int | None) -> NoiseSampler:
        """The sampler for this case: seeded per case name (or secure if no seed)."""
        if seed is None or self.is_secure_only:
            return SecureSampler()
        return SeededSampler(np.random.SeedSequence([seed, zlib.crc32(self.name.encode())]))

    def audit(self, *, seed: int | None, quick: bool = False, alpha: float = 1e-3, runs: int | None = None) -> AuditResult:
        """Audit this case; ``runs`` overrides the full or quick number of runs."""
        if runs is None:
            runs = self.quick_runs if quick else self.runs
        return audit(self.run, self.left, self.right, runs=runs, sampler=self.sampler(seed),
                     events=self.events, alpha=alpha, delta=self.delta)


# --- runners over the public mechanisms ---------------------------------------------------


def laplace_runner(epsilon: float, sensitivity: float = 1.0, neighbours: Neighbours = AR) -> Runner:
    """``laplace_mechanism`` on a vector of identical inputs: one independent run per entry.

    >>> laplace_runner(1.0)(0.0, 5, SeededSampler(0)).shape
    (5,)
    """

    def run(x: float, n: int, sampler: NoiseSampler) -> np.ndarray:
        return laplace_mechanism(np.full(n, float(x)), epsilon=epsilon, sensitivity=sensitivity,
                                 neighbours=neighbours, sampler=sampler).value

    return run


def gaussian_runner(epsilon: float, delta: float, sensitivity: float = 1.0) -> Runner:
    """The scalar ``gaussian_mechanism``, n runs at once.

    ``gaussian_mechanism`` on a vector calibrates for the vector's dimension, so it cannot
    stand for n scalar runs. This runner makes the scalar path's two calls itself: the
    public :func:`~privgraph.privacy.gaussian_calibration` (sigma and grid for dimension
    1) and ``sampler.gaussian_on_grid``; the tests check it against the mechanism.

    >>> gaussian_runner(1.0, 1e-2)(0.0, 3, SeededSampler(0)).shape
    (3,)
    """
    sigma, grid, _ = gaussian_calibration(epsilon, delta, sensitivity, 1)

    def run(x: float, n: int, sampler: NoiseSampler) -> np.ndarray:
        return np.round(float(x) / grid) * grid + sampler.gaussian_on_grid(sigma, grid, n)

    return run


def gaussian_vector_runner(epsilon: float, delta: float, dimension: int, sensitivity: float = 1.0) -> Runner:
    """The vector ``gaussian_mechanism`` (zCDP calibration), n releases at once, seen as their sums.

    Each run releases ``dimension`` values; the sum is all that separates two inputs that
    differ along (1, ..., 1), so it is the view the events look at. Same two calls as the
    mechanism's vector path (checked against it in the tests).

    >>> gaussian_vector_runner(1.0, 1e-2, 2)((0.0, 0.0), 4, SeededSampler(0)).shape
    (4,)
    """
    sigma, grid, _ = gaussian_calibration(epsilon, delta, sensitivity, dimension)

    def run(x: Sequence[float], n: int, sampler: NoiseSampler) -> np.ndarray:
        snapped = np.round(np.asarray(x, dtype=np.float64) / grid) * grid
        return (snapped + sampler.gaussian_on_grid(sigma, grid, (n, dimension))).sum(axis=1)

    return run


def one_at_a_time(mechanism: Callable, **keywords) -> Runner:
    """Run a selection mechanism (one output per call) n times in a loop.

    >>> run = one_at_a_time(report_noisy_max, epsilon=1.0, sensitivity=1.0, neighbours=RO)
    >>> run((0.0, 100.0), 3, SeededSampler(0)).tolist()
    [1, 1, 1]
    """

    def run(scores: Sequence[float], n: int, sampler: NoiseSampler) -> np.ndarray:
        return np.array([mechanism(scores, sampler=sampler, **keywords).value for _ in range(n)])

    return run


def answer_codes(answers: np.ndarray) -> np.ndarray:
    """One integer per session for a (sessions, k) matrix of 1 / 0 / -1 answers (base 3).

    >>> answer_codes(np.array([[0, 1, -1]])).tolist(), describe_answers(7, width=3)
    ([7], 'BA-')
    """
    powers = 3 ** np.arange(answers.shape[1], dtype=np.int64)
    return (answers.astype(np.int64) + 1) @ powers


def describe_answers(code: int, width: int | None = None) -> str:
    """Answers as text: B below, A above, - not asked (the inverse of :func:`answer_codes`)."""
    text = ""
    while code or (width is not None and len(text) < width):
        code, digit = divmod(code, 3)
        text += "-BA"[digit]
    return text


def sparse_vector_runner(threshold: float, cutoff: int, epsilon: float, neighbours: Neighbours = RO) -> Runner:
    """``sparse_vector_sessions``: n independent sessions over one query vector, coded.

    >>> codes = sparse_vector_runner(0.0, 1, 2.0)((-500.0, 500.0), 2, SeededSampler(0))
    >>> [describe_answers(int(c)) for c in codes]
    ['BA', 'BA']
    """

    def run(queries: Sequence[float], n: int, sampler: NoiseSampler) -> np.ndarray:
        answers, _ = sparse_vector_sessions(queries, sessions=n, threshold=threshold, cutoff=cutoff,
                                            epsilon=epsilon, sensitivity=1.0, neighbours=neighbours,
                                            sampler=sampler)
        return answer_codes(answers)

    return run


# --- the cases ---------------------------------------------------------------------------

SVT_LEFT = (0.0,) * 8 + (1.0,)
SVT_RIGHT = (1.0,) * 8 + (0.0,)
_HALF_ROOT2 = 0.5**0.5


def correct_cases() -> tuple[AuditCase, ...]:
    """Every mechanism of the privacy core on its worst-case pair (all must pass).

    >>> case = correct_cases()[0]
    >>> case.name, case.audit(seed=0, runs=1_000).runs
    ('laplace', 1000)
    """
    return (
        AuditCase("laplace", "laplace_mechanism, sensitivity 1", AR, 1.0, 0.0, 0.0, 1.0, "0 vs 1",
                  laplace_runner(1.0), threshold_events()),
        AuditCase("gaussian", "gaussian_mechanism, L2 sensitivity 1", AR, 1.0, 1e-2, 0.0, 1.0, "0 vs 1",
                  gaussian_runner(1.0, 1e-2), threshold_events()),
        AuditCase("exponential", "exponential_mechanism, sensitivity 1", RO, 1.0, 0.0, (0.0, 4.0), (1.0, 3.0),
                  "(0,4) vs (1,3)",
                  one_at_a_time(exponential_mechanism, epsilon=1.0, sensitivity=1.0, neighbours=RO),
                  value_events(), runs=FULL_RUNS // 10, quick_runs=QUICK_RUNS // 10),
        AuditCase("noisy_max", "report_noisy_max, sensitivity 1", RO, 1.0, 0.0, (0.0, 2.0), (1.0, 1.0),
                  "(0,2) vs (1,1)",
                  one_at_a_time(report_noisy_max, epsilon=1.0, sensitivity=1.0, neighbours=RO),
                  value_events(), runs=FULL_RUNS // 10, quick_runs=QUICK_RUNS // 10),
        AuditCase("exponential_monotone", "exponential_mechanism, monotone, sensitivity 1", AR, 1.0, 0.0,
                  (0.0, 3.0), (1.0, 3.0), "(0,3) vs (1,3)",
                  one_at_a_time(exponential_mechanism, epsilon=1.0, sensitivity=1.0, neighbours=AR, monotone=True),
                  value_events(), runs=FULL_RUNS // 10, quick_runs=QUICK_RUNS // 10),
        AuditCase("noisy_max_monotone", "report_noisy_max, monotone, sensitivity 1", AR, 1.0, 0.0,
                  (0.0, 1.0), (1.0, 1.0), "(0,1) vs (1,1)",
                  one_at_a_time(report_noisy_max, epsilon=1.0, sensitivity=1.0, neighbours=AR, monotone=True),
                  value_events(), runs=FULL_RUNS // 10, quick_runs=QUICK_RUNS // 10),
        AuditCase("gaussian_vector", "gaussian_mechanism, 2 values, L2 sensitivity 1", AR, 1.0, 1e-2,
                  (0.0, 0.0), (_HALF_ROOT2, _HALF_ROOT2), "(0,0) vs (.71,.71)",
                  gaussian_vector_runner(1.0, 1e-2, 2), threshold_events()),
        AuditCase("sparse_vector", "above_threshold, cutoff 1, threshold 0", RO, 2.0, 0.0, SVT_LEFT, SVT_RIGHT,
                  "0^8 1 vs 1^8 0", sparse_vector_runner(0.0, 1, 2.0),
                  value_events(describe=lambda c: describe_answers(c, 9)), runs=2 * FULL_RUNS),
        AuditCase("laplace_float_attack", "laplace_mechanism, SecureSampler, low-bit events", AR, 1.0, 0.0,
                  0.0, 1.0, "0 vs 1", laplace_runner(1.0), low_bit_events(), is_secure_only=True),
    )


GROUPS = ("primitives", "estimators", "persons", "all")


def all_cases(include_broken: bool = False, group: str = "all") -> tuple[AuditCase, ...]:
    """The correct cases of ``group``, then (if asked) the planted bugs of
    :mod:`privgraph.audit.broken` (the noise-halved twins of the end-to-end cases among
    them) and the estimators' known failures.

    >>> [c.name for c in all_cases(group="estimators")][:2]
    ['laplace_pc', 'laplace_pc_ties']
    """
    if group not in GROUPS:
        raise InvalidInput(f"unknown group {group!r}; choose from {', '.join(GROUPS)}")
    from privgraph.audit.estimators import estimator_cases, known_failure_cases  # cycle: audit.cases <-> audit.estimators
    from privgraph.audit.release_cases import release_cases  # cycle: audit.cases <-> audit.release_cases

    from privgraph.audit.persons import broken_person_cases, person_cases  # cycle: audit.cases <-> audit.persons

    cases = correct_cases() + estimator_cases() + release_cases() + person_cases()
    if include_broken:
        from privgraph.audit.broken import broken_cases, noise_halved_cases  # cycle: audit.cases <-> audit.broken

        cases += broken_cases() + noise_halved_cases() + known_failure_cases() + broken_person_cases()
    return tuple(c for c in cases if group == "all" or c.group == group)


def find_cases(name: str | None, include_broken: bool = False, group: str = "all") -> tuple[AuditCase, ...]:
    """All cases of ``group``, or the one called ``name`` (broken ones included when asked for by name).

    >>> [c.name for c in find_cases("laplace")]
    ['laplace']
    >>> find_cases("nope")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: unknown mechanism 'nope'; choose from laplace, gaussian, ...
    """
    if name is None:
        return all_cases(include_broken, group)
    cases = all_cases(include_broken=True)
    found = tuple(c for c in cases if c.name == name)
    if not found:
        raise InvalidInput(f"unknown mechanism {name!r}; choose from {', '.join(c.name for c in cases)}")
    return found
