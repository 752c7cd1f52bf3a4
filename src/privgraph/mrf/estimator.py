"""``PrivateMRF``: fit a private Markov random field to a dataset in one call.

The estimator validates everything it can before any budget is spent (cliques, columns,
method, privacy parameters), releases what its method needs (noisy clique tables, or
PSGD's noisy gradients), and keeps the ledger of that release. Everything after the
release is post-processing.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from privgraph.data import (
    NOT_PRIVATE_DOMAIN,
    CountEngine,
    Domain,
    check_invalid,
    resolve_domain,
)
from privgraph.data.bins import decode_codes
from privgraph.data.derived import add_derived, check_not_derived
from privgraph.data.domain import check_countable
from privgraph.data.frontdoor import PrivateData, open_private
from privgraph.data.persons import fit_per_person, person_unit, plan_per_person
from privgraph.mrf.fits import FITS, FitData, MRFFit, Setting, TableFit, fit_of
from privgraph.mrf.inference import infer, is_exact
from privgraph.mrf.model import MarkovRandomField, check_cliques, parse_cliques
from privgraph.declarations import MRF
from privgraph.estimator import PrivateEstimator
from privgraph.mrf.sampling import sample_model, sampling_path
from privgraph.privacy import Budget, Neighbours, PrivacyPlan
from privgraph.validation import InvalidInput, UnknownName

#: The fits' names (:data:`privgraph.mrf.fits.FITS`; open: a fit registered there is one more).
METHODS = FITS.names
#: The built-in fits of released noisy tables, as functions by name (the release's choices).
TABLE_METHODS: dict[str, Callable] = {name: fit.fit for name, fit in FITS.items() if isinstance(fit, TableFit)}


class PrivateMRF(PrivateEstimator):
    """A differentially private MRF over fixed cliques.

    Parameters
    ----------
    epsilon : float
        Total privacy budget.
    cliques : sequence of column-name sequences, or ``"a,b;b,c"``
        The model's cliques (fixed in advance, as in the text).
    method : ``"cgm-em"`` (default), ``"naive-mle"`` or ``"psgd"`` (or the name of any fit
        registered in :data:`privgraph.mrf.fits.FITS`), or a function of a
        :class:`~privgraph.mrf.noisy_tables.NoisyMarginals` returning a model.
    neighbours : ``"add_remove"`` (default) or ``"replace_one"``
        The neighbouring relation of the guarantee. Under add/remove the number of units
        is private and estimated from the noisy tables (PSGD releases it with the Laplace
        mechanism); under replace-one it is public.
    noise : ``"laplace"`` (pure epsilon-DP, default) or ``"gaussian"`` (needs ``delta``).
    delta : float, optional
        For Gaussian noise and PSGD (the text uses 1/N for PSGD; read PSGD's ledger with
        ``ledger_.total("rdp", delta=delta)``).
    individual : str, optional
        A column naming the individual; the privacy unit becomes the individual and each
        one's contribution to each table is normalised (see :mod:`privgraph.mrf.individuals`).
    ties, null
        Tied potentials (a group label per clique) and the null code for ``individual``
        (the marginal methods only; PSGD refuses it).
    random_state : None, int or NoiseSampler
        None: secure noise. An int: reproducible noise (NOT private) and sampling.
    invalid : None, ``"drop"`` or ``"recode"``
        What happens to a missing or out-of-domain value (:mod:`privgraph.data.frontdoor`);
        None: ``"drop"`` under add/remove, ``"recode"`` under replace-one. Never an error.
    options : dict
        Extra keywords for the method (e.g. ``{"discrepancy": 1.5}`` for CGM-EM).
    max_rows_per_person : int, optional
        With a codebook naming the person column (``"id"``): the most rows one person may
        contribute (public); each person keeps at most this many (a secret uniform choice)
        and the guarantee is per person, by group privacy over the rows
        (:mod:`privgraph.privacy.person`). Another way than ``individual`` (the text's
        normalised tables) to make the person the unit; give one of them.

    Attributes
    ----------
    model_ : MarkovRandomField
    marginals_ : NoisyMarginals or None
        The released noisy tables (None for PSGD).
    ledger_ : Ledger
        What the fit cost; its charge notes name the privacy unit.
    composition_ : str
        How :attr:`ledger_` composes to the fit's guarantee
        (:func:`~privgraph.privacy.ledger.guarantee`): ``"rdp"`` at ``delta`` for PSGD (its
        steps are calibrated by RDP), ``"basic"`` for the one release of the tables.
    is_exact_ : bool
        Whether the fit's inference was exact (the model's junction tree within
        :data:`~privgraph.mrf.inference.MAX_TREE_CELLS`); False: loopy BP, approximate.
    sampling_ : str
        Set by :meth:`sample`: the path its last call took (``"round"``, ``"sample"`` or
        ``"gibbs"``, :func:`~privgraph.mrf.sampling.sampling_path`), which need not be the
        method asked for.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"a": rng.integers(0, 2, 500), "b": rng.integers(0, 3, 500)})
    >>> est = PrivateMRF(epsilon=1.0, cliques="a,b", random_state=0).fit(df, domain=Domain.of(a=2, b=3))
    >>> est.ledger_.total().epsilon, est.model_.cliques, est.marginal(["b"]).shape
    (1.0, (('a', 'b'),), (3,))
    >>> est.sample(4).shape
    (4, 2)
    """

    #: The parameters' declarations (the CLI's ``fit-mrf`` options are built from them).
    PARAMS = MRF

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float | None = None,
        neighbours: str | Neighbours = "add_remove",
        random_state=None,
        cliques=None,
        method: str | Callable = "cgm-em",
        noise: str = "laplace",
        individual: str | None = None,
        ties: Sequence[int] | None = None,
        null: int | None = None,
        invalid: str | None = None,
        options: dict | None = None,
        max_rows_per_person: int | None = None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.neighbours = neighbours
        self.random_state = random_state
        self.cliques = cliques
        self.method = method
        self.noise = noise
        self.individual = individual
        self.ties = ties
        self.null = null
        self.invalid = invalid
        self.options = options
        self.max_rows_per_person = max_rows_per_person

    def fit(self, data, *, domain=None, infer_domain: bool = False, budget: Budget | None = None) -> "PrivateMRF":
        """Fit to a DataFrame, a CSV/Parquet path (counted by DuckDB for the table methods,
        never loaded whole), a count engine, or integer codes; returns ``self``.

        ``domain`` is the public domain (a :class:`Domain`, a codebook path or dict);
        without one the data must carry it (Categorical columns) or the fit refuses before
        reading a value, unless ``infer_domain=True`` (the ledger then says the domain is
        not private). Integer codes need a :class:`Domain`. ``budget``: an outside
        :class:`~privgraph.privacy.Budget` the release is charged to (several fits share it).
        """
        if (unit := self._person(domain)) is not None:
            return fit_per_person(self, unit, data, domain=domain, budget=budget)
        neighbours = Neighbours.parse(self.neighbours)
        invalid = check_invalid(self.invalid, neighbours)
        self._check_parameters(len(self._cliques()))
        fit = self._fit()
        in_memory = fit.in_memory or self.individual is not None
        private = self._open(data, domain, infer_domain, neighbours, invalid, in_memory)  # the one front door
        self.derived_domain_ = private.domain if private.domain.derived else None  # its rules, for the samples
        if private.domain.derived:  # a derived column is never read (privgraph.data.derived)
            check_not_derived(private.domain, {c for clique in self._cliques() for c in clique})
            private = replace(private, domain=private.domain.without_derived())
        if in_memory:
            codes, ids, domain = self._encode(private)
        else:
            columns = None
            if private.codes is None and not isinstance(private.source, CountEngine):
                used = check_cliques(private.domain, self._cliques())  # unknown or continuous columns fail here
                modelled = {c for clique in used for c in clique}
                columns = [n for n in private.domain.names if n in modelled]  # the codebook's order
            engine = private.engine(columns)
            domain = engine.domain
        cliques = check_cliques(domain, self._cliques())
        sampler = self.noise_sampler()
        data = FitData(domain, cliques, codes=codes, ids=ids) if in_memory else FitData(domain, cliques, engine=engine)
        self.model_, self.marginals_, self.ledger_ = fit.run(data, self._setting(), sampler=sampler, budget=budget)
        self.composition_ = fit.accountant.name
        fitted = self.model_ if self.model_ is not None else self.marginals_  # a custom method may return none
        self.is_exact_ = is_exact(fitted.domain, fitted.cliques)
        self._caveat(domain)
        return self

    def privacy_plan(self, domain, n_rows: int | None) -> PrivacyPlan:
        """The charges :meth:`fit` will make on data of this public ``domain``, with the
        relation and the composition they are read under (:attr:`composition_`); reads no data.

        ``n_rows`` (the public number of privacy units: rows, or individuals with
        ``individual=``) is needed by PSGD under replace-one and ignored otherwise (under
        add/remove it is private and the plan does not need it: None is accepted).

        >>> PrivateMRF(epsilon=1.0, cliques="a,b").privacy_plan(Domain.of(a=2, b=3), None).epsilon()
        1.0
        """
        if (unit := self._person(domain)) is not None:
            return plan_per_person(self, unit, domain, n_rows)
        domain = resolve_domain(None, domain)
        self._check_parameters(len(self._cliques()))
        check_not_derived(domain, {c for clique in self._cliques() for c in clique})
        cliques = check_cliques(domain.without_derived(), self._cliques())
        fit = self._fit()
        ledger = fit.plan(domain, cliques, self._setting(), n_rows)
        return PrivacyPlan.of_ledger(ledger, Neighbours.parse(self.neighbours), fit.accountant, self.delta)

    def _fit(self) -> MRFFit:
        """The fit ``method`` names (:data:`privgraph.mrf.fits.FITS`), or a custom function's."""
        return fit_of(self.method)

    def _setting(self) -> Setting:
        """The public parameters the fit reads (:class:`privgraph.mrf.fits.Setting`)."""
        return Setting(epsilon=self.epsilon, delta=self.delta, neighbours=self.neighbours,
                       relation=Neighbours.parse(self.neighbours), noise=self.noise, ties=self.ties,
                       individual=self.individual, null=self.null, unit=self._unit(),
                       options=dict(self.options or {}))

    def _cliques(self):
        if self.cliques is None:
            raise InvalidInput("cliques must be given: a sequence of column-name sequences, or 'a,b;b,c'")
        return parse_cliques(self.cliques) if isinstance(self.cliques, str) else self.cliques

    def _person(self, domain):
        """The person unit (the codebook's ``"id"`` and ``max_rows_per_person``), or None."""
        unit = person_unit(domain, self.max_rows_per_person, self.neighbours)
        if unit is not None and self.individual is not None:
            raise InvalidInput(f"individual={self.individual!r} (normalised tables) and max_rows_per_person (a bound "
                               "on each person's rows) are two ways to make the person the unit: give one")
        return unit

    def _unit(self) -> str:
        return "record" if self.individual is None else f"individual ({self.individual})"

    def _caveat(self, domain: Domain) -> None:
        if not domain.public:
            self.ledger_ = self.ledger_.with_caveat(NOT_PRIVATE_DOMAIN)

    def _open(self, data, domain, infer_domain: bool, neighbours, invalid: str, in_memory: bool) -> PrivateData:
        """The fit's data and domain through the front door (:func:`~privgraph.data.open_private`),
        once: in memory (a file read as text, with the individual column) or to be counted."""
        if in_memory and isinstance(data, pd.DataFrame):
            self._check_individual(data)  # before the domain is looked for
        what = f"data file {str(data)!r}" if in_memory and isinstance(data, (str, os.PathLike)) else "the data"
        return open_private(data, domain, neighbours=neighbours, invalid=invalid, infer_domain=infer_domain,
                            what=what, in_memory=in_memory, extra=[self.individual] if self.individual else (),
                            codes=True)

    def _check_individual(self, frame) -> None:
        if self.individual and self.individual not in frame.columns:
            raise UnknownName(f"individual column {self.individual!r} not in the data {list(frame.columns)}")

    def _encode(self, private: PrivateData):
        """(codes, individual ids or None, discrete domain) of an in-memory handle."""
        if private.codes is not None:
            if self.individual:
                raise InvalidInput("individual= needs a DataFrame holding the individual column")
            return private.codes, None, private.domain
        self._check_individual(private.frame)
        domain = private.domain
        check_cliques(domain, self._cliques())  # names continuous columns before dropping them
        discrete = check_countable(domain.project(  # bounds-only continuous columns: their default bins
            [n for n in domain.names if n in domain.discrete_names or domain.bounds_of(n) is not None]))
        codes, kept = private.encoded(discrete, drop=[self.individual] if self.individual else ())
        ids = private.frame[self.individual].to_numpy()[kept] if self.individual else None
        return codes, ids, discrete

    def _check_parameters(self, n_cliques: int) -> None:
        """The rules across parameters (each parameter is checked by its declaration first:
        :meth:`~privgraph.estimator.PrivateEstimator.check_params`)."""
        fit = self._fit()
        if fit.needs_delta(self.noise) and not self.delta:
            raise InvalidInput(f"method {self.method!r} with {self.noise} noise needs delta > 0")
        fit.check(self._setting())
        if self.ties is not None and len(self.ties) != n_cliques:
            raise InvalidInput(f"ties has {len(self.ties)} labels for {n_cliques} cliques")

    def marginal(self, columns: Sequence[str], *, max_cells: int | None = None) -> np.ndarray:
        """The fitted model's probability table over ``columns`` (exact inference on the
        junction tree of the model with the query's clique; ``max_cells``: its limit, None:
        :data:`~privgraph.mrf.inference.MAX_TREE_CELLS`). Refused, naming the columns, when
        that tree would pass the limit (never an approximate answer)."""
        model = self.model_
        (query,) = check_cliques(model.domain, [columns])
        with_query = MarkovRandomField.of(
            model.domain, model.cliques + (query,),
            list(model.potentials) + [np.zeros(model.domain.project(query).shape)],
        )
        if not is_exact(model.domain, with_query.cliques, max_cells):
            raise InvalidInput(f"the marginal over {list(query)} needs a junction tree above the exact-inference "
                               "limit; ask for fewer or more closely related columns")
        return infer(with_query, max_cells=max_cells).marginals[-1]

    def sample(self, n: int, *, random_state=None, method: str = "sample", max_cells: int | None = None) -> pd.DataFrame:
        """``n`` synthetic records over :meth:`modelled_columns` (the clique columns in the
        codebook's order, with each derived column whose sources they hold, computed by its rule,
        :mod:`privgraph.data.derived`; level labels; a binned continuous column's values drawn
        uniformly within their bins, from the same generator), exact or Gibbs; ``method``:
        ``"sample"`` (i.i.d.) or ``"round"`` (controlled rounding; see
        :func:`~privgraph.mrf.sample_model`); ``max_cells``: the exact-sampling limit on the
        junction tree (None: :data:`~privgraph.mrf.inference.MAX_TREE_CELLS`)."""
        rng = np.random.default_rng(random_state if random_state is not None else self._seed())
        codes = self.sample_codes(n, rng=rng, method=method, max_cells=max_cells)
        records = decode_codes(self.model_.domain, codes, rng=rng)[self.modelled_columns()]  # binned: within each bin
        if self.derived_domain_ is None:
            return records
        return add_derived(records, self.derived_domain_)  # post-processing: each whose sources are modelled

    def modelled_columns(self) -> list[str]:
        """The columns of some clique, in the codebook's order: the columns :meth:`sample`
        writes. A column in no clique has no released table, so nothing about it is modelled
        and it is left out (drawing it anyway would invent a distribution)."""
        modelled = {v for clique in self.model_.cliques for v in clique}
        return [n for n in self.model_.domain.names if n in modelled]

    def sample_codes(self, n: int, *, rng: np.random.Generator, method: str = "sample",
                     max_cells: int | None = None) -> np.ndarray:
        """``n`` synthetic records as codes of the model's domain (n x d; :meth:`sample` decodes them)."""
        self.sampling_ = sampling_path(self.model_, method, max_cells)
        return sample_model(self.model_, n, rng=rng, method=method, max_cells=max_cells)

    def _seed(self):
        return self.random_state if isinstance(self.random_state, (int, np.integer)) else None

    def to_uai(self) -> str:
        r"""The fitted model in the UAI ``MARKOV`` format (read by pgmpy's ``UAIReader`` and
        the UAI inference tools): variables in domain order, one factor per clique, each
        factor's values exp(log-potential) scaled so its largest is 1 (a factor's scale does
        not change the distribution), each written exactly (shortest round-trip digits) in
        positional notation. The ledger is not part of the format; it travels in the
        JSON export.

        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"a": rng.integers(0, 2, 300), "b": rng.integers(0, 3, 300)})
        >>> est = PrivateMRF(epsilon=1.0, cliques="a,b", random_state=0).fit(df, domain=Domain.of(a=2, b=3))
        >>> print("\n".join(est.to_uai().splitlines()[:5]))
        MARKOV
        2
        2 3
        1
        2 0 1
        """
        d, model = self.model_.domain, self.model_
        lines = ["MARKOV", str(len(d.names)), " ".join(map(str, d.sizes)), str(len(model.cliques))]
        lines += [f"{len(c)} " + " ".join(str(d.index(v)) for v in c) for c in model.cliques]
        for potential in model.potentials:
            values = np.exp(np.asarray(potential, dtype=np.float64) - np.max(potential)).ravel()  # last axis fastest
            lines += ["", str(values.size), " ".join(np.format_float_positional(v, unique=True, trim="-")
                                                     for v in values)]  # exact, without exponents (UAI readers want digits)
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        """The fitted model, its structure and its ledger as JSON (the CLI's ``--out``)."""
        d = self.model_.domain
        return json.dumps({
            "domain": {"names": list(d.names), "sizes": list(d.sizes), "levels": [list(map(str, lv)) for lv in d.levels]},
            "cliques": [list(c) for c in self.model_.cliques],
            "log_potentials": [p.tolist() for p in self.model_.potentials],
            "method": self.method if isinstance(self.method, str) else getattr(self.method, "__name__", "custom"),
            "ledger": self.ledger_.rows(),
            "caveats": list(self.ledger_.caveats),
        })

