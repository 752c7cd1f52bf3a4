"""Column names: quoted for SQL (identifiers and string literals) and checked present in the data.

The lowest module of :mod:`privgraph.data` after the domain: the readers, the engines and the
front door all name columns through it.
"""

from __future__ import annotations

from typing import Sequence

from privgraph.validation import UnknownName


def quote(name: str) -> str:
    """A double-quoted SQL identifier.

    >>> quote('a"b')
    '"a""b"'
    """
    return '"' + str(name).replace('"', '""') + '"'


def sql_literal(text: str) -> str:
    """A single-quoted SQL string literal.

    >>> sql_literal("it's")
    "'it''s'"
    """
    return "'" + str(text).replace("'", "''") + "'"


def check_columns_present(columns, names: Sequence[str], what: str = "the data") -> None:
    """A schema check (public): every column a run needs must be in the data.

    >>> check_columns_present(["a", "b"], ["a", "c"], "'d.csv'")
    Traceback (most recent call last):
    ...
    privgraph.validation.UnknownName: column 'c' is not in 'd.csv' (its columns: a, b)
    """
    have = [str(c) for c in columns]
    if missing := [n for n in names if n not in have]:
        listed = ", ".join(have[:20]) + (", ..." if len(have) > 20 else "")
        which = f"column {missing[0]!r} is" if len(missing) == 1 else f"columns {missing} are"
        raise UnknownName(f"{which} not in {what} (its columns: {listed})")
