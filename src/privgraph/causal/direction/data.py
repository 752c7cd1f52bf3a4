"""The data side of the private direction test: validation, the split, scales, both regressions.

Everything here is either a check of public properties that raises before any budget is
spent (types, shapes, the public number of rows: never a data value), public randomness
(the split and the Fourier frequencies come from ``rng``), or a fixed per-record map of
the test data once the training part is fitted; see :mod:`privgraph.causal.direction` for
the privacy argument. Under ``privacy="test"`` the training part sets scales (its mean and
standard deviation, the residual bandwidth) and is treated as public.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privgraph.causal.direction.regression import fit_fourier_ridge
from privgraph.causal.direction.scores import MIN_PART_ROWS, SCORES
from privgraph.data import DomainRequired, Kind, resolve_domain
from privgraph.data.frontdoor import how_to_get_a_domain, level_codes
from privgraph.threads import single_threaded_blas
from privgraph.validation import InvalidInput, UnknownName

#: Residual-kernel bandwidth under train+test privacy (on the [-2, 2] scale of the bounds).
TRAIN_RESIDUAL_BANDWIDTH = 0.5
#: Range the residual-kernel bandwidth is clipped to (a degenerate or overflowing spread lands on an end).
BANDWIDTH_RANGE = (1e-3, 1e3)
#: Half-width of the scale public bounds are mapped to: ``[lo, hi] -> [-2, 2]``.
BOUNDED_HALF_WIDTH = 2.0
#: Tail share left outside each side of the bounds read from the data (infer_domain only).
INFERRED_TAIL = 0.01
#: numpy dtype kinds accepted as numeric columns (bool, signed and unsigned integer, float).
NUMERIC_KINDS = ("b", "i", "u", "f")


def validate_pair(x, y, *, min_rows: int = 2 * MIN_PART_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """The pair as float arrays, or a ValueError naming the problem (before any budget is spent).

    Only public properties are checked: the columns' types (a dtype that is not numeric:
    text, dates, objects), their shapes (1-D, the same length) and the number of rows
    ``n`` against ``min_rows`` (``n`` is public under replace-one neighbours, and it is
    counted before anything is dropped or replaced). No value can make the call fail:

    * constant and heavily tied columns are valid input (every score's sensitivity holds
      with ties; see :mod:`privgraph.causal.direction.scores`);
    * a missing or non-finite value (NaN, +-inf, None or a non-number in a plain sequence)
      is returned as NaN and replaced per record by the centre of the common scale
      (:func:`to_common_scale`), so a record holding one is an ordinary record.

    Arrays and pandas columns are typed by their dtype (bool, integer or float, pandas'
    nullable ones included); plain sequences have no declared type and are read element by
    element.

    >>> validate_pair(np.array([1, 2]), np.array(["a", "b"]), min_rows=2)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: column y must have a numeric dtype (bool, integer or float), got <U1
    >>> validate_pair([1.0, float("nan"), 3.0], [1.0, None, "a"], min_rows=2)[1].tolist()
    [1.0, nan, nan]
    """
    cols = [_numeric(v, str(getattr(v, "name", None) or name)) for v, name in ((x, "x"), (y, "y"))]
    if cols[0].size != cols[1].size:
        raise InvalidInput(f"x and y must have the same length, got {cols[0].size} and {cols[1].size}")
    if cols[0].size < min_rows:
        raise InvalidInput(f"need at least {min_rows} rows (each part needs {MIN_PART_ROWS}), got {cols[0].size}")
    return cols[0], cols[1]


def _numeric(values, name: str) -> np.ndarray:
    """A float column, NaN where a value is missing, non-finite or not a number (see above)."""
    dtype = getattr(values, "dtype", None)
    if dtype is None:  # a plain sequence: each element on its own
        cells = np.asarray(values, dtype=object)
        v = np.array([_number(e) for e in cells.ravel()], dtype=np.float64).reshape(cells.shape)
    elif getattr(dtype, "kind", None) in NUMERIC_KINDS:
        to_numpy = getattr(values, "to_numpy", None)  # pandas: nullable dtypes hold NA
        v = to_numpy(dtype=np.float64, na_value=np.nan) if to_numpy else np.asarray(values, dtype=np.float64)
    else:
        raise InvalidInput(f"column {name} must have a numeric dtype (bool, integer or float), got {dtype}")
    if v.ndim != 1:
        raise InvalidInput(f"column {name} must be 1-D, got shape {v.shape}")
    return v


def _number(value) -> float:
    return float(value) if isinstance(value, (numbers.Real, np.bool_)) else math.nan


def split_indices(n: int, test_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Training and test row indices: a uniformly random split fixed by ``rng``.

    Public randomness: no privacy argument relies on the split being secret.

    >>> tr, te = split_indices(10, 0.3, np.random.default_rng(0))
    >>> len(tr), len(te), sorted(np.concatenate([tr, te]).tolist()) == list(range(10))
    (7, 3, True)
    """
    if not (0 < test_fraction < 1):
        raise InvalidInput(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    perm = rng.permutation(n)
    m = int(round(n * test_fraction))
    return np.sort(perm[m:]), np.sort(perm[:m])


def to_common_scale(v: np.ndarray, train: np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    """Map a column to the regression scale; a non-finite value goes to the centre, 0.

    With public ``bounds = (lo, hi)``: clip to them and map linearly to [-2, 2] (clipping is
    part of the query; choose bounds about two standard deviations out); a NaN or infinite
    value becomes 0, the image of the bounds' midpoint. Without: centre and scale by the
    *training* rows' mean and standard deviation over their finite values (test-set
    privacy only: the training part is treated as public); a non-finite value becomes 0,
    the training mean. Public conventions for degenerate training data: mean 0 when no
    training value is finite, and scale 1 when their standard deviation is 0 (a constant
    column), so the map is always finite. Each test value's image depends on that value and
    on public or training-only constants: a fixed per-record map.

    >>> to_common_scale(np.array([0.0, 5.0, 20.0, np.nan]), np.array([]), (0.0, 10.0)).tolist()
    [-2.0, 0.0, 2.0, 0.0]
    >>> to_common_scale(np.array([3.0, 4.0, np.inf]), np.array([3.0, 3.0, np.nan]), None).tolist()
    [0.0, 1.0, 0.0]
    """
    if bounds is not None:
        lo, hi = bounds
        z = (np.clip(v, lo, hi) - (lo + hi) / 2) * (2 * BOUNDED_HALF_WIDTH / (hi - lo))
    else:
        known = train[np.isfinite(train)]
        with np.errstate(over="ignore", invalid="ignore"):  # overflow lands on the conventions
            centre = float(known.mean()) if known.size else 0.0
            spread = float(known.std()) if known.size else 0.0
            z = (v - centre) / (spread if spread > 0 and math.isfinite(spread) else 1.0)
    return np.where(np.isfinite(v) & np.isfinite(z), z, 0.0)  # +-inf too: one rule for every non-finite value


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
    # cycle: modes <-> data (the modes' run fits through this function)
    from privgraph.causal.direction.modes import MODES

    mode = MODES[privacy]
    train, test = split_indices(x.size, test_fraction, rng)
    bx, by = bounds
    zx, zy = to_common_scale(x, x[train], bx), to_common_scale(y, y[train], by)
    with single_threaded_blas():  # once for both fits: entering it costs about 4 ms (threadpoolctl scans libraries)
        out = _fit_each_direction(zx, zy, train, test, spread_from_training=mode.spread_from_training, ridge=ridge,
                                  lengthscale=lengthscale, rng=rng)
    shift = mode.fit_shift(ridge, train.size)
    return FittedPair(zx[test], zy[test], out["y"][0], out["x"][0], (out["y"][1], out["x"][1]), shift)


def _fit_each_direction(zx, zy, train, test, *, spread_from_training: bool, ridge, lengthscale, rng) -> dict:
    """{"y": (test residuals of Y on X, bandwidth), "x": (... of X on Y, bandwidth)}; the bandwidth
    is the training residuals' spread where the mode says so (``privacy="test"``)."""
    out = {}
    for name, cause, effect in (("y", zx, zy), ("x", zy, zx)):
        model = fit_fourier_ridge(cause[train], effect[train], ridge=ridge, lengthscale=lengthscale, rng=rng)
        if spread_from_training:  # the training residuals' spread (training part treated as public)
            with np.errstate(over="ignore", invalid="ignore"):
                width = float(np.std(effect[train] - model.predict(cause[train])))
        else:
            width = TRAIN_RESIDUAL_BANDWIDTH
        out[name] = (effect[test] - model.predict(cause[test]), float(np.clip(width, *BANDWIDTH_RANGE)))
    return out


def min_test_rows(score: str, epsilon: float) -> int:
    """The fewest test rows a decision accepts at ``epsilon``: public (n and epsilon are).

    The error bound behind it: each released score carries Laplace noise of scale
    ``sigma = 2 Delta(m) / epsilon`` (epsilon/2 per score, Delta the score's replace-one
    sensitivity on m test rows). Below the m where ``sigma <= MAX_SCORE_NOISE = 1/4``,
    even a strong margin of 0.5 would survive the noise with probability under
    ``1 - e^-2 = 0.865`` (Theorem 3), so the call is refused on the public n instead of
    returning a decision that is mostly noise. Kendall (Delta = 4/m): ``m >= 32 / epsilon``.
    The IQR score (propose-test-release: answers bottom rather than noise) and a
    non-private epsilon need only MIN_PART_ROWS.

    RECI releases one difference D in ``[-c^2, c^2]`` at ``(1 - RECI_SE_SHARE) epsilon``, with
    noise scale ``b = 2 c^2 / (m (1 - share) epsilon)``; the same rule on the score's own range
    (``b / c^2 <= MAX_SCORE_NOISE``) asks ``m >= 2 / ((1 - share) epsilon MAX_SCORE_NOISE)``:
    10 test rows at epsilon = 1.

    >>> min_test_rows("kendall", 1.0), min_test_rows("kendall", 0.5), min_test_rows("iqr", 1.0)
    (32, 64, 10)
    >>> min_test_rows("reci", 1.0), min_test_rows("reci", 0.1)
    (10, 100)
    """
    return SCORES[score].min_test_rows(epsilon)


def inferred_bounds(x: np.ndarray, y: np.ndarray):
    """Bounds read from the data (``infer_domain=True`` only: NOT private, said in the ledger).

    The central range of each column's finite values, between the quantiles
    ``INFERRED_TAIL`` and ``1 - INFERRED_TAIL`` (clipping the outer 1% each side: one far
    outlier would otherwise squeeze the rest of the column into a few bins of the grid);
    a column with no finite value gets (-1, 1) and a constant one is widened by 1/2 each
    way, so the bounds always satisfy lo < hi.

    >>> inferred_bounds(np.array([1.0, 3.0, np.nan]), np.array([2.0, 2.0, 2.0]))
    ((1.02, 2.98), (1.5, 2.5))
    """
    out = []
    for v in (x, y):
        known = v[np.isfinite(v)]
        lo, hi = (float(np.quantile(known, INFERRED_TAIL)), float(np.quantile(known, 1 - INFERRED_TAIL))) \
            if known.size else (-1.0, 1.0)
        out.append((lo, hi) if lo < hi else (lo - 0.5, hi + 0.5))
    return tuple(out)


def pair_on_public_domain(x, y, domain, bounds, infer_domain: bool):
    """(x, y, bounds, public): the pair as numbers on its public domain (see :meth:`privgraph.causal.direction.PrivateANM.fit`).

    >>> from privgraph.data import Domain, Kind
    >>> d = Domain(("u", "v"), (0, 3), (Kind.CONTINUOUS, Kind.ORDINAL), ((), ("lo", "mid", "hi")), ((0, 1), None))
    >>> x, y, b, public = pair_on_public_domain([0.5, "?"], ["hi", "mid"], d, None, False)
    >>> x.tolist(), y.tolist(), b, public
    ([0.5, nan], [2.0, 1.0], ((0, 1), (0.0, 2.0)), True)
    """
    if domain is None:
        if bounds is None and not infer_domain:
            raise DomainRequired(how_to_get_a_domain("the pair (x, y)").replace(
                "Give one:", "Give bounds=((x_lo, x_hi), (y_lo, y_hi)), or"))
        return x, y, bounds, bounds is not None or not infer_domain
    domain = resolve_domain(None, domain)
    names = [getattr(v, "name", None) or default for v, default in ((x, "x"), (y, "y"))]
    if not all(n in domain.names for n in names):
        if len(domain.names) != 2:
            raise UnknownName(f"the domain must name the pair's columns {names} or hold exactly two, got {list(domain.names)}")
        names = list(domain.names)
    values, out_bounds = [], []
    for v, name in zip((x, y), names):
        kind = domain.kinds[domain.index(name)]
        if kind is Kind.CONTINUOUS:
            if domain.bounds_of(name) is None:
                raise InvalidInput(f"continuous column {name!r} needs public bounds in the domain")
            values.append(_as_numbers(v))
            out_bounds.append(domain.bounds_of(name))
        elif kind is Kind.ORDINAL:
            codes = level_codes(v if hasattr(v, "dtype") else list(v), domain.levels[domain.index(name)]).astype(float)
            values.append(np.where(codes < 0, np.nan, codes))  # out of domain: the midpoint, like a missing value
            out_bounds.append((0.0, float(domain.size_of(name) - 1)))
        else:
            raise InvalidInput(f"column {name!r} is nominal: a causal direction needs ordered values "
                               "(continuous, or ordinal levels)")
    return values[0], values[1], tuple(out_bounds), domain.public


def _as_numbers(values) -> np.ndarray:
    """Numbers per record: text that is no number becomes NaN (missing), never an error."""
    series = values if isinstance(values, pd.Series) else pd.Series(list(np.asarray(values, dtype=object)))
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
