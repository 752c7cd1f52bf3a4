"""PrivateMRF's fits as objects, in one registry that :class:`~privgraph.mrf.PrivateMRF` and
the command line read.

Each fit (:data:`FITS`, by name) states what it needs (``in_memory``: the records' codes
rather than counted tables; :meth:`needs_delta`), the accountant its ledger is read under
(``accountant``, :mod:`privgraph.privacy.composition`), its refusals across parameters
(:meth:`check`), its charges from public facts (:meth:`plan`: the domain, the cliques, the
estimator's parameters and the public number of units, no data) and its run (:meth:`run`: the release and the fit, spending exactly
that plan). Nothing else branches on a fit's name.

* ``cgm-em``, ``naive-mle`` (:class:`TableFit`): one release of the cliques' noisy tables
  (:func:`~privgraph.mrf.noisy_tables.release_tables`, Laplace or Gaussian, composed basic),
  then a model fitted to them by post-processing (:func:`~privgraph.mrf.cgm.cgm_em`,
  :func:`~privgraph.mrf.baselines.naive_mle`). A custom ``method`` (a function of the
  released tables) is a TableFit too (:func:`fit_of`).
* ``psgd`` (:class:`PsgdFit`): private stochastic gradient ascent on the records
  (:mod:`privgraph.mrf.psgd`), composed by RDP at ``delta``.

A new fit is one class with this protocol and one line, ``FITS.register(MyFit())``: the
registry adds its name to the declaration's choices (:data:`privgraph.declarations.MRF_FITS`),
so ``PrivateMRF(method=...)`` and ``privgraph fit-mrf --method`` accept it.

>>> list(FITS)
['cgm-em', 'naive-mle', 'psgd']
>>> [(f.accountant.name, f.in_memory, f.needs_delta("laplace")) for f in FITS.values()]
[('basic', False, False), ('basic', False, False), ('rdp', True, True)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from privgraph.data import CountEngine, Domain, count_tables
from privgraph.declarations import MRF_FITS
from privgraph.mrf.baselines import naive_mle
from privgraph.mrf.cgm import cgm_em
from privgraph.mrf.individuals import individual_tables
from privgraph.mrf.model import MarkovRandomField
from privgraph.mrf.noisy_tables import NoisyMarginals, group_tables, plan_release, release_tables
from privgraph.mrf.psgd import psgd, psgd_plan
from privgraph.privacy import Budget, Ledger, Neighbours, NoiseSampler
from privgraph.privacy.composition import BASIC, RDP, Accountant
from privgraph.registry import Registry
from privgraph.timecap import start_clock
from privgraph.validation import InvalidInput


@dataclass(frozen=True)
class Setting:
    """The estimator's public parameters a fit reads (its own, checked): the budget, the
    relation as given (a string or :class:`Neighbours`) and parsed, the tables' noise, the
    ties, the individual column and its null code, the privacy unit's name, and the
    method's extra keywords."""

    epsilon: float
    delta: float | None
    neighbours: object
    relation: Neighbours
    noise: str
    ties: tuple | None
    individual: str | None
    null: int | None
    unit: str
    options: dict


class FitData(NamedTuple):
    """The data a run reads, opened by the estimator: the discrete ``domain`` and checked
    ``cliques``, and either a count ``engine`` or the records' ``codes`` in memory (with
    the individuals' ``ids`` under ``individual=``)."""

    domain: Domain
    cliques: tuple
    engine: CountEngine | None = None
    codes: np.ndarray | None = None
    ids: np.ndarray | None = None


class FitRun(NamedTuple):
    """What :meth:`MRFFit.run` returns: the model, the released tables (None where the fit
    releases none) and the ledger."""

    model: MarkovRandomField | None
    marginals: NoisyMarginals | None
    ledger: Ledger


class MRFFit:
    """The protocol of a fit (see the module docstring); subclasses set the attributes and
    define :meth:`plan` and :meth:`run`."""

    #: The fit's name (its key in :data:`FITS`, ``--method``'s value).
    name: str = ""
    #: How its ledger composes to the fit's guarantee (:func:`~privgraph.privacy.ledger.guarantee`).
    accountant: Accountant = BASIC
    #: Whether it reads the records' codes in memory (else counted tables: any engine).
    in_memory: bool = False

    def needs_delta(self, noise: str) -> bool:
        """Whether a fit with the tables' ``noise`` needs delta > 0."""
        return noise == "gaussian"

    def check(self, setting: Setting) -> None:
        """Refuse, with :class:`InvalidInput`, parameters this fit has no form for."""

    def plan(self, domain: Domain, cliques: tuple, setting: Setting, n_rows: int | None) -> Ledger:
        """The ledger :meth:`run` charges, from public facts (``n_rows``: the public number
        of units, None under add/remove)."""
        raise NotImplementedError

    def run(self, data: FitData, setting: Setting, *, sampler: NoiseSampler, budget: Budget | None) -> FitRun:
        """Release what the fit needs from ``data`` (charging ``budget``, before any noise)
        and fit the model: exactly :meth:`plan`'s charges."""
        raise NotImplementedError


class TableFit(MRFFit):
    """One release of the cliques' noisy tables, then ``fit(marginals, **options)``
    (post-processing: it returns a model, or None for a custom method that keeps only the
    release)."""

    def __init__(self, name: str, fit: Callable):
        self.name, self.fit = name, fit

    def plan(self, domain, cliques, setting, n_rows):
        return plan_release(domain=domain, cliques=cliques, epsilon=setting.epsilon, neighbours=setting.neighbours,
                            noise=setting.noise, delta=setting.delta, ties=setting.ties, unit=setting.unit)

    def run(self, data, setting, *, sampler, budget):
        marginals, ledger = self.release(data, setting, sampler=sampler, budget=budget)
        return FitRun(self.fit(marginals, **setting.options), marginals, ledger)

    def release(self, data: FitData, setting: Setting, *, sampler, budget):
        """The noisy tables (:func:`~privgraph.mrf.noisy_tables.release_tables`) and their ledger:
        normalised per individual from the codes, or counted by the engine."""
        cliques = data.cliques
        ties = tuple(range(len(cliques))) if setting.ties is None else tuple(setting.ties)
        if data.codes is not None:
            tables = individual_tables(data.codes, data.ids, domain=data.domain, cliques=cliques, ties=ties,
                                       null=setting.null)
            units = len(np.unique(data.ids))
        else:
            tables = group_tables(count_tables(data.engine, cliques), ties)
            start_clock()  # the data pass is done: a public time cap counts from here (privgraph.timecap)
            units = int(data.engine.counts([])) if setting.relation is Neighbours.REPLACE_ONE else None  # public only there
        return release_tables(
            tables, domain=data.domain, cliques=cliques, epsilon=setting.epsilon, neighbours=setting.relation,
            sampler=sampler, noise=setting.noise, delta=setting.delta, ties=ties, records=units,
            unit=setting.unit, budget=budget,
        )


class PsgdFit(MRFFit):
    """PSGD (:func:`~privgraph.mrf.psgd.psgd`): the records in memory, Gaussian noisy gradients
    composed by RDP; it needs delta and fits whole records (no null code)."""

    name, accountant, in_memory = "psgd", RDP, True

    def needs_delta(self, noise: str) -> bool:
        return True

    def check(self, setting: Setting) -> None:
        if setting.null is not None:
            raise InvalidInput(f"null={setting.null!r} applies to the marginal methods' normalised tables; psgd fits "
                               "the likelihood of whole records (a null code is an ordinary level): drop null")

    def plan(self, domain, cliques, setting, n_rows):
        return psgd_plan(domain=domain, cliques=cliques, epsilon=setting.epsilon, delta=setting.delta,
                         neighbours=setting.neighbours, ties=setting.ties,
                         records=n_rows if setting.relation is Neighbours.REPLACE_ONE else None,
                         individuals=setting.individual is not None, **setting.options)

    def run(self, data, setting, *, sampler, budget):
        model, ledger = psgd(data.codes, domain=data.domain, cliques=data.cliques, epsilon=setting.epsilon,
                             delta=setting.delta, sampler=sampler, neighbours=setting.relation, individuals=data.ids,
                             ties=setting.ties, budget=budget, **setting.options)
        return FitRun(model, None, ledger)


#: The fits by name; its names are the declaration's (:data:`privgraph.declarations.MRF_FITS`).
FITS = Registry(MRF_FITS)
FITS.register(TableFit("cgm-em", cgm_em))
FITS.register(TableFit("naive-mle", naive_mle))
FITS.register(PsgdFit())


def fit_of(method) -> MRFFit:
    """The fit of a ``method``: a registered name (checked by the caller), or a custom
    function of the released tables (a :class:`TableFit` around it).

    >>> fit_of("psgd").name, fit_of(lambda marginals: None).accountant.name
    ('psgd', 'basic')
    """
    if isinstance(method, str):
        return FITS[method]
    return TableFit(getattr(method, "__name__", "custom"), method)


__all__ = ["FITS", "FitData", "FitRun", "MRFFit", "PsgdFit", "Setting", "TableFit", "fit_of"]
