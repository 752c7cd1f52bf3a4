"""Derived columns: public functions of other columns, declared in the codebook.

A survey file often holds columns computed from others: an index from two ratings, a
scale's total, a group from an age. ANES's cumulative file is one (``benchmarks/real_tables.py``):
its major party thermometer index is ``ceil((dem - gop + 100) / 2)`` and its "both major
parties" rating ``ceil((dem + gop) / 2)`` on every row, missing where either rating is. A
model of pairs under a size cap cannot hold such a relation of three wide columns (the
release put the pair of the two computed columns 0.62 in TVD from the table, 22 times its
sampling floor: docs/release.md), and measuring a computed column spends budget on what the
codebook already knows. So a codebook may say so::

    {"name": "mpti", "kind": "ordinal", "levels": [0, 1, ..., 100],
     "derived": "ceil((therm_dem - therm_gop + 100) / 2)"}

**The rule** is an arithmetic expression over the values of other columns of the codebook
(their levels, numbers): numbers, column names, ``+ - * / // % **``, unary ``-`` and the
functions ``ceil``, ``floor``, ``round`` (half to even, as Python's), ``abs``, ``min`` and
``max``; nothing else parses (no attribute, subscript, comparison or other call). A source
must be a discrete column (nominal or ordinal) whose levels are numbers, and not derived
itself. Where a source value is missing (its missing level) the derived value is missing:
the derived column then needs a missing level (``"missing": "level"``, the default).

**Checked from the codebook alone** (:func:`check_rules`, when the domain is built): the rule
is evaluated on every combination of its sources' levels (at most
:data:`MAX_COMBINATIONS`), and each result must be one of the derived column's levels
(a number equal to a level matches it: ``3.0`` is the level ``3``), else a one-line refusal
names the column, the combination and the value. Public: the domain only.

**What the release does with it** (:class:`~privgraph.release.PrivateRelease`): a derived
column is never read, counted, measured or modelled; the release models the other columns
and computes the derived ones on its synthetic rows (post-processing: no budget), so they
follow their rule exactly. Its values in the input are never read, so whatever they are
(even out of the domain) the release is the same: the rule is trusted, not checked against
the data (checking would read the data). ``fit-mrf`` (:class:`~privgraph.mrf.PrivateMRF`) does
the same: its cliques may not name a derived column, and its synthetic records carry each derived
column whose sources the model holds. The other commands read a derived column as data, like any
other.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from privgraph.data.bins import level_values
from privgraph.data.missing import MISSING, missing_code, real_levels  # noqa: F401 (MISSING: the doctests)
from privgraph.validation import InvalidInput

#: The most combinations of a rule's sources' levels :func:`check_rules` evaluates (a rule
#: over more is refused: its check would not be complete).
MAX_COMBINATIONS = 1_000_000

#: The functions a rule may call, vectorised over numpy arrays.
FUNCTIONS = {"ceil": np.ceil, "floor": np.floor, "round": np.round, "abs": np.abs,
             "min": np.minimum, "max": np.maximum}
_OPERATORS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.true_divide,
              ast.FloorDiv: np.floor_divide, ast.Mod: np.mod, ast.Pow: np.power}


@dataclass(frozen=True)
class Rule:
    """A derived column's public rule: its ``target`` column, the expression ``text`` and the
    columns it reads (``sources``, in order of first use).

    >>> r = Rule.parse("mpti", "ceil((dem - gop + 100) / 2)")
    >>> r.sources
    ('dem', 'gop')
    >>> r.evaluate({"dem": np.array([60.0, 3.0]), "gop": np.array([20.0, 0.0])}).tolist()
    [70.0, 52.0]
    """

    target: str
    text: str
    sources: tuple[str, ...]

    @classmethod
    def parse(cls, target: str, text) -> "Rule":
        """The rule of column ``target``, refused (naming the column and the part) unless
        ``text`` is an expression of the grammar above.

        >>> Rule.parse("x", "__import__('os')")
        Traceback (most recent call last):
        ...
        privgraph.validation.InvalidInput: column 'x': "derived" may call only ceil, floor, round, abs, min, max; got a call of __import__
        >>> Rule.parse("x", "a.real")
        Traceback (most recent call last):
        ...
        privgraph.validation.InvalidInput: column 'x': "derived" may hold numbers, column names, + - * / // % **, unary - and ceil, floor, round, abs, min, max; got Attribute in 'a.real'
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput(f"column {target!r}: \"derived\" must be an expression over other columns "
                               f"(a non-empty string), got {text!r}")
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as err:
            raise InvalidInput(f"column {target!r}: \"derived\" {text!r} is not an expression ({err.msg})") from None
        sources: list[str] = []
        for node in ast.walk(tree):
            _check_node(target, text, node)
            if isinstance(node, ast.Name) and not _is_function(tree, node) and node.id not in sources:
                sources.append(node.id)
        if target in sources:
            raise InvalidInput(f"column {target!r}: \"derived\" {text!r} reads the column itself")
        if not sources:
            raise InvalidInput(f"column {target!r}: \"derived\" {text!r} reads no column (a constant column "
                               "needs no rule: give it one level)")
        return cls(target, text.strip(), tuple(sources))

    def evaluate(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """The rule on arrays of its sources' values (floats), as floats."""
        with np.errstate(all="ignore"):
            out = _evaluate(ast.parse(self.text, mode="eval").body, values)
        return np.broadcast_to(np.asarray(out, dtype=float), np.shape(values[self.sources[0]]))


def _is_function(tree, name: ast.Name) -> bool:
    return any(isinstance(n, ast.Call) and n.func is name for n in ast.walk(tree))


def _check_node(target: str, text: str, node) -> None:
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd, ast.Call, ast.Name, ast.Load,
               ast.Constant, *_OPERATORS)
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords:
            called = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise InvalidInput(f"column {target!r}: \"derived\" may call only {', '.join(FUNCTIONS)}; "
                               f"got a call of {called}")
        if len(node.args) != (2 if node.func.id in ("min", "max") else 1):
            raise InvalidInput(f"column {target!r}: \"derived\" calls {node.func.id} with {len(node.args)} "
                               f"arguments in {text!r}")
    elif isinstance(node, ast.Constant) and (isinstance(node.value, bool) or not isinstance(node.value, (int, float))):
        raise InvalidInput(f"column {target!r}: \"derived\" may hold numbers only as constants, got {node.value!r}")
    elif not isinstance(node, allowed):
        raise InvalidInput(f"column {target!r}: \"derived\" may hold numbers, column names, + - * / // % **, "
                           f"unary - and {', '.join(FUNCTIONS)}; got {type(node).__name__} in {text!r}")


def _evaluate(node, values):
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.UnaryOp):
        inner = _evaluate(node.operand, values)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        return _OPERATORS[type(node.op)](_evaluate(node.left, values), _evaluate(node.right, values))
    return FUNCTIONS[node.func.id](*(_evaluate(a, values) for a in node.args))


def numeric_levels(levels) -> np.ndarray | None:
    """A column's real levels (its missing level left out) as floats, or None if one is not a
    number.

    >>> numeric_levels((0, "1", 2.5, MISSING)).tolist(), numeric_levels(("a", 1))
    ([0.0, 1.0, 2.5], None)
    """
    out = []
    for level in real_levels(levels):
        if isinstance(level, bool):
            return None
        try:
            out.append(float(level))
        except (TypeError, ValueError):
            return None
    return np.asarray(out, dtype=float)


def check_rules(domain) -> None:
    """Refuse, in one line naming the column, a derived column of ``domain`` whose rule cannot
    hold on every combination of its sources' levels (module docstring). Public: the domain only.
    """
    derived = {r.target for r in domain.derived}
    for rule in domain.derived:
        i = domain.index(rule.target)
        if domain.kinds[i].value == "continuous":
            raise InvalidInput(f"column {rule.target!r} is derived: it must be nominal or ordinal with numbers "
                               "for levels, not continuous")
        if numeric_levels(domain.levels[i]) is None:
            raise InvalidInput(f"column {rule.target!r} is derived: its levels must be numbers")
        grids = []
        for source in rule.sources:
            if source not in domain.names:
                raise InvalidInput(f"column {rule.target!r} is derived from {source!r}, which is not a column "
                                   f"of the codebook {list(domain.names)}")
            if source in derived:
                raise InvalidInput(f"column {rule.target!r} is derived from {source!r}, itself derived: "
                                   "write the rule over the columns it reads")
            j = domain.index(source)
            grid = numeric_levels(domain.levels[j])
            if domain.kinds[j].value == "continuous" or grid is None:
                raise InvalidInput(f"column {rule.target!r} is derived from {source!r}, which must be nominal "
                                   "or ordinal with numbers for levels")
            grids.append(grid)
        combinations = math.prod(len(g) for g in grids)
        if combinations > MAX_COMBINATIONS:
            raise InvalidInput(f"column {rule.target!r} is derived from {len(grids)} columns with {combinations:,} "
                               f"combinations of levels, more than the {MAX_COMBINATIONS:,} the check evaluates")
        if any(missing_code(domain.levels[domain.index(s)]) is not None for s in rule.sources) \
                and missing_code(domain.levels[i]) is None:
            raise InvalidInput(f"column {rule.target!r} is derived from a column with missing values: it needs a "
                               "missing level (\"missing\": \"level\")")
        _check_values(rule, grids, domain.levels[i])


def _check_values(rule: Rule, grids, levels) -> None:
    mesh = np.meshgrid(*grids, indexing="ij") if grids else []
    values = rule.evaluate({s: m.ravel() for s, m in zip(rule.sources, mesh)})
    codes = level_codes(values, levels)
    if (bad := np.flatnonzero(codes < 0)).size:
        at = np.unravel_index(bad[0], [len(g) for g in grids])
        where = ", ".join(f"{s}={_number(g[k])}" for s, g, k in zip(rule.sources, grids, at))
        raise InvalidInput(f"column {rule.target!r} is derived as {rule.text!r}: at {where} it gives "
                           f"{_number(values[bad[0]])}, not one of its levels")


def _number(x: float):
    return int(x) if float(x).is_integer() else float(x)


def level_codes(values: np.ndarray, levels) -> np.ndarray:
    """Each value's code among ``levels`` (numbers matching numerically), -1 where none matches
    (NaN included).

    >>> level_codes(np.array([2.0, 0.0, 1.5, np.nan]), (0, 1, 2, MISSING)).tolist()
    [2, 0, -1, -1]
    """
    grid = numeric_levels(levels)
    order = np.argsort(grid, kind="stable")
    place = np.clip(np.searchsorted(grid[order], values), 0, len(grid) - 1)
    codes = order[place]
    return np.where(grid[codes] == values, codes, -1)


def check_not_derived(domain, columns) -> None:
    """Refuse, naming it and its sources, a derived column of ``domain`` among the ``columns`` a
    model is asked to hold (a fit's cliques): it is computed on the synthetic rows, never read.

    >>> from privgraph.data.domain import Domain
    >>> d = Domain(("a", "b", "s"), (2, 2, 3), derived=(Rule.parse("s", "a + b"),))
    >>> check_not_derived(d, {"a", "b"})
    >>> check_not_derived(d, {"a", "s"})
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: column 's' is derived (a + b): it is computed on the synthetic rows by its rule, never read or modelled; name its sources ['a', 'b'] in the cliques instead
    """
    for rule in domain.derived:
        if rule.target in columns:
            raise InvalidInput(f"column {rule.target!r} is derived ({rule.text}): it is computed on the synthetic "
                               f"rows by its rule, never read or modelled; name its sources {list(rule.sources)} "
                               "in the cliques instead")


def add_derived(frame, domain):
    """``frame`` (the other columns' values, as a release decodes them: numbers, missing as NA)
    with each derived column of ``domain`` whose sources it holds computed by its rule, the
    columns in ``domain``'s order; a missing source gives the missing level. Post-processing:
    reads nothing but ``frame``.

    >>> from privgraph.data.domain import Domain, Kind
    >>> d = Domain(("a", "b", "s"), (3, 2, 5), (Kind.ORDINAL,) * 3, levels=((0, 1, MISSING), (0, 2), (0, 1, 2, 3, MISSING)),
    ...            derived=(Rule.parse("s", "a + b"),))
    >>> add_derived(pd.DataFrame({"a": [1, 0, None], "b": [2, 0, 2]}), d)["s"].tolist()
    [3, 0, <NA>]
    >>> list(add_derived(pd.DataFrame({"b": [2]}), d).columns)  # s needs a too
    ['b']
    """
    frame = frame.copy()
    for rule in domain.derived:
        if not set(rule.sources) <= set(frame.columns):
            continue
        levels = domain.levels[domain.index(rule.target)]
        values = {s: pd.to_numeric(frame[s]).to_numpy(dtype=float, na_value=np.nan) for s in rule.sources}
        missing = np.logical_or.reduce([np.isnan(v) for v in values.values()])
        result = rule.evaluate(values)
        codes = level_codes(result, levels)
        if (bad := np.flatnonzero((codes < 0) & ~missing)).size:  # a Domain built by hand, its rule unchecked
            raise InvalidInput(f"column {rule.target!r} is derived as {rule.text!r}, which gives "
                               f"{_number(result[bad[0]])}, not one of its levels (check_rules refuses such a rule)")
        if (at := missing_code(levels)) is None:
            frame[rule.target] = np.asarray(levels)[codes]  # no source has a missing level (checked)
        else:
            frame[rule.target] = level_values(levels, np.where(missing, at, codes)).set_axis(frame.index)
    return frame[[n for n in domain.names if n in frame.columns]]

__all__ = ["FUNCTIONS", "MAX_COMBINATIONS", "Rule", "add_derived", "check_not_derived", "check_rules", "level_codes", "numeric_levels"]
