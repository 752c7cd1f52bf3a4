"""The release's built-in structures: Gauss-PC, Priv-PC and the private spanning tree.

Each is a :class:`~privgraph.release.stage.Structure` registered in
:data:`~privgraph.release.stage.STRUCTURES` by the registry lines at the end of this module:
its prediction (the planner's functions for it), its charges, its run spending exactly them,
and the report's texts on it.

- **Gauss-PC** (``"gauss-pc"``, delta > 0): ``PrivPC(method="gauss-pc")`` with ``split`` of
  the release's zCDP budget rho, then the model's tables, Gaussian, with the rest (the two
  compose by RDP).
- **Priv-PC** (``"priv-pc"``): :class:`~privgraph.causal.PrivPC` with ``split * epsilon``,
  then the model's tables, Laplace, with ``(1 - split) * epsilon``.
- **Tree** (``"tree"``): a private maximum spanning tree (:mod:`privgraph.release.tree`),
  whose pair tables are the parameters; it needs no n.

The PC structures plan at a public number of rows (under add/remove the release's stage 0
releases it and they run on a secret subset of that size); the tree runs on all rows.

>>> from privgraph.datasets import load_network
>>> from privgraph.release import PrivateRelease
>>> asia = load_network("asia").domain
>>> release = PrivateRelease(epsilon=1.0, split=0.5, neighbours="replace_one", structure="gauss-pc")
>>> prediction = release.release_plan(asia, 100_000)
>>> charges = STRUCTURES[prediction.structure].plan(release, asia, prediction)
>>> prediction.structure, charges.charges[0].mechanism, charges.charges[-1].mechanism
('gauss-pc', 'gaussian_vector', 'gaussian')
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager

import numpy as np

from privgraph.causal.margins import TooFewRows
from privgraph.graphs.export import graph_writer, tree_writer
from privgraph.mrf import PrivateMRF
from privgraph.mrf.estimator import TABLE_METHODS
from privgraph.mrf.noisy_tables import estimate_records, plan_release as plan_tables
from privgraph.privacy import Budget, Charge, Ledger, Neighbours, check_affordable, histogram_l1_sensitivity
from privgraph.privacy.add_remove import fit_resized, resized_plan
from privgraph.privacy.composition import RDP, accountant_for
from privgraph.privacy.resize import RESIZED, as_add_remove
from privgraph.data.subset import resize_engine
from privgraph.release.cliques import extend_to_dag, tractable_cliques
from privgraph.release.model_size import check_tree_memory
from privgraph.release.planner import (
    gauss_epsilons, gauss_release, priv_pc_release, structure_estimator, tree_alone, tree_fits_memory,
)
from privgraph.release.stage import STRUCTURES, StageFit, Structure, progress
from privgraph.release.tree import fit_tree_structure, joined, plan_tree, warm_start

RO = Neighbours.REPLACE_ONE

#: What each private CI test of a PC path releases (the structure's row of the report).
_TEST_RELEASES = {
    "fisher-z": "one private covariance matrix, PC on it for free",
    "rank": "one private matrix of Kendall's tau, PC on its Gaussian-copula correlation for free",
}
#: The report's names of PrivPC's methods (its ``method_``; its Fisher-z path names none).
_METHOD_NAMES = {"gauss-pc": "Gauss-PC", "priv-pc": "Priv-PC", "tables-pc": "Tables-PC", None: "PC"}
#: The report's row of stage 1 by the PC method that ran, where it is not Priv-PC's default words.
_METHOD_ROWS = {
    "tables-pc": "{name} (Gaussian releases of the tables of levels 0-2's tests, each a chi-square test, zCDP)",
    "gauss-pc": "{name} ({test} test, one Gaussian release per level of PC, zCDP)",
}


def estimated_rows(tables) -> int:
    """n from noisy tables (add/remove; post-processing: their totals by inverse variance,
    each table by its own noise)."""
    return max(1, int(round(estimate_records(tables.tables, tables.group_scales))))


def method_name(structure) -> str:
    """The PC variant that ran (PrivPC's ``method_``; its Fisher-z path names none)."""
    method = getattr(structure, "method_", None)
    return _METHOD_NAMES.get(method, method)


@contextmanager
def rows_enough(prediction):
    """A PC structure's refusal of too few rows for its tests' blocks, said with what the release
    planned at (public: n, or under add/remove the released size: post-processing)."""
    try:
        yield
    except TooFewRows as err:
        raise TooFewRows(f"structure {prediction.structure!r} cannot run on the {prediction.n_rows:,} rows the release "
                         f"plans at ({err}; under add/remove the size is released with noise and a safety margin, so "
                         "a table of a few hundred rows plans at far fewer): choose structure \"tree\" "
                         "(--structure tree) or \"auto\", which passes it over") from None


class PCStructure(Structure):
    """A PC structure: stage 1 a replace-one :class:`~privgraph.causal.PrivPC` of method
    ``name`` at its share of the budget (under add/remove on the data resized to the public
    size stage 0 released, its charges relabelled), stage 2 colliders, Meek's rules and a DAG
    extension, stage 3 the capped families' tables released by
    :class:`~privgraph.mrf.PrivateMRF` from all rows. A subclass says how the budget is
    shared and which noise the tables take."""

    #: The tables' noise in the report's parameters row.
    tables_noise = ""
    #: ``privgraph plan``'s words on what the structure's share is a share of.
    share_of = ""

    def structure_epsilon(self, release, prediction) -> float:
        """Stage 1's epsilon (of what stages 1 to 3 share)."""
        raise NotImplementedError

    def parameters_epsilon(self, release, prediction) -> float:
        """Stage 3's epsilon."""
        raise NotImplementedError

    def parameters_noise(self, release) -> dict:
        """The tables' noise keywords of :class:`~privgraph.mrf.PrivateMRF`."""
        return {}

    def parameters_plan(self, release, domain, prediction) -> Ledger:
        """The parameters' charge, fixed before the graph is known (its epsilon and delta are
        fixed now; the sensitivity per table is known once the graph is)."""
        raise NotImplementedError

    def estimator(self, release, prediction, random_state=None):
        """Stage 1's replace-one estimator (under add/remove it runs on the resized data)."""
        return structure_estimator(self.name, self.structure_epsilon(release, prediction), release.delta,
                                   release.alpha, rounds=prediction.rounds, random_state=random_state)

    def plan(self, release, domain, prediction) -> Ledger:
        return self._structure_plan(self.estimator(release, prediction), domain, prediction) + \
            self.parameters_plan(release, domain, prediction)

    @staticmethod
    def _structure_plan(structure, domain, prediction) -> Ledger:
        """Stage 1's charges at ``prediction.n_rows`` rows (relabelled add/remove after a size)."""
        charges = structure.privacy_plan(domain, prediction.n_rows)
        return as_add_remove(charges, RESIZED) if prediction.size_epsilon else charges

    def run(self, release, engine, domain, prediction, budget, *, sized=None, sampler=None) -> StageFit:
        structure = self.estimator(release, prediction, release.random_state if sized is None else sampler)
        with rows_enough(prediction):
            structure_plan = (structure.privacy_plan(domain, prediction.n_rows) if sized is None else
                              resized_plan(structure, domain, prediction.n_rows, prediction.size_epsilon))
        accountant = self.accountant(release, prediction)
        budget = budget if budget is not None else Budget(release.epsilon, release.delta, composition=accountant)
        check_affordable((structure_plan + self.parameters_plan(release, domain, prediction)).charges,
                         budget)  # before noise
        with rows_enough(prediction):
            if sized is None:
                structure.fit(engine, budget=budget)
                structure_ledger = structure.ledger_
            else:
                structure_ledger = sized + fit_resized(structure, engine, prediction.n_rows, resize=resize_engine,
                                                       sampler=sampler, budget=budget,
                                                       size_epsilon=prediction.size_epsilon, plan=structure_plan)
        graph = structure.graph_
        progress(f"stage 1 ({prediction.structure}):", len(graph.directed_edges) + len(graph.undirected_edges), "edges")
        if release.orientation is not None:
            graph = release.orientation(graph, engine, budget)
        dag, consistent = extend_to_dag(graph, domain.names)
        cliques = tractable_cliques(dag, domain, prediction.cap, release.tree_cap)
        progress("stage 2 (orientation) and the model's cliques", len(cliques), "tables")

        params = PrivateMRF(epsilon=self.parameters_epsilon(release, prediction), cliques=cliques,
                            method=release.method, neighbours=prediction.neighbours,
                            random_state=release.model_seed(), options=release.exact_options(),
                            **self.parameters_noise(release))
        params.fit(engine, budget=budget)
        n = prediction.n_rows if sized is None else estimated_rows(params.marginals_)
        return StageFit(structure, params, structure_ledger, prediction, accountant, n, graph, dag, consistent,
                        cliques)

    writer = staticmethod(graph_writer)

    def structure_row(self, release) -> str:
        s = release.structure_
        name, test = method_name(s), s.ci_test_
        if test in _TEST_RELEASES:
            return f"{name} ({test} test: {_TEST_RELEASES[test]})"
        if (row := _METHOD_ROWS.get(getattr(s, "method_", None))) is not None:
            return row.format(name=name, test=test)
        return (f"{name} ({test} test, cap {s.rounds_} rounds, "
                f"{'complete' if s.complete_ else 'stopped at the cap: untested edges kept'})")

    def orientation_row(self, release) -> str:
        hook = (f", then the private orientation hook {getattr(release.orientation, '__name__', 'given')}"
                if release.orientation is not None else "")
        extension = "consistent" if release.is_consistent_extension_ else "none consistent: a DAG with the same skeleton"
        return (f"colliders and Meek's rules on {method_name(release.structure_)}'s separating sets{hook}; the model's "
                f"tables from a DAG extension of the CPDAG ({extension})")

    def parameters_row(self, release) -> str:
        return (f"{len(release.cliques_)} tables (families of the DAG extension merged within a cap of "
                f"{release.plan_.cap} cells), {self.tables_noise}, CGM-EM")

    def graph_text(self, release) -> str:
        g = release.graph_
        return f"A CPDAG with {len(g.directed_edges)} directed and {len(g.undirected_edges)} undirected edges"

    def size_use(self, release) -> str:
        return (f"the structure ran on a secret uniform subset of {release.plan_.n_rows} rows, the released size "
                f"less its noise's 1e-6 tail")

    def budget(self, release) -> list:
        s = release.structure_
        return [("1 structure", f"{method_name(s)}'s tests ({s.ci_test_})", s.ledger_),
                ("3 parameters", f"the model's {len(release.cliques_)} tables", release.parameters_.ledger_)]

    def share_text(self, prediction) -> str:
        return (f"structure share {prediction.split:g}{self.share_of} "
                f"(recommended {prediction.recommended_split:g})")

    @staticmethod
    def _stages_epsilon(prediction) -> float:
        """The epsilon stages 1 to 3 share: the whole budget, or what the size leaves them
        (the planner's, by the chosen structure's composition)."""
        return prediction.epsilon if prediction.stages_epsilon is None else prediction.stages_epsilon


class GaussPCStructure(PCStructure):
    """Gauss-PC (delta > 0): ``split`` of the release's zCDP budget rho to Gauss-PC, the rest
    to the model's tables with Gaussian noise; the stages compose by RDP
    (:func:`~privgraph.release.planner.gauss_epsilons`)."""

    name, label = "gauss-pc", "Gauss-PC"
    tables_noise, share_of = "Gaussian (RDP composition with stage 1)", " of rho (one zCDP budget)"

    def predict(self, domain, n_rows, *, epsilon, pure_epsilon, delta, tables, split, cap, alpha, effect, cell, miss,
                max_relative_error, rounds, usefulness):
        return gauss_release(domain, n_rows, epsilon=epsilon, delta=delta, share=split, cap=cap, alpha=alpha,
                             effect=effect, cell=cell, miss=miss, max_relative_error=max_relative_error,
                             usefulness=usefulness, tables=tables)

    def accountant(self, release, prediction):
        return RDP

    def structure_epsilon(self, release, prediction) -> float:
        return gauss_epsilons(self._stages_epsilon(prediction), release.delta, prediction.split)[0]

    def parameters_epsilon(self, release, prediction) -> float:
        return gauss_epsilons(self._stages_epsilon(prediction), release.delta, prediction.split)[1]

    def parameters_noise(self, release) -> dict:
        return {"noise": "gaussian", "delta": release.delta}

    def parameters_plan(self, release, domain, prediction) -> Ledger:
        """One Gaussian release of every table's counts, charged on stand-in cliques (its cost
        does not depend on which tables)."""
        return plan_tables(domain=domain, cliques=[(v,) for v in domain.names],
                           epsilon=self.parameters_epsilon(release, prediction),
                           neighbours=Neighbours.parse(prediction.neighbours), noise="gaussian", delta=release.delta)


class PrivPCStructure(PCStructure):
    """Priv-PC: ``split * epsilon`` to Priv-PC (its pure rounds composed exactly when
    delta > 0), ``(1 - split) * epsilon`` to the model's tables with Laplace noise."""

    name, label = "priv-pc", "Priv-PC"
    tables_noise, share_of = "Laplace", " of epsilon"

    def predict(self, domain, n_rows, *, epsilon, pure_epsilon, delta, tables, split, cap, alpha, effect, cell, miss,
                max_relative_error, rounds, usefulness):
        return priv_pc_release(domain, n_rows, epsilon=pure_epsilon, delta=delta, split=split, cap=cap, alpha=alpha,
                               effect=effect, cell=cell, miss=miss, max_relative_error=max_relative_error,
                               rounds=rounds, usefulness=usefulness, tables=tables)

    def accountant(self, release, prediction):
        return accountant_for(release.delta)

    def structure_epsilon(self, release, prediction) -> float:
        return prediction.split * self._stages_epsilon(prediction)

    def parameters_epsilon(self, release, prediction) -> float:
        return (1 - prediction.split) * self._stages_epsilon(prediction)

    def parameters_plan(self, release, domain, prediction) -> Ledger:
        """One Laplace release of the tables at the parameters' epsilon."""
        relation = Neighbours.parse(prediction.neighbours)
        return Ledger.of(Charge("laplace", self.parameters_epsilon(release, prediction), 0.0, relation,
                                note=f"clique tables (sensitivity {histogram_l1_sensitivity(relation)} per table)"))


class SpanningTreeStructure(Structure):
    """The private maximum spanning tree (:mod:`privgraph.release.tree`; under zCDP followed by
    AIM's adaptive rounds): one-way tables, the tree's selections and pair tables, the residual
    pairs; the last round's pair tables are the parameters, fitted with every earlier table.
    Needs no n; its shares are the tree's own (it ignores ``split``, ``max_rounds``, ``alpha``,
    ``cap`` and ``orientation``)."""

    name, label, needs_size = "tree", "private spanning tree", False

    def check_domain(self, domain) -> None:
        """Its pair tables within the memory cap (:func:`~privgraph.release.model_size.check_tree_memory`)."""
        check_tree_memory(domain)

    def runs_for_auto(self, domain, delta: float) -> bool:
        """Under zCDP (its adaptive rounds need Gaussian noise) on three or more columns whose
        tables fit the memory cap (:func:`~privgraph.release.planner.tree_fits_memory`)."""
        return delta > 0 and len(domain.names) >= 3 and tree_fits_memory(domain)

    def predict(self, domain, n_rows, *, epsilon, pure_epsilon, delta, tables, split, cap, alpha, effect, cell, miss,
                max_relative_error, rounds, usefulness):
        return tree_alone(domain, n_rows, epsilon=epsilon, delta=delta, cap=cap, effect=effect, cell=cell, miss=miss,
                          max_relative_error=max_relative_error, tables=tables)

    def accountant(self, release, prediction):
        return prediction.tree.accountant

    def plan(self, release, domain, prediction) -> Ledger:
        return prediction.tree.charges(domain)

    def run(self, release, engine, domain, prediction, budget, *, sized=None, sampler=None) -> StageFit:
        """``prediction`` None (add/remove, the tree asked for): the tree's plan, which needs no
        n, is made here, and the planner's prediction afterwards from the released estimate of
        n (post-processing), for the report. ``sized``: the size's ledger when stage 0 released
        it (add/remove; the tree was then the planner's choice at m)."""
        plan = prediction.tree if prediction is not None else plan_tree(
            domain, None, epsilon=release.epsilon, delta=release.delta, neighbours=release.neighbours)
        budget = budget if budget is not None else Budget(release.epsilon, release.delta, composition=plan.accountant)
        check_affordable(plan.charges(domain).charges, budget)  # the whole plan, before any noise
        seed = release.model_seed()
        rng = np.random.default_rng(seed if isinstance(seed, (int, np.integer)) else None)  # post-processing draws
        sampler = sampler if sampler is not None else release.noise_sampler()
        structure = fit_tree_structure(engine, plan, sampler=sampler, budget=budget, rng=rng,
                                       tree_cap=release.tree_cap)
        merged = structure.levels.merged_text()
        rounds = structure.adaptive
        progress("stage 1 (private spanning tree):", len(structure.edges), "edges,",
                 *([] if rounds is None else [f"{rounds.rounds} adaptive rounds ({len(set(rounds.pairs))} tables),"]),
                 f"{len(structure.extras)} pairs beyond the tree, rare levels merged in {len(merged)} columns")
        graph = structure.graph
        dag, consistent = extend_to_dag(graph, domain.names)
        params = PrivateMRF(epsilon=plan.extra_epsilon, cliques=structure.last,
                            method=self._model_fit(release, structure, plan), neighbours=plan.neighbours,
                            noise=plan.noise, delta=plan.delta or None, random_state=release.model_seed())
        params.fit(structure.merged, budget=budget)
        if plan.neighbours is not RO:  # add/remove: n is estimated from every noisy table, as the model's fit does
            n = estimated_rows(joined(structure.tables, params.marginals_, plan.neighbours))
            prediction = prediction if prediction is not None else release.prediction(domain, n)
        else:
            n = prediction.n_rows
        ledger = structure.ledger if sized is None else sized + structure.ledger
        return StageFit(structure, params, ledger, prediction, plan.accountant, n, graph, dag, consistent,
                        structure.edges + structure.extras + structure.triples)

    @staticmethod
    def _model_fit(release, structure, plan):
        """The model fit of the residual pairs' tables with the tree stage's tables (post-processing)."""
        fit = TABLE_METHODS[release.method] if isinstance(release.method, str) else release.method
        options = release.exact_options()
        # a fit that takes a start (CGM-EM) starts from the adaptive rounds' last fit (tree.warm_start)
        warm = "start" in inspect.signature(fit).parameters

        def fit_with_the_tree(extras):
            tables = joined(structure.tables, extras, plan.neighbours)
            return fit(tables, **options, **(warm_start(structure.start, tables) if warm else {}))

        fit_with_the_tree.__name__ = f"{getattr(fit, '__name__', 'custom')} (with the tree's tables)"
        return fit_with_the_tree

    writer = staticmethod(tree_writer)

    def structure_row(self, release) -> str:
        s, batches = release.structure_, len(release.plan_.tree.batches)
        return (f"private spanning tree: {len(s.tables.domain.names)} noisy one-way tables, {len(s.edges)} edges by "
                f"the exponential mechanism, their tables, {adaptive_text(s.adaptive)}then {len(s.last)} pairs the "
                f"model explains worst, in {batches} round{'s' * (batches != 1)} (the tables of every round "
                f"but the last)")

    def orientation_row(self, release) -> str:
        return ("none: the tree is an undirected dependence structure (its edges are pairs that depend, with no "
                "direction and no causal claim; `graph.json` is a tree, not a CPDAG)")

    def parameters_row(self, release) -> str:
        return (f"the last round's {len(release.structure_.last)} residual pairs' tables "
                f"({release.plan_.tree.noise}), CGM-EM on every released table")

    def graph_text(self, release) -> str:
        g = release.graph_
        return (f"A tree of {len(g.undirected_edges)} undirected edges over {len(g.nodes)} columns: a dependence "
                "structure (pairs that depend), with no direction and no causal claim; no independence test ran")

    def size_use(self, release) -> str:
        return (f"released because the structure was chosen (`{release.structure}`) by the planner from a public "
                f"size, {release.plan_.n_rows} rows (the released size less its noise's 1e-6 tail); the tree then "
                f"ran on all rows and reads no size")

    def budget(self, release) -> list:
        s = release.structure_
        paid = f"the last round's {len(s.last)} residual pair tables" if s.last[0][1:] else \
            "the one-way tables again (no residual pair fitted the cap)"
        return [*(("1 structure", what, ledger) for what, ledger in s.paid),
                ("3 parameters", paid, release.parameters_.ledger_)]

    def released_tables(self, release):
        """The tree's tables and its rounds' with the last round's."""
        return joined(release.structure_.tables, release.parameters_.marginals_, Neighbours.parse(release.neighbours))

    def share_text(self, prediction) -> str:
        return "its own shares"


def adaptive_text(rounds) -> str:
    """What AIM's adaptive rounds did (released facts), or nothing when they did not run.

    >>> from privgraph.release.adaptive import AdaptiveRounds
    >>> adaptive_text(AdaptiveRounds((("a", "b"), ("a", "b"), ("b", "c")), 3, 1)), adaptive_text(None)
    ("3 adaptive rounds (AIM's, one zCDP filter; 1 annealed) measuring 2 pairs, ", '')
    >>> adaptive_text(AdaptiveRounds((("a", "b"), ("b", "c")), 2, 0, bins=(((0, 0, 1), None), None)))
    "2 adaptive rounds (AIM's, one zCDP filter; 0 annealed) measuring 2 pairs (1 table with a wide column in bins: a (2 bins) x b), "
    >>> adaptive_text(AdaptiveRounds((("a", "b"),), 1, 0))
    "1 adaptive round (AIM's, one zCDP filter; 0 annealed) measuring 1 pair, "
    >>> adaptive_text(AdaptiveRounds((("a", "b"), ("a", "b", "c")), 2, 0))
    "2 adaptive rounds (AIM's, one zCDP filter; 0 annealed) measuring 1 pair and 1 triple, "
    """
    if rounds is None:
        return ""
    binned = [(p, b) for p, b in dict.fromkeys(zip(rounds.pairs, rounds.bins or (None,) * len(rounds.pairs)))
              if b is not None]
    what = "; ".join(" x ".join(v if c is None else f"{v} ({max(c) + 1} bins)" for v, c in zip(p, b))
                     for p, b in binned)
    tables = f" ({len(binned)} table{'s' * (len(binned) != 1)} with a wide column in bins: {what})" if binned else ""
    pairs = len({p for p in rounds.pairs if len(p) == 2})
    triples = len({t for t in rounds.pairs if len(t) == 3})
    also = f" and {triples} triple{'s' * (triples != 1)}" if triples else ""
    return (f"{rounds.rounds} adaptive round{'s' * (rounds.rounds != 1)} (AIM's, one zCDP filter; {rounds.annealed} "
            f"annealed) measuring {pairs} pair{'s' * (pairs != 1)}{also}{tables}, ")


STRUCTURES.register(GaussPCStructure())
STRUCTURES.register(PrivPCStructure())
STRUCTURES.register(SpanningTreeStructure())

__all__ = ["GaussPCStructure", "PCStructure", "PrivPCStructure", "SpanningTreeStructure", "adaptive_text",
           "estimated_rows", "method_name"]
