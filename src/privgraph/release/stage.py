"""A release's structure as one object: its plan, its run and what the report says of it.

A structure is stage 1 of a :class:`~privgraph.release.PrivateRelease` (the graph) with the
parameters it releases for the model (stage 3). Each is a :class:`Structure` in the registry
:data:`STRUCTURES`, by name (``--structure``): its prediction from public facts
(:meth:`~Structure.predict`, what the planner shows), its charges (:meth:`~Structure.plan`,
no data), its run spending exactly those charges (:meth:`~Structure.run`) and the texts the
report and the command line print about it (:meth:`~Structure.structure_row` and the rows after it). Adding a structure
is one class and one registry line (``STRUCTURES.register(Chain())``); the built-in ones are
:mod:`privgraph.release.structures`. ``"auto"`` is no structure: the planner's choice among the
built-in ones (:func:`privgraph.release.planner.plan_release`).

The registry is a :class:`~privgraph.registry.Registry` over the declaration's names
(:data:`privgraph.declarations.RELEASE_STRUCTURES`), so a registered structure is a choice of
the estimator and of the command line. This module sits below the planner and imports no
numerical stack; the built-in structures register when :mod:`privgraph.release` is imported.

>>> import privgraph.release
>>> list(STRUCTURES), STRUCTURES["tree"].label, needs_size("tree"), needs_size("auto")
(['gauss-pc', 'priv-pc', 'tree'], 'private spanning tree', False, True)
"""

from __future__ import annotations

import logging
from typing import Callable, NamedTuple

from privgraph.declarations import RELEASE_STRUCTURES
from privgraph.registry import Registry


#: Progress lines, one per stage (the CLI shows them on stderr when it is not a terminal).
#: They name stages and public or released facts only (counts of tables, rows, cells).
LOG = logging.getLogger("privgraph.release")


def progress(*parts) -> None:
    """One progress line of :data:`LOG` (its parts joined by spaces)."""
    LOG.info(" ".join(str(p) for p in parts))


class StageFit(NamedTuple):
    """What :meth:`Structure.run` hands back to the release: the fitted stage 1 and
    parameters, the structure's ledger (with the size's when stage 0 ran), the plan it ran
    to, its accountant, the number of rows (public, or estimated from noisy tables), the
    released graph, its DAG extension (and whether it is consistent) and the model's cliques."""

    structure: object
    parameters: object
    ledger: object
    prediction: object
    accountant: object
    n_rows: int
    graph: object
    dag: object
    is_consistent_extension: bool
    cliques: tuple


class Structure:
    """Stage 1 of a release and the parameters it releases (stage 3), as one object.

    ``name``: its registry key; ``label``: its name in the report; ``needs_size``: whether it
    plans at a public number of rows (under add/remove a size is then released first, stage 0,
    and the plan made at the public m it gives); one that needs no n runs on all rows.

    ``release`` below is the :class:`~privgraph.release.PrivateRelease` being fitted (its
    parameters: budget, relation, caps, the model's fit, seeds); ``prediction`` the planner's
    :class:`~privgraph.release.ReleasePlan` for this structure (public facts only).
    """

    name: str = ""
    label: str = ""
    needs_size: bool = True
    #: The released graph's writer (:mod:`privgraph.graphs.export`: ``graph_writer`` for a CPDAG).
    writer: Callable | None = None

    def check_domain(self, domain) -> None:
        """Refuse, from the public codebook alone, a domain this structure cannot run on (one
        line naming the limit); none here. Called before any row is read or any budget spent."""

    def runs_for_auto(self, domain, delta: float) -> bool:
        """Whether ``structure="auto"`` runs this structure from public facts alone (the domain
        and delta, before any n: no size is spent); none here
        (:func:`~privgraph.release.planner.resolve_structure`)."""
        return False

    def predict(self, domain, n_rows: int, *, epsilon: float, pure_epsilon: float, delta: float, tables,
                **options):
        """The planner's :class:`~privgraph.release.ReleasePlan` of this structure asked for by
        name (no data): ``epsilon`` what the stages share (the rest of rho after a size under
        zCDP), ``pure_epsilon`` the same under basic composition, ``tables`` the tables'
        relation, ``options`` the planner's (``split``, ``cap``, ``alpha``, ``effect``, ``cell``,
        ``miss``, ``max_relative_error``, ``rounds``, ``usefulness``)."""
        raise NotImplementedError

    def accountant(self, release, prediction):
        """How the release's ledger composes: its :class:`~privgraph.privacy.composition.Accountant`
        (the one place the structure chooses it)."""
        raise NotImplementedError

    def plan(self, release, domain, prediction):
        """The :class:`~privgraph.privacy.Ledger` of stages 1 and 3 (the size's apart), from
        public facts only: what :meth:`run` spends."""
        raise NotImplementedError

    def run(self, release, engine, domain, prediction, budget, *, sized=None, sampler=None) -> StageFit:
        """Stages 1 to 3 on ``engine``, spending exactly :meth:`plan` (checked against
        ``budget``, None: one of the release's (epsilon, delta), before any noise). ``sized``:
        stage 0's ledger under add/remove (with ``sampler``, the one it drew from);
        ``prediction`` None: a structure that needs no n, under add/remove, plans here."""
        raise NotImplementedError

    def structure_row(self, release) -> str:
        """What stage 1 did, in one table cell of the report."""
        raise NotImplementedError

    def orientation_row(self, release) -> str:
        """What stage 2 did, in one table cell."""
        raise NotImplementedError

    def parameters_row(self, release) -> str:
        """What stage 3 released, in one table cell."""
        raise NotImplementedError

    def graph_text(self, release) -> str:
        """What the released graph is, in its own terms."""
        raise NotImplementedError

    def size_use(self, release) -> str:
        """Why stage 0's size was released and how it was used (under add/remove, when it ran)."""
        raise NotImplementedError

    def budget(self, release) -> list:
        """``(stage, what it paid for, ledger)`` for every part of stages 1 and 3's charges."""
        raise NotImplementedError

    def released_tables(self, release):
        """Every noisy table the model was fitted to (one NoisyMarginals): by default the
        parameters'."""
        return release.parameters_.marginals_

    def share_text(self, prediction) -> str:
        """``privgraph plan``'s words on the budget's split: by default the structure's share."""
        return f"structure share {prediction.split:g} (recommended {prediction.recommended_split:g})"


#: The release's structures by name; each entry's name is a choice of ``structure``
#: (``--structure``) while it is registered.
STRUCTURES: Registry = Registry(RELEASE_STRUCTURES)


def needs_size(structure: str) -> bool:
    """Whether a release asked for ``structure`` plans at a public size (``"auto"``, the
    planner's choice, may choose a structure that does)."""
    chosen = STRUCTURES.get(structure)
    return True if chosen is None else chosen.needs_size


def checked_before_data(structure: str, add_remove: bool) -> tuple[Structure, ...]:
    """The structures whose :meth:`Structure.check_domain` a release asked for ``structure``
    runs before any row is read or spent: the one asked for; for ``"auto"`` (the planner's
    choice) under add/remove every registered one (the planner chooses once the size is spent,
    so any may run), under replace-one none (the planner, knowing n, passes over one that fails).

    >>> [s.name for s in checked_before_data("auto", add_remove=True)] == list(STRUCTURES)
    True
    >>> checked_before_data("auto", add_remove=False)
    ()
    """
    chosen = STRUCTURES.get(structure)
    if chosen is not None:
        return (chosen,)
    return tuple(STRUCTURES.values()) if add_remove else ()


def stage_of(release) -> Structure:
    """The registered structure a fitted release ran (:attr:`structure_kind_`)."""
    return STRUCTURES[release.structure_kind_]


__all__ = ["LOG", "STRUCTURES", "StageFit", "Structure", "checked_before_data", "needs_size", "progress",
           "stage_of"]
