"""The GROUP BY query DuckDB and Spark both run, and its result turned into a table."""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.data.files import quote

#: Name of the count column in :func:`group_by_query`'s result.
COUNT = "privgraph_n"


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
    q = quote if style == "ansi" else _backquote
    cols = ", ".join(q(c) for c in columns)
    select = f"SELECT {cols + ', ' if cols else ''}COUNT(*) AS {COUNT} FROM {source}"
    clause = f" {where}" if where else ""
    return select + clause + (f" GROUP BY {cols}" if cols else "")


def _backquote(name: str) -> str:
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
    lookups = [_lookup(domain.levels[domain.index(c)]) for c in columns]
    table = np.zeros(shape, dtype=np.int64)
    for row in groups:
        idx = tuple(_code(c, lk, v) for c, lk, v in zip(columns, lookups, row[:-1]))
        table[idx] += int(row[-1])
    return table


def _lookup(levels: tuple) -> dict:
    out = {str(v): i for i, v in enumerate(levels)}
    out.update({v: i for i, v in enumerate(levels)})
    return out


def _code(column: str, lookup: dict, value) -> int:
    if value is None:
        raise ValueError(f"column {column!r} has missing values; use missing='drop' to drop them")
    try:
        return lookup[value]
    except (KeyError, TypeError):
        pass
    try:
        return lookup[str(value)]
    except KeyError:
        raise ValueError(f"column {column!r} holds value {value!r} not among its levels") from None
