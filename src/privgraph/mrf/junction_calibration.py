"""Exact calibration of a junction tree: two-pass sum-product in log space, on one flat array.

The tree's clique tables lie end to end (:class:`FlatPlan`, built once per tree by
:func:`flat_plan`); :func:`calibrate_flat` passes the messages of all the edges between two
depths at once (the tree re-rooted at its centre), each message a segment log-sum-exp, so
the log-partition function is exact and no finite potentials make a belief vanish or
overflow. :func:`calibrate` and :func:`clique_marginals` are the per-table front end.
:func:`calibrate_scaled` (layout :func:`scaled_plan`) is the fitters' inner loop: the same
passes in probability space, with far fewer operations, falling back to
:func:`calibrate_flat` when anything underflows.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

import privgraph.caches as caches
from privgraph.data.domain import Domain
from privgraph.mrf.junction import JunctionTree, junction_tree


#: Plans kept by :func:`flat_plan` and :func:`scaled_plan` each. A plan holds index arrays of
#: some 300 bytes per tree cell (120 MB for both plans of a 200,000-cell tree, measured with
#: tracemalloc on the gss release): a fitter reuses the newest, and a release builds a new
#: structure every adaptive round, so more plans are only memory.
PLANS_KEPT = 2
#: The names the plans' caches are registered under (:mod:`privgraph.caches`).
PLAN_CACHES = (f"{__name__}.flat_plan", f"{__name__}.scaled_plan")


def _center(nbrs: dict[int, list[int]]) -> int:
    """The clique whose farthest clique is nearest (a root that minimises the tree's height)."""

    def eccentricity(r):
        depth, frontier, seen = 0, [r], {r}
        while frontier:
            frontier = [j for i in frontier for j in nbrs[i] if j not in seen]
            seen.update(frontier)
            depth += 1
        return depth

    return min(nbrs, key=eccentricity)


@dataclass(frozen=True)
class _Level:
    """Index maps for the edges from one depth to the next, all passed at once.

    Upward: ``up`` lists the children's cells grouped by separator segment, each group
    starting at ``starts``; parent cell ``parent_cells[parent_inverse[i]]`` receives the
    message of segment ``parent_seg[i]``. Downward: ``down``/``down_starts`` group the
    parents' cells the same way; child cell ``child[i]`` receives segment ``child_seg[i]``.
    """

    up: np.ndarray
    starts: np.ndarray
    counts: np.ndarray
    parent_cells: np.ndarray
    parent_inverse: np.ndarray
    parent_seg: np.ndarray
    down: np.ndarray
    down_starts: np.ndarray
    down_counts: np.ndarray
    child: np.ndarray
    child_seg: np.ndarray


@dataclass(frozen=True)
class FlatPlan:
    """The tree's tables laid end to end (clique ``c`` at ``offsets[c]:offsets[c + 1]``,
    C order) and one :class:`_Level` per depth, deepest last."""

    offsets: np.ndarray
    levels: tuple[_Level, ...]
    root: int

    @functools.cached_property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)


def cell_codes(tree: JunctionTree, c: int, sep: Sequence[str]) -> np.ndarray:
    """Per cell of tree clique ``c`` (C order), the flat index of its values on ``sep``.

    >>> t = junction_tree(Domain.of(a=2, b=3), (("a", "b"),))
    >>> cell_codes(t, 0, ["b"]).tolist(), cell_codes(t, 0, ["b", "a"]).tolist()
    ([0, 1, 2, 0, 1, 2], [0, 2, 4, 1, 3, 5])
    """
    clique = tree.cliques[c]
    shape = tuple(tree.domain.project(clique).shape)
    if not sep:
        return np.zeros(int(np.prod(shape)), dtype=np.int64)
    grids = np.indices(shape).reshape(len(shape), -1)
    return np.ravel_multi_index(tuple(grids[clique.index(v)] for v in sep),
                                [tree.domain.size_of(v) for v in sep])


def _level(tree: JunctionTree, offsets: np.ndarray, children: list[int], parent: list[int]) -> _Level:
    up, starts, pcells, pseg, down, dstarts, child, cseg = ([] for _ in range(8))
    n_child = n_parent = n_seg = 0
    for c in children:
        p = parent[c]
        sep = [v for v in tree.cliques[c] if v in tree.cliques[p]]
        sc, sp = cell_codes(tree, c, sep), cell_codes(tree, p, sep)
        segments = int(np.prod([tree.domain.size_of(v) for v in sep]))
        up.append(offsets[c] + np.argsort(sc, kind="stable"))
        starts.append(n_child + np.arange(segments) * (len(sc) // segments))
        down.append(offsets[p] + np.argsort(sp, kind="stable"))
        dstarts.append(n_parent + np.arange(segments) * (len(sp) // segments))
        pcells.append(offsets[p] + np.arange(len(sp)))
        pseg.append(n_seg + sp)
        child.append(offsets[c] + np.arange(len(sc)))
        cseg.append(n_seg + sc)
        n_child, n_parent, n_seg = n_child + len(sc), n_parent + len(sp), n_seg + segments
    cells, inverse = np.unique(np.concatenate(pcells), return_inverse=True)
    cat = np.concatenate
    up, down = cat(up), cat(down)
    return _Level(up, cat(starts), _run_lengths(cat(starts), len(up)), cells, inverse, cat(pseg),
                  down, cat(dstarts), _run_lengths(cat(dstarts), len(down)), cat(child), cat(cseg))


def _run_lengths(starts: np.ndarray, total: int) -> np.ndarray:
    return np.diff(np.append(starts, total))


@caches.lru(PLANS_KEPT)
def flat_plan(tree: JunctionTree) -> FlatPlan:
    """The flat layout and depth-by-depth index maps of ``tree`` (built once per tree),
    re-rooted at its centre so that calibration passes as few depths as possible.

    >>> t = junction_tree(Domain.of(a=2, b=2, c=2, d=2), (("a", "b"), ("b", "c"), ("c", "d")))
    >>> plan = flat_plan(t)
    >>> plan.offsets.tolist(), len(plan.levels)
    ([0, 4, 8, 12], 1)
    """
    offsets = clique_offsets(tree)
    root, parent, depths = _rooted(tree)
    levels = tuple(_level(tree, offsets, d, parent) for d in depths[1:])
    return FlatPlan(offsets, levels, root)


def _rooted(tree: JunctionTree) -> tuple[int, list[int], list[list[int]]]:
    """The tree re-rooted at its centre: the root, each clique's parent (-1 at the root)
    and the cliques by depth (``[[root], depth 1, ...]``)."""
    nbrs = {i: [] for i in range(len(tree.cliques))}
    for c, p in enumerate(tree.parent):
        if p >= 0:
            nbrs[c].append(p)
            nbrs[p].append(c)
    root = _center(nbrs)
    parent, depths, frontier = [-1] * len(tree.cliques), [[root]], [root]
    while frontier:
        frontier = [j for i in frontier for j in nbrs[i] if j != parent[i]]
        for i in depths[-1]:
            for j in nbrs[i]:
                if j != parent[i]:
                    parent[j] = i
        if frontier:
            depths.append(frontier)
    return root, parent, depths


#: A run's sum of exponentials below this (after the common shift) is recomputed with the
#: run's own maximum: its logarithm would otherwise lose precision or be -inf.
_TINY = 1e-280


def _segment_logsumexp(values: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``log(sum(exp(values)))`` over each run of ``counts[i]`` values from ``starts[i]``.

    Stable: all runs are first shifted by the overall maximum (two cheap reductions); only
    when some run's sum then falls below ``_TINY`` (its values sit hundreds of nats below
    the top) is every run shifted by its own maximum instead.

    >>> _segment_logsumexp(np.log([1.0, 3.0, 2.0]), np.array([0, 2]), np.array([2, 1])).round(6).tolist()
    [1.386294, 0.693147]
    >>> _segment_logsumexp(np.array([0.0, -2000.0]), np.array([0, 1]), np.array([1, 1])).tolist()
    [0.0, -2000.0]
    """
    top = values.max()
    sums = np.add.reduceat(np.exp(values - top), starts)
    if sums.min() > _TINY:
        return np.log(sums) + top
    tops = np.maximum.reduceat(values, starts)
    return np.log(np.add.reduceat(np.exp(values - np.repeat(tops, counts)), starts)) + tops


def calibrate_flat(plan: FlatPlan, log_tables: np.ndarray) -> tuple[np.ndarray, float]:
    """Two-pass sum-product on the flat layout: normalised beliefs (same layout) and log Z.

    Each depth's edges are passed at once (a few array operations a depth, whatever the
    number of cliques); messages are segment log-sum-exps, so finite tables never make a
    belief vanish or overflow. ``log_tables`` is left unchanged.

    >>> t = junction_tree(Domain.of(a=2, b=2, c=2), (("a", "b"), ("b", "c")))
    >>> beliefs, log_z = calibrate_flat(flat_plan(t), np.log([1.0, 1, 1, 5, 1, 1, 1, 1]))
    >>> round(float(np.exp(log_z)), 6), beliefs.round(3).tolist()
    (16.0, [0.125, 0.125, 0.125, 0.625, 0.125, 0.125, 0.375, 0.375])
    """
    if not np.isfinite(log_tables).all():
        raise FloatingPointError("a log-potential of the junction tree is not finite")
    logs = log_tables.copy()
    upward = []
    for lv in reversed(plan.levels):
        msg = _segment_logsumexp(logs[lv.up], lv.starts, lv.counts)
        logs[lv.parent_cells] += np.bincount(lv.parent_inverse, weights=msg[lv.parent_seg],
                                             minlength=len(lv.parent_cells))
        upward.append(msg)
    off = plan.offsets
    top = logs[off[plan.root]:off[plan.root + 1]]
    shift = top.max()
    log_z = float(np.log(np.exp(top - shift).sum()) + shift)
    for lv, msg in zip(plan.levels, reversed(upward)):
        down = _segment_logsumexp(logs[lv.down], lv.down_starts, lv.down_counts)
        logs[lv.child] += (down - msg)[lv.child_seg]
    return np.exp(logs - log_z), log_z  # calibrated: every clique's table sums to Z


@dataclass(frozen=True)
class _ScaledLevel:
    """The edges from one depth to the next in the layout of :class:`ScaledPlan`.

    The children's cells are ``lo:hi``, each child's cells grouped by its separator value
    (segments of ``counts`` cells from ``starts``, relative to ``lo``). Upward, the pairs
    (parent cell ``parent_cells[i]``, message ``parent_seg[i]``) are sorted by parent
    cell; ``products`` starts each parent cell's run of pairs (None when every cell has
    one), and ``target`` is the slice of parent cells that receive messages (contiguous:
    the plan lays a depth's parents first). Downward, ``down`` lists the
    parents' cells grouped the same way, each group starting at ``down_starts``.
    ``edges`` is the number of child cliques."""

    lo: int
    hi: int
    starts: np.ndarray
    counts: np.ndarray
    parent_cells: np.ndarray
    parent_seg: np.ndarray
    products: np.ndarray | None
    target: slice
    down: np.ndarray
    down_starts: np.ndarray
    edges: int


#: A tree whose clique sizes multiply to less than exp(_BOUNDED) cannot overflow in
#: :func:`calibrate_scaled` without scaling its messages: every cell starts at most 1.
_BOUNDED = 690.0


@dataclass(frozen=True)
class ScaledPlan:
    """The layout of :func:`calibrate_scaled`: the tree's cliques by depth from the root of
    :func:`flat_plan` (so each depth's children lie end to end; within a depth, the
    cliques with children first), each child's cells grouped by its separator with the
    parent (the root's in C order). Cell ``i`` of this layout is cell ``perm[i]`` of
    :func:`flat_plan`'s layout; ``clique_starts``/``clique_sizes`` delimit the cliques,
    the root first. ``bounded``: the product of the clique sizes is below
    ``exp(_BOUNDED)``, so no product of messages can overflow."""

    perm: np.ndarray
    clique_starts: np.ndarray
    clique_sizes: np.ndarray
    levels: tuple[_ScaledLevel, ...]
    tree: JunctionTree
    bounded: bool

    @property
    def log_plan(self) -> FlatPlan:
        """The log-space plan of the same tree, for :func:`calibrate_scaled`'s fallback (built
        only when a calibration needs it: it is as large again as this plan)."""
        return flat_plan(self.tree)


def clique_offsets(tree: JunctionTree) -> np.ndarray:
    """Where each clique's table starts in the flat layout, and the total (C order, end to end).

    >>> clique_offsets(junction_tree(Domain.of(a=2, b=3, c=2), (("a", "b"), ("b", "c")))).tolist()
    [0, 6, 12]
    """
    return np.concatenate([[0], np.cumsum([tree.domain.cells(c) for c in tree.cliques])]).astype(np.int64)


def clear_plans() -> None:
    """Drop the plans :func:`flat_plan` and :func:`scaled_plan` keep (a caller done with its trees)."""
    caches.clear_caches(*PLAN_CACHES)


@caches.lru(PLANS_KEPT)
def scaled_plan(tree: JunctionTree) -> ScaledPlan:
    """The layout and index maps of :func:`calibrate_scaled` for ``tree`` (built once).

    >>> t = junction_tree(Domain.of(a=2, b=2, c=2), (("a", "c"), ("b", "c")))
    >>> plan = scaled_plan(t)
    >>> plan.perm.tolist(), len(plan.levels), plan.bounded
    ([0, 1, 2, 3, 4, 6, 5, 7], 1, True)
    """
    off = clique_offsets(tree)
    _, parent, depths = _rooted(tree)
    parents = set(parent)
    depths = [sorted(d, key=lambda c: c not in parents) for d in depths]  # stable: parents first
    local, inverse, seps = {}, {}, {}
    for c in (c for d in depths for c in d):
        if parent[c] < 0:
            local[c] = np.arange(off[c + 1] - off[c])
        else:
            seps[c] = [v for v in tree.cliques[c] if v in tree.cliques[parent[c]]]
            local[c] = np.argsort(cell_codes(tree, c, seps[c]), kind="stable")
        inverse[c] = np.argsort(local[c])
    order = [c for d in depths for c in d]
    sizes = np.array([off[c + 1] - off[c] for c in order], dtype=np.int64)
    start = dict(zip(order, np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()))
    levels = tuple(_scaled_level(tree, d, parent, seps, start, inverse) for d in depths[1:])
    perm = np.concatenate([off[c] + local[c] for c in order])
    bounded = float(np.log(sizes.astype(np.float64)).sum()) < _BOUNDED
    return ScaledPlan(perm, np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes, levels, tree, bounded)


def _scaled_level(tree: JunctionTree, children, parent, seps, start, inverse) -> _ScaledLevel:
    starts, counts, pcells, pseg, down, dstarts = ([] for _ in range(6))
    n_child = n_parent = n_seg = 0
    for c in children:
        p = parent[c]
        segments = int(np.prod([tree.domain.size_of(v) for v in seps[c]]))
        sp = cell_codes(tree, p, seps[c])
        c_size, p_size = tree.domain.cells(tree.cliques[c]), len(sp)
        starts.append(n_child + np.arange(segments) * (c_size // segments))
        counts.append(np.full(segments, c_size // segments))
        pcells.append(start[p] + inverse[p])
        pseg.append(n_seg + sp)
        down.append(start[p] + inverse[p][np.argsort(sp, kind="stable")])
        dstarts.append(n_parent + np.arange(segments) * (p_size // segments))
        n_child, n_parent, n_seg = n_child + c_size, n_parent + p_size, n_seg + segments
    cat = np.concatenate
    cells, seg = cat(pcells), cat(pseg)
    by_cell = np.argsort(cells, kind="stable")
    cells, seg = cells[by_cell], seg[by_cell]
    receivers, first = np.unique(cells, return_index=True)
    products = None if len(receivers) == len(cells) else first
    if receivers[-1] - receivers[0] + 1 != len(receivers):  # the plan lays a depth's parents first
        raise AssertionError("the parents of a depth are not contiguous")
    target = slice(int(receivers[0]), int(receivers[-1]) + 1)
    return _ScaledLevel(start[children[0]], start[children[0]] + n_child, cat(starts), cat(counts), cells, seg,
                        products, target, cat(down), cat(dstarts), len(children))


def calibrate_scaled(plan: ScaledPlan, log_tables: np.ndarray) -> tuple[np.ndarray, float]:
    """:func:`calibrate_flat` in probability space, in :class:`ScaledPlan`'s layout.

    Each clique's table is exponentiated once, shifted by its maximum, so every cell
    starts at most 1. Upward messages are segment sums; each parent cell is multiplied
    by the product of its children's messages. On a ``bounded`` plan no product can then
    overflow; otherwise each depth's messages are scaled to a maximum of 1 and the
    logarithms of the scales added to log Z. Downward messages are the parent's
    separator marginal over the upward message. A product that underflowed leaves a cell
    below ``_TINY`` after the upward or the downward pass; the tables are then
    calibrated again in log space by :func:`calibrate_flat` (whose results these equal
    up to rounding), which also raises ``FloatingPointError`` on non-finite potentials.
    Far fewer array operations and exponentials than the log-space passes, which is what
    the fitters' inner loops pay for.

    >>> t = junction_tree(Domain.of(a=2, b=2, c=2), (("a", "c"), ("b", "c")))
    >>> plan = scaled_plan(t)
    >>> beliefs, log_z = calibrate_scaled(plan, np.log([1.0, 1, 1, 5, 1, 1, 1, 1])[plan.perm])
    >>> round(float(np.exp(log_z)), 6), beliefs[np.argsort(plan.perm)].round(3).tolist()
    (16.0, [0.125, 0.125, 0.125, 0.625, 0.125, 0.375, 0.125, 0.375])
    >>> calibrate_scaled(plan, np.array([0.0, 0, 0, 0, 0, -900, 0, 0]))[1] == calibrate_flat(
    ...     plan.log_plan, np.array([0.0, 0, 0, 0, 0, 0, -900, 0]))[1]
    True
    """
    shift = np.maximum.reduceat(log_tables, plan.clique_starts)
    log_z = float(np.add.reduce(shift))
    if math.isfinite(log_z):  # else some potential is not finite: calibrate_flat raises
        p = np.exp(log_tables - shift.repeat(plan.clique_sizes))
        upward = []
        for lv in reversed(plan.levels):
            msg = np.add.reduceat(p[lv.lo:lv.hi], lv.starts)
            factors = msg[lv.parent_seg]
            if not plan.bounded:
                top = float(np.maximum.reduce(msg))
                if not top > 0:
                    break
                factors *= 1.0 / top
                log_z += lv.edges * math.log(top)
            if lv.products is not None:
                factors = np.multiply.reduceat(factors, lv.products)
            into = p[lv.target]
            np.multiply(into, factors, out=into)
            upward.append(msg)
        else:
            if np.minimum.reduce(p) > _TINY:
                total = float(np.add.reduce(p[:plan.clique_sizes[0]]))
                for lv, msg in zip(plan.levels, reversed(upward)):
                    into = p[lv.lo:lv.hi]
                    np.multiply(into, (np.add.reduceat(p[lv.down], lv.down_starts) / msg).repeat(lv.counts), out=into)
                if np.minimum.reduce(p) > _TINY and total < math.inf:
                    return p / total, log_z + math.log(total)
    logs = np.empty_like(log_tables)
    logs[plan.perm] = log_tables
    beliefs, log_z = calibrate_flat(plan.log_plan, logs)
    return beliefs[plan.perm], log_z


def calibrate(tree: JunctionTree, potentials: Sequence[np.ndarray]) -> tuple[list[np.ndarray], float]:
    """Exact clique beliefs (normalised probability tables) and the log-partition function.

    ``potentials[k]`` is the log-potential of ``tree.model_cliques[k]`` (axes in clique
    order). Tables and messages stay in log space (:func:`calibrate_flat`), so no finite
    potentials, however far apart, make a message or a belief vanish or overflow.
    Non-finite potentials (an optimiser's step that overflowed) raise ``FloatingPointError``.

    >>> t = junction_tree(Domain.of(a=2, b=2), (("a", "b"),))
    >>> beliefs, log_z = calibrate(t, [np.log([[1.0, 1.0], [1.0, 5.0]])])
    >>> round(float(np.exp(log_z)), 6), beliefs[0].round(3).tolist()
    (8.0, [[0.125, 0.125], [0.125, 0.625]])
    """
    off = clique_offsets(tree)
    logs = np.zeros(off[-1])
    for k, theta in enumerate(potentials):
        a = tree.assignment[k]
        logs[off[a]:off[a + 1]] += _expand_to(tree, k, np.asarray(theta, dtype=np.float64)).ravel()
    flat, log_z = calibrate_flat(flat_plan(tree), logs)
    return [flat[off[c]:off[c + 1]].reshape(tree.domain.project(t).shape) for c, t in enumerate(tree.cliques)], log_z


def _expand_to(tree: JunctionTree, k: int, table: np.ndarray) -> np.ndarray:
    """Model clique ``k``'s table broadcast to the shape of its tree clique."""
    c, t = tree.model_cliques[k], tree.cliques[tree.assignment[k]]
    inside = sorted(c, key=t.index)
    moved = np.transpose(table, [c.index(n) for n in inside])
    shape = tuple(tree.domain.size_of(n) if n in c else 1 for n in t)
    return np.broadcast_to(moved.reshape(shape), tuple(tree.domain.project(t).shape))


def clique_marginals(tree: JunctionTree, beliefs: list[np.ndarray]) -> list[np.ndarray]:
    """The marginal of every model clique (axes in the clique's own order) from beliefs.

    >>> t = junction_tree(Domain.of(a=2, b=2), (("b", "a"),))
    >>> beliefs, _ = calibrate(t, [np.log([[1.0, 3.0], [1.0, 3.0]])])
    >>> clique_marginals(t, beliefs)[0].round(3).tolist()
    [[0.125, 0.375], [0.125, 0.375]]"""
    out = []
    for k, c in enumerate(tree.model_cliques):
        t = tree.cliques[tree.assignment[k]]
        b = beliefs[tree.assignment[k]]
        axes = tuple(i for i, n in enumerate(t) if n not in c)
        inside = [n for n in t if n in c]
        out.append(np.transpose(b.sum(axis=axes) if axes else b, [inside.index(n) for n in c]))
    return out
