"""Orient a CPDAG's undirected edges with the private direction test, then Meek's rules.

Input: a *released* CPDAG (post-processing of a private or public structure search), the
data of its continuous columns with public bounds, and an epsilon share for orientation.
The share is split evenly over the CPDAG's undirected edges (their number is public: the
CPDAG is released), so every record, which enters every pair test, is charged at most the
share in total (sequential composition, basic; the ledger sums the charges actually spent).
Edges are visited in a fixed order (sorted names); an edge that Meek's rules already
oriented is skipped and its share is not spent. Each decision is a
:func:`~privgraph.causal.direction.private_direction` release under the default
``privacy="record"`` (every record protected); choosing the arc that keeps the graph
acyclic and free of new v-structures, and Meek's rules, are post-processing of the
released decisions and of the public CPDAG.
"""

from __future__ import annotations

from collections.abc import Mapping

import networkx as nx
import numpy as np

from privgraph.causal.direction import check_settings, private_direction
from privgraph.causal.direction.data import min_test_rows
from privgraph.causal.direction.estimator import ABSTAIN_BELOW, check_abstain
from privgraph.causal.direction.scores import DEFAULT_SCORE
from privgraph.graphs import CPDAG, apply_meek_rules
from privgraph.privacy import Budget, Ledger, NoiseSampler, Release
from privgraph.validation import InvalidInput, UnknownName


def orient_by_direction(
    cpdag: CPDAG,
    data: Mapping,
    *,
    bounds: Mapping[str, tuple[float, float]],
    epsilon: float,
    sampler: NoiseSampler,
    rng: np.random.Generator,
    score: str = DEFAULT_SCORE,
    test_fraction: float = 0.5,
    budget: Budget | None = None,
    untestable: str = "raise",
    abstain_below: float = ABSTAIN_BELOW,
) -> Release:
    """Orient every undirected edge ``a - b`` of ``cpdag`` by a private direction test.

    Parameters
    ----------
    cpdag : CPDAG
        A released CPDAG (its undirected edges are oriented; directed ones are kept).
    data : mapping of column name -> 1-D array (a DataFrame works)
        The records, one value per row in every column of an undirected edge.
    bounds : mapping of column name -> (lo, hi)
        Public bounds of those columns (continuous; values are clipped to them).
    epsilon : float
        The share of the budget for orientation: ``epsilon / k`` per undirected edge (k of
        them in ``cpdag``); the total charged is at most ``epsilon`` (less when Meek's rules
        orient an edge before its test).
    sampler, rng, score, test_fraction, abstain_below
        As in :func:`~privgraph.causal.direction.private_direction` (rng: the public splits);
        the default score is RECI, and an edge whose decision is ``"undecided"`` (its
        probability below ``abstain_below``) stays undirected, its share spent.
    budget : Budget, optional
        Each test reserves its charge on it before drawing noise.
    untestable : "raise" (default) or "skip"
        What an edge with a column lacking public bounds, or a share too small for the
        rows, does: "raise" refuses (before anything is spent); "skip" leaves such edges
        undirected (the share is split over the edges with bounds only) and, if the share
        is too small, spends nothing and returns the CPDAG as it is. Both decisions read
        public facts only (the released CPDAG, the bounds, n), so a caller that has already
        spent budget on the CPDAG can use "skip" and never fail afterwards.

    Returns
    -------
    Release
        ``(CPDAG, Ledger)``: the graph with the tested edges oriented (an edge whose both
        arcs would close a directed cycle or create a new v-structure, or whose test answered
        "undecided", stays undirected) and Meek's rules applied.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> rng = np.random.default_rng(0)
    >>> a = rng.uniform(-2, 2, 3000)
    >>> b = np.tanh(2 * a) + 0.3 * rng.uniform(-1, 1, 3000)
    >>> c = np.tanh(2 * b) + 0.3 * rng.uniform(-1, 1, 3000)
    >>> g = CPDAG(["a", "b", "c"], undirected=[("a", "b"), ("b", "c")])
    >>> box = dict.fromkeys("abc", (-2.5, 2.5))
    >>> dag, ledger = orient_by_direction(g, {"a": a, "b": b, "c": c}, bounds=box, epsilon=2.0,
    ...                                   sampler=SeededSampler(0), rng=np.random.default_rng(1))
    >>> dag.undirected_edges, ledger.total().epsilon <= 2.0
    ((), True)
    """
    if untestable not in ("raise", "skip"):
        raise InvalidInput(f"untestable must be 'raise' or 'skip', got {untestable!r}")
    edges = sorted(cpdag.undirected_edges)
    if untestable == "skip":
        edges = [e for e in edges if e[0] in bounds and e[1] in bounds]
    if not edges:
        return Release(cpdag, Ledger())
    share = epsilon / len(edges)
    check_settings(score, "record", share, 1e-6)
    check_abstain(abstain_below)
    columns = {name: np.asarray(data[name]) for edge in edges for name in edge}
    if missing := sorted({name for edge in edges for name in edge} - set(bounds)):
        raise UnknownName(f"columns {missing} have no public bounds (bounds names {sorted(bounds)})")
    n = len(next(iter(columns.values())))
    if (m := int(round(n * test_fraction))) < (need := min_test_rows(score, share)):
        if untestable == "skip":
            return Release(cpdag, Ledger())
        raise InvalidInput(f"{len(edges)} undirected edges share epsilon={epsilon:g} ({share:.3g} each): the {score} "
                           f"score needs {need} test rows at that share, the data gives {m}")
    graph, ledger = cpdag, Ledger()
    for a, b in edges:
        if not graph.has_undirected(a, b):
            continue  # oriented by Meek's rules from earlier decisions: nothing spent
        result, spent = private_direction(columns[a], columns[b], epsilon=share, sampler=sampler, rng=rng,
                                          score=score, bounds=(bounds[a], bounds[b]),
                                          test_fraction=test_fraction, budget=budget, abstain_below=abstain_below)
        ledger = ledger + spent
        if result.direction == "undecided":  # abstained (or IQR answered bottom): the edge stays undirected
            continue
        arc = (a, b) if result.direction == "x->y" else (b, a)
        for candidate in (arc, arc[::-1]):
            if _is_safe(graph, *candidate):
                graph = apply_meek_rules(graph.with_oriented([candidate]))
                break
    return Release(graph, ledger)


def _is_safe(graph: CPDAG, a: str, b: str) -> bool:
    """``a -> b`` closes no directed cycle and makes no new v-structure ``a -> b <- c``.

    >>> g = CPDAG(["a", "b", "c"], directed=[("c", "b")], undirected=[("a", "b")])
    >>> _is_safe(g, "a", "b"), _is_safe(g, "b", "a")
    (False, True)
    """
    directed = nx.DiGraph(graph.directed_edges)
    directed.add_nodes_from(graph.nodes)
    if nx.has_path(directed, b, a):
        return False
    return all(graph.adjacent(c, a) for c in graph.parents(b) if c != a)
