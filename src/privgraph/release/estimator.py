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

The release is a sequence of stages, as OpenDP's ``Sequential``: stage 0 (the size, under
add/remove when the structure plans at a public n), then the structure (stages 1 to 3), an
object of the registry :data:`~privgraph.release.stage.STRUCTURES` that holds its plan, its run
spending exactly that plan and the report's words on it (:mod:`privgraph.release.structures`);
this class only joins them. Adding a structure is one class and one registry line.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from privgraph.data import NOT_PRIVATE_DOMAIN, open_private, resolve_domain
from privgraph.data.persons import fit_per_person, person_unit, plan_per_person
from privgraph.privacy.person import row_estimator
from privgraph.data.domain import check_countable
from privgraph.declarations import RELEASE
from privgraph.estimator import PrivateEstimator
from privgraph.mrf import inference
from privgraph.mrf.estimator import TABLE_METHODS
from privgraph.privacy import Budget, Ledger, Neighbours, PrivacyPlan, check_affordable
from privgraph.data.bins import decode_codes
from privgraph.data.derived import add_derived
from privgraph.release.cliques import DEFAULT_CAP, DEFAULT_TREE_CAP
from privgraph.mrf.cgm import clear_inference_cache
from privgraph.release.levels import identity_levels
from privgraph.release.model_size import check_tree_cap, model_cells
from privgraph.timecap import check_time
from privgraph.privacy.add_remove import AddRemove
from privgraph.privacy.resize import size_charge
from privgraph.release.planner import (
    ReleasePlan, check_splittable, plan_release, resolve_structure, size_accountant,
)
from privgraph.release.stage import StageFit, checked_before_data, needs_size, progress
from privgraph.release.structures import STRUCTURES  # the registry, the built-in structures in it
from privgraph.validation import positive_int

RO, AR = Neighbours.REPLACE_ONE, Neighbours.ADD_REMOVE


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
        undirected) and needs at least three columns. Each is a registered
        :class:`~privgraph.release.stage.Structure` (:mod:`privgraph.release.structures`); a
        structure registered in :data:`~privgraph.release.stage.STRUCTURES` is a choice too.
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
        ``"gauss-pc"``, ``"priv-pc"``, ``"tree"`` (the planner's choice under ``"auto"``) or another
        registered structure's name: the :data:`~privgraph.release.stage.STRUCTURES` entry that ran.
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
    ...     pc = PrivateRelease(epsilon=4.0, structure="gauss-pc", random_state=0).fit(X, domain=net.domain)
    >>> rel.structure_kind_, rel.ledger_.total(rel.composition_, 1e-6).epsilon <= 4.0, rel.ledger_.neighbours == {AR}
    ('tree', True, True)
    >>> pc.ledger_.charges[0].mechanism, pc.plan_.n_rows < 20_000  # the size, then Gauss-PC on m rows
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
        >>> [c.mechanism for c in PrivateRelease(epsilon=1.0, structure="gauss-pc").privacy_plan(asia, 100_000)][-2:]
        ['report_noisy_max', 'gaussian']
        >>> PrivateRelease(epsilon=1.0).privacy_plan(asia, 100_000) == PrivateRelease(
        ...     epsilon=1.0, structure="tree").privacy_plan(asia, 100_000)  # auto at delta > 0: the tree
        True
        >>> [c.mechanism for c in PrivateRelease(epsilon=1.0, structure="tree").privacy_plan(asia, 100)]
        ['gaussian', 'exponential', 'gaussian', 'adaptive rounds (zCDP filter)', 'exponential', 'gaussian']
        >>> [c.mechanism for c in PrivateRelease(epsilon=1.0, delta=0, structure="tree").privacy_plan(asia, 100)]
        ['laplace', 'exponential', 'laplace', 'exponential', 'laplace', 'exponential', 'laplace', 'exponential', 'laplace']
        >>> set(PrivateRelease(epsilon=1.0, neighbours="add_remove").privacy_plan(asia, 100).neighbours)
        {<Neighbours.ADD_REMOVE: 'add_remove'>}
        """
        if (unit := person_unit(domain, self.max_rows_per_person, self.neighbours)) is not None:
            return plan_per_person(self, unit, domain, n_rows)
        domain, prediction = self.checked_prediction(domain, n_rows)
        size = Ledger.of(size_charge(prediction.size_epsilon)) if prediction.size_epsilon else Ledger()
        structure = STRUCTURES[prediction.structure]
        ledger = size + structure.plan(self, domain, prediction)
        return PrivacyPlan.of_ledger(ledger, Neighbours.parse(self.neighbours),
                                     structure.accountant(self, prediction), self.delta)

    def release_plan(self, domain, n_rows: int) -> ReleasePlan:
        """The planner's prediction for this release, stage by stage: the noise each stage
        will carry against the effect it must detect (see :mod:`privgraph.release.planner`);
        its charges are :meth:`privacy_plan`'s (with a person unit: the row-level release's)."""
        if (unit := person_unit(domain, self.max_rows_per_person, self.neighbours)) is not None:
            return row_estimator(self, unit, None).release_plan(resolve_domain(None, domain), n_rows)
        return self.checked_prediction(domain, n_rows)[1]

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
        data = open_private(X, domain, neighbours=neighbours, invalid="recode", infer_domain=infer_domain,
                            what="X")  # the one front door
        modelled = data.domain.without_derived()  # a derived column is never read (privgraph.data.derived)
        engine = data.engine(None if modelled is data.domain else modelled.names)
        self.derived_domain_ = data.domain if data.domain.derived else None  # its rules, for the synthetic rows
        domain = self.check_public(engine.domain, add_remove=neighbours is not RO).without_derived()  # before any count
        chosen = resolve_structure(self.structure, domain, self.delta)  # "auto" named from public facts
        if neighbours is not RO and not needs_size(chosen):  # n is private: the tree's plan needs no n
            return self._fitted(STRUCTURES[chosen].run(self, engine, domain, None, budget), domain)
        if neighbours is not RO:  # stage 0: the size, then the plan at the public m it gives
            return self._fit_sized(engine, domain, budget)
        n = int(engine.counts([]))  # public under replace-one
        return self._fit_planned(engine, domain, self.prediction(domain, n), budget)

    def _fit_sized(self, engine, domain, budget: Budget | None) -> "PrivateRelease":
        """Add/remove with a PC structure possible: the size released (its charge checked
        first), the plan made at the public m it gives, then stages 1 to 3 with the rest
        (:class:`~privgraph.privacy.add_remove.AddRemove`'s steps: the structure alone runs on the
        resized data)."""
        stage0 = AddRemove(self.epsilon, self.delta, size_accountant(self.delta),
                           minimum=max(3, len(engine.domain.names)))
        check_affordable([size_charge(stage0.epsilons[0])], budget or Budget(self.epsilon, self.delta))
        sampler = self.noise_sampler()
        m, _, sized = stage0.release_size(engine, sampler=sampler, budget=budget)
        prediction = self.prediction(domain, m)
        if budget is None:
            budget = Budget(self.epsilon, self.delta,
                            composition=STRUCTURES[prediction.structure].accountant(self, prediction))
            budget.reserve(sized.charges[0])
        return self._fit_planned(engine, domain, prediction, budget, sized=sized, sampler=sampler)

    def _fit_planned(self, engine, domain, prediction: ReleasePlan, budget: Budget | None, *,
                     sized: Ledger | None = None, sampler=None) -> "PrivateRelease":
        """Stages 1 to 3 as ``prediction`` plans them, by its structure
        (:meth:`~privgraph.release.stage.Structure.run`). ``sized`` (add/remove): the size's
        ledger; a structure that needs n then runs on the data resized to
        ``prediction.n_rows`` rows, its replace-one charges relabelled (reserved whole, before its
        noise)."""
        fit = STRUCTURES[prediction.structure].run(self, engine, domain, prediction, budget, sized=sized,
                                                   sampler=sampler)
        return self._fitted(fit, domain)

    def _fitted(self, fit: StageFit, domain) -> "PrivateRelease":
        """Record the fitted stages and the release's one ledger (with the caveat of a domain
        read from the data)."""
        clear_inference_cache()  # the fits are done: their inference structures are not needed to sample
        structure, params, prediction, n = fit.structure, fit.parameters, fit.prediction, fit.n_rows
        self.graph_, self.dag_, self.is_consistent_extension_ = fit.graph, fit.dag, fit.is_consistent_extension
        self.cliques_ = fit.cliques
        ledger = fit.ledger + params.ledger_
        levels = getattr(structure, "levels", None)
        self.levels_ = levels if levels is not None else identity_levels(domain)
        if not domain.public:
            ledger = ledger.with_caveat(NOT_PRIVATE_DOMAIN)
        self.structure_, self.parameters_, self.plan_ = structure, params, prediction
        self.structure_kind_, self.composition_ = prediction.structure, fit.accountant.name
        self.ledger_, self.n_rows_, self.domain_ = ledger, n, domain
        fitted = params.model_ if params.model_ is not None else params.marginals_  # a custom fit may return none
        self.model_cells_ = model_cells(fitted.domain, fitted.cliques)
        if self.model_cells_ > self.tree_cap:  # the selections kept every table within the cap: a bug
            raise RuntimeError(f"the model's junction tree holds {self.model_cells_} cells, above tree_cap "
                               f"{self.tree_cap}: the release's model-size cap was not enforced")
        self.is_exact_ = True
        progress("stage 3 (parameters): fitted exactly on a junction tree of", self.model_cells_,
                 f"cells (cap {self.tree_cap})")
        return self

    def sample(self, n: int | None = None, *, random_state=None, method: str = "round"):
        """``n`` synthetic rows (default: :attr:`n_rows_`) from the fitted model: ``method="round"``
        by controlled rounding (the default, as Private-PGM's, so MST's and AIM's, synthetic data:
        each value's count within one of the model's in every group,
        :func:`~privgraph.mrf.sample_model`), ``"sample"`` i.i.d."""
        n = self.n_rows_ if n is None else n
        n = positive_int("the number of synthetic rows", n, whole_floats=True)
        seed = self.model_seed()  # as the model's own sampler: its seed when an integer, else fresh
        rng = np.random.default_rng(random_state if random_state is not None
                                    else seed if isinstance(seed, (int, np.integer)) else None)
        check_time("sampling")
        codes = self.parameters_.sample_codes(n, rng=rng, method=method, max_cells=self.tree_cap)
        rows = decode_codes(self.domain_, self.levels_.expand_codes(codes, rng), rng=rng)
        if self.derived_domain_ is not None:  # post-processing: each derived column by its public rule
            rows = add_derived(rows, self.derived_domain_)
        self.sampling_ = self.parameters_.sampling_
        progress("stage 4 (synthetic rows):", int(n), f"rows drawn exactly ({self.sampling_})")
        return rows

    def marginal(self, columns) -> np.ndarray:
        """The fitted model's probability table over ``columns``, exact (junction tree; up to
        the larger of ``tree_cap`` and :data:`~privgraph.mrf.inference.MAX_TREE_CELLS` cells
        with the query's clique, else refused)."""
        table = self.parameters_.marginal(columns, max_cells=max(self.tree_cap, inference.MAX_TREE_CELLS))
        return self.levels_.expand_table(table, columns)

    # -- internals -------------------------------------------------------------------
    def exact_options(self) -> dict:
        """The model fit's keywords that keep its inference exact up to ``tree_cap`` cells
        (the built-in table fits; a custom ``method`` is the caller's)."""
        return {"max_cells": self.tree_cap} if isinstance(self.method, str) and self.method in TABLE_METHODS else {}

    def _check(self) -> Neighbours:
        """The release's relation (every parameter is checked by its declaration first:
        :meth:`~privgraph.estimator.PrivateEstimator.check_params`)."""
        return Neighbours.parse(self.neighbours)

    def _check_rules(self) -> None:
        """The rule across parameters: a budget (epsilon, delta) that splits into the release's
        stages, the size's among them under add/remove when the structure plans at a public size."""
        sized = Neighbours.parse(self.neighbours) is Neighbours.ADD_REMOVE and needs_size(self.structure)
        check_splittable(self.epsilon, self.delta, sized=sized)

    def check_public(self, domain, *, add_remove: bool = False):
        """The domain, resolved and checked from the public codebook alone, before any row is
        read or any budget spent: every column countable; on the columns the release models (every
        one but the derived ones, :mod:`privgraph.data.derived`) the model-size cap against its one-way
        cells, and the limits of each structure that may run
        (:func:`~privgraph.release.stage.checked_before_data`: the one asked for; with
        ``add_remove`` and ``"auto"`` every registered one, since the planner chooses once the size
        is spent)."""
        domain = check_countable(resolve_domain(None, domain))  # as plan_release refuses
        modelled = domain.without_derived()
        check_tree_cap(self.tree_cap, modelled)
        for stage in checked_before_data(resolve_structure(self.structure, modelled, self.delta), add_remove):
            stage.check_domain(modelled)
        return domain

    def checked_prediction(self, domain, n_rows: int | None):
        """(domain, the planner's prediction), the domain checked first (:meth:`check_public`);
        ``n_rows`` None (add/remove, before the release): no prediction, only the checks."""
        domain = self.check_public(domain).without_derived()
        return domain, (None if n_rows is None else self.prediction(domain, n_rows))

    def prediction(self, domain, n_rows: int):
        """The planner's prediction for this release at ``n_rows`` public rows, on a domain
        :meth:`check_public` has checked (public facts only)."""
        n_rows = positive_int("the number of rows", n_rows, whole_floats=True)
        rounds = None if self.max_rounds == "auto" else self.max_rounds
        plan = plan_release(domain, int(n_rows), epsilon=self.epsilon, delta=self.delta, split=self.split,
                            cap=self.cap, alpha=self.alpha, rounds=rounds, structure=self.structure,
                            neighbours=self._check())
        if self.max_rounds is None:
            plan = plan.__class__(**{**vars(plan), "rounds": None})
        return plan

    def model_seed(self):
        """The seed of the model's fit and sampler: None (fresh) with secure noise, else the
        noise seed + 1 (a Generator or sampler as given)."""
        if self.random_state is None:
            return None
        if isinstance(self.random_state, (int, np.integer)):
            return int(self.random_state) + 1
        return self.random_state


__all__ = ["PrivateRelease"]
