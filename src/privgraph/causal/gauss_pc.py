"""Gauss-PC: stable PC decided one level at a time by Gaussian releases, composed in zCDP.

Priv-PC pays for a cap of rounds fixed per pair of variables, so its noise grows with the
number of pairs d (d - 1) / 2 (at epsilon 1 and 1e5 rows it refuses child, insurance and
alarm). Here each *level* of stable PC is one release of a vector with one value per edge
still to be tested, and the Gaussian mechanism's noise grows with the square root of its
L2 sensitivity's square, i.e. with sqrt(#edges), not #edges; the levels compose in
zero-concentrated DP (Bun and Steinke 2016).

**Neighbouring relation: replace-one, n public.** Margins as in
:mod:`privgraph.causal.margins` (sensitivity 1 each).

At level l, for every edge e = x - y of the graph as released so far (not required) that
has sets to test (stable PC: every S of l nodes from x's, then y's, adjacencies as the
level starts, each set once), ``q_e = max_S margin(x, y | S)``: a maximum of 1-sensitive
margins is 1-sensitive. The vector ``(q_e)`` is released by the multivariate discrete
Gaussian (:func:`~privgraph.privacy.zcdp.zcdp_gaussian_vector`) at the level's rho, and
e is removed when its noisy ``q_e >= 0``, exactly stable PC's rule ("some S says
independent") with noise. The L2 sensitivity of the vector:

* level 0 with Kendall's test: ``sqrt(floor(d/2) ceil(d/2) + d)``
  (:func:`~privgraph.causal.margins.kendall_pairs_l2_sensitivity`: one replaced row cannot
  move every pair's S by its maximum at once), the released vector being every pair's
  plain margin and every column's degeneracy count, from which the margins with the
  "no information" rule are post-processing;
* otherwise ``sqrt(E)``, E the number of edges in the vector (public: the graph is a
  function of earlier releases).

**Separating sets** (levels >= 1, for the orientation): for each removed edge with more
than one set, report-noisy-max over its sets' margins (sensitivity 1) at
``eps = sqrt(2 rho_sel / k)``, k the number of such edges (public once the level is
released): k epsilon-DP selections are ``k eps^2 / 2 = rho_sel``-zCDP whatever k is.

**The plan, fixed before the data is read.** Levels 0 .. ``max_cond_size``; level 0 gets
the least share of the total rho that makes its noise bearable (``GAUSSIAN_EQUIVALENT``
times what Priv-PC's refusal allows), at least ``LEVEL0_SHARE``, and levels ``l >= 1``
split the rest as ``2^-l``
(renormalised), each giving ``select_share`` of its part to the separating sets. Every
part is a ``("zcdp", rho_part)`` charge reserved on the budget before any noise is drawn;
the total rho is the largest whose conversion by the one accountant
(``Ledger.total("rdp", delta)``: dp_accounting's RDP accountant) is at most epsilon.
Levels the data never reaches leave their part unused (at most a ``2^-l`` tail). Each
level's rho is fixed in advance; only its noise scale depends on E, which is public, and
rho-zCDP mechanisms compose adaptively. Needs delta > 0.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Callable, Iterable

import networkx as nx
import numpy as np

from privgraph.causal import pc_counting
from privgraph.causal.deciders import BudgetTooSmall
from privgraph.causal.margins import (
    RO,
    RankMargin,
    kendall_pair_margins,
    kendall_pair_unit,
    kendall_pairs_l2_sensitivity,
    level0_margins,
)
from privgraph.causal.skeleton import Skeleton, checked_pairs, start_graph
from privgraph.data.tables import Tables
from privgraph.privacy import Budget, Ledger, NoiseSampler, report_noisy_max, reserve_plan
from privgraph.privacy.zcdp import rho_for_budget, zcdp_charge, zcdp_gaussian_scale, zcdp_gaussian_vector
from privgraph.stats import KendallTest
from privgraph.validation import InvalidInput

#: Level 0's share of the total rho is the least that gives its noise the bearable scale
#: (below), and at least LEVEL0_SHARE: later levels decide the harder edges, and the
#: measured F1 was better with the smaller share (child and insurance at 1e5 rows, shares
#: 0.2 to 0.7). SELECT_SHARE of each later level's part goes to the separating sets.
LEVEL0_SHARE = 0.25
SELECT_SHARE = 0.1

#: The Gaussian noise (margin units) a level-0 test can bear is the Laplace scale Priv-PC's
#: refusal allows (T / Delta) times this: at ``sigma = 1.111 T / Delta`` an independent
#: pair (z = 0) is kept as often (18.4 %) as under Laplace noise of scale T / Delta
#: (``e^-1 / 2``), since ``Phi^-1(1 - e^-1 / 2) = 0.900``.
GAUSSIAN_EQUIVALENT = 1.0 / 0.9001


class GaussPlan:
    """The fixed plan: rho of each level's test release and separating-set selection.

    >>> plan = GaussPlan(1.0, 1e-6, levels=3)
    >>> round(sum(plan.test) + sum(plan.select), 12) == round(plan.rho, 12)
    True
    >>> round(Ledger(plan.charges()).total("rdp", 1e-6).epsilon, 6) <= 1.0
    True
    """

    def __init__(self, epsilon: float, delta: float, *, levels: int, level0_share: float = LEVEL0_SHARE,
                 select_share: float = SELECT_SHARE):
        if delta <= 0:
            raise InvalidInput(f"gauss-pc composes in zCDP and needs delta > 0, got {delta!r}")
        if not (0 < level0_share <= 1) or not (0 <= select_share < 1):
            raise InvalidInput(f"level0_share must lie in (0, 1] and select_share in [0, 1), got "
                               f"{level0_share!r}, {select_share!r}")
        # ``requested``: levels 0 .. max_cond_size; when level 0 needs the whole budget
        # (``level0_share`` 1) the plan has level 0 only, and PC stops there (untested edges kept).
        self.epsilon, self.delta, self.requested = epsilon, delta, int(levels)
        self.levels = 1 if level0_share >= 1 else self.requested
        self.rho = rho_for_budget(epsilon, delta) * (1 - 1e-9)  # a hair below: float sums of the parts
        later = [2.0**-l for l in range(1, self.levels)]
        share0 = 1.0 if not later else level0_share
        parts = [share0] + [(1 - share0) * w / sum(later) for w in later]
        self.test = [self.rho * p * (1 if l == 0 else 1 - select_share) for l, p in enumerate(parts)]
        self.select = [0.0] + [self.rho * p * select_share for p in parts[1:]]

    def charges(self):
        """One zCDP charge per part, each stating its own (epsilon, delta) at its share of delta."""
        out = []
        for level, (t, s) in enumerate(zip(self.test, self.select)):
            out.append(zcdp_charge("gaussian_vector", t, self.delta * t / self.rho, RO,
                                   note=f"gauss-pc level {level}: one value per edge"))
            if s > 0:
                out.append(zcdp_charge("report_noisy_max", s, self.delta * s / self.rho, RO, sensitivity=1.0,
                                       note=f"gauss-pc level {level}: separating sets, eps = sqrt(2 rho / k) each"))
        return out


def gauss_pc_skeleton(
    tables: Tables,
    margin,
    *,
    epsilon: float,
    delta: float,
    max_cond_size: int,
    sampler: NoiseSampler,
    budget: Budget | None = None,
    forbidden: Iterable[tuple[str, str]] = (),
    required: Iterable[tuple[str, str]] = (),
    on_level: Callable[[int, int], None] | None = None,
    level0_share: float | None = None,
) -> tuple[Skeleton, Ledger]:
    """Gauss-PC's skeleton and the ledger of its whole plan (see the module docstring).

    Raises :class:`~privgraph.privacy.budget.BudgetTooSmall` (before any spend) when the
    level-0 noise would drown a marginal test at n rows.

    Examples
    --------
    >>> from privgraph.datasets import load_network, sample
    >>> from privgraph.data import NumpyEngine
    >>> from privgraph.privacy import SeededSampler
    >>> from privgraph.stats import KendallTest
    >>> net = load_network("asia")
    >>> t = Tables.from_engine(NumpyEngine(net.domain, sample(net, 100_000, np.random.default_rng(0))))
    >>> sk, ledger = gauss_pc_skeleton(t, RankMargin(KendallTest(), 0.05), epsilon=1.0, delta=1e-6,
    ...                                max_cond_size=3, sampler=SeededSampler(0))
    >>> round(ledger.total("rdp", 1e-6).epsilon, 6) <= 1.0, sk.complete
    (True, True)
    """
    plan, level0, keep = _setup(tables, margin, epsilon, delta, max_cond_size, forbidden, required, level0_share)
    graph = start_graph(list(tables.names), checked_pairs(forbidden, list(tables.names), "forbidden"))
    level0.check_useful(epsilon, delta)
    pairs = level0.pairs
    ledger = reserve_plan(plan.charges(), budget)
    sepsets, tests = {}, 0
    if on_level is not None:
        on_level(0, graph.number_of_edges())
    for (x, y), removed in zip(pairs, level0.release(sampler, delta * plan.test[0] / plan.rho)):
        if removed:
            graph.remove_edge(x, y)
            sepsets[frozenset((x, y))] = frozenset()
    tests += len(pairs)
    full = margin.prepare(tables, sampler)
    complete = True
    for level in range(1, plan.requested):
        if not any(graph.degree(v) - 1 >= level for v in graph.nodes):
            break
        if level >= plan.levels:  # the plan affords level 0 only: the edges left are kept untested
            complete = False
            break
        if on_level is not None:
            on_level(level, graph.number_of_edges())
        tests += _run_level(graph, level, tables, full, margin, keep, sepsets, plan, sampler)
    return Skeleton(graph, sepsets, tests, complete), ledger


def gauss_pc_plan(shape, margin, *, epsilon: float, delta: float, max_cond_size: int,
                  forbidden: Iterable = (), required: Iterable = (), level0_share: float | None = None) -> Ledger:
    """The ledger :func:`gauss_pc_skeleton` reserves, from public facts only (``shape``: the
    domain's names and n; no data is read).

    >>> from privgraph.causal.methods import PublicShape
    >>> from privgraph.datasets import load_network
    >>> from privgraph.stats import KendallTest
    >>> plan = gauss_pc_plan(PublicShape(load_network("alarm").domain, 100_000), RankMargin(KendallTest(), 0.05),
    ...                      epsilon=1.0, delta=1e-6, max_cond_size=2)
    >>> [c.mechanism for c in plan], round(plan.total("rdp", 1e-6).epsilon, 6) <= 1.0
    (['gaussian_vector', 'gaussian_vector', 'report_noisy_max', 'gaussian_vector', 'report_noisy_max'], True)
    """
    plan = _setup(shape, margin, epsilon, delta, max_cond_size, forbidden, required, level0_share)[0]
    return Ledger(tuple(plan.charges()))


def level_noise(shape, margin, *, epsilon: float, delta: float, max_cond_size: int) -> tuple[float, float, float]:
    """``(sigma0, sigma1, bearable)``: level 0's Gaussian noise, level 1's were no pair removed
    at level 0 (every pair in its vector, the most it can hold; inf when the plan has level 0
    only) and the noise a marginal test can bear, all in margin units (sensitivity 1), for
    :func:`gauss_pc_skeleton`'s plan at (epsilon, delta); public facts only (``shape``: names
    and n). The release's planner predicts from it. Level 0's share grows until its noise
    is bearable (:meth:`Level0.share_needed`), which can starve the later levels: sigma1
    says whether they are left enough.

    >>> from privgraph.causal.methods import PublicShape
    >>> from privgraph.datasets import load_network
    >>> from privgraph.stats import KendallTest
    >>> s0, s1, bearable = level_noise(PublicShape(load_network("asia").domain, 100_000),
    ...                                RankMargin(KendallTest(), 0.05), epsilon=1.0, delta=1e-6, max_cond_size=2)
    >>> s0 < bearable and s1 < bearable
    True
    """
    plan, level0, _ = _setup(shape, margin, epsilon, delta, max_cond_size, (), (), None)
    edges = max(1, len(level0.pairs))
    sigma1 = zcdp_gaussian_scale(plan.test[1], math.sqrt(edges), edges)[0] if plan.levels > 1 else math.inf
    return level0.noise, sigma1, GAUSSIAN_EQUIVALENT * level0.useful


def _setup(tables, margin, epsilon, delta, max_cond_size, forbidden, required, level0_share):
    """The plan, level 0's release and the required pairs (public facts only). Level 0's
    pairs are the start graph's edges in its order (the pairs of nodes, less the forbidden
    and the required), listed without building the graph: a plan over 1,000 columns spent
    most of its time building half a million edges it never read."""
    if isinstance(max_cond_size, bool) or int(max_cond_size) != max_cond_size or max_cond_size < 0:
        raise InvalidInput(f"gauss-pc needs a finite max_cond_size >= 0, got {max_cond_size!r}")
    nodes = list(tables.names)
    left_out = checked_pairs(forbidden, nodes, "forbidden") | (keep := checked_pairs(required, nodes, "required"))
    pairs = [e for e in combinations(nodes, 2) if not left_out or frozenset(e) not in left_out]
    levels = int(max_cond_size) + 1
    if level0_share is None:
        level0_share = Level0(tables, margin, pairs, rho_for_budget(epsilon, delta)).share_needed()
    plan = GaussPlan(epsilon, delta, levels=levels, level0_share=level0_share)
    return plan, Level0(tables, margin, pairs, plan.test[0]), keep


class Level0:
    """Level 0 in one release: every pair's margin (Kendall: with the sharper joint bound).

    The joint bound covers the margins against the public threshold T, so with
    ``ci_test="kendall-ties"`` level 0 makes the paper's test (``T - |z|``); the levels
    after it use the tie-corrected margin."""

    def __init__(self, tables: Tables, margin, pairs, rho: float):
        self.tables, self.margin, self.pairs, self.rho = tables, margin, pairs, rho
        self.is_kendall = isinstance(margin, RankMargin) and isinstance(margin.test, KendallTest)
        if self.is_kendall:
            self.rule = margin.test.degenerate == "dependent"
            columns = {c for p in pairs for c in p}
            self.dimension = len(pairs) + (len(columns) if self.rule else 0)
            self.sensitivity = kendall_pairs_l2_sensitivity(len(columns), with_degeneracy=self.rule)
            self.useful = margin.threshold / kendall_pair_unit(tables.n)
        else:
            self.dimension = len(pairs)
            self.sensitivity = math.sqrt(max(1, len(pairs)))
            self.useful = margin.useful_noise(tables.n)
        self.noise = zcdp_gaussian_scale(rho, self.sensitivity, max(1, self.dimension))[0] if pairs else 0.0

    def share_needed(self) -> float:
        """The share of this level's rho (the whole budget's) that brings the noise to the
        bearable scale, between LEVEL0_SHARE and 1 (public: d, n, epsilon, delta)."""
        bearable = GAUSSIAN_EQUIVALENT * self.useful
        return min(1.0, max(LEVEL0_SHARE, (1 + 1e-6) * (self.noise / bearable) ** 2)) if bearable > 0 else 1.0

    def check_useful(self, epsilon: float, delta: float) -> None:
        bearable = GAUSSIAN_EQUIVALENT * self.useful
        if self.noise > bearable:
            need = self.noise / bearable  # sigma scales as 1 / sqrt(rho): rho must grow by need^2
            raise BudgetTooSmall(
                f"epsilon={epsilon:g} (delta={delta:g}) gives gauss-pc's level 0 ({len(self.pairs)} pairs in one "
                f"Gaussian release) noise sigma {self.noise:.3g} against {bearable:.3g} a marginal test can bear "
                f"(margin units): the tests would be coin flips. It needs about {need ** 2:.3g} times the zCDP "
                "rho (epsilon grows about as sqrt(rho)); or use more rows, or fewer variables"
            )

    def release(self, sampler: NoiseSampler, delta: float) -> np.ndarray:
        """Whether each pair is removed (its noisy margin >= 0)."""
        if not self.pairs:
            return np.zeros(0, dtype=bool)
        self.tables.count_pairs()
        if not self.is_kendall:
            self.margin.expect_noise(self.noise, rows=self.tables.n)
            view = self.margin.prepare(self.tables, sampler)
            values = np.array([self.margin(view, x, y, ()) for x, y in self.pairs])
            noisy = self._noisy(values, sampler, delta)
            return noisy >= 0.0
        plain, h, columns = kendall_pair_margins(self.tables, self.margin, self.pairs)
        noisy = self._noisy(np.concatenate([plain, h]) if self.rule else plain, sampler, delta)
        if not self.rule:
            return noisy >= 0.0
        cap = max(self.tables.n - self.margin.test.min_rows + 1, 0)
        margins = level0_margins(noisy[:len(plain)], noisy[len(plain):], columns, self.pairs, cap=cap,
                                 threshold_units=self.useful, noise=self.noise)
        return margins >= 0.0

    def _noisy(self, values: np.ndarray, sampler: NoiseSampler, delta: float) -> np.ndarray:
        return zcdp_gaussian_vector(values, rho=self.rho, delta=delta, sensitivity=self.sensitivity,
                                    neighbours=RO, sampler=sampler).value  # reserved with the plan


def _run_level(graph: nx.Graph, level: int, tables: Tables, view, margin, keep: set, sepsets: dict,
               plan: GaussPlan, sampler: NoiseSampler) -> int:
    """One level >= 1: release every edge's best margin, remove, then pick separating sets."""
    order = {v: i for i, v in enumerate(graph.nodes)}
    snapshot = {v: sorted(graph.adj[v], key=order.get) for v in graph.nodes}
    edges, sets = [], []
    for x, y in sorted(graph.edges, key=lambda e: (order[e[0]], order[e[1]])):
        if frozenset((x, y)) in keep:
            continue
        seen, cands = set(), []
        for a, b in ((x, y), (y, x)):
            for S in combinations([v for v in snapshot[a] if v != b], level):
                if frozenset(S) not in seen:
                    seen.add(frozenset(S))
                    cands.append((a, b, S))
        if cands:
            edges.append((x, y))
            sets.append(cands)
    if not edges:
        return 0
    rho = plan.test[level]
    noise = zcdp_gaussian_scale(rho, math.sqrt(len(edges)), len(edges))[0]
    margin.expect_noise(noise, rows=tables.n)  # public: the degenerate-table shift
    sides: dict = {}  # node a -> {b: the sets of side a - b, in the order of cands}
    for cands in sets:
        for a, b, S in cands:
            sides.setdefault(a, {}).setdefault(b, []).append(S)
    found = {}
    for a in sorted(sides, key=order.get):  # a node's sides together: its cover and grams serve them all
        if view is tables:
            pc_counting.cover(tables, (a, *snapshot[a]))
        for b, side in sides[a].items():
            found[a, b] = margin.batch(view, a, b, side)
    scores = [np.concatenate([found[ab] for ab in dict.fromkeys(c[:2] for c in cands)]) for cands in sets]
    best = np.array([s.max() for s in scores])
    noisy = zcdp_gaussian_vector(best, rho=rho, delta=plan.delta * rho / plan.rho, sensitivity=math.sqrt(len(edges)),
                                 neighbours=RO, sampler=sampler).value  # reserved with the plan
    removed = [i for i in range(len(edges)) if noisy[i] >= 0.0]
    choosing = [i for i in removed if len(sets[i]) > 1]
    eps = math.sqrt(2 * plan.select[level] / len(choosing)) if choosing and plan.select[level] > 0 else None
    for i in removed:
        pick = 0
        if i in choosing:
            pick = _select(scores[i], eps, sampler)
        x, y = edges[i]
        graph.remove_edge(x, y)
        sepsets[frozenset((x, y))] = frozenset(sets[i][pick][2])
    return sum(len(c) for c in sets)


def _select(scores: np.ndarray, eps: float | None, sampler: NoiseSampler) -> int:
    """Report-noisy-max at ``eps`` (reserved with the plan); without a share, the first set."""
    if eps is None:
        return 0
    return report_noisy_max(scores, epsilon=eps, sensitivity=1.0, neighbours=RO, sampler=sampler).value


__all__ = ["GAUSSIAN_EQUIVALENT", "GaussPlan", "LEVEL0_SHARE", "SELECT_SHARE", "gauss_pc_plan", "gauss_pc_skeleton",
           "level_noise"]
