"""``PrivateRelease``: a causal graph, its parameters and synthetic rows under one budget.

Stages, all charged to one :class:`~privgraph.privacy.Budget` under one neighbouring
relation: add/remove (the default, ``neighbours="add_remove"``: one row added or removed,
n private, as the synthetic-data peers state it) or replace-one (``"replace_one"``: n public).
Under add/remove the tree (:mod:`privgraph.release.tree`) needs no n and reports an estimate
from its noisy tables; otherwise (``structure="auto"``, which chooses from a public size, or
a PC structure) a stage 0 releases the size with 1% of rho when ``delta > 0`` (its epsilon
alone, ``sqrt(0.02 rho)``, is 2.2% of epsilon at (1, 1e-6)) or 1% of epsilon at ``delta = 0``,
the plan is made at the public m it gives, and Gauss-PC or Priv-PC, whose margins are
calibrated with n public, run on a secret uniform subset of m rows
(:mod:`privgraph.privacy.resize`); where the plan at m chooses the tree, the tree runs on all
rows and the size served only the choice:

1. **structure**: Gauss-PC (``PrivPC(method="gauss-pc")``) with ``split`` of the release's
   zCDP budget rho (delta > 0; the default where the planner finds it affordable), or Priv-PC
   (:class:`~privgraph.causal.PrivPC`) with ``split * epsilon``, or, where the planner finds
   neither affordable (``structure="auto"``, public facts only), a private maximum spanning
   tree (:mod:`privgraph.release.tree`; under zCDP followed by AIM's adaptive rounds,
   :mod:`privgraph.release.adaptive`), whose pair tables are then the parameters (stage 3)
   and whose one-way tables join the fit;
2. **orientation**: colliders and Meek's rules (inside Priv-PC), then a DAG extension of
   the CPDAG (Dor-Tarsi): post-processing, no budget. ``orientation`` is a hook for a private
   orientation step (e.g. direction tests on continuous columns), charged to the same
   budget; none is shipped yet (a continuous column is released through its public bins);
3. **parameters**: the capped families of the DAG extension (:func:`family_cliques`),
   their noisy tables released by :class:`~privgraph.mrf.PrivateMRF` (under the release's
   relation, from all rows): after
   Gauss-PC, Gaussian noise at the rest of rho (the stages compose by RDP); after Priv-PC,
   Laplace noise with ``(1 - split) * epsilon``; the model fitted by CGM-EM;
4. **synthetic rows**: drawn from the fitted model by controlled rounding, or i.i.d.
   (post-processing; :meth:`PrivateRelease.sample`).

The whole plan is checked against the budget before the first noise is drawn: Priv-PC's
ledger plus the parameters' charge must fit, or nothing is spent (under add/remove the
size's charge is checked first, and the rest once the plan at m is known; every stage's
share is fixed so that the rest fits).
"""

from __future__ import annotations

import logging
from typing import Callable

import numpy as np

from privgraph.data import NOT_PRIVATE_DOMAIN, open_engine, resolve_domain
from privgraph.data.persons import fit_per_person, person_unit, plan_per_person
from privgraph.privacy.person import row_estimator
from privgraph.data.domain import check_countable
from privgraph.declarations import RELEASE
from privgraph.estimator import PrivateEstimator
from privgraph.mrf import PrivateMRF, inference
from privgraph.mrf.estimator import TABLE_METHODS
from privgraph.mrf.noisy_tables import estimate_records, plan_release as plan_tables
from privgraph.privacy import (
    Budget, Charge, Ledger, Neighbours, PrivacyPlan, check_affordable, histogram_l1_sensitivity,
)
from privgraph.privacy.composition import composition_for
from privgraph.data.bins import decode_codes
from privgraph.data.resized import resize_engine
from privgraph.privacy.neighbours import check_delta, check_epsilon
from privgraph.release.cliques import DEFAULT_CAP, DEFAULT_TREE_CAP, extend_to_dag, tractable_cliques
from privgraph.mrf.cgm import clear_inference_cache
from privgraph.release.levels import identity_levels
from privgraph.release.model_size import check_tree_cap, check_tree_memory, model_cells
from privgraph.release.tree import fit_tree_structure, joined, plan_tree
from privgraph.timecap import check_time
from privgraph.privacy.add_remove import AddRemove, fit_resized, resized_plan
from privgraph.privacy.resize import RESIZED, as_add_remove, size_charge
from privgraph.release.planner import (
    ReleasePlan, check_split, check_structure, gauss_epsilons, plan_release, size_composition,
    structure_estimator,
)
from privgraph.validation import InvalidInput, positive_int

RO, AR = Neighbours.REPLACE_ONE, Neighbours.ADD_REMOVE
#: Progress lines, one per stage (the CLI shows them on stderr when it is not a terminal).
#: They name stages and public or released facts only (counts of tables, rows, cells).
LOG = logging.getLogger("privgraph.release")


def _progress(*parts) -> None:
    LOG.info(" ".join(str(p) for p in parts))


class PrivateRelease(PrivateEstimator):
    """Structure, orientation, parameters and synthetic data under one (epsilon, delta).

    Parameters
    ----------
    epsilon, delta : float
        The total budget of the release (under ``neighbours``). ``delta`` pays
        for the zCDP-to-(epsilon, delta) conversion of Gauss-PC and the tree (and their
        Gaussian tables), or for Priv-PC's composition (optimal composition of its pure-DP
        rounds); ``delta=0`` rules out Gauss-PC.
    split : float or None
        The structure's share of the budget (of rho for Gauss-PC, of epsilon for Priv-PC);
        the rest goes to the parameters. None: for Gauss-PC the least share, at least the
        measured :data:`~privgraph.release.planner.GAUSS_SPLIT`, that the planner finds
        affordable; for Priv-PC the planner's recommendation
        (:func:`~privgraph.release.planner.recommend_split`).
    cap : int
        Public cap on the cells of one clique table; the planner lowers it so that an
        average cell holds four noise scales (:func:`~privgraph.release.planner.useful_cap`).
    tree_cap : int
        Public model-size cap: the most cells the model's junction tree may hold (fixed before
        any data is read; at least the domain's one-way cells). Every table the release adds
        to its model must keep the junction tree within it (:mod:`privgraph.release.model_size`):
        a denser PC graph loses parents (:func:`~privgraph.release.cliques.tractable_cliques`),
        the tree's selections run on the pairs that fit. The model is therefore always fitted
        and sampled exactly (junction tree), never by loopy BP or Gibbs sampling.
    alpha : float
        Level of Priv-PC's tests.
    max_rounds : int, None or "auto"
        Priv-PC's cap of rounds. "auto" (default): Priv-PC's default if the budget affords
        it, else the largest cap the planner finds affordable (PC then stops early).
    method : str
        The model's fit from the released tables ("cgm-em", "naive-mle").
    structure : str
        Stage 1: ``"gauss-pc"``, ``"priv-pc"``, ``"tree"`` (:mod:`privgraph.release.tree`: a
        private maximum spanning tree, Gaussian tables under zCDP when ``delta > 0``) or
        ``"auto"`` (default): Gauss-PC where the planner finds it affordable (delta > 0), else
        Priv-PC where it is affordable at its default cap, else the tree
        (:func:`~privgraph.release.planner.plan_release`; public facts only). The tree ignores
        ``split``, ``max_rounds``, ``alpha``, ``cap`` and ``orientation`` (its shares are
        :data:`~privgraph.release.tree.SELECTION_SHARE` and ``RESIDUAL_SHARE``; its graph is
        undirected) and needs at least three columns.
    orientation : callable or None
        Hook ``orientation(cpdag, engine, budget) -> cpdag`` for a private orientation step
        charged to ``budget``; None: colliders and Meek only. (Not ``orient``: PrivPC's
        ``orient`` names a built-in rule, "cpdag" or "direction"; this is a function.)
    random_state : None, int or Generator
        None: secure noise. Anything else: seeded, reproducible and NOT private.
    neighbours : str
        ``"add_remove"`` (default: one row added or removed, n private; with
        ``structure="tree"`` nothing needs n; otherwise the size is released first (stage 0,
        1% of rho, or of epsilon at ``delta = 0``) and a PC structure runs on a secret subset of
        the public size it gives, the tree, when the plan at that size chooses it, on all rows) or ``"replace_one"`` (one row changed, the number of rows public).
        Add/remove is the relation of most synthetic-data tools (dpmm, smartnoise-synth);
        its histograms have half (L1) or ``1/sqrt(2)`` (L2) of replace-one's sensitivity.
    max_rows_per_person : int or None
        With a codebook naming the person column (``"id"``): the most rows one person may
        contribute (public). Each person keeps at most this many rows (a secret uniform
        choice), the release runs under add/remove at the row target, and (epsilon, delta)
        and ``neighbours`` are the person's (:mod:`privgraph.privacy.person`). The person
        column is never modelled or synthesised.

    Attributes
    ----------
    graph_ : CPDAG
        The released graph (stage 1 and 2).
    dag_ : networkx.DiGraph
        Its DAG extension (post-processing; :func:`extend_to_dag`).
    is_consistent_extension_ : bool
        False when the noisy graph had no consistent extension and a DAG with its skeleton
        was used instead.
    cliques_ : tuple of tuples
        The model's cliques (Gauss-PC, Priv-PC: post-processing of the graph; tree: the tree's edges,
        then the residual pairs, each released with its table).
    structure_, parameters_ : PrivPC (Gauss-PC or Priv-PC) or TreeStructure, PrivateMRF
        The fitted stages.
    structure_kind_ : str
        ``"gauss-pc"``, ``"priv-pc"`` or ``"tree"``, the planner's choice.
    composition_ : str
        How the ledger composes (``"rdp"`` for Gauss-PC, ``"optimal"``/``"basic"`` for
        Priv-PC, ``"rdp"``/``"basic"`` for the tree).
    plan_ : ReleasePlan
        The planner's prediction for this release (public facts only).
    ledger_ : Ledger
        Every charge of the release, under ``neighbours``.
    n_rows_ : int
        The number of rows: public under replace-one; under add/remove the noisy tables'
        estimate (post-processing), which is also the default number of synthetic rows.
    model_cells_ : int
        The cells of the fitted model's junction tree (at most ``tree_cap``).
    is_exact_ : bool
        Whether the model's inference was exact (junction tree): always True, by the cap.
    sampling_ : str
        Set by :meth:`sample`: the path its last call took, ``"round"`` or ``"sample"``
        (both exact draws through the junction tree).

    Examples
    --------
    >>> import warnings
    >>> from privgraph.datasets import load_network, sample_frame
    >>> net = load_network("asia")
    >>> X = sample_frame(net, 20_000, np.random.default_rng(0), labels=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rel = PrivateRelease(epsilon=4.0, random_state=0).fit(X, domain=net.domain)
    >>> rel.structure_kind_, rel.ledger_.total(rel.composition_, 1e-6).epsilon <= 4.0, rel.ledger_.neighbours == {AR}
    ('gauss-pc', True, True)
    >>> rel.ledger_.charges[0].mechanism, rel.plan_.n_rows < 20_000  # the size, then Gauss-PC on m rows
    ('laplace', True)
    >>> rel.sample(5).shape
    (5, 8)
    """

    #: The parameters' declarations (the CLI's ``release`` and ``plan`` options are built from them).
    PARAMS = RELEASE

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, neighbours: str = "add_remove", random_state=None,
                 split: float | None = None, cap: int = DEFAULT_CAP, alpha: float = 0.05, max_rounds="auto",
                 method: str = "cgm-em", orientation: Callable | None = None, tree_cap: int = DEFAULT_TREE_CAP,
                 structure: str = "auto", max_rows_per_person: int | None = None):
        self.epsilon = epsilon
        self.delta = delta
        self.neighbours = neighbours
        self.random_state = random_state
        self.split = split
        self.cap = cap
        self.alpha = alpha
        self.max_rounds = max_rounds
        self.method = method
        self.orientation = orientation
        self.tree_cap = tree_cap
        self.structure = structure
        self.max_rows_per_person = max_rows_per_person

    def privacy_plan(self, domain, n_rows: int) -> PrivacyPlan:
        """The charges :meth:`fit` reserves for a table of this public domain and n, with the
        relation and the composition they are read under (:attr:`composition_`); reads no data.
        Under add/remove ``n_rows`` is a public guess of n (the fit plans at the size it releases).

        Gauss-PC's plan plus one Gaussian release of the parameters' tables, or Priv-PC's
        plan plus one Laplace release (each release's epsilon is fixed; its sensitivity, per
        table, is known once the graph is); or the tree's plan
        (:meth:`~privgraph.release.tree.TreePlan.charges`).

        >>> from privgraph.datasets import load_network
        >>> asia = load_network("asia").domain
        >>> [c.mechanism for c in PrivateRelease(epsilon=1.0, split=0.5, structure="priv-pc").privacy_plan(asia, 100_000)]
        ['laplace', 'sieve', 'examine', 'laplace']
        >>> [c.mechanism for c in PrivateRelease(epsilon=1.0, split=0.5, structure="priv-pc",
        ...                                      neighbours="replace_one").privacy_plan(asia, 100_000)]
        ['sieve', 'examine', 'laplace']
        >>> [c.mechanism for c in PrivateRelease(epsilon=1.0).privacy_plan(asia, 100_000)][-2:]
        ['report_noisy_max', 'gaussian']
        >>> [c.mechanism for c in PrivateRelease(epsilon=1.0, structure="tree").privacy_plan(asia, 100)]
        ['gaussian', 'exponential', 'gaussian', 'adaptive rounds (zCDP filter)', 'exponential', 'gaussian']
        >>> [c.mechanism for c in PrivateRelease(epsilon=1.0, delta=0, structure="tree").privacy_plan(asia, 100)]
        ['laplace', 'exponential', 'laplace', 'exponential', 'laplace', 'exponential', 'laplace', 'exponential', 'laplace']
        >>> set(PrivateRelease(epsilon=1.0, neighbours="add_remove").privacy_plan(asia, 100).neighbours)
        {<Neighbours.ADD_REMOVE: 'add_remove'>}
        """
        if (unit := person_unit(domain, self.max_rows_per_person, self.neighbours)) is not None:
            return plan_per_person(self, unit, domain, n_rows)
        domain, prediction = self._predict(domain, n_rows)
        size = Ledger.of(size_charge(prediction.size_epsilon)) if prediction.size_epsilon else Ledger()
        if prediction.structure == "tree":
            ledger = size + prediction.tree.charges(domain)
        else:
            ledger = size + self._structure_plan(self._structure(prediction), domain, prediction) + \
                self._parameters_plan(domain, prediction)
        return PrivacyPlan.of_ledger(ledger, Neighbours.parse(self.neighbours), self._composition(prediction),
                                     self.delta)

    def release_plan(self, domain, n_rows: int) -> ReleasePlan:
        """The planner's prediction for this release, stage by stage: the noise each stage
        will carry against the effect it must detect (see :mod:`privgraph.release.planner`);
        its charges are :meth:`privacy_plan`'s (with a person unit: the row-level release's)."""
        if (unit := person_unit(domain, self.max_rows_per_person, self.neighbours)) is not None:
            return row_estimator(self, unit, None).release_plan(resolve_domain(None, domain), n_rows)
        return self._predict(domain, n_rows)[1]

    def fit(self, X, *, domain=None, infer_domain: bool = False, budget: Budget | None = None) -> "PrivateRelease":
        """Release the graph and the model of ``X`` (DataFrame, CSV/Parquet path, count engine).

        ``domain``: the public domain (Domain, codebook path or dict); ``budget``: an outside
        budget every stage is charged to (by default one of exactly (epsilon, delta)). With the
        codebook's ``"id"`` and ``max_rows_per_person`` the person is the unit
        (:mod:`privgraph.privacy.person`).
        """
        if (unit := person_unit(domain, self.max_rows_per_person, self.neighbours)) is not None:
            return fit_per_person(self, unit, X, domain=domain, budget=budget)
        neighbours = self._check()
        engine = open_engine(X, domain, neighbours=neighbours, invalid="recode", infer_domain=infer_domain, what="X")

        check_tree_cap(self.tree_cap, engine.domain)  # the codebook's sizes: before any count or spend
        if self.structure == "auto" and neighbours is not RO:  # the tree may be chosen after the size is spent
            check_tree_memory(engine.domain)
        if neighbours is not RO and self.structure == "tree":  # n is private: the tree's plan needs no n
            return self._fit_tree(engine, *self._predict(engine.domain, None), budget)
        if neighbours is not RO:  # stage 0: the size, then the plan at the public m it gives
            return self._fit_sized(engine, budget)
        n = int(engine.counts([]))  # public under replace-one
        domain, prediction = self._predict(engine.domain, n)
        return self._fit_planned(engine, domain, prediction, budget)

    def _fit_sized(self, engine, budget: Budget | None) -> "PrivateRelease":
        """Add/remove with a PC structure possible: the size released (its charge checked
        first), the plan made at the public m it gives, then stages 1 to 3 with the rest
        (:class:`~privgraph.privacy.add_remove.AddRemove`'s steps: the structure alone runs on the
        resized data)."""
        stage0 = AddRemove(self.epsilon, self.delta, size_composition(self.delta),
                           minimum=max(3, len(engine.domain.names)))
        check_affordable([size_charge(stage0.epsilons[0])], budget or Budget(self.epsilon, self.delta))
        sampler = self._noise_sampler()
        m, _, sized = stage0.release_size(engine, sampler=sampler, budget=budget)
        domain, prediction = self._predict(engine.domain, m)
        if budget is None:
            budget = Budget(self.epsilon, self.delta, composition=self._composition(prediction))
            budget.reserve(sized.charges[0])
        return self._fit_planned(engine, domain, prediction, budget, sized=sized, sampler=sampler)

    def _fit_planned(self, engine, domain, prediction: ReleasePlan, budget: Budget | None, *,
                     sized: Ledger | None = None, sampler=None) -> "PrivateRelease":
        """Stages 1 to 3 as ``prediction`` plans them. ``sized`` (add/remove): the size's ledger;
        the structure then runs on the data resized to ``prediction.n_rows`` rows, its
        replace-one charges relabelled (reserved whole, before its noise)."""
        if prediction.structure == "tree":
            return self._fit_tree(engine, domain, prediction, budget, sized=sized, sampler=sampler)

        structure = self._structure(prediction, self.random_state if sized is None else sampler)
        structure_plan = (structure.privacy_plan(domain, prediction.n_rows) if sized is None else
                          resized_plan(structure, domain, prediction.n_rows, prediction.size_epsilon))
        budget = budget if budget is not None else Budget(self.epsilon, self.delta,
                                                          composition=self._composition(prediction))
        check_affordable((structure_plan + self._parameters_plan(domain, prediction)).charges, budget)  # before noise
        if sized is None:
            structure.fit(engine, budget=budget)
            structure_ledger = structure.ledger_
        else:
            structure_ledger = sized + fit_resized(structure, engine, prediction.n_rows, resize=resize_engine,
                                                   sampler=sampler, budget=budget,
                                                   size_epsilon=prediction.size_epsilon, plan=structure_plan)
        graph = structure.graph_
        _progress(f"stage 1 ({prediction.structure}):", len(graph.directed_edges) + len(graph.undirected_edges), "edges")
        if self.orientation is not None:
            graph = self.orientation(graph, engine, budget)
        self.graph_ = graph
        self.dag_, self.is_consistent_extension_ = extend_to_dag(graph, domain.names)
        self.cliques_ = tractable_cliques(self.dag_, domain, prediction.cap, self.tree_cap)
        _progress("stage 2 (orientation) and the model's cliques", len(self.cliques_), "tables")

        params = PrivateMRF(epsilon=self._parameters_epsilon(prediction), cliques=self.cliques_, method=self.method,
                            neighbours=prediction.neighbours, random_state=self._mrf_seed(),
                            options=self._exact_options(), **self._parameters_noise(prediction))
        params.fit(engine, budget=budget)
        n = prediction.n_rows if sized is None else self._estimated_rows(params.marginals_)
        return self._fitted(structure, params, structure_ledger, prediction, self._composition(prediction), n, domain)

    def _fitted(self, structure, params, structure_ledger: Ledger, prediction: ReleasePlan, composition: str,
                n: int, domain) -> "PrivateRelease":
        """Record the fitted stages and the release's one ledger (with the caveat of a domain
        read from the data)."""
        clear_inference_cache()  # the fits are done: their inference structures are not needed to sample
        ledger = structure_ledger + params.ledger_
        levels = getattr(structure, "levels", None)
        self.levels_ = levels if levels is not None else identity_levels(domain)
        if not domain.public:
            ledger = ledger.with_caveat(NOT_PRIVATE_DOMAIN)
        self.structure_, self.parameters_, self.plan_ = structure, params, prediction
        self.structure_kind_, self.composition_ = prediction.structure, composition
        self.ledger_, self.n_rows_, self.domain_ = ledger, n, domain
        fitted = params.model_ if params.model_ is not None else params.marginals_  # a custom fit may return none
        self.model_cells_ = model_cells(fitted.domain, fitted.cliques)
        if self.model_cells_ > self.tree_cap:  # the selections kept every table within the cap: a bug
            raise RuntimeError(f"the model's junction tree holds {self.model_cells_} cells, above tree_cap "
                               f"{self.tree_cap}: the release's model-size cap was not enforced")
        self.is_exact_ = True
        _progress("stage 3 (parameters): fitted exactly on a junction tree of", self.model_cells_,
                  f"cells (cap {self.tree_cap})")
        return self

    def _fit_tree(self, engine, domain, prediction: ReleasePlan | None, budget: Budget | None, *,
                  sized: Ledger | None = None, sampler=None) -> "PrivateRelease":
        """Stage 1 as a private spanning tree (:mod:`privgraph.release.tree`), then its pair
        tables. ``prediction`` None (add/remove, the tree asked for): the tree's plan, which
        needs no n, is made here, and the planner's prediction afterwards from the released
        estimate of n (post-processing), for the report. ``sized``: the size's ledger when
        stage 0 released it (add/remove; the tree was then the planner's choice at m)."""
        plan = prediction.tree if prediction is not None else plan_tree(
            domain, None, epsilon=self.epsilon, delta=self.delta, neighbours=self.neighbours)
        budget = budget if budget is not None else Budget(self.epsilon, self.delta, composition=plan.composition)
        check_affordable(plan.charges(domain).charges, budget)  # the whole plan, before any noise
        seed = self._mrf_seed()
        rng = np.random.default_rng(seed if isinstance(seed, (int, np.integer)) else None)  # post-processing draws
        sampler = sampler if sampler is not None else self._noise_sampler()
        structure = fit_tree_structure(engine, plan, sampler=sampler, budget=budget, rng=rng, tree_cap=self.tree_cap)
        merged = structure.levels.merged_text()
        rounds = structure.adaptive
        _progress("stage 1 (private spanning tree):", len(structure.edges), "edges,",
                  *([] if rounds is None else [f"{rounds.rounds} adaptive rounds ({len(set(rounds.pairs))} pairs),"]),
                  f"{len(structure.extras)} pairs beyond the tree, rare levels merged in {len(merged)} columns")
        self.graph_ = structure.graph
        self.dag_, self.is_consistent_extension_ = extend_to_dag(self.graph_, domain.names)
        self.cliques_ = structure.edges + structure.extras
        params = PrivateMRF(epsilon=plan.extra_epsilon, cliques=structure.last, method=self._tree_fit(structure, plan),
                            neighbours=plan.neighbours, noise=plan.noise, delta=plan.delta or None,
                            random_state=self._mrf_seed())
        params.fit(structure.merged, budget=budget)
        if plan.neighbours is not RO:  # add/remove: n is estimated from every noisy table, as the model's fit does
            n = self._estimated_rows(joined(structure.tables, params.marginals_, plan.neighbours))
            prediction = prediction if prediction is not None else self._predict(domain, n)[1]
        else:
            n = prediction.n_rows
        ledger = structure.ledger if sized is None else sized + structure.ledger
        return self._fitted(structure, params, ledger, prediction, plan.composition, n, domain)

    @staticmethod
    def _estimated_rows(tables) -> int:
        """n from noisy tables (add/remove; post-processing: their totals by inverse variance,
        each table by its own noise)."""
        return max(1, int(round(estimate_records(tables.tables, tables.group_scales))))

    def _tree_fit(self, structure, plan):
        """The model fit of the residual pairs' tables with the tree stage's tables (post-processing)."""
        fit = TABLE_METHODS[self.method] if isinstance(self.method, str) else self.method
        options = self._exact_options()

        def fit_with_the_tree(extras):
            return fit(joined(structure.tables, extras, plan.neighbours), **options)

        fit_with_the_tree.__name__ = f"{getattr(fit, '__name__', 'custom')} (with the tree's tables)"
        return fit_with_the_tree

    def sample(self, n: int | None = None, *, random_state=None, method: str = "round"):
        """``n`` synthetic rows (default: :attr:`n_rows_`) from the fitted model: ``method="round"``
        by controlled rounding (the default, as Private-PGM's, so MST's and AIM's, synthetic data:
        each value's count within one of the model's in every group,
        :func:`~privgraph.mrf.sample_model`), ``"sample"`` i.i.d."""
        n = self.n_rows_ if n is None else n
        n = positive_int("the number of synthetic rows", n, whole_floats=True)
        seed = self._mrf_seed()  # as the model's own sampler: its seed when an integer, else fresh
        rng = np.random.default_rng(random_state if random_state is not None
                                    else seed if isinstance(seed, (int, np.integer)) else None)
        check_time("sampling")
        codes = self.parameters_.sample_codes(n, rng=rng, method=method, max_cells=self.tree_cap)
        rows = decode_codes(self.domain_, self.levels_.expand_codes(codes, rng), rng=rng)
        self.sampling_ = self.parameters_.sampling_
        _progress("stage 4 (synthetic rows):", int(n), f"rows drawn exactly ({self.sampling_})")
        return rows

    def marginal(self, columns) -> np.ndarray:
        """The fitted model's probability table over ``columns``, exact (junction tree; up to
        the larger of ``tree_cap`` and :data:`~privgraph.mrf.inference.MAX_TREE_CELLS` cells
        with the query's clique, else refused)."""
        table = self.parameters_.marginal(columns, max_cells=max(self.tree_cap, inference.MAX_TREE_CELLS))
        return self.levels_.expand_table(table, columns)

    # -- internals -------------------------------------------------------------------
    def _exact_options(self) -> dict:
        """The model fit's keywords that keep its inference exact up to ``tree_cap`` cells
        (the built-in table fits; a custom ``method`` is the caller's)."""
        return {"max_cells": self.tree_cap} if isinstance(self.method, str) and self.method in TABLE_METHODS else {}

    def _check(self) -> Neighbours:
        """The release's relation, once every parameter is checked."""
        check_epsilon(self.epsilon)
        check_tree_cap(self.tree_cap)
        check_delta(self.delta)
        if self.split is not None:
            check_split(self.split)
        if self.max_rounds != "auto":
            positive_int("max_rounds", self.max_rounds, or_none=True, whole_floats=True, alternatives=" or 'auto'")
        check_structure(self.structure)
        if self.orientation is not None and not callable(self.orientation):
            raise InvalidInput(f"orientation must be a function (cpdag, engine, budget) -> cpdag or None, got {self.orientation!r}")
        return Neighbours.parse(self.neighbours)

    def _predict(self, domain, n_rows: int | None):
        """(domain, the planner's prediction); ``n_rows`` None (add/remove, before the release):
        no prediction, only the checks."""
        neighbours = self._check()
        domain = check_countable(resolve_domain(None, domain))  # as plan_release refuses

        check_tree_cap(self.tree_cap, domain)  # public: the codebook's sizes, before any data is read
        if self.structure == "tree":  # its pair tables within the memory cap ("auto" passes the tree over)
            check_tree_memory(domain)
        if n_rows is None:
            return domain, None
        n_rows = positive_int("the number of rows", n_rows, whole_floats=True)
        rounds = None if self.max_rounds == "auto" else self.max_rounds
        plan = plan_release(domain, int(n_rows), epsilon=self.epsilon, delta=self.delta, split=self.split,
                            cap=self.cap, alpha=self.alpha, rounds=rounds, structure=self.structure,
                            neighbours=neighbours)
        if self.max_rounds is None:
            plan = plan.__class__(**{**vars(plan), "rounds": None})
        return domain, plan

    def _structure(self, plan: ReleasePlan, random_state=None):
        """Stage 1's replace-one estimator (under add/remove it runs on the resized data)."""
        rest = self._stages_epsilon(plan)
        epsilon = gauss_epsilons(rest, self.delta, plan.split)[0] if plan.structure == "gauss-pc" else plan.split * rest
        return structure_estimator(plan.structure, epsilon, self.delta, self.alpha, rounds=plan.rounds,
                                   random_state=random_state)

    def _structure_plan(self, structure, domain, plan: ReleasePlan) -> Ledger:
        """Stage 1's charges at ``plan.n_rows`` rows (relabelled add/remove after a size)."""
        charges = structure.privacy_plan(domain, plan.n_rows)
        return as_add_remove(charges, RESIZED) if plan.size_epsilon else charges

    @staticmethod
    def _stages_epsilon(plan: ReleasePlan) -> float:
        """The epsilon stages 1 to 3 share: the whole budget, or what the size leaves them
        (the planner's, by the chosen structure's composition)."""
        return plan.epsilon if plan.stages_epsilon is None else plan.stages_epsilon

    def _composition(self, plan: ReleasePlan) -> str:
        if plan.structure == "tree":
            return plan.tree.composition
        return "rdp" if plan.structure == "gauss-pc" else composition_for(self.delta)

    def _parameters_epsilon(self, plan: ReleasePlan) -> float:
        if plan.structure == "gauss-pc":
            return gauss_epsilons(self._stages_epsilon(plan), self.delta, plan.split)[1]
        return (1 - plan.split) * self._stages_epsilon(plan)

    def _parameters_noise(self, plan: ReleasePlan) -> dict:
        return {"noise": "gaussian", "delta": self.delta} if plan.structure == "gauss-pc" else {}

    def _parameters_plan(self, domain, plan: ReleasePlan) -> Ledger:
        """The parameters' charge, fixed before the graph is known: its epsilon (and delta) are
        fixed now; the sensitivity (per table) is known once the graph is. Gaussian: one
        release of every table's counts, charged on stand-in cliques (its cost does not
        depend on which tables)."""
        relation = Neighbours.parse(plan.neighbours)
        if plan.structure == "gauss-pc":
            return plan_tables(domain=domain, cliques=[(v,) for v in domain.names],
                               epsilon=self._parameters_epsilon(plan), neighbours=relation, noise="gaussian",
                               delta=self.delta)
        return Ledger.of(Charge("laplace", self._parameters_epsilon(plan), 0.0, relation,
                                note=f"clique tables (sensitivity {histogram_l1_sensitivity(relation)} per table)"))

    def _mrf_seed(self):
        if self.random_state is None:
            return None
        if isinstance(self.random_state, (int, np.integer)):
            return int(self.random_state) + 1
        return self.random_state


__all__ = ["PrivateRelease"]
