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

The records of a pair come either as columns (one value per record, in the records' own
order) or from the pair's count table (:func:`pair_records`, what a count engine gives: a
file read out of core). From a table the records are in cell order, which depends on the
data, so the argument that a record lies in one part of the split "whatever the split"
no longer holds for a split that is seen; it holds for a uniform split that is not: the
output's distribution depends only on the multiset of records, and for any order that puts
the changed record at one position in both neighbours the usual argument applies. The
split (and a subsample above :data:`MAX_PAIR_ROWS`) comes from ``rng``, which a private run
draws from fresh entropy and never shows; a seeded run is not private anyway. No
amplification is claimed for the subsample: each test is still charged its full share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import networkx as nx
import numpy as np

from privgraph.causal.direction import check_settings, private_direction
from privgraph.causal.direction.data import MIN_PART_ROWS, min_test_rows
from privgraph.causal.direction.estimator import SMALL_PAIR_ROWS
from privgraph.causal.direction.estimator import ABSTAIN_BELOW
from privgraph.causal.direction.modes import Record
from privgraph.declarations import check_abstain
from privgraph.causal.direction.scores import DEFAULT_SCORE
from privgraph.graphs import CPDAG, apply_meek_rules
from privgraph.privacy import Budget, Ledger, NoiseSampler, Release
from privgraph.validation import InvalidInput, UnknownName

#: Most records of one pair a direction test reads from its count table (public): a pair of a
#: larger table is a uniform subsample of this many of its records (:func:`pair_records`), so
#: the memory of a test is bounded whatever the rows of the file.
MAX_PAIR_ROWS = 1 << 26
#: How the orientation's ledger composes: sequentially, by basic composition (each decision
#: is a ``privacy="record"`` release; the ledger sums the charges actually spent).
ACCOUNTANT = Record.accountant


def orient_by_direction(
    cpdag: CPDAG,
    data: Mapping | Callable,
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
    n_rows: int | None = None,
) -> Release:
    """Orient every undirected edge ``a - b`` of ``cpdag`` by a private direction test.

    Parameters
    ----------
    cpdag : CPDAG
        A released CPDAG (its undirected edges are oriented; directed ones are kept).
    data : mapping of column name -> 1-D array (a DataFrame works), or a callable
        The records, one value per row in every column of an undirected edge; or
        ``data(a, b) -> (x, y)``, the records of one pair (e.g. :func:`pair_records` of its
        count table), read when its edge is tested, with their public number ``n_rows``.
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
        is too small, spends nothing and returns the CPDAG as it is. Data of fewer than
        ``SMALL_PAIR_ROWS`` (20) records is never refused: every pair would be answered
        "undecided", so the CPDAG comes back as it is, nothing spent. These decisions read
        public facts only (the released CPDAG, the bounds, n), so a caller that has already
        spent budget on the CPDAG can use "skip" and never fail afterwards.
    n_rows : int, optional
        With a callable ``data``: the number of records each pair gives (public).

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
    if missing := sorted({name for edge in edges for name in edge} - set(bounds)):
        raise UnknownName(f"columns {missing} have no public bounds (bounds names {sorted(bounds)})")
    pair, n = _pair_reader(data, edges, n_rows)
    if n < SMALL_PAIR_ROWS:  # every pair is answered "undecided" (small_pair): nothing to spend, nothing refused
        return Release(cpdag, Ledger())
    m = int(round(n * test_fraction))
    if m < (need := min_test_rows(score, share)) or n - m < MIN_PART_ROWS:
        if untestable == "skip":
            return Release(cpdag, Ledger())
        raise InvalidInput(f"{len(edges)} undirected edges share epsilon={epsilon:g} ({share:.3g} each): the {score} "
                           f"score needs {need} test rows at that share and {MIN_PART_ROWS} training rows, "
                           f"the data gives {m} and {n - m}")
    graph, ledger = cpdag, Ledger()
    for a, b in edges:
        if not graph.has_undirected(a, b):
            continue  # oriented by Meek's rules from earlier decisions: nothing spent
        result, spent = private_direction(*pair(a, b), epsilon=share, sampler=sampler, rng=rng,
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


def _pair_reader(data, edges, n_rows: int | None) -> tuple[Callable, int]:
    """``(pair, n)``: the records of a pair and their public number, from columns or a reader."""
    if callable(data):
        if n_rows is None:
            raise InvalidInput("a callable data(a, b) -> (x, y) needs n_rows, the public number of records it gives")
        return data, int(n_rows)
    columns = {name: np.asarray(data[name]) for edge in edges for name in edge}
    return (lambda a, b: (columns[a], columns[b])), len(next(iter(columns.values())))


def pair_records(table: np.ndarray, rng: np.random.Generator,
                 max_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The records of a pair from its count table (``table[i, j]`` records with codes
    ``(i, j)``), as float codes in cell order; a table of more than ``max_rows`` records (None:
    :data:`MAX_PAIR_ROWS`) gives a uniform subsample of ``max_rows`` of them (a multivariate
    hypergeometric draw from ``rng``: the cell counts of a uniform subset of the records).
    How many records come back is public (the table's total, n, or the cap); see the module
    docstring for the order and the subsample.

    >>> x, y = pair_records(np.array([[2, 0], [1, 1]]), np.random.default_rng(0))
    >>> x.tolist(), y.tolist()
    ([0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0])
    >>> x, y = pair_records(np.array([[2, 0], [1, 1]]), np.random.default_rng(0), max_rows=3)
    >>> len(x), set(zip(x.tolist(), y.tolist())) <= {(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)}
    (3, True)
    """
    counts = np.asarray(table, dtype=np.int64)
    cap = MAX_PAIR_ROWS if max_rows is None else int(max_rows)
    flat = counts.ravel()
    if int(flat.sum()) > cap:
        flat = rng.multivariate_hypergeometric(flat, cap, method="marginals")
    cells = np.repeat(np.arange(flat.size, dtype=np.int64), flat)
    x, y = np.divmod(cells, counts.shape[1])
    return x.astype(np.float64), y.astype(np.float64)


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
