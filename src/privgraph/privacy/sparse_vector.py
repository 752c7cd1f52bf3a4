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
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from privgraph.privacy.budget import Budget
from privgraph.privacy.calibration import grid_for, grid_shift
from privgraph.privacy.ledger import Charge, Ledger
from privgraph.privacy.mechanisms import Release, _pay
from privgraph.privacy.neighbours import (
    Neighbours,
    check_count,
    check_epsilon,
    check_sensitivity,
)
from privgraph.privacy.samplers import PURE_DP_SLACK, NoiseSampler

_CLAMP_UNITS = 2**50


class SparseVector:
    """An online AboveThreshold session: ask queries one at a time with :meth:`test`.

    The whole session is charged (epsilon, 0) when it is created, before any noise is
    drawn; the queries may be chosen adaptively (e.g. by a PC loop that removes edges).

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
        epsilon = check_epsilon(epsilon)
        sensitivity = check_sensitivity(sensitivity)
        if sensitivity == 0:
            raise ValueError("sensitivity must be positive for the sparse vector, got 0")
        self.cutoff = check_count(cutoff, "cutoff")
        self.max_queries = check_count(max_queries, "max_queries")
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {threshold!r}")
        slack = PURE_DP_SLACK * (self.max_queries + self.cutoff + 1)
        if epsilon <= 2 * slack:
            raise ValueError(f"epsilon must exceed {2 * slack:.3g} for {max_queries} queries, got {epsilon!r}")
        charge = Charge(
            "sparse_vector", epsilon, 0.0, Neighbours.parse(neighbours), sensitivity=sensitivity,
            slack=slack, note=f"cutoff {self.cutoff}" + (", monotone" if monotone else ""),
        )
        self.ledger: Ledger = _pay(charge, budget)
        self._sampler = sampler
        self._grid = grid_for(sensitivity)
        shift = grid_shift(sensitivity, self._grid)
        eps1 = (epsilon - slack) / 2
        eps2 = (epsilon - slack) - eps1
        self._query_scale = (1 if monotone else 2) * self.cutoff * shift / eps2  # grid units
        rho = int(sampler.discrete_laplace(shift / eps1, 1)[0])
        self._threshold_units = self._units(threshold) + rho
        self.asked = 0
        self.positives = 0

    def _units(self, value: float) -> int:
        return int(np.round(np.clip(value / self._grid, -_CLAMP_UNITS, _CLAMP_UNITS)))

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
            raise ValueError(f"query value must be finite, got {query_value!r}")
        self.asked += 1
        noise = int(self._sampler.discrete_laplace(self._query_scale, 1)[0])
        above = self._units(query_value) + noise >= self._threshold_units
        self.positives += int(above)
        return bool(above)


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
    See the module docstring for the construction and the non-private variants.

    >>> from privgraph.privacy import SeededSampler
    >>> answers, ledger = above_threshold([0.0, 0.0, 500.0, 0.0], threshold=250.0, cutoff=1,
    ...     epsilon=1.0, sensitivity=1.0, neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(4))
    >>> answers
    [False, False, True]
    """
    try:
        values = np.asarray(list(queries), dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"queries must be numbers, got {queries!r}") from None
    if values.ndim != 1 or not np.all(np.isfinite(values)):
        raise ValueError(f"queries must be a 1-D sequence of finite numbers, got {values!r}")
    svt = SparseVector(
        threshold=threshold, cutoff=cutoff, epsilon=epsilon, sensitivity=sensitivity,
        neighbours=neighbours, sampler=sampler, monotone=monotone,
        max_queries=max(1, values.size), budget=budget,
    )
    answers = []
    for q in values:
        answers.append(svt.test(float(q)))
        if svt.halted:
            break
    return Release(answers, svt.ledger)
