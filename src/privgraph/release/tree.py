"""Stage 1 at small budgets: a private maximum spanning tree (MST; McKenna, Miklau, Sheldon 2021).

Priv-PC needs a cap of rounds that a small budget on many columns cannot pay (child and
alarm at 2e4 rows and epsilon 1); the tree needs d - 1 selections, whatever the data.
Under **replace-one** neighbours (n public), as the rest of the release, or under
**add/remove** neighbours (n private: the one structure stage that needs no released size,
because the tree needs n nowhere but in its scores, where the noisy one-way tables'
estimate of n stands in; Gauss-PC and Priv-PC run on data resized to a released size,
:mod:`privgraph.privacy.resize`):

1. **one-way tables**: every column's counts, noisy (:func:`privgraph.mrf.noisy_tables.release_tables`:
   d histograms, L2 sensitivity ``sqrt(2 d)`` for Gaussian noise, L1 ``2 d`` for Laplace;
   ``sqrt(d)`` and ``d`` under add/remove);
2. **selection**: each pair (i, j) is scored by ``u_ij = || C_ij - n q_i q_j^T ||_1``, the
   L1 distance between its true count table and the product of the noisy one-way
   proportions ``q`` (post-processing of step 1, so a constant here; under add/remove ``n``
   is the estimate from step 1's noisy totals, a constant too); d - 1 edges are
   chosen by the exponential mechanism in Kruskal's order (each round's candidates are
   the pairs joining two components of the edges chosen so far: a function of earlier
   releases only), sensitivity :func:`pair_score_sensitivity`;
3. **pair tables**: the chosen pairs' counts, noisy (d - 1 histograms);
4. **residual pairs** (:mod:`privgraph.release.residuals`), in :data:`RESIDUAL_ROUNDS`
   rounds, as AIM measures: the model CGM-EM fits to the tables released so far
   (post-processing) predicts every pair's table; the round's pairs, those it explains
   worst, are chosen by the exponential mechanism (same score and sensitivity, against the
   prediction instead of independence) and their tables released; the next round's
   prediction is the model refitted with them. Each round's candidates are the pairs
   neither in the tree nor chosen before (a function of earlier releases only). The last
   round's tables are the release's stage 3, fitted with all the others by
   :class:`~privgraph.mrf.PrivateMRF`.

The released graph is the tree, as undirected edges; the model's cliques are the tree's
and the residual pairs.

Budget: with ``delta > 0`` the tables take Gaussian noise and everything composes under
zCDP through the RDP accountant (one ``rho`` for the whole release, found from
(epsilon, delta); ``SELECTION_SHARE`` of it to the tree's selections, each
``epsilon^2/8``-zCDP as a bounded-range mechanism, ``RESIDUAL_SHARE`` to the residual
selections, and the rest to the tables in proportion to their number, so every table gets
the same noise); with ``delta = 0`` Laplace noise and basic composition split epsilon the
same way. The plan (:func:`plan_tree`) is computed from public facts only (domain, n,
epsilon, delta) and reserved before any noise is drawn.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

import privgraph.heartbeat as heartbeat
from privgraph.data import Domain, count_tables
from privgraph.graphs import CPDAG
from privgraph.mrf.cgm import cgm_em
from privgraph.mrf.inference import infer
from privgraph.mrf.noisy_tables import join_releases, plan_release, release_sensitivity, release_tables
from privgraph.privacy import (
    Budget, Charge, Ledger, Neighbours, NoiseSampler, exponential_mechanism, gaussian_calibration,
    laplace_scale,
)
from privgraph.privacy.budget import reserve_plan
from privgraph.privacy.composition import BASIC, RDP, Accountant
from privgraph.privacy.mechanisms import exponential_charge
from privgraph.privacy.zcdp import MARGIN, total_rho, zcdp_epsilon
from privgraph.release.adaptive import AdaptivePlan, adaptive_rounds
from privgraph.release.cliques import DEFAULT_TREE_CAP
from privgraph.release.levels import MergedEngine, MergedLevels, merge_rare_levels
from privgraph.release.model_size import fits, forest_fits, workload_triples
from privgraph.release.pair_scores import (  # also imported from here: tree's __all__ keeps them
    ABS_NORMAL, PREDICTION_ROWS, RO, l1_scores, model_pair_tables, pair_score_sensitivity, proportions, round_predictions,
)
from privgraph.release.residuals import extra_pair_count, select_residual_pairs, tree_pair_tables
from privgraph.timecap import check_time, start_clock
from privgraph.validation import InvalidInput

#: Shares of the budget (of rho under zCDP, of epsilon under basic composition) spent on the
#: tree's d - 1 selections and on step 3's selections (:mod:`privgraph.release.residuals`);
#: the rest goes to the tables, in proportion to their number (every table gets the same
#: noise). Settled on seeds 100-102 of child and alarm, never on the reported runs
#: (docs/release.md).
SELECTION_SHARE, RESIDUAL_SHARE = 0.15, 0.1
#: Rounds of step 4 (at least one pair each): the k residual pairs are chosen and released in
#: this many batches, the model refitted between them. A table's noise does not depend on
#: the batching (zCDP and basic composition both add up per table), so the rounds cost CPU,
#: not budget. Settled on seeds 100-102 of child and alarm at 2e4 rows, never on the reported
#: runs (docs/release.md).
RESIDUAL_ROUNDS = 3
#: Under zCDP (delta > 0), AIM's adaptive rounds (:mod:`privgraph.release.adaptive`) run between
#: the tree's tables and the last round of residual pairs with this share of rho, their first
#: rounds priced as ``ADAPTIVE_ROUNDS`` per column (AIM's 16 d). Settled on seeds 100-101 of the
#: six real tables of docs/benchmarks/release.md and child (shares 0.15, 0.3, 0.5 and 0.85; 4, 8
#: and 16 rounds per column), never on the reported runs. Checked again after the rounds offered
#: tables in bins, on seeds 100-101 (benchmarks/results/release_tuning_after_bins.jsonl): 0.5
#: against 0.3 is worse on anes at epsilon 1 (2-way 0.0683 against 0.0646), the same on gss at 3
#: and better on cces16 at 1 (0.0244 against 0.0253).
ADAPTIVE_SHARE, ADAPTIVE_ROUNDS = 0.3, 16


@dataclass(frozen=True)
class TreePlan:
    """The tree stage's budget: per-step epsilons, noise and accountant (public facts only;
    :attr:`composition` is the accountant's name).

    Steps: one-way tables, ``selections`` tree selections, the tree's pair tables, then for
    each round of ``batches`` (sizes summing to ``extras``) that many residual selections
    (:mod:`privgraph.release.residuals`) and their pair tables at ``extra_epsilons``.
    """

    epsilon: float
    delta: float
    noise: str  # "gaussian" (delta > 0, zCDP through RDP) or "laplace" (delta = 0, basic)
    accountant: Accountant  # the tree's one choice of composition, by its noise
    one_way_epsilon: float
    select_epsilon: float  # per tree selection
    pair_epsilon: float  # the tree's pair tables
    residual_epsilon: float  # per residual selection
    extra_epsilons: tuple[float, ...]  # each round's residual pair tables
    selections: int
    extras: int
    rho: float | None  # the whole release's zCDP budget (Gaussian), None under Laplace
    neighbours: Neighbours = RO  # add/remove: n private (estimated from the one-way tables)
    batches: tuple[int, ...] = ()  # residual pairs per round (sum: extras)
    adaptive: object = None  # AdaptivePlan (privgraph.release.adaptive): AIM's rounds after the tree, or None

    @property
    def composition(self) -> str:
        """The name of the tree's accountant (what the plan's text prints)."""
        return self.accountant.name

    @property
    def extra_epsilon(self) -> float:
        """The last round's tables: the release's stage 3."""
        return self.extra_epsilons[-1]

    def charges(self, domain: Domain) -> Ledger:
        """The ledger the stage charges on ``domain`` (pair tables planned on stand-in pairs: the
        count of tables fixes the sensitivity and the epsilon the cost; the shapes only the grid)."""
        chain = [(a, b) for a, b in zip(domain.names, domain.names[1:])]
        some = list(itertools.combinations(domain.names, 2))
        ledger = (self.table_charge(domain, [(v,) for v in domain.names], self.one_way_epsilon)
                  + Ledger.of(self.selection_charge())
                  + self.table_charge(domain, chain, self.pair_epsilon))
        if self.adaptive is not None:
            ledger = ledger + Ledger.of(self.adaptive.charge(self.delta))
        for size, epsilon in zip(self.batches, self.extra_epsilons):
            ledger = ledger + Ledger.of(self.residual_charge(size)) + self.table_charge(domain, some[:size], epsilon)
        return ledger

    def table_charge(self, domain: Domain, cliques, epsilon: float) -> Ledger:
        return plan_release(domain=domain, cliques=cliques, epsilon=epsilon, neighbours=self.neighbours,
                            noise=self.noise,
                            delta=self.delta or None)

    def cell_noise(self, epsilon: float, tables: int) -> float:
        """The noise scale of one released cell when ``tables`` tables are released together at
        ``epsilon`` with this plan's noise (Gaussian sigma, or the Laplace scale; public).

        >>> d = Domain.of(a=2, b=3, c=2)
        >>> p = plan_tree(d, 1000, epsilon=1.0, delta=0.0)
        >>> round(p.cell_noise(p.pair_epsilon, 2) / (4 / p.pair_epsilon), 3)  # L1 sensitivity 2 per table
        1.0
        """
        sensitivity = release_sensitivity(self.noise, tables, self.neighbours)
        if self.noise == "gaussian":
            return gaussian_calibration(epsilon, self.delta, sensitivity, 4 * tables)[0]
        return laplace_scale(epsilon, sensitivity, 4 * tables)

    def mean_abs_noise(self, epsilon: float, tables: int) -> float:
        """A released cell's expected absolute noise, ``sqrt(2/pi) sigma`` (Gaussian) or ``b``
        (Laplace), at :meth:`cell_noise`'s scale (public)."""
        return self.cell_noise(epsilon, tables) * (ABS_NORMAL if self.noise == "gaussian" else 1.0)

    def selection_charge(self) -> Charge:
        """The d - 1 tree selections, reserved together before the first is drawn."""
        return exponential_charge(self.select_epsilon, pair_score_sensitivity(self.neighbours),
                                  self.neighbours).times(self.selections)

    def residual_charge(self, count: int) -> Charge:
        """One round's ``count`` residual selections, reserved together before the first is drawn."""
        return exponential_charge(self.residual_epsilon, pair_score_sensitivity(self.neighbours),
                                  self.neighbours).times(count)


def plan_tree(domain: Domain, n_rows: int | None, *, epsilon: float, delta: float,
              selection_share: float | None = None, residual_share: float | None = None,
              neighbours: Neighbours | str = RO) -> TreePlan:
    """The tree stage's plan for ``domain`` at (epsilon, delta) under ``neighbours``; reads no
    data. The plan does not depend on ``n_rows`` (it may be None: under add/remove n is private).

    The selections' shares default to :data:`SELECTION_SHARE` and :data:`RESIDUAL_SHARE`
    under replace-one. Under add/remove a score's sensitivity is half, so the same noise in
    score units (``2 Delta / epsilon``) costs half the epsilon: a quarter of the rho under
    zCDP (``epsilon^2 / 8`` each), half the epsilon under basic composition; the shares
    default to that, and the tables get the rest.

    Examples
    --------
    >>> d = Domain.of(a=2, b=3, c=2)
    >>> p = plan_tree(d, 1000, epsilon=1.0, delta=0.0)
    >>> p.noise, p.selections, p.extras, p.batches, round(sum(c.epsilon * c.count for c in p.charges(d)), 6)
    ('laplace', 2, 1, (1,), 0.999999)
    >>> plan_tree(Domain.of(**{v: 2 for v in "abcdefg"}), 100, epsilon=1.0, delta=0.0).batches
    (3, 2, 2)
    >>> g = plan_tree(d, 1000, epsilon=1.0, delta=1e-6)
    >>> g.noise, g.composition, g.charges(d).total(g.accountant, 1e-6).epsilon <= 1.0
    ('gaussian', 'rdp', True)
    >>> a = plan_tree(d, None, epsilon=1.0, delta=1e-6, neighbours="add_remove")
    >>> a.charges(d).neighbours == {Neighbours.ADD_REMOVE}, a.cell_noise(a.pair_epsilon, 2) < g.cell_noise(g.pair_epsilon, 2) / 1.4
    (True, True)
    >>> round(a.select_epsilon / g.select_epsilon, 3)  # the same selection noise: 2 Delta / epsilon
    0.5
    """
    neighbours = Neighbours.parse(neighbours)
    same_noise = (pair_score_sensitivity(neighbours) / pair_score_sensitivity(RO)) ** (1 if delta == 0 else 2)
    selection_share = SELECTION_SHARE * same_noise if selection_share is None else selection_share
    residual_share = RESIDUAL_SHARE * same_noise if residual_share is None else residual_share
    d = len(domain.names)
    if d < 3:
        raise InvalidInput(f"a tree release needs at least three columns, got {list(domain.names)}")
    if not (0 < selection_share and 0 < residual_share and selection_share + residual_share < 1):
        raise InvalidInput(f"the selections' shares must be positive and sum below 1, got {selection_share!r} "
                           f"and {residual_share!r}")
    adaptive_share = ADAPTIVE_SHARE if delta > 0 else 0.0  # a zCDP filter: Gaussian noise only
    k = extra_pair_count(d)
    rounds = min(RESIDUAL_ROUNDS if not adaptive_share else 1, k)
    batches = tuple(k // rounds + (1 if i < k % rounds else 0) for i in range(rounds))
    tables = 1 - selection_share - residual_share - adaptive_share
    counts = np.array([d, d - 1, *batches]) / (2 * d - 1 + k)  # equal noise on every table
    if delta == 0:
        eps = epsilon - MARGIN
        ones, pairs, *extra = (float(x) for x in eps * tables * counts)
        return TreePlan(epsilon, 0.0, "laplace", BASIC, ones, eps * selection_share / (d - 1), pairs,
                        eps * residual_share / k, tuple(extra), d - 1, k, None, neighbours, batches)

    rho = total_rho(epsilon, delta)
    ones, pairs, *extra = (zcdp_epsilon(float(r), delta) for r in rho * tables * counts)
    select = math.sqrt(8 * rho * selection_share / (d - 1))  # epsilon^2 / 8 each (bounded range)
    residual = math.sqrt(8 * rho * residual_share / k)
    adaptive = None
    if adaptive_share:
        adaptive = AdaptivePlan(rho * adaptive_share, ADAPTIVE_ROUNDS * d, neighbours)
    return TreePlan(epsilon, delta, "gaussian", RDP, ones, select, pairs, residual, tuple(extra), d - 1, k, rho,
                    neighbours, batches, adaptive)


def select_tree(names, pairs, scores: np.ndarray, *, epsilon: float, sampler: NoiseSampler,
                neighbours: Neighbours = RO, fits=None) -> list[tuple[str, str]]:
    """Up to d - 1 edges of a spanning tree of ``names``, one exponential mechanism per edge
    in Kruskal's order (candidates: the pairs joining two components of the edges chosen so
    far). Each call is charged by the caller's plan (:meth:`TreePlan.selection_charge`).

    ``fits(chosen, pair)``: whether the model of the edges chosen so far plus ``pair`` keeps
    its junction tree within the public cap (:func:`~privgraph.release.model_size.fits`;
    public sizes and earlier releases only); each selection runs on the pairs that fit, and
    when none does the tree stays a forest (the remaining selections are not drawn; their
    charge was reserved all the same).

    >>> from privgraph.privacy import SeededSampler
    >>> pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    >>> sorted(select_tree("abc", pairs, np.array([1e6, 0.0, 1e6]), epsilon=1.0, sampler=SeededSampler(0)))
    [('a', 'b'), ('b', 'c')]
    >>> select_tree("abc", pairs, np.array([1e6, 0.0, 1e6]), epsilon=1.0, sampler=SeededSampler(0),
    ...             fits=lambda chosen, pair: not chosen)
    [('b', 'c')]
    """
    index = {v: i for i, v in enumerate(names)}
    component = np.arange(len(index))  # each column's component (a label), vectorised over the pairs
    first = np.array([index[a] for a, _ in pairs], dtype=np.int64)
    second = np.array([index[b] for _, b in pairs], dtype=np.int64)
    edges: list[tuple[str, str]] = []
    for k in range(len(index) - 1):
        heartbeat.at("the tree's selections: " + heartbeat.of(k + 1, len(index) - 1, "edge", at_most=True))
        open_ = np.flatnonzero(component[first] != component[second])  # in the pairs' order, as before
        admissible = None if fits is None else (lambda i: fits(edges, pairs[open_[i]]))
        pick, _ = exponential_mechanism(scores[open_], epsilon=epsilon, sensitivity=pair_score_sensitivity(neighbours),
                                        neighbours=neighbours, sampler=sampler, admissible=admissible)
        if pick is None:
            break
        a, b = pairs[open_[pick]]
        component[component == component[index[a]]] = component[index[b]]
        edges.append((a, b))
    return edges


@dataclass(frozen=True)
class TreeStructure:
    """The fitted tree stage: its noisy tables (one-way, the tree's pairs, the residual pairs
    of every round but the last; over the merged codes of ``levels``), the tree's edges,
    every residual pair (in the order chosen; the last round's, ``last``, are the
    parameters' release), and the ledger of those releases."""

    tables: object  # NoisyMarginals
    edges: tuple[tuple[str, str], ...]
    extras: tuple[tuple[str, str], ...]
    ledger: Ledger
    last: tuple[tuple[str, str], ...] = ()
    #: the data over the merged codes of the rare levels (tables are over them), its pair and
    #: one-way tables from the one data pass (counts, not released)
    merged: MergedEngine | None = None
    #: what AIM's adaptive rounds did (:class:`~privgraph.release.adaptive.AdaptiveRounds`), None without them
    adaptive: object = None
    #: ``ledger`` by what each charge paid for, in the order spent: ``((label, Ledger), ...)``
    paid: tuple = ()
    #: the triples the adaptive rounds measured (:func:`~privgraph.release.model_size.workload_triples`)
    triples: tuple = ()
    @property
    def start(self) -> tuple:
        """Log-potentials of ``tables``' first groups from the adaptive rounds' last fit
        (post-processing), the parameters' fit's warm start (:func:`warm_start`); empty without
        the rounds."""
        return () if self.adaptive is None else tuple(self.adaptive.model.potentials)

    @property
    def levels(self) -> MergedLevels:
        """The rare levels merged after step 1."""
        return self.merged.levels

    @property
    def graph(self):
        """The released graph: the tree's skeleton as a CPDAG of undirected edges
        (post-processing). The residual pairs are the model's, not the graph's: chosen where
        the tree's model fits worst, they include pairs a tree cannot join without a cycle
        (co-parents, indirect paths), and on asia, child and alarm they lowered the skeleton
        F1 (docs/release.md)."""
        return CPDAG(self.tables.domain.names, undirected=self.edges)


def fit_tree_structure(engine, plan: TreePlan, *, sampler: NoiseSampler, budget: Budget | None,
                       rng: np.random.Generator | None = None, tree_cap: int = DEFAULT_TREE_CAP) -> TreeStructure:
    """Steps 1-4 of the module docstring on ``engine`` (its domain, under ``plan.neighbours``),
    up to the choice of the last round's residual pairs (their tables are the parameters'
    release). ``rng``: the post-processing draws of the rounds' predictions
    (:func:`round_predictions`; not noise). ``tree_cap``: the public cap on the model's
    junction tree (:mod:`privgraph.release.model_size`): every selection, of the tree's edges
    and of the residual pairs, runs on the pairs that keep the model of the tables chosen so
    far within it, so every model fitted here and after is exact. A round in which no pair
    fits releases the one-way tables again at its epsilon (they always fit). Rare levels are
    merged after step 1 (:mod:`privgraph.release.levels`; the structure's ``levels``)."""
    records = int(engine.counts([])) if plan.neighbours is RO else None  # public only under replace-one
    pairs = list(itertools.combinations(engine.domain.names, 2))
    triples = workload_triples(engine.domain) if plan.adaptive is not None else []  # public: the codebook's sizes
    heartbeat.at(f"counting the {len(pairs):,} pair tables{f' and {len(triples):,} triples' if triples else ''} "
                 "in one pass")
    every = count_tables(engine, pairs + triples)  # every pair table and the rounds' triples, counted once
    counted, counted_triples = dict(zip(pairs, every[:len(pairs)])), dict(zip(triples, every[len(pairs):]))
    start_clock()  # the data pass is done: a public time cap counts from here (privgraph.timecap)
    release = functools.partial(release_counts, engine, plan=plan, sampler=sampler, budget=budget, records=records)
    ones, ledger = release(_one_way(engine.domain), plan.one_way_epsilon,
                           counts=one_way_counts(engine.domain.names, counted))
    paid = {f"the {len(engine.domain.names)} one-way tables": ledger}
    # Rare levels merged (post-processing of the one-way tables, :mod:`privgraph.release.levels`):
    # every later table, score and model is over the merged codes.
    levels = merge_rare_levels(engine.domain, ones.tables, ones.scale)
    domain, merged = levels.merged, MergedEngine(engine, levels, counted)
    counted = {p: levels.table(t, p) for p, t in counted.items()}
    counted_triples = {t: levels.table(c, t) for t, c in counted_triples.items()}
    ones_counts = one_way_counts(domain.names, counted)
    ones = replace(ones, domain=domain, tables=tuple(levels.table(t, c) for t, c in zip(ones.tables, ones.cliques)))
    release = functools.partial(release_counts, merged, plan=plan, sampler=sampler, budget=budget, records=records)
    n = ones.records  # replace-one: the public n; add/remove: the one-way tables' estimate (post-processing)
    selected = reserve_plan([plan.selection_charge()], budget)
    ledger = ledger + selected
    one_way = dict(zip(domain.names, (proportions(t) for t in ones.tables)))
    independent = (np.outer(one_way[a], one_way[b]) for a, b in pairs)  # one at a time: d^2 / 2 of them
    tree_scores = l1_scores(counted.values(), independent, n) - noise_penalty(
        domain, pairs, plan, plan.pair_epsilon, len(domain.names) - 1)
    edges = select_tree(domain.names, pairs, tree_scores,
                        epsilon=plan.select_epsilon, sampler=sampler, neighbours=plan.neighbours,
                        fits=lambda chosen, pair: forest_fits(domain, chosen, pair, tree_cap))
    tree, spent = release(edges or _one_way(domain), plan.pair_epsilon, counts=_counts(edges, counted, ones_counts))
    tables = joined(ones, tree, plan.neighbours)
    ledger = ledger + spent
    paid |= {f"the tree's edges: {len(edges)} chosen by the exponential mechanism": selected,
             f"the tree's {len(edges)} pair tables" if edges else "the one-way tables again (no pair fitted the cap)": spent}
    in_tree = set(edges)
    extras: list = []
    measured_triples: list = []  # the rounds' triples: in the model's cliques, not pairs of the graph's
    rounds = None
    if plan.adaptive is not None:
        adaptive = reserve_plan([plan.adaptive.charge(plan.delta)], budget)
        ledger = ledger + adaptive
        tables, rounds = adaptive_rounds(tables, counted | counted_triples, plan.adaptive, delta=plan.delta,
                                         sampler=sampler,
                                         rng=rng if rng is not None else np.random.default_rng(),
                                         tree_cap=tree_cap, records=records,
                                         ordered={v for v in engine.domain.names if engine.domain.is_ordered(v)})
        extras += [p for p in dict.fromkeys(rounds.pairs) if len(p) == 2 and p not in in_tree]
        measured_triples = [t for t in dict.fromkeys(rounds.pairs) if len(t) == 3]
        n = tables.records
        paid[f"AIM's adaptive rounds: {rounds.rounds} rounds, each a selection and its table (a pair or a triple)"] = adaptive
    # The last round's candidates: every pair outside the tree (a pair the adaptive rounds
    # measured may be measured again), so the round always has its planned number of
    # candidates and its charge never depends on the data.
    rest = [p for p in pairs if p not in in_tree]
    # with the rounds, their last fit is a model of these very tables (post-processing): no refit
    predicted = (tree_model_pairs(tables, edges, tree_cap) if plan.adaptive is None else
                 model_pair_tables(rounds.model, rest, rng if rng is not None else np.random.default_rng(),
                                   tree_cap=tree_cap))
    for i, (size, epsilon) in enumerate(zip(plan.batches, plan.extra_epsilons)):
        check_time(f"the tree's round {i + 1} of residual pairs")
        heartbeat.at("the residual pairs: " + heartbeat.of(i + 1, len(plan.batches), "round"))
        residual = reserve_plan([plan.residual_charge(size)], budget)
        ledger = ledger + residual
        _add(paid, f"the residual pairs' selections ({len(plan.batches)} round{'s' * (len(plan.batches) > 1)}, "
                   "exponential mechanism)", residual)
        if i:  # the model refitted with the earlier rounds' tables (post-processing)
            predicted = round_predictions(tables, rest, rng if rng is not None else np.random.default_rng(),
                                          tree_cap=tree_cap)
            n = tables.records
        scores = (l1_scores([counted[p] for p in rest], [predicted[p] for p in rest], n)
                  - noise_penalty(domain, rest, plan, epsilon, size))
        base = edges + extras + measured_triples
        chosen = select_residual_pairs(rest, scores, size, epsilon=plan.residual_epsilon, sampler=sampler,
                                       neighbours=plan.neighbours,
                                       fits=lambda chosen, pair: fits(domain, base + chosen, pair, tree_cap))
        extras += [p for p in chosen if p not in extras]
        taken = set(chosen)
        rest = [p for p in rest if p not in taken]
        if i == len(plan.batches) - 1:
            return TreeStructure(tables, tuple(edges), tuple(extras), ledger, tuple(chosen or _one_way(domain)), merged,
                                 rounds, tuple(paid.items()), tuple(measured_triples))
        released, spent = release(chosen or _one_way(domain), epsilon, counts=_counts(chosen, counted, ones_counts))
        tables, ledger = joined(tables, released, plan.neighbours), ledger + spent
        _add(paid, "the residual pairs' tables of every round but the last", spent)
    raise InvalidInput("a tree plan needs at least one round of residual pairs")


def _add(paid: dict, label: str, ledger: Ledger) -> None:
    """``ledger`` added to ``paid[label]`` (a label's charges across rounds, together)."""
    paid[label] = paid[label] + ledger if label in paid else ledger


def noise_penalty(domain: Domain, pairs, plan: TreePlan, epsilon: float, tables: int) -> np.ndarray:
    """Each pair's expected L1 noise were its table released at ``epsilon`` with ``tables``
    tables (AIM's size penalty): ``E|noise| * cells``, ``E|noise|`` = ``sqrt(2/pi) sigma``
    (Gaussian) or ``b`` (Laplace). Public: sizes and the plan only, so a score less this is
    as sensitive as the score.

    >>> d = Domain.of(a=2, b=3, c=2)
    >>> p = plan_tree(d, 1000, epsilon=1.0, delta=0.0)
    >>> pen = noise_penalty(d, [("a", "b"), ("a", "c")], p, p.pair_epsilon, 2)
    >>> round(float(pen[0] / pen[1]), 3), round(float(pen[1] / p.cell_noise(p.pair_epsilon, 2)), 3)
    (1.5, 4.0)
    """
    scale = plan.mean_abs_noise(epsilon, tables)
    return np.array([scale * domain.cells(p) for p in pairs])


def _one_way(domain: Domain) -> list[tuple[str]]:
    """The one-way cliques: what a round releases when no pair fits the model-size cap."""
    return [(v,) for v in domain.names]


def _counts(chosen, counted: dict, ones_counts: list) -> list:
    """The count tables of ``chosen`` pairs, or the one-way counts when none was chosen."""
    return [counted[p] for p in chosen] if chosen else ones_counts


def one_way_counts(names, pair_counts: dict) -> list[np.ndarray]:
    """Each of ``names``' count tables, summed out of the first counted pair table that holds
    it (one pass over the data for the pairs serves the one-way tables too).

    >>> one_way_counts("ab", {("a", "b"): np.array([[1, 2], [3, 4]])})
    [array([3, 7]), array([4, 6])]
    """
    first: dict = {}
    for (a, b), table in pair_counts.items():
        first.setdefault(a, np.asarray(table).sum(axis=1))
        first.setdefault(b, np.asarray(table).sum(axis=0))
    return [first[v] for v in names]


def release_counts(engine, cliques, epsilon: float, *, plan: TreePlan, sampler: NoiseSampler,
                   budget: Budget | None, records: int | None, counts=None):
    """(NoisyMarginals, ledger) of ``cliques``' count tables with ``plan``'s noise and relation;
    ``records``: the public n under replace-one (it rides along), None under add/remove (n is
    estimated from the noisy tables); ``counts``: those tables when already counted (else they
    are counted here)."""
    counts = count_tables(engine, cliques) if counts is None else counts
    return release_tables(counts, domain=engine.domain, cliques=cliques, epsilon=epsilon,
                          neighbours=plan.neighbours, sampler=sampler, noise=plan.noise, delta=plan.delta or None,
                          records=records, budget=budget)


def tree_model_pairs(tables, edges, tree_cap: int = DEFAULT_TREE_CAP) -> dict:
    """Every pair's table under the model CGM-EM fits to the one-way and tree tables
    (post-processing; exact: the tree's junction tree is within ``tree_cap``)."""
    model = cgm_em(tables, max_cells=tree_cap)
    marginals = dict(zip(model.cliques, infer(model, max_cells=tree_cap).marginals))
    names = tables.domain.names
    return tree_pair_tables(names, edges, {v: marginals[(v,)] for v in names}, {e: marginals[e] for e in edges})


def warm_start(start, tables) -> dict:
    """CGM-EM's keywords for a fit of ``tables`` whose first groups an earlier fit gave the
    log-potentials ``start``: those, then zeros for the groups after them (a table joined since,
    :func:`joined`); none when ``start`` is empty (a fit from the uniform model).

    >>> from privgraph.mrf.noisy_tables import NoisyMarginals
    >>> d = Domain.of(a=2, b=3)
    >>> tables = NoisyMarginals(d, (("a",), ("a", "b")), (0, 1), (np.ones(2), np.ones((2, 3))), "gaussian", 1.0, 6.0)
    >>> [t.tolist() for t in warm_start((np.array([0.5, -0.5]),), tables)["start"]]
    [[0.5, -0.5], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]
    >>> warm_start((), tables)
    {}
    """
    if not start:
        return {}
    shapes = tables.potential_shapes()
    return {"start": [*start, *(np.zeros(shape) for shape in shapes[len(start):])]}


def joined(earlier, later, neighbours: Neighbours = RO):
    """One :class:`~privgraph.mrf.noisy_tables.NoisyMarginals` of two releases' tables for a model
    fit (post-processing), each table with its own noise scale
    (:func:`~privgraph.mrf.noisy_tables.join_releases`). Under add/remove the number of
    records is estimated again from every table of both; under replace-one it is the public n.

    >>> from privgraph.mrf.noisy_tables import NoisyMarginals
    >>> d = Domain.of(a=2, b=2)
    >>> one = NoisyMarginals(d, (("a",),), (0,), (np.full(2, 3.0),), "gaussian", 2.0, 4.0)
    >>> two = NoisyMarginals(d, (("b",),), (0,), (np.full(2, 2.0),), "gaussian", 2.0, 4.0)
    >>> joined(one, two).records, joined(one, two, Neighbours.ADD_REMOVE).records  # public n, or estimated
    (4.0, 5.0)
    """
    return join_releases(earlier, later, records=later.records if neighbours is RO else None)


__all__ = ["ABS_NORMAL", "PREDICTION_ROWS", "RESIDUAL_ROUNDS", "RESIDUAL_SHARE", "SELECTION_SHARE", "TreePlan", "TreeStructure",
           "fit_tree_structure", "joined", "warm_start", "l1_scores", "one_way_counts", "pair_score_sensitivity", "plan_tree",
           "model_pair_tables", "proportions", "release_counts", "round_predictions", "select_tree", "tree_model_pairs"]
