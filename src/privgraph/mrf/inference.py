"""Marginal inference: exact on a junction tree when it fits, loopy BP otherwise; brute force.

:func:`infer` is the one entry point the estimators use. It is exact (junction tree) when
the tree's tables hold at most ``max_cells`` cells and falls back to loopy belief
propagation (approximate, ``is_exact=False``) beyond that. :func:`enumerate_beliefs` is the
brute-force reference the tests compare both against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.mrf.factor import expand, logsumexp
from privgraph.mrf.junction_calibration import (calibrate, calibrate_scaled, cell_codes, clique_marginals,
                                      clique_offsets, scaled_plan)
from privgraph.mrf.junction import JunctionTree, junction_tree
from privgraph.mrf.loopy import loopy_beliefs
from privgraph.mrf.model import MarkovRandomField

#: Largest junction tree (total cells over its cliques) exact inference will build; read
#: when each call runs (a ``max_cells`` of None), so one setting governs fits, sampling and
#: the reports of which ran (:func:`is_exact`).
MAX_TREE_CELLS = 5_000_000

#: :func:`flat_inference` maps parameters to tree cells by broadcasting
#: (:func:`_broadcast_run`) when its (model clique, tree cell) pairs exceed this many per
#: tree cell, else by ``bincount`` over the pairs (fewer array calls on small trees).
#: Measured on the cces16 release at epsilon 3 (1.4M pairs over 199k cells): 8.2 ms a call
#: against 10.3 ms.
BROADCAST_PAIRS = 4


def tree_limit(max_cells: int | None) -> int:
    """``max_cells``, or :data:`MAX_TREE_CELLS` as it is now when None.

    >>> tree_limit(None) == MAX_TREE_CELLS, tree_limit(10)
    (True, 10)
    """
    return MAX_TREE_CELLS if max_cells is None else max_cells


def is_exact(domain: Domain, cliques: Sequence[Sequence[str]], max_cells: int | None = None) -> bool:
    """Whether inference (and sampling) on a model over ``cliques`` is exact: True when their
    junction tree holds at most ``max_cells`` cells (exact calibration, exact draws), False
    when the fitters use loopy BP and the samplers Gibbs sampling.

    >>> d = Domain.of(a=2, b=2, c=2)
    >>> is_exact(d, [("a", "b"), ("b", "c")]), is_exact(d, [("a", "b"), ("b", "c")], max_cells=4)
    (True, False)
    """
    return junction_tree(domain, tuple(tuple(c) for c in cliques)).cells <= tree_limit(max_cells)


@dataclass(frozen=True)
class Beliefs:
    """Clique marginals (one probability table per model clique) and log Z.

    ``is_exact`` is False when they come from loopy BP (pseudo-marginals and the Bethe
    approximation of the log-partition function).
    """

    marginals: tuple[np.ndarray, ...]
    log_partition: float
    is_exact: bool


def infer(model: MarkovRandomField, *, max_cells: int | None = None) -> Beliefs:
    """Clique marginals and the log-partition function of ``model``.

    Examples
    --------
    >>> m = MarkovRandomField.of(Domain.of(a=2, b=2), ["a,b"], [np.log([[1.0, 1.0], [1.0, 5.0]])])
    >>> b = infer(m)
    >>> b.is_exact, round(float(np.exp(b.log_partition)), 6), b.marginals[0].round(3).tolist()
    (True, 8.0, [[0.125, 0.125], [0.125, 0.625]])
    """
    return infer_potentials(model.domain, model.cliques, model.potentials, max_cells=max_cells)


def infer_potentials(
    domain: Domain,
    cliques: Sequence[tuple[str, ...]],
    potentials: Sequence[np.ndarray],
    *,
    max_cells: int | None = None,
) -> Beliefs:
    """:func:`infer` on raw log-potential arrays (the estimators' inner loops use this).

    >>> b = infer_potentials(Domain.of(a=2, b=2), [("a",), ("b",)], [np.zeros(2), np.log([1.0, 3.0])])
    >>> b.marginals[1].round(12).tolist(), round(float(np.exp(b.log_partition)), 6)
    ([0.25, 0.75], 8.0)"""
    tree = junction_tree(domain, tuple(cliques))
    if tree.cells <= tree_limit(max_cells):
        beliefs, log_z = calibrate(tree, potentials)
        return Beliefs(tuple(clique_marginals(tree, beliefs)), log_z, True)
    marginals, log_z, _ = loopy_beliefs(domain, cliques, potentials)
    return Beliefs(tuple(marginals), log_z, False)


def flat_inference(
    domain: Domain,
    cliques: Sequence[tuple[str, ...]],
    groups: Sequence[int],
    *,
    max_cells: int | None = None,
) -> Callable[[np.ndarray], tuple[np.ndarray, float]]:
    """The inner loop of the fitters: flat group log-potentials to flat group marginals.

    ``groups[k]`` is the parameter group of clique ``k`` (its table's axes in clique
    ``k``'s order; tied cliques share one). The returned function takes every group's
    table raveled end to end and returns, in the same layout, the *sum* of each group's
    cliques' marginals, and log Z. Everything that depends on the structure alone (the
    junction tree, the map from parameters to tree cells and back, a sparse matrix) is
    built here once, so each call is a few array operations per tree depth. Beyond
    ``max_cells`` it falls back to loopy BP like :func:`infer_potentials`.

    >>> run = flat_inference(Domain.of(a=2, b=2), [("a", "b"), ("b",)], [0, 1])
    >>> marginals, log_z = run(np.log([1.0, 1.0, 1.0, 5.0, 1.0, 1.0]))
    >>> marginals.round(3).tolist(), round(float(np.exp(log_z)), 6)
    ([0.125, 0.125, 0.125, 0.625, 0.25, 0.75], 8.0)
    """
    cliques = tuple(tuple(c) for c in cliques)
    tree = junction_tree(domain, cliques)
    shapes = _group_shapes(domain, cliques, groups)
    sizes = np.cumsum([0] + [int(np.prod(s)) for s in shapes])
    if tree.cells > tree_limit(max_cells):
        return _loopy_inference(domain, cliques, groups, shapes, sizes)
    plan, cells, params = scaled_plan(tree), tree.cells, int(sizes[-1])
    pairs = sum(domain.cells(tree.cliques[a]) for a in tree.assignment)  # parameter_map's length
    if pairs > BROADCAST_PAIRS * cells:  # many model cliques per tree clique (never one-to-one): broadcast
        return _broadcast_run(tree, plan, groups, sizes)
    rows, cols = parameter_map(tree, groups, sizes)
    rows = np.argsort(plan.perm)[rows]  # the same cells in the layout of the scaled plan
    if _one_to_one(rows, cells) and _one_to_one(cols, params, full=True):
        return _gathered_run(plan, rows, cols, cells)

    def run(flat: np.ndarray) -> tuple[np.ndarray, float]:
        beliefs, log_z = calibrate_scaled(plan, np.bincount(rows, weights=flat[cols], minlength=cells))
        return np.bincount(cols, weights=beliefs[rows], minlength=params), log_z

    return run


def _broadcast_run(tree: JunctionTree, plan, groups: Sequence[int], sizes: np.ndarray):
    """``flat_inference``'s ``run`` by broadcasting: each model clique's log-table is added to
    its tree clique's table as a broadcast view, and its marginal is that table's sum over
    the other axes. The same values as ``bincount`` over :func:`parameter_map`'s pairs, up to
    the order of floating-point sums, with one gather of the tree's cells each way instead
    of two over every (model clique, tree cell) pair: several times fewer memory accesses
    when many model cliques share a large tree clique (a release near its cap: 1.4M pairs
    over 190k cells)."""
    off = clique_offsets(tree)
    domain = tree.domain
    # per model clique: its tree clique's slice and shape, its group's slice, its own shape, its
    # axes in the tree clique's order, its broadcast shape there, and the tree clique's other axes
    into = []
    for k, c in enumerate(tree.model_cliques):
        a = tree.assignment[k]
        big = tree.cliques[a]
        shape = tuple(domain.size_of(v) for v in big)
        order = sorted(range(len(c)), key=lambda i: big.index(c[i]))  # c's axes in big's order
        view = tuple(domain.size_of(v) if v in c else 1 for v in big)
        summed = tuple(i for i, v in enumerate(big) if v not in c)
        g = groups[k]
        into.append((slice(off[a], off[a + 1]), shape, slice(sizes[g], sizes[g + 1]),
                     tuple(domain.size_of(v) for v in c), order, view, summed,
                     tuple(int(i) for i in np.argsort(order))))  # big's order -> c's (computed once)
    back = np.argsort(plan.perm)  # C position of the tree's cells -> the scaled plan's
    cells, params = int(off[-1]), int(sizes[-1])

    def run(flat: np.ndarray) -> tuple[np.ndarray, float]:
        logs = np.zeros(cells)
        for at, shape, g, own, order, view, _, _ in into:
            np.add(logs[at].reshape(shape), flat[g].reshape(own).transpose(order).reshape(view),
                   out=logs[at].reshape(shape))
        beliefs, log_z = calibrate_scaled(plan, logs[plan.perm])
        beliefs = beliefs[back]
        out = np.zeros(params)
        for at, shape, g, _, _, _, summed, inverse in into:
            marginal = beliefs[at].reshape(shape).sum(axis=summed) if summed else beliefs[at].reshape(shape)
            out[g] += marginal.transpose(inverse).ravel()
        return out, log_z

    return run


def _one_to_one(index: np.ndarray, size: int, *, full: bool = False) -> bool:
    """No value of ``index`` (in ``range(size)``) twice; with ``full``, every value once."""
    hits = np.bincount(index, minlength=size)
    return bool(hits.max(initial=0) <= 1 and (not full or hits.min(initial=1) == 1))


def _gathered_run(plan, rows: np.ndarray, cols: np.ndarray, cells: int):
    """``flat_inference``'s ``run`` when no two parameters share a tree cell and each
    parameter is read by one cell (no ties, each model clique alone in its tree clique,
    as merged cliques are): both ``bincount``s are then gathers, with the same values (a
    sum of one term; a tree cell no parameter reaches is 0)."""
    source = np.zeros(cells, dtype=np.intp)
    source[rows] = cols
    empty = np.setdiff1d(np.arange(cells), rows)
    back = np.empty(len(cols), dtype=np.intp)
    back[cols] = rows

    def run(flat: np.ndarray) -> tuple[np.ndarray, float]:
        log_tables = flat.take(source)
        log_tables[empty] = 0.0
        beliefs, log_z = calibrate_scaled(plan, log_tables)
        return beliefs.take(back), log_z

    return run


def _group_shapes(domain: Domain, cliques, groups) -> list[tuple[int, ...]]:
    first = {g: k for k, g in reversed(list(enumerate(groups)))}
    return [tuple(domain.project(cliques[first[g]]).shape) for g in range(len(first))]


def parameter_map(tree: JunctionTree, groups: Sequence[int], sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which parameter each tree cell reads: pairs ``(rows[i], cols[i])``.

    ``rows`` index the tree's flat layout, ``cols`` the flat group parameters (group ``g``
    from ``sizes[g]``); one pair per cell of each model clique's tree clique. The tree's
    log-tables are ``bincount(rows, weights=theta[cols])`` and each group's summed clique
    marginals ``bincount(cols, weights=beliefs[rows])``.

    >>> t = junction_tree(Domain.of(a=2, b=3), (("a", "b"), ("a",)))
    >>> rows, cols = parameter_map(t, [0, 1], np.array([0, 6, 8]))
    >>> rows.tolist(), cols.tolist()
    ([0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5, 6, 6, 6, 7, 7, 7])
    """
    rows, cols = [], []
    off = clique_offsets(tree)
    for k, c in enumerate(tree.model_cliques):
        a = tree.assignment[k]
        code = cell_codes(tree, a, c)
        rows.append(off[a] + np.arange(code.size))
        cols.append(sizes[groups[k]] + code)
    return np.concatenate(rows), np.concatenate(cols)


def _loopy_inference(domain, cliques, groups, shapes, sizes):
    def run(flat: np.ndarray) -> tuple[np.ndarray, float]:
        tables = [flat[a:b].reshape(s) for a, b, s in zip(sizes[:-1], sizes[1:], shapes)]
        marginals, log_z, _ = loopy_beliefs(domain, cliques, [tables[g] for g in groups])
        out = np.zeros(int(sizes[-1]))
        for k, g in enumerate(groups):
            out[sizes[g]:sizes[g + 1]] += marginals[k].ravel()
        return out, log_z

    return run


def log_joint(model: MarkovRandomField) -> np.ndarray:
    """The normalised log-probability of every configuration (brute force; small models).

    >>> lp = log_joint(MarkovRandomField.of(Domain.of(a=2, b=3), ["a"]))
    >>> lp.shape, round(float(np.exp(lp).sum()), 12)
    ((2, 3), 1.0)
    """
    total = _log_unnormalised_joint(model)
    return total - logsumexp(total, None)


def _log_unnormalised_joint(model: MarkovRandomField) -> np.ndarray:
    total = np.zeros(model.domain.shape)
    for f in model.factors:
        total = total + expand(f.values, f.names, model.domain.names)
    return total


def enumerate_beliefs(model: MarkovRandomField) -> Beliefs:
    """Clique marginals and log Z by summing over every configuration (the reference).

    >>> m = MarkovRandomField.of(Domain.of(a=2, b=2), ["a,b"], [np.log([[1.0, 1.0], [1.0, 5.0]])])
    >>> round(float(np.exp(enumerate_beliefs(m).log_partition)), 6)
    8.0"""
    names = model.domain.names
    total = _log_unnormalised_joint(model)
    log_z = float(logsumexp(total, None))
    p = np.exp(total - log_z)
    marginals = []
    for c in model.cliques:
        axes = tuple(i for i, n in enumerate(names) if n not in c)
        kept = [n for n in names if n in c]
        marginals.append(np.transpose(p.sum(axis=axes), [kept.index(n) for n in c]))
    return Beliefs(tuple(marginals), log_z, True)
