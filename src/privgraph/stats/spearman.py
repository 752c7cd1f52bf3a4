"""Spearman's rho from contingency tables, on raw data, and stratified (priv-pc.txt Appendix E).

Ranks are mid-ranks (tied rows share the mean of their ranks). With ``u_i``, ``v_i`` the
centred mid-ranks (mid-rank minus ``(n + 1) / 2``):

* rho-b ``= sum(u v) / sqrt(sum(u^2) sum(v^2))``: Pearson's correlation of the mid-ranks,
  scipy's ``spearmanr``. No useful global sensitivity on tied data.
* rho-a ``= 12 sum(u v) / (n (n^2 - 1))``: no tie correction (as tau-a). Without ties it
  equals rho-b, and its sensitivity is bounded on any data (:mod:`privgraph.stats.sensitivity`).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata, spearmanr

from privgraph.stats.strata import MIN_STRATUM, StratifiedZ, as_strata, combine_z, two_d_strata
from privgraph.validation import InvalidInput


def centred_midranks(margin: np.ndarray) -> np.ndarray:
    """Centred mid-rank of each level, from its margin counts (last axis), per stratum.

    >>> centred_midranks(np.array([[2, 1, 1]])).tolist()   # ranks 1.5, 3, 4 about 2.5
    [[-1.0, 0.5, 1.5]]
    """
    m = margin.astype(np.float64)
    before = np.cumsum(m, axis=-1) - m
    n = m.sum(axis=-1, keepdims=True)
    return before + (m + 1.0) / 2.0 - (n + 1.0) / 2.0


def rank_cross_products(strata: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per stratum: ``sum(u v)``, ``sum(u^2)`` and ``sum(v^2)`` over its rows."""
    t = strata.astype(np.float64)
    u, v = centred_midranks(t.sum(axis=2)), centred_midranks(t.sum(axis=1))
    q = np.einsum("kr,krc,kc->k", u, t, v)
    return q, (t.sum(axis=2) * u**2).sum(axis=1), (t.sum(axis=1) * v**2).sum(axis=1)


def spearman_rho_a(table) -> float:
    """Spearman's rho-a (mid-ranks, no tie correction) of a 2-D table.

    Examples
    --------
    >>> spearman_rho_a([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    1.0
    >>> round(spearman_rho_a([[2, 0], [0, 2]]), 4)  # ties pull rho-a below 1
    0.8
    """
    strata = two_d_strata(table, "Spearman's rho")
    n = int(strata.sum())
    q, _, _ = rank_cross_products(strata)
    return float(12.0 * q[0] / (n * (n * n - 1.0)))


def spearman_rho_b(table) -> float:
    """Spearman's rho-b of a 2-D table (``scipy.stats.spearmanr`` on the rows).

    >>> spearman_rho_b([[2, 0], [0, 2]])
    1.0
    >>> spearman_rho_b([[2, 3]])
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: rho-b is undefined: x takes one value only in this table
    """
    strata = two_d_strata(table, "Spearman's rho")
    q, suu, svv = rank_cross_products(strata)
    for name, ss in (("x", suu[0]), ("y", svv[0])):
        if ss == 0:
            raise InvalidInput(f"rho-b is undefined: {name} takes one value only in this table")
    return float(np.clip(q[0] / np.sqrt(suu[0] * svv[0]), -1.0, 1.0))


def spearman_rho_raw(x, y) -> float:
    """Spearman's rho-b of paired raw values (scipy), with the same undefined-case error.

    >>> spearman_rho_raw([1, 2, 3], [1, 3, 2])
    0.5
    """
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 1 or x.shape != y.shape or x.size < 2:
        raise InvalidInput(f"x and y must be 1-D, of the same length >= 2, got shapes {x.shape}, {y.shape}")
    for name, v in (("x", x), ("y", y)):
        if np.all(v == v[0]):
            raise InvalidInput(f"rho-b is undefined: {name} takes one value only")
    return float(spearmanr(x, y).statistic)


def conditional_spearman(table, *, min_stratum: int = MIN_STRATUM) -> StratifiedZ:
    """Stratified Spearman z (priv-pc.txt Appendix E) with rho-a in each stratum.

    ``z = sum(w_k rho_k) / sqrt(sum(w_k))`` with ``w_k = n_k - 1`` (the inverse null
    variance of rho), over strata with ``n_k >= min_stratum`` rows; z = 0, p = 1 if none.

    >>> t = np.zeros((2, 2, 2), dtype=int)
    >>> t[:, :, 0] = [[30, 5], [5, 30]]
    >>> r = conditional_spearman(t)
    >>> r.strata, r.rows, r.pvalue < 1e-4
    (1, 70, True)
    """
    strata = as_strata(table)
    sizes = strata.sum(axis=(1, 2))
    keep = sizes >= min_stratum
    return combine_z(*spearman_terms(strata[keep]), sizes[keep])


def spearman_terms(strata: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each stratum's share of the stratified Spearman z, ``(w_k rho_k, w_k)`` with
    ``w_k = n_k - 1``: ``z = sum(first) / sqrt(sum(second))``.

    >>> a, w = spearman_terms(np.array([[[2, 0], [0, 3]]]))
    >>> round(float(a[0]), 4), w.tolist()
    (3.0, [4.0])
    """
    q, _, _ = rank_cross_products(strata)
    m = strata.sum(axis=(1, 2)).astype(np.float64)
    return 12.0 * q / (m * (m + 1.0)), m - 1.0


def spearman_rho_a_raw(x, y) -> float:
    """Spearman's rho-a (mid-ranks, no tie correction) of raw paired values.

    ``12 sum(u v) / (m (m^2 - 1))`` with u, v the centred mid-ranks; equals scipy's rho
    without ties. Unlike rho-b (:func:`spearman_rho_raw`), its replace-one sensitivity
    holds with ties (:func:`~privgraph.stats.sensitivity.spearman_rho_a_sensitivity_replace_one`).

    >>> spearman_rho_a_raw(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]))
    0.5
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    m = x.size
    u, v = rankdata(x) - (m + 1) / 2, rankdata(y) - (m + 1) / 2
    return float(12.0 * np.dot(u, v) / (m * (m * m - 1.0)))
