"""Data: domains, encodings, count engines and sub-sampling."""

from privgraph.data.bins import Bins, draw_in_bins, edges_bins, make_bins
from privgraph.data.draft import draft_codebook
from privgraph.data.codebook import (
    NOT_PRIVATE_DOMAIN,
    domain_from_codebook,
    domain_to_codebook,
    read_codebook,
    write_codebook,
)
from privgraph.data.domain import Domain, Kind, check_countable
from privgraph.data.encoding import domain_of_array, encode, infer_domain
from privgraph.data.engines import (
    CountEngine,
    DuckDBEngine,
    NumpyEngine,
    SparkEngine,
    group_by_query,
    marginal,
)
from privgraph.data.files import domain_of_file
from privgraph.data.frontdoor import (
    DomainRequired,
    PrivateData,
    check_invalid,
    open_engine,
    open_private,
    resolve_domain,
)
from privgraph.data.sampling import (
    poisson_rows,
    poisson_table,
    rows_without_replacement,
    table_without_replacement,
)
from privgraph.data.tables import Tables, count_tables

__all__ = [
    "NOT_PRIVATE_DOMAIN",
    "CountEngine",
    "Domain",
    "DomainRequired",
    "check_invalid",
    "domain_from_codebook",
    "domain_to_codebook",
    "draft_codebook",
    "open_engine",
    "open_private",
    "PrivateData",
    "read_codebook",
    "resolve_domain",
    "write_codebook",
    "DuckDBEngine",
    "Kind",
    "NumpyEngine",
    "Tables",
    "SparkEngine",
    "count_tables",
    "encode",
    "group_by_query",
    "infer_domain",
    "domain_of_array",
    "domain_of_file",
    "marginal",
    "poisson_rows",
    "poisson_table",
    "Bins",
    "edges_bins",
    "make_bins",
    "draw_in_bins",
    "check_countable",
    "rows_without_replacement",
    "table_without_replacement",
]
