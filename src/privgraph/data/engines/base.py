"""The count-engine protocol and what every engine shares: column checks, marginals, batches."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from privgraph.data.domain import Domain
from privgraph.validation import InvalidInput, UnknownName

#: The one limit on a joint table counted once so that other tables are its marginals
#: (cells; 2**22 int64 cells = 32 MiB), kept by :class:`~privgraph.data.tables.Tables`, the
#: one table object (PC's tests and :func:`count_tables` both count through it).
JOINT_TABLE_CELLS = 1 << 22


@runtime_checkable
class CountEngine(Protocol):
    """Anything that counts rows of a dataset over a few discrete columns."""

    domain: Domain

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        """Integer table shaped ``domain.project(columns).shape`` (rows restricted to ``rows``)."""
        ...


def check_columns(domain: Domain, columns: Sequence[str]) -> tuple[str, ...]:
    """``columns`` as a tuple, if they are distinct discrete columns of ``domain``.

    >>> check_columns(Domain.of(a=2, b=3), ["b"])
    ('b',)
    >>> check_columns(Domain.of(a=2), ["z"])
    Traceback (most recent call last):
    ...
    privgraph.validation.UnknownName: columns ['z'] not in domain ['a']
    """
    if isinstance(columns, str):
        raise TypeError(f"columns must be a sequence of names, got the string {columns!r}")
    columns = tuple(columns)
    if missing := [c for c in columns if c not in domain.names]:
        raise UnknownName(f"columns {missing} not in domain {list(domain.names)}")
    if len(set(columns)) != len(columns):
        raise InvalidInput(f"columns repeat a name: {list(columns)}")
    if cont := [c for c in columns if c in domain.uncountable_names]:
        raise InvalidInput(f"columns {cont} are continuous with no public bins; only discrete or binned columns "
                           "can be counted")
    return columns


def check_no_bins(domain: Domain | None, engine: str) -> None:
    """Refuse a domain with binned continuous columns where values are matched to levels as
    they are (an engine without an ``invalid`` policy): bins are coded by the front door.

    >>> from privgraph.data.bins import make_bins
    >>> from privgraph.data.domain import Kind
    >>> check_no_bins(Domain(("x",), (2,), (Kind.CONTINUOUS,), bins=(make_bins((0.0, 1.0), 2),)), "E")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: E: columns ['x'] are read through public bins, which only the front door codes: open the data with privgraph.data.open_engine (or pass invalid='drop' or 'recode')
    """
    if domain is not None and (binned := [n for n, b in zip(domain.names, domain.bins) if b is not None]):
        raise InvalidInput(f"{engine}: columns {binned} are read through public bins, which only the front door codes: "
                           "open the data with privgraph.data.open_engine (or pass invalid='drop' or 'recode')")


def marginal(table: np.ndarray, table_columns: Sequence[str], columns: Sequence[str]) -> np.ndarray:
    """The marginal of ``table`` (axes named ``table_columns``) over ``columns``, in that order.

    >>> t = np.arange(6).reshape(2, 3)
    >>> marginal(t, ["a", "b"], ["b"]).tolist(), marginal(t, ["a", "b"], ["b", "a"]).shape
    ([3, 5, 7], (3, 2))
    """
    table_columns = list(table_columns)
    if missing := [c for c in columns if c not in table_columns]:
        raise UnknownName(f"columns {missing} not in table over {table_columns}")
    drop = tuple(i for i, c in enumerate(table_columns) if c not in columns)
    summed = table.sum(axis=drop) if drop else table
    kept = [c for c in table_columns if c in columns]
    return np.transpose(summed, [kept.index(c) for c in columns])




def check_rows(rows, n: int | None = None) -> np.ndarray:
    """A row selection as a boolean mask (length n) or strictly increasing int64 indices.

    Every engine counts each selected row once, so indices must not repeat; the samplers of
    :mod:`privgraph.data.sampling` return them sorted.

    >>> check_rows(np.array([0, 2, 5])).tolist()
    [0, 2, 5]
    >>> check_rows(np.array([2, 0]))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: rows must be strictly increasing row indices or a boolean mask
    >>> check_rows(np.array([3]), n=2)
    Traceback (most recent call last):
    ...
    IndexError: row selection holds indices outside 0..1
    """
    rows = np.asarray(rows)
    if rows.dtype == np.bool_:
        if rows.ndim != 1 or (n is not None and rows.shape != (n,)):
            raise InvalidInput(f"a boolean row mask must have shape ({n},), got {rows.shape}")
        return rows
    if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
        raise InvalidInput(f"rows must be a 1-D integer index array or a boolean mask, got {rows.dtype} {rows.shape}")
    if rows.size > 1 and not (np.diff(rows) > 0).all():
        raise InvalidInput("rows must be strictly increasing row indices or a boolean mask")
    if rows.size and (rows[0] < 0 or (n is not None and rows[-1] >= n)):
        raise IndexError(f"row selection holds indices outside 0..{(n or 0) - 1}")
    return rows.astype(np.int64, copy=False)


def row_indices(rows) -> np.ndarray:
    """Strictly increasing int64 indices of a checked selection (mask or indices)."""
    rows = check_rows(rows)
    return np.flatnonzero(rows).astype(np.int64) if rows.dtype == np.bool_ else rows
