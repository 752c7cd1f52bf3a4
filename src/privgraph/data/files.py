"""CSV and Parquet files read through DuckDB: the file's SQL source and its domain."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from privgraph.data.domain import Domain, Kind
from privgraph.data.encoding import check_missing_policy, check_overrides, infer_column, parse_kind

_FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL", "DECIMAL")


def check_path(path) -> Path:
    r"""``path`` as a Path if it names an existing .csv or .parquet file (a CSV's header is
    checked too: present, and naming each column once).

    >>> check_path("/no/such/file.csv")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no such data file: '/no/such/file.csv'
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "t.csv").write_text("a,b,a\n1,2,3\n")
    >>> check_path(d / "t.csv")
    Traceback (most recent call last):
    ...
    ValueError: data file '.../t.csv' names columns ['a'] more than once: rename them
    """
    p = Path(os.fspath(path))
    if p.is_dir():
        raise IsADirectoryError(f"data file {str(p)!r} is a directory: give a .csv or .parquet file")
    if not p.is_file():
        raise FileNotFoundError(f"no such data file: {str(p)!r}")
    if file_format(p) is None:
        raise ValueError(f"data file {str(p)!r} must end in .csv or .parquet")
    if file_format(p) == "csv":
        check_csv_header(p)
    return p


def check_csv_header(path: Path) -> list[str]:
    """The column names of a CSV file's header: refused if missing, empty or repeated
    (pandas and DuckDB would rename a repeated name silently)."""
    import csv
    import gzip

    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        header = next(csv.reader(f), None)
    if not header or not any(h.strip() for h in header):
        raise ValueError(f"data file {str(path)!r} is empty: expected a header line naming the columns")
    if dup := sorted({h for h in header if header.count(h) > 1}):
        raise ValueError(f"data file {str(path)!r} names columns {dup} more than once: rename them")
    return header


def read_table(path, columns=None, *, as_text: bool = False):
    """A CSV or Parquet file (or its ``columns``) as a pandas DataFrame, in one place.

    ``as_text`` reads a CSV's values as text, so that no type is guessed from the data (a
    public domain then says how to read each value); Parquet keeps its stored types. The
    file is checked first (:func:`check_path`); a requested column that the file lacks is a
    KeyError naming the file and its columns.

    >>> import tempfile, pandas as pd
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_csv(p, index=False)
    >>> read_table(p, ["a"], as_text=True)["a"].tolist()
    ['1', '2']
    """
    import pandas as pd

    from privgraph.data.frontdoor import check_columns_present

    path = check_path(path)
    if file_format(path) == "parquet":
        import pyarrow.parquet as pq

        if columns is not None:
            check_columns_present(pq.read_schema(path).names, columns, repr(str(path)))
        return pd.read_parquet(path, columns=None if columns is None else list(columns))
    if columns is not None:
        check_columns_present(check_csv_header(path), columns, repr(str(path)))
    return pd.read_csv(path, usecols=None if columns is None else list(columns), dtype=str if as_text else None)


def file_format(path: Path) -> str | None:
    """'csv', 'parquet' or None, from the file name."""
    name = path.name.lower()
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    return None


def sql_literal(text: str) -> str:
    """A single-quoted SQL string literal.

    >>> sql_literal("it's")
    "'it''s'"
    """
    return "'" + str(text).replace("'", "''") + "'"


def duckdb_source(path: Path, *, row_numbers: bool = False, all_text: bool = False) -> str:
    """The DuckDB table function that reads ``path`` (with ``file_row_number`` if asked).

    ``all_text`` reads every CSV column as text, so that no type is guessed from the data.
    """
    if file_format(path) == "parquet":
        extra = ", file_row_number = true" if row_numbers else ""
        return f"read_parquet({sql_literal(path)}{extra})"
    if row_numbers:
        raise ValueError(
            f"row selections need row numbers, which DuckDB gives for Parquet only; "
            f"convert {str(path)!r} to Parquet or count the whole file and sub-sample the table"
        )
    if all_text:
        return f"read_csv({sql_literal(path)}, header = true, all_varchar = true)"
    # no BOOLEAN guess: "yes"/"no" stay text, as pandas and Spark read them
    return f"read_csv({sql_literal(path)}, header = true, auto_type_candidates = ['BIGINT', 'DOUBLE', 'VARCHAR'])"


def connect(memory_limit: str = "1GB", threads: int | None = None):
    """An in-memory DuckDB connection with a memory limit (spills to disk beyond it)."""
    import duckdb

    config = {"memory_limit": memory_limit}
    if threads is not None:
        config["threads"] = int(threads)
    return duckdb.connect(":memory:", config=config)


def quote(name: str) -> str:
    """A double-quoted SQL identifier.

    >>> quote('a"b')
    '"a""b"'
    """
    return '"' + str(name).replace('"', '""') + '"'


def domain_of_file(
    path,
    *,
    columns: Sequence[str] | None = None,
    kinds: Mapping[str, Kind | str] | None = None,
    levels: Mapping[str, Sequence] | None = None,
    missing: str = "error",
    connection=None,
) -> Domain:
    """The domain of a CSV/Parquet file (see :meth:`Domain.from_path`)."""
    path, missing = check_path(path), check_missing_policy(missing)
    con = connection or connect()
    source = duckdb_source(path)
    types = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    names = list(columns) if columns is not None else list(types)
    if unknown := [n for n in names if n not in types]:
        raise KeyError(f"columns {unknown} not in {str(path)!r} (columns: {list(types)})")
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


def null_count_query(source: str, names: Sequence[str], quote_name=None) -> str:
    """One scan counting the NULLs of each column.

    >>> null_count_query("t", ["a"])
    'SELECT count(*) - count("a") FROM t'
    """
    q = quote_name or quote
    return "SELECT " + ", ".join(f"count(*) - count({q(n)})" for n in names) + f" FROM {source}"


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
        raise ValueError(
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
