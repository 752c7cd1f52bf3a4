"""How many values of a file a private run would drop or recode, per column: the data owner's
check (``privgraph domain DATA --check CODEBOOK``). It READS THE DATA and its counts are not
private; no release uses them.

One SQL query, built here for DuckDB and for Spark (:func:`invalid_values_query`), over the
records the engines count (a CSV file read by the codebook's fixed dialect, so a line that
does not parse is a record of missing values, :mod:`privgraph.data.records`): per column,
the values that are missing and those outside the domain, matched to the levels and bins by
the same SQL the engines code them with (:func:`~privgraph.data.engines.sql.level_case`,
:func:`~privgraph.data.bins.bin_sql`). One scan, one Spark job.
"""

from __future__ import annotations

from pathlib import Path
from typing import Collection, Sequence
import uuid

from privgraph.data.bins import bin_sql, numeric_sql
from privgraph.data.domain import Domain, Kind
from privgraph.data.engines.sql import backquote, level_case
from privgraph.data.missing import missing_sql
from privgraph.data.files import connect, duckdb_source, file_columns, file_format
from privgraph.data.frontdoor import check_engine, open_file
from privgraph.data.names import check_columns_present, quote
from privgraph.data.records import VALID
from privgraph.data.relation import spark_integer_columns


def invalid_values_query(source: str, domain: Domain, *, style: str = "ansi", has_valid: bool = False,
                         integers: Collection[str] = ()) -> str:
    """``SELECT rows, [lines that did not parse], missing_1, outside_1, missing_2, ...`` over
    ``source``: a column's *missing* values are those :mod:`privgraph.data.missing` calls
    missing (NULL, empty, ``nan``; in a continuous column also ``inf``), which a column with a
    missing level keeps as that level and any other column treats as invalid; *outside* are
    the others that a private run drops or recodes (not a level; a binned column's text that is not a number,
    where a number is clipped into the bins; an unbinned continuous column's non-number or,
    with bounds, a number outside them). ``integers``: the source's columns of an integer
    type, matched to their levels by number (the same as by text; Spark's Parquet columns).

    >>> import duckdb
    >>> d = Domain(("a", "x"), (2, 0), (Kind.CATEGORICAL, Kind.CONTINUOUS), (("no", "yes"), ()), (None, (0.0, 1.0)))
    >>> q = invalid_values_query("(SELECT * FROM (VALUES ('yes', '0.5'), (NULL, '2'), ('?', 'n/a')) t(a, x))", d)
    >>> duckdb.sql(q).fetchall()
    [(3, 1, 1, 0, 2)]
    """
    q = quote if style == "ansi" else backquote
    text = "VARCHAR" if style == "ansi" else "STRING"
    inner, parts = [], ["count(*)"] + ([f"count(CASE WHEN NOT {VALID} THEN 1 END)"] if has_valid else [])
    for j, (name, kind, levels, bounds) in enumerate(zip(domain.names, domain.kinds, domain.levels, domain.bounds)):
        raw, number, bins = f"r{j}", f"x{j}", domain.bins_of(name)
        inner.append(f"{q(name)} AS {raw}")
        if bins is not None:
            valid = bin_sql(number, bins, "NULL")
        elif kind is Kind.CONTINUOUS:
            valid = number if bounds is None else f"CASE WHEN {number} BETWEEN {float(bounds[0])!r} AND {float(bounds[1])!r} THEN 1 END"
        else:
            valid = level_case(raw, levels, "NULL", style, integer=name in integers)
        if kind is Kind.CONTINUOUS:
            inner.append(f"{numeric_sql(f'CAST({q(name)} AS {text})', style)} AS {number}")
        missing = missing_sql(raw, style, continuous=kind is Kind.CONTINUOUS, integer=name in integers)
        parts += [f"count(CASE WHEN {missing} THEN 1 END)", f"count(CASE WHEN NOT {missing} AND {valid} IS NULL THEN 1 END)"]
    keep = [VALID] if has_valid else []
    return f"SELECT {', '.join(parts)} FROM (SELECT {', '.join(inner + keep)} FROM {source})"


def count_invalid_values(path: Path, domain: Domain, engine: str = "duckdb", *, spark_master: str | None = None
                         ) -> tuple[int, int | None, dict[str, tuple[int, int]]]:
    """``(rows, lines that did not parse (None for Parquet), {column: (missing, outside)})`` of
    a checked CSV/Parquet file against its codebook ``domain``, counted by ``engine`` (DuckDB,
    or Spark on :func:`~privgraph.data.engines.spark_engine.spark_session`'s session).

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("a\\nyes\\n\\nmaybe\\nno,1\\n")
    >>> count_invalid_values(p, Domain(("a",), (2,), levels=(("no", "yes"),)))
    (3, 1, {'a': (1, 1)})
    """

    csv = file_format(path) == "csv"
    if not csv:
        check_columns_present(file_columns(path), domain.names, repr(str(path)))
    if check_engine(engine) == "duckdb":
        con = connect(csv_columns=len(domain.names) if csv else 0)
        source = duckdb_source(path, domain.names, all_text=True, dialect=domain.dialect, con=con)
        row = con.execute(invalid_values_query(source, domain, has_valid=csv)).fetchone()
    else:
        frame = open_file(path, "spark", domain.dialect, spark_master=spark_master)
        check_columns_present(frame.columns, domain.names, repr(str(path)))
        view = f"privgraph_check_{uuid.uuid4().hex}"
        frame.createOrReplaceTempView(view)
        try:
            query = invalid_values_query(view, domain, style="spark", has_valid=csv, integers=spark_integer_columns(frame))
            row = frame.sparkSession.sql(query).collect()[0]
        finally:
            frame.sparkSession.catalog.dropTempView(view)
    return _counts(list(row), domain.names, csv)


def _counts(row: Sequence, names: Sequence[str], csv: bool):
    rows, malformed = int(row[0]), int(row[1]) if csv else None
    cells = [int(v) for v in row[2 if csv else 1:]]
    return rows, malformed, {n: (cells[2 * j], cells[2 * j + 1]) for j, n in enumerate(names)}


__all__ = ["count_invalid_values", "invalid_values_query"]
