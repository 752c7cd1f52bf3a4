"""Conditional-independence tests as small interchangeable objects.

Every test reads one contingency table with axes ``(x, y, s_1, ..., s_k)`` (x and y
first, the conditioning variables after, as ``engine.counts([x, y, *S])`` returns it) and
offers the same five things, so that the discovery algorithms can take any of them:

``statistic(table)``
    A number >= 0; larger means more evidence of dependence.
``pvalue(table)``
    The p-value of the null hypothesis "x independent of y given S".
``threshold(alpha, table=None)``
    The critical value: ``statistic > threshold`` exactly when ``pvalue < alpha``.
    For the rank tests it depends on alpha only (``has_public_threshold`` is True), so a
    private algorithm may compare a noisy statistic with it. The G and chi-square
    thresholds depend on the table's degrees of freedom and need ``table``.
``sensitivity(n, neighbours, shape)``
    Global sensitivity of ``statistic`` over neighbouring datasets whose smaller one has
    ``n`` rows (see :mod:`privgraph.stats.sensitivity` for this convention), for a table of
    ``shape``. ``math.inf`` where no finite bound exists (G, chi-square); a mechanism's
    ``check_sensitivity`` then refuses it.
``threshold_sensitivity(alpha, n, neighbours, shape)``
    The same for ``threshold(alpha, table)``: 0 for a public threshold; finite for the
    tie-corrected Kendall test, whose threshold ``T * r`` reads the table's margins. A test
    with ``bounded_margin`` (the stratified rank tests) has both finite, so a private
    decider can add noise to ``threshold - statistic`` directly
    (:class:`privgraph.causal.margins.RankMargin`).
``decide(table, alpha)``
    A :class:`CIResult`: statistic, p-value, threshold and the verdict.
``evaluate(table)``
    ``(statistic, pvalue)`` computed together (what ``decide`` uses).
``decide_strata(strata, owner, count, alpha)``
    The verdicts of ``decide`` for a batch of ``count`` tables given as their nonempty
    strata (:func:`privgraph.causal.pc_counting.strata`), as one boolean array, vectorised over
    the batch. A test whose verdict depends on empty strata must override it.

**No information is not independence** (see :mod:`privgraph.stats.strata`). When every
stratum of the table is degenerate (x or y constant in it, or too few rows: zero degrees
of freedom for G and chi-square, no stratum entering the rank statistics), ``decide``
says *dependent* and the edge stays: ``degenerate="dependent"``, the default of every
test. ``degenerate="independent"`` is causal-learn's convention (p = 1, independent).
``statistic`` and ``pvalue`` are unchanged by the convention; only the verdict is.

Nothing here spends privacy budget or draws noise: that happens in the algorithms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.special import chdtri, ndtri

from privgraph.privacy.neighbours import Neighbours
from privgraph.stats.gtest import (
    ColumnBlocks,
    chi_square_by_stratum,
    chi_square_strata,
    degrees_of_freedom,
    g_by_stratum,
    g_test_strata,
)
from privgraph.stats.kendall import conditional_kendall, kendall_terms, kendall_tie_scale, kendall_tie_scales
from privgraph.stats.sensitivity import (
    conditional_kendall_sensitivity_add_remove,
    conditional_kendall_sensitivity_replace_one,
    conditional_spearman_sensitivity_add_remove,
    conditional_spearman_sensitivity_replace_one,
    kendall_tie_scale_sensitivity_add_remove,
    kendall_tie_scale_sensitivity_replace_one,
)
from privgraph.stats.spearman import conditional_spearman, spearman_terms
from privgraph.stats.strata import (
    DEPENDENT,
    MIN_STRATUM,
    as_strata,
    check_convention,
    has_information,
    stratum_distances,
    two_sided_pvalue,
)
from privgraph.validation import InvalidInput, check_share


@dataclass(frozen=True)
class CIResult:
    """One test's outcome: ``is_independent`` is ``statistic <= threshold``, unless the
    table has no information and the convention is "dependent" (then False)."""

    statistic: float
    pvalue: float
    threshold: float
    alpha: float
    is_independent: bool


class CITest:
    """Base of the tests: a subclass defines ``evaluate``, ``threshold`` and ``sensitivity``."""

    name: str = "ci-test"
    has_public_threshold: bool = True
    #: ``threshold - statistic`` has a finite global sensitivity (see the module docstring).
    bounded_margin: bool = False
    degenerate: str = DEPENDENT
    #: Fewest rows a stratum needs to carry information for this statistic.
    min_rows: int = MIN_STRATUM

    def evaluate(self, table) -> tuple[float, float]:
        """``(statistic, pvalue)`` of one table, computed together."""
        raise NotImplementedError

    def statistic(self, table) -> float:
        return self.evaluate(table)[0]

    def pvalue(self, table) -> float:
        return self.evaluate(table)[1]

    def threshold(self, alpha: float, table=None) -> float:
        raise NotImplementedError

    def sensitivity(self, n: int, neighbours: Neighbours | str, shape: Sequence[int]) -> float:
        raise NotImplementedError

    def threshold_sensitivity(self, alpha: float, n: int, neighbours: Neighbours | str,
                              shape: Sequence[int]) -> float:
        """Global sensitivity of ``threshold(alpha, table)``: 0 when it is public."""
        Neighbours.parse(neighbours)
        return 0.0 if self.has_public_threshold else math.inf

    def decide(self, table, alpha: float) -> CIResult:
        """Statistic, p-value, threshold and verdict at level ``alpha`` for one table."""
        alpha = check_alpha(alpha)
        (stat, p), threshold = self.evaluate(table), self.threshold(alpha, table)
        independent = bool(stat <= threshold)
        if independent and self.degenerate == DEPENDENT:
            independent = has_information(table, self.min_rows)
        return CIResult(stat, p, threshold, alpha, independent)

    def decide_strata(self, strata: np.ndarray, owner: np.ndarray, count: int, alpha: float) -> np.ndarray:
        """``decide(table, alpha).is_independent`` for each of ``count`` tables given by their
        nonempty strata: ``strata`` (K, r, c) and ``owner`` (K,), the table of each stratum.
        Here one table at a time; the tests below do it in one vectorised pass.

        >>> strata = np.array([[[40, 10], [10, 40]], [[25, 25], [25, 25]]])
        >>> GTest().decide_strata(strata, np.array([0, 1]), 2, 0.05).tolist()
        [False, True]
        >>> CITest.decide_strata(GTest(), strata, np.array([0, 1]), 2, 0.05).tolist()
        [False, True]
        """
        out = np.zeros(count, dtype=bool)
        for t in range(count):
            own = strata[owner == t]
            table = own.transpose(1, 2, 0) if len(own) else np.zeros((*strata.shape[1:], 1), dtype=np.int64)
            out[t] = self.decide(table, alpha).is_independent
        return out

    def _with_information(self, independent: np.ndarray, strata: np.ndarray, owner: np.ndarray,
                          count: int) -> np.ndarray:
        """``independent``, except "dependent" for tables with no information under the
        default convention (as :meth:`decide`)."""
        if self.degenerate != DEPENDENT:
            return independent
        keep = strata.sum(axis=(1, 2)) >= self.min_rows  # smaller strata are degenerate
        return independent & (np.bincount(owner[keep], stratum_distances(strata[keep], self.min_rows), count) > 0)


@dataclass(frozen=True)
class _StratifiedZTest(CITest):
    """``|z|`` of a stratified rank statistic, two-sided normal p-value, public threshold."""

    degenerate: str = DEPENDENT
    bounded_margin = True

    def __post_init__(self):
        check_convention(self.degenerate)

    def _z(self, table):
        raise NotImplementedError

    def _terms(self, strata):
        raise NotImplementedError

    def decide_strata(self, strata: np.ndarray, owner: np.ndarray, count: int, alpha: float) -> np.ndarray:
        """:meth:`CITest.decide_strata` in one pass: each table's z summed from its strata."""
        independent = self.statistics_strata(strata, owner, count) <= self.thresholds_strata(alpha, strata, owner, count)
        return self._with_information(independent, strata, owner, count)

    def statistics_strata(self, strata: np.ndarray, owner: np.ndarray, count: int) -> np.ndarray:
        """:meth:`statistic` (``|z|``) of each of ``count`` tables given by their nonempty
        strata (as :meth:`decide_strata`), in one pass.

        >>> strata = np.array([[[40, 10], [10, 40]], [[25, 25], [25, 25]]])
        >>> t = KendallTest()
        >>> t.statistics_strata(strata, np.array([0, 1]), 2).round(6).tolist() == [
        ...     round(t.statistic(strata[0]), 6), round(t.statistic(strata[1]), 6)]
        True
        """
        keep = strata.sum(axis=(1, 2)) >= MIN_STRATUM
        numerators, weights = self._terms(strata[keep])
        a = np.bincount(owner[keep], numerators, count)
        w = np.bincount(owner[keep], weights, count)
        return np.abs(np.divide(a, np.sqrt(w), out=np.zeros(count), where=w > 0))

    def thresholds_strata(self, alpha: float, strata: np.ndarray, owner: np.ndarray, count: int) -> np.ndarray:
        """:meth:`threshold` of each of ``count`` tables given by their nonempty strata."""
        return np.broadcast_to(self.critical_value(alpha) * self._scales(strata, owner, count), (count,))

    def _scales(self, strata, owner, count) -> np.ndarray | float:
        """Each table's threshold scale (1 here; see :class:`KendallTest`)."""
        return 1.0

    def evaluate(self, table) -> tuple[float, float]:
        """``(|z|, two-sided p-value)``."""
        z = self._z(table)
        return abs(z.z), z.pvalue

    def statistic(self, table) -> float:
        """``|z|`` alone (a private margin reads it without the p-value)."""
        return abs(self._z(table).z)

    def critical_value(self, alpha: float) -> float:
        """``T = Phi^-1(1 - alpha / 2)``, public: the threshold, or its largest value."""
        return float(-ndtri(check_alpha(alpha) / 2.0))

    def threshold(self, alpha: float, table=None) -> float:
        """``Phi^-1(1 - alpha / 2)``: the same for every table."""
        return self.critical_value(alpha)

    def sensitivity(self, n: int, neighbours: Neighbours | str, shape: Sequence[int]) -> float:
        bound = self._bounds[Neighbours.parse(neighbours)]
        return bound(n, strata_of(shape))


@dataclass(frozen=True)
class KendallTest(_StratifiedZTest):
    """Stratified Kendall tau-a z test (priv-pc.txt Appendix D; the Priv-PC test).

    ``tie_corrected=True`` ("kendall-ties"): the same ``|z|``, compared with
    ``T * max(r, tie_floor)`` instead of T, r the tie scale of
    :func:`~privgraph.stats.kendall.kendall_tie_scale` (the statistic's null standard
    deviation with ties over the one without, from the strata's margins): the test the
    paper's z makes on untied data, calibrated on tied data. The p-value is that of
    ``z / max(r, tie_floor)``. The threshold reads the table, so its sensitivity (``T``
    times the scale's, of order 1/n) is added to the margin's. ``tie_floor`` (public, 0 by
    default) is set by the private deciders from their noise
    (:class:`~privgraph.causal.margins.RankMargin`): noise that would drown a threshold of
    ``T r`` keeps a higher one; a floor of 1 is the paper's test.

    Examples
    --------
    >>> t = np.array([[40, 10], [10, 40]])
    >>> test = KendallTest()
    >>> r = test.decide(t, alpha=0.05)
    >>> r.is_independent, round(r.threshold, 4)
    (False, 1.96)
    >>> round(test.sensitivity(100, "add_remove", t.shape), 4)
    0.5342

    Two binary columns with rare levels: 1.65 under the paper's variance, dependent once
    ties are counted (the threshold drops from 1.96 to 1.96 r):

    >>> rare = np.array([[89127, 873], [9710, 290]])
    >>> KendallTest().decide(rare, 0.05).is_independent
    True
    >>> r = KendallTest(tie_corrected=True).decide(rare, 0.05)
    >>> r.is_independent, round(r.statistic, 2), round(r.threshold, 2)
    (False, 1.65, 0.27)
    """

    name: str = "kendall"
    tie_corrected: bool = False
    tie_floor: float = 0.0
    _bounds = {
        Neighbours.ADD_REMOVE: conditional_kendall_sensitivity_add_remove,
        Neighbours.REPLACE_ONE: conditional_kendall_sensitivity_replace_one,
    }
    _tie_bounds = {
        Neighbours.ADD_REMOVE: kendall_tie_scale_sensitivity_add_remove,
        Neighbours.REPLACE_ONE: kendall_tie_scale_sensitivity_replace_one,
    }

    def __post_init__(self):
        super().__post_init__()
        if not (isinstance(self.tie_floor, (int, float)) and 0.0 <= self.tie_floor < math.inf):
            raise InvalidInput(f"tie_floor must be a number >= 0, got {self.tie_floor!r}")
        if self.tie_corrected and self.name == "kendall":
            object.__setattr__(self, "name", "kendall-ties")  # what reports and plans print

    def _z(self, table):
        return conditional_kendall(table)

    def _terms(self, strata):
        return kendall_terms(strata)

    def evaluate(self, table) -> tuple[float, float]:
        """``(|z|, p)``, p the two-sided p-value of ``z / r`` when tie-corrected."""
        z = self._z(table)
        if not self.has_public_threshold:
            return abs(z.z), two_sided_pvalue(z.z / self._scale(table))
        return abs(z.z), z.pvalue

    @property
    def has_public_threshold(self) -> bool:
        return not self.tie_corrected or self.tie_floor >= 1.0

    def _scale(self, table) -> float:
        return max(kendall_tie_scale(table), self.tie_floor)

    def threshold(self, alpha: float, table=None) -> float:
        """T, or ``T * max(r(table), tie_floor)`` when tie-corrected (then ``table`` is needed)."""
        if self.has_public_threshold:
            return self.critical_value(alpha)
        if table is None:
            raise InvalidInput("the tie-corrected Kendall threshold depends on the table's margins: pass table=")
        return self.critical_value(alpha) * self._scale(table)

    def threshold_sensitivity(self, alpha: float, n: int, neighbours: Neighbours | str,
                              shape: Sequence[int]) -> float:
        """0, or ``T`` times the floored tie scale's sensitivity
        (:func:`~privgraph.stats.sensitivity.kendall_tie_scale_sensitivity_add_remove`)."""
        bound = self._tie_bounds[Neighbours.parse(neighbours)]
        if self.has_public_threshold:
            return 0.0
        return self.critical_value(alpha) * bound(n, strata_of(shape), self.tie_floor)

    def _scales(self, strata, owner, count):
        if self.has_public_threshold:
            return 1.0
        return np.maximum(kendall_tie_scales(strata, owner, count), self.tie_floor)


@dataclass(frozen=True)
class SpearmanTest(_StratifiedZTest):
    """Stratified Spearman rho-a z test (priv-pc.txt Appendix E).

    >>> SpearmanTest().decide(np.array([[40, 10], [10, 40]]), alpha=0.05).is_independent
    False
    """

    name: str = "spearman"
    _bounds = {
        Neighbours.ADD_REMOVE: conditional_spearman_sensitivity_add_remove,
        Neighbours.REPLACE_ONE: conditional_spearman_sensitivity_replace_one,
    }

    def _z(self, table):
        return conditional_spearman(table)

    def _terms(self, strata):
        return spearman_terms(strata)


@dataclass(frozen=True)
class _ChiSquareFamily(CITest):
    degenerate: str = DEPENDENT
    has_public_threshold = False
    min_rows = 2

    def __post_init__(self):
        check_convention(self.degenerate)

    def _result(self, table):
        raise NotImplementedError

    def _by_stratum(self, strata):
        raise NotImplementedError

    def decide_strata(self, strata: np.ndarray | ColumnBlocks, owner: np.ndarray, count: int,
                      alpha: float) -> np.ndarray:
        """:meth:`CITest.decide_strata` in one pass: statistics and degrees of freedom summed
        over each table's strata (dof 0 is exactly "no information"). ``strata`` may also
        be :class:`~privgraph.stats.gtest.ColumnBlocks` (empty strata among them count
        nothing), ``owner`` then giving the table of each of its strata."""
        alpha = check_alpha(alpha)
        stats, dofs = self._by_stratum(strata)
        stat = np.maximum(np.bincount(owner, stats, count), 0.0)
        dof = np.bincount(owner, dofs, count)
        distinct, where = np.unique(np.maximum(dof, 1.0), return_inverse=True)  # chdtri: ~0.3 us a value
        informed = stat <= chdtri(distinct, alpha)[where]
        return np.where(dof > 0, informed, self.degenerate != DEPENDENT)

    def evaluate(self, table) -> tuple[float, float]:
        """``(statistic, p-value)`` with the zero-degrees-of-freedom rule."""
        r = self._result(as_strata(table))
        return r.statistic, r.pvalue

    def threshold(self, alpha: float, table=None) -> float:
        """The chi-square critical value at this table's degrees of freedom (inf if 0)."""
        alpha = check_alpha(alpha)
        if table is None:
            raise InvalidInput(f"the {self.name} threshold depends on the table's degrees of freedom: pass table=")
        dof = degrees_of_freedom(table)
        return math.inf if dof == 0 else float(chdtri(dof, alpha))

    def decide(self, table, alpha: float) -> CIResult:
        """As :meth:`CITest.decide`, the strata and degrees of freedom computed once (dof 0
        is exactly "no information" here)."""
        alpha = check_alpha(alpha)
        r = self._result(as_strata(table))
        threshold = math.inf if r.dof == 0 else float(chdtri(r.dof, alpha))
        independent = r.statistic <= threshold and (r.dof > 0 or self.degenerate != DEPENDENT)
        return CIResult(r.statistic, r.pvalue, threshold, alpha, bool(independent))

    def sensitivity(self, n: int, neighbours: Neighbours | str, shape: Sequence[int]) -> float:
        """``math.inf``: one row in a cell expected near 0 moves the statistic without bound."""
        Neighbours.parse(neighbours)
        return math.inf


@dataclass(frozen=True)
class GTest(_ChiSquareFamily):
    """The G test with the zero-degrees-of-freedom rule of :mod:`privgraph.stats.gtest`.

    >>> r = GTest().decide(np.array([[5, 0], [0, 0]]), alpha=0.05)   # dof 0: no information
    >>> r.is_independent, r.pvalue, r.threshold
    (False, 1.0, inf)
    >>> GTest(degenerate="independent").decide(np.array([[5, 0], [0, 0]]), alpha=0.05).is_independent
    True
    """

    name: str = "g-test"

    def _result(self, strata):
        return g_test_strata(strata)

    def _by_stratum(self, strata):
        return g_by_stratum(strata)


@dataclass(frozen=True)
class ChiSquareTest(_ChiSquareFamily):
    """Pearson's chi-square test, same degrees-of-freedom rule as :class:`GTest`.

    >>> ChiSquareTest().decide(np.array([[40, 10], [10, 40]]), alpha=0.05).is_independent
    False
    """

    name: str = "chi-square"

    def _result(self, strata):
        return chi_square_strata(strata)

    def _by_stratum(self, strata):
        return chi_square_by_stratum(strata)


def strata_of(shape: Sequence[int]) -> int:
    """Number of strata of a table of ``shape`` (x, y, conditioning...): the product after two.

    >>> strata_of((2, 3)), strata_of((2, 3, 4, 2))
    (1, 8)
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) < 2 or min(shape) < 1:
        raise InvalidInput(f"shape must list >= 2 positive sizes (x, y, conditioning...), got {shape}")
    return int(np.prod(shape[2:], dtype=np.int64))


def check_alpha(alpha: float) -> float:
    """``alpha`` as a float in (0, 1).

    >>> check_alpha(1.5)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: alpha must lie in (0, 1), got 1.5
    """
    return check_share(alpha, "alpha")  # the one share kind (privgraph.validation), one message
