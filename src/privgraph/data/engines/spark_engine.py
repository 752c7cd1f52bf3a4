"""The cluster count engine: Apache Spark (PySpark, the optional extra ``privgraph[spark]``)."""

from __future__ import annotations

from dataclasses import dataclass, field
import itertools
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from privgraph.data.domain import Domain
from privgraph.data.encoding import check_missing_policy
from privgraph.data.engines.base import check_columns, check_no_bins, row_indices
from privgraph.data.engines.sql import COUNT, backquote, code_of, group_by_query, level_lookup, table_from_groups
from privgraph.data.files import check_path, complete_where, domain_of_file, file_format, null_count_query
from privgraph.data.records import Dialect, header_of, spark_records
from privgraph.validation import InvalidInput

ROW = "privgraph_row"
_ids = itertools.count()


@dataclass(frozen=True, eq=False)
class SparkEngine:
    """Counts over a Spark DataFrame, or a CSV/Parquet file read by Spark.

    ``data`` is a ``pyspark.sql.DataFrame`` (then ``domain`` is required: a cluster's data
    has a domain fixed in advance) or a path (the domain is read with DuckDB if not given).
    ``spark`` is the session (default: :func:`spark_session`'s, the active one first). The query is the same GROUP BY as
    DuckDB's (:func:`~privgraph.data.engines.group_by_query`). Row selections number the
    complete rows in the DataFrame's order, through one window over the whole data: fine
    for tests, costly on a cluster, where sub-sampling the table is the better road.
    """

    data: object
    domain: Domain | None = None
    missing: str = "error"
    spark: object = None
    _view: str = field(default="", repr=False)
    _where: str = field(default="", repr=False)
    _distinct: dict = field(default_factory=dict, repr=False)  # max_rows -> distinct_rows' result, once

    def __post_init__(self):
        check_missing_policy(self.missing)
        check_no_bins(self.domain, "SparkEngine")
        spark = self.spark or spark_session()
        df, domain = _frame_and_domain(spark, self.data, self.domain, self.missing)
        view = f"privgraph_data_{next(_ids)}"
        df.createOrReplaceTempView(view)
        nulls = spark.sql(null_count_query(view, domain.names, backquote)).collect()[0]
        where = complete_where(domain.names, list(nulls), self.missing, backquote)
        domain = domain.project(domain.discrete_names)
        for k, v in (("spark", spark), ("domain", domain), ("_view", view), ("_where", where)):
            object.__setattr__(self, k, v)

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        """Integer table over ``columns`` (see :class:`~privgraph.data.engines.CountEngine`)."""
        columns = check_columns(self.domain, columns)
        source, where = self._view, self._where
        if rows is not None:
            source, where = self._numbered_view(), f"WHERE {ROW} IN (SELECT r FROM {self._selection(rows)})"
        query = group_by_query(source, columns, where=where, style="spark")
        groups = [tuple(r) for r in self.spark.sql(query).collect()]
        if not columns:
            return np.array(groups[0][0] if groups else 0, dtype=np.int64)
        return table_from_groups(groups, columns, self.domain)

    def distinct_rows(self, max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        """``(codes of the distinct complete rows, their counts)``, or None if there are more
        than ``max_rows`` of them: what :class:`~privgraph.data.Tables` counts every table
        from, in memory, instead of one Spark job per table. The codes are
        ``domain.code_dtype`` (column-major), the counts int64.

        Two jobs. The first collects each column's distinct values (a column's levels, or
        the value that is an error), which the driver maps to codes exactly as
        :meth:`counts` does (a level, or its text; a value outside the levels is the same
        error). The second groups the rows by their codes, computed on the cluster by a
        CASE over those values, and brings back at most ``max_rows + 1`` rows of small
        integers. Only Spark SQL runs on the executors. The result is kept (read-only): a
        command whose stages each count from the distinct rows (a release's structure and
        parameters) runs these jobs once.
        """
        if max_rows not in self._distinct:
            found = self._fetch_distinct_rows(int(max_rows))
            for array in found or ():
                array.flags.writeable = False
            self._distinct[max_rows] = found
        return self._distinct[max_rows]

    def _fetch_distinct_rows(self, max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        from pyspark.sql import functions as F

        d = self.domain
        if not d.names:
            return None
        data = self.spark.sql(f"SELECT * FROM {self._view} {self._where}")
        columns = [F.col(backquote(name)) for name in d.names]
        seen = data.agg(*[F.collect_set(c) for c in columns]).collect()[0]
        small = "tinyint" if max(d.sizes) <= 128 else "smallint" if max(d.sizes) <= 1 << 15 else "int"
        coded = []
        for j, (name, column) in enumerate(zip(d.names, columns)):
            lookup, case = level_lookup(d.levels[j]), None
            for value in seen[j]:
                code = code_of(name, lookup, value)
                match = column == F.lit(value)
                case = F.when(match, code) if case is None else case.when(match, code)
            coded.append((F.lit(0) if case is None else case).cast(small).alias(f"privgraph_k{j}"))
        keys = [f"privgraph_k{j}" for j in range(len(d.names))]
        grouped = data.select(*coded).groupBy(*keys).agg(F.count(F.lit(1)).alias(COUNT))
        table = grouped.limit(int(max_rows) + 1).toArrow()
        if table.num_rows > max_rows:
            return None
        codes = np.empty((table.num_rows, len(d.names)), dtype=d.code_dtype, order="F")
        for j, key in enumerate(keys):
            codes[:, j] = table.column(key).to_numpy()
        return codes, np.asarray(table.column(COUNT).to_numpy(), dtype=np.int64)

    def _numbered_view(self) -> str:
        from pyspark.sql import Window, functions as F

        name = f"{self._view}_numbered"
        df = self.spark.sql(f"SELECT * FROM {self._view} {self._where}")
        order = Window.orderBy(F.monotonically_increasing_id())
        df.withColumn(ROW, F.row_number().over(order) - 1).createOrReplaceTempView(name)
        return name

    def _selection(self, rows) -> str:

        name = f"{self._view}_selection"
        pdf = pd.DataFrame({"r": row_indices(rows)})
        self.spark.createDataFrame(pdf).createOrReplaceTempView(name)
        return name


#: The environment variable that names a Spark master when no session is active.
MASTER_VARIABLE = "PRIVGRAPH_SPARK_MASTER"


def spark_session(master: str | None = None):
    """The Spark session a command runs on: the active one if there is one (a user on a
    cluster, in a notebook or under ``spark-submit``), otherwise a new one on ``master``
    (``--spark-master``), else on ``$PRIVGRAPH_SPARK_MASTER``, else, under ``spark-submit``,
    on the master it was given (its ``--master``), else ``local[*]``.

    ``local-cluster[2,1,1024]`` (two worker JVMs, as CI runs the Spark tests) makes closures,
    broadcast values and results cross process boundaries as on a real cluster.
    """

    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise ImportError("Spark (--engine spark, SparkEngine) needs PySpark: pip install 'privgraph[spark]' (and a Java runtime)") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    master = master or os.environ.get(MASTER_VARIABLE)
    builder = SparkSession.builder.appName("privgraph").config("spark.ui.showConsoleProgress", "false")
    if master or "PYSPARK_GATEWAY_PORT" not in os.environ:  # that variable: launched by spark-submit
        builder = builder.master(master or "local[*]").config("spark.ui.enabled", "false")
    return builder.getOrCreate()


def _frame_and_domain(spark, data, domain: Domain | None, missing: str):
    if isinstance(data, (str, Path)):
        path = check_path(data)
        if file_format(path) == "parquet":
            return spark.read.parquet(str(path)), domain or domain_of_file(path, missing=missing)

        dialect = domain.dialect if domain is not None else Dialect()
        records = spark_records(spark, path, header_of(path, dialect), dialect)  # text: matched to levels by text
        return records, domain or domain_of_file(path, missing=missing)
    if domain is None:
        raise InvalidInput("a SparkEngine over a DataFrame needs its domain= (fixed in advance)")
    return data, domain
