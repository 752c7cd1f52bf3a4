"""The cluster count engine: Apache Spark (PySpark, the optional extra ``privgraph[spark]``)."""

from __future__ import annotations

from dataclasses import dataclass, field
import itertools
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from privgraph.data.domain import Domain
from privgraph.data.encoding import check_missing_policy
from privgraph.data.engines.base import check_columns, check_no_bins, row_indices
from privgraph.data.engines.sql import (BLOCK, COUNT, backquote, code_of, group_by_query, grouping_sets_query,
                                        level_lookup, packed_keys_query, rows_by_block, split_grouping_sets, table_from_groups,
                                        unpack_keys)
from privgraph.data.files import check_path, complete_where, domain_of_file, file_format
from privgraph.data.records import Dialect, header_of, spark_records
from privgraph.validation import InvalidInput

ROW = "privgraph_row"
_ids = itertools.count()

#: The environment variable that names the folder where a :class:`SparkEngine` writes held
#: selections (:meth:`SparkEngine.hold`) when no ``scratch=`` is given; on a cluster, a
#: folder that the driver writes and every executor reads. Default: the system's temporary
#: folder (enough for ``local[*]`` and ``local-cluster``).
SCRATCH_VARIABLE = "PRIVGRAPH_SPARK_SCRATCH"


@dataclass(frozen=True, eq=False)
class SparkHeldRows:
    """A secret row selection that a :class:`SparkEngine` holds as a Parquet folder of its own
    (``folder``, private to this user: ``mkdtemp``), removed when this object is freed:
    ``frame`` is the rows' positions among the complete rows (:meth:`SparkEngine.hold`), their
    rank in the selection and their block. ``within``: the selection its ranks refer to, kept
    alive while this one is."""

    frame: object
    folder: str
    within: "SparkHeldRows | None" = None


@dataclass(frozen=True, eq=False)
class SparkEngine:
    """Counts over a Spark DataFrame, or a CSV/Parquet file read by Spark.

    ``data`` is a ``pyspark.sql.DataFrame`` (then ``domain`` is required: a cluster's data
    has a domain fixed in advance) or a path (the domain is read with DuckDB if not given).
    ``spark`` is the session (default: :func:`spark_session`'s, the active one first). The query is the same GROUP BY as
    DuckDB's (:func:`~privgraph.data.engines.group_by_query`). Row selections (``rows=``,
    :meth:`hold`) number the complete rows in the data's order on the executors (each
    partition's rows counted in one job, once) and are streamed, chunk by chunk, into a
    Parquet folder under ``scratch`` (default ``$PRIVGRAPH_SPARK_SCRATCH``, else the system's
    temporary folder; on a cluster, one every executor reads), so the driver holds one chunk
    of a selection, never the selection. ``coded``: ``data`` holds each column's code 0..k-1
    already (or NULL; :func:`~privgraph.data.relation.coded_spark_engine`'s view), so its
    values need not be collected and mapped to codes.
    """

    data: object
    domain: Domain | None = None
    missing: str = "error"
    spark: object = None
    scratch: str | None = None
    coded: bool = False
    _view: str = field(default="", repr=False)
    _where: str = field(default="", repr=False)
    _distinct: dict = field(default_factory=dict, repr=False)  # max_rows -> distinct_rows' result, once
    _numbered_rows: list = field(default_factory=list, repr=False)  # the numbered complete rows, once (_numbered)
    _complete: int = field(default=0, repr=False)  # the number of complete rows (the first scan)
    _values: tuple = field(default=(), repr=False)  # each discrete column's distinct values in all rows (first scan)

    def __post_init__(self):
        check_missing_policy(self.missing)
        check_no_bins(self.domain, "SparkEngine")
        spark = self.spark or spark_session()
        df, domain = _frame_and_domain(spark, self.data, self.domain, self.missing)
        view = f"privgraph_data_{next(_ids)}"
        df.createOrReplaceTempView(view)
        nulls, complete, values = _first_scan(df, domain, values=not self.coded)
        where = complete_where(domain.names, nulls, self.missing, backquote)
        domain = domain.project(domain.discrete_names)
        for k, v in (("spark", spark), ("domain", domain), ("_view", view), ("_where", where),
                     ("_complete", complete), ("_values", values)):
            object.__setattr__(self, k, v)

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        """Integer table over ``columns`` (see :class:`~privgraph.data.engines.CountEngine`)."""
        columns = check_columns(self.domain, columns)
        if not columns and rows is None:
            return np.array(self._complete, dtype=np.int64)  # counted by the first scan
        source, where = self._view, self._where
        if rows is not None:  # a held selection, or positions held for this query
            held = rows if isinstance(rows, SparkHeldRows) else self.hold([(row_indices(rows), None)])
            source, where = self._held_view(held, with_block=False), ""
        query = group_by_query(source, columns, where=where, style="spark")
        return self._table([tuple(r) for r in self.spark.sql(query).collect()], columns)

    def counts_many(self, column_sets: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """The tables over each of ``column_sets`` (distinct sets of columns), all in one
        Spark job (:func:`~privgraph.data.engines.sql.grouping_sets_query`), not a job each."""
        sets = [check_columns(self.domain, s) for s in column_sets]
        query, columns = grouping_sets_query(self._view, sets, where=self._where, quote_name=backquote)
        groups = [tuple(r) for r in self.spark.sql(query).collect()]
        return [self._table(rows, s) for rows, s in zip(split_grouping_sets(groups, columns, sets), sets)]

    def _table(self, groups: list, columns: tuple) -> np.ndarray:
        """The table over ``columns`` from a grouped query's rows (values, count)."""
        if not columns:
            return np.array(groups[0][0] if groups else 0, dtype=np.int64)
        return table_from_groups(groups, columns, self.domain)

    def distinct_rows(self, max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        """``(codes of the distinct complete rows, their counts)``, or None if there are more
        than ``max_rows`` of them: what :class:`~privgraph.data.Tables` counts every table
        from, in memory, instead of one Spark job per table. The codes are
        ``domain.code_dtype`` (column-major), the counts int64.

        One job, after the engine's first scan (:func:`_first_scan`), which collected each
        column's distinct values (a column's levels, or the value that is an error; where
        some row is incomplete, a second job collects those of the complete rows; none on
        ``coded`` data, whose values are the codes, packed as they are). The driver
        maps them to codes exactly as :meth:`counts` does (a level, or its text; a value
        outside the levels is the same error). The job groups the rows by their codes,
        computed on the cluster by a CASE over those values and packed into a few 64-bit keys
        (:func:`~privgraph.data.engines.sql.packed_keys_query`, DuckDB's query), and brings
        back at most ``max_rows + 1`` rows. Only Spark SQL runs on the executors. The result
        is kept (read-only): a command whose stages each count from the distinct rows (a
        release's structure and parameters) runs this job once.
        """
        if max_rows not in self._distinct:
            found = self._fetch_distinct_rows(int(max_rows))
            for array in found or ():
                array.flags.writeable = False
            self._distinct[max_rows] = found
        return self._distinct[max_rows]

    def _fetch_distinct_rows(self, max_rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        d = self.domain
        if not d.names:
            return None
        data = self.spark.sql(f"SELECT * FROM {self._view} {self._where}")
        view = f"{self._view}_codes"
        (data if self.coded else data.select(*self._code_columns(data))).createOrReplaceTempView(view)
        query, runs = packed_keys_query(view, d, quote_name=backquote)
        table = self.spark.sql(query).limit(int(max_rows) + 1).toArrow()
        if table.num_rows > max_rows:
            return None
        keys = [table.column(f"privgraph_k{i}").to_numpy() for i in range(len(runs))]
        codes = np.asfortranarray(unpack_keys(keys, runs, d.sizes, d.code_dtype))
        return codes, np.asarray(table.column(COUNT).to_numpy(), dtype=np.int64)

    def _code_columns(self, data) -> list:
        """Each column's code: a CASE over the values of the complete rows (on the executors)."""
        from pyspark.sql import functions as F

        coded, d = [], self.domain
        for name, levels, values in zip(d.names, d.levels, self._values_of_complete_rows(data)):
            column, lookup, case = F.col(backquote(name)), level_lookup(levels), None
            for value in values:
                code = code_of(name, lookup, value)
                match = column == F.lit(value)
                case = F.when(match, code) if case is None else case.when(match, code)
            coded.append((F.lit(0) if case is None else case).alias(name))
        return coded

    def _values_of_complete_rows(self, data) -> tuple:
        """Each column's distinct values in the complete rows: the first scan's where every
        row is complete, else one job over them (a value only in a dropped row is no error)."""
        from pyspark.sql import functions as F

        if not self._where:
            return self._values
        found = data.agg(*[F.collect_set(F.col(backquote(n))) for n in self.domain.names]).collect()[0]
        return tuple(list(v) for v in found)

    def hold(self, chunks: Iterable[tuple[np.ndarray, np.ndarray | None]], *,
             within: SparkHeldRows | None = None) -> SparkHeldRows:
        """A row selection streamed into a Parquet folder, chunk by chunk (the driver holds one
        chunk): ``chunks`` of ``(positions, blocks)``, increasing positions among the complete
        rows (numbered as ``counts``' ``rows``) or, ``within`` a held selection, among its rows
        in their order; ``blocks`` each row's block (None: 0). As
        :meth:`DuckDBEngine.hold <privgraph.data.engines.DuckDBEngine.hold>`, the same draws
        give the same tables. The folder is removed when the selection is freed."""
        from pyspark.sql import functions as F

        folder = tempfile.mkdtemp(prefix="privgraph-held-", dir=self.scratch or os.environ.get(SCRATCH_VARIABLE))
        try:
            _write_parts(folder, chunks)
            frame = self.spark.read.parquet(folder)
        except BaseException:  # nothing half-written left behind
            shutil.rmtree(folder, ignore_errors=True)
            raise
        if within is not None:  # positions among within's rows: their ranks there
            inner = within.frame.select(F.col("rank").alias("inner"), "position")
            frame = frame.select("rank", F.col("position").alias("inner"), BLOCK).join(inner, "inner")
        held = SparkHeldRows(frame.select("rank", "position", BLOCK), folder, within)
        weakref.finalize(held, shutil.rmtree, folder, True)
        return held

    def block_counts(self, columns: Sequence[str], held: SparkHeldRows, count: int) -> np.ndarray:
        """The tables over ``columns`` of each of the ``count`` blocks of ``held``, stacked
        (shape ``(count, *shape)``), in one grouped query (:meth:`hold`)."""
        columns = check_columns(self.domain, columns)
        groups = [tuple(r) for r in self.spark.sql(group_by_query(self._held_view(held, with_block=True),
                                                                  (BLOCK, *columns), style="spark")).collect()]
        return np.stack([self._table(g, columns) for g in rows_by_block(groups, count)])

    def _held_view(self, held: SparkHeldRows, *, with_block: bool) -> str:
        """A view of the complete rows that ``held`` holds (with their block, or a semi-join)."""
        from pyspark.sql import functions as F

        rows = held.frame.select(F.col("position").alias(ROW), *([BLOCK] if with_block else []))
        data = self._numbered().join(rows, ROW, "inner" if with_block else "left_semi")
        name = f"{self._view}_held"
        data.createOrReplaceTempView(name)
        return name

    def _numbered(self):
        """The complete rows with their position 0.. in the data's order (``ROW``), numbered on
        the executors: each row's partition and its place there (``monotonically_increasing_id``),
        plus the rows of the partitions before it, counted in one job, once per engine. (A
        window over the whole data, before, ran in one task.) The data's order is its
        partitions' (a file's splits in order)."""
        from pyspark.sql import functions as F

        if not self._numbered_rows:
            data = self.spark.sql(f"SELECT * FROM {self._view} {self._where}").select(
                "*", F.spark_partition_id().alias("privgraph_part"), F.monotonically_increasing_id().alias("privgraph_id"))
            sizes = dict(tuple(r) for r in data.groupBy("privgraph_part").count().collect())
            shift, start = [], 0
            for part in sorted(sizes):  # id = (part << 33) + place: position = id + start - (part << 33)
                shift += [F.lit(part), F.lit(start - (part << 33))]
                start += sizes[part]
            offset = F.element_at(F.create_map(*shift), F.col("privgraph_part")) if shift else F.lit(0)
            numbered = data.withColumn(ROW, F.col("privgraph_id") + offset).drop("privgraph_part", "privgraph_id")
            self._numbered_rows.append(numbered)
        return self._numbered_rows[0]


def _write_parts(folder: str, chunks: Iterable[tuple[np.ndarray, np.ndarray | None]]) -> None:
    """A held selection's chunks (:meth:`SparkEngine.hold`) as Parquet files of ``folder``, one
    a chunk, each row with its rank in the selection (at least one file: an empty selection
    reads as no rows)."""
    rank, part = 0, 0
    for positions, blocks in chunks:
        positions = np.asarray(positions, dtype=np.int64)
        blocks = np.zeros(len(positions), dtype=np.int32) if blocks is None else np.asarray(blocks, dtype=np.int32)
        ranks = np.arange(rank, rank + len(positions), dtype=np.int64)
        pq.write_table(pa.table({"rank": ranks, "position": positions, BLOCK: blocks}),
                       os.path.join(folder, f"part-{part:06d}.parquet"))
        rank, part = rank + len(positions), part + 1
    if not part:
        empty = {"rank": pa.array([], pa.int64()), "position": pa.array([], pa.int64()), BLOCK: pa.array([], pa.int32())}
        pq.write_table(pa.table(empty), os.path.join(folder, "part-000000.parquet"))


def _first_scan(df, domain: Domain, *, values: bool = True) -> tuple[list[int], int, tuple]:
    """One Spark job over the data: each column's NULLs, the number of complete rows (no NULL
    in any column of the domain) and each discrete column's distinct values in all rows
    (what :meth:`SparkEngine.distinct_rows` codes by; the values of complete rows alone
    where some row is not complete, :meth:`SparkEngine._values_of_complete_rows`). Before,
    these were three scans (the last one only for ``counts([])``). Values of complete rows
    alone in this job (``collect_set(CASE WHEN complete ...)``) took 6 times as long.
    ``values=False``: no values (coded data), empty lists."""
    from pyspark.sql import functions as F

    columns = [F.col(backquote(name)) for name in domain.names]
    complete = F.lit(True)
    for column in columns:
        complete = complete & column.isNotNull()
    row = df.agg(*[F.count(F.lit(1)) - F.count(c) for c in columns], F.count(F.when(complete, F.lit(1))),
                 *[F.collect_set(F.col(backquote(name))) for name in domain.discrete_names if values]).collect()[0]
    k = len(columns)
    found = tuple(list(v) for v in row[k + 1:]) if values else tuple([] for _ in domain.discrete_names)
    return [int(v) for v in row[:k]], int(row[k]), found


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

    given = "--spark-master" if master else f"${MASTER_VARIABLE}" if os.environ.get(MASTER_VARIABLE) else "--engine spark"
    master = master or os.environ.get(MASTER_VARIABLE)
    check_spark_master(master, given)  # the text only, before PySpark or a JVM is started
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise ImportError("Spark (--engine spark, SparkEngine) needs PySpark: pip install 'privgraph[spark]' (and a Java runtime)") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName("privgraph").config("spark.ui.showConsoleProgress", "false")
    if master or "PYSPARK_GATEWAY_PORT" not in os.environ:  # that variable: launched by spark-submit
        builder = builder.master(master or "local[*]").config("spark.ui.enabled", "false")
    try:
        return builder.getOrCreate()
    except Exception as err:  # noqa: BLE001 -- py4j's and PySpark's errors share no base class
        what = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise InvalidInput(f"{given} {master or 'local[*]'!r}: could not start a Spark session ({what})") from None


#: The masters Spark accepts (SparkSubmit refuses any other, with a Java stack trace).
MASTER_PREFIXES = ("spark://", "k8s://", "local")


def check_spark_master(master: str | None, given: str = "--spark-master") -> None:
    """Refuse a master Spark would refuse, before a JVM is started (the flag's text only).

    >>> check_spark_master("local[2]"), check_spark_master("yarn"), check_spark_master(None)
    (None, None, None)
    >>> check_spark_master("bogus://x:1")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --spark-master 'bogus://x:1' is not a Spark master: give yarn, local, local[N], local[*], spark://HOST:PORT or k8s://HOST:PORT
    """
    if master is not None and not (master == "yarn" or master.startswith(MASTER_PREFIXES)):
        raise InvalidInput(f"{given} {master!r} is not a Spark master: give yarn, local, local[N], local[*], "
                           "spark://HOST:PORT or k8s://HOST:PORT")


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
