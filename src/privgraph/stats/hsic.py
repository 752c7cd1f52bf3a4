"""The Hilbert-Schmidt independence criterion with Gaussian kernels (private-anm.txt, eq. 4.4)."""

from __future__ import annotations

import numpy as np
from privgraph.validation import InvalidInput

#: Largest sample HSIC accepts by default: it builds m-by-m kernel matrices.
MAX_HSIC_ROWS = 5000


def hsic(x, y, *, bandwidth_x: float = 1.0, bandwidth_y: float = 1.0, max_rows: int = MAX_HSIC_ROWS) -> float:
    """Biased empirical HSIC, ``trace(K H L H) / (m - 1)^2``, with Gaussian kernels.

    ``k(a, b) = exp(-|a - b|^2 / (2 bandwidth^2))`` takes values in (0, 1] with
    ``k(a, a) = 1``, the bounded kernel that :func:`~privgraph.stats.sensitivity.hsic_sensitivity_replace_one`
    assumes. The bandwidths must be fixed in advance (not the median heuristic, which
    depends on the data and voids the sensitivity bound). ``x`` and ``y`` are 1-D (any m:
    computed by blocks in O(m) memory) or (m, features) (at most ``max_rows`` rows: it
    builds the m-by-m kernel matrices).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(size=300)
    >>> hsic(a, a) > 10 * hsic(a, rng.normal(size=300))
    True
    """
    if np.ndim(x) == 1 and np.ndim(y) == 1:
        a, b = _vector(x, bandwidth_x, "x"), _vector(y, bandwidth_y, "y")
        if a.size != b.size:
            raise InvalidInput(f"x and y must have the same number of rows, got {a.size} and {b.size}")
        if a.size < 2:
            raise InvalidInput(f"HSIC needs 2 <= m rows, got {a.size}")
        return _blocked_hsic(a, b, bandwidth_x, bandwidth_y)
    kx, ky = _gram(x, bandwidth_x, "x"), _gram(y, bandwidth_y, "y")
    m = kx.shape[0]
    if ky.shape[0] != m:
        raise InvalidInput(f"x and y must have the same number of rows, got {m} and {ky.shape[0]}")
    if m < 2 or m > max_rows:
        raise InvalidInput(f"HSIC needs 2 <= m <= max_rows={max_rows} rows, got {m}")
    return float((centred(kx) * ky).sum()) / (m - 1) ** 2


def centred(k: np.ndarray) -> np.ndarray:
    """``H K H`` for a Gram matrix ``K`` and the centring matrix ``H = I - 11'/m``.

    >>> centred(np.array([[1.0, 0.0], [0.0, 1.0]]))
    array([[ 0.5, -0.5],
           [-0.5,  0.5]])
    """
    return k - k.mean(axis=0) - k.mean(axis=1, keepdims=True) + k.mean()


def _blocked_hsic(x: np.ndarray, y: np.ndarray, bandwidth_x: float, bandwidth_y: float, block: int = 512) -> float:
    """HSIC of 1-D samples in O(m) memory, about 20 times faster than the matrix form.

    ``(m - 1)^2 HSIC = sum(K * L) - (2/m) (K 1) . (L 1) + (1' K 1)(1' L 1) / m^2``, computed
    over blocks of rows with pairwise summation. Each term is at most ``2 m^2`` and carries
    a relative rounding error below 1e-10 in float64 for m up to 10^6, so the computed value
    is within 5e-10 of the exact one (a private release adds that to its sensitivity).

    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=700), rng.normal(size=700)
    >>> abs(hsic(a, a + b, bandwidth_y=0.5) - hsic(a[:, None], (a + b)[:, None], bandwidth_y=0.5)) < 1e-12
    True
    """
    m = x.size
    ax, ay = -0.5 / bandwidth_x**2, -0.5 / bandwidth_y**2
    rk, rl, skl = np.empty(m), np.empty(m), 0.0
    for s in range(0, m, block):
        with np.errstate(over="ignore"):  # a square past 1e308 is inf: its kernel value is exactly 0
            k = np.exp(ax * np.square(x[s:s + block, None] - x[None, :]))
            l_ = np.exp(ay * np.square(y[s:s + block, None] - y[None, :]))
        rk[s:s + block], rl[s:s + block] = k.sum(axis=1), l_.sum(axis=1)
        skl += float((k * l_).sum(axis=1).sum())
    return (skl - 2.0 / m * float(rk @ rl) + float(rk.sum()) * float(rl.sum()) / m**2) / (m - 1) ** 2


def _vector(v, bandwidth: float, name: str) -> np.ndarray:
    if not (np.isscalar(bandwidth) and 0 < bandwidth < np.inf):
        raise InvalidInput(f"bandwidth_{name} must be positive and finite, got {bandwidth!r}")
    v = np.asarray(v, dtype=np.float64)
    if not np.isfinite(v).all():
        raise InvalidInput(f"{name} must be finite")
    return v


def _gram(v, bandwidth: float, name: str) -> np.ndarray:
    if not (np.isscalar(bandwidth) and 0 < bandwidth < np.inf):
        raise InvalidInput(f"bandwidth_{name} must be positive and finite, got {bandwidth!r}")
    v = np.asarray(v, dtype=np.float64)
    v = v[:, None] if v.ndim == 1 else v
    if v.ndim != 2 or not np.isfinite(v).all():
        raise InvalidInput(f"{name} must be a finite 1-D or 2-D array, got shape {v.shape}")
    sq = (v**2).sum(axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * v @ v.T, 0.0)
    return np.exp(-d2 / (2.0 * bandwidth**2))
