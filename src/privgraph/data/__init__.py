"""Data: domains, encodings, count engines and sub-sampling."""

from privgraph.data.domain import Domain, Kind

__all__ = ["Domain", "Kind"]
