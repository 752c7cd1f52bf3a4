"""Counting a DuckDB relation or a Spark DataFrame through the front door's coded source.

Both are tables a user already holds in an engine: a ``duckdb.DuckDBPyRelation`` (a query
over any source DuckDB reads) or a ``pyspark.sql.DataFrame``. With a public domain and an
``invalid`` policy their values are coded in SQL by :func:`~privgraph.data.engines.sql.coded_source`
(the same ``CASE`` per column as for files), so a value outside the domain or missing never
raises, and the counts are exactly those of the in-memory path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain, Kind
from privgraph.data.engines import SparkEngine
from privgraph.data.engines.base import check_columns
from privgraph.data.engines.sql import (
    coded_source,
    complete_codes_where,
    group_by_query,
    packed_keys_query,
    read_packed_rows,
    table_from_codes,
)
from privgraph.data.names import check_columns_present
from privgraph.validation import InvalidInput

_VIEW = "privgraph_relation"
_ids = count()


@dataclass(frozen=True, eq=False)
class RelationEngine:
    """Counts over a DuckDB relation (coded by the public ``domain`` under ``invalid``).

    Row selections are not offered (a relation has no stable row numbers): sub-sample the
    tables instead, as Priv-PC does.

    >>> import duckdb
    >>> rel = duckdb.sql("SELECT * FROM (VALUES ('x', 1), ('y', 2), ('?', 2)) t(a, b)")
    >>> e = RelationEngine(rel, Domain(("a", "b"), (2, 2), levels=(("x", "y"), (1, 2))), "recode")
    >>> e.counts(["a", "b"]).tolist(), int(e.counts([]))
    ([[1, 1], [0, 1]], 3)
    """

    relation: object
    domain: Domain
    invalid: str
    _where: str = field(default="", repr=False)

    def __post_init__(self):

        discrete = self.domain.project(self.domain.discrete_names)
        check_columns_present(self.relation.columns, discrete.names, "the DuckDB relation")
        object.__setattr__(self, "domain", discrete)
        object.__setattr__(self, "_where", complete_codes_where(discrete.names)
                           if self.invalid == "drop" and discrete.names else "")

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        """Integer table over ``columns`` (see :class:`~privgraph.data.engines.CountEngine`)."""
        if rows is not None:
            raise InvalidInput("a DuckDB relation has no stable row numbers: row selections are not offered")
        columns = check_columns(self.domain, columns)
        sql = group_by_query(coded_source(_VIEW, self.domain, self.invalid), columns, where=self._where)
        groups = self.relation.query(_VIEW, sql).fetchall()
        if not columns:
            return np.array(groups[0][0] if groups else 0, dtype=np.int64)
        return table_from_codes(groups, self.domain.project(columns).shape)

    def distinct_rows(self, max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The distinct coded rows and their counts in one grouped query, or None past
        ``max_rows`` (as :meth:`privgraph.data.DuckDBEngine.distinct_rows`).

        >>> import duckdb
        >>> rel = duckdb.sql("SELECT * FROM (VALUES ('x', 1), ('y', 2), ('x', 1)) t(a, b)")
        >>> codes, n = RelationEngine(rel, Domain(("a", "b"), (2, 2), levels=(("x", "y"), (1, 2))), "drop").distinct_rows(5)
        >>> sorted(zip(codes.tolist(), n.tolist()))
        [([0, 0], 2), ([1, 1], 1)]
        """
        if not self.domain.names:
            return None
        query, runs = packed_keys_query(coded_source(_VIEW, self.domain, self.invalid), self.domain, where=self._where)
        return read_packed_rows(self.relation.query(_VIEW, query), runs, self.domain, max_rows)


#: Spark's integer types (``DataFrame.dtypes``), whose values are coded by number.
SPARK_INTEGERS = frozenset({"tinyint", "smallint", "int", "bigint"})


def spark_integer_columns(frame) -> set[str]:
    """The columns of a Spark DataFrame of an integer type: matched to their levels by number
    (:func:`~privgraph.data.engines.sql.level_case`'s ``integer``; the same codes as by text)."""
    return {name for name, kind in frame.dtypes if kind in SPARK_INTEGERS}


def coded_spark_engine(frame, domain: Domain, invalid: str):
    """A :class:`~privgraph.data.SparkEngine` over a Spark DataFrame coded by the public domain.

    The coded view holds codes 0..k-1 (NULL where ``invalid="drop"`` drops the row), so the
    engine counts them over a domain whose levels are the codes. Columns of an integer type
    (a Parquet file's, typically) are coded by number, the others by their text: the same
    codes either way (:func:`~privgraph.data.engines.sql.level_case`).
    """

    discrete = domain.project(domain.discrete_names)
    check_columns_present(frame.columns, discrete.names, "the Spark DataFrame")
    view = f"privgraph_spark_{next(_ids)}"
    frame.createOrReplaceTempView(view)
    where = " " + complete_codes_where(discrete.names, style="spark") if invalid == "drop" and discrete.names else ""
    source = coded_source(view, discrete, invalid, style="spark", integers=spark_integer_columns(frame))
    coded = frame.sparkSession.sql(f"SELECT * FROM {source} c{where}")
    kinds = tuple(Kind.ORDINAL if b is not None else k for k, b in zip(discrete.kinds, discrete.bins))
    codes_domain = Domain(discrete.names, discrete.sizes, kinds)  # levels: the codes themselves (bins: coded already)
    return LabelledEngine(SparkEngine(coded, domain=codes_domain, spark=frame.sparkSession, coded=True), discrete)


@dataclass(frozen=True, eq=False)
class LabelledEngine:
    """An engine that counts codes, shown with the public domain's levels (and its public flag)."""

    inner: object
    domain: Domain

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        return self.inner.counts(check_columns(self.domain, columns), rows)

    def distinct_rows(self, max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The inner engine's distinct rows (the same codes)."""
        return self.inner.distinct_rows(max_rows)


def is_duckdb_relation(x) -> bool:
    return type(x).__module__.startswith("duckdb") and hasattr(x, "query") and hasattr(x, "columns")


def is_spark_frame(x) -> bool:
    return type(x).__module__.startswith("pyspark") and hasattr(x, "createOrReplaceTempView")


__all__ = ["LabelledEngine", "RelationEngine", "coded_spark_engine", "is_duckdb_relation", "is_spark_frame",
           "spark_integer_columns"]
