"""The Hilbert-Schmidt independence criterion with Gaussian kernels (private-anm.txt, eq. 4.4)."""

from __future__ import annotations

import numpy as np

#: Largest sample HSIC accepts by default: it builds m-by-m kernel matrices.
MAX_HSIC_ROWS = 5000


def hsic(x, y, *, bandwidth_x: float = 1.0, bandwidth_y: float = 1.0, max_rows: int = MAX_HSIC_ROWS) -> float:
    """Biased empirical HSIC, ``trace(K H L H) / (m - 1)^2``, with Gaussian kernels.

    ``k(a, b) = exp(-|a - b|^2 / (2 bandwidth^2))`` takes values in (0, 1] with
    ``k(a, a) = 1``, the bounded kernel that :func:`~privgraph.stats.sensitivity.hsic_sensitivity_replace_one`
    assumes. The bandwidths must be fixed in advance (not the median heuristic, which
    depends on the data and voids the sensitivity bound). ``x`` and ``y`` are 1-D or
    (m, features).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(size=300)
    >>> hsic(a, a) > 10 * hsic(a, rng.normal(size=300))
    True
    """
    kx, ky = _gram(x, bandwidth_x, "x"), _gram(y, bandwidth_y, "y")
    m = kx.shape[0]
    if ky.shape[0] != m:
        raise ValueError(f"x and y must have the same number of rows, got {m} and {ky.shape[0]}")
    if m < 2 or m > max_rows:
        raise ValueError(f"HSIC needs 2 <= m <= max_rows={max_rows} rows, got {m}")
    kc = kx - kx.mean(axis=0) - kx.mean(axis=1, keepdims=True) + kx.mean()
    return float((kc * ky).sum()) / (m - 1) ** 2


def _gram(v, bandwidth: float, name: str) -> np.ndarray:
    if not (np.isscalar(bandwidth) and 0 < bandwidth < np.inf):
        raise ValueError(f"bandwidth_{name} must be positive and finite, got {bandwidth!r}")
    v = np.asarray(v, dtype=np.float64)
    v = v[:, None] if v.ndim == 1 else v
    if v.ndim != 2 or not np.isfinite(v).all():
        raise ValueError(f"{name} must be a finite 1-D or 2-D array, got shape {v.shape}")
    sq = (v**2).sum(axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * v @ v.T, 0.0)
    return np.exp(-d2 / (2.0 * bandwidth**2))
