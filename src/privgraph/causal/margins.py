"""What a private decider asks about one test: a *margin* with sensitivity 1 under replace-one.

A margin is ``>= 0`` when the test says "independent" and is normalised so that one
replaced row moves it by at most 1; the private deciders add noise to margins only.
Two kinds, chosen by the CI test:

* :class:`RankMargin` (Kendall, Spearman: a threshold T on ``|z|``):
  ``(T - |z|) / Delta(n, K)``, with Delta the replace-one sensitivity of ``|z|`` for n rows
  and K strata from :mod:`privgraph.stats.sensitivity`. n is the number of rows the
  table counts (a sub-sample's m on a sub-sample): public under replace-one. The
  tie-corrected Kendall test's threshold ``T * g``, ``g = max(r, f)``, reads the table's
  margins (r, the tie scale) and a public floor f: its margin is
  ``(T g - |z|) / (Delta + T Delta_g)``, Delta_g the floored scale's sensitivity
  (``CITest.threshold_sensitivity``); by the triangle inequality one row moves the
  numerator by at most the denominator. The floor is ``f = min(1, 3 b Delta / T)``, b
  the decider's noise in margin units (public): a threshold lowered below what the noise
  can resolve would turn independent pairs into noise-made dependences; with f = 1 (large noise) the margin is the paper's, as noise vanishes it is the
  calibrated test.
  With the default convention "no information is not independence" the margin is
  ``min((T - |z|) / Delta, H - c)``, H the degeneracy distance of
  :func:`privgraph.stats.strata.degeneracy_distance` and c a public shift: a table whose
  strata are all degenerate (H = 0) gets at most ``-c`` (dependent: the edge stays), and a
  table with ``H >= c + (T - |z|) / Delta`` the plain margin. c is
  ``max(1/2, min(T / Delta, 3 b))`` (T the public critical value, Delta the margin's
  whole sensitivity) where b is the decider's noise scale in margin units
  (:meth:`RankMargin.expect_noise`; 0 without noise): far enough below 0 that noise rarely
  flips a degenerate table, never further than ``z = 0`` is on the other side, and 1/2 as
  noise vanishes, where the sign matches the non-private rule exactly (H >= 1 on every
  informative table). **Sensitivity with the rule in it.** One replaced row can make a
  stratum degenerate or not, which moves |z| by at most Delta (Delta bounds |z| over *all*
  neighbouring tables, the no-stratum case z = 0 included) and H by at most 1 (its
  docstring); c is public, so both terms are 1-Lipschitz in the replace-one distance and
  so is their minimum: the margin keeps sensitivity 1. (A rule that set the margin to a
  constant on degenerate tables would not: one row could move it by about T / Delta,
  ~100 units at n = 1e5.)
* :class:`BlockVotes` (G, chi-square: no useful global sensitivity): subsample-and-
  aggregate (priv-pc.txt Appendix F) with a query that *has* one. The data is split at
  random (secretly) into B disjoint blocks; the margin is the number of blocks whose test
  says "independent" minus B/2. A replaced row lies in one block and changes at most
  one vote: sensitivity 1. (The appendix's smooth-sensitivity median of block statistics
  is not a query with a global sensitivity, so it cannot sit inside the sparse vector;
  it also needs thousands of blocks to be stable.)
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import numpy as np

from privgraph.causal import pc_counting
from privgraph.data.tables import BlockView, Tables
from privgraph.privacy import Neighbours, NoiseSampler
from privgraph.stats import CITest
from privgraph.stats.ci_test import check_alpha, strata_of
from privgraph.stats.kendall import kendall_weight
from privgraph.stats.strata import DEPENDENT, INDEPENDENT, degeneracy_distance, stratum_distances
from privgraph.validation import InvalidInput, positive_int

RO = Neighbours.REPLACE_ONE
#: The tie-corrected test's floor keeps the independence margin ``T f / Delta`` at this many
#: noise scales at least.
TIE_FLOOR_NOISES = 3.0


class RankMargin:
    """``(T - |z|) / Delta``: the normalised margin of a stratified rank test.

    Examples
    --------
    >>> import numpy as np
    >>> from privgraph.data import Domain, NumpyEngine
    >>> from privgraph.stats import KendallTest
    >>> x = np.random.default_rng(0).integers(0, 2, size=(1000, 2))
    >>> t = Tables.from_engine(NumpyEngine(Domain.of(a=2, b=2), x))
    >>> margin = RankMargin(KendallTest(), alpha=0.05)
    >>> margin(t, "a", "b", ()) > 0      # independent columns: a positive margin
    True
    >>> y = np.zeros((1000, 2), dtype=int); y[:, 0] = x[:, 0]   # b constant: no information
    >>> t = Tables.from_engine(NumpyEngine(Domain.of(a=2, b=2), y))
    >>> bool(margin(t, "a", "b", ()) < 0), bool(RankMargin(KendallTest(degenerate="independent"), 0.05)(t, "a", "b", ()) > 0)
    (True, True)
    """

    def __init__(self, test: CITest, alpha: float):
        if not test.bounded_margin:
            raise InvalidInput(f"the {test.name} test's margin has no useful global sensitivity; use BlockVotes")
        self.test, self.alpha = test, check_alpha(alpha)
        self.threshold = test.critical_value(self.alpha)  # T (public): the threshold's largest value
        self._sens: dict[tuple[int, int], tuple[CITest, float]] = {}
        self.noise, self.rows = 0.0, None

    def expect_noise(self, scale: float, rows: int | None = None) -> None:
        """The decider's noise scale in margin units (public): sets the degenerate shift c
        and the tie-corrected test's floor, the latter for tests on ``rows`` rows (public:
        the examine's, so that a sieve on a sub-sample screens against the same threshold;
        None: each view's own)."""
        self.noise, self.rows = float(scale), rows
        self._sens.clear()

    def prepare(self, tables: Tables, sampler: NoiseSampler) -> Tables:
        return tables

    def sensitivity(self, n: int, shape: Sequence[int]) -> float:
        """Replace-one sensitivity of ``threshold - |z|`` over n rows, for a table of ``shape``."""
        return self._test_at(n, shape)[1]

    def _test_at(self, n: int, shape: Sequence[int]) -> tuple[CITest, float]:
        """The test at n rows and this shape (its tie floor set from the noise, if it has one)
        and the sensitivity of its margin's numerator."""
        key = (int(n), strata_of(shape))
        if key not in self._sens:
            dz = self.test.sensitivity(n, RO, shape)
            test = self.test
            if not test.has_public_threshold:  # tie-corrected: f = min(1, 3 b Delta / T), Delta at self.rows
                ref = dz if self.rows is None else self.test.sensitivity(self.rows, RO, shape)
                test = replace(test, tie_floor=min(1.0, TIE_FLOOR_NOISES * self.noise * ref / self.threshold))
            self._sens[key] = (test, dz + test.threshold_sensitivity(self.alpha, n, RO, shape))
        return self._sens[key]

    def __call__(self, view: Tables, x: str, y: str, S: tuple, *, screening: bool = False) -> float:
        """The margin; ``screening=True`` (a sieve's sub-sample) drops the degenerate rule, so
        a sub-sample with no information defers to the full data instead of keeping the edge."""
        cols = (x, y, *S)
        table = view.table(cols)
        test, unit = self._test_at(view.n, view.shape(cols))
        plain = (test.threshold(self.alpha, table) - test.statistic(table)) / unit
        if screening or self.test.degenerate != DEPENDENT:
            return plain
        return min(plain, degeneracy_distance(table, self.test.min_rows) - self._shift(unit))

    def _shift(self, unit: float) -> float:
        """The degenerate rule's shift c (public: the noise and the unit)."""
        return max(0.5, min(self.threshold / unit, 3.0 * self.noise))

    def batch(self, view: Tables, x: str, y: str, sets: Sequence[tuple]) -> np.ndarray:
        """``[self(view, x, y, S) for S in sets]`` (the sets all of one size), the tables
        counted together (:func:`~privgraph.causal.pc_counting.strata`, in batches of
        :func:`~privgraph.causal.pc_counting.sets_per_batch`) and
        the test's statistics and thresholds computed for a batch at once
        (``statistics_strata``, ``thresholds_strata``): the same margins, up to the order
        in which a table's strata are summed. A test that cannot take strata is asked set
        by set.

        >>> import numpy as np
        >>> from privgraph.data import Domain, NumpyEngine
        >>> from privgraph.stats import KendallTest
        >>> x = np.random.default_rng(0).integers(0, 3, size=(2000, 4))
        >>> t = Tables.from_engine(NumpyEngine(Domain.of(a=3, b=3, c=3, d=3), x))
        >>> m = RankMargin(KendallTest(), alpha=0.05)
        >>> sets = [("c",), ("d",)]
        >>> np.allclose(m.batch(t, "a", "b", sets), [m(t, "a", "b", S) for S in sets], rtol=1e-12, atol=0)
        True
        """
        sets = [tuple(S) for S in sets]
        if not hasattr(self.test, "statistics_strata"):
            return np.array([self(view, x, y, S) for S in sets], dtype=float)
        out = np.empty(len(sets))
        step = max(1, pc_counting.sets_per_batch(view, x, y))
        for start in range(0, len(sets), step):
            part = sets[start:start + step]
            strata, owner = pc_counting.strata(view, x, y, part)
            out[start:start + len(part)] = self._batch_margins(view, x, y, part, strata, owner)
        return out

    def _batch_margins(self, view, x, y, sets, strata, owner) -> np.ndarray:
        """The margins of one counted batch (see :meth:`batch`)."""
        count = len(sets)
        tests, units = zip(*(self._test_at(view.n, view.shape((x, y, *S))) for S in sets))
        units = np.array(units)
        thresholds = np.empty(count)
        for test in set(tests):  # one per tie floor (a shape's), often one in all
            mine = np.array([t == test for t in tests])
            thresholds[mine] = test.thresholds_strata(self.alpha, strata, owner, count)[mine]
        plain = (thresholds - self.test.statistics_strata(strata, owner, count)) / units
        if self.test.degenerate != DEPENDENT:
            return plain
        distance = np.bincount(owner, stratum_distances(strata, self.test.min_rows), count)
        return np.minimum(plain, distance - np.array([self._shift(u) for u in units]))

    def useful_noise(self, n: int) -> float:
        """Noise (normalised units) beyond which a marginal test at n rows is drowned: T / Delta."""
        return self.threshold / self.sensitivity(n, (2, 2))

    def units(self, n: int) -> float:
        """One normalised unit in statistic units (``|z|``) for a marginal test at n rows."""
        return self.sensitivity(n, (2, 2))


class TooFewRows(InvalidInput):
    """Fewer rows than a test's blocks need (public: the blocks and the public n). The release's
    planner reads it as "Priv-PC cannot run at this size" and passes it over
    (:func:`privgraph.release.planner.priv_pc_release`)."""


class BlockVotes:
    """Votes for independence over B secret disjoint blocks, minus B/2 (sensitivity 1).

    Examples
    --------
    >>> import numpy as np
    >>> from privgraph.data import Domain, NumpyEngine
    >>> from privgraph.privacy import SeededSampler
    >>> from privgraph.stats import GTest
    >>> x = np.random.default_rng(1).integers(0, 2, size=(4000, 2))
    >>> t = Tables.from_engine(NumpyEngine(Domain.of(a=2, b=2), x))
    >>> votes = BlockVotes(GTest(), alpha=0.05, blocks=20)
    >>> votes(votes.prepare(t, SeededSampler(0)), "a", "b", ()) > 0
    True
    """

    def __init__(self, test: CITest, alpha: float, blocks: int = 50):
        self.blocks = positive_int("blocks", blocks, whole_floats=True)
        self.test, self.alpha = test, check_alpha(alpha)

    def prepare(self, tables: Tables, sampler: NoiseSampler) -> BlockView:
        if tables.n < 2 * self.blocks:
            raise TooFewRows(f"{tables.n} rows are too few for {self.blocks} blocks of at least 2 rows")
        return tables.blocks(self.blocks, sampler)

    def __call__(self, view: BlockView, x: str, y: str, S: tuple, *, screening: bool = False) -> float:
        stacked = view.table((x, y, *S))
        test = replace(self.test, degenerate=INDEPENDENT) if screening else self.test
        votes = sum(test.decide(t, self.alpha).is_independent for t in stacked)
        return votes - view.count / 2.0

    def batch(self, view: BlockView, x: str, y: str, sets: Sequence[tuple]) -> np.ndarray:
        """``[self(view, x, y, S) for S in sets]`` (each block's tables are counted on their own)."""
        return np.array([self(view, x, y, S) for S in sets], dtype=float)

    def useful_noise(self, n: int) -> float:
        return self.blocks / 2.0

    def expect_noise(self, scale: float, rows: int | None = None) -> None:
        """Nothing to calibrate: each block's test applies the convention itself."""

    def units(self, n: int) -> float:
        return 1.0


def make_margin(test: CITest, alpha: float, blocks: int = 50):
    """The margin that suits ``test``: RankMargin with a public threshold, else BlockVotes.

    >>> from privgraph.stats import GTest, KendallTest
    >>> type(make_margin(KendallTest(), 0.05)).__name__, type(make_margin(GTest(), 0.05)).__name__
    ('RankMargin', 'BlockVotes')
    """
    return RankMargin(test, alpha) if test.bounded_margin else BlockVotes(test, alpha, blocks)


def noise_needed(useful: float, noise_per_unit_epsilon: float) -> float:
    """The epsilon at which a noise scale ``noise_per_unit_epsilon / epsilon`` equals ``useful``.

    >>> noise_needed(2.0, 4.0)
    2.0
    """
    return noise_per_unit_epsilon / useful if math.isfinite(useful) and useful > 0 else math.inf


# --- level 0 in one release: the vector of every pair's Kendall margin ----------------------


def kendall_pair_unit(n: int) -> float:
    """``18 (n - 1) / ((2n + 5) sqrt(w(n)))``: replace-one bound on a single stratum's ``|z|``.

    For one stratum of n >= 3 rows ``z = c_n S`` with ``c_n = 9 / ((2n + 5) sqrt(w(n)))``
    (tau-a's ``S = C - D``, :func:`privgraph.stats.kendall.kendall_weight`), and one replaced
    row moves S by at most ``2 (n - 1)``: this unit is ``c_n 2 (n - 1)``, the ``K = 1`` case of
    :func:`privgraph.stats.sensitivity.conditional_kendall_sensitivity_replace_one`
    (which returns at most this).

    >>> round(kendall_pair_unit(10_000) * 100, 3)
    5.999
    """
    return 18.0 * (n - 1) / ((2.0 * n + 5.0) * math.sqrt(kendall_weight(float(n))))


def kendall_pairs_l2_sensitivity(columns: int, *, with_degeneracy: bool) -> float:
    """L2 sensitivity, under replace-one, of every pair's level-0 Kendall margin released together.

    The vector holds, for pairs of ``columns`` = d columns, the plain margins
    ``(T - |z_xy|) / u_n`` (``u_n`` = :func:`kendall_pair_unit`), and with the degenerate
    rule also each column's ``h_x = n - (count of x's most frequent value)``. Returns
    ``sqrt(floor(d/2) ceil(d/2) + d)`` (without the rule, ``sqrt(floor(d/2) ceil(d/2))``),
    against ``sqrt(d (d - 1) / 2)`` from the per-pair sensitivity 1 alone: about 1/sqrt(2)
    of it on wide tables.

    **Derivation.** Replace row r by r'. For every other row j let ``a_x = sign(r'_x - j_x)``
    and ``b_x = sign(r_x - j_x)``, in {-1, 0, 1}. Row j's pair with r adds ``b_x b_y`` to
    ``S_xy`` and with r' adds ``a_x a_y``, and no other pair of rows changes, so
    ``Delta S = sum_j v_j`` with ``(v_j)_xy = a_x a_y - b_x b_y`` and
    ``||Delta S||_2 <= (n - 1) max ||v||_2``. Expanding,
    ``||v||^2 = C(p, 2) + C(q, 2) - 2 sum_{x<y} t_x t_y`` with ``t = a b`` (coordinate-wise),
    p, q the numbers of non-zero entries of a and b and s those of t. Since
    ``sum_{x<y} t_x t_y = ((sum t)^2 - s) / 2 >= -floor(s/2)``,
    ``||v||^2 <= C(p,2) + C(q,2) + 2 floor(s/2) <= d (d - 1) + 2 floor(d/2) = 4 floor(d/2) ceil(d/2)``.
    Each margin moves by ``||S'| - |S|| / (2 (n - 1)) <= |Delta S_xy| / (2 (n - 1))`` (|z| is
    ``c_n |S|``), so the plain margins move by at most ``sqrt(floor(d/2) ceil(d/2))`` in L2.
    Each ``h_x`` moves by at most 1 (the mode's count moves by at most 1), d more squares.
    Attained without the rule (``tests/causal/test_gauss_pc.py``): other rows on two
    diagonal points strictly inside every column's range, r above all of them in every
    column, r' above in half the columns and below in the other half.

    >>> kendall_pairs_l2_sensitivity(37, with_degeneracy=False) ** 2
    342.0
    >>> round(kendall_pairs_l2_sensitivity(37, with_degeneracy=True), 3)
    19.468
    """
    d = int(columns)
    return math.sqrt((d // 2) * ((d + 1) // 2) + (d if with_degeneracy else 0))


def kendall_pair_margins(tables: Tables, margin: RankMargin, pairs: Sequence[tuple[str, str]]):
    """``(plain, h)``: every pair's plain margin ``(T - |z|) / u_n`` and each column's ``h_x``.

    ``h`` maps each column of ``pairs`` (in order of first appearance) to
    ``n - max count``; at level 0 the degeneracy distance of the pair's table is
    ``min(h_x, h_y, n - 2)`` (:func:`privgraph.stats.strata.degeneracy_distance` with one
    stratum), so the margin with the rule is a post-processing of the released ``(plain, h)``
    (:func:`level0_margins`).
    """
    unit = kendall_pair_unit(tables.n)
    plain = np.array([(margin.threshold - margin.test.statistic(tables.table((x, y)))) / unit for x, y in pairs])
    columns = list(dict.fromkeys(c for pair in pairs for c in pair))
    h = {}
    for x, y in pairs:
        table = tables.table((x, y))
        for c, counts in ((x, table.sum(axis=1)), (y, table.sum(axis=0))):
            h.setdefault(c, float(tables.n - counts.max()))
    return plain, np.array([h[c] for c in columns]), columns


def level0_margins(plain: np.ndarray, h: np.ndarray, columns: Sequence[str], pairs, *, cap: float,
                   threshold_units: float, noise: float) -> np.ndarray:
    """The level-0 margins with the degenerate rule, from (noisy) ``plain`` and ``h``:
    ``min(plain_xy, min(h_x, h_y, cap) - c)``, with ``cap = max(n - min_rows + 1, 0)`` (public)
    and c the public shift of :class:`RankMargin` (``max(1/2, min(T / u_n, 3 noise))``).
    Post-processing only.

    >>> level0_margins(np.array([5.0]), np.array([0.0, 10.0]), ["a", "b"], [("a", "b")], cap=18,
    ...                threshold_units=50.0, noise=0.0).tolist()
    [-0.5]
    """
    index = {c: i for i, c in enumerate(columns)}
    shift = max(0.5, min(threshold_units, 3.0 * noise))
    hx = np.array([h[index[x]] for x, _ in pairs])
    hy = np.array([h[index[y]] for _, y in pairs])
    return np.minimum(plain, np.minimum(np.minimum(hx, hy), cap) - shift)
