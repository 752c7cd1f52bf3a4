"""The release's public model-size cap: the model's junction tree never passes it.

A release fits and samples its model exactly (a junction tree: exact calibration, exact
draws) and never through an approximation (loopy belief propagation, Gibbs sampling). That
holds because every table the release adds to its model is admitted only if the model's
junction tree, triangulated with it, keeps at most ``tree_cap`` cells in all (the sum of
its clique tables' cells: its memory and the time of one calibration). AIM does the same
with its ``max_model_size``; MST keeps a tree, whose junction tree is its own pairs.

The check reads the public domain (the columns' numbers of levels), the cap (a parameter,
fixed before any data is read) and the structure already released, nothing else: it is
post-processing, and a selection restricted to the admissible candidates is the same
mechanism over a candidate set that does not depend on the data
(``exponential_mechanism(admissible=...)``).

The junction tree is :func:`~privgraph.mrf.junction.junction_tree`'s, the one inference and
sampling build, so the cap bounds the tree that actually runs.
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from privgraph.data import Domain
from privgraph.mrf.junction import junction_tree
from privgraph.validation import InvalidInput

Clique = tuple[str, ...]


def model_cells(domain: Domain, cliques: Sequence[Sequence[str]]) -> int:
    """Cells of the junction tree of a model over ``cliques`` (every column of ``domain`` in it).

    >>> model_cells(Domain.of(a=2, b=3, c=4), [("a", "b"), ("b", "c")])
    18
    >>> model_cells(Domain.of(a=2, b=3, c=4), [])  # the independent model: the one-way tables
    9
    """
    return junction_tree(domain, tuple(tuple(c) for c in cliques)).cells


def fits(domain: Domain, cliques: Sequence[Sequence[str]], candidate: Sequence[str], tree_cap: int) -> bool:
    """Whether the model over ``cliques`` plus ``candidate`` keeps its junction tree within
    ``tree_cap`` cells (public: sizes and the released structure only).

    >>> d = Domain.of(a=10, b=10, c=10)
    >>> fits(d, [("a", "b"), ("b", "c")], ("a", "c"), 250), fits(d, [("a", "b"), ("b", "c")], ("a", "c"), 1000)
    (False, True)
    """
    return model_cells(domain, [*cliques, tuple(candidate)]) <= tree_cap


def forest_fits(domain: Domain, edges: Sequence[Sequence[str]], candidate: Sequence[str], tree_cap: int) -> bool:
    """:func:`fits` for a forest: ``edges`` plus the pair ``candidate`` joining two of its trees
    (the tree's selections, in Kruskal's order). A forest's junction tree is its edges and its
    isolated columns (no fill-in), so its cells are added up without building it: O(d) where
    :func:`fits` triangulates the model, O(d^2) and more (a minute a selection at 1,000
    columns). The same answer, and public for the same reasons.

    >>> d = Domain.of(a=2, b=3, c=4, e=5)
    >>> [forest_fits(d, [("a", "b")], p, cap) == fits(d, [("a", "b")], p, cap)
    ...  for p in [("b", "c"), ("c", "e")] for cap in (20, 30, 40)]
    [True, True, True, True, True, True]
    """
    forest = [tuple(e) for e in edges] + [tuple(candidate)]
    joined = {v for e in forest for v in e}
    cells = sum(domain.size_of(a) * domain.size_of(b) for a, b in forest)
    return cells + sum(k for v, k in zip(domain.names, domain.sizes) if v not in joined) <= tree_cap


def within_cap(domain: Domain, cliques: Sequence[Sequence[str]], tree_cap: int) -> tuple[Clique, ...]:
    """``cliques`` in order, each kept only if the model of those kept before it and itself
    stays within ``tree_cap`` cells (AIM's rule, applied to a list fixed in advance); a
    column left in no kept clique gets its one-way table, so every column keeps a table.

    >>> d = Domain.of(a=10, b=10, c=10, e=2)
    >>> within_cap(d, [("a", "b"), ("b", "c"), ("a", "c"), ("c", "e")], 300)
    (('a', 'b'), ('b', 'c'), ('c', 'e'))
    >>> within_cap(d, [("a", "b", "c")], 300)
    (('a',), ('b',), ('c',))
    """
    kept: list[Clique] = []
    for clique in cliques:
        if fits(domain, kept, clique, tree_cap):
            kept.append(tuple(clique))
    covered = {v for c in kept for v in c}
    missing = [(v,) for c in cliques for v in c if v not in covered]
    return tuple(kept) + tuple(dict.fromkeys(missing))


#: The release's public memory cap (bytes) on what the shape alone decides: a table whose tree
#: stage would hold more (:func:`tree_stage_bytes`) is refused before any row is read
#: (:func:`check_tree_memory`). 1 GiB: issue 45's bound for a release on a laptop.
MEMORY_CAP_BYTES = 1 << 30
#: What every release holds whatever the table (the interpreter, numpy, scipy, matplotlib and
#: DuckDB's buffers): 322 MB peak on 2,000 rows of five columns (benchmarks/bench_memory.py's
#: high table at 10 levels), rounded up.
BASE_BYTES = 350 << 20
#: What the tree stage holds per pair of columns, whatever its cells: the pair's counted table,
#: its float copy, its prediction and score in each round, and their Python objects (about 200
#: bytes an array, 230 with a dict's entry). Tuned on the wide table of
#: benchmarks/bench_memory.py at 200 binary columns (peak 475.7 MB: (475.7 MB - BASE_BYTES - the
#: draws' chunk) / 19,900 pairs = 3.1 kB, rounded up); checked at 100 columns
#: (benchmarks/results/memory.jsonl).
PAIR_BYTES = 3_200
#: Float64 copies of every pair table's cells held at once (counts, prediction, its expected
#: table in a round).
PAIR_COPIES = 4


#: The adaptive rounds' triples (:mod:`privgraph.release.adaptive`; AIM's workload in OpenDP is
#: 3-way): triples of the :data:`TRIPLE_COLUMNS` columns with the fewest levels whose tables have
#: at most :data:`TRIPLE_MAX_CELLS` cells, the smallest tables first, at most :data:`MAX_TRIPLES`
#: of them. Public: the codebook's sizes only, so they are counted in the release's one data pass.
#: The caps bound each round's predictions and the memory (:func:`tree_stage_bytes`) on wide tables.
TRIPLE_MAX_CELLS = 1000
MAX_TRIPLES = 600
TRIPLE_COLUMNS = 64


def workload_triples(domain: Domain) -> list[tuple[str, ...]]:
    """The triples the adaptive rounds may measure (:data:`TRIPLE_MAX_CELLS`,
    :data:`MAX_TRIPLES`, :data:`TRIPLE_COLUMNS`), each in the codebook's column order; ties
    in cells keep the codebook's order of the triples.

    >>> workload_triples(Domain.of(a=2, b=2, c=200, e=2))
    [('a', 'b', 'e'), ('a', 'b', 'c'), ('a', 'c', 'e'), ('b', 'c', 'e')]
    >>> workload_triples(Domain.of(a=20, b=20, c=20, e=2))
    [('a', 'b', 'e'), ('a', 'c', 'e'), ('b', 'c', 'e')]
    >>> len(workload_triples(Domain.of(**{f"x{j}": 2 for j in range(500)})))  # C(64, 3) > 600
    600
    """
    return [tuple(domain.names[j] for j in at) for at in workload_positions(domain.sizes)]


def workload_positions(sizes: Sequence[int]) -> list[tuple[int, int, int]]:
    """:func:`workload_triples` as column positions, from the columns' numbers of levels alone
    (the planner's time estimate reads it too, :mod:`privgraph.release.timing`).

    >>> workload_positions([2, 2, 200, 2])
    [(0, 1, 3), (0, 1, 2), (0, 2, 3), (1, 2, 3)]
    """
    sizes = [int(k) for k in sizes]
    kept = sorted(sorted(range(len(sizes)), key=lambda j: sizes[j])[:TRIPLE_COLUMNS])  # the codebook's order
    small = [(sizes[i] * sizes[j] * sizes[k], (i, j, k)) for i, j, k in itertools.combinations(kept, 3)
             if sizes[i] * sizes[j] * sizes[k] <= TRIPLE_MAX_CELLS]
    small.sort(key=lambda t: t[0])  # stable: the codebook's order among equal cells
    return [at for _, at in small[:MAX_TRIPLES]]


def tree_stage_bytes(domain: Domain) -> int:
    """What the tree stage (:mod:`privgraph.release.tree`, AIM's rounds) holds beyond
    :data:`BASE_BYTES`, from the public shape only: every pair of columns' tables and objects,
    the rounds' triples' (:func:`workload_triples`, as many copies), and one chunk of the
    rounds' draws (``20,000`` rows of int64 codes, twice).

    >>> tree_stage_bytes(Domain.of(**{f"x{j}": 2 for j in range(1000)})) // 2**20  # MiB
    1892
    >>> tree_stage_bytes(Domain.of(z=10_000, a=3, b=2, c=4, e=5)) // 2**20
    5
    """
    sizes = np.asarray(domain.sizes, dtype=np.float64)
    d = len(sizes)
    pairs = d * (d - 1) // 2
    pair_cells = (sizes.sum() ** 2 - (sizes**2).sum()) / 2
    triples = workload_triples(domain)
    triple_cells = sum(domain.cells(t) for t in triples)
    return int((pairs + len(triples)) * PAIR_BYTES + PAIR_COPIES * 8 * (pair_cells + triple_cells)
               + 2 * 20_000 * d * 8)


def check_tree_memory(domain: Domain, cap: int = MEMORY_CAP_BYTES) -> None:
    """Refuse, naming the shape and what to do, a table whose tree stage would take the release
    past ``cap`` bytes (:func:`tree_stage_bytes` plus :data:`BASE_BYTES`). Public: the codebook's
    sizes only, before any row is read or any budget spent.

    >>> check_tree_memory(Domain.of(**{f"x{j}": 2 for j in range(200)}))
    >>> check_tree_memory(Domain.of(**{f"x{j}": 2 for j in range(1000)}))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: the tree stage of a release of 1,000 columns holds their 499,500 pairs' tables, about 2.35 GB with the run, above the release's memory cap of 1.07 GB (privgraph.release.model_size.MEMORY_CAP_BYTES): release at most 562 of these columns at once (drop or split them), or choose --structure gauss-pc or priv-pc (refused in turn where their tests would have no power)
    """
    need = BASE_BYTES + tree_stage_bytes(domain)
    if need <= cap:
        return
    fits, d = _most_columns(domain, cap), len(domain.names)
    raise InvalidInput(
        f"the tree stage of a release of {d:,} columns holds their {d * (d - 1) // 2:,} pairs' tables, about {need / 1e9:.2f} GB with the run, above the release's memory cap of {cap / 1e9:.2f} GB "
        f"(privgraph.release.model_size.MEMORY_CAP_BYTES): release at most {fits:,} of these columns at once (drop or "
        "split them), or choose --structure gauss-pc or priv-pc (refused in turn where their tests would have no "
        "power)")


def _most_columns(domain: Domain, cap: int) -> int:
    """The most of ``domain``'s columns, narrowest first, whose tree stage fits ``cap``."""
    order = sorted(domain.names, key=domain.size_of)
    lo, hi = 0, len(order)
    while lo < hi:  # the largest k whose k narrowest columns fit
        k = (lo + hi + 1) // 2
        if BASE_BYTES + tree_stage_bytes(domain.project(order[:k])) <= cap:
            lo = k
        else:
            hi = k - 1
    return lo


def check_tree_cap(tree_cap, domain: Domain | None = None) -> int:
    """``tree_cap`` as an int, refused (naming it) unless it is a positive whole number of
    cells and, with ``domain``, at least the cells of the independent model (every column's
    one-way table: no model is smaller). Public: reads the codebook only.

    >>> check_tree_cap(1000, Domain.of(a=2, b=3))
    1000
    >>> check_tree_cap(4, Domain.of(a=2, b=3))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: tree_cap 4 is below the 5 cells of the domain's one-way tables (the smallest model); raise it to at least 5
    """
    if isinstance(tree_cap, bool) or not isinstance(tree_cap, (int, float)) or int(tree_cap) != tree_cap or tree_cap < 1:
        raise InvalidInput(f"tree_cap must be a positive whole number of junction-tree cells, got {tree_cap!r}")
    tree_cap = int(tree_cap)
    if domain is not None and tree_cap < (least := sum(domain.sizes)):
        raise InvalidInput(f"tree_cap {tree_cap} is below the {least} cells of the domain's one-way tables "
                           f"(the smallest model); raise it to at least {least}")
    return tree_cap


__all__ = ["MAX_TRIPLES", "MEMORY_CAP_BYTES", "TRIPLE_COLUMNS", "TRIPLE_MAX_CELLS", "check_tree_cap",
           "check_tree_memory", "fits", "forest_fits", "model_cells", "tree_stage_bytes", "within_cap",
           "workload_positions", "workload_triples"]
