"""What a private decider asks about one test: a *margin* with sensitivity 1 under replace-one.

A margin is ``>= 0`` when the test says "independent" and is normalised so that one
replaced row moves it by at most 1; the private deciders add noise to margins only.
Two kinds, chosen by the CI test:

* :class:`RankMargin` (Kendall, Spearman: a public threshold T on ``|z|``):
  ``(T - |z|) / Delta(n, K)``, with Delta the replace-one sensitivity of ``|z|`` for n rows
  and K strata from :mod:`privgraph.stats.sensitivity`. n is the number of rows the
  table counts (a sub-sample's m on a sub-sample): public under replace-one.
  With the default convention "no information is not independence" the margin is
  ``min((T - |z|) / Delta, H - c)``, H the degeneracy distance of
  :func:`privgraph.stats.strata.degeneracy_distance` and c a public shift: a table whose
  strata are all degenerate (H = 0) gets at most ``-c`` (dependent: the edge stays), and a
  table with ``H >= c + (T - |z|) / Delta`` the plain margin. c is
  ``max(1/2, min(T / Delta, 3 b))`` where b is the decider's noise scale in margin units
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

from privgraph.data.tables import Blocks, Tables
from privgraph.privacy import Neighbours, NoiseSampler
from privgraph.stats import CITest
from privgraph.stats.ci_test import check_alpha, strata_of
from privgraph.stats.strata import DEPENDENT, INDEPENDENT, degeneracy_distance

RO = Neighbours.REPLACE_ONE


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
        if not test.has_public_threshold:
            raise ValueError(f"the {test.name} test has no public threshold; use BlockVotes")
        self.test, self.alpha = test, check_alpha(alpha)
        self.threshold = test.threshold(self.alpha)
        self._sens: dict[tuple[int, int], float] = {}
        self.noise = 0.0

    def expect_noise(self, scale: float) -> None:
        """The decider's noise scale in margin units (public): sets the degenerate shift c."""
        self.noise = float(scale)

    def prepare(self, tables: Tables, sampler: NoiseSampler) -> Tables:
        return tables

    def sensitivity(self, n: int, shape: Sequence[int]) -> float:
        """Replace-one sensitivity of ``|z|`` over n rows, for a table of ``shape``."""
        key = (int(n), strata_of(shape))
        if key not in self._sens:
            self._sens[key] = self.test.sensitivity(n, RO, shape)
        return self._sens[key]

    def __call__(self, view: Tables, x: str, y: str, S: tuple, *, screening: bool = False) -> float:
        """The margin; ``screening=True`` (a sieve's sub-sample) drops the degenerate rule, so
        a sub-sample with no information defers to the full data instead of keeping the edge."""
        cols = (x, y, *S)
        table = view.table(cols)
        unit = self.sensitivity(view.n, view.shape(cols))
        plain = (self.threshold - self.test.statistic(table)) / unit
        if screening or self.test.degenerate != DEPENDENT:
            return plain
        shift = max(0.5, min(self.threshold / unit, 3.0 * self.noise))
        return min(plain, degeneracy_distance(table, self.test.min_rows) - shift)

    def useful_noise(self, n: int) -> float:
        """Noise (normalised units) beyond which a marginal test at n rows is drowned: T / Delta."""
        return self.threshold / self.sensitivity(n, (2, 2))

    def units(self, n: int) -> float:
        """One normalised unit in statistic units (``|z|``) for a marginal test at n rows."""
        return self.sensitivity(n, (2, 2))


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
        if isinstance(blocks, bool) or int(blocks) != blocks or blocks < 1:
            raise ValueError(f"blocks must be a positive integer, got {blocks!r}")
        self.test, self.alpha, self.blocks = test, check_alpha(alpha), int(blocks)

    def prepare(self, tables: Tables, sampler: NoiseSampler) -> Blocks:
        if tables.n < 2 * self.blocks:
            raise ValueError(f"{tables.n} rows are too few for {self.blocks} blocks of at least 2 rows")
        return tables.blocks(self.blocks, sampler)

    def __call__(self, view: Blocks, x: str, y: str, S: tuple, *, screening: bool = False) -> float:
        stacked = view.table((x, y, *S))
        test = replace(self.test, degenerate=INDEPENDENT) if screening else self.test
        votes = sum(test.decide(t, self.alpha).is_independent for t in stacked)
        return votes - view.count / 2.0

    def useful_noise(self, n: int) -> float:
        return self.blocks / 2.0

    def expect_noise(self, scale: float) -> None:
        """Nothing to calibrate: each block's test applies the convention itself."""

    def units(self, n: int) -> float:
        return 1.0


def make_margin(test: CITest, alpha: float, blocks: int = 50):
    """The margin that suits ``test``: RankMargin with a public threshold, else BlockVotes.

    >>> from privgraph.stats import GTest, KendallTest
    >>> type(make_margin(KendallTest(), 0.05)).__name__, type(make_margin(GTest(), 0.05)).__name__
    ('RankMargin', 'BlockVotes')
    """
    return RankMargin(test, alpha) if test.has_public_threshold else BlockVotes(test, alpha, blocks)


def noise_needed(useful: float, noise_per_unit_epsilon: float) -> float:
    """The epsilon at which a noise scale ``noise_per_unit_epsilon / epsilon`` equals ``useful``.

    >>> noise_needed(2.0, 4.0)
    2.0
    """
    return noise_per_unit_epsilon / useful if math.isfinite(useful) and useful > 0 else math.inf
