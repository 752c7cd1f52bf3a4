"""End-to-end audit cases with the person as the unit: neighbours that differ by one person's history.

Every estimator takes ``max_rows_per_person`` with a codebook naming the person column
(:mod:`privgraph.privacy.person`): at most k rows per person are kept (a secret choice), the
estimator runs under add/remove at the row target, and the claim is per person. Each case
here runs one estimator whole, with the person as the unit (k = :data:`K`), on a pair of
datasets built for it: a base of persons with one row each (pid ``r0``, ``r1``, ...) and a
person ``P`` whose history makes the difference:

* ``*_person_k`` (person add/remove): the right dataset adds P with k rows;
* ``*_person_more`` (person add/remove): P has k + 3 rows, which the truncation must absorb
  (a bound above the claim here would say that rows beyond k were counted);
* ``*_person_replace`` (person replace-one): P's k rows on the left are replaced by k + 3
  other rows on the right (2k rows differ after the truncation: the claim converts 2k).

The cases, per estimator (the claim is always the person's epsilon):

* ``mrf_person_*``: ``PrivateMRF`` (Laplace, one clique a,b over 2 x 2 cells; the model fit is
  skipped, ``method=keep_release``) on persons A and C with one row in every cell; P's rows
  sit in cell (1, 1) (on the left of the replace-one pair in (0, 0)). The view is the noisy
  count of (1, 1) (replace-one: of (0, 0) and (1, 1), orthant events): it moves by k (each
  cell by k), at row epsilon epsilon / k (epsilon / 2k), which is the whole claim: these
  cases are tight, and a truncation that kept k + 3 rows would be caught.
* ``pc_person_*``: ``PrivPC(method="priv-pc", max_rounds=1)`` on the add/remove PC pair of
  :mod:`privgraph.audit.estimators` (1,995 persons at (0, 1), 5 at (1, 2)) and P's rows at
  (1, 0) (replace-one: at (0, 1) on the left). The row-level fit is the add/remove Priv-PC
  (size, secret resize, replace-one Priv-PC), so, like ``priv_pc_rows``, the case sees
  little of its claim, but runs the truncation, the conversion and the accounting end to end.
* ``anm_person_*``: ``PrivateANM`` (Kendall, ``privacy="record"``) on the record-privacy
  test pair of :mod:`privgraph.audit.estimators` (its 2,000 rows one person each) and P's
  rows at (1, 1) (replace-one: at (1, 0) on the left); the view is the two released scores.
* ``release_person_*``: ``PrivateRelease(structure="tree", delta=0)`` on the tree case's
  three binary columns (25 persons at each of the 8 combinations) and P's rows at (1, 1, 0)
  (replace-one: at (0, 0, 0) on the left); the view is the number of rows the release reports.

All run with the audit's seeded sampler as ``random_state``: the truncation's salt is then
derived from its seed (:func:`~privgraph.privacy.person.truncation_salt`), the same in every
run, which the claim allows (it holds for every salt).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from privgraph.audit.auditor import Runner, orthant_events, threshold_events, value_events
from privgraph.audit.cases import AR, RO, AuditCase
from privgraph.audit.estimators import anm_record_test_pair, keep_release, pc_rows_pair
from privgraph.audit.release_cases import tree_pair
from privgraph.causal.direction import PrivateANM
from privgraph.causal.estimators import PrivPC
from privgraph.data.frontdoor import resolve_domain
from privgraph.mrf.estimator import PrivateMRF
from privgraph.privacy import NoiseSampler
from privgraph.privacy.person import check_unit, fit_by_person
from privgraph.release import PrivateRelease

#: The bound on each person's rows in every case.
K = 3
#: The rows beyond K of the ``*_person_more`` and ``*_person_replace`` histories.
EXTRA = 3
#: The person column of the cases.
PID = "pid"


def codebook(columns: Sequence[dict]) -> dict:
    """A codebook over ``columns`` naming :data:`PID` the person column.

    >>> codebook([{"name": "a", "kind": "nominal", "levels": [0, 1]}])["id"]
    'pid'
    """
    return {"format": "privgraph-domain", "version": 1, "id": PID, "columns": list(columns)}


def binary(*names: str) -> list[dict]:
    """Codebook columns: binary levels 0, 1, no missing level."""
    return [{"name": n, "kind": "ordinal", "levels": [0, 1], "missing": "invalid"} for n in names]


def with_persons(rows: np.ndarray, names: Sequence[str]) -> pd.DataFrame:
    """``rows`` as a frame, one person each (pids r0, r1, ...).

    >>> with_persons(np.zeros((2, 1)), ["a"])[PID].tolist()
    ['r0', 'r1']
    """
    frame = pd.DataFrame(np.asarray(rows), columns=list(names))
    frame[PID] = [f"r{i}" for i in range(len(frame))]
    return frame


def person_rows(row: Sequence, count: int, names: Sequence[str]) -> pd.DataFrame:
    """``count`` copies of ``row`` for the person P."""
    frame = pd.DataFrame([list(row)] * count, columns=list(names))
    frame[PID] = "P"
    return frame


def person_pairs(base: pd.DataFrame, names: Sequence[str], added: Sequence, replaced: Sequence
                 ) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """The three neighbouring pairs of the module docstring: P with ``added`` rows (k, and
    k + 3) added; P's k rows at ``replaced`` replaced by k + 3 rows at ``added``.

    >>> pairs = person_pairs(with_persons(np.zeros((4, 1)), ["a"]), ["a"], [1], [0])
    >>> {name: (len(l), len(r)) for name, (l, r) in pairs.items()}
    {'k': (4, 7), 'more': (4, 10), 'replace': (7, 10)}
    """
    plus = lambda row, count: pd.concat([base, person_rows(row, count, names)], ignore_index=True)  # noqa: E731
    return {"k": (base, plus(added, K)), "more": (base, plus(added, K + EXTRA)),
            "replace": (plus(replaced, K), plus(added, K + EXTRA))}


def person_runner(fit: Callable[[pd.DataFrame, NoiseSampler], np.ndarray | float], width: int = 1) -> Runner:
    """A runner over frames with a person column: ``fit(frame, sampler)``'s view per run."""
    def run(frame: pd.DataFrame, n: int, sampler: NoiseSampler) -> np.ndarray:
        out = np.empty((n, width))
        for i in range(n):
            out[i] = fit(frame, sampler)
        return out[:, 0] if width == 1 else out

    return run


def mrf_fit(epsilon: float, relation: str):
    """``PrivateMRF`` per person on a,b; the noisy count of (1, 1) (replace-one: and of (0, 0))."""
    book = codebook(binary("a", "b"))

    def fit(frame, sampler):
        est = PrivateMRF(epsilon=epsilon, cliques="a,b", method=keep_release, neighbours=relation,
                         max_rows_per_person=K, random_state=sampler).fit(frame, domain=book)
        table = est.marginals_.tables[0]
        return [table[1, 1]] if relation == "add_remove" else [table[0, 0], table[1, 1]]

    return fit


def pc_fit(epsilon: float, relation: str):
    """``PrivPC(priv-pc, one round)`` per person on a (2 levels), b (3 levels): 1 if the edge stays."""
    book = codebook(binary("a") + [{"name": "b", "kind": "ordinal", "levels": [0, 1, 2], "missing": "invalid"}])

    def fit(frame, sampler):
        est = PrivPC(epsilon=epsilon, delta=0.0, method="priv-pc", max_rounds=1, neighbours=relation,
                     max_rows_per_person=K, random_state=sampler).fit(frame, domain=book)
        return est.skeleton_.number_of_edges()

    return fit


def anm_fit(epsilon: float, relation: str):
    """``PrivateANM`` (Kendall, record privacy) per person: the two released scores."""
    book = codebook([{"name": n, "kind": "continuous", "bounds": [-1, 1], "missing": "invalid"} for n in "xy"])

    def fit(frame, sampler):
        est = PrivateANM(epsilon=epsilon, score="kendall", privacy="record", neighbours=relation,
                         test_fraction=0.5, max_rows_per_person=K, random_state=sampler)
        est.fit(frame["x"], frame["y"], persons=frame[PID], domain=book)
        return [est.scores_["x->y"], est.scores_["y->x"]]

    return fit


def release_fit(epsilon: float, relation: str):
    """``PrivateRelease(structure="tree", delta=0)`` per person on binary a, b, c: the rows it reports."""
    book = codebook(binary("a", "b", "c"))

    def fit(frame, sampler):
        rel = PrivateRelease(epsilon=epsilon, delta=0.0, structure="tree", method=keep_release, neighbours=relation,
                             max_rows_per_person=K, random_state=sampler).fit(frame, domain=book)
        return rel.n_rows_

    return fit


#: (estimator, base rows, column names, P's row, P's replaced row, fit, person epsilon, width, events, runs, quick).
ESTIMATORS = {
    "mrf": (lambda: np.array([[a, b] for _ in range(2) for a in range(2) for b in range(2)]), "ab", (1, 1),
            (0, 0), mrf_fit, 1.0, threshold_events, 20_000, 1_000),
    "pc": (lambda: pc_rows_pair()[0], "ab", (1, 0), (0, 1), pc_fit, 12.0, value_events, 4_000, 100),
    "anm": (lambda: np.column_stack(anm_record_test_pair()[0]), "xy", (1.0, 1.0), (1.0, 0.0), anm_fit, 12.0,
            orthant_events, 2_000, 100),
    "release": (lambda: tree_pair()[0], "abc", (1, 1, 0), (0, 0, 0), release_fit, 3.0, threshold_events, 2_000, 100),
}


def untruncated_mrf_fit(epsilon: float):
    """A planted bug: ``PrivateMRF`` per person whose truncation drops the person column but
    keeps every row (the conversion then claims k rows for a person who has more)."""
    book = codebook(binary("a", "b"))

    def fit(frame, sampler):
        est = PrivateMRF(epsilon=epsilon, cliques="a,b", method=keep_release, max_rows_per_person=K,
                         random_state=sampler)
        fit_by_person(est, check_unit(PID, K, "add_remove"), frame, domain=resolve_domain(None, book),
                      truncate=lambda data, column, k, salt: data.drop(columns=[column]))
        return [est.marginals_.tables[0][1, 1]]

    return fit


def broken_person_cases() -> tuple[AuditCase, ...]:
    """The planted bug the person cases must catch: a truncation that keeps every row.

    >>> [(c.name, c.is_broken) for c in broken_person_cases()]
    [('broken_person_untruncated', True)]
    """
    left, right = person_pairs(with_persons(ESTIMATORS["mrf"][0](), ["a", "b"]), ["a", "b"], (1, 1), (0, 0))["more"]
    return (AuditCase("broken_person_untruncated", f"BROKEN: PrivateMRF per person, every row kept (claims {K})", AR,
                      1.0, 0.0, left, right, f"P with {K + EXTRA} rows added", person_runner(untruncated_mrf_fit(1.0)),
                      threshold_events(), runs=10_000, quick_runs=1_000, is_broken=True, group="persons"),)


def person_cases() -> tuple[AuditCase, ...]:
    """Every estimator, the person the unit, on its three pairs (module docstring).

    >>> [c.name for c in person_cases()][:3]
    ['mrf_person_k', 'mrf_person_more', 'mrf_person_replace']
    >>> len(person_cases())
    12
    """
    cases = []
    for name, (rows, names, added, replaced, fit, epsilon, events, runs, quick) in ESTIMATORS.items():
        base = with_persons(rows(), list(names))
        for kind, (left, right) in person_pairs(base, list(names), added, replaced).items():
            relation = AR if kind != "replace" else RO
            width = 2 if (name == "anm" or (name == "mrf" and relation is RO)) else 1
            view = orthant_events() if width == 2 else events()
            what = {"k": f"P with {K} rows added", "more": f"P with {K + EXTRA} rows added (truncated to {K})",
                    "replace": f"P's {K} rows replaced by {K + EXTRA} others"}[kind]
            cases.append(AuditCase(f"{name}_person_{kind}", f"{name} per person (at most {K} rows each), "
                                   f"{relation.value}", relation, epsilon, 0.0, left, right, what,
                                   person_runner(fit(epsilon, relation.value), width), view, runs=runs,
                                   quick_runs=quick, group="persons"))
    return tuple(cases)


__all__ = ["K", "broken_person_cases", "person_cases", "person_pairs"]
