"""Tables-PC: stable PC on Gaussian releases of the count tables its first levels test.

Priv-PC pays for a cap of rounds per pair of variables and Gauss-PC for one margin per edge
and level with a rank test (Kendall's margin has a small sensitivity, but on columns whose
code order is not the dependence's, e.g. alarm's, non-private Kendall PC scores F1 0.85
where the G test scores 0.99). Here the tests' *tables* are released, and each test is a
chi-square test of the released table that knows the noise (post-processing), so it has
the G test's reach without a test statistic's sensitivity.

**Neighbouring relation: replace-one, n public.** Replacing one record moves one count of
each table from one cell to another (or not at all), so the vector of T distinct tables'
counts changes by at most ``sqrt(2)`` per table in L2 (:func:`~privgraph.privacy.
histogram_l2_sensitivity`), **L2 sensitivity** ``sqrt(2 T)`` (:func:`tables_l2_sensitivity`;
``tests/causal/test_table_pc.py`` checks it against every neighbour of small datasets).

**Levels.** Level 0 releases every pair's 2-way table at once (T = the pairs, public).
Level l = 1, 2 releases the (l + 2)-way tables ``{x, y} + S`` of the tests it asks: for each
edge x - y still present (the graph is a function of earlier releases), S ranges over the
l-subsets of the ``CANDIDATES`` adjacencies of x (then of y) most strongly dependent on it
in level 0's *released* tables (:func:`dependence`); at level 1 only the adjacencies of x that
are also adjacent to y: if z is independent of y and x of y given z, then (contraction) x is
independent of y, which level 0 did not find, so such a test can only remove a dependent
pair by a testing error, and its table would only add noise to the others'; each distinct
table once (a table ``{x, y, s}`` serves three edges), so T is public once the earlier levels
are released.
Each level's vector gets the multivariate discrete Gaussian
(:func:`~privgraph.privacy.zcdp.zcdp_gaussian_vector`) at its rho (level 0's fixed, the later
levels' split at run time: below). This is where
the budget goes: to the early, decisive tests (CURATE, Bhattacharjee and Tandon 2024, in
spirit: more budget to the tests that remove most edges), and at levels 1 and 2 only to the
sets the released tables make likely separators. Edges left after the last level planned
are the ones every released test called dependent: they stay (``complete`` is False if a
later level would have had work).

**The test** (:func:`noisy_independent`, post-processing, no randomness): a Gaussian
likelihood-ratio test on the *unclipped* released counts O, which are the counts plus
N(0, sigma^2) per cell. Per stratum (a cell of the conditioning columns) with a positive
released total m: weights ``w = 1 / (sigma^2 + mu)`` (mu = the margins' product a b' / m,
clipped to [0, m]: the multinomial's variance, about mu, plus the noise's), the weighted
rank-one fit ``u v'`` minimising ``sum w (O - u v')^2`` (alternating weighted least
squares from the margins, to convergence: :data:`SWEEPS`), and the full statistic
``sum w (O - u v')^2`` over the strata against chi-square with ``(r - 1)(c - 1)`` degrees
of freedom per stratum (the independence model has r + c - 1 parameters per stratum). With
more than one stratum, also
the score statistic for one (x, y) interaction shared by the strata (a generalised
Cochran-Mantel-Haenszel test, :func:`noisy_statistics`), chi-square with ``(r - 1)(c - 1)``
degrees of freedom; independent when both p-values exceed alpha / 2 (Bonferroni: level at
most alpha). No stratum with a positive total: no information, the edge stays. The
separating set is the first set the test calls independent (post-processing: no budget).
The earlier test, Pearson's ``sum (O - E)^2 / (E + sigma^2)`` on the counts clipped at 0, is
not calibrated when the margins are skewed: where E is small a cell's residual from the
margins' product carries the cell's whole noise instead of its share, and at sigma 370 it
called 22-25% of independent 3 x 4 tables with margins (0.9, 0.08, 0.02) x
(0.7, 0.2, 0.05, 0.05) dependent at alpha 0.05 (``tests/causal/test_table_pc.py``); false
dependencies keep false edges and, at level 0, hide the separators that level 1 would try.
The weighted fit's residual is the noise's Mahalanobis length off the independence model,
which is chi-square (conservative in strata that are mostly noise, where the rank-one fit
absorbs noise too).

**Levels 1 and 2 read the earlier releases too** (:data:`COMBINE`, post-processing). The
margins of a released table ``{x, y} + S`` on two or three of its columns were released
before, with independent noise (level 0's 2-way tables; at level 2 also level 1's 3-way
ones, where released). :func:`combined_table` takes the generalised least-squares estimate
of the counts from the table and those margins (sufficient for the counts given all of
them) with its noise covariance C, diagonal in the ANOVA basis, so closed form;
:func:`combined_statistics` computes the two statistics above on it, the weights
``1 / (sigma^2 + mu)`` replaced by the inverse of ``C + diag(mu)`` (the same rank-one fit, by
Gauss-Newton; the same degrees of freedom). The gain is in the components the margins also
carry: x - y's association shared by the strata (the homogeneous test's direction) has the
noise variance ``1 / (1 / sigma_1^2 + k / sigma_0^2)`` instead of ``sigma_1^2`` (k strata),
so at alarm's sigmas (270 and 370, 3 strata) a 2.6 times smaller variance; the stratum-wise
interactions, which the full statistic adds, gain nothing. So by default (``COMBINE`` =
``"homogeneous"``) the homogeneous statistic is the combined one and the full statistic the
table's own, each still at alpha / 2 (taking both from the combined estimate scored lower on
the tuning set). Which margins exist is public (the earlier levels' table sets), and only
released values are read.

**The plan, fixed before the data is read**: levels 0 .. min(``max_cond_size``, 2); level 0's
rho (``LEVEL0_SHARE`` of the total with three levels), and ONE charge of the rest, rho_rest,
for levels 1 and 2 together, both ``("zcdp", rho)`` charges reserved on the budget before any
noise; the total rho is the largest the RDP accountant converts to at most epsilon at delta.
Needs delta > 0. Level 0 always runs when any pair is tested; a later level the data never
reaches leaves its part unused.

**The split at run time (a Rényi filter).** Level l >= 1 gets
``rho_l = split_rest(left, T_l, T_next)`` (:func:`split_rest`): ``left`` is rho_rest less the
earlier later-levels' rhos, T_l the count of tables it releases, T_next the count level l + 1
would release on the present graph (0 when no later level is planned; level 2 then takes all
that is left); all three are functions of the released tables and public facts. Privacy:
each release is rho_l-zCDP for its history (its sensitivity ``sqrt(2 T_l)`` holds for any fixed
T_l), that is (alpha, rho_l alpha)-RDP for every alpha > 1, with rho_l a function of the earlier
outputs only; :func:`split_rest` keeps ``0 <= rho_l <= left``, so ``sum rho_l <= rho_rest`` in
every run (not only in expectation). By the Rényi filter (Feldman and Zrnic 2021, "Individual
Privacy Accounting via a Rényi Filter", Thm 3.1: adaptively chosen RDP parameters whose sum is
bounded by a fixed B in every realisation compose to (alpha, B)-RDP), applied at each alpha with
B = rho_rest alpha, the later levels together are (alpha, rho_rest alpha)-RDP for every alpha,
i.e. rho_rest-zCDP, whatever split was taken (see also Whitehouse et al. 2023, "Fully adaptive
composition in differential privacy"). So the ledger charges rho_rest once, the worst case,
spent or not, and is the plan; ``tests/causal/test_table_pc.py`` checks the bound for any table
counts (hypothesis) and in runs, and ``tests/audit/test_whitebox.py`` that the releases' rhos
are paid for. The default ``SPLIT_POWER`` 0 halves the rest (the earlier fixed 0.4 / 0.4)
unless level 2 would have no table, then level 1 takes it all: splitting by the table counts
(equal sigma, or the square root: the least sum of variances) was measured and scored no
higher on the tuning set (docs/discovery.md): level 2's few tables remove false edges that
level 1 left, and starving it lowered F1 more than level 1's smaller noise raised it.

The constants and choices were made on child and insurance (1e5 rows, epsilon 1 and 3):
the level shares (0.2 / 0.4 / 0.4) and ``CANDIDATES`` on noise seeds 0-2 with the earlier test,
then, with the test above, the level-1 restriction, the homogeneous component and the unchanged
shares, candidates and alpha on noise seeds 10-14 (against 0.15/0.45/0.4, 0.25/0.5/0.25,
0.3/0.4/0.3, 3 and 5 candidates, alpha 0.1, dropping strata below 1, 3 or 6 sigma sqrt(cells)),
``COMBINE`` there too (``"none"``, ``"homogeneous"``, ``"both"``), and ``SPLIT_POWER`` and
``LEVEL0_SHARE`` (against the split rules above, level-0 shares 0.15 and 0.3, and a
power-aware level 1 that removed an edge only on a test with a chance of at least 0.3, 0.5
or 0.7 of finding the edge's released level-0 dependence, or
only on separators the data processing inequality allows in the released level-0 tables: each
kept false edges with the true ones and scored lower); alarm and hepar2 were not used to
choose anything (docs/discovery.md).
"""

from __future__ import annotations

import functools
import itertools
import math
from itertools import combinations
from typing import Callable, Iterable

import networkx as nx
import numpy as np
from scipy.stats import chi2

import privgraph.caches as caches
from privgraph.causal.skeleton import Skeleton, checked_pairs, start_graph
from privgraph.privacy import Budget, Ledger, Neighbours, NoiseSampler, histogram_l2_sensitivity, reserve_plan
from privgraph.privacy.zcdp import rho_for_budget, zcdp_charge, zcdp_gaussian_scale, zcdp_gaussian_vector
from privgraph.threads import single_threaded_blas
from privgraph.validation import InvalidInput

RO = Neighbours.REPLACE_ONE

#: Levels planned at most (0, 1 and 2: a fourth was tried on child and insurance and scored lower).
MAX_LEVELS = 3

#: Level 0's share of the total rho with levels 0-2 planned (0.15 and 0.3 tried on child and
#: insurance); levels 1 and 2 share the rest at run time (:func:`split_rest`). With levels 0-1
#: only, level 0 keeps its share against one later level's (0.2 / 0.6: a third of the total).
LEVEL0_SHARE = 0.2

#: The exponent of :func:`split_rest`: 0 halves the rest between levels 1 and 2 (the old fixed
#: 0.4 / 0.4), 1/2 minimises the sum of their noise variances, 1 equalises their sigmas.
#: Chosen on child and insurance, noise seeds 10-14 (docs/discovery.md): 0 against 1/3, 1/2, 1,
#: 2 and fixed level-1 fractions 0.3, 0.4, 0.6, 0.75, 0.9 of the rest.
SPLIT_POWER = 0.0

#: The name the estimator reports for the test (``ci_test_``), and the power prediction's.
TEST_NAME = "chi-square (released tables)"

#: Adjacencies of x that level >= 1 draws x's conditioning sets from: the most dependent on x
#: in level 0's released tables (3, 4, 5, 6, 8 and all were tried on child and insurance).
CANDIDATES = 4


def tables_l2_sensitivity(count: int) -> float:
    """L2 sensitivity, under replace-one, of the counts of ``count`` distinct tables released together.

    Replacing record r by r' takes 1 from r's cell and adds 1 to r''s cell in each table (or
    changes nothing when both fall in one cell): at most ``sqrt(2)`` per table
    (:func:`~privgraph.privacy.histogram_l2_sensitivity`), so ``sqrt(2 count)`` in all.

    >>> round(tables_l2_sensitivity(666) ** 2, 9)
    1332.0
    """
    return math.sqrt(int(count)) * histogram_l2_sensitivity(RO)


class TablesPlan:
    """The fixed plan (public: epsilon, delta, the levels): level 0's rho, and one charge of the
    rest for levels 1 .. ``levels - 1`` together, which the run splits between them
    (:func:`split_rest`; the module docstring's filter argument).

    >>> plan = TablesPlan(1.0, 1e-6, levels=3)
    >>> round(plan.rho0 + plan.rest, 12) == round(plan.rho, 12), len(plan.charges())
    (True, 2)
    >>> round(Ledger(plan.charges()).total("rdp", 1e-6).epsilon, 6) <= 1.0
    True
    >>> TablesPlan(1.0, 1e-6, levels=1).rest, len(TablesPlan(1.0, 1e-6, levels=1).charges())
    (0.0, 1)
    """

    def __init__(self, epsilon: float, delta: float, *, levels: int):
        if delta <= 0:
            raise InvalidInput(f"tables-pc composes in zCDP and needs delta > 0, got {delta!r}")
        self.epsilon, self.delta = epsilon, delta
        self.levels = max(1, min(int(levels), MAX_LEVELS))
        self.rho = rho_for_budget(epsilon, delta) * (1 - 1e-9)  # a hair below: float sums of the parts
        later = (1 - LEVEL0_SHARE) / (MAX_LEVELS - 1) * (self.levels - 1)  # each later level's nominal share
        self.rho0 = self.rho * LEVEL0_SHARE / (LEVEL0_SHARE + later)
        self.rest = self.rho - self.rho0 if self.levels > 1 else 0.0

    def delta_of(self, rho: float) -> float:
        """The delta a release at ``rho`` states its own epsilon at (its share of delta)."""
        return self.delta * rho / self.rho

    def charges(self):
        first = zcdp_charge("gaussian_tables", self.rho0, self.delta_of(self.rho0), RO,
                            note="tables-pc level 0: every pair's 2-way table, L2 sensitivity sqrt(2 T)")
        if self.levels == 1:
            return [first]
        return [first, zcdp_charge(
            "gaussian_tables", self.rest, self.delta_of(self.rest), RO,
            note="tables-pc levels 1-2: the 3- and 4-way tables of their tests, each level at its own rho "
                 "(L2 sensitivity sqrt(2 T)) chosen from earlier releases, at most this rho in all in every run "
                 "(a Renyi filter: Feldman and Zrnic 2021, Thm 3.1)" if self.levels > 2
            else "tables-pc level 1: the 3-way tables of its tests, L2 sensitivity sqrt(2 T)")]


def split_rest(rest: float, asked: int, later: int) -> float:
    """Level l's rho out of ``rest`` (what the filter has left), from the count of tables it
    releases (``asked``) and a count for the levels after it (``later``; public once the
    earlier levels are released): ``rest * asked^p / (asked^p + later^p)`` with p =
    :data:`SPLIT_POWER`, all of ``rest`` when nothing later, none when nothing asked. Always
    in [0, rest], so the levels never spend more than ``rest`` together.

    >>> split_rest(1.0, 700, 0), split_rest(1.0, 0, 100), split_rest(1.0, 700, 100)
    (1.0, 0.0, 0.5)
    """
    if later <= 0:
        return rest
    if asked <= 0:
        return 0.0
    a, b = float(asked) ** SPLIT_POWER, float(later) ** SPLIT_POWER
    return min(rest, max(0.0, rest * a / (a + b)))


def tables_pc_plan(shape, *, epsilon: float, delta: float, max_cond_size: int) -> Ledger:
    """The ledger :func:`tables_pc_skeleton` reserves (public facts only; ``shape`` is not read).

    >>> [c.mechanism for c in tables_pc_plan(None, epsilon=1.0, delta=1e-6, max_cond_size=1)]
    ['gaussian_tables', 'gaussian_tables']
    """
    return Ledger(tuple(TablesPlan(epsilon, delta, levels=_levels(max_cond_size)).charges()))


def _levels(max_cond_size) -> int:
    if isinstance(max_cond_size, bool) or int(max_cond_size) != max_cond_size or max_cond_size < 0:
        raise InvalidInput(f"tables-pc needs a finite max_cond_size >= 0, got {max_cond_size!r}")
    return min(int(max_cond_size), MAX_LEVELS - 1) + 1


def level0_noise(domain, *, epsilon: float, delta: float, max_cond_size: int, forbidden=(), required=()) -> float:
    """Level 0's Gaussian sigma per cell (counts), from public facts only: the plan's level-0
    rho and ``sqrt(2 T)`` over the T pairs level 0 tests (those neither forbidden nor required).

    >>> from privgraph.data import Domain
    >>> d = Domain.of(**{f"v{i}": 2 for i in range(10)})
    >>> level0_noise(d, epsilon=3.0, delta=1e-6, max_cond_size=2) < level0_noise(d, epsilon=1.0, delta=1e-6, max_cond_size=2)
    True
    """
    plan = TablesPlan(epsilon, delta, levels=_levels(max_cond_size))
    sizes = dict(zip(domain.names, domain.sizes))
    skip = checked_pairs(forbidden, domain.names, "forbidden") | checked_pairs(required, domain.names, "required")
    pairs = [p for p in combinations(domain.names, 2) if frozenset(p) not in skip]
    cells = sum(sizes[x] * sizes[y] for x, y in pairs)
    return zcdp_gaussian_scale(plan.rho0, tables_l2_sensitivity(len(pairs)), max(cells, 1))[0]


def release_tables(tables, column_sets, *, rho: float, delta: float, sampler: NoiseSampler):
    """The counts of each table of ``column_sets`` (distinct sets) with one Gaussian release:
    ``(noisy tables, sigma)`` (sigma per cell, counts). The charge is reserved with the plan.

    >>> from privgraph.data import Domain, NumpyEngine
    >>> from privgraph.data.tables import Tables
    >>> from privgraph.privacy import SeededSampler
    >>> t = Tables.from_engine(NumpyEngine(Domain.of(a=2, b=3), np.zeros((10, 2), dtype=int)))
    >>> out, sigma = release_tables(t, [("a", "b")], rho=0.5, delta=1e-6, sampler=SeededSampler(0))
    >>> out[0].shape, round(sigma, 2)
    ((2, 3), 1.41)
    """
    counts = [np.asarray(tables.table(cols), dtype=float) for cols in column_sets]
    if not counts:
        return [], 0.0
    flat = np.concatenate([c.ravel() for c in counts])
    sensitivity = tables_l2_sensitivity(len(counts))
    noisy = zcdp_gaussian_vector(flat, rho=rho, delta=delta, sensitivity=sensitivity, neighbours=RO,
                                 sampler=sampler).value  # reserved with the plan
    sigma = zcdp_gaussian_scale(rho, sensitivity, flat.size)[0]
    ends = np.cumsum([c.size for c in counts])[:-1]
    return [part.reshape(c.shape) for part, c in zip(np.split(noisy, ends), counts)], sigma


#: The rank-one fit (:func:`noisy_statistics`) sweeps until no stratum's weighted residual
#: moves by more than ``TOLERANCE`` of itself, at most ``SWEEPS`` times (numerical constants,
#: not tuned: strata that are mostly noise converge slowly, and a fit stopped early leaves
#: the statistic too large, so 8 sweeps moved p-values by up to 0.14 on the stratified
#: tables of ``tests/causal/test_table_pc.py``).
SWEEPS, TOLERANCE = 500, 1e-10

#: Gauss-Newton's stop in :func:`combined_statistics`' fit: a relative change below
#: ``FIT_TOLERANCE``, or ``FIT_STEPS`` steps (numerical constants, not tuned: half of child's
#: tables stop within 6 steps, a few mostly-noise 4-way ones take hundreds; on 72 of them, 20
#: steps left both statistics within 2% of the converged ones and changed no decision).
FIT_TOLERANCE, FIT_STEPS = 1e-8, 30


def _rank_one_fit(t: np.ndarray, sigma: float):
    """Per stratum (axis 0), the weighted rank-one fit ``u v'`` to the released r x c slices and
    the weights ``1 / (sigma^2 + mu)``, mu the margins' product clipped to [0, total]."""
    m = t.sum(axis=(1, 2))
    a, b = t.sum(axis=2), t.sum(axis=1)
    mu = a[:, :, None] * b[:, None, :] / m[:, None, None]
    w = 1.0 / np.maximum(sigma**2 + np.clip(mu, 0.0, m[:, None, None]), 1e-12)  # the floor: sigma 0, mu 0
    u, v, last = a, b / m[:, None], np.inf
    for _ in range(SWEEPS):
        u = (w * t * v[:, None, :]).sum(2) / np.maximum((w * v[:, None, :] ** 2).sum(2), 1e-300)
        v = (w * t * u[:, :, None]).sum(1) / np.maximum((w * u[:, :, None] ** 2).sum(1), 1e-300)
        now = (w * (t - u[:, :, None] * v[:, None, :]) ** 2).sum(axis=(1, 2))
        if np.all(last - now <= TOLERANCE * now):
            break
        last = now
    return u[:, :, None] * v[:, None, :], w


def _homogeneous_score(t: np.ndarray, fit: np.ndarray, w: np.ndarray) -> float:
    """The score statistic for one interaction shared by all strata (``mu_kij exp(l_ij)``):
    ``U = sum_k D_k e_k`` with ``e_k`` the whitened residual and ``D_k = diag(fit_k) W_k^(1/2)``,
    against its covariance ``sum_k D_k Q_k D_k`` (``Q_k`` the projector off stratum k's whitened
    tangent space), on the ``(r - 1)(c - 1)`` directions that covariance has."""
    k, rx, ry = t.shape
    n = rx * ry
    sw = np.sqrt(w).reshape(k, n)
    u, v = fit.sum(axis=2), fit.sum(axis=1)  # any basis of the tangent space {x v' + u y'} at the fit
    tangent = np.concatenate([np.einsum("ij,kl->kilj", np.eye(rx), v).reshape(k, n, rx),
                              np.einsum("ki,jl->kijl", u, np.eye(ry)).reshape(k, n, ry)], axis=2)
    white = sw[:, :, None] * tangent
    q = np.eye(n)[None] - white @ np.linalg.pinv(white)
    d = np.maximum(fit, 0.0).reshape(k, n) * sw
    score = (d * sw * (t - fit).reshape(k, n)).sum(axis=0)
    lam, vec = np.linalg.eigh((d[:, :, None] * q * d[:, None, :]).sum(axis=0))
    keep = (rx - 1) * (ry - 1)
    return float(((vec[:, -keep:].T @ score) ** 2 / np.maximum(lam[-keep:], 1e-300)).sum())


def noisy_statistics(table: np.ndarray, sigma: float) -> tuple[float, int, float, int]:
    """A released table's two calibrated statistics (axes x, y, then the conditioning columns),
    ``(full, df, homogeneous, df)``, over the strata with a positive released total; df 0 when
    there is none, or x or y has one state. See the module docstring; post-processing,
    deterministic.

    >>> full, df, hom, hdf = noisy_statistics(np.array([[450.0, 50.0], [50.0, 450.0]]), 5.0)
    >>> df, hdf, full > 300, round(full, 6) == round(hom, 6)  # one stratum: the two agree
    (1, 1, True, True)
    """
    t = np.asarray(table, dtype=float)
    rx, ry = t.shape[:2]
    t = t.reshape(rx, ry, -1).transpose(2, 0, 1)
    t = t[t.sum(axis=(1, 2)) > 0]
    if not len(t) or rx < 2 or ry < 2:
        return 0.0, 0, 0.0, 0
    fit, w = _rank_one_fit(t, sigma)
    full = float((w * (t - fit) ** 2).sum())
    df = (rx - 1) * (ry - 1)
    return full, len(t) * df, _homogeneous_score(t, fit, w) if len(t) > 1 else full, df


def noisy_independent(table: np.ndarray, sigma: float, alpha: float) -> bool:
    """Whether a released table (axes x, y, then the conditioning columns) says x and y are
    independent given the rest: the full statistic's chi-square p-value, and with more than one
    stratum also the homogeneous one's, each above alpha / 2 (Bonferroni: level alpha); no
    stratum with a positive released total: no information, False.

    >>> rng = np.random.default_rng(0)
    >>> indep = np.outer([300, 700], [500, 500]) + rng.normal(0, 5, (2, 2))
    >>> dep = np.array([[450.0, 50.0], [50.0, 450.0]])
    >>> noisy_independent(indep, 5.0, 0.05), noisy_independent(dep, 5.0, 0.05)
    (True, False)
    """
    return _decide(*noisy_statistics(table, sigma), alpha)


def _decide(full: float, df: int, hom: float, hdf: int, alpha: float) -> bool:
    """Independent when each p-value exceeds alpha / 2 (the one when they are one); df 0: False."""
    if df == 0:
        return False
    if df == hdf:
        return bool(chi2.sf(full, df) > alpha)
    return bool(min(chi2.sf(full, df), chi2.sf(hom, hdf)) > alpha / 2)


#: Whether a level >= 1 test reads its table together with the released tables on subsets of
#: its columns (level 0's 2-way tables, level 1's 3-way ones at level 2): :func:`combined_table`.
#: ``"both"``: both statistics from the combined estimate; ``"homogeneous"``: the homogeneous
#: one, the full one from the table alone; ``"none"``: the table alone. Chosen on child and
#: insurance, noise seeds 10-14 (docs/discovery.md).
COMBINE = "homogeneous"


def _precisions(shape: tuple, parts) -> dict:
    """The estimate's noise precision on each ANOVA component (F: which axes carry contrasts),
    from released tables on ``parts`` = ((axes, sigma), ...), the table itself among them.
    Each released margin on axes R is ``M_R T`` plus N(0, sigma_R^2) per cell, and every
    ``M_R' M_R`` is diagonal in the ANOVA basis (the products of each axis's constant and
    contrast projectors): on F it is the product of the sizes off R when F is within R, else
    0; so the precision on F is ``sum_R [F in R] prod_(j off R) n_j / sigma_R^2``."""
    full = range(len(shape))
    return {F: sum(math.prod(shape[j] for j in full if j not in axes) / sigma**2
                   for axes, sigma in parts if all(j in axes for j in full if F[j]))
            for F in itertools.product((False, True), repeat=len(shape))}


def _project(x: np.ndarray, F: tuple) -> np.ndarray:
    """The ANOVA projection P_F of a table: each axis's contrast (in F) or mean (not in F)."""
    for j, contrast in enumerate(F):
        mean = x.mean(axis=j, keepdims=True)
        x = x - mean if contrast else np.broadcast_to(mean, x.shape)
    return x


@caches.lru(32)
def _covariance(shape: tuple, precisions: tuple) -> np.ndarray:
    """``C = sum_F P_F / precision_F`` as a matrix (cells in C order); ``precisions`` in the
    order of ``itertools.product((False, True), repeat=len(shape))``."""
    const = [np.full((n, n), 1.0 / n) for n in shape]
    cov = np.zeros((math.prod(shape),) * 2)
    for F, prec in zip(itertools.product((False, True), repeat=len(shape)), precisions):
        cov += functools.reduce(np.kron, [np.eye(n) - c if f else c for n, c, f in zip(shape, const, F)]) / prec
    return cov


def combined_table(table: np.ndarray, sigma: float, margins=()) -> tuple[np.ndarray, np.ndarray]:
    """A released table combined with released tables on subsets of its axes (``margins``:
    ``(axes, released table over those axes in that order, its sigma)``, released with noise
    independent of the table's): the generalised least-squares estimate of the counts,
    ``C sum_R M_R' O_R / sigma_R^2``, and its noise covariance C (:func:`_precisions`;
    post-processing, deterministic). The estimate is sufficient for the counts given all
    these releases, so a test of it loses nothing, and on the components the margins also
    carry (x - y's association shared by the strata, the margins of x and y in each stratum)
    its noise is smaller than the table's alone.

    >>> est, cov = combined_table(np.array([[100.0, 0.0], [0.0, 100.0]]), 2.0, [((0,), np.array([98.0, 102.0]), 1.0)])
    >>> est.sum(axis=1).round(1).tolist(), bool(np.allclose(cov, cov.T)), bool(np.all(np.diag(cov) < 4.0))
    ([98.2, 101.8], True, True)
    """
    t = np.asarray(table, dtype=float)
    if sigma <= 0 or any(s <= 0 for _, _, s in margins):  # an exact release: nothing to add
        return t, np.zeros((t.size, t.size))
    parts = [(tuple(range(t.ndim)), float(sigma))] + [(tuple(a), float(s)) for a, _, s in margins]
    lifted = t / sigma**2  # sum_R M_R' O_R / sigma_R^2: each margin broadcast over the axes off it
    for axes, m, s in margins:  # the margin's axes in increasing order, then the others inserted
        m = np.transpose(np.asarray(m, dtype=float), np.argsort(axes))
        lifted = lifted + np.expand_dims(m, [j for j in range(t.ndim) if j not in axes]) / s**2
    precisions = _precisions(t.shape, parts)
    estimate = sum(_project(lifted, F) / prec for F, prec in precisions.items())
    return estimate, _covariance(t.shape, tuple(precisions.values()))


def _gls_rank_one_fit(t: np.ndarray, white: Callable):
    """Per stratum (axis 0 of ``t``, k x r x c), the rank-one fit ``u v'`` minimising the
    residual's length after ``white`` (the inverse of a root of the covariance; cells in
    (stratum, x, y) order): Gauss-Newton from the margins with each stratum's largest v held
    (the scale u v' leaves free), halving a step that does not lower it. Returns the fit, the
    Jacobian of the cells in (u, v) at it, and the whitened residual's squared length."""
    k, rx, ry = t.shape
    m = t.sum(axis=(1, 2))
    u, v = t.sum(axis=2), t.sum(axis=1) / m[:, None]
    free = np.ones(k * (rx + ry), dtype=bool)
    free[k * rx + np.arange(k) * ry + np.argmax(np.abs(v), axis=1)] = False

    rows, s = np.arange(k * rx * ry).reshape(k, rx, ry), np.arange(k)

    def jacobian(u, v):  # d fit / d (u, v): fit[s, i, j] = u[s, i] v[s, j]
        jac = np.zeros((k * rx * ry, k * (rx + ry)))
        for i in range(rx):
            jac[rows[:, i, :], (s * rx + i)[:, None]] = v
        for j in range(ry):
            jac[rows[:, :, j], (k * rx + s * ry + j)[:, None]] = u
        return jac

    def residual(u, v):
        res = white((t - u[:, :, None] * v[:, None, :]).ravel())
        return res, float(res @ res)

    (res, now), jac = residual(u, v), jacobian(u, v)
    for _ in range(FIT_STEPS):
        wj, step = white(jac)[:, free], np.zeros(len(free))
        try:
            step[free] = np.linalg.solve(wj.T @ wj, wj.T @ res)
        except np.linalg.LinAlgError:  # a stratum with an empty row or column of the fit
            step[free] = np.linalg.lstsq(wj, res, rcond=None)[0]
        scale, last = 1.0, now
        while scale >= 1e-6:
            nu, nv = u + scale * step[:k * rx].reshape(k, rx), v + scale * step[k * rx:].reshape(k, ry)
            cand, value = residual(nu, nv)
            if value <= now:
                u, v, res, now = nu, nv, cand, value
                break
            scale /= 2
        if last - now <= FIT_TOLERANCE * now:
            break
        jac = jacobian(u, v)
    fit = u[:, :, None] * v[:, None, :]
    return fit, jacobian(u, v), now


def combined_statistics(table: np.ndarray, cov: np.ndarray) -> tuple[float, int, float, int]:
    """:func:`noisy_statistics` for a table whose noise has the covariance ``cov`` (cells in C
    order; :func:`combined_table`): the same fit and the same two statistics, the weights
    ``1 / (sigma^2 + mu)`` replaced by the inverse of ``cov + diag(mu)``. With ``cov`` =
    sigma^2 I it is :func:`noisy_statistics`.

    >>> t = np.array([[450.0, 50.0], [50.0, 450.0]])
    >>> a, b = combined_statistics(t, 25.0 * np.eye(4)), noisy_statistics(t, 5.0)
    >>> a[1] == b[1] and a[3] == b[3] and bool(np.allclose([a[0], a[2]], [b[0], b[2]]))
    True
    """
    t = np.asarray(table, dtype=float)
    rx, ry = t.shape[:2]
    order = np.arange(t.size).reshape(rx, ry, -1).transpose(2, 0, 1)  # cells as (stratum, x, y)
    t = t.reshape(rx, ry, -1).transpose(2, 0, 1)
    positive = t.sum(axis=(1, 2)) > 0
    t, order = t[positive], order[positive].ravel()
    if not len(t) or rx < 2 or ry < 2:
        return 0.0, 0, 0.0, 0
    k = len(t)
    m = t.sum(axis=(1, 2))
    mu = np.clip(t.sum(axis=2)[:, :, None] * t.sum(axis=1)[:, None, :] / m[:, None, None], 0.0, m[:, None, None])
    var = np.asarray(cov, dtype=float)[np.ix_(order, order)] + np.diag(np.maximum(mu.ravel(), 1e-12))
    white = np.linalg.inv(np.linalg.cholesky(var)).__matmul__
    fit, jac, full = _gls_rank_one_fit(t, white)
    df = (rx - 1) * (ry - 1)
    if k == 1:
        return full, df, full, df
    shared = np.maximum(fit, 0.0)[:, :, :, None] * np.eye(rx * ry).reshape(1, rx, ry, rx * ry)  # d fit / d l_ij
    d = white(shared.reshape(k * rx * ry, -1))
    wj = white(jac)
    q = np.eye(len(wj)) - wj @ np.linalg.pinv(wj)
    score = d.T @ white((t - fit).ravel())
    lam, vec = np.linalg.eigh(d.T @ q @ d)
    return full, k * df, float(((vec[:, -df:].T @ score) ** 2 / np.maximum(lam[-df:], 1e-300)).sum()), df


def dependence(table: np.ndarray, sigma: float) -> float:
    """A released 2-way table's noise-widened Cramer's V^2 (post-processing): how strongly
    level >= 1 ranks a neighbour as a separator candidate.

    >>> dependence(np.array([[50.0, 0.0], [0.0, 50.0]]), 0.0)
    1.0
    """
    t = np.maximum(table, 0.0)
    m = t.sum()
    if m <= 0:
        return 0.0
    expected = np.outer(t.sum(axis=1), t.sum(axis=0)) / m
    return float(((t - expected) ** 2 / (expected + sigma ** 2)).sum() / m / (min(t.shape) - 1))


def tables_pc_skeleton(
    tables,
    *,
    alpha: float,
    epsilon: float,
    delta: float,
    max_cond_size: int,
    sampler: NoiseSampler,
    budget: Budget | None = None,
    forbidden: Iterable[tuple[str, str]] = (),
    required: Iterable[tuple[str, str]] = (),
    on_level: Callable[[int, int], None] | None = None,
) -> tuple[Skeleton, Ledger]:
    """Tables-PC's skeleton and the ledger of its whole plan (see the module docstring).

    Examples
    --------
    >>> from privgraph.datasets import load_network, sample
    >>> from privgraph.data import NumpyEngine
    >>> from privgraph.data.tables import Tables
    >>> from privgraph.privacy import SeededSampler
    >>> net = load_network("cancer")
    >>> t = Tables.from_engine(NumpyEngine(net.domain, sample(net, 100_000, np.random.default_rng(0))))
    >>> sk, ledger = tables_pc_skeleton(t, alpha=0.05, epsilon=1.0, delta=1e-6, max_cond_size=2,
    ...                                 sampler=SeededSampler(0))
    >>> round(ledger.total("rdp", 1e-6).epsilon, 6) <= 1.0, [c.mechanism for c in ledger]
    (True, ['gaussian_tables', 'gaussian_tables'])
    """
    plan = TablesPlan(epsilon, delta, levels=_levels(max_cond_size))
    nodes = list(tables.names)
    graph = start_graph(nodes, checked_pairs(forbidden, nodes, "forbidden"))
    keep = checked_pairs(required, nodes, "required")
    ledger = reserve_plan(plan.charges(), budget)
    order = {v: i for i, v in enumerate(nodes)}
    sepsets, strength, tests, level, left, released = {}, {}, 0, 0, plan.rest, {}
    while level < plan.levels and any(graph.degree(v) - 1 >= level for v in graph.nodes):
        if on_level is not None:
            on_level(level, graph.number_of_edges())
        asked = _candidates(graph, level, keep, strength, order)
        if level == 0:
            rho = plan.rho0
        else:  # the filter: level l's rho from released facts, never more than what is left
            later = len(_table_keys(_candidates(graph, level + 1, keep, strength, order))) \
                if level + 1 < plan.levels else 0
            rho = split_rest(left, len(_table_keys(asked)), later)
            left -= rho
        with single_threaded_blas():  # the tests' small solves: a thread pool on a busy machine is 20x slower
            tests += _run_level(graph, level, asked, tables, rho, plan, sampler, alpha, sepsets, strength, order,
                                released)
        level += 1
    complete = not any(graph.degree(v) - 1 >= level for v in graph.nodes) or level > int(max_cond_size)
    return Skeleton(graph, sepsets, tests, complete), ledger


def _candidates(graph: nx.Graph, level: int, keep: set, strength: dict, order: dict) -> list:
    """Each edge to test and its conditioning sets (public: the released graph and strengths)."""
    snapshot = {v: sorted(graph.adj[v], key=order.get) for v in graph.nodes}
    out = []
    for x, y in sorted(graph.edges, key=lambda e: (order[e[0]], order[e[1]])):
        if frozenset((x, y)) in keep:
            continue
        seen, sets = set(), []
        for a, b in ((x, y), (y, x)):
            near = [v for v in snapshot[a] if v != b]
            if level == 1:  # a lone separator of a dependent pair depends on both (module docstring)
                near = [v for v in near if v in graph.adj[b]]
            if level > 0:
                near = sorted(sorted(near, key=lambda v: -strength.get(frozenset((a, v)), 0.0))[:CANDIDATES],
                              key=order.get)
            for S in combinations(near, level):
                if frozenset(S) not in seen:
                    seen.add(frozenset(S))
                    sets.append(S)
        if sets:
            out.append((x, y, sets))
    return out


def _independent(found, names, sigma, alpha, released) -> bool:
    """The test of x and y given S (``names``) on its released table ``found`` (columns, table),
    with :data:`COMBINE` combined with the earlier levels' ``released`` tables on subsets of
    its columns (:func:`combined_table`; post-processing: which tables were released is public)."""
    cols, table = found
    table = np.transpose(table, [cols.index(v) for v in names])
    key = frozenset(names)
    margins = [(tuple(sorted(names.index(v) for v in c)), np.transpose(t, np.argsort([names.index(v) for v in c])), s)
               for other, (c, t, s) in released.items() if COMBINE != "none" and other < key]
    if not margins:
        return noisy_independent(table, sigma, alpha)
    full, df, hom, hdf = combined_statistics(*combined_table(table, sigma, margins))
    if COMBINE == "homogeneous" or hdf == 0:  # the full statistic from the table alone
        plain = noisy_statistics(table, sigma)
        full, df, hom, hdf = (*plain[:2], hom, hdf) if hdf else plain
    return _decide(full, df, hom, hdf, alpha)


def _table_keys(asked) -> list:
    """The distinct tables (column sets) the tests ``asked`` need, in order of first use."""
    return list(dict.fromkeys(frozenset((x, y, *S)) for x, y, sets in asked for S in sets))


def _run_level(graph, level, asked, tables, rho, plan, sampler, alpha, sepsets, strength, order, released) -> int:
    """One level: release the tables of its tests ``asked`` at ``rho``, then remove (post-processing).
    ``released`` (column set: (columns, table, sigma)) gathers every level's releases."""
    keys = _table_keys(asked)
    columns = [tuple(sorted(k, key=order.get)) for k in keys]
    noisy, sigma = release_tables(tables, columns, rho=rho, delta=plan.delta_of(rho), sampler=sampler)
    found = dict(zip(keys, zip(columns, noisy)))
    if level == 0:
        strength.update({k: dependence(t, sigma) for k, (_, t) in found.items()})
    removed = []
    for x, y, sets in asked:
        for S in sets:
            if _independent(found[frozenset((x, y, *S))], (x, y, *S), sigma, alpha, released):
                removed.append((x, y, S))
                break
    released.update({k: (cols, t, sigma) for k, (cols, t) in found.items()})
    for x, y, S in removed:
        graph.remove_edge(x, y)
        sepsets[frozenset((x, y))] = frozenset(S)
    return sum(len(sets) for _, _, sets in asked)


__all__ = ["CANDIDATES", "COMBINE", "FIT_STEPS", "FIT_TOLERANCE", "LEVEL0_SHARE", "MAX_LEVELS", "SPLIT_POWER",
           "SWEEPS", "TEST_NAME", "TOLERANCE", "TablesPlan", "combined_statistics", "combined_table", "dependence",
           "level0_noise", "noisy_independent", "noisy_statistics", "release_tables", "split_rest",
           "tables_l2_sensitivity", "tables_pc_plan", "tables_pc_skeleton"]
