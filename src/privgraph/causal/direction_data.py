"""The data side of the private direction test: validation, the split, scales, both regressions.

Everything here is either a check that raises before any budget is spent, public
randomness (the split and the Fourier frequencies come from ``rng``), or a fixed
per-record map of the test data once the training part is fitted; see
:mod:`privgraph.causal.direction` for the privacy argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privgraph.causal.regression import fit_fourier_ridge, stability_bound

#: Fewest test (and training) rows accepted: below it the noise of every score exceeds its range.
MIN_TEST_ROWS = 100
#: Residual-kernel bandwidth under train+test privacy (on the [-2, 2] scale of the bounds).
TRAIN_RESIDUAL_BANDWIDTH = 0.5
#: Half-width of the scale public bounds are mapped to: ``[lo, hi] -> [-2, 2]``.
BOUNDED_HALF_WIDTH = 2.0


def validate_pair(x, y, *, min_rows: int = 2 * MIN_TEST_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """The pair as float arrays, or a ValueError naming the problem (before any budget is spent).

    Refused: non-numeric values, NaN or infinite values, different lengths, fewer than
    ``min_rows`` rows, a constant column, and "ties everywhere" (a column whose most
    common value holds a quarter of the rows or more, which makes its IQR and ranks
    degenerate: the additive-noise model is for continuous variables). These checks read
    the data, so their errors are not private: check public metadata first.

    >>> validate_pair([1, 2], ["a", "b"], min_rows=2)
    Traceback (most recent call last):
    ...
    ValueError: column y must be numeric: could not convert string to float: 'a'
    >>> validate_pair([1.0, float("nan"), 3.0], [1.0, 2.0, 3.0], min_rows=2)
    Traceback (most recent call last):
    ...
    ValueError: column x has 1 NaN or infinite values (rows [1]); drop or impute them first
    """
    cols = [_numeric(v, name) for v, name in ((x, "x"), (y, "y"))]
    if cols[0].size != cols[1].size:
        raise ValueError(f"x and y must have the same length, got {cols[0].size} and {cols[1].size}")
    if cols[0].size < min_rows:
        raise ValueError(f"need at least {min_rows} rows (the test part needs {MIN_TEST_ROWS}), got {cols[0].size}")
    for v, name in zip(cols, ("x", "y")):
        _check_continuous(v, name)
    return cols[0], cols[1]


def _numeric(values, name: str) -> np.ndarray:
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"column {name} must be numeric: {err}") from None
    if v.ndim != 1:
        raise ValueError(f"column {name} must be 1-D, got shape {v.shape}")
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        raise ValueError(f"column {name} has {bad.size} NaN or infinite values (rows {bad[:5].tolist()}); "
                         "drop or impute them first")
    return v


def _check_continuous(v: np.ndarray, name: str) -> None:
    values, counts = np.unique(v, return_counts=True)
    if values.size == 1:
        raise ValueError(f"column {name} is constant ({values[0]!r}): no direction can be inferred")
    if counts.max() * 4 >= v.size:
        raise ValueError(f"column {name} is tied everywhere: {values[counts.argmax()]!r} fills "
                         f"{counts.max()} of {v.size} rows; the additive-noise model needs continuous data")


def split_indices(n: int, test_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Training and test row indices: a uniformly random split fixed by ``rng``.

    Public randomness: no privacy argument relies on the split being secret.

    >>> tr, te = split_indices(10, 0.3, np.random.default_rng(0))
    >>> len(tr), len(te), sorted(np.concatenate([tr, te]).tolist()) == list(range(10))
    (7, 3, True)
    """
    if not (0 < test_fraction < 1):
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    perm = rng.permutation(n)
    m = int(round(n * test_fraction))
    return np.sort(perm[m:]), np.sort(perm[:m])


def to_common_scale(v: np.ndarray, train: np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    """Map a column to the regression scale.

    With public ``bounds = (lo, hi)``: clip to them and map linearly to [-2, 2] (clipping is
    part of the query; choose bounds about two standard deviations out). Without: centre
    and scale by the *training* rows' mean and standard deviation (test-set privacy only).

    >>> to_common_scale(np.array([0.0, 5.0, 20.0]), np.array([]), (0.0, 10.0)).tolist()
    [-2.0, 0.0, 2.0]
    """
    if bounds is not None:
        lo, hi = bounds
        return (np.clip(v, lo, hi) - (lo + hi) / 2) * (2 * BOUNDED_HALF_WIDTH / (hi - lo))
    return (v - train.mean()) / train.std()


def check_bounds(bounds, privacy: str):
    """Validate ``bounds = ((x_lo, x_hi), (y_lo, y_hi))``; required under train+test privacy.

    >>> check_bounds(((0, 1), (-2, 2)), "train+test")
    ((0.0, 1.0), (-2.0, 2.0))
    >>> check_bounds(((1, 0), (-2, 2)), "test")
    Traceback (most recent call last):
    ...
    ValueError: bounds for x must be finite with lo < hi, got (1, 0)
    """
    if bounds is None:
        if privacy == "train+test":
            raise ValueError("privacy='train+test' needs public bounds=((x_lo, x_hi), (y_lo, y_hi)): "
                             "the regression's stability bound needs bounded data")
        return None, None
    try:
        (xl, xh), (yl, yh) = bounds
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be ((x_lo, x_hi), (y_lo, y_hi)), got {bounds!r}") from None
    for lo, hi, name in ((xl, xh, "x"), (yl, yh, "y")):
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"bounds for {name} must be finite with lo < hi, got ({lo!r}, {hi!r})")
    return (float(xl), float(xh)), (float(yl), float(yh))


@dataclass(frozen=True)
class FittedPair:
    """Test-part causes, effects and residuals of both directions on the common scale."""

    x: np.ndarray
    y: np.ndarray
    res_y: np.ndarray  # y - f(x): residual of X -> Y
    res_x: np.ndarray  # x - g(y): residual of Y -> X
    bandwidths: tuple[float, float]  # residual kernel bandwidth of X -> Y, Y -> X
    shift: float  # largest move of any residual when one training record changes (train+test)


def fit_both_directions(x, y, *, privacy, bounds, test_fraction, ridge, lengthscale, rng) -> FittedPair:
    """Split, scale, regress both ways on the training part, residuals on the test part.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=400)
    >>> fit = fit_both_directions(x, np.sin(x) + 0.1 * rng.normal(size=400), privacy="test",
    ...                           bounds=(None, None), test_fraction=0.5, ridge=1e-3, lengthscale=1.0, rng=rng)
    >>> fit.x.shape, fit.res_y.shape, bool(np.std(fit.res_y) < 0.5), fit.shift
    ((200,), (200,), True, 0.0)
    """
    train, test = split_indices(x.size, test_fraction, rng)
    bx, by = bounds
    zx, zy = to_common_scale(x, x[train], bx), to_common_scale(y, y[train], by)
    out = {}
    for name, cause, effect in (("y", zx, zy), ("x", zy, zx)):
        model = fit_fourier_ridge(cause[train], effect[train], ridge=ridge, lengthscale=lengthscale, rng=rng)
        if privacy == "test":
            width = float(np.std(effect[train] - model.predict(cause[train])))
        else:
            width = TRAIN_RESIDUAL_BANDWIDTH
        out[name] = (effect[test] - model.predict(cause[test]), max(width, 1e-3))
    shift = 0.0
    if privacy == "train+test":
        shift = stability_bound(target_bound=BOUNDED_HALF_WIDTH, ridge=ridge, training_rows=train.size)
    return FittedPair(zx[test], zy[test], out["y"][0], out["x"][0], (out["y"][1], out["x"][1]), shift)
