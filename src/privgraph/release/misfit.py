"""Where a release's model answers worst, as far as its released values can tell (issue 46, item 2).

Post-processing only: the released noisy tables, the model fitted to them, the public domain
and cap; no data is read, so the report may show all of it at no cost.

1. **Measured tables.** A released table ``y`` (a clique's counts, or their sums over bins)
   carries noise of a public scale; had the model the true table ``N p``, the distance would
   be the noise's, ``E ||y - N p||_1 = sqrt(2/pi) sigma c`` for Gaussian noise (``b c`` for
   Laplace) over ``c`` cells, with standard deviation ``sigma sqrt((1 - 2/pi) c)`` (``b
   sqrt(c)``). The model's table ``N p_model`` is compared with ``y`` the same way
   (:func:`table_misfits`); a table beyond the noise's mean plus :data:`BEYOND_SDS` standard
   deviations is one the model does not hold together with the others (at most one table in
   ten by Cantelli's bound were the model the truth). Both are shown as total-variation
   distances (the L1 distance over ``2 N``).
2. **Pairs not measured** (:func:`unmeasured_pairs`): a pair of columns in no released
   full-resolution table is answered only through the model's structure; the reason is
   public: measured only in bins, kept out by the model-size cap (adding it would pass
   ``tree_cap``), or not selected. The widest come first: on the real tables of
   docs/benchmarks/release.md most of the error above the sampling floor is in pairs left to
   the structure, the worst of them wide pairs the cap kept out
   (benchmarks/results/release_error_anatomy.jsonl).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from privgraph.mrf.inference import infer
from privgraph.mrf.noisy_tables import coarsen
from privgraph.release.model_size import fits
from privgraph.release.stage import stage_of

#: A measured table is flagged when the model's distance to it passes the noise's expected
#: distance by this many of the noise's standard deviations (Cantelli: at most 1 / (1 + 3^2)
#: of the tables of a true model would be).
BEYOND_SDS = 3.0
_ABS_NORMAL = math.sqrt(2 / math.pi)


@dataclass(frozen=True)
class Misfit:
    """One released table against the model: ``distance`` (the model's table against the
    noisy one) and ``noise`` (the distance the noise alone explains, its expectation), both as
    total-variation distances; ``beyond``: past the noise by :data:`BEYOND_SDS` deviations."""

    clique: tuple[str, ...]
    binned: bool
    cells: int
    scale: float
    distance: float
    noise: float
    beyond: bool

    @property
    def ratio(self) -> float:
        return self.distance / self.noise if self.noise > 0 else math.inf


def noise_l1(noise: str, scale: float, cells: int) -> tuple[float, float]:
    """(mean, standard deviation) of the L1 norm of a table's noise: ``cells`` independent
    cells of Gaussian sigma ``scale`` or Laplace scale ``scale`` (public).

    >>> [round(x, 3) for x in noise_l1("gaussian", 2.0, 100)]
    [159.577, 12.056]
    >>> noise_l1("laplace", 2.0, 100)
    (200.0, 20.0)
    """
    if noise == "gaussian":
        return _ABS_NORMAL * scale * cells, scale * math.sqrt((1 - 2 / math.pi) * cells)
    return scale * cells, scale * math.sqrt(cells)


def released_groups(noisy) -> list[tuple[tuple[str, ...], object, np.ndarray, float]]:
    """``(clique, bins, table, scale)`` per distinct released table of a NoisyMarginals: a
    table released more than once under Gaussian noise (a pair measured again) is combined
    by inverse variance, as the rounds combine it (post-processing).

    >>> from privgraph.data import Domain
    >>> from privgraph.mrf.noisy_tables import NoisyMarginals
    >>> y = np.array([[1.0, 2], [3, 4]])
    >>> t = NoisyMarginals(Domain.of(a=2, b=2), (("a", "b"), ("b", "a")), (0, 1), (y, y.T + 2), "gaussian", 3.0,
    ...                    10.0, scales=(3.0, 4.0))
    >>> [(c, table.round(2).tolist(), round(scale, 2)) for c, _, table, scale in released_groups(t)]
    [(('a', 'b'), [[1.72, 2.72], [3.72, 4.72]], 2.4)]
    """
    out: dict = {}
    for g, clique in enumerate(noisy.group_cliques()):
        bins = noisy.group_bins(g)
        key = (frozenset(clique), repr(bins), g if noisy.noise != "gaussian" else None)
        table, scale = np.asarray(noisy.tables[g], dtype=float), float(noisy.group_scales[g])
        if key in out:
            c, b, old, s = out[key]
            w_old, w_new = s**-2, scale**-2
            if tuple(clique) != c:  # the same columns in another order: the earlier table's axes
                table = np.transpose(table, [clique.index(v) for v in c])
            table, scale = (w_old * old + w_new * table) / (w_old + w_new), (w_old + w_new) ** -0.5
            clique = c
        out[key] = (tuple(clique), bins, table, scale)
    return list(out.values())


def table_misfits(noisy, model_table, records: float) -> list[Misfit]:
    """Every distinct released table of ``noisy`` against the model, worst first (largest
    distance over the noise's). ``model_table(clique)``: the model's probability table over
    ``clique`` (its codes, axes in the clique's order); ``records``: N, the release's number of
    rows (public or estimated from the noisy tables). Post-processing.

    >>> from privgraph.data import Domain
    >>> from privgraph.mrf.noisy_tables import NoisyMarginals
    >>> d = Domain.of(a=2, b=2)
    >>> y = (np.array([510.0, 490.0]), np.array([[400.0, 95], [110, 395]]))
    >>> t = NoisyMarginals(d, (("a",), ("a", "b")), (0, 1), y, "gaussian", 10.0, 1000.0)
    >>> truth = {("a",): np.array([0.5, 0.5]), ("a", "b"): np.array([[0.4, 0.1], [0.1, 0.4]])}
    >>> [(m.clique, m.beyond) for m in table_misfits(t, truth.__getitem__, 1000.0)]
    [(('a',), False), (('a', 'b'), False)]
    >>> uniform = {("a",): np.array([0.5, 0.5]), ("a", "b"): np.full((2, 2), 0.25)}
    >>> worst = table_misfits(t, uniform.__getitem__, 1000.0)[0]
    >>> worst.clique, round(worst.distance, 3), round(worst.noise, 4), worst.beyond
    (('a', 'b'), 0.295, 0.016, True)
    """
    out = []
    for clique, bins, table, scale in released_groups(noisy):
        expected = coarsen(np.asarray(model_table(clique), dtype=float), bins) * records
        mean, sd = noise_l1(noisy.noise, scale, table.size)
        l1 = float(np.abs(table - expected.reshape(table.shape)).sum())
        out.append(Misfit(clique, bins is not None and any(b is not None for b in bins), int(table.size), scale,
                          l1 / (2 * records), mean / (2 * records), l1 > mean + BEYOND_SDS * sd))
    return sorted(out, key=lambda m: -m.ratio)


@dataclass(frozen=True)
class Unmeasured:
    """A pair of columns in no released full-resolution table: answered through the model's
    structure only. ``reason``: ``"bins"`` (measured only with a wide column in bins),
    ``"cap"`` (adding its table would pass the model-size cap) or ``"not selected"``;
    ``merged``: its columns whose rare levels were merged into one code."""

    pair: tuple[str, str]
    cells: int
    reason: str
    merged: tuple[str, ...] = ()


def unmeasured_count(domain, measured) -> int:
    """How many pairs of ``domain``'s columns are inside no clique of ``measured``.

    >>> from privgraph.data import Domain
    >>> unmeasured_count(Domain.of(a=2, b=2, c=2), [("a", "b")])
    2
    """
    inside = _inside(measured)
    return sum(frozenset(p) not in inside for p in itertools.combinations(domain.names, 2))


def _inside(cliques) -> set:
    return {frozenset(p) for c in cliques for p in itertools.combinations(c, 2)}


def unmeasured_pairs(domain, measured, *, tree_cap: int, binned=(), merged=(),
                     limit: int | None = None) -> list[Unmeasured]:
    """Every pair of ``domain``'s columns inside no clique of ``measured`` (the released
    full-resolution tables' cliques), widest first, with its public reason
    (:class:`Unmeasured`); ``binned``: the cliques released in bins (the model's cliques are
    both); ``merged``: the columns whose rare levels were merged. Public facts and released
    structure only. ``limit``: the widest ``limit`` only (each reason is a triangulation of
    the model with the pair: a wide domain has many pairs).

    >>> from privgraph.data import Domain
    >>> d = Domain.of(a=10, b=10, c=10, e=2)
    >>> [(u.pair, u.cells, u.reason) for u in unmeasured_pairs(d, [("a", "b"), ("b", "c"), ("c", "e")],
    ...                                                       tree_cap=1000, binned=[("b", "e")], merged=["e"])]
    [(('a', 'c'), 100, 'cap'), (('a', 'e'), 20, 'not selected'), (('b', 'e'), 20, 'bins')]
    """
    inside, in_bins = _inside(measured), _inside(binned)
    model = [*measured, *binned]  # a table in bins is a clique of the model over its codes all the same
    pairs = sorted((p for p in itertools.combinations(domain.names, 2) if frozenset(p) not in inside),
                   key=lambda p: -domain.cells(p))  # stable: the domain's order among equals
    out = []
    for pair in pairs[:limit]:
        reason = ("bins" if frozenset(pair) in in_bins else
                  "cap" if not fits(domain, model, pair, tree_cap) else "not selected")
        out.append(Unmeasured(pair, int(domain.cells(pair)), reason, tuple(v for v in pair if v in set(merged))))
    return out


def release_tables(release):
    """Every noisy table a fitted release's model was fitted to (one NoisyMarginals): the
    tree's tables and its rounds' with the last round's, or the parameters' tables."""
    return stage_of(release).released_tables(release)


def release_misfits(release, limit: int | None = None) -> tuple[list[Misfit], list[Unmeasured], int]:
    """(:func:`table_misfits`, :func:`unmeasured_pairs` up to ``limit``, :func:`unmeasured_count`)
    of a fitted ``PrivateRelease``: its released tables against its model (one exact inference
    on its junction tree), and the pairs it does not measure. Post-processing of the release."""
    noisy = release_tables(release)
    model = release.parameters_.model_
    known = dict(zip((tuple(c) for c in model.cliques), infer(model, max_cells=release.tree_cap).marginals))

    def model_table(clique):
        if tuple(clique) in known:
            return known[tuple(clique)]
        return release.parameters_.marginal(clique, max_cells=release.tree_cap)

    misfits = table_misfits(noisy, model_table, float(noisy.records))
    full = [c for g, c in enumerate(noisy.group_cliques()) if _full(noisy.group_bins(g))]
    binned = [c for g, c in enumerate(noisy.group_cliques()) if not _full(noisy.group_bins(g))]
    unmeasured = unmeasured_pairs(noisy.domain, full, tree_cap=release.tree_cap, binned=binned,
                                  merged=list(release.levels_.merged_text()), limit=limit)
    return misfits, unmeasured, unmeasured_count(noisy.domain, full)


def _full(bins) -> bool:
    return bins is None or all(b is None for b in bins)


__all__ = ["BEYOND_SDS", "Misfit", "Unmeasured", "noise_l1", "release_misfits", "release_tables", "released_groups",
           "table_misfits", "unmeasured_count", "unmeasured_pairs"]
