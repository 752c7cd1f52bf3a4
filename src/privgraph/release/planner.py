"""The release planner: what a budget buys, predicted from public facts only; spends nothing.

Inputs are public: the domain, the number of rows n (public under replace-one, the
release's relation), the total (epsilon, delta), the split between the stages, the cap on
a clique's cells, and two effect sizes the user cares about. Nothing here reads data or
draws noise.

**Stage 1 (structure, Priv-PC).** Priv-PC's own plan (:meth:`PrivPC.privacy_plan`) fixes
the per-round epsilon of the examine step; its noise is Laplace with scale
``b1 = 1 / epsilon_examine`` in margin units (a margin has replace-one sensitivity 1, see
:mod:`privgraph.causal.margins`). The effect to detect is a marginal dependence of phi
coefficient ``effect`` between two columns. For the rank tests (Kendall) the test's z is
about ``phi sqrt(n)`` (on a 2x2 table tau-b is phi and the score test is the chi-square
test), so the margin is ``(phi sqrt(n) - T) / Delta(n)``, T the two-sided threshold at
``alpha`` and Delta the replace-one sensitivity of ``|z|``. For the G test (block votes,
B blocks of n/B rows) the margin is ``B (power - 1/2)``, with power the G test's power at
noncentrality ``(n/B) phi^2`` on one degree of freedom. The probability that Laplace noise
of scale b hides a margin m > 0 is ``exp(-m/b) / 2``; the stage is affordable when Priv-PC
accepts the plan (it refuses when the noise drowns every marginal test) and that
probability is at most ``miss`` (default 5%). When Priv-PC refuses its default cap of
rounds, the planner looks for the largest smaller cap it accepts (PC then stops early and
keeps the edges it did not test: a denser graph, larger cliques).

**Stage 3 (parameters).** At most one clique per column (:func:`family_cliques`), each of
at most ``cap`` cells: Laplace noise of scale ``b3 = 2 K / epsilon_3`` per cell with
``K <= d`` tables (replace-one sensitivity 2 per table). The effect is a cell of
probability ``cell``: its relative error is ``b3 / (n cell)`` (mean absolute Laplace noise
over the count), affordable at most ``max_relative_error`` (default 1/2). A released table
of c cells is off by about ``c b3 / (2 n)`` in total variation before post-processing.

The cap on a table's cells is lowered to ``n / (usefulness b3)`` (default usefulness 4:
PrivBayes' theta-usefulness), so that an average cell holds several noise scales; the
release uses the lowered cap.

**Stages 2 and 4** (orientation by colliders and Meek's rules; sampling) are
post-processing: no budget.

**Recommended split**: the smallest structure share on a grid that makes stage 1
affordable at Priv-PC's default cap, the rest to the parameters; if none does, 1/2 (the
measured default, docs/release.md) with the largest cap stage 1 can afford.

**Gauss-PC** (``structure="gauss-pc"``, delta > 0): the whole release is one zCDP budget
``rho`` (the largest the RDP accountant converts to epsilon at delta, as the tree's);
Gauss-PC (:mod:`privgraph.causal.gauss_pc`) gets ``split * rho`` and the parameters'
tables, Gaussian, the rest, so the two stages compose by RDP instead of adding epsilons
(at epsilon 1 and delta 1e-6, half of rho is worth epsilon 0.69 alone, not 0.5). Stage 1's
prediction: level 0's Gaussian noise ``sigma`` (margin units, from the Gauss-PC the
release builds, :func:`structure_estimator`, through its public
:meth:`~privgraph.causal.PrivPC.test_noise`) against the margin of a marginal test at
phi = ``effect`` (as for Priv-PC); a dependent pair is removed with probability
``Phi(-margin / sigma)``; affordable when Gauss-PC accepts its plan (level 0's noise at most
what a marginal test can bear), level 1's noise would be bearable too with every pair still
in its vector (Gauss-PC raises level 0's share until level 0 is bearable, which can leave
the later levels too little: on alarm at 1e5 rows and epsilon 1 its graph scored skeleton
F1 0.31 that way, docs/release.md), and that probability is at most ``miss``. Stage 3: the
Gaussian sigma of the tables' cells, against the count ``n cell``. Split: unless given, the
least share of rho on :data:`SPLIT_GRID`, at least :data:`GAUSS_SPLIT` (measured), that
makes stage 1 affordable.

**Structure** (``structure="auto"``): when delta > 0, the private spanning tree of
:mod:`privgraph.release.tree` with AIM's adaptive rounds (pairs and small triples) wherever it
has three or more columns and its tables fit the memory cap (:func:`resolve_structure`: public
facts, before any n, so under add/remove no size is spent). Measured on real tables
(docs/release.md): the earlier rule, Gauss-PC wherever its stage 1 was predicted affordable,
released gss at epsilon 30 as a Gauss-PC model of 5 tables (2-way TVD 0.046, the tree 0.0091 at
the same budget); network-generated tables flattered it. Otherwise (delta = 0, or the tree too wide
for memory) the planner chooses at n (:func:`_choose`): Gauss-PC when delta > 0 and its stage 1
is affordable; else Priv-PC when stage 1 is affordable at its default cap (at the chosen
split) or the domain has fewer than three columns, else the tree (d - 1 selections, whatever
the data). For the tree the stages are predicted as: the
selections' exponential mechanism (noise ``2 Delta / epsilon_select`` in score units,
``Delta = 2``) against the L1 score ``n phi`` of a balanced binary pair of dependence phi
= ``effect``; the chance that one of the other candidate pairs beats it, bounded by
``pairs exp(-epsilon_select n phi / (2 Delta))``; and each released cell's mean absolute
noise (``sigma sqrt(2/pi)`` or the Laplace scale) against the count ``n cell``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.stats import ncx2, norm

from privgraph.causal import PrivPC
from privgraph.causal.margins import TooFewRows
from privgraph.data import Domain
from privgraph.data.domain import check_countable
from privgraph.mrf.noisy_tables import release_sensitivity
from privgraph.privacy import BudgetTooSmall, Neighbours, gaussian_calibration, histogram_l1_sensitivity, laplace_scale
from privgraph.privacy.composition import BASIC, RDP, Accountant
from privgraph.privacy.neighbours import check_delta, check_epsilon
from privgraph.privacy.resize import TAIL, round_up, size_epsilons
from privgraph.privacy.zcdp import MARGIN, rdp_epsilon, total_rho, zcdp_epsilon
from privgraph.declarations import RELEASE_STRUCTURES
from privgraph.release.model_size import BASE_BYTES, MEMORY_CAP_BYTES, tree_stage_bytes
from privgraph.release.stage import STRUCTURES, needs_size
from privgraph.release.tree import pair_score_sensitivity, plan_tree
from privgraph.validation import InvalidInput, check_share, one_of

#: The structure's share of epsilon when the planner cannot recommend one (measured, docs/release.md).
DEFAULT_SPLIT = 0.5

#: The plan's note on the stages that spend nothing.
_POST_PROCESSING = "orientation (colliders, Meek's rules, DAG extension) and sampling are post-processing: no budget"
#: The tree's counterpart: nothing is oriented (an undirected dependence structure, no causal claim).
_TREE_POST_PROCESSING = ("the tree is not oriented (an undirected dependence structure, no causal claim); the model's "
                         "fit and sampling are post-processing: no budget")

#: Structure shares the planner tries, smallest first.
SPLIT_GRID = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)

#: Gauss-PC's least share of rho. At 1e5 rows and epsilon 1, on seeds never reported
#: (``benchmarks/bench_release_split.py``): 0.3 gave the lowest TVD on asia, survey and
#: earthquake (seeds 100-102; at 0.5 asia's 2-way TVD is 0.0013 against 0.0011, still half of
#: AIM's), but its asia graph only tied Priv-PC alone's skeleton F1 (0.80 against 0.80 over
#: seeds 10-29), where 0.5 scores 0.84 (0.7: 0.86); the release's graph must be at least as
#: good as Priv-PC's alone, so 0.5 (docs/release.md).
GAUSS_SPLIT = 0.5


@dataclass(frozen=True)
class StagePlan:
    """One stage's predicted noise against the effect it must detect (public facts only)."""

    stage: str
    epsilon: float
    noise: float  # Laplace scale, in the units of ``effect_size``
    effect_size: float  # the margin (stage 1) or the expected count of the cell (stage 3)
    error: float  # miss probability (stage 1) or relative error (stage 3)
    affordable: bool
    note: str = ""


@dataclass(frozen=True)
class ReleasePlan:
    """What a budget buys: each stage's prediction, the cap of rounds, the ledger to reserve."""

    epsilon: float
    delta: float
    n_rows: int
    split: float
    rounds: int | None  # Priv-PC's cap of rounds (None: its default)
    stages: tuple[StagePlan, ...]
    cap: int  # cells of one model table: the user's cap, lowered to keep tables useful
    recommended_split: float
    notes: tuple[str, ...] = field(default=())
    structure: str = "priv-pc"  # the chosen stage 1: "gauss-pc", "priv-pc" or "tree"
    tree: object = None  # the tree's TreePlan, in a plan of the tree
    neighbours: str = "replace_one"  # the release's relation
    size_epsilon: float = 0.0  # add/remove with a PC structure possible: the size's epsilon (stage 0)
    stages_epsilon: float | None = None  # what stages 1 to 3 share after the size (None: epsilon)

    @property
    def affordable(self) -> bool:
        return all(s.affordable for s in self.stages)

    def rows(self) -> list[dict]:
        """One plain dict per stage (JSON, tables)."""
        return [vars(s) | {"stage": s.stage} for s in self.stages]

    def to_markdown(self) -> str:
        """The plan as a Markdown table with a one-line verdict per stage."""
        head = ("| stage | epsilon | noise (Laplace scale or Gaussian sigma) | effect | error | affordable |\n"
                "|---|---|---|---|---|---|")
        lines = [f"| {s.stage} | {s.epsilon:.4g} | {s.noise:.4g} | {s.effect_size:.4g} | {s.error:.3g} | "
                 f"{'yes' if s.affordable else 'NO'} |" for s in self.stages]
        notes = [f"- {s.stage}: {s.note}" for s in self.stages if s.note] + [f"- {n}" for n in self.notes]
        return "\n".join([head, *lines, "", *notes])


def plan_release(domain: Domain, n_rows: int, *, epsilon: float, delta: float = 1e-6, split: float | None = None,
                 cap: int = 5_000, alpha: float = 0.05, effect: float = 0.1, cell: float = 0.01,
                 miss: float = 0.05, max_relative_error: float = 0.5, rounds: int | None = None,
                 usefulness: float = 4.0, structure: str = "auto", neighbours: str = "add_remove") -> ReleasePlan:
    """Predict each stage's noise for a release of ``n_rows`` over ``domain``; reads no data.

    ``neighbours="add_remove"``: n is private and ``n_rows`` only a public stand-in for it
    (the user's guess, or, in a fit, the released size m of :mod:`privgraph.privacy.resize`).
    With ``structure="tree"`` the plan is the tree's, which needs no n. Otherwise stage 0
    releases the size with :data:`~privgraph.privacy.resize.SIZE_SHARE` of the budget
    (``size_epsilon``), and the rest is planned as under replace-one at ``n_rows`` rows
    (the structure runs on the data resized to them), with the tables' add/remove
    sensitivities (1 per table, L1 and L2).

    ``split``: the structure's share of ``epsilon`` (None: the recommended split).
    ``rounds``: Priv-PC's cap (None: its default, or the largest cap it accepts).

    Examples
    --------
    >>> from privgraph.datasets import load_network
    >>> asia = load_network("asia").domain
    >>> plan = plan_release(asia, 100_000, epsilon=1.0, neighbours="replace_one", structure="gauss-pc")
    >>> plan.structure, [s.stage for s in plan.stages], [s.affordable for s in plan.stages]
    ('gauss-pc', ['structure (gauss-pc)', 'parameters (gaussian)'], [True, True])
    >>> plan_release(asia, 100_000, epsilon=1.0, neighbours="replace_one").structure  # auto at delta > 0
    'tree'
    >>> plan = plan_release(asia, 100_000, epsilon=1.0, split=0.5, structure="priv-pc", neighbours="replace_one")
    >>> [s.stage for s in plan.stages], [s.affordable for s in plan.stages]
    (['structure', 'parameters'], [True, True])
    >>> plan.rounds is None, plan.recommended_split <= 0.5, plan.structure
    (True, True, 'priv-pc')
    >>> small = plan_release(load_network("asia").domain, 2_000, epsilon=1.0, delta=0.0, neighbours="replace_one")
    >>> small.structure, [s.stage for s in small.stages]
    ('tree', ['structure (tree)', 'parameters (tree)'])

    The default relation, add/remove: the size first (stage 0), unless the tree runs.

    >>> sized = plan_release(asia, 100_000, epsilon=1.0, structure="gauss-pc")
    >>> sized.structure, [s.stage for s in sized.stages], 0.015 < sized.size_epsilon < 0.025
    ('gauss-pc', ['size', 'structure (gauss-pc)', 'parameters (gaussian)'], True)
    >>> plan_release(asia, 100_000, epsilon=1.0, structure="tree").tree.neighbours.value
    'add_remove'
    >>> pure = plan_release(asia, 100_000, epsilon=1.0, structure="priv-pc")  # Priv-PC: optimal composition
    >>> round(pure.stages_epsilon + pure.size_epsilon, 12)
    1.0
    """
    check_epsilon(epsilon)
    check_delta(delta)
    domain = check_countable(domain).without_derived()  # refused as the release refuses; derived columns: not modelled
    check_structure(structure)

    relation = Neighbours.parse(neighbours)
    chosen = resolve_structure(structure, domain, delta)
    sized = relation is Neighbours.ADD_REMOVE and needs_size(chosen)  # the tree needs no size stage
    check_splittable(epsilon, delta, sized=sized)

    options = dict(split=split, cap=cap, alpha=alpha, effect=effect, cell=cell, miss=miss,
                   max_relative_error=max_relative_error, rounds=rounds, usefulness=usefulness, structure=chosen)
    if not sized:
        plan = _plan(domain, int(n_rows), epsilon=epsilon, delta=delta, tables=relation, **options)
        return replace(plan, notes=plan.notes + (AUTO_TREE_NOTE,)) if chosen != structure else plan
    return _sized(domain, int(n_rows), epsilon=epsilon, delta=delta, **options)


#: Why ``structure="auto"`` runs the tree whenever delta > 0 and the tree fits the memory cap.
AUTO_TREE_NOTE = ("auto chose the spanning tree with AIM's adaptive rounds (pairs and small triples), as it does "
                  "whenever delta > 0 and the tree's tables fit the memory cap (public facts, so no size is "
                  "spent): on real tables it answered the marginals better than a PC structure's families at "
                  "every budget measured (docs/release.md); Gauss-PC and Priv-PC run when asked by name")


def resolve_structure(structure: str, domain: Domain, delta: float) -> str:
    """The structure a release asked for ``structure`` runs when public facts alone name it:
    for ``"auto"`` the first registered structure whose
    :meth:`~privgraph.release.stage.Structure.runs_for_auto` says so (the spanning tree with the
    adaptive rounds when ``delta > 0``, three or more columns and its tables within the memory
    cap); otherwise ``structure`` itself (``"auto"``: the planner chooses at a public n,
    :func:`_choose`).

    Measured (docs/release.md): under the earlier rule (Gauss-PC wherever its stage 1 was
    predicted affordable) gss at epsilon 30 released a Gauss-PC model of 5 tables, 2-way TVD
    0.046 against the tree's 0.012 at epsilon 3, and on asia at 100,000 rows and epsilon 1
    the tree with the rounds' triples beat Gauss-PC's families in 2-way and 3-way TVD.

    >>> from privgraph.datasets import load_network
    >>> asia = load_network("asia").domain
    >>> resolve_structure("auto", asia, 1e-9), resolve_structure("auto", asia, 0.0), resolve_structure("gauss-pc", asia, 1e-9)
    ('tree', 'auto', 'gauss-pc')
    """
    if STRUCTURES.get(structure) is not None:  # asked for by name
        return structure
    return next((s.name for s in STRUCTURES.values() if s.runs_for_auto(domain, delta)), structure)


def _sized(domain: Domain, n: int, *, epsilon: float, delta: float, **options) -> ReleasePlan:
    """Add/remove with a PC structure possible: stage 0 releases the size, the rest is planned
    at ``n`` rows with add/remove tables (:mod:`privgraph.privacy.resize`)."""
    size_epsilon, rest = size_epsilons(epsilon, delta, size_accountant(delta))
    scale = laplace_scale(size_epsilon, 1.0)
    margin = scale * math.log(1 / (2 * TAIL))
    # zCDP stages (Gauss-PC, the tree at delta > 0) get the rest of rho; Priv-PC's pure rounds,
    # composed exactly (or basically), what basic composition leaves after the size
    plan = _plan(domain, n, epsilon=rest, pure_epsilon=epsilon - size_epsilon, delta=delta,
                 tables=Neighbours.ADD_REMOVE, **options)
    rest = plan.epsilon
    size = StagePlan("size", size_epsilon, scale, float(n), TAIL, True,
                     f"the number of rows with Laplace noise of scale {scale:.4g}; the structure's tests run on a "
                     f"uniform subset of m rows, m the released size less {margin:.0f}")
    notes = plan.notes + (f"add/remove neighbours: n is private; stage 0 releases it (epsilon {size_epsilon:.4g}), "
                          f"the other stages share epsilon {rest:.4g} (together {epsilon:g} at delta {delta:g})",)
    return replace(plan, epsilon=epsilon, stages=(size,) + plan.stages, notes=notes, neighbours="add_remove",
                   size_epsilon=size_epsilon, stages_epsilon=rest)


def check_splittable(epsilon: float, delta: float, *, sized: bool) -> None:
    """Refuse, in the caller's epsilon, a budget too small to split into a release's stages.

    The stages' epsilons are derived (the size's 1% under add/remove, the structure's and
    the parameters' shares, each through zCDP when ``delta > 0``); below some budget one of
    them is not positive and a check deep inside would name that derived value (``epsilon
    must be positive and finite, got -1e-06``). Public facts only; nothing is spent.

    >>> check_splittable(1.0, 1e-6, sized=True)
    >>> check_splittable(1e-4, 1e-6, sized=True)
    Traceback (most recent call last):
    ...
    privgraph.privacy.budget.BudgetTooSmall: epsilon=0.0001 (delta=1e-06), the whole release's budget (--epsilon), is too small to split into its stages (the size, the structure, the parameters): one of them would get no positive epsilon; a release needs epsilon >= 0.0026
    """
    if _is_splittable(epsilon, delta, sized):
        return

    lo, hi = epsilon, 2 * epsilon
    while not _is_splittable(hi, delta, sized):
        lo, hi = hi, 2 * hi
    for _ in range(40):
        mid = (lo * hi) ** 0.5
        lo, hi = (lo, mid) if _is_splittable(mid, delta, sized) else (mid, hi)
    raise BudgetTooSmall(f"epsilon={epsilon:g} (delta={delta:g}), the whole release's budget (--epsilon), is too "
                         f"small to split into its stages (the size, the structure, the parameters): one of them "
                         f"would get no positive epsilon; a release needs epsilon >= {round_up(hi):g}")


def _is_splittable(epsilon: float, delta: float, sized: bool) -> bool:
    """Whether every stage of a release at ``epsilon`` gets an epsilon above the zCDP margin
    (a budget whose derived size share is itself refused, as at ``epsilon=1e-9``, is not)."""
    if epsilon <= 2 * MARGIN:
        return False
    try:
        rest = size_epsilons(epsilon, delta, size_accountant(delta))[1] if sized else epsilon
    except InvalidInput:  # the size's share or the rest's rho not positive: the split fails
        return False
    if rest <= 2 * MARGIN:
        return False
    return delta <= 0 or min(gauss_epsilons(rest, delta, min(SPLIT_GRID))) > 2 * MARGIN


def size_epsilon(epsilon: float, delta: float) -> float:
    """The size's epsilon in a release under add/remove (stage 0), fixed before the structure
    is chosen: 1% of rho when ``delta > 0`` (the zCDP stages' budget), else 1% of epsilon.

    >>> 0.015 < size_epsilon(1.0, 1e-6) < 0.025, size_epsilon(1.0, 0.0)
    (True, 0.01)
    """
    return size_epsilons(epsilon, delta, size_accountant(delta))[0]


def size_accountant(delta: float) -> Accountant:
    """The accountant the size's share is taken under in a release (stage 0): zCDP's (RDP)
    when ``delta > 0``, else basic.

    >>> size_accountant(1e-6).name, size_accountant(0.0).name
    ('rdp', 'basic')
    """
    return RDP if delta > 0 else BASIC


def _plan(domain: Domain, n_rows: int, *, epsilon: float, delta: float, structure, tables,
          pure_epsilon: float | None = None, **options) -> ReleasePlan:
    """Stages 1 to 3 at ``n_rows`` public rows, the tables' sensitivities under ``tables``:
    Gauss-PC and the tree with ``epsilon``, Priv-PC with ``pure_epsilon`` (default: the same).
    The plan's ``epsilon`` is the chosen structure's. A structure asked for by name is planned
    alone (:meth:`~privgraph.release.stage.Structure.predict`; the tree under either relation:
    it needs no n, under add/remove ``n_rows`` is only a guess); ``"auto"``: :func:`_choose`."""
    pure = epsilon if pure_epsilon is None else pure_epsilon
    asked = STRUCTURES.get(structure)
    if asked is not None:
        return asked.predict(domain, int(n_rows), epsilon=epsilon, pure_epsilon=pure, delta=delta, tables=tables,
                             **options)
    return _choose(domain, int(n_rows), epsilon=epsilon, pure=pure, delta=delta, tables=tables, **options)


def _choose(domain: Domain, n_rows: int, *, epsilon: float, pure: float, delta: float, tables, split, cap, alpha,
            effect, cell, miss, max_relative_error, rounds, usefulness) -> ReleasePlan:
    """``structure="auto"`` where :func:`resolve_structure` named none (delta = 0, or the tree
    too wide for memory): Gauss-PC when delta > 0 and its stage 1 is affordable; else Priv-PC
    when its stage 1 is affordable at its default cap or the domain has fewer than three
    columns; else the tree, when its tables fit the memory cap (public facts only)."""
    if delta > 0:
        gauss = gauss_release(domain, int(n_rows), epsilon=epsilon, delta=delta, share=split, cap=cap, alpha=alpha,
                              effect=effect, cell=cell, miss=miss, max_relative_error=max_relative_error,
                              usefulness=usefulness, tables=tables)
        if gauss.stages[0].affordable:
            return gauss  # Priv-PC's recommended split is not needed
        if not tree_fits_memory(domain):
            return replace(gauss, notes=gauss.notes + (TREE_MEMORY_NOTE,))
    plan = priv_pc_release(domain, n_rows, epsilon=pure, delta=delta, split=split, cap=cap, alpha=alpha, effect=effect,
                           cell=cell, miss=miss, max_relative_error=max_relative_error, rounds=rounds,
                           usefulness=usefulness, tables=tables)
    stage1 = plan.stages[0]
    if stage1.affordable or len(domain.names) < 3:
        return plan
    if not tree_fits_memory(domain):
        return replace(plan, notes=plan.notes + (TREE_MEMORY_NOTE,))
    return tree_release(replace(plan, epsilon=epsilon), domain, effect, cell, miss, max_relative_error, stage1,
                        tables)


def priv_pc_release(domain: Domain, n_rows: int, *, epsilon: float, delta: float, split, cap, alpha, effect, cell,
                    miss, max_relative_error, rounds, usefulness, tables) -> ReleasePlan:
    """The plan of a release with Priv-PC as stage 1 (``epsilon``: its pure budget, composed
    exactly) at ``split`` (None: :func:`recommend_split`) and Laplace tables as stage 3."""
    recommended = recommend_split(domain, n_rows, epsilon=epsilon, delta=delta, alpha=alpha, effect=effect, miss=miss)
    share = recommended if split is None else check_split(split)
    stage1, chosen = _structure(domain, n_rows, share * epsilon, delta, alpha, effect, miss, rounds)
    parameters, useful = _parameters(domain, n_rows, (1 - share) * epsilon, cap, cell, max_relative_error, usefulness,
                                     tables)
    notes = (_POST_PROCESSING,)
    return ReleasePlan(epsilon, delta, int(n_rows), share, chosen, (stage1, parameters), useful, recommended, notes)


def tree_alone(domain: Domain, n_rows: int, *, epsilon: float, delta: float, cap, effect, cell, miss,
               max_relative_error, tables) -> ReleasePlan:
    """The plan of a release with the tree asked for (not chosen: Priv-PC's plan, a split
    search, would be neither used nor true), under ``tables`` (it needs no n: under add/remove
    ``n_rows`` is only a guess)."""
    notes = (_POST_PROCESSING,) + (() if tables is Neighbours.REPLACE_ONE else (
        "add/remove neighbours: n is private (estimated from the noisy tables); the tree is the structure "
        "stage that needs no n",))
    base = ReleasePlan(epsilon, delta, int(n_rows), 0.0, None, (), cap, 0.0, notes, neighbours=tables.value)
    return tree_release(base, domain, effect, cell, miss, max_relative_error, None, tables)


#: The note of a plan that did not choose the tree because its pair tables would pass the cap.
TREE_MEMORY_NOTE = ("the tree was not chosen: its pair tables would take the release past the memory cap "
                    "(release.model_size.MEMORY_CAP_BYTES); the PC structure runs, whatever its predicted power")


def tree_fits_memory(domain: Domain) -> bool:
    """Whether the tree stage of ``domain`` stays within the release's memory cap
    (:func:`~privgraph.release.model_size.tree_stage_bytes`; public: the codebook's sizes). Under
    ``structure="auto"`` a table too wide for it gets the PC structure the planner would
    otherwise have passed over, so the release runs instead of being refused.

    >>> tree_fits_memory(Domain.of(**{f"x{j}": 2 for j in range(100)}))
    True
    >>> tree_fits_memory(Domain.of(**{f"x{j}": 2 for j in range(1000)}))
    False
    """
    return BASE_BYTES + tree_stage_bytes(domain) <= MEMORY_CAP_BYTES


def gauss_epsilons(epsilon: float, delta: float, share: float) -> tuple[float, float]:
    """``(structure, parameters)`` epsilons of a Gauss-PC release: ``share`` of the release's
    rho (:func:`~privgraph.privacy.zcdp.total_rho`) as the epsilon Gauss-PC turns back into
    that rho (the RDP accountant's conversion), and the rest as the epsilon of a Gaussian
    release at the remaining rho (CKS's conversion, which the tables' calibration inverts).
    Their charges total at most ``epsilon`` under RDP composition.

    >>> s, p = gauss_epsilons(1.0, 1e-6, 0.5)
    >>> 0.6 < s < 0.75 and 0.6 < p < 0.8
    True
    """
    rho = total_rho(epsilon, delta)
    return rdp_epsilon(share * rho, delta), zcdp_epsilon((1 - share) * rho, delta)


def gauss_release(domain: Domain, n: int, *, epsilon: float, delta: float, share: float | None, cap: int,
                  alpha: float, effect: float, cell: float, miss: float, max_relative_error: float,
                  usefulness: float, tables) -> ReleasePlan:
    """The plan of a release with Gauss-PC as stage 1 and Gaussian tables as stage 3 (zCDP),
    the tables' sensitivity under ``tables``."""
    if delta <= 0:
        raise InvalidInput(f"a Gauss-PC release composes in zCDP and needs delta > 0, got delta={delta!r}")
    options = dict(epsilon=epsilon, delta=delta, cap=cap, alpha=alpha, effect=effect, cell=cell, miss=miss,
                   max_relative_error=max_relative_error, usefulness=usefulness, tables=tables)
    if share is None:
        grid = [s for s in SPLIT_GRID if s >= GAUSS_SPLIT]
        plans = (gauss_release(domain, n, share=s, **options) for s in grid)
        first = next((p for p in plans if p.stages[0].affordable), None)
        chosen = first if first is not None else gauss_release(domain, n, share=GAUSS_SPLIT, **options)
        return replace(chosen, recommended_split=chosen.split)
    share = check_split(share)
    eps_s, eps_p = gauss_epsilons(epsilon, delta, share)
    d = len(domain.names)
    structure = structure_estimator("gauss-pc", eps_s, delta, alpha)
    margin, test = marginal_margin(domain, n, alpha=alpha, effect=effect, structure=structure)
    try:
        sigma, sigma1, bearable = structure.test_noise(domain, n)
    except BudgetTooSmall as err:  # e.g. n too small for the test's public threshold
        sigma, sigma1, bearable = math.inf, math.inf, 0.0
        note = f"Gauss-PC refuses: {err}"
    else:
        note = (f"{test} test; level 0 one Gaussian release of sigma {sigma:.4g}, level 1 at most {sigma1:.4g} "
                f"(every pair left), against {bearable:.4g} a test can bear; levels composed in zCDP")
    error = float(norm.sf(margin / sigma)) if margin > 0 and sigma > 0 else (0.0 if margin > 0 else 1.0)
    stage1 = StagePlan("structure (gauss-pc)", eps_s, sigma, margin, error,
                       sigma <= bearable and sigma1 <= bearable and error <= miss, note)
    sensitivity = release_sensitivity("gaussian", d, tables)
    noise = gaussian_calibration(eps_p, delta, sensitivity, d * int(cap))[0]
    cap = useful_cap(n, noise, cap, usefulness)
    relative = noise * math.sqrt(2 / math.pi) / (n * cell)
    widest = max(domain.sizes)
    params = StagePlan("parameters (gaussian)", eps_p, noise, n * cell, relative, relative <= max_relative_error,
                       f"at most {d} tables of at most {cap} cells, Gaussian noise (sigma per cell), RDP composition "
                       f"with stage 1; a released 2-way table of the two widest columns is off by about "
                       f"{min(1.0, widest * widest * noise * math.sqrt(2 / math.pi) / (2 * n)):.3g} in total "
                       "variation before fitting")
    notes = (_POST_PROCESSING,
             f"one zCDP budget: {share:g} of rho to Gauss-PC (epsilon {eps_s:.4g} alone), the rest to the tables "
             f"(epsilon {eps_p:.4g} alone); together epsilon {epsilon:g} at delta {delta:g}")
    return ReleasePlan(epsilon, delta, n, share, None, (stage1, params), cap, share, notes, structure="gauss-pc")


def _adaptive_note(tree) -> str:
    """The adaptive rounds' part of the tree's plan (their noise is chosen as they run)."""
    if tree.adaptive is None:
        return ""
    first = math.sqrt(tree.adaptive.rounds / (2 * 0.9 * tree.adaptive.rho))  # AIM's first price, per unit of L2 sensitivity
    return (f"; before the last round, AIM's adaptive rounds with rho {tree.adaptive.rho:.4g} (one zCDP filter), "
            f"the first measurements at sigma about {first:.4g} per unit of sensitivity, annealed as they go")


def tree_release(plan: ReleasePlan, domain: Domain, effect: float, cell: float, miss: float,
                 max_relative_error: float, priv_pc: StagePlan | None, neighbours=None) -> ReleasePlan:
    """``plan`` with the spanning tree as stage 1 and its pair tables as the parameters
    (``priv_pc``: Priv-PC's refused stage, named in the notes; None under add/remove)."""
    neighbours = neighbours or Neighbours.REPLACE_ONE
    n, d = plan.n_rows, len(domain.names)
    tree = plan_tree(domain, n, epsilon=plan.epsilon, delta=plan.delta, neighbours=neighbours)
    b = 2 * pair_score_sensitivity(neighbours) / tree.select_epsilon
    gap = n * effect
    error = min(1.0, d * (d - 1) / 2 * math.exp(-gap / b))
    select = StagePlan("structure (tree)", tree.select_epsilon, b, gap, error, error <= miss,
                       f"{d - 1} exponential-mechanism selections of epsilon {tree.select_epsilon:.4g} each, "
                       f"after {d} one-way tables")
    noise = tree.cell_noise(tree.pair_epsilon, d - 1)
    mean_abs = tree.mean_abs_noise(tree.pair_epsilon, d - 1)
    relative = mean_abs / (n * cell)
    tables = StagePlan("parameters (tree)", tree.pair_epsilon, noise, n * cell, relative,
                       relative <= max_relative_error,
                       f"{d - 1} tree pair tables, {tree.extras} residual pair tables (chosen by "
                       f"{tree.extras} more selections of epsilon {tree.residual_epsilon:.4g}, in "
                       f"{len(tree.batches)} round{'' if len(tree.batches) == 1 else 's'}) and {d} one-way tables, {tree.noise} noise "
                       f"({tree.composition} composition)" + _adaptive_note(tree))
    notes = tuple(_TREE_POST_PROCESSING if n == _POST_PROCESSING else n for n in plan.notes) + (() if priv_pc is None else
                          (f"Priv-PC at its default cap is not affordable here ({priv_pc.note}): the tree replaces it",))
    return replace(plan, stages=(select, tables), notes=notes, structure="tree", tree=tree, rounds=None)


def structure_estimator(structure: str, epsilon: float, delta: float, alpha: float, *, rounds: int | None = None,
                        random_state=None) -> PrivPC:
    """Stage 1's replace-one estimator, as the release fits it and the planner predicts it:
    the PC method ``structure`` names (``"gauss-pc"``, whose rounds are its levels: ``rounds``
    None, or ``"priv-pc"`` with its cap of ``rounds``), at the
    structure's ``epsilon``; the method named, never PrivPC's ``"auto"`` (which picks
    tables-pc on wide tables: the planner predicts Priv-PC's rounds); every other parameter
    PrivPC's default, so a changed default changes the plan and the fit alike.

    >>> structure_estimator("gauss-pc", 0.5, 1e-6, 0.05).method, structure_estimator("priv-pc", 0.5, 1e-6, 0.05).method
    ('gauss-pc', 'priv-pc')
    """
    return PrivPC(epsilon=epsilon, delta=delta, alpha=alpha, method=structure, max_rounds=rounds,
                  random_state=random_state)


def check_structure(structure: str) -> str:
    """``structure`` if it names ``"auto"`` or a registered structure (:data:`~privgraph.release.stage.STRUCTURES`)."""
    one_of("structure", structure, RELEASE_STRUCTURES)
    return structure


def check_split(split: float) -> float:
    """The structure's share of epsilon, strictly between 0 and 1 (the one share kind,
    :func:`~privgraph.validation.check_share`, as the ``split`` declaration checks it)."""
    return check_share(split, "split")


def recommend_split(domain: Domain, n_rows: int, *, epsilon: float, delta: float, alpha: float = 0.05,
                    effect: float = 0.1, miss: float = 0.05) -> float:
    """The smallest share on :data:`SPLIT_GRID` that makes stage 1 affordable at Priv-PC's
    default cap, else :data:`DEFAULT_SPLIT`."""
    for share in SPLIT_GRID:
        stage, rounds = _structure(domain, n_rows, share * epsilon, delta, alpha, effect, miss, None, search=False)
        if stage.affordable:
            return share
    return DEFAULT_SPLIT


def _structure(domain, n, epsilon, delta, alpha, effect, miss, rounds, search=True):
    d = len(domain.names)
    caps = [rounds] if rounds is not None else [None] + (_smaller_caps(d) if search else [])
    for cap in caps:
        try:
            structure = structure_estimator("priv-pc", epsilon, delta, alpha, rounds=cap)
            plan = structure.privacy_plan(domain, n)
        except (BudgetTooSmall, TooFewRows) as err:  # too little budget, or too few rows for its tests' blocks
            last = str(err)
            continue
        examine = [c for c in plan if c.mechanism == "examine"] or list(plan)
        b = 1.0 / examine[0].epsilon
        margin, test = marginal_margin(domain, n, alpha=alpha, effect=effect, structure=structure)
        error = 0.5 * math.exp(-margin / b) if margin > 0 else 1.0
        note = (f"{test} test; cap of {examine[0].count} rounds" + ("" if cap is None else
                " (reduced: PC stops early and keeps the edges it did not test)"))
        ok = error <= miss and cap is None
        return StagePlan("structure", epsilon, b, margin, error, ok, note), cap
    return StagePlan("structure", epsilon, math.inf, 0.0, 1.0, False, f"Priv-PC refuses every cap: {last}"), rounds


def _smaller_caps(d: int) -> list[int]:
    pairs = d * (d - 1) // 2
    return sorted({c for c in (pairs, 2 * d, d, max(1, d // 2), max(1, d // 4), 2, 1) if c >= 1}, reverse=True)


def marginal_margin(domain: Domain, n: int, *, alpha: float = 0.05, effect: float = 0.1, blocks: int = 50,
                    structure: PrivPC | None = None):
    """(margin in sensitivity units, test name) of a marginal test at phi = ``effect``, by the
    CI test ``structure`` (default: a default PrivPC) runs on ``domain`` (:meth:`PrivPC.ci_test_for`).

    >>> from privgraph.data import Domain, Kind
    >>> m, name = marginal_margin(Domain(("a", "b"), (2, 2), (Kind.ORDINAL, Kind.ORDINAL)), 100_000)
    >>> name, 1500 < m < 1600
    ('kendall', True)
    """
    test = (structure if structure is not None else PrivPC()).ci_test_for(domain)
    if test.bounded_margin:
        z, ro = effect * math.sqrt(n), Neighbours.REPLACE_ONE
        unit = test.sensitivity(n, ro, (2, 2)) + test.threshold_sensitivity(alpha, n, ro, (2, 2))
        return (z - test.critical_value(alpha)) / unit, test.name
    m = n // blocks
    critical = test.threshold(alpha, table=_two_by_two())
    power = float(ncx2.sf(critical, 1, m * effect**2))
    return blocks * (power - 0.5), test.name


def _two_by_two():
    return np.ones((2, 2))


def useful_cap(n: int, scale: float, cap: int, usefulness: float = 4.0) -> int:
    """The user's ``cap`` lowered so that a table's average cell, ``n / cells``, is at least
    ``usefulness`` noise scales (PrivBayes' theta-usefulness, Zhang et al. 2017), and at least 2.

    >>> useful_cap(20_000, 80.0, 5_000), useful_cap(100_000, 32.0, 500)
    (62, 500)
    """
    return int(max(2, min(int(cap), math.floor(n / (usefulness * scale)))))


def _parameters(domain, n, epsilon, cap, cell, max_relative_error, usefulness, tables):
    k = len(domain.names)
    b = laplace_scale(epsilon, float(histogram_l1_sensitivity(tables) * k), dimension=k * int(cap))
    cap = useful_cap(n, b, cap, usefulness)
    expected = n * cell
    error = b / expected
    widest = max(domain.sizes)
    note = (f"at most {k} tables of at most {cap} cells; a released 2-way table of the two widest columns "
            f"is off by about {min(1.0, widest * widest * b / (2 * n)):.3g} in total variation before fitting")
    if widest > cap:
        note += f"; a column with {widest} levels exceeds the cap"
    return StagePlan("parameters", epsilon, b, expected, error, error <= max_relative_error, note), cap


__all__ = ["DEFAULT_SPLIT", "GAUSS_SPLIT", "ReleasePlan", "SPLIT_GRID", "StagePlan", "check_split", "gauss_epsilons",
           "gauss_release", "marginal_margin", "priv_pc_release", "size_accountant", "structure_estimator",
           "tree_alone", "tree_release", "useful_cap", "plan_release", "recommend_split", "size_epsilon"]
