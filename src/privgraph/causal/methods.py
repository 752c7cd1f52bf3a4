"""PC's skeleton methods as objects, in one registry that :class:`~privgraph.causal.PrivPC`
and the release's planner both read.

Each method (:data:`METHODS`, by name) states the neighbouring relations it has a form
for (``relations``), the accountant its ledger is read under (:meth:`accountant`), its
charges from public facts (:meth:`plan`: the domain's names, n and the estimator's
parameters, no data), and the skeleton search itself (:meth:`run`). A method that cannot
plan or run something says so with :class:`~privgraph.validation.InvalidInput`; nothing
here branches on a method's name.

* ``priv-pc``, ``svt-pc``, ``laplace-pc``, ``sg-pc``: stable PC asking a private decider
  (:mod:`privgraph.causal.deciders`) over a cap of rounds fixed in advance.
* ``gauss-pc``: one Gaussian release per level, composed in zCDP
  (:mod:`privgraph.causal.gauss_pc`); :meth:`GaussPC.noise` predicts its levels' noise.
* ``tables-pc``: Gaussian releases of the tables of levels 0-2's tests, composed in zCDP
  (:mod:`privgraph.causal.table_pc`); ``"auto"`` (:func:`resolve_method`) takes it on wide tables.
* ``em-pc``: EM-PC's own loop (:mod:`privgraph.causal.em_pc`); no plan ahead.
* ``pc``: not private (no noise, no charges).

The relation of every private method's mechanisms is replace-one with n public (their
margins have replace-one sensitivity 1, :mod:`privgraph.causal.margins`); the add/remove
form of those that have one is :mod:`privgraph.privacy.add_remove`'s reduction.

Examples
--------
>>> sorted(METHODS)
['em-pc', 'gauss-pc', 'laplace-pc', 'pc', 'priv-pc', 'sg-pc', 'svt-pc', 'tables-pc']
>>> [METHODS[m].accountant(1e-6).name for m in ("gauss-pc", "priv-pc", "pc")], METHODS["priv-pc"].accountant(0.0).name
(['rdp', 'optimal', 'basic'], 'basic')
>>> [m for m in METHODS if Neighbours.ADD_REMOVE not in METHODS[m].relations]
['em-pc', 'sg-pc']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

from privgraph.causal.deciders import (
    BudgetTooSmall, LaplacePerTest, NonPrivate, SieveExamineDecider, SparseVectorPC, SubsampledGaussian,
)
from privgraph.causal.em_pc import em_pc_skeleton
from privgraph.causal.gauss_pc import gauss_pc_plan, gauss_pc_skeleton, level_noise
from privgraph.causal.margins import make_margin
from privgraph.causal.skeleton import Skeleton, stable_pc_skeleton
from privgraph.causal.table_pc import TEST_NAME, level0_noise, tables_pc_plan, tables_pc_skeleton
from privgraph.data import Domain
from privgraph.privacy import Ledger, Neighbours, resolve_sampler
from privgraph.privacy.composition import BASIC, RDP, Accountant, accountant_for
from privgraph.validation import InvalidInput

RO, AR = Neighbours.REPLACE_ONE, Neighbours.ADD_REMOVE
BOTH = frozenset((RO, AR))


class PublicShape:
    """What a method's plan may learn before the data is read: the domain and n.

    >>> PublicShape(Domain.of(a=2, b=2), 100).subsample(10, None).n
    10
    """

    def __init__(self, domain: Domain, n: int):
        self.domain, self.n, self.names = domain, n, domain.names
        self.engine = None

    def table(self, columns):
        raise RuntimeError("a privacy plan reads no data")

    def subsample(self, m: int, sampler) -> "PublicShape":
        return PublicShape(self.domain, m)

    def blocks(self, count: int, sampler) -> "PublicShape":
        """The public shape of ``count`` disjoint blocks (subsample-and-aggregate): no draw."""
        shape = PublicShape(self.domain, self.n // count * count)
        shape.count, shape.parts = count, [PublicShape(self.domain, self.n // count)] * count
        return shape


@dataclass(frozen=True)
class Search:
    """The public parameters of one skeleton search (the estimator's, resolved)."""

    epsilon: float  # the structure's share of the budget
    delta: float
    alpha: float
    max_cond_size: int
    max_rounds: int | None = None
    forbidden: tuple = ()
    required: tuple = ()


class SkeletonRun(NamedTuple):
    """What :meth:`SkeletonMethod.run` returns: the skeleton, its ledger, and the cap of
    rounds reserved and used (None where the method has no rounds)."""

    skeleton: Skeleton
    ledger: Ledger
    rounds: int | None
    rounds_used: int | None


class LevelNoise(NamedTuple):
    """A method's predicted test noise, in margin units (sensitivity 1): level 0's, a later
    level's at most (inf: the plan stops at level 0), and the noise a marginal test can bear."""

    first: float
    later: float
    bearable: float


@dataclass(frozen=True)
class SkeletonMethod:
    """A skeleton method: its name, its relations, its accountant, its plan and its run.

    ``is_private``: False for plain PC (no charges, basic composition of nothing).
    ``is_zcdp``: its charges compose by RDP when delta > 0. ``takes_fisher_z``: it runs
    on the one private covariance of :mod:`privgraph.causal.fisher_pc` too.
    ``replace_one_only``: why it has no add/remove form (empty when it has one).
    ``plans_ahead``: its charges are known before the data is read (:meth:`plan`).
    """

    name: str
    plans_ahead: bool = True
    is_private: bool = True
    is_zcdp: bool = False
    takes_fisher_z: bool = False
    replace_one_only: str = ""

    @property
    def relations(self) -> frozenset:
        """The neighbouring relations a guarantee of this method can be stated under."""
        return frozenset((RO,)) if self.replace_one_only else BOTH

    def accountant(self, delta: float) -> Accountant:
        """How this method's ledger composes at ``delta`` (the one place it is chosen)."""
        if not self.is_private:
            return BASIC
        return RDP if self.is_zcdp and delta > 0 else accountant_for(delta)

    def check(self, delta: float) -> None:
        """Refuse a ``delta`` this method cannot run with (public facts only)."""

    def plan(self, shape: PublicShape, test, search: Search) -> Ledger:
        """The charges :meth:`run` reserves on data of this public shape (no data read)."""
        raise NotImplementedError

    def run(self, tables, test, search: Search, *, sampler, budget=None, on_level=None) -> SkeletonRun:
        """The skeleton of ``tables`` by this method, its whole plan reserved on ``budget``."""
        raise NotImplementedError

    def noise(self, shape: PublicShape, test, search: Search) -> LevelNoise:
        """The noise of this method's tests predicted from public facts (see :class:`LevelNoise`)."""
        raise InvalidInput(f"method {self.name!r} predicts no per-level noise: read its per-round epsilon "
                           "from its privacy plan")


@dataclass(frozen=True)
class PlainPC(SkeletonMethod):
    """Stable PC with the plain test: no noise, no budget, NOT private."""

    def plan(self, shape, test, search):
        return Ledger()

    def run(self, tables, test, search, *, sampler, budget=None, on_level=None):
        decider = NonPrivate(tables, test, search.alpha)
        return SkeletonRun(_stable(tables, decider, search, on_level), decider.ledger, None, None)


@dataclass(frozen=True)
class DeciderPC(SkeletonMethod):
    """Stable PC asking a private decider, over a cap of ``rounds_per_pair`` rounds per pair
    of variables (or the estimator's ``max_rounds``); the decider's docstring names its
    mechanism's relation (replace-one) and sensitivity (1, in margin units)."""

    decider: Callable = None
    rounds_per_pair: int = 1

    def rounds(self, d: int, max_rounds: int | None) -> int:
        """The cap of rounds over d variables.

        >>> METHODS["priv-pc"].rounds(8, None), METHODS["priv-pc"].rounds(8, 5)
        (56, 5)
        """
        return max_rounds or self.rounds_per_pair * d * (d - 1) // 2

    def make(self, tables, test, search: Search, *, sampler, budget=None):
        """The decider over ``tables`` (or a :class:`PublicShape`), its cap reserved on ``budget``;
        a refusal of the default cap names Gauss-PC, whose noise scales with the pairs' root."""
        d = len(tables.names)
        try:
            return self.decider(tables, make_margin(test, search.alpha), epsilon=search.epsilon,
                                delta=search.delta, rounds=self.rounds(d, search.max_rounds), sampler=sampler,
                                budget=budget)
        except BudgetTooSmall as err:  # public parameters only: say what scales on a wide table
            if search.max_rounds is not None:
                raise
            raise BudgetTooSmall(f"{err}; or method='gauss-pc' (--method gauss-pc), one release per level of "
                                 f"PC, whose noise grows with the square root of the number of tests, not with "
                                 f"the {d * (d - 1) // 2} pairs", err.needed) from err

    def plan(self, shape, test, search):
        return self.make(shape, test, search, sampler=resolve_sampler(None)).ledger

    def run(self, tables, test, search, *, sampler, budget=None, on_level=None):
        decider = self.make(tables, test, search, sampler=sampler, budget=budget)
        sk = _stable(tables, decider, search, on_level)
        return SkeletonRun(sk, decider.ledger, decider.rounds, decider.rounds_used)


@dataclass(frozen=True)
class OwnLoop(SkeletonMethod):
    """A method with its own level loop instead of a decider: ``loop(tables, margin, *,
    epsilon, delta, max_cond_size, sampler, budget, forbidden, required, on_level)`` returns
    the skeleton and the ledger of its whole plan."""

    loop: Callable = None

    def run(self, tables, test, search, *, sampler, budget=None, on_level=None):
        sk, ledger = self.loop(tables, make_margin(test, search.alpha), epsilon=search.epsilon, delta=search.delta,
                               sampler=sampler, budget=budget, max_cond_size=search.max_cond_size,
                               forbidden=search.forbidden, required=search.required, on_level=on_level)
        return SkeletonRun(sk, ledger, None, None)


@dataclass(frozen=True)
class GaussPC(OwnLoop):
    """Gauss-PC: one Gaussian release per level (replace-one, L2 sensitivity of the margins'
    vector; :mod:`privgraph.causal.gauss_pc`), composed in zCDP; needs delta > 0."""

    def check(self, delta):
        if delta <= 0:
            raise InvalidInput(f"gauss-pc composes in zCDP and needs delta > 0, got delta={delta!r}")

    def plan(self, shape, test, search):
        return gauss_pc_plan(shape, make_margin(test, search.alpha), epsilon=search.epsilon, delta=search.delta,
                             max_cond_size=search.max_cond_size, forbidden=search.forbidden,
                             required=search.required)

    def noise(self, shape, test, search):
        """Level 0's Gaussian sigma, level 1's with every pair left, and what a marginal test
        can bear (:func:`~privgraph.causal.gauss_pc.level_noise`)."""
        return LevelNoise(*level_noise(shape, make_margin(test, search.alpha), epsilon=search.epsilon,
                                       delta=search.delta, max_cond_size=search.max_cond_size))


@dataclass(frozen=True)
class TablesPC(SkeletonMethod):
    """Tables-PC: Gaussian releases of the tables of levels 0-2's tests (replace-one, L2
    sensitivity ``sqrt(2 T)`` for T tables; :mod:`privgraph.causal.table_pc`), composed in
    zCDP; each test a noise-aware chi-square test of a released table (the CI test asked for
    is not used); needs delta > 0."""

    test_name: str = TEST_NAME

    def check(self, delta):
        if delta <= 0:
            raise InvalidInput(f"tables-pc composes in zCDP and needs delta > 0, got delta={delta!r}")

    def table_noise(self, shape, search) -> float:
        """Level 0's sigma per released cell, from public facts (:func:`~privgraph.causal.table_pc.level0_noise`)."""
        return level0_noise(shape.domain, epsilon=search.epsilon, delta=search.delta,
                            max_cond_size=search.max_cond_size, forbidden=search.forbidden, required=search.required)

    def plan(self, shape, test, search):
        return tables_pc_plan(shape, epsilon=search.epsilon, delta=search.delta, max_cond_size=search.max_cond_size)

    def run(self, tables, test, search, *, sampler, budget=None, on_level=None):
        sk, ledger = tables_pc_skeleton(tables, alpha=search.alpha, epsilon=search.epsilon, delta=search.delta,
                                        max_cond_size=search.max_cond_size, sampler=sampler, budget=budget,
                                        forbidden=search.forbidden, required=search.required, on_level=on_level)
        return SkeletonRun(sk, ledger, None, None)


@dataclass(frozen=True)
class EMPC(OwnLoop):
    """EM-PC: each level's removals chosen offline by exponential mechanisms (replace-one,
    utility sensitivity 1; :mod:`privgraph.causal.em_pc`)."""

    def plan(self, shape, test, search):
        raise InvalidInput("em-pc chooses its removals offline: its plan is its levels' exponential "
                           "mechanisms, known only once the level sizes are; use another method to plan")


def _stable(tables, decider, search: Search, on_level) -> Skeleton:
    return stable_pc_skeleton(tables.names, decider, max_cond_size=search.max_cond_size, forbidden=search.forbidden,
                              required=search.required, on_level=on_level)


#: The skeleton methods by name (PrivPC's ``method``; the CLI's ``--method`` choices).
METHODS: dict[str, SkeletonMethod] = {m.name: m for m in (
    DeciderPC("priv-pc", takes_fisher_z=True, decider=SieveExamineDecider, rounds_per_pair=2),
    DeciderPC("svt-pc", decider=SparseVectorPC, rounds_per_pair=1),
    EMPC("em-pc", plans_ahead=False, replace_one_only="it has no plan to reserve ahead", loop=em_pc_skeleton),
    DeciderPC("laplace-pc", decider=LaplacePerTest, rounds_per_pair=4),
    DeciderPC("sg-pc", is_zcdp=True, decider=SubsampledGaussian, rounds_per_pair=4,
              replace_one_only="its accountant is replace-one sub-sampling's"),
    GaussPC("gauss-pc", is_zcdp=True, loop=gauss_pc_skeleton),
    TablesPC("tables-pc", is_zcdp=True),
    PlainPC("pc", is_private=False, takes_fisher_z=True),
)}

#: ``method="auto"`` (PrivPC's default) takes tables-pc on this many columns or more when delta > 0,
#: else priv-pc. Measured at 1e5 rows, epsilon 1 and 3, seeds 0-2 (skeleton F1, priv-pc against
#: tables-pc): asia (8 columns) 0.72 / 0.93 against 0.77 / 0.77; sachs (11) 0.80 / 0.87 against
#: 0.95 / 0.99; child (20) refused / 0.40 against 0.96 / 0.97.
AUTO_MIN_COLUMNS = 10

#: The name of the choice from public facts (:func:`resolve_method`).
AUTO = "auto"


def resolve_method(name: str, columns: int | None, delta: float) -> SkeletonMethod:
    """The skeleton method ``name`` names; ``"auto"`` decides from public facts only (the
    number of columns, delta): tables-pc on :data:`AUTO_MIN_COLUMNS` columns or more when
    delta > 0 (it composes in zCDP), else priv-pc. Without ``columns`` (parameters checked
    before the domain is read) ``"auto"`` is priv-pc's checks and relations, which tables-pc
    shares.

    >>> resolve_method("auto", 37, 1e-6).name, resolve_method("auto", 8, 1e-6).name, resolve_method("auto", 37, 0.0).name
    ('tables-pc', 'priv-pc', 'priv-pc')
    """
    if name != AUTO:
        return METHODS[name]
    wide = columns is not None and columns >= AUTO_MIN_COLUMNS and delta > 0
    return METHODS["tables-pc" if wide else "priv-pc"]


#: Default cap of rounds (tests for laplace-pc and sg-pc) per unordered pair of variables.
ROUNDS_PER_PAIR = {name: m.rounds_per_pair for name, m in METHODS.items() if isinstance(m, DeciderPC)}

#: The methods the Fisher-z path runs with (the private default, and "pc": not private).
FISHER_Z_METHODS = tuple(name for name, m in METHODS.items() if m.takes_fisher_z)

__all__ = ["AUTO", "AUTO_MIN_COLUMNS", "resolve_method", "FISHER_Z_METHODS", "LevelNoise", "METHODS", "PublicShape", "ROUNDS_PER_PAIR", "Search", "SkeletonMethod",
           "SkeletonRun"]
