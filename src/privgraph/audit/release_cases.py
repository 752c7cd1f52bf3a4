"""End-to-end audit of a release (:class:`~privgraph.release.PrivateRelease`): one case per stage.

Both cases run the whole release (Priv-PC, DAG extension, family cliques, the noisy
tables) on the PC pair of :mod:`privgraph.audit.estimators` (a binary a and a ternary b,
n = 200, both ordinal so that Priv-PC takes Kendall's test; replace-one: 188 x (0, 1) + 12 x (1, 2) against one (1, 2) replaced by (1, 0)),
with ``max_rounds=1`` and ``delta=0`` (basic composition: the claim is the sum of the
stages' epsilons). The model fit is skipped (``method=keep_release``): post-processing
cannot raise epsilon and the audit looks at the release. Each case watches one released
statistic of one stage, but the claim is the release's total epsilon (both stages run in
every run):

* ``release_structure``: whether the released skeleton keeps the edge a - b (stage 1; the
  examine step is tight on this pair, as in ``priv_pc``);
* ``release_table``: the released noisy count of b = 2 in the parameters' table that
  holds b (stage 3: the moved record leaves that cell: 1 count, of a table whose noise is
  calibrated to 2 per table under replace-one, so the case sees about half of that
  stage's share).

* ``release_gauss_edge`` and ``release_gauss_cell``: the same two views of the
  default release on this pair, Gauss-PC as stage 1 and Gaussian tables under one zCDP
  budget (``structure="gauss-pc"``, delta = 1e-6: the claim is (4, 1e-6) by RDP
  composition of both stages; 200 runs per side at quick size, where, like Gauss-PC's own
  case, they see nothing of a claim converted from zCDP);

* ``release_tree``: the first edge the private spanning tree selects
  (``structure="tree"``, :mod:`privgraph.release.tree`) on three independent binary columns
  (25 rows of each of the 8 combinations, n = 200; one (0, 0, 0) replaced by (1, 1, 0)):
  the pair scores are nearly tied, so the exponential mechanism's choice moves with the
  replaced row (its selections hold a fifth of the total epsilon, shared by two rounds).

* ``release_tree_rounds``: the tree's residual pairs chosen in rounds, each against the
  model refitted to the earlier rounds' tables, on four independent binary columns (13 rows
  of each of the 16 combinations, n = 208; one (0, 0, 0, 0) replaced by (1, 1, 1, 0)): three
  residual pairs in three rounds, and the view is the last round's pair, chosen after two
  refits;

* ``release_tree_adaptive``: the same pair under zCDP (``delta = 1e-6``: the tree's tables are
  Gaussian and AIM's adaptive rounds run, :mod:`privgraph.release.adaptive`); the view is the
  released count of cell (1, 1) of the first pair the adaptive rounds measure (chosen against
  the model of the tree's tables with the pairs' noise penalty), which the replaced row moves
  by one: a measurement inside the rounds' one filter charge (like the Gaussian cases, a quick
  audit sees little of a claim converted from zCDP);

* ``release_tree_coarse``: the same adaptive rounds where a column is wide and ordered (a: 14
  ordinal levels, b and c binary, n = 2,520 in a triangle that no tree holds: every pair
  depends, b with c and each with whether a >= 7; one (0, 0, 0) replaced by (13, 1, 0)), so
  that the rounds measure the pair the tree leaves out with a in bins
  (:func:`~privgraph.release.adaptive.candidates`, bins from the released one-way table; it is
  the top candidate without noise); the view is the released count of the first cell (a's
  first bin, the partner's level 0) of the first binned table the rounds measure, which the
  replaced row moves by one (-1 when no binned table is measured, a released fact too);

* ``release_tree_levels``: whether the tree merges a level as rare
  (:mod:`privgraph.release.levels`) on a = 4 levels, b and c binary (a's counts 100, 87, 13,
  0, n = 200; one a = 2 replaced by a = 0): 13 and 12 sit on either side of the rare
  threshold (3 noise scales of the one-way tables, 12.002 at this budget), so a release
  that merged on the true counts would merge a's level 2 on one side only, always; this one
  reads the noisy one-way tables (a share of the tables' epsilon);

* ``release_tree_rows``: the same release under **add/remove** neighbours
  (``neighbours="add_remove"``: n is private) on the same 200 rows against those rows and
  one more (1, 1, 0); the view is the number of rows the release reports (``n_rows_``, the
  default count of synthetic rows), estimated from the noisy tables. A release that
  reported or sampled the true n would be caught at once (the two sides would never
  overlap); this one sees the noisy tables' totals, a share of every stage.

* ``release_sized_cell``: a Priv-PC release under **add/remove** (``neighbours="add_remove"``,
  ``structure="priv-pc"``, one round, delta = 0: stage 0 releases the size, Priv-PC runs on a
  secret subset of the public m rows it gives, the tables are add/remove, sensitivity 1 per
  table) on the add/remove PC pair of :mod:`privgraph.audit.estimators` (1,995 x (0, 1) +
  5 x (1, 2), n = 2,000, against the same plus (1, 0)); the view is the released noisy
  count of (a, b) = (1, 0) (b = 0 when the edge went), which the added row moves by one: a
  table's whole sensitivity, so the case sees the tables' share divided among the tables.

The audit sees a lower bound far below the claim by construction (a view of one stage
cannot see the other stage's share); the cases catch a release that charges a stage less
than it spends, or runs under the wrong relation.
"""

from __future__ import annotations

import itertools

import numpy as np

from privgraph.audit.auditor import Runner, threshold_events, value_events
from privgraph.audit.cases import AR, RO, AuditCase
from privgraph.audit.estimators import keep_release, pc_pair, pc_rows_pair
from privgraph.data import Domain, Kind, NumpyEngine
from privgraph.privacy import NoiseSampler
from privgraph.release import PrivateRelease

#: Total epsilon of the audited release and the structure's share.
RELEASE_EPSILON, RELEASE_SPLIT = 4.0, 0.5


#: delta of the Gauss-PC release's audit claim.
GAUSS_DELTA = 1e-6


#: The release's options in the PC cases, by structure: Gauss-PC at GAUSS_DELTA, Priv-PC pure with one round.
_PC_OPTIONS = {"gauss-pc": {"delta": GAUSS_DELTA}, "priv-pc": {"delta": 0.0, "max_rounds": 1}}


def release_runner(view: str, epsilon: float = RELEASE_EPSILON, split: float = RELEASE_SPLIT,
                   structure: str = "priv-pc", neighbours: str = "replace_one", level: int = 2,
                   a_level: int | None = None) -> Runner:
    """``PrivateRelease(max_rounds=1, delta=0).fit`` (Priv-PC) or
    ``PrivateRelease(structure="gauss-pc", delta=GAUSS_DELTA).fit`` on codes over a = 2,
    b = 3, under ``neighbours``; ``view`` is ``"structure"`` (1 if the edge stays) or
    ``"table"`` (noisy count of b = ``level``, and of a = ``a_level`` if given and the table holds a).

    >>> from privgraph.privacy import SeededSampler
    >>> left, _ = pc_pair()
    >>> release_runner("table")(left, 2, SeededSampler(0)).shape
    (2,)
    """
    domain = Domain(("a", "b"), (2, 3), (Kind.ORDINAL, Kind.ORDINAL))  # Kendall, as in the PC cases
    options = _PC_OPTIONS[structure]

    def run(codes: np.ndarray, n: int, sampler: NoiseSampler) -> np.ndarray:
        engine = NumpyEngine(domain, codes)
        out = np.empty(n)
        for i in range(n):
            rel = PrivateRelease(epsilon=epsilon, split=split, method=keep_release, random_state=sampler,
                                 structure=structure, neighbours=neighbours, **options).fit(engine)
            out[i] = rel.structure_.skeleton_.number_of_edges() if view == "structure" else _count_b(rel, level, a_level)
        return out

    return run


def _count_b(release, level: int, a_level: int | None = None) -> float:
    """The noisy count of b = ``level`` (and a = ``a_level`` when the table holds a too)."""
    noisy = release.parameters_.marginals_
    for clique, table in zip(noisy.group_cliques(), noisy.tables):
        if "b" in clique:
            t = np.asarray(table)
            if clique == ("b",):
                return float(t[level])
            rest = np.take(t, level, axis=clique.index("b"))  # the (two-column) clique's a axis is left
            return float(rest.sum() if a_level is None else rest[a_level])
    raise AssertionError("no table holds b")


def tree_pair() -> tuple[np.ndarray, np.ndarray]:
    """Codes (a, b, c) of the tree case: 25 rows of each combination, and one (0, 0, 0) -> (1, 1, 0).

    >>> left, right = tree_pair()
    >>> left.shape, int((left != right).any(axis=1).sum())
    ((200, 3), 1)
    """
    left = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)] * 25)
    right = left.copy()
    right[0] = (1, 1, 0)
    return left, right


def tree_runner(epsilon: float = RELEASE_EPSILON, view: str = "edge", neighbours: str = "replace_one",
                columns: str = "abc", delta: float = 0.0) -> Runner:
    """``PrivateRelease(structure="tree", delta=delta).fit`` on codes over binary ``columns``;
    ``view`` ``"edge"``: the first selected edge (its index among the pairs in order: a-b,
    a-c, b-c for three columns); ``"last"``: the last round's residual pair (same index);
    ``"adaptive"``: the released count of cell (1, 1) (a triple's (1, 1, 1)) of the first table
    AIM's adaptive rounds measure (``delta > 0``; combined with that table's earlier ones, as
    the model sees it);
    ``"rows"``: the number of rows the release reports; ``"merged"``: 1 when a's level 2 is
    merged with its level 3 as rare (a has 4 levels in that view); ``"coarse"``: cell (0, 0) of
    the first table the adaptive rounds measure in bins (a has 14 ordinal levels in that view;
    -1 when none is).

    >>> from privgraph.privacy import SeededSampler
    >>> left, _ = tree_pair()
    >>> tree_runner()(left, 2, SeededSampler(0)).shape
    (2,)
    >>> bool(150 < tree_runner(view="rows", neighbours="add_remove")(left, 1, SeededSampler(0))[0] < 250)
    True
    """
    domain = Domain.of(**{v: (4 if view == "merged" and v == "a" else 2) for v in columns})
    if view == "coarse":
        domain = Domain(tuple(columns), (14,) + (2,) * (len(columns) - 1),
                        (Kind.ORDINAL,) + (Kind.CATEGORICAL,) * (len(columns) - 1))
    pairs = list(itertools.combinations(columns, 2))

    def run(codes: np.ndarray, n: int, sampler: NoiseSampler) -> np.ndarray:
        engine = NumpyEngine(domain, codes)
        out = np.empty(n)
        for i in range(n):
            rel = PrivateRelease(epsilon=epsilon, delta=delta, structure="tree", method=keep_release,
                                 random_state=sampler, neighbours=neighbours).fit(engine)
            if view == "adaptive":
                tables = rel.structure_.tables
                first = rel.structure_.adaptive.pairs[0]  # a pair or a triple (the rounds' workload)
                at = tables.cliques.index(first)
                out[i] = float(tables.tables[tables.ties[at]][(1,) * len(first)])
            elif view == "coarse":
                tables = rel.structure_.tables
                binned = [g for g in range(len(tables.tables)) if tables.group_bins(g) is not None]
                out[i] = float(tables.tables[binned[0]].flat[0]) if binned else -1.0
            elif view == "rows":
                out[i] = rel.n_rows_
            elif view == "merged":
                out[i] = float(rel.levels_.codes[0][2] == rel.levels_.codes[0][3])
            else:
                out[i] = pairs.index(tuple(sorted(rel.structure_.edges[0] if view == "edge" else rel.structure_.last[0])))
        return out

    return run


def release_cases() -> tuple[AuditCase, ...]:
    """The release's end-to-end cases (register them beside ``estimator_cases``).

    >>> [c.name for c in release_cases()][-3:]
    ['release_tree_levels', 'release_tree_rows', 'release_sized_cell']
    """
    left, right = pc_pair()
    pair = "188 (0,1)+12 (1,2) vs one ->(1,0)"
    return (
        AuditCase("release_structure", "PrivateRelease, stage 1 view (edge kept)", RO, RELEASE_EPSILON, 0.0, left,
                  right, pair, release_runner("structure"), value_events(), runs=4_000, quick_runs=300,
                  group="estimators"),
        AuditCase("release_table", "PrivateRelease, stage 3 view (noisy count b=2)", RO, RELEASE_EPSILON, 0.0, left,
                  right, pair, release_runner("table"), threshold_events(), runs=4_000, quick_runs=300,
                  group="estimators"),
        AuditCase("release_gauss_edge", "PrivateRelease(structure='gauss-pc'), stage 1 view (edge kept)", RO,
                  RELEASE_EPSILON, GAUSS_DELTA, left, right, pair, release_runner("structure", structure="gauss-pc"),
                  value_events(), runs=4_000, quick_runs=200, group="estimators"),
        AuditCase("release_gauss_cell", "PrivateRelease(structure='gauss-pc'), stage 3 view (noisy count b=2)", RO,
                  RELEASE_EPSILON, GAUSS_DELTA, left, right, pair, release_runner("table", structure="gauss-pc"),
                  threshold_events(), runs=4_000, quick_runs=200, group="estimators"),
        AuditCase("release_tree", "PrivateRelease(structure='tree'), first selected edge", RO, RELEASE_EPSILON, 0.0,
                  *tree_pair(), "25 x each of (a,b,c) in {0,1}^3 vs one (0,0,0)->(1,1,0)", tree_runner(),
                  value_events(), runs=4_000, quick_runs=300, group="estimators"),
        AuditCase("release_tree_rounds", "PrivateRelease(structure='tree'), last round's residual pair", RO,
                  RELEASE_EPSILON, 0.0, *rounds_pair(), "13 x each of (a,b,c,e) in {0,1}^4 vs one 0000->1110",
                  tree_runner(view="last", columns="abce"), value_events(), runs=4_000, quick_runs=100,
                  group="estimators"),
        AuditCase("release_tree_adaptive", "PrivateRelease(structure='tree', delta > 0), the adaptive rounds' first "
                  "pair", RO, RELEASE_EPSILON, GAUSS_DELTA, *rounds_pair(),
                  "13 x each of (a,b,c,e) in {0,1}^4 vs one 0000->1110",
                  tree_runner(view="adaptive", columns="abce", delta=GAUSS_DELTA), threshold_events(), runs=4_000,
                  quick_runs=100, group="estimators"),
        AuditCase("release_tree_coarse", "PrivateRelease(structure='tree', delta > 0), first table in bins", RO,
                  RELEASE_EPSILON, GAUSS_DELTA, *coarse_pair(), "triangle, a in 0..13, 2,520 rows vs 000->(13,1,0)",
                  tree_runner(view="coarse", delta=GAUSS_DELTA), threshold_events(), runs=4_000, quick_runs=100,
                  group="estimators"),
        AuditCase("release_tree_levels", "PrivateRelease(structure='tree'), a rare level merged", RO,
                  RELEASE_EPSILON, 0.0, *levels_pair(), "a: 100, 87, 13, 0 of 4 levels vs one a=2 -> a=0",
                  tree_runner(view="merged"), value_events(), runs=4_000, quick_runs=200, group="estimators"),
        AuditCase("release_tree_rows", "PrivateRelease(structure='tree', neighbours='add_remove'), rows reported",
                  AR, RELEASE_EPSILON, 0.0, *added_row(), "25 x each of (a,b,c) in {0,1}^3 vs + (1,1,0)",
                  tree_runner(view="rows", neighbours="add_remove"), threshold_events(), runs=4_000, quick_runs=200,
                  group="estimators"),
        AuditCase("release_sized_cell", "PrivateRelease(structure='priv-pc', neighbours='add_remove'), noisy count "
                  "a=1,b=0", AR, RELEASE_EPSILON, 0.0, *pc_rows_pair(), "1,995 (0,1)+5 (1,2) vs + (1,0)",
                  release_runner("table", structure="priv-pc", neighbours="add_remove", level=0, a_level=1),
                  threshold_events(),
                  runs=4_000, quick_runs=300, group="estimators"),
    )


def rounds_pair() -> tuple[np.ndarray, np.ndarray]:
    """Codes (a, b, c, e) of the rounds case: 13 rows of each combination, one (0, 0, 0, 0) ->
    (1, 1, 1, 0) (replace-one).

    >>> left, right = rounds_pair()
    >>> left.shape, int((left != right).any(axis=1).sum()), right[0].tolist()
    ((208, 4), 1, [1, 1, 1, 0])
    """
    left = np.array([[a, b, c, e] for a in (0, 1) for b in (0, 1) for c in (0, 1) for e in (0, 1)] * 13)
    right = left.copy()
    right[0] = (1, 1, 1, 0)
    return left, right


def coarse_pair() -> tuple[np.ndarray, np.ndarray]:
    """Codes (a, b, c) of the binned-table case: a in 0..13 (ordinal), b and c binary, with
    ``5 x 3^[b = c] x 3^[h = b] x 3^[h = c]`` rows of each combination (``h``: a >= 7; a
    triangle of pairwise dependences), and one (0, 0, 0) -> (13, 1, 0) (replace-one).

    >>> left, right = coarse_pair()
    >>> left.shape, int((left != right).any(axis=1).sum()), right[0].tolist()
    ((2520, 3), 1, [13, 1, 0])
    """
    left = np.array([[a, b, c] for a in range(14) for b in (0, 1) for c in (0, 1)
                     for _ in range(5 * 3 ** ((b == c) + (int(a >= 7) == b) + (int(a >= 7) == c)))])
    right = left.copy()
    right[0] = (13, 1, 0)
    return left, right


def levels_pair() -> tuple[np.ndarray, np.ndarray]:
    """Codes (a, b, c) of the rare-level case: a's levels 0..3 held by 100, 87, 13 and 0 rows
    (b and c alternate), and the same with one a = 2 replaced by a = 0 (replace-one).

    >>> left, right = levels_pair()
    >>> np.bincount(left[:, 0], minlength=4).tolist(), np.bincount(right[:, 0], minlength=4).tolist()
    ([100, 87, 13, 0], [101, 87, 12, 0])
    """
    a = np.repeat([0, 1, 2], [100, 87, 13])
    i = np.arange(a.size)
    left = np.column_stack([a, i % 2, (i // 2) % 2])
    right = left.copy()
    right[np.flatnonzero(a == 2)[0], 0] = 0
    return left, right


def added_row() -> tuple[np.ndarray, np.ndarray]:
    """The tree case's 200 rows, and the same with one more row (1, 1, 0) (add/remove).

    >>> left, right = added_row()
    >>> len(left), len(right), right[-1].tolist()
    (200, 201, [1, 1, 0])
    """
    left, _ = tree_pair()
    return left, np.vstack([left, [[1, 1, 0]]])


__all__ = ["release_cases", "release_runner"]
