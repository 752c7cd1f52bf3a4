"""Data: domains, encodings, count engines and sub-sampling."""

from privgraph.data.domain import Domain, Kind
from privgraph.data.encoding import encode, infer_domain
from privgraph.data.engines import (
    CountEngine,
    DuckDBEngine,
    NumpyEngine,
    SparkEngine,
    count_tables,
    group_by_query,
    marginal,
)
from privgraph.data.sampling import (
    poisson_rows,
    poisson_table,
    rows_without_replacement,
    table_without_replacement,
)

__all__ = [
    "CountEngine",
    "Domain",
    "DuckDBEngine",
    "Kind",
    "NumpyEngine",
    "SparkEngine",
    "count_tables",
    "encode",
    "group_by_query",
    "infer_domain",
    "marginal",
    "poisson_rows",
    "poisson_table",
    "rows_without_replacement",
    "table_without_replacement",
]
