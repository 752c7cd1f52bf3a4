"""The out-of-core count engine: DuckDB over a CSV or Parquet file (embedded, memory-limited)."""

from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import duckdb
import numpy as np
import pyarrow as pa

from privgraph.data.domain import Domain
from privgraph.data.encoding import check_missing_policy
from privgraph.data.engines.base import check_columns, check_no_bins, row_indices
from privgraph.data.engines.sql import (
    BLOCK,
    coded_source,
    complete_codes_where,
    group_by_query,
    grouping_sets_query,
    packed_keys_query,
    read_packed_rows,
    rows_by_block,
    split_grouping_sets,
    table_from_codes,
    table_from_groups,
)
from privgraph.data.files import (
    check_path,
    complete_filter,
    connect,
    domain_of_file,
    duckdb_source,
    file_columns,
    file_format,
)
from privgraph.data.names import check_columns_present
from privgraph.validation import InvalidInput

_SELECTION = "privgraph_selected_rows"
FILE_ROW = "file_row_number"  # DuckDB's row number of a Parquet file (files.duckdb_source)
_HELD = itertools.count()


@dataclass(frozen=True, eq=False)
class HeldRows:
    """A secret row selection that a :class:`DuckDBEngine` holds in a temporary table of its
    own (``name``: each row's number and its block, 0 for a plain selection), dropped when
    this object is freed. What a sub-sample of an out-of-core file with too many distinct
    rows to fetch is, so that Python's memory does not grow with the rows."""

    name: str


@dataclass(frozen=True, eq=False)
class DuckDBEngine:
    """Counts over a CSV or Parquet file with DuckDB; the file is never loaded whole.

    ``memory_limit`` caps DuckDB's memory (it spills to disk beyond it). Row selections
    (``rows=``) need Parquet, whose row numbers DuckDB reads exactly.

    With ``invalid="drop"`` or ``"recode"`` (and a public ``domain``) values are matched to
    the levels by their text, CSV files are read as text (no type guessing from the data),
    and a missing or out-of-domain value never raises: its row is dropped, or the value is
    recoded to the column's first level (see :mod:`privgraph.data.frontdoor`). Without it
    (``invalid=None``, the default for direct use) ``missing`` applies and an unknown value
    is an error.

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "d.parquet")
    >>> pd.DataFrame({"a": ["x", "y", "x"], "b": [1, 2, 2]}).to_parquet(path)
    >>> e = DuckDBEngine(path)
    >>> e.counts(["a", "b"]).tolist(), e.counts(["b"], rows=np.array([0, 2])).tolist()
    ([[1, 1], [0, 1]], [1, 1])
    """

    path: Path
    domain: Domain | None = None
    missing: str = "error"
    memory_limit: str = "1GB"
    threads: int | None = None
    invalid: str | None = None
    _con: object = field(default=None, repr=False)
    _where: str = field(default="", repr=False)
    _sources: dict = field(default=None, repr=False)
    _held: dict = field(default_factory=dict, repr=False)  # the complete rows' numbering (hold), once

    def __post_init__(self):
        path = check_path(self.path)
        check_missing_policy(self.missing)
        csv = file_format(path) == "csv"
        con = connect(self.memory_limit, self.threads,
                      csv_columns=len(self.domain.names) if csv and self.domain is not None else int(csv))
        if self.invalid is not None:
            if self.domain is None or self.invalid not in ("drop", "recode"):
                raise InvalidInput(f"invalid={self.invalid!r} needs a public domain and 'drop' or 'recode'")
            domain = self.domain.project(self.domain.discrete_names)
            if file_format(path) == "parquet":
                check_columns_present(file_columns(path), domain.names, repr(str(path)))
            def coded(rows: bool) -> str:
                raw = duckdb_source(path, domain.names, row_numbers=rows, all_text=True, dialect=domain.dialect)
                return coded_source(raw, domain, self.invalid, keep=("file_row_number",) if rows else ())

            sources = {False: coded(False)} | ({True: coded(True)} if file_format(path) == "parquet" else {})
            where = complete_codes_where(domain.names) if self.invalid == "drop" and domain.names else ""
        else:
            check_no_bins(self.domain, "DuckDBEngine")
            dialect = self.domain.dialect if self.domain is not None else None
            domain = self.domain or domain_of_file(path, missing=self.missing, connection=con)
            typed = duckdb_source(path, domain.names, dialect=dialect, con=con)
            sources = {False: typed} | ({True: duckdb_source(path, row_numbers=True)}
                                        if file_format(path) == "parquet" else {})
            where = complete_filter(con, typed, domain.names, self.missing)
            domain = domain.project(domain.discrete_names)
        for k, v in (("path", path), ("domain", domain), ("_con", con), ("_where", where), ("_sources", sources)):
            object.__setattr__(self, k, v)

    def _source(self, row_numbers: bool = False) -> str:
        """The rows to count: the file, or its coded form under an ``invalid`` policy."""
        if row_numbers not in self._sources:
            duckdb_source(self.path, row_numbers=True)  # raises: a CSV file has no row numbers
        return self._sources[row_numbers]

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        """Integer table over ``columns`` (see :class:`~privgraph.data.engines.CountEngine`)."""
        columns = check_columns(self.domain, columns)
        source, where = self._source(), self._where
        if rows is not None:  # a held selection, or positions held for this query: one numbering of the rows
            held = rows if isinstance(rows, HeldRows) else self.hold([(row_indices(rows), None)])
            source, where = self._source(row_numbers=True), self._held_where(held)
        groups = self._con.execute(group_by_query(source, columns, where=where)).fetchall()
        return self._table(groups, columns)

    def counts_many(self, column_sets: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """The tables over each of ``column_sets`` (distinct sets of columns), all in one
        grouped query (:func:`~privgraph.data.engines.sql.grouping_sets_query`)."""
        sets = [check_columns(self.domain, s) for s in column_sets]
        query, columns = grouping_sets_query(self._source(), sets, where=self._where)
        groups = self._con.execute(query).fetchall()
        return [self._table(rows, s) for rows, s in zip(split_grouping_sets(groups, columns, sets), sets)]

    def _table(self, groups: list, columns: tuple) -> np.ndarray:
        """The table over ``columns`` from a grouped query's rows (values or codes, count)."""
        if not columns:
            return np.array(groups[0][0] if groups else 0, dtype=np.int64)
        if self.invalid is not None:
            return table_from_codes(groups, self.domain.project(columns).shape)
        return table_from_groups(groups, columns, self.domain)

    def hold(self, chunks: Iterable[tuple[np.ndarray, np.ndarray | None]], *,
             within: HeldRows | None = None) -> HeldRows:
        """A row selection streamed into a temporary table of this engine's connection, chunk
        by chunk (DuckDB spills beyond ``memory_limit``): ``chunks`` of ``(positions, blocks)``,
        increasing positions among the complete rows (numbered as ``counts``' ``rows``) or,
        ``within`` a held selection, among its rows in their order; ``blocks`` each row's block
        (None: 0). Python holds one chunk at a time. The table keeps each row's Parquet row
        number, so a table of the selection is one scan with a semi-join on it (no numbering of
        the rows per query).

        >>> import pandas as pd, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "d.parquet")
        >>> pd.DataFrame({"a": ["x", "y", "x", "y"]}).to_parquet(path)
        >>> e = DuckDBEngine(path)
        >>> some = e.hold([(np.array([1, 2, 3]), None)])
        >>> first = e.hold([(np.array([0]), None)], within=some)  # the first of some: row 1
        >>> e.counts(["a"], rows=some).tolist(), e.counts(["a"], rows=first).tolist()
        ([1, 2], [0, 1])
        >>> e.block_counts(("a",), e.hold([(np.array([0, 1, 2]), np.array([1, 0, 1]))]), 2).tolist()
        [[0, 1], [2, 0]]
        """
        # each position's file row: the complete rows numbered once, or the held rows in their order
        numbered = (f"(SELECT {FILE_ROW}, row_number() OVER (ORDER BY {FILE_ROW}) - 1 AS position FROM {within.name})"
                    if within is not None else self._complete_rows())
        name = f"privgraph_held_{next(_HELD)}"
        staged = f"{name}_staged"
        self._con.execute(f"CREATE TEMP TABLE {staged} (position BIGINT, {BLOCK} INTEGER)")
        for positions, blocks in chunks:
            positions = np.asarray(positions, dtype=np.int64)
            blocks = np.zeros(len(positions), dtype=np.int32) if blocks is None else np.asarray(blocks, dtype=np.int32)
            self._con.register(_SELECTION, pa.table({"position": positions, BLOCK: blocks}))
            self._con.execute(f"INSERT INTO {staged} SELECT position, {BLOCK} FROM {_SELECTION}")
            self._con.unregister(_SELECTION)
        self._con.execute(f"CREATE TEMP TABLE {name} AS SELECT w.{FILE_ROW}, s.{BLOCK} FROM {numbered} AS w "
                          f"JOIN {staged} AS s USING (position)")
        self._con.execute(f"DROP TABLE {staged}")
        held = HeldRows(name)
        weakref.finalize(held, _drop, self._con, name)
        return held

    def block_counts(self, columns: Sequence[str], held: HeldRows, count: int) -> np.ndarray:
        """The tables over ``columns`` of each of the ``count`` blocks of ``held``, stacked
        (shape ``(count, *shape)``), in one grouped query (:meth:`hold`)."""
        columns = check_columns(self.domain, columns)
        source = f"{self._source(row_numbers=True)} AS privgraph_data JOIN {held.name} USING ({FILE_ROW})"
        groups = self._con.execute(group_by_query(source, (BLOCK, *columns), where=self._where)).fetchall()
        return np.stack([self._table(g, columns) for g in rows_by_block(groups, count)])

    def distinct_rows(self, max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        """``(codes of the distinct complete rows, their counts)`` in one grouped query, or
        None if there are more than ``max_rows`` of them (or no coded source: ``invalid``
        unset). What a count engine batches: every later table is counted from these in
        memory. The codes are ``domain.code_dtype`` (column-major), the counts int64.

        The query groups by the rows packed into a few BIGINT keys (one for alarm's 37
        columns: :func:`~privgraph.data.engines.sql.packed_keys_query`), and its result is streamed
        and unpacked batch by batch (:func:`~privgraph.data.engines.sql.read_packed_rows`):
        the memory is the result's codes and counts and one batch, not a column of 64-bit
        integers per column of the file (alarm from 1e8 rows: some 7e6 distinct rows).

        >>> import pandas as pd, tempfile, os
        >>> from privgraph.data import Domain
        >>> path = os.path.join(tempfile.mkdtemp(), "d.parquet")
        >>> pd.DataFrame({"a": ["x", "y", "x"], "b": ["1", "2", "1"]}).to_parquet(path)
        >>> e = DuckDBEngine(path, Domain(("a", "b"), (2, 2), levels=(("x", "y"), ("1", "2"))), invalid="recode")
        >>> codes, counts = e.distinct_rows(10)
        >>> sorted(zip(codes.tolist(), counts.tolist()))
        [([0, 0], 2), ([1, 1], 1)]
        >>> e.distinct_rows(1) is None
        True
        """
        if self.invalid is None or not self.domain.names:
            return None
        query, runs = packed_keys_query(self._source(), self.domain, where=self._where)
        return read_packed_rows(self._con.sql(query), runs, self.domain, max_rows)

    def _held_where(self, held: HeldRows) -> str:
        """The WHERE clause of the complete rows that ``held`` holds."""
        inside = f"{FILE_ROW} IN (SELECT {FILE_ROW} FROM {held.name})"
        return f"{self._where} AND {inside}" if self._where else f"WHERE {inside}"

    def _complete_rows(self) -> str:
        """A table of the complete rows' file row numbers and their positions 0.. in file order
        (what ``rows`` and :meth:`hold` number, as the rows in memory), made once: one column
        sorted, in DuckDB."""
        if "complete" not in self._held:
            name = f"privgraph_complete_{next(_HELD)}"
            self._con.execute(f"CREATE TEMP TABLE {name} AS SELECT {FILE_ROW}, row_number() OVER "
                              f"(ORDER BY {FILE_ROW}) - 1 AS position FROM {self._source(row_numbers=True)} {self._where}")
            self._held["complete"] = name
        return self._held["complete"]


def _drop(con, name: str) -> None:
    """Drop a held selection's table (:meth:`DuckDBEngine.hold`); nothing if the connection is gone."""
    try:
        con.execute(f"DROP TABLE IF EXISTS {name}")
    except duckdb.Error:
        pass
