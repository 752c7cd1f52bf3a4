"""``orient="direction"`` on a file (a count engine): each pair's records from its count table,
never a refusal that reads a count (issue 43, F4)."""

import numpy as np
import pandas as pd
import pytest

from privgraph.causal import PrivPC
from privgraph.causal.direction import orient as direction_orient
from privgraph.data import Domain, Kind
from privgraph.data.engines.duckdb_engine import DuckDBEngine

DOMAIN = Domain(("a", "b", "c"), (4, 4, 4), (Kind.ORDINAL,) * 3, (("0", "1", "2", "3"),) * 3)


def _chain(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = np.clip(a + rng.integers(-1, 2, n), 0, 3)
    c = np.clip(b + rng.integers(-1, 2, n), 0, 3)
    return pd.DataFrame({"a": a, "b": b, "c": c}).astype(str)


def _neighbours(folder) -> tuple:
    """D, whose first record repeats its second (no distinct row of its own), and D' with that
    record replaced by a row D lacks: D' has exactly one distinct row more than D."""
    left = _chain()
    left.iloc[0] = left.iloc[1]
    seen = set(map(tuple, left.to_numpy()))
    new = next(r for r in (("3", "0", "3"), ("0", "3", "0"), ("3", "3", "0")) if r not in seen)
    right = left.copy()
    right.iloc[0] = list(new)
    paths = []
    for name, frame in (("d.parquet", left), ("e.parquet", right)):
        frame.to_parquet(folder / name)
        paths.append(folder / name)
    return paths, len(seen)


def _lower_every_distinct_rows_cap(monkeypatch, limit: int) -> list:
    """Every distinct-rows query of a file answers as if its cap were at most ``limit``
    (None past it): any count-dependent path now sits between the two neighbours."""
    calls, fetch = [], DuckDBEngine.distinct_rows

    def capped(self, max_rows):
        calls.append(max_rows)
        return fetch(self, min(max_rows, limit))
    monkeypatch.setattr(DuckDBEngine, "distinct_rows", capped)
    return calls


def test_orientation_of_a_file_behaves_the_same_on_both_sides_of_any_distinct_rows_cap(tmp_path, monkeypatch):
    (left, right), distinct = _neighbours(tmp_path)
    _lower_every_distinct_rows_cap(monkeypatch, distinct)
    seen = []
    for path in (left, right):
        est = PrivPC(method="laplace-pc", epsilon=20.0, orient="direction", random_state=0).fit(path, domain=DOMAIN)
        seen.append(([(c.mechanism, round(c.epsilon, 9)) for c in est.ledger_][:-1], est.n_rows_,
                     est.graph_.nodes))
    assert seen[0] == seen[1]


def test_orientation_of_a_file_tests_its_pairs_from_their_tables(tmp_path, monkeypatch):
    """The direction tests run (a charge), reproducibly under a seed (records in cell order),
    and above the public cap on a subsample of exactly that many records."""
    (left, _), _ = _neighbours(tmp_path)
    sizes = []
    test = direction_orient.private_direction

    def spy(x, y, **kw):
        sizes.append(len(x))
        return test(x, y, **kw)
    monkeypatch.setattr(direction_orient, "private_direction", spy)
    fits = [PrivPC(method="laplace-pc", epsilon=20.0, orient="direction", random_state=0).fit(left, domain=DOMAIN)
            for _ in range(2)]
    assert fits[0].graph_ == fits[1].graph_ and sizes and set(sizes) == {3000}
    assert any(c.mechanism.startswith("private_anm") for c in fits[0].ledger_)
    sizes.clear()
    monkeypatch.setattr(direction_orient, "MAX_PAIR_ROWS", 1000)
    PrivPC(method="laplace-pc", epsilon=20.0, orient="direction", random_state=0).fit(left, domain=DOMAIN)
    assert sizes and set(sizes) == {1000}


def test_a_callable_pair_reader_needs_its_public_row_count():
    from privgraph.graphs import CPDAG
    from privgraph.privacy import SeededSampler

    with pytest.raises(ValueError, match="n_rows"):
        direction_orient.orient_by_direction(CPDAG(["a", "b"], undirected=[("a", "b")]), lambda a, b: ([], []),
                                             bounds={"a": (0, 1), "b": (0, 1)}, epsilon=1.0,
                                             sampler=SeededSampler(0), rng=np.random.default_rng(0))
