"""The training part's release under ``privacy="record"``: one noisy table, two regressions from it.

Every training record is protected by releasing, from the training part, only a noisy
**K x K contingency table** of the pair on a public grid: both columns are clipped to their
public bounds and mapped to [-2, 2] (:func:`~privgraph.causal.direction.data.to_common_scale`),
and cut into K equal-width bins fixed by K alone. The table is the sufficient statistic
``(Phi^T Phi, Phi^T v(Y))`` of the data-independent indicator basis ``Phi`` (one-hot bins)
for both regressions at once, with the effect read at its bin centre ``v(Y)``.

Release: Laplace on every cell, sensitivity ``histogram_l1_sensitivity(REPLACE_ONE) = 2``
(replacing one record moves one count from one cell to another; a missing value goes to
the centre bin like any other value, so every record adds exactly one count). Noise scale
``2 / epsilon`` per cell, K^2 cells, and the grid K is a public function of the public
training size and epsilon (:func:`default_bins`), so no choice peeks at the data.

Both regressions are post-processing of the released table (:func:`regression_from_table`):
the conditional mean of the effect's bin centre per cause bin, from the noisy row totals
and row sums, smoothed by a second-difference penalty (a public rule: :func:`smoothing_for`)
so that sparse or noisy bins borrow from their neighbours, and linearly interpolated
between bin centres. Nothing here reads the test part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privgraph.causal.direction.data import (
    TRAIN_RESIDUAL_BANDWIDTH, FittedPair, split_indices, to_common_scale,
)
from privgraph.privacy import (
    Charge, Ledger, Neighbours, NoiseSampler, Release, histogram_l1_sensitivity, laplace_mechanism,
)
from privgraph.validation import one_of

#: Replace-one L1 sensitivity of the training table (one count moves between two cells).
CELL_SENSITIVITY = 2.0
#: Half-width of the common scale the public bounds map to (shared with direction.data).
HALF_WIDTH = 2.0
#: Grid sizes allowed (the rule of :func:`default_bins` is clipped to this range).
BIN_RANGE = (4, 32)
#: Constant of the grid rule K = (epsilon * n_train / CELL_RECORDS) ** (1/3), clipped (tuning seeds: see docs).
CELL_RECORDS = 0.3


def default_bins(training_rows: int, epsilon: float) -> int:
    """Public grid size K for the training table: ``(epsilon n / c)^(1/3)`` clipped to BIN_RANGE.

    Why a power of ``epsilon n``: a cause bin's conditional mean has Laplace error of order
    ``sqrt(K) (2/epsilon) / (n / K)`` from its K noisy cells and a bias of order ``1/K``
    from the bin width; equating the two gives ``K ~ (epsilon n)^(2/5)``. The rule grows
    more slowly (the cube root), since the roughness penalty already trades bias for noise;
    ``c`` = CELL_RECORDS was chosen on tuning seeds 0-39 of SIM, SIM-c and SIM-ln and on
    steep tanh pairs (docs/direction.md).
    Without noise (``epsilon = inf``) the largest grid.

    >>> default_bins(2500, 1.0), default_bins(50, 0.5), default_bins(10**6, math.inf)
    (20, 4, 32)
    """
    if math.isinf(epsilon):
        return BIN_RANGE[1]
    k = int(round((epsilon * training_rows / CELL_RECORDS) ** (1 / 3)))
    return int(min(max(k, BIN_RANGE[0]), BIN_RANGE[1]))


def bin_codes(z: np.ndarray, bins: int) -> np.ndarray:
    """Bin index of each value on the common scale [-2, 2] (K equal bins; the ends are closed).

    >>> bin_codes(np.array([-2.0, -0.01, 0.0, 2.0]), 4).tolist()
    [0, 1, 2, 3]
    """
    codes = np.floor((z + HALF_WIDTH) / (2 * HALF_WIDTH) * bins).astype(np.int64)
    return np.clip(codes, 0, bins - 1)


def bin_centres(bins: int) -> np.ndarray:
    """Centres of the K bins of [-2, 2].

    >>> bin_centres(4).tolist()
    [-1.5, -0.5, 0.5, 1.5]
    """
    return -HALF_WIDTH + (np.arange(bins) + 0.5) * (2 * HALF_WIDTH / bins)


def pair_table(zx: np.ndarray, zy: np.ndarray, bins: int) -> np.ndarray:
    """The K x K table of counts (rows: x bins, columns: y bins) of values on the common scale.

    >>> pair_table(np.array([-2.0, 2.0, 2.0]), np.array([0.5, 0.5, -2.0]), 2).tolist()
    [[0, 1], [1, 1]]
    """
    cells = bin_codes(zx, bins) * bins + bin_codes(zy, bins)
    return np.bincount(cells, minlength=bins * bins).reshape(bins, bins)


def release_table(zx, zy, *, bins: int, epsilon: float, sampler: NoiseSampler) -> Release:
    """The training table with Laplace noise on every cell: epsilon-DP under replace-one.

    Sensitivity ``histogram_l1_sensitivity(REPLACE_ONE) = 2``: replacing one record takes
    one count out of one cell and puts one into another (L1 move 2, or 0 in the same cell);
    K is public, so the table's shape is too. No budget is passed: the caller reserves the
    whole decision's charge first (see :func:`privgraph.causal.direction.private_direction`).
    ``epsilon = inf`` is the non-private reference (the exact table, an empty ledger).

    >>> from privgraph.privacy import SeededSampler
    >>> t, ledger = release_table(np.zeros(100), np.zeros(100), bins=4, epsilon=1.0, sampler=SeededSampler(0))
    >>> t.shape, ledger.total().epsilon, ledger.charges[0].sensitivity
    ((4, 4), 1.0, 2.0)
    """
    table = pair_table(zx, zy, bins).astype(np.float64)
    if math.isinf(epsilon):
        return Release(table, Ledger())
    return laplace_mechanism(table, epsilon=epsilon, sensitivity=histogram_l1_sensitivity(Neighbours.REPLACE_ONE),
                             neighbours=Neighbours.REPLACE_ONE, sampler=sampler)


@dataclass(frozen=True)
class BinnedRegression:
    """A regression function on the common scale: values at the bin centres, linearly interpolated."""

    centres: np.ndarray
    values: np.ndarray

    def predict(self, z) -> np.ndarray:
        """Predictions at ``z`` (constant beyond the outer centres).

        >>> BinnedRegression(np.array([-1.0, 1.0]), np.array([0.0, 2.0])).predict([0.0, 5.0]).tolist()
        [1.0, 2.0]
        """
        return np.interp(np.asarray(z, dtype=np.float64), self.centres, self.values)


def smoothing_for(training_rows: int, bins: int) -> float:
    """Public second-difference penalty: a fixed fraction of the expected records per bin.

    >>> smoothing_for(2500, 25)
    10.0
    """
    return SMOOTHING * training_rows / bins


#: Penalty per expected record in a bin (chosen on the tuning seeds).
SMOOTHING = 0.1


def regression_from_table(table: np.ndarray, *, cause_axis: int, smoothing: float,
                          noise_scale: float = 0.0) -> BinnedRegression:
    """The regression of the effect on the cause from a (noisy) table: post-processing only.

    First every cell is lowered by ``noise_scale * ln K`` and clipped at 0: a cell that
    holds only Laplace noise of scale b survives with probability ``exp(-ln K) / 2 =
    1/(2K)``, so about half a pure-noise cell per row is left, where the raw row sums would
    carry the noise of all K cells (on the tuning seeds this let the grid grow from 11 to
    20 bins at n_train = 2,500 and kept steep curves right at small n; docs/direction.md).
    Rows of the cause: total ``c_k`` and sum of the effect's bin centres ``s_k``
    (clipped to ``[-2 c_k, 2 c_k]``, the bounded scale). The fit solves
    ``min_w sum_k (c_k w_k^2 - 2 s_k w_k) + smoothing ||D2 w||^2 + 1e-9 ||w||^2`` (a
    weighted least-squares fit of the bin means with a second-difference roughness penalty),
    so empty or noisy bins take the shape of their neighbours.

    >>> t = np.diag([10.0, 10.0, 10.0, 10.0])
    >>> np.round(regression_from_table(t, cause_axis=0, smoothing=0.0).values, 6).tolist()
    [-1.5, -0.5, 0.5, 1.5]
    """
    counts = table if cause_axis == 0 else table.T
    bins = counts.shape[0]
    counts = np.maximum(counts - noise_scale * math.log(bins), 0.0)
    centres = bin_centres(bins)
    c = np.maximum(counts.sum(axis=1), 0.0)
    s = np.clip(counts @ centres, -HALF_WIDTH * c, HALF_WIDTH * c)
    d2 = np.diff(np.eye(bins), n=2, axis=0)
    system = np.diag(c) + smoothing * d2.T @ d2 + 1e-9 * np.eye(bins)
    return BinnedRegression(centres, np.linalg.solve(system, s))


@dataclass(frozen=True)
class PolynomialRegression:
    """A polynomial regression on the common scale, in ``u = z / 2`` (coefficients highest first),
    its predictions clipped to the bounded scale [-2, 2]."""

    coefficients: np.ndarray

    def predict(self, z) -> np.ndarray:
        """Predictions at ``z``.

        >>> PolynomialRegression(np.array([4.0, 0.0])).predict([0.5, 2.0]).tolist()
        [1.0, 2.0]
        """
        u = np.asarray(z, dtype=np.float64) / HALF_WIDTH
        return np.clip(np.polyval(self.coefficients, u), -HALF_WIDTH, HALF_WIDTH)


#: Degree of the polynomial regressions RECI compares (chosen on the real pairs: docs/direction.md).
POLYNOMIAL_DEGREE = 3


def polynomial_from_table(table: np.ndarray, *, cause_axis: int, degree: int = POLYNOMIAL_DEGREE,
                          noise_scale: float = 0.0) -> PolynomialRegression:
    """A polynomial regression of the effect on the cause from a (noisy) table: post-processing only.

    Every cell is lowered by ``noise_scale * ln K`` and clipped at 0 (as in
    :func:`regression_from_table`), then the polynomial of the given degree is fitted by
    least squares to the cell centres weighted by those counts (a tiny ridge keeps the
    system solvable on an empty table). RECI compares the errors of such fits (Bloebaum et
    al. 2018 use polynomial or monotone fits): a low-degree fit does not chase the noise of
    single cells, which a binned fit with K levels does at small epsilon.

    >>> t = np.diag([10.0, 10.0, 10.0, 10.0])
    >>> np.round(polynomial_from_table(t, cause_axis=0).predict(bin_centres(4)), 6).tolist()
    [-1.5, -0.5, 0.5, 1.5]
    """
    counts = table if cause_axis == 0 else table.T
    bins = counts.shape[0]
    weights = np.maximum(counts - noise_scale * math.log(bins), 0.0).ravel()
    centres = bin_centres(bins)
    cause, effect = np.meshgrid(centres, centres, indexing="ij")
    basis = np.vander(cause.ravel() / HALF_WIDTH, degree + 1)
    system = basis.T @ (basis * weights[:, None]) + 1e-9 * np.eye(degree + 1)
    return PolynomialRegression(np.linalg.solve(system, basis.T @ (weights * effect.ravel())))


#: The regressions :func:`released_fit` can compute from the table.
FITS = ("binned", "polynomial")


@dataclass(frozen=True)
class ReleasedRegressions:
    """Both regressions fitted from the released training table, with the public split.

    ``zx``, ``zy``: every row on the common scale; ``train``, ``test``: the split's row
    indices; ``f_y`` regresses Y on X, ``f_x`` X on Y (post-processing of the table).
    """

    zx: np.ndarray
    zy: np.ndarray
    train: np.ndarray
    test: np.ndarray
    f_y: object
    f_x: object

    def residuals(self, rows=None) -> tuple[np.ndarray, np.ndarray]:
        """``(res_y, res_x)`` of the given rows (default all): ``zy - f_y(zx)``, ``zx - f_x(zy)``.

        >>> reg = ReleasedRegressions(np.zeros(2), np.ones(2), np.array([0]), np.array([1]),
        ...                           BinnedRegression(np.array([-1.0, 1.0]), np.zeros(2)),
        ...                           BinnedRegression(np.array([-1.0, 1.0]), np.zeros(2)))
        >>> [r.tolist() for r in reg.residuals()]
        [[1.0, 1.0], [0.0, 0.0]]
        """
        zx, zy = (self.zx, self.zy) if rows is None else (self.zx[rows], self.zy[rows])
        return zy - self.f_y.predict(zx), zx - self.f_x.predict(zy)


def released_regressions(x, y, *, bounds, test_fraction: float, epsilon: float, sampler: NoiseSampler,
                         rng: np.random.Generator, bins: int | None = None, fit: str = "binned") -> Release:
    """Split, release the training table, regress both ways on it: a :class:`ReleasedRegressions`.

    Its ledger is the table's (the training part's only release); nothing here reads the
    test part's values except to put them on the common scale (a per-record map).
    ``fit``: ``"binned"`` (the smoothed bin means, for the dependence scores) or
    ``"polynomial"`` (:func:`polynomial_from_table`, for RECI).

    >>> from privgraph.privacy import SeededSampler
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 400)
    >>> reg, ledger = released_regressions(x, x ** 2, bounds=((-1, 1), (-1, 1)), test_fraction=0.5, epsilon=1.0,
    ...                                    sampler=SeededSampler(0), rng=rng, fit="polynomial")
    >>> reg.train.size, reg.test.size, ledger.total().epsilon
    (200, 200, 1.0)
    """
    one_of("fit", fit, FITS)  # before the table's release
    train, test = split_indices(x.size, test_fraction, rng)
    zx, zy = to_common_scale(x, x[:0], bounds[0]), to_common_scale(y, y[:0], bounds[1])
    k = default_bins(train.size, epsilon) if bins is None else bins
    table, ledger = release_table(zx[train], zy[train], bins=k, epsilon=epsilon, sampler=sampler)
    penalty, scale = smoothing_for(train.size, k), 0.0 if math.isinf(epsilon) else CELL_SENSITIVITY / epsilon
    if fit == "polynomial":
        f_y, f_x = (polynomial_from_table(table, cause_axis=axis, noise_scale=scale) for axis in (0, 1))
    else:
        f_y, f_x = (regression_from_table(table, cause_axis=axis, smoothing=penalty, noise_scale=scale)
                    for axis in (0, 1))
    return Release(ReleasedRegressions(zx, zy, train, test, f_y, f_x), ledger)


def released_fit(x, y, *, bounds, test_fraction: float, epsilon: float, sampler: NoiseSampler,
                 rng: np.random.Generator, bins: int | None = None, fit: str = "binned") -> Release:
    """Split, release the training table, regress both ways on it, residuals on the test part.

    The value is a :class:`~privgraph.causal.direction.data.FittedPair` whose regressions
    are post-processing of the released table (:func:`released_regressions`); its ledger is
    the table's. Each test residual depends on its own test record and on the released
    table only: a fixed per-record map once the table is out, so the test scores'
    sensitivities apply unchanged.

    >>> from privgraph.privacy import SeededSampler
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 400)
    >>> (fit, ledger) = released_fit(x, x ** 2, bounds=((-1, 1), (-1, 1)), test_fraction=0.5, epsilon=1.0,
    ...                              sampler=SeededSampler(0), rng=rng)
    >>> fit.x.shape, fit.shift, ledger.total().epsilon
    ((200,), 0.0, 1.0)
    """
    reg, ledger = released_regressions(x, y, bounds=bounds, test_fraction=test_fraction, epsilon=epsilon,
                                       sampler=sampler, rng=rng, bins=bins, fit=fit)
    res_y, res_x = reg.residuals(reg.test)
    return Release(FittedPair(reg.zx[reg.test], reg.zy[reg.test], res_y, res_x, (TRAIN_RESIDUAL_BANDWIDTH,) * 2, 0.0),
                   ledger)


def parallel_charge(epsilon: float, delta: float, *, bins: int, training_rows: int, test_rows: int, score: str):
    """The one charge of a ``privacy="record"`` decision: parallel composition over the two parts.

    The split is public randomness fixed before the data is read, so a record lies in
    exactly one part whatever the data. A training record enters only the table (epsilon,
    0); a test record enters only the two score releases (epsilon in all, delta for IQR),
    which read the training part only through the released table (post-processing).
    Hence (max of the two, max of the deltas) = (epsilon, delta): see docs/direction.md.

    >>> c = parallel_charge(1.0, 0.0, bins=20, training_rows=2500, test_rows=2500, score="kendall")
    >>> c.epsilon, c.neighbours.value
    (1.0, 'replace_one')
    """
    return Charge("private_anm (parallel: training table | test scores)", epsilon, delta, Neighbours.REPLACE_ONE,
                  note=(f"training part ({training_rows} rows): Laplace on a {bins}x{bins} table, sensitivity 2, "
                        f"epsilon {epsilon:g}; test part ({test_rows} rows): {score} scores at epsilon {epsilon:g}"
                        f"{f', delta {delta:g}' if delta else ''}; disjoint parts compose in parallel"))
