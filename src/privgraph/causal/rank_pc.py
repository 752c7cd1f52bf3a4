"""The rank PC (nonparanormal PC): ONE private release of Kendall's tau over every pair of
columns, then PC with Fisher's z on the correlation it maps to, as post-processing.

Harris and Drton (JMLR 2013) run PC on ``sin(pi tau / 2)`` (Kendall) under a Gaussian copula:
strictly increasing transforms of a column change nothing, and no bounds are needed, so
heavy-tailed continuous columns (flow cytometry) and ordered columns (their codes) both work.

**The release** (:func:`release_kendall`): the ``d (d - 1) / 2`` values of tau-a
(:func:`~privgraph.stats.rank_correlation.kendall_tau_a_matrix`) as one vector, by the
multivariate discrete Gaussian at the rho-zCDP the one accountant converts (epsilon, delta)
to (:func:`~privgraph.privacy.zcdp.zcdp_gaussian_vector`), as the Fisher-z path releases its
moments: one ``("zcdp", rho)`` charge, reserved on the budget before any noise is drawn.

**Neighbours**: replace-one, n public: L2 sensitivity ``2 d / n``
(:func:`~privgraph.stats.rank_correlation.kendall_matrix_l2_sensitivity`, derived there).

Add/remove, n private (the sensitivity depends on it): the resize reduction of
:mod:`privgraph.privacy.resize`, orchestrated by :class:`~privgraph.privacy.add_remove.AddRemove`
exactly as PrivPC's count engines are (:func:`rank_reduction`):

1. each record is mapped on its own to its rank values (:func:`rank_records`: a fixed
   public map, nothing released; neighbours stay neighbours);
2. the number of records is released by the Laplace mechanism (a count, sensitivity 1
   under add/remove) with :data:`~privgraph.privacy.resize.SIZE_SHARE` of rho (the size's
   pure ``epsilon_n`` is ``epsilon_n^2 / 2``-zCDP), and the public
   ``m = max(d, floor(n_hat - t))`` is taken from it (post-processing);
3. the records are resized secretly to exactly m (:func:`resize_records`): a uniform
   m-subset drawn by the mechanism's sampler when ``n >= m``, otherwise every record and
   ``m - n`` copies of the *pad record* (:func:`pad_values`: the values of the record
   whose every field is missing, a fixed public point: NaN, tied with every row, in a
   continuous column; the first level's code 0 in an ordered or binary one, the front
   door's ``"recode"``);
4. the replace-one release above runs on the m records with m public, at the rest of rho.

Why this is add/remove-DP: the replace-one release is ``rho_m``-zCDP on data sets of m
records for every m, whatever the records' values, because the sensitivity bound
``2 d / m`` holds for any two rows in ``(R or missing)^d`` (ties and missing values
included: each sign is in ``{-1, 0, 1}``), so for the pad record too. Then
:mod:`privgraph.privacy.resize`'s theorem applies: if ``n + 1 <= m`` the resized ``D``
and ``D + r`` differ by one pad record replaced by ``r``; if ``n >= m`` the uniform
m-subsets of ``D`` and ``D + r`` are equal-weight mixtures of replace-one neighbours
``(S + u, S + r)`` (the Balle-Barthe-Gaboardi coupling), and zCDP's Renyi divergences
are jointly quasi-convex, so the resized release is ``rho_m``-zCDP under add/remove. It
composes adaptively with the size's release (m is a function of it): ``rho_n + rho_m <=
rho``, the whole budget. The ledger is the size's Laplace charge (add/remove) and the
release's charge relabelled add/remove (:func:`~privgraph.privacy.resize.as_add_remove`:
same rho, a note that it ran on the resized data). Whether the data was padded depends
on n: that branch changes which records are ranked, never what is output or raised
(``m >= d`` rows always, and the refusals read m only).

**Post-processing** (:func:`correlation_from_kendall`): ``R = sin(pi tau / 2)`` entrywise,
eigenvalues clipped from below at :data:`~privgraph.causal.fisher_pc.EIGEN_FLOOR` times the
noise's spectral scale ``s sqrt(d)`` (``s = (pi / 2) sigma``, the largest sd on an entry),
rescaled to a unit diagonal. The noise-aware Fisher-z test
(:class:`~privgraph.causal.fisher_pc.FisherZDecider`) gets each entry's own sd
``(pi / 2) |cos(pi tau / 2)| sigma`` (:func:`~privgraph.stats.rank_correlation.pearson_noise_sd`;
the diagonal is exact) and ``n_eff = floor(9 n / pi^2)``
(:func:`~privgraph.stats.rank_correlation.effective_n`).

**Memory**: the d columns of the n records are held in memory as float64 (8 n d bytes; a
CSV/Parquet file is read column-wise as text first, several times that); tau is exact up
to :data:`~privgraph.stats.kendall.MAX_RAW_ROWS` rows. DuckDB relations and Spark frames
are refused.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from privgraph.causal.deciders import BudgetTooSmall
from privgraph.causal.fisher_pc import EIGEN_FLOOR, MAX_CORRELATION_NOISE, ReleasedCovariance, release_accountant
from privgraph.data.domain import Domain, Kind
from privgraph.data.files import read_table
from privgraph.data.frontdoor import encode_public
from privgraph.data.sampling import rows_without_replacement
from privgraph.privacy import Budget, Ledger, Neighbours, NoiseSampler
from privgraph.privacy.add_remove import AddRemove
from privgraph.privacy.ledger import Charge
from privgraph.privacy.mechanisms import Release
from privgraph.privacy.zcdp import rho_for_budget, zcdp_charge, zcdp_gaussian_scale, zcdp_gaussian_vector
from privgraph.stats.rank_correlation import (
    effective_n, kendall_matrix_l2_sensitivity, kendall_tau_a_matrix, pearson_from_kendall, pearson_noise_sd,
)
from privgraph.validation import InvalidInput

#: The name of the test (PrivPC's ``ci_test``).
RANK = "rank"


def check_relation(neighbours) -> Neighbours:
    """The relation of a private rank fit: replace-one (n public), or add/remove through the
    resize reduction (:func:`rank_reduction`; module docstring).

    >>> check_relation("add_remove").value
    'add_remove'
    """
    return Neighbours.parse(neighbours)


def rank_reduction(epsilon: float, delta: float, domain: Domain) -> AddRemove:
    """The add/remove form of the rank release at the whole (epsilon, delta): the size with
    :data:`~privgraph.privacy.resize.SIZE_SHARE` of rho (the RDP accountant, as the release's
    zCDP charge is read), then the replace-one release at the rest on at least d records.
    Its ``plan`` and ``fit`` are the ones PrivPC's count engines use.

    >>> d = Domain(tuple("abc"), (0, 0, 0), (Kind.CONTINUOUS,) * 3)
    >>> ar = rank_reduction(1.0, 1e-6, d)
    >>> ar.composition, ar.minimum, ar.at_guess(10_000)[0] < 10_000
    ('rdp', 3, True)
    """
    return AddRemove(epsilon, delta, release_accountant(True), minimum=len(domain.names))


@dataclass(frozen=True, eq=False)
class RankRecords:
    """The records of a rank fit as their rank values (:func:`rank_values`), one row each, over
    the public ``domain``. As a count engine it counts only the rows (``columns=()``): the one
    count the add/remove reduction releases.

    >>> r = RankRecords(Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS,) * 2), np.zeros((5, 2)))
    >>> int(r.counts([]))
    5
    """

    domain: Domain
    values: np.ndarray = field(repr=False)  # (n, d) float64; NaN: missing (tied with every row)

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        if len(columns) or rows is not None:
            raise InvalidInput("the rank test's records count their rows only (a rank fit counts no cells)")
        return np.array(len(self.values), dtype=np.int64)


def rank_records(X, domain: Domain, names=None) -> RankRecords:
    """``X``'s records as :class:`RankRecords` (:func:`rank_values`: each record mapped on its
    own, nothing released, no row dropped).

    >>> d = Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS,) * 2)
    >>> rank_records(pd.DataFrame({"x": [1.0, 2.0], "y": [3.0, None]}), d).values.tolist()
    [[1.0, 3.0], [2.0, nan]]
    """
    return RankRecords(domain, rank_values(X, domain, names))


def pad_values(domain: Domain) -> np.ndarray:
    """The pad record's rank values: those of the record whose every field is missing (NaN in
    a continuous column, tied with every row; code 0, the first level, in an ordered or
    binary one): a fixed public point, the same whatever the data.

    >>> d = Domain(("x", "s"), (0, 2), (Kind.CONTINUOUS, Kind.ORDINAL), (None, ("no", "yes")))
    >>> pad_values(d).tolist()
    [nan, 0.0]
    """
    return rank_values(pd.DataFrame({name: [None] for name in domain.names}), domain)[0]


def resize_records(records: RankRecords, m: int, sampler: NoiseSampler) -> RankRecords:
    """Exactly ``m`` of ``records``, secretly: a uniform m-subset drawn by ``sampler`` when there
    are at least m, otherwise all of them and ``m - n`` copies of the pad record
    (:func:`pad_values`). Step 3 of the add/remove reduction (module docstring).

    >>> from privgraph.privacy import SeededSampler
    >>> d = Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS,) * 2)
    >>> r = RankRecords(d, np.arange(10.0).reshape(5, 2))
    >>> len(resize_records(r, 3, SeededSampler(0)).values), resize_records(r, 6, SeededSampler(0)).values[-1].tolist()
    (3, [nan, nan])
    """
    n = len(records.values)
    if m <= n:
        kept = records.values[rows_without_replacement(n, m, sampler=sampler)]
    else:
        kept = np.vstack([records.values, np.tile(pad_values(records.domain), (m - n, 1))])
    return RankRecords(records.domain, kept)


def kendall_noise(d: int, n: int, *, epsilon: float, delta: float) -> float:
    """The sd of the noise on each released tau (public facts only).

    >>> 0.01 < kendall_noise(20, 10_000, epsilon=1.0, delta=1e-6) < 0.05
    True
    """
    size = d * (d - 1) // 2
    return zcdp_gaussian_scale(_rho(epsilon, delta), kendall_matrix_l2_sensitivity(n, d), size)[0]


def kendall_charge(d: int, n: int, *, epsilon: float, delta: float) -> Charge:
    """The one charge :func:`release_kendall` reserves, as ``zcdp_gaussian_vector`` makes it.

    >>> kendall_charge(3, 1000, epsilon=1.0, delta=1e-6).mechanism
    'gaussian_vector'
    """
    sensitivity, size = kendall_matrix_l2_sensitivity(n, d), d * (d - 1) // 2
    return zcdp_charge("gaussian_vector", _rho(epsilon, delta), delta, Neighbours.REPLACE_ONE,
                       sensitivity=sensitivity, note=f"{size} values, L2 sensitivity {sensitivity:.6g}")


def check_useful(d: int, n: int, *, epsilon: float, delta: float) -> None:
    """Refuse, before any noise, a release whose noise on a correlation near 0 (sd
    ``(pi / 2) sigma``) exceeds :data:`~privgraph.causal.fisher_pc.MAX_CORRELATION_NOISE`.

    >>> check_useful(50, 200, epsilon=0.1, delta=1e-6)
    Traceback (most recent call last):
    ...
    privgraph.privacy.budget.BudgetTooSmall: epsilon=0.1 (delta=1e-06) on 200 rows and 50 columns gives the Kendall release noise of standard deviation ... on a correlation, above 1: every test would read noise. It needs about ... times the rows (or about ... times epsilon), or fewer columns
    """
    s = (math.pi / 2) * kendall_noise(d, n, epsilon=epsilon, delta=delta)
    if s > MAX_CORRELATION_NOISE:
        need = s / MAX_CORRELATION_NOISE
        raise BudgetTooSmall(f"epsilon={epsilon:g} (delta={delta:g}) on {n} rows and {d} columns gives the Kendall "
                             f"release noise of standard deviation {s:.3g} on a correlation, above "
                             f"{MAX_CORRELATION_NOISE:g}: every test would read noise. It needs about {need:.3g} "
                             f"times the rows (or about {need:.3g} times epsilon), or fewer columns")


def rank_plan(domain: Domain, n: int, *, epsilon: float, delta: float, neighbours) -> Ledger:
    """The ledger a private replace-one rank fit charges (public facts only), after its
    refusals. The add/remove plan is :func:`rank_reduction`'s (the size's charge, then this
    plan at m, relabelled).

    >>> d = Domain(tuple("abc"), (0, 0, 0), (Kind.CONTINUOUS,) * 3)
    >>> [c.mechanism for c in rank_plan(d, 1000, epsilon=1.0, delta=1e-6, neighbours="replace_one")]
    ['gaussian_vector']
    """
    if check_relation(neighbours) is not Neighbours.REPLACE_ONE:
        raise InvalidInput("rank_plan is the replace-one plan (n public); under add/remove the plan is "
                           "rank_reduction(epsilon, delta, domain).plan(...)")
    check_columns(domain)
    d = len(domain.names)
    check_useful(d, n, epsilon=epsilon, delta=delta)
    return Ledger.of(kendall_charge(d, n, epsilon=epsilon, delta=delta))


def release_kendall(tau: np.ndarray, n: int, names, *, epsilon: float, delta: float, sampler: NoiseSampler,
                    budget: Budget | None = None) -> Release:
    """The private correlation: the refusal check, ONE Gaussian release of the upper triangle
    of ``tau`` (replace-one, L2 sensitivity ``2 d / n``; its charge reserved on ``budget``
    first), then :func:`correlation_from_kendall` (post-processing).

    >>> from privgraph.privacy import SeededSampler
    >>> tau = np.array([[1.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 1.0]])
    >>> cov, ledger = release_kendall(tau, 5000, ("a", "b", "c"), epsilon=1.0, delta=1e-6, sampler=SeededSampler(0))
    >>> cov.covariance.shape, bool(np.allclose(np.diag(cov.covariance), 1)), cov.n, len(ledger)
    ((3, 3), True, 4559.0, 1)
    """
    d = len(names)
    check_useful(d, n, epsilon=epsilon, delta=delta)
    upper = np.triu_indices(d, 1)
    noisy, ledger = zcdp_gaussian_vector(tau[upper], rho=_rho(epsilon, delta), delta=delta,
                                         sensitivity=kendall_matrix_l2_sensitivity(n, d),
                                         neighbours=Neighbours.REPLACE_ONE, sampler=sampler, budget=budget)
    released = np.eye(d)
    released[upper] = noisy
    released = released + np.triu(released, 1).T
    sigma = kendall_noise(d, n, epsilon=epsilon, delta=delta)
    return Release(correlation_from_kendall(released, tuple(names), n, tau_sd=sigma), ledger)


def correlation_from_kendall(tau: np.ndarray, names: tuple, n: int, *, tau_sd: float = 0.0) -> ReleasedCovariance:
    """``sin(pi tau / 2)``, projected to a positive definite unit-diagonal matrix, with each
    entry's noise sd and the effective n (post-processing; module docstring). Without noise
    a positive definite matrix is kept as it is.

    >>> r = correlation_from_kendall(np.array([[1.0, 1 / 3], [1 / 3, 1.0]]), ("a", "b"), 100)
    >>> r.covariance.round(6).tolist(), r.n
    ([[1.0, 0.5], [0.5, 1.0]], 91.0)
    """
    names = tuple(names)
    corr = pearson_from_kendall(tau)
    np.fill_diagonal(corr, 1.0)
    values, vectors = np.linalg.eigh(corr)
    floor = EIGEN_FLOOR * (math.pi / 2) * tau_sd * math.sqrt(len(names)) if tau_sd > 0 else 1e-10
    if values[0] < floor:
        corr = (vectors * np.maximum(values, floor)) @ vectors.T
        a = 1.0 / np.sqrt(np.diag(corr))
        corr = corr * np.outer(a, a)
    noise = 0.0
    if tau_sd > 0:
        noise = pearson_noise_sd(tau, tau_sd)
        np.fill_diagonal(noise, 0.0)
    return ReleasedCovariance(names, corr, effective_n(n), noise)


def check_columns(domain: Domain) -> None:
    """Refuse nominal columns of three or more levels (no order to rank); any continuous
    column is taken with or without bounds.

    >>> check_columns(Domain(("z", "w"), (3, 4)))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: columns ['z', 'w'] are nominal with 3 or more levels: the rank test needs ordered values (make them ordinal in the codebook if their levels have an order, or drop them); use ci_test='g' for nominal tables
    """
    if len(domain.names) < 2:
        raise InvalidInput(f"causal discovery needs at least 2 variables, got {list(domain.names)}")
    nominal = [n for n, k, s in zip(domain.names, domain.kinds, domain.sizes) if k is Kind.CATEGORICAL and s > 2]
    if nominal:
        raise InvalidInput(f"columns {nominal} are nominal with 3 or more levels: the rank test needs ordered values "
                           "(make them ordinal in the codebook if their levels have an order, or drop them); use "
                           "ci_test='g' for nominal tables")


def rank_values(X, domain: Domain, names=None) -> np.ndarray:
    """The (n, d) values whose ranks are used: a continuous column's own numbers (NaN for a
    missing or non-numeric one: tied with every row), an ordinal or binary column's codes
    (an unknown level recoded to the first, the front door's ``"recode"`` policy). A fixed
    map of each record on its own; no row is dropped (n stays public).

    >>> d = Domain(("x", "s"), (0, 2), (Kind.CONTINUOUS, Kind.ORDINAL), (None, ("no", "yes")))
    >>> rank_values(pd.DataFrame({"x": [0.5, 7, None], "s": ["yes", "no", "?"]}), d).tolist()
    [[0.5, 1.0], [7.0, 0.0], [nan, 0.0]]
    """
    check_columns(domain)
    if isinstance(X, RankRecords):  # already mapped (the resized records of an add/remove fit)
        if X.domain.names != domain.names:
            raise InvalidInput(f"these records are over the columns {list(X.domain.names)}, not {list(domain.names)}")
        return X.values
    if isinstance(X, (str, os.PathLike)):
        frame = read_table(X, list(domain.names), as_text=True, dialect=domain.dialect)
    elif isinstance(X, pd.DataFrame):
        frame = X
    elif hasattr(X, "counts") or hasattr(X, "columns") or hasattr(X, "sparkSession"):
        raise InvalidInput(f"ci_test='rank' needs the records' values in memory: give a DataFrame, an array with "
                           f"names or a CSV/Parquet file, not {type(X).__name__}")
    else:
        frame = pd.DataFrame(np.asarray(X), columns=list(names if names is not None else domain.names))
    missing = [c for c in domain.names if c not in frame.columns]
    if missing:
        raise InvalidInput(f"columns {missing} of the domain are not in the data")
    out = np.empty((len(frame), len(domain.names)))
    for j, (name, kind) in enumerate(zip(domain.names, domain.kinds)):
        if kind is Kind.CONTINUOUS:
            v = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            out[:, j] = np.where(np.isfinite(v), v, np.nan)
        else:
            out[:, j] = encode_public(frame[[name]], domain.project([name]), "recode")[:, 0]
    return out


def rank_correlation(X, domain: Domain, *, names=None, epsilon: float, delta: float, sampler: NoiseSampler,
                     budget: Budget | None, private: bool) -> tuple[ReleasedCovariance, Ledger, int]:
    """The released (or, ``private=False``, plain) Kendall-mapped correlation of ``X``, its
    ledger, and n (public under replace-one). A useless budget is refused before tau is computed.

    >>> d = Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS,) * 2)
    >>> x = np.arange(200.0)
    >>> cov, ledger, n = rank_correlation(pd.DataFrame({"x": x, "y": np.exp(x / 50)}), d, epsilon=1.0, delta=1e-6,
    ...                                   sampler=None, budget=None, private=False)
    >>> bool(cov.covariance[0, 1] > 0.999), len(ledger), n
    (True, 0, 200)
    """
    values = rank_values(X, domain, names)
    n, d = len(values), len(domain.names)
    if n < d:
        raise InvalidInput(f"{n} rows are fewer than the {d} variables")
    if private:
        check_useful(d, n, epsilon=epsilon, delta=delta)
    tau = kendall_tau_a_matrix(values)
    if not private:
        return correlation_from_kendall(tau, domain.names, n), Ledger(), n
    cov, ledger = release_kendall(tau, n, domain.names, epsilon=epsilon, delta=delta, sampler=sampler, budget=budget)
    return cov, ledger, n


def _rho(epsilon: float, delta: float) -> float:
    return rho_for_budget(epsilon, delta, "ci_test='rank' (Kendall's tau, a Gaussian mechanism)")


__all__ = ["RANK", "RankRecords", "check_columns", "check_relation", "check_useful", "correlation_from_kendall",
           "kendall_charge", "kendall_noise", "pad_values", "rank_correlation", "rank_plan", "rank_records",
           "rank_reduction", "rank_values", "release_kendall", "resize_records"]
