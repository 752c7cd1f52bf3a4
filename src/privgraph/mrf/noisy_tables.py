"""The one private step of every marginal-based estimator: noisy clique tables.

Each record adds one count to each of the ``|C|`` clique tables, so the vector of all
tables has L1 sensitivity ``|C|`` under add/remove (``2|C|`` under replace-one) and L2
sensitivity ``sqrt(|C|)`` (``sqrt(2|C|)``). When the privacy unit is an individual with
several records whose contribution to each table is normalised to total weight at most one
(see :mod:`privgraph.mrf.individuals`), the same bounds hold per individual.

Everything downstream (CGM-EM, naive MLE) is post-processing of :class:`NoisyMarginals`.
"""

from __future__ import annotations

import math
import functools
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.mrf.model import check_cliques
from privgraph.privacy import (
    Budget, Ledger, Neighbours, NoiseSampler, Release, gaussian_calibration, gaussian_charge,
    gaussian_mechanism, histogram_l1_sensitivity, histogram_l2_sensitivity, laplace_charge, laplace_mechanism,
    laplace_scale,
)
from privgraph.validation import InvalidInput, one_of

NOISES = ("laplace", "gaussian")


@dataclass(frozen=True)
class NoisyMarginals:
    """Released clique tables and what the estimators need to know about their noise.

    ``tables[g]`` is the noisy count table of parameter group ``g`` (a clique, or the sum
    of tied cliques' tables); ``ties`` maps each clique to its group. ``noise`` is
    ``"laplace"`` (``scale`` = b) or ``"gaussian"`` (``scale`` = sigma). ``scales``: each
    group's own scale when the tables came from releases of different noise (joined
    releases, :func:`join_releases`); None when every group has ``scale``, which is then
    the largest. ``records`` is the number of privacy units: estimated from the noisy
    tables under add/remove, the public count under replace-one. ``unit`` names the privacy
    unit ("record" or "individual").

    ``bins``: None when every table is over its clique's codes; else one entry per group,
    None (full resolution) or a *coarsened* table's bins: per axis of the group's clique,
    None (kept) or the bin of each code (:func:`coarsen`). A coarsened group's table is
    the sum of the clique's cells in each bin (a linear measurement, as Private-PGM's query
    matrices); its model potential stays over the clique's codes (CGM-EM takes it as the
    linear map, :mod:`privgraph.mrf.cgm`). Only CGM-EM fits coarsened tables.
    """

    domain: Domain
    cliques: tuple[tuple[str, ...], ...]
    ties: tuple[int, ...]
    tables: tuple[np.ndarray, ...]
    noise: str
    scale: float
    records: float
    unit: str = "record"
    scales: tuple[float, ...] | None = None
    bins: tuple | None = None

    @property
    def group_sizes(self) -> tuple[int, ...]:
        return tuple(self.ties.count(g) for g in range(len(self.tables)))

    @property
    def group_scales(self) -> tuple[float, ...]:
        """Each group's noise scale (``scales``, or ``scale`` for every group)."""
        return self.scales if self.scales is not None else (float(self.scale),) * len(self.tables)

    def cell_scales(self) -> np.ndarray:
        """The noise scale of every cell, the groups' tables flattened in order."""
        return np.repeat(np.asarray(self.group_scales, dtype=np.float64), [t.size for t in self.tables])

    def group_cliques(self) -> tuple[tuple[str, ...], ...]:
        """The first clique of each group (the axis order of its table and potential)."""
        return tuple(self.cliques[self.ties.index(g)] for g in range(len(self.tables)))

    def group_bins(self, g: int):
        """Group ``g``'s bins (per axis: None or each code's bin), None at full resolution."""
        return None if self.bins is None else self.bins[g]

    @property
    def has_bins(self) -> bool:
        """Whether some table is coarsened (:attr:`bins`)."""
        return self.bins is not None and any(b is not None for b in self.bins)

    def potential_shapes(self) -> tuple[tuple[int, ...], ...]:
        """The shape of each group's model potential: its clique's codes (a coarsened table
        is smaller). Computed once: CGM-EM asks every iteration."""
        return self._potential_shapes

    @functools.cached_property
    def _potential_shapes(self) -> tuple[tuple[int, ...], ...]:
        return tuple(self.domain.project(c).shape for c in self.group_cliques())

    def to_tables(self, flat: np.ndarray) -> np.ndarray:
        """Flat values over the potentials' cells (groups in order) summed into their tables'
        cells: the measurement's linear map (the identity without coarsened tables)."""
        index = self._table_index
        return flat if index is None else np.bincount(index, weights=flat, minlength=self._table_cells)

    def to_potentials(self, flat: np.ndarray) -> np.ndarray:
        """Flat values over the tables' cells spread to the potentials' cells (the transpose
        of :meth:`to_tables`: each code takes its bin's value)."""
        index = self._table_index
        return flat if index is None else flat[index]

    @functools.cached_property
    def _table_cells(self) -> int:
        return int(sum(t.size for t in self.tables))

    @functools.cached_property
    def _table_index(self) -> np.ndarray | None:
        """The flat table cell of each potential cell (None: every table at full resolution)."""
        if not self.has_bins:
            return None
        parts, offset = [], 0
        for g, (shape, table) in enumerate(zip(self.potential_shapes(), self.tables)):
            cells = np.arange(table.size).reshape(table.shape)
            parts.append(offset + expand(cells, self.group_bins(g), shape).ravel())
            offset += table.size
        return np.concatenate(parts)

    def check_full_resolution(self, method: str) -> None:
        """Refuse, naming ``method``, tables some of which are coarsened (only CGM-EM fits them)."""
        if self.has_bins:
            raise InvalidInput(f"{method} fits tables over their cliques' codes only; these include coarsened "
                               "tables (fit them with CGM-EM)")


def coarsen(table: np.ndarray, bins) -> np.ndarray:
    """A table summed into bins: ``bins`` per axis None (kept) or each code's bin (0..k-1).

    >>> coarsen(np.arange(6.0).reshape(3, 2), ((0, 0, 1), None)).tolist()
    [[2.0, 4.0], [4.0, 5.0]]
    >>> coarsen(np.arange(3.0), None).tolist()
    [0.0, 1.0, 2.0]
    """
    table = np.asarray(table, dtype=np.float64)
    if bins is None:
        return table
    for axis, codes in enumerate(bins):
        if codes is not None:
            onehot = np.eye(max(codes) + 1)[list(codes)]  # codes x bins
            table = np.moveaxis(np.tensordot(table, onehot, axes=([axis], [0])), -1, axis)
    return table


def expand(table: np.ndarray, bins, shape=None) -> np.ndarray:
    """A binned table spread back over the codes (each code takes its bin's value: the
    transpose of :func:`coarsen`). ``shape``: the codes' shape (checked when given).

    >>> expand(np.array([[1, 2], [3, 4]]), ((0, 0, 1), None)).tolist()
    [[1, 2], [1, 2], [3, 4]]
    """
    table = np.asarray(table)
    if bins is not None:
        for axis, codes in enumerate(bins):
            if codes is not None:
                table = np.take(table, list(codes), axis=axis)
    if shape is not None and table.shape != tuple(shape):
        raise InvalidInput(f"bins spread a table to shape {table.shape}, not its clique's {tuple(shape)}")
    return table


def release_tables(
    counts: Sequence[np.ndarray],
    *,
    domain: Domain,
    cliques: Sequence[Sequence[str] | str],
    epsilon: float,
    neighbours: Neighbours,
    sampler: NoiseSampler,
    noise: str = "laplace",
    delta: float | None = None,
    ties: Sequence[int] | None = None,
    records: int | None = None,
    unit: str = "record",
    budget: Budget | None = None,
) -> Release[NoisyMarginals]:
    """Add noise to the count table of every parameter group, with one charge.

    ``counts[g]`` must be the (possibly weighted) counts of group ``g``, each privacy unit
    contributing total weight at most one to each group's table: for a group of ``m``
    tied cliques over record-level counts, the sum of the members' tables divided by
    ``m`` (:func:`group_tables` does this); :mod:`privgraph.mrf.individuals` normalises
    per individual. Under replace-one the
    public number of units ``records`` is required.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> d = Domain.of(a=2, b=2)
    >>> rel = release_tables([np.array([[3, 1], [0, 6]]), np.array([4, 6])], domain=d,
    ...     cliques=["a,b", "b"], epsilon=1.0, neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(0))
    >>> noisy, ledger = rel
    >>> ledger.total().epsilon, [c.sensitivity for c in ledger], noisy.unit
    (1.0, [2.0], 'record')
    """
    cliques, ties, neighbours = _check_release(domain, cliques, ties, noise, neighbours, delta)
    groups = len(set(ties))
    if len(counts) != groups:
        raise InvalidInput(f"got {len(counts)} count tables for {groups} parameter groups")
    if neighbours is Neighbours.REPLACE_ONE and records is None:
        raise InvalidInput("under replace_one neighbours the public number of records must be given")
    shapes = [np.shape(c) for c in counts]
    flat = np.concatenate([np.ravel(np.asarray(c, dtype=np.float64)) for c in counts])
    sensitivity = release_sensitivity(noise, groups, neighbours)
    if noise == "laplace":
        scale = laplace_scale(epsilon, sensitivity, dimension=flat.size)
        noisy, ledger = laplace_mechanism(
            flat, epsilon=epsilon, sensitivity=sensitivity, neighbours=neighbours, sampler=sampler, budget=budget
        )
    else:
        scale = gaussian_calibration(epsilon, delta, sensitivity, flat.size)[0]
        noisy, ledger = gaussian_mechanism(
            flat, epsilon=epsilon, delta=delta, sensitivity=sensitivity, neighbours=neighbours,
            sampler=sampler, budget=budget,
        )
    ledger = _noted(ledger, unit, groups)
    tables = _split(noisy, shapes)
    n = float(records) if records is not None and neighbours is Neighbours.REPLACE_ONE else estimate_records(tables)
    return Release(NoisyMarginals(domain, cliques, ties, tables, noise, scale, n, unit), ledger)


def plan_release(
    *,
    domain: Domain,
    cliques: Sequence[Sequence[str] | str],
    epsilon: float,
    neighbours: Neighbours,
    noise: str = "laplace",
    delta: float | None = None,
    ties: Sequence[int] | None = None,
    unit: str = "record",
) -> Ledger:
    """The ledger :func:`release_tables` charges, from public parameters only (no counts).

    >>> d = Domain.of(a=2, b=2)
    >>> plan_release(domain=d, cliques=["a,b", "b"], epsilon=1.0, neighbours=Neighbours.ADD_REMOVE).rows()[0]["note"]
    'noise scale 2.00037; unit=record; 2 tables'
    """
    cliques, ties, neighbours = _check_release(domain, cliques, ties, noise, neighbours, delta)
    groups = len(set(ties))
    size = sum(domain.cells(cliques[ties.index(g)]) for g in range(groups))
    sensitivity = release_sensitivity(noise, groups, neighbours)
    charge = (laplace_charge(epsilon, sensitivity, neighbours, size) if noise == "laplace"
              else gaussian_charge(epsilon, delta, sensitivity, neighbours, size))
    return _noted(Ledger.of(charge), unit, groups)


def release_sensitivity(noise: str, groups: int, neighbours: Neighbours) -> float:
    """L1 (Laplace) or L2 (Gaussian) sensitivity of the concatenated group tables (module doc)."""
    if noise == "laplace":
        return groups * histogram_l1_sensitivity(neighbours)
    return math.sqrt(groups) * histogram_l2_sensitivity(neighbours)


def _check_release(domain, cliques, ties, noise, neighbours, delta):
    cliques = check_cliques(domain, cliques)
    ties = tuple(range(len(cliques))) if ties is None else tuple(ties)
    groups = len(set(ties))
    if sorted(set(ties)) != list(range(groups)) or len(ties) != len(cliques):
        raise InvalidInput(f"ties must label the {len(cliques)} cliques with groups 0..k-1, got {ties}")
    one_of("noise", noise, NOISES)
    if noise == "gaussian" and delta is None:
        raise InvalidInput("the gaussian noise needs delta")
    return cliques, ties, Neighbours.parse(neighbours)


def _noted(ledger: Ledger, unit: str, groups: int) -> Ledger:
    return Ledger(tuple(replace(c, note=f"{c.note}; unit={unit}; {groups} tables") for c in ledger))


def _split(flat: np.ndarray, shapes) -> tuple[np.ndarray, ...]:
    ends = np.cumsum([int(np.prod(s)) for s in shapes])
    return tuple(part.reshape(s) for part, s in zip(np.split(flat, ends[:-1]), shapes))


def group_tables(tables: Sequence[np.ndarray], ties: Sequence[int]) -> list[np.ndarray]:
    """Per-group tables from per-clique tables: the mean over each group's tied cliques.

    >>> [t.tolist() for t in group_tables([np.array([1.0, 3.0]), np.array([3.0, 1.0]), np.array([5.0])], [0, 0, 1])]
    [[2.0, 2.0], [5.0]]
    """
    groups = sorted(set(ties))
    return [sum(t for t, g in zip(tables, ties) if g == k) / list(ties).count(k) for k in groups]


def estimate_records(tables: Sequence[np.ndarray], scales: Sequence[float] | None = None) -> float:
    """The number of units from noisy tables: their totals averaged by inverse variance.

    Each total carries noise of variance ``cells_g scale_g^2``, so table ``g`` gets weight
    ``1 / (cells_g scale_g^2)`` (``scales`` None: one scale for all). Clamped below at 1.

    >>> estimate_records([np.array([9.0, 1.0]), np.array([[2.0, 3.0], [2.0, 3.0]])])
    10.0
    >>> estimate_records([np.array([9.0, 1.0]), np.array([[2.0, 3.0], [2.0, 3.0]])], scales=[1.0, 1e3])
    10.0
    """
    totals = np.array([float(np.sum(t)) for t in tables])
    scales = np.ones(len(totals)) if scales is None else np.asarray(scales, dtype=np.float64)
    weights = np.array([1.0 / np.size(t) for t in tables]) / scales**2
    return max(1.0, float(np.sum(weights * totals) / np.sum(weights)))


def join_releases(earlier: NoisyMarginals, later: NoisyMarginals, *, records: float | None = None) -> NoisyMarginals:
    """One :class:`NoisyMarginals` of two releases' tables (same domain and noise) for a model
    fit (post-processing): each group keeps its own scale (``scales``; ``scale`` is the
    largest). ``records``: the public n (replace-one); None: estimated again from every
    table, each by its own noise (:func:`estimate_records`).

    >>> d = Domain.of(a=2, b=2)
    >>> one = NoisyMarginals(d, (("a",), ("b",)), (0, 1), (np.ones(2), np.ones(2)), "gaussian", 2.0, 4.0)
    >>> two = NoisyMarginals(d, (("a", "b"),), (0,), (np.ones((2, 2)),), "gaussian", 2.1, 4.0)
    >>> m = join_releases(one, two)
    >>> m.cliques, m.ties, m.scale, m.scales
    ((('a',), ('b',), ('a', 'b')), (0, 1, 2), 2.1, (2.0, 2.0, 2.1))
    """
    if earlier.noise != later.noise or earlier.domain != later.domain:
        raise InvalidInput("joined releases must share their domain and their kind of noise")
    groups = len(earlier.tables)
    cliques, tables = earlier.cliques + later.cliques, earlier.tables + later.tables
    ties = earlier.ties + tuple(g + groups for g in later.ties)
    scales = earlier.group_scales + later.group_scales
    n = records if records is not None else estimate_records(tables, scales)
    bins = None if earlier.bins is None and later.bins is None else (
        tuple(earlier.group_bins(g) for g in range(groups)) + tuple(later.group_bins(g) for g in range(len(later.tables))))
    return replace(later, cliques=cliques, ties=ties, tables=tables, scale=max(scales), records=n,
                   scales=None if len(set(scales)) == 1 else scales, bins=bins)
