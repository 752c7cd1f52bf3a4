"""Bundled networks, a BIF reader and forward sampling.

The nine discrete networks of the bnlearn repository shipped with privgraph (see
:data:`NETWORKS`) load with their true DAG::

    >>> net = load_network("asia")
    >>> len(net.domain.names), len(net.edges)
    (8, 8)
"""

from __future__ import annotations

from importlib import resources

from privgraph.datasets.bif import parse_bif, read_bif
from privgraph.datasets.network import Network, sample, sample_frame
from privgraph.validation import UnknownName

#: Names of the bundled networks (bnlearn repository; see the package's networks/ folder).
NETWORKS = ("asia", "cancer", "earthquake", "survey", "sachs", "child", "insurance", "alarm", "hepar2")


def load_network(name: str) -> Network:
    """A bundled network by name (one of :data:`NETWORKS`).

    >>> load_network("earthquake").parents_of("Alarm")
    ('Burglary', 'Earthquake')
    >>> load_network("nope")
    Traceback (most recent call last):
    ...
    privgraph.validation.UnknownName: no bundled network 'nope'; choose one of ('asia', 'cancer', 'earthquake', 'survey', 'sachs', 'child', 'insurance', 'alarm', 'hepar2')
    """
    if name not in NETWORKS:
        raise UnknownName(f"no bundled network {name!r}; choose one of {NETWORKS}")
    text = resources.files("privgraph.datasets").joinpath("networks", f"{name}.bif").read_text()
    return parse_bif(text, name)


__all__ = ["NETWORKS", "Network", "load_network", "parse_bif", "read_bif", "sample", "sample_frame"]
