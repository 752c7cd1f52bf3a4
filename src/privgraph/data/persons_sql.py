"""Truncation to at most k rows per person inside DuckDB and Spark (out of core).

privgraph's mechanisms protect one *row*. A table where one person holds many rows is made
fit for them by a public bound ``k``: of each person's rows at most ``k`` are kept, chosen
uniformly at random, and the person column is dropped (it is never counted, never released).
:func:`truncate_relation` does this in a DuckDB relation and :func:`truncate_spark` in a Spark
DataFrame, so that a file larger than memory is truncated where it lies (the pandas path is
:mod:`privgraph.data.persons`).

The rule, the same in both engines:

* a row without a person is dropped: NULL, NaN, or a text that is empty or spaces only (a
  text id is read without its leading and trailing spaces), as
  :func:`privgraph.data.persons.kept_rows` reads a pandas column. A fixed rule of the record
  alone: adding or removing any one person changes the dropped rows by that person's only;
* each of a person's rows gets a key: a 64-bit hash of ``(salt, person, the row's values,
  its copy number)``, the copy number telling identical rows of one person apart (1, 2, ...
  among them: identical rows are interchangeable, so which one gets which number does not
  change the output);
* the ``k`` rows of smallest key are kept (ties broken by the values: the kept rows are a
  function of the person's own rows and the salt, whatever the scan's order or parallelism).

The pandas path keys a row by its place among the person's rows in the frame's order
instead; a relation or a Spark DataFrame has no order (a parallel scan reads the rows in any
order), so here the row's values stand in for it. Both keys are functions of the person's own
rows and the salt, and both choose a uniform ``k``-subset.

**Privacy.** For every fixed salt this is a *stable transformation* under add/remove of one
person: a person's kept rows are a function of that person's rows and the salt only, so
adding or removing one person adds or removes at most ``k`` rows of the output, and every
other person's kept rows are unchanged (replacing one person's rows: at most ``k`` rows
removed and ``k`` added). A mechanism that is epsilon-DP for one row added or removed is then
``k * epsilon``-DP for one person (group privacy; with a delta, and the conversion the
estimators make: :mod:`privgraph.privacy.person`). The guarantee does not rest on the salt being secret nor
on the hash being cryptographic: those matter only for the choice to be *uniform* (each of a
person's ``r`` rows kept with probability ``k / r``, every ``k``-subset alike), which the tests
check; a secret salt from OS entropy also keeps anyone from steering which rows are kept.

**Memory.** Both are two window functions partitioned by the person (the copy number, then
the rank of the key), which DuckDB and Spark evaluate with external (spilling) sorts: the
memory is bounded by the engine's limit (DuckDB's ``SET memory_limit``), not by the rows
(``benchmarks/bench_persons.py`` measures it). The hash is the engine's own (DuckDB's
``hash``, Spark's ``xxhash64``): a fixed salt gives the same rows on every run of one
engine version, and the two engines agree in the properties, not in the rows they keep.
"""

from __future__ import annotations

from privgraph.data.engines.sql import backquote
from privgraph.data.names import check_columns_present, quote
from privgraph.data.relation import is_duckdb_relation, is_spark_frame
from privgraph.validation import InvalidInput, positive_int

#: The columns the truncation adds and removes again (a user's column may not be so named).
PERSON = "privgraph_person"
COPY = "privgraph_copy"
RANK = "privgraph_rank"
#: A salt is a 64-bit integer (:func:`privgraph.privacy.person.truncation_salt`'s).
SALT_BOUND = 1 << 64


def truncate_relation(relation, column: str, k: int, salt: int):
    """The rows of a DuckDB relation, at most ``k`` of each person (the values of ``column``),
    chosen by a hash salted with ``salt``; ``column`` is dropped, and so are the rows without a
    person (the rule, its privacy and its memory: the module's docstring).

    The result is a lazy ``duckdb.DuckDBPyRelation`` on the same connection (its memory
    limit applies): nothing is read until it is counted.

    Parameters
    ----------
    relation : duckdb.DuckDBPyRelation
        The records, several per person (``duckdb.read_parquet(...)``, a query, a table).
    column : str
        The person column: its values name the person a row belongs to.
    k : int
        The public bound: the most rows kept of one person (>= 1).
    salt : int
        0 <= salt < 2**64; the same salt keeps the same rows.

    Examples
    --------
    >>> import duckdb
    >>> rel = duckdb.sql("SELECT * FROM (VALUES (1, 'x'), (1, 'y'), (1, 'x'), (2, 'y'), (NULL, 'z')) t(pid, a)")
    >>> kept = truncate_relation(rel, "pid", 2, salt=7)
    >>> kept.columns
    ['a']
    >>> len(kept.fetchall())  # two of person 1's three rows, person 2's one row
    3
    >>> sorted(kept.fetchall()) == sorted(truncate_relation(rel, "pid", 2, salt=7).fetchall())
    True
    """
    values = _check(relation, column, k, salt, "the DuckDB relation")
    kind = str(dict(zip(relation.columns, relation.types))[column]).upper()
    person, cols = _person(quote(column), kind, "ansi"), ", ".join(quote(c) for c in values)
    copies = relation.project(f"{person} AS {PERSON}, {cols}").filter(f"{PERSON} IS NOT NULL").project(
        f"*, row_number() OVER (PARTITION BY {PERSON}, {cols}) AS {COPY}")
    key = f"hash(hash({int(salt)}::UBIGINT, {PERSON}, {cols}, {COPY}))"
    ranked = copies.project(f"{cols}, row_number() OVER (PARTITION BY {PERSON} ORDER BY {key}, {cols}) AS {RANK}")
    return ranked.filter(f"{RANK} <= {int(k)}").project(cols)


def truncate_spark(frame, column: str, k: int, salt: int):
    """The rows of a Spark DataFrame, at most ``k`` of each person (the values of ``column``),
    chosen by a hash salted with ``salt``; ``column`` is dropped, and so are the rows without a
    person: :func:`truncate_relation`'s rule in Spark SQL (``xxhash64``), a lazy
    ``pyspark.sql.DataFrame`` whose windows Spark sorts with spilling.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        The records, several per person.
    column, k, salt
        As :func:`truncate_relation`'s.

    Examples
    --------
    >>> truncate_spark("not a frame", "pid", 2, salt=7)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: the records to truncate must be a Spark DataFrame, got str
    """
    values = _check(frame, column, k, salt, "the Spark DataFrame")
    kind = dict(frame.dtypes)[column].upper()
    person, cols = _person(backquote(column), kind, "spark"), ", ".join(backquote(c) for c in values)
    copies = frame.selectExpr(f"{person} AS {PERSON}", *(backquote(c) for c in values)).where(
        f"{PERSON} IS NOT NULL").selectExpr("*", f"row_number() OVER (PARTITION BY {PERSON}, {cols} ORDER BY {PERSON}) AS {COPY}")
    signed = salt - (1 << 64) if salt >= 1 << 63 else salt  # Spark's BIGINT: the same 64 bits
    key = f"xxhash64(CAST('{signed}' AS BIGINT), {PERSON}, {cols}, {COPY})"
    ranked = copies.selectExpr(
        *(backquote(c) for c in values),
        f"row_number() OVER (PARTITION BY {PERSON} ORDER BY {key}, {cols}) AS {RANK}")
    return ranked.where(f"{RANK} <= {int(k)}").selectExpr(*(backquote(c) for c in values))


def _person(name: str, kind: str, style: str) -> str:
    """The person of a row, NULL where it has none: a text id without its leading and
    trailing spaces (NULL if nothing is left), a floating-point id NULL if NaN, as
    :func:`privgraph.data.persons.kept_rows` reads a pandas column.

    >>> print(_person('"pid"', "VARCHAR", "ansi"), _person("`pid`", "DOUBLE", "spark"), sep="; ")
    nullif(trim("pid", ' '), ''); CASE WHEN isnan(`pid`) THEN NULL ELSE `pid` END
    """
    if kind in ("VARCHAR", "STRING"):
        return f"nullif(trim({name}, ' '), '')" if style == "ansi" else f"nullif(trim(BOTH ' ' FROM {name}), '')"
    if kind in ("FLOAT", "DOUBLE", "REAL"):
        return f"CASE WHEN isnan({name}) THEN NULL ELSE {name} END"
    return name


def _check(records, column, k, salt, what: str) -> list[str]:
    """The columns kept (all but ``column``), after checking the arguments (public facts only)."""
    spark = what.startswith("the Spark")
    is_kind = is_spark_frame(records) if spark else is_duckdb_relation(records)
    if not is_kind:
        kind = "a Spark DataFrame" if spark else "a DuckDB relation"
        raise InvalidInput(f"the records to truncate must be {kind}, got {type(records).__name__}")
    if not isinstance(column, str):
        raise InvalidInput(f"the person column must be a column name (a str), got {column!r}")
    positive_int("max_rows_per_person", k)
    if isinstance(salt, bool) or not isinstance(salt, int) or not 0 <= salt < SALT_BOUND:
        raise InvalidInput(f"salt must be an integer in [0, 2**64), got {salt!r}")
    columns = [str(c) for c in records.columns]
    check_columns_present(columns, [column], what)
    if taken := sorted({PERSON, COPY, RANK} & set(columns)):
        raise InvalidInput(f"{what} has a column named {taken[0]!r}, a name the truncation uses: rename it")
    values = [c for c in columns if c != column]
    if not values:
        raise InvalidInput(f"{what} has no column besides the person column {column!r}: nothing to keep")
    return values


__all__ = ["truncate_relation", "truncate_spark"]
