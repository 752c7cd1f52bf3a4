"""Count engines: every contingency table privgraph uses comes from one of these.

An engine is anything with a ``domain`` and a ``counts`` method (:class:`CountEngine`).
``counts(columns, rows=None)`` returns an integer ndarray shaped by the domain sizes of
``columns`` (in the order given; ``counts([])`` is the 0-d total). ``rows`` optionally
restricts the count to a selection of rows (indices into the data, e.g. a sub-sample from
:mod:`privgraph.data.sampling`). All engines return identical tables for the same rows.

* :class:`NumpyEngine`: in memory, mixed-radix codes and ``bincount`` in chunks.
* :class:`DuckDBEngine`: CSV/Parquet files larger than memory, with a memory limit.
* :class:`SparkEngine`: Spark DataFrames or files on a cluster (``pip install privgraph[spark]``).

DuckDB and Spark run the same GROUP BY query, built by :func:`group_by_query`.
"""

from privgraph.data.engines.base import CountEngine, check_columns, marginal
from privgraph.data.engines.duckdb_engine import DuckDBEngine
from privgraph.data.engines.numpy_engine import NumpyEngine
from privgraph.data.engines.spark_engine import SparkEngine
from privgraph.data.engines.sql import group_by_query, table_from_groups

__all__ = [
    "CountEngine",
    "DuckDBEngine",
    "NumpyEngine",
    "SparkEngine",
    "check_columns",
    "group_by_query",
    "marginal",
    "table_from_groups",
]
