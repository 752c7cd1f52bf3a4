"""``PrivPC``: the PC family as a scikit-learn-style estimator.

``PrivPC(epsilon=1.0, delta=1e-6, alpha=0.05, ci_test="kendall", method="priv-pc").fit(X)``
finds the skeleton with the chosen method (an object of the registry
:data:`privgraph.causal.methods.METHODS`: a decider of :mod:`privgraph.causal.deciders`, or
Gauss-PC's or EM-PC's own loop), orients it (:func:`privgraph.graphs.orient`, post-processing, no budget), and
keeps the ledger. Parameters are stored verbatim and checked once by their declarations
(:data:`privgraph.declarations.PRIVPC`) before :meth:`PrivPC.fit`, its plan and its predictions, so
``sklearn.base.clone`` works (``get_params``/``set_params``, no sklearn import).

Privacy: replace-one neighbours, n public. ``random_state=None`` draws noise and
sub-samples from the :class:`~privgraph.privacy.SecureSampler`; an integer selects a
:class:`~privgraph.privacy.SeededSampler`, which is reproducible and therefore **not
private** (tests and experiments only). Everything is checked before any budget is spent.
"""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from privgraph.causal.deciders import BudgetTooSmall, spent
from privgraph.causal.direction import orient as direction_orient
from privgraph.causal.direction.orient import orient_by_direction, pair_records
from privgraph.causal.fisher_pc import (
    FisherZDecider, covariance_from_moments, fisher_z_plan, release_accountant, release_covariance,
)
from privgraph.causal.power import Detectable, fisher_z_detectable, method_detectable, rank_detectable
from privgraph.causal.rank_pc import (
    RANK, RankRecords, rank_correlation, rank_plan, rank_records,
    rank_reduction, resize_records,
)
from privgraph.causal.methods import (
    AUTO, FISHER_Z_METHODS, METHODS, LevelNoise, PublicShape, Search, SkeletonMethod, resolve_method,
)
from privgraph.causal.skeleton import stable_pc_skeleton
from privgraph.data.domain import check_countable
from privgraph.data.files import read_table
from privgraph.data.frontdoor import (
    DomainRequired, check_invalid, clipped_values, encode_public, how_to_get_a_domain,
)
from privgraph.data.moments import moment_scaling, moment_sums
from privgraph.data.persons import fit_per_person, person_unit, plan_per_person
from privgraph.data.relation import is_duckdb_relation, is_spark_frame
from privgraph.data.subset import resize_engine
from privgraph.data.tables import MAX_JOINT_CELLS, Tables
from privgraph.data import NOT_PRIVATE_DOMAIN, CountEngine, Domain, Kind, PrivateData, open_private, resolve_domain
from privgraph.declarations import PRIVPC
from privgraph.estimator import PrivateEstimator
from privgraph.graphs import orient
from privgraph.privacy import Budget, Charge, Ledger, Neighbours, PrivacyPlan, resolve_sampler
from privgraph.privacy.add_remove import AddRemove
from privgraph.privacy.composition import Accountant
from privgraph.stats import ChiSquareTest, GTest, KendallTest, SpearmanTest
from privgraph.validation import InvalidInput

#: CI tests by name.
CI_TESTS = {"kendall": KendallTest, "kendall-ties": partial(KendallTest, tie_corrected=True),
            "spearman": SpearmanTest, "g": GTest, "g-test": GTest, "chi-square": ChiSquareTest,
            "chisq": ChiSquareTest}

#: The test on one private covariance (:mod:`privgraph.causal.fisher_pc`): not a table test,
#: so not in CI_TESTS; it runs with the methods of :data:`~privgraph.causal.methods.FISHER_Z_METHODS`.
FISHER_Z = "fisher-z"

AR = Neighbours.ADD_REMOVE

#: The least public size of the add/remove reduction (the rank tests need 3 rows).
MIN_ROWS = 3

#: How the released skeleton is oriented (``orient``).
ORIENTS = ("cpdag", "direction")


class PrivPC(PrivateEstimator):
    """Private PC (Priv-PC and its baselines) with a total budget (epsilon, delta).

    Parameters
    ----------
    epsilon, delta : float
        The total budget; the run never spends more (``delta`` pays only for composition,
        and for the sub-sampled Gaussian).
    alpha : float
        Level of each conditional-independence test, in (0, 1).
    ci_test : str
        "auto" (default): Kendall's tau when every column is ordinal or binary, else the G
        test (a rank test on a nominal column with three or more levels would test an
        arbitrary order); or "kendall", "kendall-ties" (Kendall's z against a threshold
        corrected for ties: calibrated and far more powerful on categorical columns with
        rare levels, see :class:`~privgraph.stats.KendallTest`), "spearman", "g",
        "chi-square" (the last two through subsample-and-aggregate block votes when
        private), or "fisher-z" (Fisher's z on partial correlations from ONE private
        release of the covariance of the columns scaled by their public bounds; PC then
        runs on it for free: :mod:`privgraph.causal.fisher_pc`; "auto" takes it when every
        column is continuous). See :func:`choose_ci_test`.
    max_cond_size : int or None
        Largest conditioning set; None: ``min(d - 2, max(0, floor(log2 n) - 5))``
        (the reference code's rule).
    method : str
        "auto" (default: "tables-pc" on :data:`~privgraph.causal.methods.AUTO_MIN_COLUMNS` columns
        or more when delta > 0, else "priv-pc"; public facts only, the choice in ``method_``),
        "priv-pc", "svt-pc", "em-pc", "laplace-pc", "sg-pc", "gauss-pc", "tables-pc"
        (:mod:`privgraph.causal.table_pc`: Gaussian releases of the tables of levels 0-2, a
        noise-aware chi-square test of each; ``ci_test`` is not used) or "pc" (non-private).
        "gauss-pc" (:mod:`privgraph.causal.gauss_pc`) releases each level of stable PC as one
        Gaussian vector, composed in zCDP (needs delta > 0; ``max_rounds`` does not apply):
        its noise grows with the square root of the number of pairs, not with the number.
    random_state : None, int, numpy Generator or NoiseSampler
        None: secure noise. Anything else: seeded noise, reproducible and NOT private (a
        UserWarning says so).
    max_rounds : int or None
        Cap of rounds (or tests) fixed in advance; None: ``ROUNDS_PER_PAIR[method]`` per
        pair of variables.
    forbidden, required : sequences of pairs
        Background knowledge: forbidden edges are never tested, required ones kept.
    degenerate : "dependent" (default) or "independent"
        What a test whose strata all carry no information (zero degrees of freedom, no
        variance) decides: "dependent" keeps the edge (no information is not
        independence; the private deciders include the rule in the margin they release,
        with sensitivity still 1); "independent" is causal-learn's convention.
    orient : "cpdag" or "direction"
        "cpdag" (default): colliders and Meek's rules only (no budget). "direction": then
        orient the remaining undirected edges between ordinal or binary columns with the
        private causal-direction test on their codes (edges touching a nominal column, or a
        share too small for the rows, are left undirected: decided from public facts, after
        the structure's spend, never an error; from a file or any count engine each pair's
        records come from its count table, at most ``MAX_PAIR_ROWS`` of them: never refused
        on a count)
        (:func:`privgraph.causal.direction.orient.orient_by_direction`), so the result is
        closer to a DAG.
    orient_share : float
        With ``orient="direction"``, the share of epsilon the orientation gets (the
        structure search gets the rest). The two stages compose by basic composition: the
        structure's (1 - share) epsilon (by its own composition over its cap, at delta) plus
        at most share x epsilon for the orientation tests (split evenly over the released
        CPDAG's undirected edges, basic composition).
    neighbours : "replace_one" (default) or "add_remove"
        The relation of the guarantee. Replace-one: one row changed, the number of rows n
        public (the tests' margins are calibrated with it). Add/remove: one row added or
        removed, n private: the number of rows is released first with
        :data:`~privgraph.privacy.resize.SIZE_SHARE` of the budget, the data is resized
        secretly to a public m a little below it (a uniform subset of m rows), and the
        replace-one method runs on those m rows with the rest of the budget
        (:mod:`privgraph.privacy.resize` has the reduction and its proof). Not for
        "em-pc" (no plan to reserve ahead), "sg-pc" (its sub-sampling accountant is
        replace-one's) or ``orient="direction"``.

    record_norm : float or None
        With ``ci_test="fisher-z"`` (private): the L2 norm each record's scaled vector (every
        column in ``[-1/2, 1/2]``) is shrunk to before the covariance's sums; None:
        ``sqrt(d) / 4``, a quarter of the box's (see :mod:`privgraph.privacy.moments`);
        ``math.inf``: the box alone.
    max_rows_per_person : int or None
        With a codebook naming the person column (``"id"``): the most rows one person may
        contribute (public). Each person keeps at most this many rows (a secret uniform
        choice), this fit runs under add/remove at the row target, and ``neighbours`` and
        (epsilon, delta) are the person's (:mod:`privgraph.privacy.person`); ``ledger_.unit``
        names the unit.

    Attributes
    ----------
    graph_ : CPDAG
    skeleton_ : networkx.Graph
    sepsets_ : dict
    ledger_ : Ledger
        What was reserved: the whole cap.
    epsilon_spent_ : float
        ``ledger_`` composed by ``composition_``; never above ``epsilon``.
    n_tests_ : int
    complete_ : bool
        False if the cap was used up before PC finished (remaining edges kept).
    rounds_, rounds_used_ : int or None
        The cap of rounds (tests) reserved and how many were used (None for EM-PC and PC).
    n_rows_ : int
        The rows the tests ran on: n (public) under replace-one; under add/remove m, the
        released size less its noise's 1e-6 tail (public: post-processing).
    size_estimate_ : float
        Add/remove only: the released size (n with Laplace noise).
    detectable_ : Detectable or None
        The smallest effect the level-0 tests could detect, predicted from public facts before
        any noise (:meth:`detectable`, :mod:`privgraph.causal.power`); None where there is no
        prediction (non-private, EM-PC, the sub-sampled Gaussian).
    is_informative_ : bool
        False when the tests could not detect an effect of plausible size: the graph's missing
        edges are then no evidence of independence (decided from ``detectable_``, never from the
        result; a :class:`~privgraph.causal.power.NoPowerWarning` said so before the spend).

    Examples
    --------
    >>> from privgraph.datasets import load_network, sample_frame
    >>> net = load_network("cancer")
    >>> X = sample_frame(net, 50_000, np.random.default_rng(0), labels=True)
    >>> est = PrivPC(epsilon=5.0, random_state=0).fit(X, domain=net.domain)
    >>> round(est.epsilon_spent_, 6), est.composition_
    (5.0, 'optimal')
    >>> PrivPC(method="pc").fit(X, domain=net.domain).ledger_.charges
    ()
    >>> PrivPC().fit(X.astype(str))
    Traceback (most recent call last):
    ...
    privgraph.data.frontdoor.DomainRequired: X has no public domain: ...
    >>> ar = PrivPC(epsilon=5.0, neighbours="add_remove", random_state=0).fit(X, domain=net.domain)
    >>> ar.ledger_.neighbours == {Neighbours.ADD_REMOVE}, [c.mechanism for c in ar.ledger_][:2], 49_000 < ar.n_rows_ < 50_000
    (True, ['laplace', 'sieve'], True)
    """

    #: The parameters' declarations (the CLI's ``discover`` options are built from them).
    PARAMS = PRIVPC
    #: Its predictions (:meth:`test_noise`, :meth:`detectable`) read the parameters too: checked first.
    CHECKED_METHODS = ("fit", "privacy_plan", "test_noise", "detectable")

    def __init__(self, *, epsilon=1.0, delta=1e-6, neighbours="replace_one", random_state=None, alpha=0.05,
                 ci_test="auto", max_cond_size=None, method="auto", max_rounds=None, forbidden=(), required=(),
                 orient="cpdag", orient_share=0.2, degenerate="dependent", record_norm=None,
                 max_rows_per_person=None):
        self.epsilon = epsilon
        self.delta = delta
        self.neighbours = neighbours
        self.random_state = random_state
        self.alpha = alpha
        self.ci_test = ci_test
        self.max_cond_size = max_cond_size
        self.method = method
        self.max_rounds = max_rounds
        self.forbidden = forbidden
        self.required = required
        self.orient = orient
        self.orient_share = orient_share
        self.degenerate = degenerate
        self.record_norm = record_norm
        self.max_rows_per_person = max_rows_per_person

    def fit(self, X, y=None, *, names=None, domain=None, infer_domain=False, budget: Budget | None = None,
            on_level=None) -> "PrivPC":
        """Learn the CPDAG of ``X``: a DataFrame, a 2-D array with ``names``, a CSV/Parquet
        path, or a count engine. ``on_level(level, edges)`` reports progress.

        ``domain`` is the public domain (a :class:`~privgraph.data.Domain`, a codebook path
        or dict); without one ``X`` must carry it (Categorical columns, or a count engine)
        or the fit refuses before reading a value, unless ``infer_domain=True`` (then the
        ledger says the domain is not private). Missing and out-of-domain values are
        recoded to the column's first level (replace-one keeps n public; see
        :mod:`privgraph.data.frontdoor`). ``budget``: an outside :class:`Budget` that this
        fit's charges are reserved on (so several fits share it); by default a budget of
        exactly (epsilon, delta). With the codebook's ``"id"`` and ``max_rows_per_person`` the
        person is the unit (:mod:`privgraph.privacy.person`: the rows truncated, this fit run
        at the row target under add/remove, the guarantee per person)."""
        if (unit := person_unit(domain, self.max_rows_per_person, self.neighbours)) is not None:
            return fit_per_person(self, unit, X, domain=domain, budget=budget, on_level=on_level)
        if self.ci_test == RANK and (isinstance(X, RankRecords) or not isinstance(X, CountEngine)):
            private = self._check_rank()  # the parameters first, before the domain is looked for
            if isinstance(X, RankRecords):  # the add/remove reduction's resized records: opened already
                return self._fit_rank(X, names=names, domain=X.domain if domain is None else resolve_domain(None, domain),
                                      budget=budget, on_level=on_level, private=private)
            data = self._open(X, names, domain, infer_domain, records=True)
            return self._fit_rank(data.source, names=names, domain=data.domain, budget=budget, on_level=on_level,
                                  private=private)
        if self.ci_test == FISHER_Z and not isinstance(X, CountEngine):
            self._check_fisher_z()  # the parameters first, before the domain is looked for
            data = self._open(X, names, domain, infer_domain, records=True)
            return self._fit_fisher_z(data.source, names=names, domain=data.domain, budget=budget, on_level=on_level)
        relation = self._checked()
        records = self.ci_test == "auto" and not isinstance(X, CountEngine)
        data = self._open(X, names, domain, infer_domain, records=records)  # the one front door: once
        X = data.source  # the records as given (a command's handle: its file)
        if records:
            public = data.domain
            if is_fisher_z("auto", public, self.orient):
                return self._fit_fisher_z(X, names=names, domain=public, budget=budget, on_level=on_level)
            if one_release_test("auto", public, self.orient) == RANK:
                return self._fit_rank(X, names=names, domain=public, budget=budget, on_level=on_level,
                                      private=self._check_rank())
        if relation is AR and self._method().is_private:
            return self._fit_add_remove(data, budget=budget, on_level=on_level)
        engine = discrete_engine(data.under(Neighbours.REPLACE_ONE))
        self._plan_before_reading(engine)
        tables = Tables.from_engine(engine)
        check_data(tables)
        method, test = self._method(tables.domain), self.ci_test_for(tables.domain)
        sampler = self.noise_sampler() if method.is_private else resolve_sampler(None)
        accountant = self._accountant(tables.domain)
        self.composition_ = accountant.name
        raw = None
        if self.orient == "direction":  # a table with continuous columns: their own values where X has them
            has_values = isinstance(X, (str, Path, np.ndarray)) or hasattr(X, "iloc")  # a file, an array, pandas
            if has_values and any(k is Kind.CONTINUOUS for k in tables.domain.kinds):
                raw = orientation_values(X, names, tables.domain)
            rows = None if raw is not None else getattr(tables.engine, "codes", None)  # in memory: the records
        self._say_power(lambda: self.detectable(tables.domain, tables.n))  # n public: before any noise
        outer = budget
        if method.is_private and budget is None:
            budget = Budget(self._structure_epsilon(), self.delta, composition=accountant)
        sk, ledger, self.rounds_, self.rounds_used_ = method.run(tables, test, self._search(tables), sampler=sampler,
                                                                 budget=budget, on_level=on_level)
        self.skeleton_, self.sepsets_, self.n_tests_, self.complete_ = sk.graph, sk.sepsets, sk.n_tests, sk.complete
        self.graph_ = orient(sk.graph, sk.sepsets, nodes=tables.names)
        self.epsilon_spent_ = spent(ledger, accountant, self.delta)
        if self.orient == "direction":
            self.graph_, oriented = self._orient_by_direction(tables.domain, rows, sampler, outer, raw=raw,
                                                              tables=tables)
            ledger = ledger + oriented
            self.epsilon_spent_ += oriented.total(direction_orient.ACCOUNTANT).epsilon
        if not tables.domain.public:
            ledger = ledger.with_caveat(NOT_PRIVATE_DOMAIN)
        self.ledger_, self.sampler_, self.n_rows_ = ledger, sampler, tables.n
        self.ci_test_ = getattr(method, "test_name", None) or (test.name if hasattr(test, "name") else type(test).__name__)
        self.method_ = method.name
        return self

    def _fit_fisher_z(self, X, *, names, domain: Domain, budget, on_level) -> "PrivPC":
        """Fisher-z PC: the moments in one pass, ONE private release of them (the only charge),
        then stable PC and the orientation as post-processing (:mod:`privgraph.causal.fisher_pc`)."""
        neighbours = self._check_fisher_z()
        private = self._method().is_private
        if len(domain.names) < 2:
            raise InvalidInput(f"causal discovery needs at least 2 variables, got {list(domain.names)}")
        moment_scaling(domain, need_bounds=private)  # refuses nominal columns (and, private, unbounded ones) unread
        d = len(domain.names)
        norm = self._record_norm(d) if private else None
        moments = moment_sums(X, domain, invalid=check_invalid(None, neighbours), names=names, norm=norm)
        if neighbours is Neighbours.REPLACE_ONE and moments.count < d:  # n is public under replace-one
            raise InvalidInput(f"{int(moments.count)} rows are fewer than the {d} variables")
        if neighbours is Neighbours.REPLACE_ONE:  # n public: said before any noise
            self._say_power(lambda: self.detectable(domain, int(moments.count)))
        sampler = self.noise_sampler() if private else resolve_sampler(None)
        outer = budget
        if private:
            budget = budget if budget is not None else Budget(self._structure_epsilon(), self.delta,
                                                              composition=release_accountant(private))
            cov, ledger = release_covariance(moments, domain.names, epsilon=self._structure_epsilon(),
                                             delta=self.delta, neighbours=neighbours, sampler=sampler, budget=budget)
        else:
            cov, ledger = covariance_from_moments(moments, domain.names), Ledger()
        if neighbours is AR:  # n private: predicted at the released n (post-processing)
            self._say_power(lambda: self.detectable(domain, int(round(cov.n))))
        self._pc_on_released(cov, ledger, domain, on_level, private)
        if self.orient == "direction":  # on the records' own values: raw continuous ones, ordinal codes
            self.graph_, oriented = self._orient_by_direction(domain, None, sampler, outer,
                                                              raw=orientation_values(X, names, domain))
            ledger = ledger + oriented
            self.epsilon_spent_ += oriented.total(direction_orient.ACCOUNTANT).epsilon
        self.ledger_ = ledger if domain.public else ledger.with_caveat(NOT_PRIVATE_DOMAIN)
        self.sampler_, self.n_rows_, self.covariance_ = sampler, int(round(cov.n)), cov
        self.rounds_, self.rounds_used_, self.ci_test_ = None, None, FISHER_Z
        return self

    def _pc_on_released(self, cov, ledger: Ledger, domain: Domain, on_level, private: bool) -> None:
        """Stable PC with the noise-aware Fisher-z test on a released correlation ``cov`` and
        Meek's orientation (post-processing: nothing charged); sets the fitted structure and what
        ``ledger`` spent. Shared by the Fisher-z and rank fits."""
        sk = stable_pc_skeleton(domain.names, FisherZDecider(cov, self.alpha), max_cond_size=self.max_cond_size,
                                forbidden=self.forbidden, required=self.required, on_level=on_level)
        self.skeleton_, self.sepsets_, self.n_tests_, self.complete_ = sk.graph, sk.sepsets, sk.n_tests, sk.complete
        self.graph_ = orient(sk.graph, sk.sepsets, nodes=domain.names)
        self.composition_ = release_accountant(private).name
        self.epsilon_spent_ = spent(ledger, release_accountant(private), self.delta)

    def _check_one_release(self, released: str) -> bool:
        """The checks every test on ONE Gaussian release (Fisher-z, rank) shares (parameters only);
        whether the fit is private. ``released`` names what is released, in the errors."""
        if self.method not in (AUTO, *FISHER_Z_METHODS):
            raise InvalidInput(f"ci_test={self.ci_test!r} releases {released} once and runs PC on it for free: "
                               f"method={self.method!r} does not apply; use method='priv-pc' (the default) or 'pc' "
                               "(not private)")
        private = self._method().is_private
        if private:
            if self.delta <= 0:
                raise InvalidInput(f"ci_test={self.ci_test!r} releases {released} with the Gaussian mechanism and "
                                   f"needs delta > 0, got delta={self.delta!r}")
        return private

    def _check_fisher_z(self) -> Neighbours:
        """The checks of a Fisher-z fit (parameters only), and its relation."""
        self._check_one_release("the covariance")
        if self.orient == "direction" and Neighbours.parse(self.neighbours) is not Neighbours.REPLACE_ONE:
            raise InvalidInput("ci_test='fisher-z' with orient='direction' runs the direction tests on the records "
                               "under replace-one (n public): use neighbours='replace_one', or orient='cpdag'")
        return Neighbours.parse(self.neighbours)

    def _fit_rank(self, X, *, names, domain: Domain, budget, on_level, private: bool) -> "PrivPC":
        """Rank PC: Kendall's tau of every pair, ONE private release of it (the only charge), then
        stable PC on its Gaussian-copula correlation as post-processing (:mod:`privgraph.causal.rank_pc`)."""
        if private and Neighbours.parse(self.neighbours) is AR:
            return self._fit_rank_add_remove(X, names=names, domain=domain, budget=budget, on_level=on_level)
        sampler = self.noise_sampler() if private else resolve_sampler(None)
        if private and budget is None:
            budget = Budget(self._structure_epsilon(), self.delta, composition=release_accountant(private))
        if private:  # n public (replace-one): said before any noise
            X = rank_records(X, domain, names)
        self._say_power(lambda: self.detectable(domain, len(X.values)) if private else None)
        cov, ledger, n = rank_correlation(X, domain, names=names, epsilon=self._structure_epsilon(),
                                          delta=self.delta, sampler=sampler, budget=budget, private=private)
        self._pc_on_released(cov, ledger, domain, on_level, private)
        self.ledger_ = ledger if domain.public else ledger.with_caveat(NOT_PRIVATE_DOMAIN)
        self.sampler_, self.n_rows_, self.covariance_ = sampler, n, cov
        self.rounds_, self.rounds_used_, self.ci_test_ = None, None, RANK
        return self

    def _fit_rank_add_remove(self, X, *, names, domain: Domain, budget, on_level) -> "PrivPC":
        """Add/remove rank PC: the records' rank values, their number released, the values resized
        secretly to the public m it gives, the replace-one rank fit on them with the rest
        (:func:`~privgraph.causal.rank_pc.rank_reduction`; the proof is in :mod:`privgraph.causal.rank_pc`)."""
        wrapper = rank_reduction(self.epsilon, self.delta, domain)
        inner, self.ledger_, m, n_hat = wrapper.fit(self._replace_one, rank_records(X, domain, names),
                                                    resize=resize_records, sampler=self.noise_sampler(),
                                                    budget=budget, domain=domain, on_level=on_level)
        for name in ("graph_", "skeleton_", "sepsets_", "n_tests_", "complete_", "rounds_", "rounds_used_",
                     "ci_test_", "sampler_", "covariance_", "detectable_", "is_informative_"):
            setattr(self, name, getattr(inner, name))
        self.composition_, self.n_rows_, self.size_estimate_ = wrapper.composition, m, n_hat
        self.epsilon_spent_ = spent(self.ledger_, wrapper.composition, self.delta)
        return self

    def _check_rank(self) -> bool:
        """The checks of a rank fit (parameters only); whether it is private."""
        private = self._check_one_release("Kendall's tau")
        if self.orient != "cpdag":
            raise InvalidInput("ci_test='rank' orients by colliders and Meek's rules only: use orient='cpdag'")
        return private

    def _record_norm(self, d: int) -> float | None:
        if self.record_norm is None:
            return math.sqrt(d) / 4
        return None if math.isinf(self.record_norm) else float(self.record_norm)

    def _plan_before_reading(self, engine) -> None:
        """Refuse a budget too small from public facts before any row of a wide table is read.

        A table too wide to count jointly is read as its distinct rows (one grouped query
        over every column: seconds at 1,000 columns) before the decider is made, and the
        decider's refusal needs only the domain and n (public under replace-one, one count).
        So its plan is made first; a plan that is affordable is remembered by the decider.
        """
        method = self._method(engine.domain)
        if not (method.is_private and method.plans_ahead) or engine.domain.cells(engine.domain.names) <= MAX_JOINT_CELLS:
            return
        self.privacy_plan(engine.domain, int(engine.counts([])))

    def _open(self, X, names, domain, infer_domain: bool, *, records: bool) -> PrivateData:
        """``X`` and its public domain through the front door (:func:`~privgraph.data.open_private`),
        once per fit, under the estimator's relation. ``records``: a fit that may read the
        records' values (rank, Fisher-z) needs a domain for a relation or Spark frame given."""
        if records and domain is None and (is_duckdb_relation(X) or is_spark_frame(X)):  # not a handle: it has one
            raise DomainRequired(how_to_get_a_domain("X"))
        return open_private(X, domain, names=names, neighbours=Neighbours.parse(self.neighbours),
                            infer_domain=infer_domain, what="X")

    def _fit_add_remove(self, data: PrivateData, *, budget, on_level) -> "PrivPC":
        """Add/remove: the size released, then the replace-one method on the data resized to
        the public m it gives, with the rest of the budget (:class:`~privgraph.privacy.add_remove.AddRemove`)."""
        engine = discrete_engine(data.under(AR))
        check_columns(engine.domain)
        wrapper = self._add_remove(engine.domain)
        inner, self.ledger_, m, n_hat = wrapper.fit(self._replace_one, engine, resize=resize_engine,
                                                    sampler=self.noise_sampler(), budget=budget, on_level=on_level)
        for name in ("graph_", "skeleton_", "sepsets_", "n_tests_", "complete_", "rounds_", "rounds_used_",
                     "ci_test_", "sampler_", "detectable_", "is_informative_"):
            setattr(self, name, getattr(inner, name))
        self.composition_, self.n_rows_, self.size_estimate_ = wrapper.composition, m, n_hat
        self.epsilon_spent_ = spent(self.ledger_, wrapper.composition, self.delta)
        return self

    def _add_remove(self, domain: Domain) -> AddRemove:
        """The add/remove reduction of this estimator's replace-one form over ``domain``."""
        # At least 3 rows: the rank tests' sensitivities are undefined below 3 (a released size of
        # 1 or 2 divided by zero in their margins); public, so the plan and the fit agree.
        return AddRemove(self.epsilon, self.delta, self._accountant(domain), minimum=max(MIN_ROWS, len(domain.names)))

    def _replace_one(self, epsilon: float, sampler) -> "PrivPC":
        """This estimator under replace-one with ``epsilon``, drawing from ``sampler``."""
        params = self.get_params() | dict(epsilon=epsilon, neighbours="replace_one", random_state=sampler)
        return type(self)(**params)

    def privacy_plan(self, domain, n_rows: int) -> PrivacyPlan:
        """The charges :meth:`fit` will make on data of this public ``domain`` and ``n_rows``
        (public under replace-one), with the relation and the composition they are read
        under (:attr:`composition_`, at ``delta``); reads no data and draws no noise.

        >>> from privgraph.datasets import load_network
        >>> plan = PrivPC(epsilon=1.0).privacy_plan(load_network("asia").domain, 100_000)
        >>> [c.mechanism for c in plan], plan.charges[0].count
        (['sieve', 'examine'], 56)

        Under add/remove ``n_rows`` is a public guess: the size's charge, then the method's
        plan at the size m the guess would give (relabelled).

        >>> [c.mechanism for c in PrivPC(epsilon=1.0, neighbours="add_remove").privacy_plan(
        ...     load_network("asia").domain, 100_000)]
        ['laplace', 'sieve', 'examine']
        """
        if (unit := person_unit(domain, self.max_rows_per_person, self.neighbours)) is not None:
            return plan_per_person(self, unit, domain, n_rows)
        domain = resolve_domain(None, domain)
        ledger = self._plan_ledger(domain, n_rows)
        fisher_z = one_release_test(self.ci_test, domain, self.orient) is not None
        accountant = release_accountant(self._method().is_private) if fisher_z else self._accountant(domain)
        return PrivacyPlan.of_ledger(ledger, Neighbours.parse(self.neighbours), accountant, self.delta)

    def _plan_ledger(self, domain: Domain, n_rows: int) -> Ledger:
        """The charges of :meth:`privacy_plan` on a resolved ``domain``."""
        if one_release_test(self.ci_test, domain, self.orient) == RANK:
            if not self._check_rank():
                return Ledger()
            if Neighbours.parse(self.neighbours) is AR:  # the size's charge, then the plan at m, relabelled
                return rank_reduction(self.epsilon, self.delta, domain).plan(self._replace_one, domain, n_rows)
            return rank_plan(domain, int(n_rows), epsilon=self._structure_epsilon(), delta=self.delta,
                             neighbours=self.neighbours)
        if is_fisher_z(self.ci_test, domain, self.orient):
            neighbours = self._check_fisher_z()
            if not self._method().is_private:
                return Ledger()

            moment_scaling(domain)  # the same refusals as fit, before any data
            return fisher_z_plan(domain, int(n_rows), epsilon=self.epsilon, delta=self.delta, neighbours=neighbours,
                                 norm=self._record_norm(len(domain.names)))
        relation, method = self._checked(), self._method(domain)
        if not method.is_private:
            return Ledger()
        if relation is AR:
            return self._add_remove(domain).plan(self._replace_one, domain, n_rows)
        shape = self._public_shape(domain, n_rows)
        plan = method.plan(shape, self.ci_test_for(shape.domain), self._search(shape))
        if self.orient == "direction":  # a cap: the tests split it over the released CPDAG's undirected edges

            plan = plan + Ledger.of(Charge("direction orientation (at most)", self.epsilon * self.orient_share, 0.0,
                                           Neighbours.REPLACE_ONE, note="basic composition over the tests"))
        return plan

    @staticmethod
    def _public_shape(domain: Domain, n_rows: int) -> PublicShape:
        """What a plan sees of the data (its discrete columns' domain, n), checked as fit checks."""
        shape = PublicShape(domain.project(domain.discrete_names), int(n_rows))
        check_data(shape)
        return shape

    def ci_test_for(self, domain) -> object:
        """The CI test this estimator runs on ``domain`` (``ci_test`` resolved from the public
        kinds, :func:`choose_ci_test`); not for the Fisher-z path (no table test).

        >>> from privgraph.data import Domain, Kind
        >>> type(PrivPC().ci_test_for(Domain(("z", "y"), (3, 2), (Kind.CATEGORICAL, Kind.CATEGORICAL)))).__name__
        'GTest'
        """
        return choose_ci_test(self.ci_test, resolve_domain(None, domain), self.degenerate)

    def test_noise(self, domain, n_rows: int) -> LevelNoise:
        """The noise the skeleton method's tests will carry on data of this public ``domain``
        and ``n_rows`` (in margin units; :meth:`~privgraph.causal.methods.SkeletonMethod.noise`),
        with this estimator's CI test, budget and conditioning cap; public facts only, under
        replace-one (n public). Methods without a per-level prediction refuse.

        >>> from privgraph.datasets import load_network
        >>> noise = PrivPC(method="gauss-pc").test_noise(load_network("asia").domain, 100_000)
        >>> noise.first < noise.bearable
        True
        """
        domain = resolve_domain(None, domain)
        if self._checked() is AR:  # the replace-one method at the public size a guess of n gives
            m, rest = self._add_remove(domain).at_guess(n_rows)
            return self._replace_one(rest, None).test_noise(domain, m)
        shape = self._public_shape(domain, n_rows)
        return self._method(domain).noise(shape, self.ci_test_for(shape.domain), self._search(shape))

    def detectable(self, domain, n_rows: int) -> Detectable | None:
        """The smallest effect this estimator's level-0 tests can detect on data of this public
        ``domain`` and ``n_rows`` (:mod:`privgraph.causal.power`): public facts only, no data read.
        Under add/remove ``n_rows`` is a public guess (the table and rank tests are predicted at
        the size m it would give). None where there is no prediction.

        >>> from privgraph.datasets import load_network
        >>> PrivPC(epsilon=1.0).detectable(load_network("asia").domain, 100_000).is_informative
        True
        """
        domain = resolve_domain(None, domain)
        if one_release_test(self.ci_test, domain, self.orient) == RANK:
            if not self._check_rank():
                return None
            self._plan_ledger(domain, n_rows)  # its refusals first
            if Neighbours.parse(self.neighbours) is AR:
                m, rest = rank_reduction(self.epsilon, self.delta, domain).at_guess(n_rows)
                return self._replace_one(rest, None).detectable(domain, m)
            return rank_detectable(len(domain.names), int(n_rows), epsilon=self._structure_epsilon(),
                                   delta=self.delta, alpha=self.alpha)
        if is_fisher_z(self.ci_test, domain, self.orient):
            neighbours, d = self._check_fisher_z(), len(domain.names)
            if not self._method().is_private:
                return None
            self._plan_ledger(domain, n_rows)  # its refusals first
            return fisher_z_detectable(d, int(n_rows), epsilon=self._structure_epsilon(), delta=self.delta,
                                       neighbours=neighbours, norm_=self._record_norm(d), alpha=self.alpha)
        if self._checked() is AR:
            m, rest = self._add_remove(domain).at_guess(n_rows)
            return self._replace_one(rest, None).detectable(domain, m)
        shape = self._public_shape(domain, n_rows)
        return method_detectable(self._method(domain), shape, self.ci_test_for(shape.domain), self._search(shape))

    def _say_power(self, predict) -> None:
        """``detectable_`` and ``is_informative_`` from ``predict()`` (public facts only), and a
        :class:`~privgraph.causal.power.NoPowerWarning` when uninformative; called before any
        noise. A budget the fit is about to refuse gets no prediction (the refusal says more)."""
        try:
            self.detectable_ = predict()
        except (BudgetTooSmall, InvalidInput):
            self.detectable_ = None
        self.is_informative_ = self.detectable_ is None or self.detectable_.is_informative
        if self.detectable_ is not None:
            self.detectable_.warn()

    def _structure_epsilon(self) -> float:
        return self.epsilon * (1 - self.orient_share) if self.orient == "direction" else self.epsilon

    def _orient_by_direction(self, domain: Domain, rows, sampler, outer: Budget | None, raw=None, tables=None):
        """The orientation stage: its own basic-composition budget of share x epsilon, reserved
        as one stage on an outer budget first (so that budget refuses before any noise).
        ``rows``: the records' codes (an in-memory engine's); ``raw``: ``(values, bounds)`` of
        the records instead (:func:`orientation_values`); neither: each pair's records from its
        table in ``tables``, counted through the engine (a file out of core, any engine), at most
        :data:`~privgraph.causal.direction.orient.MAX_PAIR_ROWS` of them
        (:func:`~privgraph.causal.direction.orient.pair_records`). Which of the three runs
        depends on the input's type and the public domain only, never on a count."""
        share = self.epsilon * self.orient_share
        if outer is not None:
            outer.reserve(Charge("direction orientation (stage)", share, 0.0, Neighbours.REPLACE_ONE,
                                 note="split over the released CPDAG's undirected edges"))
        seed = self.random_state if isinstance(self.random_state, (int, np.integer)) else None
        n_rows = None
        if raw is not None:
            data, bounds = raw
        else:
            ordered = [n for n, s in zip(domain.names, domain.sizes) if domain.is_ordered(n) or s == 2]
            bounds = {n: (0.0, float(domain.size_of(n) - 1)) for n in ordered}
            if rows is not None:
                data = {n: rows[:, domain.index(n)].astype(float) for n in ordered}
            else:  # public: n and the cap; the subsample's draws are their own stream
                picks = np.random.default_rng(None if seed is None else (int(seed), 3))
                data = lambda a, b: pair_records(tables.table([a, b]), picks)  # noqa: E731
                n_rows = min(tables.n, direction_orient.MAX_PAIR_ROWS)
        return orient_by_direction(self.graph_, data, bounds=bounds, epsilon=share, sampler=sampler,
                                   rng=np.random.default_rng(None if seed is None else (int(seed), 2)),
                                   budget=Budget(share, 0.0, composition=direction_orient.ACCOUNTANT), untestable="skip",
                                   n_rows=n_rows)

    def _method(self, domain: Domain | None = None) -> SkeletonMethod:
        """The skeleton method ``method`` names (:data:`~privgraph.causal.methods.METHODS`); "auto"
        resolved from public facts on ``domain`` (:func:`~privgraph.causal.methods.resolve_method`;
        without a domain, the checks and relations "auto" has whichever it resolves to)."""
        return resolve_method(self.method, None if domain is None else len(domain.discrete_names), self.delta)

    def _accountant(self, domain: Domain | None = None) -> Accountant:
        """The skeleton method's accountant at ``delta`` (:meth:`SkeletonMethod.accountant`)."""
        return self._method(domain).accountant(self.delta)

    def _search(self, tables) -> Search:
        """The skeleton search's public parameters on ``tables`` (or a public shape)."""
        return Search(self._structure_epsilon(), self.delta, self.alpha, self._max_cond_size(tables),
                      self.max_rounds, self.forbidden, self.required)

    def _checked(self):
        method = self._method()
        if self.ci_test in (FISHER_Z, RANK):
            raise InvalidInput(f"ci_test={self.ci_test!r} needs the records' values (a DataFrame, an array with names, a "
                               "CSV/Parquet file or a DuckDB relation), not a count engine")
        if method.is_private:
            method.check(self.delta)
        if self.orient == "direction" and not method.is_private:
            raise InvalidInput("orient='direction' spends budget on private direction tests: use a private method")
        return self._relation()

    def _relation(self) -> Neighbours:
        """The guarantee's relation, refusing what has no add/remove form."""
        neighbours, method = Neighbours.parse(self.neighbours), self._method()
        if neighbours not in method.relations:
            others = [f"'{name}'" for name, m in METHODS.items() if neighbours in m.relations and m.is_private]
            raise InvalidInput(f"method={self.method!r} has no add/remove form here ({method.replace_one_only}); "
                               f"use {', '.join(others[:-1])} or {others[-1]}, or neighbours='replace_one'")
        if neighbours is AR and self.orient == "direction":
            raise InvalidInput("orient='direction' needs neighbours='replace_one' (its tests are calibrated with n public)")
        return neighbours

    def _max_cond_size(self, tables: Tables) -> int | None:
        if self.max_cond_size is not None:  # checked by its declaration (a whole number >= 0)
            return int(self.max_cond_size)
        return default_max_cond_size(tables.n, len(tables.names))

def orientation_values(X, names, domain: Domain) -> tuple[dict, dict]:
    """``(values, bounds)`` of the records for the direction tests: a continuous column's own
    values clipped to its public bounds (a missing or non-numeric one at their midpoint), an
    ordered or binary column's codes on ``(0, size - 1)``; nominal columns of three or more
    levels are left out (a direction test needs an order). A fixed map of each record on its
    own (:func:`~privgraph.data.frontdoor.clipped_values`, the ``"recode"`` policy), from a
    DataFrame, an array with ``names`` or a CSV/Parquet file read as text.

    >>> import pandas as pd
    >>> d = Domain(("x", "s"), (0, 2), (Kind.CONTINUOUS, Kind.ORDINAL), (None, ("no", "yes")), ((0.0, 1.0), None))
    >>> values, bounds = orientation_values(pd.DataFrame({"x": [0.5, 7, None], "s": ["yes", "no", "?"]}), None, d)
    >>> values["x"].tolist(), values["s"].tolist(), bounds
    ([0.5, 1.0, 0.5], [1.0, 0.0, 0.0], {'x': (0.0, 1.0), 's': (0.0, 1.0)})
    """
    if isinstance(X, (str, Path)):
        frame = read_table(X, list(domain.names), as_text=True, dialect=domain.dialect)
    elif isinstance(X, pd.DataFrame):
        frame = X
    else:
        frame = pd.DataFrame(np.asarray(X), columns=list(names if names is not None else domain.names))
    values, bounds = {}, {}
    for name, kind, size, bound in zip(domain.names, domain.kinds, domain.sizes, domain.bounds):
        if kind is Kind.CONTINUOUS and bound is not None:
            values[name], bounds[name] = clipped_values(frame[name], bound)[0], (float(bound[0]), float(bound[1]))
        elif kind is not Kind.CONTINUOUS and (domain.is_ordered(name) or size == 2):
            codes = encode_public(frame[[name]], domain.project([name]), "recode")[:, 0]
            values[name], bounds[name] = codes.astype(float), (0.0, float(size - 1))
    return values, bounds


def one_release_test(ci_test: str, domain: Domain, orient: str = "cpdag") -> str | None:
    """The test on ONE private release a run takes (``"rank"`` or ``"fisher-z"``), or None for
    the table tests: what was asked for, or for "auto" on a domain whose every column is
    continuous (public kinds only) the rank test, which needs no bounds and reads the same
    graph under any monotone transform of a column (Fisher-z with round public bounds found
    empty or nearly empty graphs on Sachs, txhousing, storms and flchain where rank found
    F1 0.54-1.0 at epsilon 1: docs/benchmarks/discovery.md); Fisher-z when
    ``orient="direction"`` (the rank test orients by colliders and Meek's rules only).

    >>> from privgraph.data import Domain, Kind
    >>> xy = Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS,) * 2)
    >>> one_release_test("auto", xy), one_release_test("auto", xy, "direction"), one_release_test("auto", Domain.of(a=2))
    ('rank', 'fisher-z', None)
    """
    if ci_test in (FISHER_Z, RANK):
        return ci_test
    if ci_test == "auto" and domain.names and all(k is Kind.CONTINUOUS for k in domain.kinds):
        return RANK if orient == "cpdag" else FISHER_Z
    return None


def is_fisher_z(ci_test: str, domain: Domain, orient: str = "cpdag") -> bool:
    """Whether a run takes the Fisher-z test (:func:`one_release_test`).

    >>> from privgraph.data import Domain, Kind
    >>> is_fisher_z("auto", Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS,) * 2)), is_fisher_z("fisher-z", Domain.of(a=2))
    (False, True)
    """
    return one_release_test(ci_test, domain, orient) == FISHER_Z


def choose_ci_test(ci_test: str, domain: Domain, degenerate: str = "dependent"):
    """The CI test object for ``ci_test`` on ``domain``; "auto" decides from public kinds.

    "auto" takes Kendall's tau (a rank test, valid for ordered values) when every column
    is ordinal or has at most two levels (a binary column's order is immaterial), and the
    G test (valid for any categories) as soon as one column is nominal with three or more
    levels: with z in {a, b, c} and y = [z == b], Kendall sees no monotone trend and calls
    them independent, the G test finds the edge. One test for the whole run keeps one
    sensitivity analysis and one plan.

    >>> from privgraph.data import Domain, Kind
    >>> type(choose_ci_test("auto", Domain(("z", "y"), (3, 2), (Kind.CATEGORICAL, Kind.CATEGORICAL)))).__name__
    'GTest'
    >>> type(choose_ci_test("auto", Domain(("z", "y"), (3, 2), (Kind.ORDINAL, Kind.CATEGORICAL)))).__name__
    'KendallTest'
    """
    if ci_test != "auto":
        return CI_TESTS[ci_test](degenerate=degenerate)
    nominal = [n for n, k, s in zip(domain.names, domain.kinds, domain.sizes) if k is Kind.CATEGORICAL and s > 2]
    return GTest(degenerate=degenerate) if nominal else KendallTest(degenerate=degenerate)


def default_max_cond_size(n: int, d: int) -> int:
    """The reference code's ``min(d - 2, floor(log2 n) - 5)``, at least 0.

    >>> default_max_cond_size(100_000, 8), default_max_cond_size(50, 8)
    (6, 0)
    """
    return max(0, min(d - 2, int(math.floor(math.log2(max(n, 1)))) - 5))


def as_engine(X, names=None, *, domain=None, infer_domain: bool = False, neighbours="replace_one") -> CountEngine:
    """A count engine over ``X`` with a public domain (PrivPC's front door: invalid values
    recoded under replace-one, their rows dropped under add/remove).

    ``X``: DataFrame, 2-D array (with ``names``), CSV/Parquet path, or count engine; see
    :func:`privgraph.data.open_engine`. Every column must be discrete.

    >>> as_engine(np.array([[0, 1], [1, 0]]), names=["a", "a"], infer_domain=True)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: duplicate column names ['a']
    """
    return discrete_engine(open_private(X, domain, names=names, neighbours=neighbours, infer_domain=infer_domain,
                                        what="X"))


def discrete_engine(data: PrivateData) -> CountEngine:
    """The count engine of a handle whose every column is discrete (or binned)."""
    engine = data.engine()
    check_countable(engine.domain)
    return engine


def check_data(tables: Tables) -> None:
    """Public checks on the data before any budget is spent (names, sizes and n only).

    >>> from privgraph.data import Domain, NumpyEngine
    >>> check_data(Tables.from_engine(NumpyEngine(Domain.of(a=2, b=2, c=2), np.zeros((2, 3), dtype=int))))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: 2 rows are fewer than the 3 variables
    """
    d = tables.domain
    check_columns(d)
    if tables.n < len(d.names):
        raise InvalidInput(f"{tables.n} rows are fewer than the {len(d.names)} variables")


def check_columns(domain: Domain) -> None:
    """The checks of :func:`check_data` that read the domain only (public under either relation).

    >>> from privgraph.data import Domain
    >>> check_columns(Domain.of(a=2, b=1))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: variables ['b'] take a single value: drop them
    """
    if len(domain.names) < 2:
        raise InvalidInput(f"causal discovery needs at least 2 variables, got {list(domain.names)}")
    if single := [n for n, s in zip(domain.names, domain.sizes) if s < 2]:
        raise InvalidInput(f"variables {single} take a single value: drop them")


__all__ = ["BudgetTooSmall", "CI_TESTS", "FISHER_Z", "METHODS", "is_fisher_z", "one_release_test", "PrivPC", "as_engine", "check_columns", "check_data",
           "choose_ci_test", "default_max_cond_size"]
