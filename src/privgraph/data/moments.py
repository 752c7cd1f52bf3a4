"""The sufficient statistics of a covariance: n, sums of x and of x x^T over the records, each
column scaled by its *public* domain into ``[-1/2, 1/2]``.

The scaling is a fixed map of each record on its own (decided from the codebook, never the
data), so neighbours stay neighbours:

* a continuous column with public bounds ``[lo, hi]``: its RAW value clipped to the bounds,
  ``(clip(v, lo, hi) - lo) / (hi - lo) - 1/2`` (never its bins, if the codebook has any);
* an ordinal column of k levels, or a nominal one with two: its code c in ``0..k-1``,
  ``c / (k - 1) - 1/2`` (codes follow the levels' order);
* a nominal column with three or more levels is refused (a linear-Gaussian test would test
  an arbitrary order of its codes; one-hot columns are exactly collinear, which partial
  correlations cannot take), and so is a continuous column without bounds in a private run.

Invalid values follow the front door's policy (:mod:`privgraph.data.frontdoor`): under
``"recode"`` a missing or non-numeric continuous value is the bounds' midpoint (0 after
scaling) and an unknown level the first level; under ``"drop"`` such a row is dropped.
Without bounds (non-private runs only) a continuous value is used as it is, and a row with a
missing one is dropped.

Engines: a DataFrame or an array in memory (numpy, in blocks of rows), a CSV/Parquet file
or a DuckDB relation (one SQL query of sums of products: the file is never loaded), or a
Spark DataFrame (the same query in Spark SQL, one job).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence
import uuid

import numpy as np
import pandas as pd

from privgraph.data.domain import Domain, Kind
from privgraph.data.engines.sql import backquote, coded_source
from privgraph.data.files import check_path, connect, duckdb_source, file_columns, file_format
from privgraph.data.frontdoor import check_type_can_match, clipped_values, level_codes
from privgraph.data.names import check_columns_present, quote as ansi_quote
from privgraph.data.relation import is_duckdb_relation, is_spark_frame
from privgraph.privacy.moments import Moments
from privgraph.validation import InvalidInput

#: Rows scaled and multiplied at a time in memory (bounds the float copy to about 8 d MB).
BLOCK_ROWS = 1 << 20


def moment_scaling(domain: Domain, *, need_bounds: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, width)`` of each column: ``x = (v - lo) / width - 1/2`` (public facts only).

    A continuous column without bounds gets ``(nan, nan)`` (raw values) when ``need_bounds``
    is False, else the error names it; nominal columns of three or more levels are refused.

    >>> d = Domain(("a", "x"), (3, 0), (Kind.ORDINAL, Kind.CONTINUOUS), bounds=(None, (10.0, 20.0)))
    >>> lo, width = moment_scaling(d)
    >>> lo.tolist(), width.tolist()
    ([0.0, 10.0], [2.0, 10.0])
    >>> moment_scaling(Domain(("z", "w"), (3, 4)))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: columns ['z', 'w'] are nominal with 3 or more levels: the Fisher-z test needs ordered values (make them ordinal in the codebook if their levels have an order, or drop them); use ci_test='g' for nominal tables
    """
    nominal = [n for n, k, s in zip(domain.names, domain.kinds, domain.sizes) if k is Kind.CATEGORICAL and s > 2]
    if nominal:
        raise InvalidInput(f"columns {nominal} are nominal with 3 or more levels: the Fisher-z test needs ordered "
                           "values (make them ordinal in the codebook if their levels have an order, or drop them); "
                           "use ci_test='g' for nominal tables")
    unbounded = [n for n, k, b in zip(domain.names, domain.kinds, domain.bounds) if k is Kind.CONTINUOUS and b is None]
    if unbounded and need_bounds:
        raise InvalidInput(f"continuous columns {unbounded} need public bounds in the domain (codebook "
                           '{"kind": "continuous", "bounds": [lo, hi]}) for a private covariance')
    lo, width = [], []
    for kind, size, bounds in zip(domain.kinds, domain.sizes, domain.bounds):
        if kind is Kind.CONTINUOUS:
            a, b = bounds if bounds is not None else (np.nan, np.nan)
            lo.append(float(a))
            width.append(float(b) - float(a))
        else:
            lo.append(0.0)
            width.append(float(max(size - 1, 1)))
    return np.array(lo), np.array(width)


def moment_sums(X, domain: Domain, *, invalid: str, names: Sequence[str] | None = None,
                norm: float | None = None) -> Moments:
    """The moments (n, sums of x, sums of x x^T) of ``X`` on its public ``domain``.

    ``X``: a DataFrame, a 2-D array with ``names``, a CSV/Parquet path or a DuckDB relation.
    ``norm``: each scaled record is then shrunk to at most this L2 norm (``x min(1, norm / ||x||)``,
    a per-record map; None: not shrunk).

    >>> import pandas as pd
    >>> d = Domain(("s", "x"), (2, 0), (Kind.ORDINAL, Kind.CONTINUOUS), (("no", "yes"), ()), (None, (0.0, 4.0)))
    >>> m = moment_sums(pd.DataFrame({"s": ["yes", "no", "?"], "x": [4.0, 9.0, None]}), d, invalid="recode")
    >>> m.count, m.first.tolist(), m.second.tolist()
    (3.0, [-0.5, 1.0], [[0.75, 0.0], [0.0, 0.5]])
    """

    lo, width = moment_scaling(domain, need_bounds=False)
    if isinstance(X, (str, os.PathLike)):
        return _file_moments(Path(X), domain, lo, width, invalid, norm)
    if is_duckdb_relation(X):
        return _sql_moments(lambda sql: X.query("privgraph_moments", sql), "privgraph_moments", domain, lo, width,
                            invalid, X.columns, norm)
    if is_spark_frame(X):  # the same query in Spark SQL, one job

        check_columns_present(X.columns, domain.names, "the Spark DataFrame")
        view = f"privgraph_moments_{uuid.uuid4().hex}"  # one per call: runs sharing a session never collide
        X.createOrReplaceTempView(view)
        try:
            row = X.sparkSession.sql(moments_query(view, domain, lo, width, invalid, norm, style="spark")).collect()[0]
        finally:
            X.sparkSession.catalog.dropTempView(view)
        return moments_from_row(list(row), len(domain.names), norm)
    if hasattr(X, "counts") and not hasattr(X, "columns"):
        raise InvalidInput(f"the Fisher-z test needs the records' values, not only counts from {type(X).__name__}: "
                           "give a DataFrame, an array with names, a CSV/Parquet file or a DuckDB relation")

    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X), columns=list(names or []))
    return frame_moments(frame, domain, lo, width, invalid, norm)


def frame_moments(frame, domain: Domain, lo: np.ndarray, width: np.ndarray, invalid: str,
                  norm: float | None = None) -> Moments:
    """The moments of a DataFrame (numpy, in blocks of :data:`BLOCK_ROWS` rows)."""

    check_columns_present(frame.columns, domain.names)
    d = len(domain.names)
    count, first, second = 0, np.zeros(d), np.zeros((d, d))
    for start in range(0, max(len(frame), 1), BLOCK_ROWS):
        part = frame.iloc[start:start + BLOCK_ROWS]
        x = np.empty((len(part), d))
        ok = np.ones(len(part), dtype=bool)
        for j, (name, kind, levels) in enumerate(zip(domain.names, domain.kinds, domain.levels)):
            if kind is Kind.CONTINUOUS and np.isnan(lo[j]):

                v = pd.to_numeric(part[name], errors="coerce").to_numpy(dtype=np.float64)
                ok &= np.isfinite(v)
                x[:, j] = np.where(np.isfinite(v), v, 0.0)
                continue
            if kind is Kind.CONTINUOUS:
                v, valid = clipped_values(part[name], domain.bounds[j])
            else:
                check_type_can_match(name, part[name].dtype, levels)
                codes = level_codes(part[name], levels)
                valid = codes >= 0
                v = np.where(valid, codes, 0).astype(np.float64)
            if invalid == "drop":
                ok &= valid
            x[:, j] = (v - lo[j]) / width[j] - 0.5
        x = x[ok]
        if norm is not None:
            length = np.sqrt(np.einsum("ij,ij->i", x, x))
            x = x * np.minimum(1.0, norm / np.maximum(length, 1e-300))[:, None]
        count += len(x)
        first += x.sum(axis=0)
        second += x.T @ x
    return Moments(float(count), first, second, norm)


def _file_moments(path: Path, domain: Domain, lo, width, invalid: str, norm: float | None) -> Moments:

    path = check_path(path)
    if file_format(path) == "parquet":

        check_columns_present(file_columns(path), domain.names, repr(str(path)))
    con = connect(csv_columns=len(domain.names) if file_format(path) == "csv" else 0)  # the planner passes off
    raw = duckdb_source(path, domain.names, all_text=True, dialect=domain.dialect, con=con)
    return _sql_moments(lambda sql: con.execute(sql), raw, domain, lo, width, invalid, None, norm)


def _sql_moments(run, source: str, domain: Domain, lo, width, invalid: str, columns, norm=None) -> Moments:
    if columns is not None:

        check_columns_present(columns, domain.names, "the DuckDB relation")
    row = run(moments_query(source, domain, lo, width, invalid, norm)).fetchall()[0]
    return moments_from_row(row, len(domain.names), norm)


def moments_query(source: str, domain: Domain, lo, width, invalid: str, norm: float | None = None, *,
                  style: str = "ansi") -> str:
    """One DuckDB (or, ``style="spark"``, Spark SQL) query of n, the sums of the scaled
    columns and of their pairwise products.

    >>> d = Domain(("x",), (0,), (Kind.CONTINUOUS,), bounds=((0.0, 2.0),))
    >>> q = moments_query("t", d, *moment_scaling(d), "recode")
    >>> q.startswith("SELECT count(*), sum(c0), sum(c0 * c0) FROM (SELECT ")
    True
    """

    quote, text, infinite = ((ansi_quote, "VARCHAR", "isinf({})") if style == "ansi" else
                             (backquote, "STRING", "abs({}) = double('Infinity')"))
    discrete = domain.project(domain.discrete_names)
    continuous = [n for n, k in zip(domain.names, domain.kinds) if k is Kind.CONTINUOUS]
    coded = coded_source(source, discrete, invalid, keep=continuous, style=style) if discrete.names else \
        f"(SELECT {', '.join(quote(n) for n in continuous)} FROM {source})"
    scaled, nulls = [], []
    for j, (name, kind) in enumerate(zip(domain.names, domain.kinds)):
        if kind is Kind.CONTINUOUS:
            v = f"TRY_CAST(trim(CAST({quote(name)} AS {text})) AS DOUBLE)"
            if np.isnan(lo[j]):  # no bounds (not private): the raw value; a missing one drops its row
                expr = f"CASE WHEN isnan({v}) OR {infinite.format(v)} THEN NULL ELSE {v} END"
            else:
                a, w = float(lo[j]), float(width[j])
                inside = f"(least(greatest({v}, {a!r}), {a + w!r}) - {a!r}) / {w!r} - 0.5"
                fallback = "0.0" if invalid == "recode" else "NULL"
                expr = f"CASE WHEN {v} IS NULL OR isnan({v}) THEN {fallback} ELSE {inside} END"
        else:
            expr = f"CAST({quote(name)} AS DOUBLE) / {float(width[j])!r} - 0.5"
        scaled.append(f"{expr} AS c{j}")
        nulls.append(f"c{j} IS NOT NULL")
    d = len(domain.names)
    rows = f"(SELECT {', '.join(scaled)} FROM {coded}) WHERE {' AND '.join(nulls)}"
    if norm is not None:  # each record shrunk to the L2 norm: x * least(1, norm / ||x||)
        length = "sqrt(" + " + ".join(f"c{j} * c{j}" for j in range(d)) + ")"
        shrink = f"least(1.0, {float(norm)!r} / greatest({length}, 1e-300))"
        rows = f"(SELECT {', '.join(f'c{j} * f AS c{j}' for j in range(d))} FROM (SELECT *, {shrink} AS f FROM {rows}))"
    sums = [f"sum(c{j})" for j in range(d)] + [f"sum(c{j} * c{k})" for j in range(d) for k in range(j, d)]
    return f"SELECT count(*), {', '.join(sums)} FROM {rows}"


def moments_from_row(row: Sequence, d: int, norm: float | None = None) -> Moments:
    """The :class:`Moments` from the row of :func:`moments_query` (NULL sums of no rows are 0)."""
    values = np.array([0.0 if v is None else float(v) for v in row])
    second = np.zeros((d, d))
    second[np.triu_indices(d)] = values[1 + d:]
    return Moments(values[0], values[1:1 + d], second + np.triu(second, 1).T, norm)


__all__ = ["BLOCK_ROWS", "frame_moments", "moment_scaling", "moment_sums", "moments_from_row", "moments_query"]
