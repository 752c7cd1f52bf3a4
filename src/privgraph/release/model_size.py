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

from typing import Sequence

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


__all__ = ["check_tree_cap", "fits", "model_cells", "within_cap"]
