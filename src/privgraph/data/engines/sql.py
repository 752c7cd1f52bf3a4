"""The GROUP BY query DuckDB and Spark both run, and its result turned into a table."""

from __future__ import annotations

import math
import re
from typing import Collection, Iterable, Sequence

import numpy as np

from privgraph.data.bins import bin_sql, numeric_sql
from privgraph.data.codebook import DECIMAL, level_text
from privgraph.data.domain import Domain
from privgraph.data.missing import is_missing_level, missing_code, missing_sql
from privgraph.data.names import quote, sql_literal
from privgraph.validation import InvalidInput

#: Name of the count column in :func:`group_by_query`'s result.
COUNT = "privgraph_n"
#: The column of a held selection's block (0 for a plain selection): DuckDB's and Spark's ``hold``.
BLOCK = "privgraph_block"


def group_by_query(source: str, columns: Sequence[str], *, where: str = "", style: str = "ansi") -> str:
    """``SELECT columns, COUNT(*) FROM source [where] GROUP BY columns``, for any engine.

    ``style`` picks the identifier quotes: ``"ansi"`` (DuckDB) or ``"spark"``.

    Examples
    --------
    >>> group_by_query("t", ["a", "b"])
    'SELECT "a", "b", COUNT(*) AS privgraph_n FROM t GROUP BY "a", "b"'
    >>> group_by_query("t", [], style="spark")
    'SELECT COUNT(*) AS privgraph_n FROM t'
    """
    q = quote if style == "ansi" else backquote
    cols = ", ".join(q(c) for c in columns)
    select = f"SELECT {cols + ', ' if cols else ''}COUNT(*) AS {COUNT} FROM {source}"
    clause = f" {where}" if where else ""
    return select + clause + (f" GROUP BY {cols}" if cols else "")


def rows_by_block(groups: Iterable[Sequence], count: int) -> list[list[tuple]]:
    """The rows of a query grouped by (:data:`BLOCK`, columns...) for each of ``count`` blocks,
    as :func:`group_by_query` gives them (the block dropped): what ``block_counts`` of DuckDB
    and Spark turn into one table per block.

    >>> rows_by_block([(1, "x", 2), (0, "y", 5)], 3)
    [[('y', 5)], [('x', 2)], []]
    """
    out: list[list[tuple]] = [[] for _ in range(count)]
    for row in groups:
        out[int(row[0])].append(tuple(row[1:]))
    return out


def grouping_sets_query(source: str, sets: Sequence[Sequence[str]], *, where: str = "",
                        quote_name=None) -> tuple[str, tuple[str, ...]]:
    """One query counting the table of every column set in ``sets`` (``GROUP BY GROUPING
    SETS``, DuckDB and Spark SQL alike): ``(query, columns)``, ``columns`` the sets' columns in
    order of first use. A result row is each column's value, then each column's
    ``GROUPING()`` (1: not in the row's set), then the count; split it with
    :func:`split_grouping_sets`. One scan for every table, where a query each scanned the data
    once per table (an out-of-core file with more distinct rows than are fetched).

    >>> query, columns = grouping_sets_query("t", [("a", "b"), ("b",)])
    >>> columns
    ('a', 'b')
    >>> print(query)
    SELECT "a", "b", GROUPING("a"), GROUPING("b"), COUNT(*) AS privgraph_n FROM t GROUP BY GROUPING SETS (("a", "b"), ("b"))
    """
    q = quote_name or quote
    columns = tuple(dict.fromkeys(c for s in sets for c in s))
    values = ", ".join(q(c) for c in columns)
    grouping = ", ".join(f"GROUPING({q(c)})" for c in columns)
    groups = ", ".join("(" + ", ".join(q(c) for c in s) + ")" for s in sets)
    head = f"SELECT {values}, {grouping}, " if columns else "SELECT "
    clause = f" {where}" if where else ""
    return f"{head}COUNT(*) AS {COUNT} FROM {source}{clause} GROUP BY GROUPING SETS ({groups})", columns


def split_grouping_sets(groups: Iterable[Sequence], columns: Sequence[str],
                        sets: Sequence[Sequence[str]]) -> list[list[tuple]]:
    """The rows of :func:`grouping_sets_query`'s result for each set, as
    :func:`group_by_query` gives them: the set's values in its own order, then the count
    (sets that hold the same columns get the same rows).

    >>> rows = [("x", None, 0, 1, 3), ("y", None, 0, 1, 1), ("x", "p", 0, 0, 3), ("y", "p", 0, 0, 1)]
    >>> split_grouping_sets(rows, ("a", "b"), [("a",), ("b", "a")])
    [[('x', 3), ('y', 1)], [('p', 'x', 3), ('p', 'y', 1)]]
    """
    k = len(columns)
    at = {c: i for i, c in enumerate(columns)}
    by_columns: dict = {}
    for row in groups:
        inside = frozenset(c for c in columns if not row[k + at[c]])
        by_columns.setdefault(inside, []).append(row)
    return [[tuple(row[at[c]] for c in s) + (row[-1],) for row in by_columns.get(frozenset(s), [])] for s in sets]


def backquote(name: str) -> str:
    """A back-quoted identifier (Spark SQL).

    >>> backquote("a`b")
    '`a``b`'
    """
    return "`" + str(name).replace("`", "``") + "`"


def table_from_groups(groups: Iterable[Sequence], columns: Sequence[str], domain: Domain) -> np.ndarray:
    """The table over ``columns`` from rows ``(value_1, ..., value_k, count)``.

    Values are mapped to codes through ``domain.levels`` (a value may also match a level's
    text, since CSV readers differ on types); a value outside the levels, or a NULL, is an
    error naming the column.

    >>> d = Domain(("a",), (2,), levels=(("no", "yes"),))
    >>> table_from_groups([("yes", 3), ("no", 1)], ["a"], d).tolist()
    [1, 3]
    """
    shape = domain.project(columns).shape
    lookups = [level_lookup(domain.levels[domain.index(c)]) for c in columns]
    table = np.zeros(shape, dtype=np.int64)
    for row in groups:
        idx = tuple(code_of(c, lk, v) for c, lk, v in zip(columns, lookups, row[:-1]))
        table[idx] += int(row[-1])
    return table


def level_lookup(levels: tuple) -> dict:
    """The codes of a column's values for :func:`code_of`: each level and its text (the
    missing level, :mod:`privgraph.data.missing`, under the key None: a NULL's code)."""
    out = {str(v): i for i, v in enumerate(levels) if not is_missing_level(v)}
    out.update({v: i for i, v in enumerate(levels) if not is_missing_level(v)})
    if (code := missing_code(levels)) is not None:
        out[None] = code
    return out


def code_of(column: str, lookup: dict, value) -> int:
    """The code of a value of ``column`` (a level, else a level's text), or the error that
    names the column: a NULL, or a value outside the levels.

    >>> code_of("a", level_lookup((1, 2)), "2"), code_of("a", level_lookup(("x", "y")), "y")
    (1, 1)
    """
    if value is None and None in lookup:  # the column's missing level
        return lookup[None]
    if value is None:
        raise InvalidInput(f"column {column!r} has missing values; use missing='drop' to drop them")
    try:
        return lookup[value]
    except (KeyError, TypeError):
        pass
    try:
        return lookup[str(value)]
    except KeyError:
        raise InvalidInput(f"column {column!r} holds value {value!r} not among its levels") from None


def level_spellings(level) -> tuple[str, ...]:
    """The texts a data value may have (after a cast to text) to match ``level``.

    >>> level_spellings(1), level_spellings(True), level_spellings("yes")
    (('1', '1.0'), ('true', 'True', 'TRUE'), ('yes',))
    """

    canonical = level_text(level)
    if canonical in ("true", "false"):
        return (canonical, canonical.capitalize(), canonical.upper())
    if isinstance(level, str) and canonical != level.strip(" "):  # numeric text such as "01" or "1.0"
        return tuple(dict.fromkeys((level.strip(), canonical, canonical + ".0")))
    if not DECIMAL.fullmatch(canonical):  # text (as level_text: "１" or "1_0" is no number)
        return (canonical,)
    number = float(canonical)
    return (canonical, canonical + ".0") if number.is_integer() and "." not in canonical and "e" not in canonical else (canonical,)


def coded_source(source: str, domain: Domain, invalid: str, *, style: str = "ansi", keep: Sequence[str] = (),
                 integers: Collection[str] = ()) -> str:
    """A sub-query over ``source`` holding each discrete column's *code* (0..size-1).

    Values are matched to the levels by their text (:func:`level_spellings`); a binned
    continuous column's values are read as numbers and coded by their bin
    (:func:`~privgraph.data.bins.numeric_sql`, :func:`~privgraph.data.bins.bin_sql`: clipped
    to the bounds). A missing value or one outside the levels (or not a number) becomes
    code 0 under ``invalid="recode"`` and NULL under ``invalid="drop"`` (where
    :func:`complete_codes_where` then drops the row): a fixed per-record map, decided
    without looking at the data. ``keep`` names extra source columns carried along (e.g. a
    row number). ``integers`` names the source columns of an integer SQL type, matched by
    number instead of text (:func:`level_case`: the same codes, without a text per value).
    A column with a missing level (:mod:`privgraph.data.missing`) codes a missing value to
    it instead (never invalid): a fixed map of each record too, the level public (the
    codebook's), so each record is still in exactly one cell and no sensitivity changes.

    >>> d = Domain(("a",), (2,), levels=(("no", "yes"),))
    >>> coded_source("t", d, "recode")
    '(SELECT CASE WHEN trim(CAST("a" AS VARCHAR), \\' \\') IN (\\'no\\') THEN 0 WHEN trim(CAST("a" AS VARCHAR), \\' \\') IN (\\'yes\\') THEN 1 ELSE 0 END AS "a" FROM t)'
    """
    q = quote if style == "ansi" else backquote
    fallback = "0" if invalid == "recode" else "NULL"
    parts = [bin_sql(q(name), bins, fallback, missing=missing_code(levels)) + f" AS {q(name)}" if bins is not None
             else level_case(q(name), levels, fallback, style, integer=name in integers) + f" AS {q(name)}"
             for name, levels, bins in zip(domain.names, domain.levels, domain.bins)]
    parts += [q(k) for k in keep]
    return f"(SELECT {', '.join(parts)} FROM {numeric_source(source, domain, style, keep)})"


def level_case(column: str, levels: tuple, fallback: str, style: str = "ansi", *, integer: bool = False) -> str:
    """SQL: the code of ``column``'s value among ``levels`` (matched by text), else ``fallback``.

    ``integer``: the column has an integer SQL type, whose text is its value's canonical
    decimal spelling (no sign for 0 or above, no leading zeros, no spaces) in DuckDB and
    Spark alike. It is then matched by number against each level's spellings that are such
    a text (:func:`integer_spellings`): the same codes as matching its text, for every value,
    without casting each value to text (through Spark, the release of the 30-column scale
    table at 1e8 rows took 253 CPU-s against 2,385: benchmarks/results/spark_scale.jsonl).

    >>> level_case('"a"', ("x",), "NULL")
    'CASE WHEN trim(CAST("a" AS VARCHAR), \\' \\') IN (\\'x\\') THEN 0 ELSE NULL END'
    >>> level_case('"a"', (1, "x", "02"), "NULL", integer=True)
    'CASE WHEN "a" IN (1) THEN 0 WHEN "a" IN (2) THEN 2 ELSE NULL END'

    A missing level (:mod:`privgraph.data.missing`) matches no text; a missing value, not
    matched by a level, gets its code:

    >>> from privgraph.data.missing import MISSING
    >>> level_case('"a"', (1, MISSING), "NULL", integer=True)
    'CASE WHEN "a" IN (1) THEN 0 WHEN "a" IS NULL THEN 1 ELSE NULL END'
    """

    if integer:
        whens = " ".join(f"WHEN {column} IN ({', '.join(map(str, numbers))}) THEN {code}"
                         for code, numbers in enumerate(() if is_missing_level(v) else integer_spellings(v)
                                                        for v in levels) if numbers)
    else:
        # spaces only (U+0020), as level_text: DuckDB's plain trim takes NBSP too, Spark's does not
        text = f"trim(CAST({column} AS VARCHAR), ' ')" if style == "ansi" else f"trim(CAST({column} AS STRING))"
        whens = " ".join(f"WHEN {text} IN ({', '.join(sql_literal(s) for s in level_spellings(v))}) THEN {code}"
                         for code, v in enumerate(levels) if not is_missing_level(v))
    if (code := missing_code(levels)) is not None:
        whens += f"{' ' if whens else ''}WHEN {missing_sql(column, style, integer=integer)} THEN {code}"
    return f"CASE {whens} ELSE {fallback} END" if whens else fallback


#: The text of an integer in SQL (a cast to text): its canonical decimal spelling.
_INTEGER_TEXT = re.compile(r"0|-?[1-9][0-9]*")


def integer_spellings(level) -> tuple[int, ...]:
    """The integers whose text (cast in SQL) is one of ``level``'s spellings
    (:func:`level_spellings`): the values of an integer column that match ``level``.

    >>> integer_spellings(3), integer_spellings("03"), integer_spellings(2.5), integer_spellings("x")
    ((3,), (3,), (), ())
    """
    return tuple(int(s) for s in level_spellings(level) if _INTEGER_TEXT.fullmatch(s))


def numeric_source(source: str, domain: Domain, style: str = "ansi", keep: Sequence[str] = ()) -> str:
    """``source`` itself, or, where ``domain`` has binned columns, a sub-query in which each of
    them holds the DOUBLE its value spells (NULL if none; NaN for a missing value where the
    column has a missing level, :func:`~privgraph.data.bins.bin_sql`'s ``missing``), so that
    the bin search reads it once.

    >>> numeric_source("t", Domain.of(a=2))
    't'
    """
    if all(b is None for b in domain.bins):
        return source
    q = quote if style == "ansi" else backquote
    text_type = "VARCHAR" if style == "ansi" else "STRING"

    def number(name: str, levels: tuple) -> str:  # a missing value of a column with a missing level: NaN
        value = numeric_sql(f"CAST({q(name)} AS {text_type})", style)
        if missing_code(levels) is None:
            return value
        return f"CASE WHEN {missing_sql(q(name), style, continuous=True)} THEN CAST('NaN' AS DOUBLE) ELSE {value} END"

    cols = [number(n, lv) + f" AS {q(n)}" if b is not None else q(n)
            for n, b, lv in zip(domain.names, domain.bins, domain.levels)]
    return f"(SELECT {', '.join(cols + [q(k) for k in keep])} FROM {source})"


def complete_codes_where(names: Sequence[str], *, style: str = "ansi") -> str:
    """``WHERE`` every coded column is not NULL (the rows that ``invalid="drop"`` keeps).

    >>> complete_codes_where(["a", "b"])
    'WHERE "a" IS NOT NULL AND "b" IS NOT NULL'
    """
    q = quote if style == "ansi" else backquote
    return "WHERE " + " AND ".join(f"{q(n)} IS NOT NULL" for n in names)


def table_from_codes(groups: Iterable[Sequence], shape: Sequence[int]) -> np.ndarray:
    """The table from rows ``(code_1, ..., code_k, count)`` of a :func:`coded_source` query.

    >>> table_from_codes([(1, 3), (0, 1)], (2,)).tolist()
    [1, 3]
    """
    table = np.zeros(tuple(shape), dtype=np.int64)
    for row in groups:
        table[tuple(int(v) for v in row[:-1])] += int(row[-1])
    return table


#: Most cells one packed key may index: a mixed-radix code below this fits a signed BIGINT.
KEY_CELLS = 1 << 62


def packed_keys_query(source: str, domain: Domain, *, where: str = "", quote_name=None) -> tuple[str, list]:
    """The distinct coded rows of ``source`` and their counts, each row *packed* into few
    BIGINT keys: ``(query, runs)``, where the query returns the columns ``privgraph_k0``,
    ``privgraph_k1``, ... and :data:`COUNT`, and key i is the mixed-radix code of the
    columns ``runs[i] = (start, stop)`` (the first most significant; at most
    :data:`KEY_CELLS` cells a key). Grouping by a few integers instead of a column
    each keeps the engine's hash table small (alarm's 37 columns: one key); unpack with
    :func:`unpack_keys`. ``source`` must hold each column's *code* (:func:`coded_source`).
    ``quote_name``: the identifier quotes (default ANSI's, DuckDB; :func:`backquote`: Spark).

    >>> query, runs = packed_keys_query("t", Domain.of(a=3, b=4))
    >>> runs
    [(0, 2)]
    >>> print(query)
    SELECT privgraph_k0, COUNT(*) AS privgraph_n FROM (SELECT CAST("a" AS BIGINT) * 4 + CAST("b" AS BIGINT) AS privgraph_k0 FROM t) GROUP BY privgraph_k0
    """
    q = quote_name or quote
    runs, start, cells = [], 0, 1
    for j, size in enumerate(domain.sizes):
        if cells * size > KEY_CELLS and j > start:
            runs.append((start, j))
            start, cells = j, 1
        cells *= size
    runs.append((start, len(domain.sizes)))
    keys = []
    for i, (a, b) in enumerate(runs):
        terms = [f"CAST({q(domain.names[j])} AS BIGINT)" for j in range(a, b)]
        terms = [t + (f" * {math.prod(domain.sizes[j + 1:b])}" if j + 1 < b else "") for t, j in zip(terms, range(a, b))]
        keys.append(f"{' + '.join(terms)} AS privgraph_k{i}")
    names = ", ".join(f"privgraph_k{i}" for i in range(len(runs)))
    clause = f" {where}" if where else ""
    packed = f"(SELECT {', '.join(keys)} FROM {source}{clause})"
    return f"SELECT {names}, COUNT(*) AS {COUNT} FROM {packed} GROUP BY {names}", runs


#: Result rows read at a time by :func:`read_packed_rows`.
FETCH_ROWS = 1 << 20


def read_packed_rows(relation, runs: Sequence[tuple[int, int]], domain: Domain,
                     max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct rows and counts of a DuckDB ``relation`` running :func:`packed_keys_query`:
    ``(codes, counts)``, codes ``domain.code_dtype`` column-major and counts int64, or None
    past ``max_rows`` rows. The result is streamed in batches of :data:`FETCH_ROWS` rows,
    each unpacked at once (:func:`unpack_keys`), and a batch is freed once copied: the
    memory is the result's codes and counts and one batch.

    >>> import duckdb
    >>> d = Domain.of(a=3, b=4)
    >>> query, runs = packed_keys_query("(SELECT * FROM (VALUES (2, 3), (0, 1), (2, 3)) t(a, b))", d)
    >>> codes, counts = read_packed_rows(duckdb.sql(query), runs, d, 10)
    >>> sorted(zip(codes.tolist(), counts.tolist()))
    [([0, 1], 1), ([2, 3], 2)]
    >>> read_packed_rows(duckdb.sql(query), runs, d, 1) is None
    True
    """
    parts, total = [], 0
    with relation.to_arrow_reader(batch_size=FETCH_ROWS) as reader:  # streamed, closed on the way out
        for batch in reader:
            total += batch.num_rows
            if total > max_rows:
                return None
            keys = [batch.column(i).to_numpy() for i in range(len(runs))]
            parts.append((unpack_keys(keys, runs, domain.sizes, domain.code_dtype),
                          np.asarray(batch.column(len(runs)).to_numpy(), dtype=np.int64)))
    codes = np.empty((total, len(domain.names)), dtype=domain.code_dtype, order="F")
    counts, at = np.empty(total, dtype=np.int64), 0
    while parts:  # each batch freed once copied
        c, w = parts.pop(0)
        codes[at:at + len(w)], counts[at:at + len(w)] = c, w
        at += len(w)
    return codes, counts


def unpack_keys(keys: Sequence[np.ndarray], runs: Sequence[tuple[int, int]], sizes: Sequence[int],
                dtype) -> np.ndarray:
    """The codes (rows x columns, ``dtype``) from :func:`packed_keys_query`'s keys.

    >>> unpack_keys([np.array([0, 7, 11])], [(0, 2)], (3, 4), np.uint8).tolist()
    [[0, 0], [1, 3], [2, 3]]
    """
    rows = len(keys[0]) if keys else 0
    codes = np.empty((rows, len(sizes)), dtype=dtype)
    for key, (a, b) in zip(keys, runs):
        key = np.array(key, dtype=np.int64)  # a copy, divided in place
        for j in range(b - 1, a - 1, -1):
            key, codes[:, j] = np.divmod(key, sizes[j])
    return codes
