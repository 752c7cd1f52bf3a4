"""A reader for the Bayesian Interchange Format (BIF) of discrete Bayesian networks."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from privgraph.data.domain import Domain, Kind
from privgraph.datasets.network import Network
from privgraph.validation import InvalidInput

_VARIABLE = re.compile(r"variable\s+([^\s{]+)\s*\{\s*type\s+discrete\s*\[\s*(\d+)\s*\]\s*\{([^}]*)\}", re.S)
_PROBABILITY = re.compile(r"probability\s*\(\s*([^|)]+?)\s*(?:\|\s*([^)]*))?\)\s*\{([^}]*)\}", re.S)
_ROW = re.compile(r"\(([^)]*)\)\s*([^;]*);")
_TABLE = re.compile(r"table\s+([^;]*);")
#: Largest |sum - 1| accepted for a row of a conditional probability table.
ROW_SUM_TOLERANCE = 1e-6


def read_bif(path, name: str | None = None) -> Network:
    """The network in a BIF file (its name defaults to the file's stem).

    >>> read_bif("/no/such.bif")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no such BIF file: '/no/such.bif'
    """
    p = Path(os.fspath(path))
    if not p.is_file():
        raise FileNotFoundError(f"no such BIF file: {str(p)!r}")
    return parse_bif(p.read_text(), name or p.name.split(".")[0])


def parse_bif(text: str, name: str = "network") -> Network:
    """A :class:`Network` from BIF text.

    Variables keep the file's order, and their states the file's order (which bnlearn chose
    to be meaningful, e.g. LOW, NORMAL, HIGH), so every variable is ordinal in that order.

    Examples
    --------
    >>> net = parse_bif('''
    ... variable a { type discrete [ 2 ] { yes, no }; }
    ... variable b { type discrete [ 2 ] { yes, no }; }
    ... probability ( a ) { table 0.3, 0.7; }
    ... probability ( b | a ) { (yes) 0.9, 0.1; (no) 0.2, 0.8; }
    ... ''')
    >>> net.domain.names, net.edges
    (('a', 'b'), (('a', 'b'),))
    >>> net.cpt("b").tolist()
    [[0.9, 0.1], [0.2, 0.8]]
    """
    states = {v: tuple(_split(s)) for v, _, s in _VARIABLE.findall(text)}
    for v, k, s in _VARIABLE.findall(text):
        if int(k) != len(states[v]):
            raise InvalidInput(f"variable {v!r} of {name!r} declares {k} states but lists {len(states[v])}")
    if not states:
        raise InvalidInput(f"no discrete variables found in BIF text of {name!r}")
    names = tuple(states)
    domain = Domain(names, tuple(len(states[v]) for v in names), tuple(Kind.ORDINAL for _ in names),
                    tuple(states[v] for v in names))
    blocks = {child: (tuple(_split(par or "")), body) for child, par, body in _PROBABILITY.findall(text)}
    if missing := [v for v in names if v not in blocks]:
        raise InvalidInput(f"variables {missing} of {name!r} have no probability block")
    parents = tuple(_check_parents(name, v, blocks[v][0], states) for v in names)
    cpts = tuple(_cpt(name, v, p, blocks[v][1], states) for v, p in zip(names, parents))
    return Network(name, domain, parents, cpts)


def _split(items: str) -> list[str]:
    return [s.strip() for s in items.split(",") if s.strip()]


def _check_parents(name: str, child: str, parents: tuple, states: dict) -> tuple:
    if unknown := [p for p in parents if p not in states]:
        raise InvalidInput(f"{child!r} in {name!r} has undeclared parents {unknown}")
    return parents


def _cpt(name: str, child: str, parents: tuple, body: str, states: dict) -> np.ndarray:
    shape = tuple(len(states[p]) for p in parents) + (len(states[child]),)
    if table := _TABLE.search(body):
        values = np.array([float(x) for x in _split(table.group(1))])
        if values.size != np.prod(shape):
            raise InvalidInput(f"table of {child!r} in {name!r} has {values.size} entries, expected {np.prod(shape)}")
        cpt = values.reshape(shape)
    else:
        cpt = _cpt_from_rows(name, child, parents, body, states, shape)
    bad = np.abs(cpt.sum(axis=-1) - 1.0) > ROW_SUM_TOLERANCE
    if bad.any() or (cpt < 0).any():
        raise InvalidInput(f"conditional table of {child!r} in {name!r} has rows that are not distributions")
    return cpt / cpt.sum(axis=-1, keepdims=True)


def _cpt_from_rows(name, child, parents, body, states, shape) -> np.ndarray:
    cpt = np.full(shape, np.nan)
    index = [{s: i for i, s in enumerate(states[p])} for p in parents]
    for config, probs in _ROW.findall(body):
        key = tuple(ix[s] for ix, s in zip(index, _split(config)))
        cpt[key] = [float(x) for x in _split(probs)]
    if np.isnan(cpt).any():
        raise InvalidInput(f"conditional table of {child!r} in {name!r} misses parent configurations")
    return cpt
