"""The PC skeleton: one order-independent ("stable") driver that asks a decider.

Stable PC (Colombo and Maathuis 2014): at level l, every edge x - y is tested given each
set S of l nodes taken from the adjacencies of x (then of y) *as they were when the level
started*, so the result does not depend on the order of the variables. Each set is tested
once per edge (a set drawn from both sides is not asked again: for a private decider a
repeated test costs budget and adds a chance of a wrong answer). The first S that
the decider calls independent removes the edge and becomes its separating set. Levels
go on while some node has more than l other neighbours, up to ``max_cond_size``.

Background knowledge: a *forbidden* edge is absent from the start and never tested
(saving budget); a *required* edge is kept and never tested.

A decider is any callable ``decide(x, y, S) -> bool`` (True: independent, remove the edge).
It may also have ``start_level(level)`` (called when a level starts) and
``focus(x, adjacent)`` (called before the tests of x given subsets of ``adjacent``), so
that it can count the tables of a level in few passes (:mod:`privgraph.data.tables`);
neither changes any answer. A decider that has ``first_independent(x, y, sets)`` is
asked for a whole side of an edge at once: it returns the index of the first set it calls
independent (None if none), exactly as if ``decide`` were asked in order and stopped
there, so that it may count and test the tables of a side in one pass; such a decider
never becomes exhausted (the non-private one).
If it has an ``exhausted`` attribute that becomes True (a private decider that used its
cap of rounds), the driver stops and marks the skeleton incomplete: the edges not yet
removed stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Iterable, Sequence

import networkx as nx

import privgraph.heartbeat as heartbeat
from privgraph.threads import single_threaded_blas
from privgraph.validation import InvalidInput, UnknownName, positive_int

Decider = Callable[[str, str, tuple], bool]


@dataclass(frozen=True)
class Skeleton:
    """A PC skeleton: the undirected graph, separating sets, tests asked, and completeness."""

    graph: nx.Graph
    sepsets: dict
    n_tests: int
    complete: bool


def stable_pc_skeleton(
    nodes: Sequence[str],
    decide: Decider,
    *,
    max_cond_size: int | None = None,
    forbidden: Iterable[tuple[str, str]] = (),
    required: Iterable[tuple[str, str]] = (),
    on_level: Callable[[int, int], None] | None = None,
) -> Skeleton:
    """Run stable PC's edge removal with ``decide`` as the conditional-independence oracle.

    Parameters
    ----------
    nodes : sequence of str
        Variable names (their order only fixes the order of the tests).
    decide : callable
        ``decide(x, y, S)``: True if x and y are independent given the tuple S.
    max_cond_size : int, optional
        Largest conditioning set tried (None: no limit).
    forbidden, required : iterables of (str, str)
        Background knowledge (unordered pairs).
    on_level : callable, optional
        Called as ``on_level(level, edges)`` when a level starts (progress display).

    Examples
    --------
    A chain a - b - c with an oracle that knows a and c are independent given b:

    >>> oracle = lambda x, y, S: {x, y} == {"a", "c"} and "b" in S
    >>> sk = stable_pc_skeleton(["a", "b", "c"], oracle)
    >>> sorted(sk.graph.edges()), sk.sepsets[frozenset("ac")], sk.n_tests
    ([('a', 'b'), ('b', 'c')], frozenset({'b'}), 6)
    """
    nodes = _check_nodes(nodes)
    positive_int("max_cond_size", max_cond_size, 0, or_none=True, whole_floats=True)
    graph = start_graph(nodes, checked_pairs(forbidden, nodes, "forbidden"))
    keep = checked_pairs(required, nodes, "required")
    sepsets: dict = {}
    tests, level = 0, 0
    with single_threaded_blas():  # the tables' small products, under one limit for the run
        while _has_work(graph, level) and (max_cond_size is None or level <= max_cond_size):
            if on_level is not None:
                on_level(level, graph.number_of_edges())
            done, tests = _run_level(graph, level, decide, keep, sepsets, tests)
            if not done:
                return Skeleton(graph, sepsets, tests, False)
            level += 1
    return Skeleton(graph, sepsets, tests, True)


def _run_level(graph: nx.Graph, level: int, decide: Decider, keep: set, sepsets: dict, tests: int):
    """One level of stable PC; returns (finished, tests) (False if the decider ran dry)."""
    order = {v: i for i, v in enumerate(graph.nodes)}
    snapshot = {v: sorted(graph.adj[v], key=order.get) for v in graph.nodes}
    if (start := getattr(decide, "start_level", None)) is not None:
        start(level)
    focus = getattr(decide, "focus", None)
    edges = sorted(graph.edges, key=lambda e: (order[e[0]], order[e[1]]))
    for k, (x, y) in enumerate(edges, 1):  # the level's edges: released by the levels before (public)
        heartbeat.at(f"level {level}: " + heartbeat.of(k, len(edges), "edge"))
        if frozenset((x, y)) in keep:
            continue
        found, asked = None, set()
        for a, b in ((x, y), (y, x)):
            if focus is not None and level > 0:
                focus(a, snapshot[a])
            sets = [S for S in combinations([v for v in snapshot[a] if v != b], level) if frozenset(S) not in asked]
            asked.update(map(frozenset, sets))  # the same test from the other side: never twice
            found, done, tests = _test_side(decide, a, b, sets, tests)
            if not done:
                return False, tests
            if found is not None:
                graph.remove_edge(x, y)
                sepsets[frozenset((x, y))] = frozenset(found)
                break
    return True, tests


def _test_side(decide: Decider, a: str, b: str, sets: list, tests: int):
    """Ask ``decide`` about a - b given each set in turn, up to the first independent one:
    ``(that set or None, finished, tests)`` (finished False if the decider ran dry)."""
    first = getattr(decide, "first_independent", None)
    if first is not None and sets:
        i = first(a, b, sets)
        return (None, True, tests + len(sets)) if i is None else (sets[i], True, tests + i + 1)
    for S in sets:
        if getattr(decide, "exhausted", False):
            return None, False, tests
        tests += 1
        if decide(a, b, S):
            return S, True, tests
    return None, True, tests


def _has_work(graph: nx.Graph, level: int) -> bool:
    return any(graph.degree(v) - 1 >= level for v in graph.nodes)


def start_graph(nodes: Sequence[str], forbidden: set) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(e for e in combinations(nodes, 2) if frozenset(e) not in forbidden)
    return graph


def _check_nodes(nodes: Sequence[str]) -> list[str]:
    nodes = list(nodes)
    if len(set(nodes)) != len(nodes):
        dup = sorted({v for v in nodes if nodes.count(v) > 1})
        raise InvalidInput(f"duplicate variable names {dup}")
    return nodes


def checked_pairs(pairs: Iterable[tuple[str, str]], nodes: Sequence[str], what: str) -> set:
    out = set()
    for pair in pairs:
        pair = tuple(pair)
        if len(pair) != 2 or pair[0] == pair[1]:
            raise InvalidInput(f"{what} edges must be pairs of two different variables, got {pair!r}")
        if unknown := [v for v in pair if v not in nodes]:
            raise UnknownName(f"{what} edge {pair!r} names variables {unknown} not in {list(nodes)}")
        out.add(frozenset(pair))
    return out
