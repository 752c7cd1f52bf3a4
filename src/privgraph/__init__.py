"""privgraph: causal and graphical models learned from sensitive data under differential privacy.

``import privgraph`` is kept light: subpackages (``privgraph.privacy``, ``privgraph.data``,
...) are imported on first use.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBPACKAGES = ("privacy", "data", "datasets", "stats", "graphs", "causal", "mrf", "audit")


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"privgraph.{name}")
    raise AttributeError(f"module 'privgraph' has no attribute {name!r}")
