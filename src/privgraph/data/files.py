"""CSV and Parquet files read through DuckDB: the file's SQL source and its domain."""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Mapping, Sequence

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from privgraph.data.domain import Domain, Kind
from privgraph.data.encoding import check_missing_policy, check_overrides, infer_column, parse_kind
from privgraph.data.names import check_columns_present, quote, sql_literal
from privgraph.data.long_lines import in_file_order, unread_lines
from privgraph.data.records import VALID, Dialect, check_csv_file, header_of, records_query
from privgraph.inputs import check_path, file_format  # noqa: F401 (also imported from here)
from privgraph.validation import InvalidInput, UnknownName

_FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL", "DECIMAL")


def file_columns(path: Path, dialect: Dialect | None = None) -> list[str]:
    """The columns of a checked CSV (its header under ``dialect``) or Parquet file (its schema)."""
    if file_format(path) == "parquet":

        try:
            return list(pq.read_schema(path).names)
        except (pa.ArrowException, OSError) as err:  # the file's bytes, not a bug: one line naming it
            raise InvalidInput(f"data file {str(path)!r} is not a Parquet file pyarrow can read "
                               f"({type(err).__name__}); expected a Parquet file or a .csv name") from None
    return header_of(path, dialect or Dialect())


def csv_records(path: Path, names: Sequence[str], dialect: Dialect | None = None, *, typed: bool = False,
                con=None) -> str:
    """The DuckDB source of a CSV file's ``names`` under ``dialect``, one row per record, its
    header checked against ``names`` (:mod:`privgraph.data.records`: a line that does not parse
    is a record of missing values). ``typed`` casts each column to BIGINT or DOUBLE where all
    its values are numbers (the domain is then being read from the data: not private)."""
    dialect = dialect or Dialect()
    header = check_csv_file(path, dialect, names)
    text = records_query(path, header, names, dialect)
    if not typed:
        return text
    con = con or connect(csv_columns=len(names))
    clean = [f"NULLIF(trim({quote(n)}), '')" for n in names]
    probes = ", ".join(f"count({c}), count(CASE WHEN regexp_full_match({c}, '[-+]?[0-9]+') THEN TRY_CAST({c} AS BIGINT) "
                       f"END), count(TRY_CAST({c} AS DOUBLE))" for c in clean)
    counts = con.execute(f"SELECT {probes} FROM {text}").fetchall()[0] if names else ()
    cols = []
    for i, (n, c) in enumerate(zip(names, clean)):
        present, ints, floats = counts[3 * i: 3 * i + 3]
        sql_type = "BIGINT" if present and ints == present else "DOUBLE" if present and floats == present else None
        cols.append(f"{f'CAST({c} AS {sql_type})' if sql_type else c} AS {quote(n)}")
    return f"(SELECT {', '.join(cols)} FROM {text})"


def read_table(path, columns=None, *, as_text: bool = False, dialect: Dialect | None = None,
               with_valid: bool = False):
    """A CSV or Parquet file (or its ``columns``) as a pandas DataFrame, in one place.

    A CSV file is read by the fixed ``dialect`` (:mod:`privgraph.data.records`): a line that
    does not parse is a row of missing values. ``as_text`` keeps a CSV's values as text, so
    that no type is guessed from the data (a public domain then says how to read each
    value); otherwise a column whose values are all numbers becomes numeric. ``with_valid``
    adds the column :data:`~privgraph.data.records.VALID` (CSV only: False on a line that
    did not parse). Rows are in the file's order (a line over 4 MiB or not valid UTF-8 too, as a
    record of missing values: :mod:`privgraph.data.long_lines`). Parquet keeps its stored types. A requested
    column that the file lacks is a KeyError naming the file.

    >>> import tempfile, pandas as pd
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("a,b\\n1,x\\n2,y,z\\n")
    >>> read_table(p, ["a"], as_text=True)["a"].tolist(), read_table(p)["a"].tolist()
    (['1', nan], [1, <NA>])
    """

    path = check_path(path)
    if file_format(path) == "parquet":
        have = file_columns(path)  # refuses, in one line, a file pyarrow cannot read
        if columns is not None:
            check_columns_present(have, columns, repr(str(path)))
        return pd.read_parquet(path, columns=None if columns is None else list(columns))
    names = file_columns(path, dialect) if columns is None else list(columns)
    if with_valid and not as_text:
        raise InvalidInput("with_valid reads the values as text: pass as_text=True")
    con = connect(csv_columns=len(names))
    source = csv_records(path, names, dialect, typed=not as_text, con=con)
    select = ", ".join([quote(n) for n in names] + ([VALID] if with_valid else []))
    frame = con.execute(f"SELECT {select} FROM {source}").df()
    dialect = dialect or Dialect()
    return in_file_order(frame, unread_lines(path, header=dialect.header, encoding=dialect.encoding))


def duckdb_source(path: Path, names: Sequence[str] = (), *, row_numbers: bool = False, all_text: bool = False,
                  dialect: Dialect | None = None, con=None) -> str:
    """The DuckDB source that reads ``path``: Parquet (with ``file_row_number`` if asked), or
    a CSV file's ``names`` by its fixed dialect (:func:`csv_records`; ``all_text`` keeps the
    values as text, else numbers are typed from the data)."""
    if file_format(path) == "parquet":
        extra = ", file_row_number = true" if row_numbers else ""
        return f"read_parquet({sql_literal(path)}{extra})"
    if row_numbers:
        raise InvalidInput(
            f"row selections need row numbers, which DuckDB gives for Parquet only; "
            f"convert {str(path)!r} to Parquet or count the whole file and sub-sample the table"
        )
    return csv_records(path, names, dialect, typed=not all_text, con=con)


#: Beyond this many columns of a CSV file, DuckDB's common-subexpression pass is switched off too.
WIDE_CSV = 128


def connect(memory_limit: str = "1GB", threads: int | None = None, *, csv_columns: int = 0):
    """An in-memory DuckDB connection with a memory limit (spills to disk beyond it).

    ``csv_columns``: the width of the CSV records (:func:`csv_records`) its queries read. DuckDB's
    filter pushdown copies a filter on the coded columns (the ``"drop"`` policy's, over every
    column) into the records' parse, once per column: 23.3 CPU-s against 0.53 for one table of
    a 100,000-row file of alarm's 37 columns (``benchmarks/bench_wide_files.py``, result in
    ``benchmarks/results/wide_files.json``), and out of memory at 1,000 columns; its
    common-subexpression pass is quadratic there too. Both are planner choices, so they are
    off for CSV records (a raw line scan has no filter to push into); Parquet keeps them.

    >>> connect(csv_columns=200).execute("SELECT current_setting('disabled_optimizers')").fetchone()[0]
    'filter_pushdown,common_subexpressions'

    DuckDB's own progress bar is off: it writes to stdout, which a command's output may be.
    What spills beyond ``memory_limit`` goes to a folder of the system's temporary directory,
    removed with the connection (DuckDB's default for an in-memory database is ``.tmp`` in the
    working directory: the user's folder).

    >>> connect().execute("SELECT current_setting('enable_progress_bar')").fetchone()[0]
    False
    """

    spill = tempfile.mkdtemp(prefix="privgraph-duckdb-")  # not DuckDB's default, ./.tmp in the user's folder
    config = {"memory_limit": memory_limit, "temp_directory": spill}
    if threads is not None:
        config["threads"] = int(threads)
    con = duckdb.connect(":memory:", config=config)
    weakref.finalize(con, shutil.rmtree, spill, ignore_errors=True)
    con.execute("SET enable_progress_bar = false")  # DuckDB's bar writes to stdout
    if csv_columns:
        off = "filter_pushdown" + (",common_subexpressions" if csv_columns > WIDE_CSV else "")
        con.execute(f"SET disabled_optimizers = '{off}'")
    return con




def domain_of_file(
    path,
    *,
    columns: Sequence[str] | None = None,
    kinds: Mapping[str, Kind | str] | None = None,
    levels: Mapping[str, Sequence] | None = None,
    missing: str = "error",
    connection=None,
    dialect: Dialect | None = None,
) -> Domain:
    """The domain of a CSV or Parquet file, read by DuckDB without loading it whole; a CSV read by ``dialect``.

    Only distinct values are fetched (floats are continuous and not scanned unless
    ``kinds`` makes them discrete). Parquet keeps integer types; an ordered pandas
    Categorical saved to Parquet comes back as text, so give its ``levels``. Rules as
    :func:`~privgraph.data.infer_domain`; ``columns`` picks the columns (default: all).
    """
    path, missing = check_path(path), check_missing_policy(missing)
    have = file_columns(path, dialect)
    names = list(columns) if columns is not None else have
    if unknown := [n for n in names if n not in have]:
        raise UnknownName(f"columns {unknown} not in {str(path)!r} (columns: {have})")
    con = connection or connect(csv_columns=len(names) if file_format(path) == "csv" else 0)
    source = duckdb_source(path, names, con=con, dialect=dialect)
    types = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    kinds, levels = check_overrides(names, kinds or {}, levels or {})
    where = complete_filter(con, source, names, missing)
    specs = [_column_spec(con, source, where, n, types[n], kinds.get(n), levels.get(n)) for n in names]
    public = all(n in levels or s[0] is Kind.CONTINUOUS for n, s in zip(names, specs))
    return Domain(tuple(names), tuple(s[2] for s in specs), tuple(s[0] for s in specs),
                  tuple(s[1] for s in specs), public=public)


def complete_filter(con, source: str, names: Sequence[str], missing: str) -> str:
    """A WHERE clause keeping complete rows; raises under ``missing="error"`` if any is not."""
    counts = con.execute(null_count_query(source, names)).fetchall()[0]
    return complete_where(names, counts, missing)


def null_count_query(source: str, names: Sequence[str]) -> str:
    """One scan counting the NULLs of each column.

    >>> null_count_query("t", ["a"])
    'SELECT count(*) - count("a") FROM t'
    """
    return "SELECT " + ", ".join(f"count(*) - count({quote(n)})" for n in names) + f" FROM {source}"


def complete_where(names: Sequence[str], null_counts: Sequence[int], missing: str, quote_name=None) -> str:
    """The WHERE clause for complete rows given NULL counts, or the missing-values error.

    >>> complete_where(["a", "b"], [0, 2], "drop")
    'WHERE "a" IS NOT NULL AND "b" IS NOT NULL'
    >>> complete_where(["a"], [0], "error")
    ''
    """
    q = quote_name or quote
    if missing == "error" and any(null_counts):
        name, k = next((n, c) for n, c in zip(names, null_counts) if c)
        raise InvalidInput(
            f"column {name!r} has {k} missing value(s); pass missing='drop' to drop incomplete "
            "rows (see docs/data.md for what that means for privacy)"
        )
    if not any(null_counts):
        return ""
    return "WHERE " + " AND ".join(f"{q(n)} IS NOT NULL" for n in names)


def _column_spec(con, source, where, name, sql_type, kind, levels):
    is_float = str(sql_type).upper().startswith(_FLOAT_TYPES)
    kind = parse_kind(name, kind) if kind is not None else (Kind.CONTINUOUS if is_float else None)
    limit = " LIMIT 2" if kind is Kind.CONTINUOUS and levels is None else ""  # constant or not
    distinct = con.execute(f"SELECT DISTINCT {quote(name)} FROM {source} {where}{limit}").df()[name]
    if str(sql_type).upper() == "BOOLEAN":
        distinct = distinct.astype(bool)
    return infer_column(name, pd.Series(distinct), kind, levels)
