"""G and chi-square tests of (conditional) independence on a contingency table.

Degrees of freedom
------------------
Each stratum k (a cell of the conditioning variables) contributes
``(r_k - 1)(c_k - 1)``, where ``r_k`` and ``c_k`` count the levels of x and y *seen* in
that stratum (empty rows and columns carry no information), and nothing if it is empty.

**Zero degrees of freedom.** If the total is 0, then in every stratum x or y takes
one value only: the data cannot show any dependence given the conditioning set. The
result then has statistic 0 and p-value 1 (causal-learn's numbers), and the *verdict* is
the convention's (:class:`privgraph.stats.GTest`'s ``degenerate``): "dependent" by default
(no information is not independence; pgmpy returns NaN, which its PC also treats as
dependent), "independent" under causal-learn's convention. It matters on asia, whose
``either`` is a deterministic OR of ``tub`` and ``lung``: given ``{tub, lung}``, ``either``
is constant, every test of ``either`` against anything given that set has zero degrees of
freedom, and under causal-learn's convention the true arcs out of ``either`` are removed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import chdtrc  # scipy.stats.chi2.sf without its per-call overhead

from privgraph.stats.strata import as_strata


@dataclass(frozen=True)
class ChiSquareResult:
    """Statistic, degrees of freedom (rule above) and p-value of a G or chi-square test."""

    statistic: float
    dof: int
    pvalue: float


def degrees_of_freedom(table) -> int:
    """Degrees of freedom of a table with axes (x, y, conditioning...) by the rule above.

    >>> degrees_of_freedom([[3, 0], [0, 0]]), degrees_of_freedom([[3, 1], [2, 5]])
    (0, 1)
    """
    return strata_dof(as_strata(table))


def strata_dof(strata: np.ndarray) -> int:
    """:func:`degrees_of_freedom` of a (K, r, c) array of strata."""
    rows = (strata.sum(axis=2) > 0).sum(axis=1)
    cols = (strata.sum(axis=1) > 0).sum(axis=1)
    return int(np.maximum(rows - 1, 0) @ np.maximum(cols - 1, 0))


def g_test(table) -> ChiSquareResult:
    """The G test (likelihood ratio): ``G = 2 sum O ln(O / E)`` over cells with O > 0.

    Examples
    --------
    >>> r = g_test([[30, 10], [10, 30]])
    >>> r.dof, round(r.statistic, 3), r.pvalue < 1e-4
    (1, 20.93, True)
    >>> g_test([[5, 0], [0, 0]])   # zero degrees of freedom: independent
    ChiSquareResult(statistic=0.0, dof=0, pvalue=1.0)
    """
    return g_test_strata(as_strata(table))


def g_test_strata(strata: np.ndarray) -> ChiSquareResult:
    """:func:`g_test` of a (K, r, c) array of strata (margins summed once for E and dof)."""
    e, dof = _expected_and_dof(strata)
    o = strata.astype(np.float64)
    positive = o > 0
    terms = o[positive] * np.log(o[positive] / e[positive])  # E > 0 wherever O > 0
    return _result(2.0 * float(terms.sum()), dof)


def _expected_and_dof(strata: np.ndarray) -> tuple[np.ndarray, int]:
    e, dofs = _expected_and_dofs(strata)
    return e, int(dofs.sum())


def _expected_and_dofs(strata: np.ndarray, margins: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Expected counts and each stratum's degrees of freedom (int64, rule above), from the
    strata's ``margins`` (their row and column sums) if given."""
    rows, cols = margins if margins is not None else (_sum_axis(strata, 2), _sum_axis(strata, 1))
    n = _sum_axis(rows, 1).astype(np.float64)[:, None, None]
    # each product rounded once, as the int64 product converted: the same float64
    outer = np.einsum("ki,kj->kij", rows.astype(np.float64), cols.astype(np.float64))
    if n.all():
        e = np.divide(outer, n, out=outer)
    else:
        e = np.divide(outer, n, out=np.zeros(strata.shape), where=n > 0)
    return e, _dofs(_sum_axis(rows > 0, 1), _sum_axis(cols > 0, 1))


def _dofs(seen_rows: np.ndarray, seen_cols: np.ndarray) -> np.ndarray:
    """Strata's degrees of freedom (int64, rule above) from the counts of x's and y's
    values seen in each."""
    return (np.maximum(seen_rows - 1, 0) * np.maximum(seen_cols - 1, 0)).astype(np.int64, copy=False)


#: Cells below which :func:`_sum_axis` reduces as numpy does, and strata with one value
#: of x or y are not told apart.
_FEW_CELLS = 1 << 12


def _sum_axis(a: np.ndarray, axis: int) -> np.ndarray:
    """``a.sum(axis=axis)``; for integer or bool ``a``, exactly the same as int64 slices
    added one by one (a reduction over a short axis costs several times more).

    >>> _sum_axis(np.array([[[1, 2], [3, 4]]]), 2).tolist(), _sum_axis(np.array([[True, True]]), 1).tolist()
    ([[3, 7]], [2])
    """
    if a.dtype.kind not in "biu" or a.shape[axis] == 0:
        return a.sum(axis=axis)
    if a.size <= _FEW_CELLS:  # the slices' calls would cost more
        return a.sum(axis=axis, dtype=np.int64)
    total = np.int64
    if a.dtype == bool and a.shape[axis] < 256:  # counts of True: in uint8, one type throughout
        a, total = a.view(np.uint8), np.uint8
    index = (slice(None),) * axis
    out = a[(*index, 0)].astype(total)
    for i in range(1, a.shape[axis]):
        out += a[(*index, i)]
    return out.astype(np.int64, copy=False)


def g_by_stratum(strata: np.ndarray | ColumnBlocks) -> tuple[np.ndarray, np.ndarray]:
    """Each stratum's G statistic and degrees of freedom: a table's G and dof are their
    sums over its strata (what a batch of tables needs). ``strata``: a (K, r, c) array or
    :class:`ColumnBlocks`.

    >>> g, dof = g_by_stratum(np.array([[[30, 10], [10, 30]], [[5, 0], [0, 0]]]))
    >>> np.round(g, 3).tolist(), dof.tolist()
    ([20.93, 0.0], [1, 0])
    """
    if isinstance(strata, ColumnBlocks):
        return strata.by_stratum(_g_terms, 2.0)
    return _informative_only(strata, _g_by_stratum)


def _g_by_stratum(strata: np.ndarray, margins: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    e, dofs = _expected_and_dofs(strata, margins)
    return 2.0 * _g_terms(strata.astype(np.float64), e).sum(axis=(1, 2)), dofs


def _g_terms(o: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The cells' terms of G / 2: ``O ln(O / E)``, 0 where O = 0 (E > 0 wherever O > 0).
    Divided everywhere, then picked: a few times faster than a masked divide."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(o > 0, o / e, 1.0)
    return o * np.log(ratio)


#: Rows of a stratum below which ``n * O / n == O`` exactly in float64 (n^2 < 2^53).
_EXACT_ROWS = 1 << 26


def _informative_only(strata: np.ndarray, by_stratum) -> tuple[np.ndarray, np.ndarray]:
    """``by_stratum`` computed on the strata with information only: a stratum of 0 or 1
    row, or of counts (integers) in which x or y takes one value only, has statistic
    exactly 0 and no degrees of freedom (sparse batches are mostly such strata). In the
    latter E = O exactly (``n * O / n``, exact below :data:`_EXACT_ROWS` rows), so every
    term of G and of Pearson's statistic is 0. ``by_stratum(strata, margins)`` is given
    the strata's row and column sums."""
    rows, cols = _sum_axis(strata, 2), _sum_axis(strata, 1)
    sizes = _sum_axis(rows, 1)
    keep = sizes >= 2
    if strata.dtype.kind in "biu" and strata.size > _FEW_CELLS:  # worth a filter
        keep &= (_sum_axis(rows > 0, 1) > 1) & (_sum_axis(cols > 0, 1) > 1) | (sizes >= _EXACT_ROWS)
    keep = np.flatnonzero(keep)
    if len(keep) == len(sizes):
        return by_stratum(strata, (rows, cols))
    stats, dofs = np.zeros(len(sizes)), np.zeros(len(sizes), dtype=np.int64)
    picked = [np.take(a, keep, axis=0) for a in (strata, rows, cols)]  # faster than a[keep]
    stats[keep], dofs[keep] = by_stratum(picked[0], tuple(picked[1:]))
    return stats, dofs


def chi_square_by_stratum(strata: np.ndarray | ColumnBlocks) -> tuple[np.ndarray, np.ndarray]:
    """Each stratum's Pearson statistic and degrees of freedom (see :func:`g_by_stratum`).

    >>> x2, dof = chi_square_by_stratum(np.array([[[30, 10], [10, 30]]]))
    >>> x2.tolist(), dof.tolist()
    ([20.0], [1])
    """
    if isinstance(strata, ColumnBlocks):
        return strata.by_stratum(_chi_square_terms, 1.0)
    return _informative_only(strata, _chi_square_by_stratum)


def _chi_square_by_stratum(strata: np.ndarray, margins: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    e, dofs = _expected_and_dofs(strata, margins)
    return _chi_square_terms(strata, e).sum(axis=(1, 2)), dofs


def _chi_square_terms(o: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The cells' terms of Pearson's statistic: ``(O - E)^2 / E``, 0 where E = 0 (divided
    everywhere, then picked, as in :func:`_g_terms`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(e > 0, (o - e) ** 2 / e, 0.0)


class ColumnBlocks:
    """Strata that share their x rows and split their columns into blocks: stratum (g, b)
    is ``counts[b, :, bounds[g]:bounds[g + 1]]`` for ``counts`` (B, r, W) integers (columns
    outside the blocks are ignored), strata ordered g first. Every table (x, v, *P, s) of
    a gram given (x, *P) is such a batch (b a cell of (P, s), g a column v), whose
    statistics cost a few passes over the counts instead of one gather per stratum.

    Each stratum's statistic is the same sum of the same terms as for the (K, r, c) array
    of the strata, so the numbers are the same; empty strata count, with statistic and
    dof 0 (so do those in which x or y takes one value: their E equals O exactly).

    >>> counts = np.array([[[30, 10, 5], [10, 30, 0]]])   # one b, two blocks of columns
    >>> g, dof = g_by_stratum(ColumnBlocks(counts, np.array([0, 2, 3])))
    >>> np.round(g, 3).tolist(), dof.tolist()
    ([20.93, 0.0], [1, 0])
    """

    def __init__(self, counts: np.ndarray, bounds: np.ndarray):
        self.counts, self.bounds = counts, np.asarray(bounds, dtype=np.intp)

    def by_stratum(self, terms, scale: float) -> tuple[np.ndarray, np.ndarray]:
        """Each stratum's ``scale * sum(terms(O, E))`` over its cells, and its dof (flat, g first)."""
        lo, hi = int(self.bounds[0]), int(self.bounds[-1])
        counts, starts = self.counts[:, :, lo:hi], self.bounds[:-1] - lo
        widths = np.diff(self.bounds)
        block_of = np.repeat(np.arange(len(widths)), widths)  # each column's block
        rows = np.add.reduceat(counts, starts, axis=2)  # (B, r, G)
        cols = counts.sum(axis=1)  # (B, W)
        n = rows.sum(axis=1)  # (B, G)
        e = rows.astype(np.float64)[:, :, block_of] * cols.astype(np.float64)[:, None, :]
        e /= np.maximum(n, 1).astype(np.float64)[:, None, block_of]  # an empty stratum's E: 0
        cells = terms(counts.astype(np.float64), e)
        stats = np.empty((len(widths), counts.shape[0]))
        for c in sorted(set(widths.tolist())):  # strata of c columns: (K, r, c) as summed one by one
            blocks = np.flatnonzero(widths == c)
            picked = cells[:, :, (starts[blocks][:, None] + np.arange(c)).ravel()]
            picked = picked.reshape(*counts.shape[:2], len(blocks), c).transpose(2, 0, 1, 3)
            stats[blocks] = scale * np.ascontiguousarray(picked).reshape(-1, *picked.shape[2:]).sum(
                axis=(1, 2)).reshape(len(blocks), -1)
        seen_cols = np.add.reduceat(cols > 0, starts, axis=1, dtype=np.int64)  # (B, G)
        dofs = _dofs(_sum_axis(rows > 0, 1), seen_cols)
        return stats.ravel(), dofs.T.ravel()


def chi_square_test(table) -> ChiSquareResult:
    """Pearson's chi-square test: ``sum (O - E)^2 / E`` over cells with E > 0.

    >>> r = chi_square_test([[30, 10], [10, 30]])
    >>> r.dof, r.statistic
    (1, 20.0)
    """
    return chi_square_strata(as_strata(table))


def chi_square_strata(strata: np.ndarray) -> ChiSquareResult:
    """:func:`chi_square_test` of a (K, r, c) array of strata."""
    e, dof = _expected_and_dof(strata)
    terms = np.divide((strata - e) ** 2, e, out=np.zeros(e.shape), where=e > 0)
    return _result(float(terms.sum()), dof)


def _result(statistic: float, dof: int) -> ChiSquareResult:
    if dof == 0:
        return ChiSquareResult(0.0, 0, 1.0)
    return ChiSquareResult(max(statistic, 0.0), dof, float(chdtrc(dof, max(statistic, 0.0))))
