"""Public bins of a continuous column: how its values are counted and drawn again.

A continuous column of the codebook may carry a public discretisation: ``"bins": k`` with
``"scale": "linear"`` (default) or ``"log"`` (``lo > 0``) over its bounds, or explicit
``"edges": [e0, ..., ek]``. Its ``k`` bins are then the column's codes 0..k-1, ordered like
an ordinal column's levels, so every count, test and model sees an ordinal column of ``k``
levels; the column stays continuous (its kind, bounds and units), and synthetic rows carry
values again, drawn within their bins (:func:`draw_in_bins`).

**Default bins** (:func:`default_bins`): a continuous column with ``"bounds"`` but neither
``"bins"`` nor ``"edges"`` is counted, wherever something counts it, through
:data:`DEFAULT_BINS` public bins chosen from its bounds alone, never from the data:
equally wide in log space when ``lo > 0`` and ``hi / lo >=`` :data:`DEFAULT_LOG_RATIO`
(a range of three or more orders of magnitude), equally wide otherwise. The user's
``"bins"`` or ``"edges"`` always win. (Discovery's exact paths that read raw values never
bin the column.)

**The rule** (the same in numpy, DuckDB SQL and Spark SQL, tested against each other): a
value is a *finite number*, written in decimal notation (``12``, ``-1.5``, ``.5``, ``2e3``,
spaces around it allowed; ``inf``, ``nan``, ``1,5``, text and missing values are not) or
held in a numeric column. Bin ``i`` holds ``[e_i, e_{i+1})``, the last bin also ``hi``; a
number below ``lo`` falls in bin 0 and one above ``hi`` in bin ``k - 1`` (clipped, never
an error). Anything else is an invalid value, which the front door's policy handles like an
out-of-domain level (:mod:`privgraph.data.frontdoor`). Each record is mapped on its own by
public edges: one changed record changes one code at most.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Sequence

import numpy as np
import pandas as pd

from privgraph.data.missing import missing_code, real_levels
from privgraph.validation import InvalidInput, one_of

#: The scales of ``"bins": k`` (how the edges are spaced, and how values are drawn within a bin).
SCALES = ("linear", "log")
#: A finite number in decimal notation (the text rule; no backslash, so one pattern serves every SQL).
NUMBER = "[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?"
_TEXT = f" *{NUMBER} *"
#: The most bins a column may have (its table is capped by the commands' cell limits anyway).
MAX_BINS = 1 << 16
_MAX = float(np.finfo(np.float64).max)
#: How many bins a continuous column with bounds only gets (:func:`default_bins`).
DEFAULT_BINS = 10
#: The ``hi / lo`` (with ``lo > 0``) from which default bins are spaced in log space.
DEFAULT_LOG_RATIO = 1000.0


@dataclass(frozen=True)
class Bins:
    """The public edges ``e0 < e1 < ... < ek`` of a continuous column's ``k`` bins.

    ``scale`` is how values are drawn within a bin (``"log"``: uniform in log space), and
    for bins made from a count how the edges were spaced; ``explicit`` says the codebook
    gave the edges themselves (so it writes them back).

    >>> b = make_bins((0.0, 10.0), 4)
    >>> b.edges, b.count, b.bounds
    ((0.0, 2.5, 5.0, 7.5, 10.0), 4, (0.0, 10.0))
    >>> b.labels()[:2], b.labels()[-1]
    (('[0, 2.5)', '[2.5, 5)'), '[7.5, 10]')
    """

    edges: tuple[float, ...]
    scale: str = "linear"
    explicit: bool = False

    @property
    def count(self) -> int:
        return len(self.edges) - 1

    @property
    def bounds(self) -> tuple[float, float]:
        return self.edges[0], self.edges[-1]

    def labels(self) -> tuple[str, ...]:
        """One label per bin, ``[e_i, e_i+1)`` (the last one closed)."""
        e = [f"{v:g}" for v in self.edges]
        return tuple(f"[{e[i]}, {e[i + 1]}{']' if i == self.count - 1 else ')'}" for i in range(self.count))


def make_bins(bounds: tuple[float, float], count: int, scale: str = "linear") -> Bins:
    """``count`` bins over ``bounds``, equally wide (``"linear"``) or equally wide in log
    space (``"log"``, needs ``lo > 0``): the one place edges are computed from a count.
    The end edges are the bounds exactly. Errors say what was expected (the codebook
    prefixes the column).

    >>> make_bins((1.0, 1000.0), 3, "log").edges
    (1.0, 10.0, 100.0, 1000.0)
    >>> make_bins((0.0, 1.0), 0)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: "bins" must be a whole number from 1 to 65536, got 0
    """
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 1 <= count <= MAX_BINS:
        raise InvalidInput(f"\"bins\" must be a whole number from 1 to {MAX_BINS}, got {count!r}")
    lo, hi = float(bounds[0]), float(bounds[1])
    check_scale(scale, lo)
    edges = np.geomspace(lo, hi, int(count) + 1) if scale == "log" else np.linspace(lo, hi, int(count) + 1)
    edges[0], edges[-1] = lo, hi
    if not (np.diff(edges) > 0).all():
        raise InvalidInput(f"\"bins\": {count} bins over [{lo!r}, {hi!r}] would not have strictly increasing edges "
                           "(too narrow for floating point): expected fewer bins or wider bounds")
    return edges_bins(edges.tolist(), scale, explicit=False)


def default_bins(bounds: tuple[float, float]) -> Bins:
    """The public default bins of a continuous column with ``bounds`` and no bins of its own:
    :data:`DEFAULT_BINS` bins, log-spaced when ``lo > 0`` and ``hi / lo >=``
    :data:`DEFAULT_LOG_RATIO`, else equally wide. The one place this rule lives: a function of
    the public bounds only.

    >>> default_bins((0.0, 50.0)).edges[:3], default_bins((0.0, 50.0)).scale
    ((0.0, 5.0, 10.0), 'linear')
    >>> b = default_bins((1.0, 1e6))
    >>> b.scale, b.count, [round(e, 6) for e in b.edges[:3]], b.edges[-1]
    ('log', 10, [1.0, 3.981072, 15.848932], 1000000.0)
    >>> default_bins((1.0, 999.0)).scale
    'linear'
    """
    lo, hi = float(bounds[0]), float(bounds[1])
    scale = "log" if lo > 0 and hi / lo >= DEFAULT_LOG_RATIO else "linear"
    return make_bins((lo, hi), DEFAULT_BINS, scale)


def edges_bins(edges: Sequence[float], scale: str = "linear", *, explicit: bool = True) -> Bins:
    """Bins from their edges, if they are finite numbers, at least two, strictly increasing.

    >>> edges_bins([0, 1, 1, 2])
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: "edges" must be at least two finite numbers in strictly increasing order, got [0, 1, 1, 2]
    """
    ok = isinstance(edges, (list, tuple)) and len(edges) >= 2 and all(
        isinstance(e, (int, float, np.floating, np.integer)) and not isinstance(e, bool) and math.isfinite(e)
        for e in edges) and all(a < b for a, b in zip(edges, edges[1:]))
    if not ok:
        raise InvalidInput(f"\"edges\" must be at least two finite numbers in strictly increasing order, got {edges!r}")
    check_scale(scale, float(edges[0]))
    return Bins(tuple(float(e) for e in edges), scale, explicit)


def check_scale(scale, lo: float) -> str:
    """``scale`` if it is one of :data:`SCALES` (``"log"`` only over positive values)."""
    one_of('"scale"', scale, list(SCALES))
    if scale == "log" and not lo > 0:
        raise InvalidInput(f"\"scale\": \"log\" needs a lower bound above 0, got {lo!r}")
    return scale


def numeric_values(values) -> tuple[np.ndarray, np.ndarray]:
    """(the values as float64, which are finite numbers) under the module's rule: a numeric
    column's finite values, or text in decimal notation. Invalid entries are NaN.

    >>> x, ok = numeric_values(["1.5", " 2e1 ", "inf", "x", None, 7, True])
    >>> x[ok].tolist(), ok.tolist()
    ([1.5, 20.0, 7.0], [True, True, False, False, False, True, False])
    """

    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    dtype = series.dtype
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        x = series.to_numpy(dtype=np.float64, na_value=np.nan)
        ok = np.isfinite(x)
        return np.where(ok, x, np.nan), ok
    texts = series.astype(object).map(_text_of)
    matched = texts.str.fullmatch(_TEXT).fillna(False).to_numpy(dtype=bool)
    x = np.full(len(series), np.nan)
    x[matched] = texts[matched].str.strip(" ").to_numpy(dtype=object).astype(np.float64)
    ok = np.isfinite(x)
    return np.where(ok, x, np.nan), ok


def _text_of(value) -> str:
    """A value's text for the rule: booleans never spell a number; numbers their shortest repr."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return ""
    if isinstance(value, (float, np.floating)):
        return repr(float(value)) if math.isfinite(value) else ""
    return str(value)


def bin_codes(values, bins: Bins) -> np.ndarray:
    """The bin of each value (clipped to the bounds), -1 where it is not a finite number.

    >>> bin_codes([-5, 0, 2.5, "4.99", 10, 99, "n/a", float("nan")], make_bins((0.0, 10.0), 4)).tolist()
    [0, 0, 1, 1, 3, 3, -1, -1]
    """
    x, ok = numeric_values(values)
    codes = np.searchsorted(np.asarray(bins.edges[1:-1]), np.where(ok, x, 0.0), side="right")
    return np.where(ok, codes, -1).astype(np.int64)


def bin_sql(value: str, bins: Bins, fallback: str, *, missing: int | None = None) -> str:
    """SQL: the bin code of the DOUBLE ``value`` (NULL where the text was not a number, see
    :func:`numeric_sql`), ``fallback`` for a NULL or non-finite one; ``missing``: the code of
    a NaN, which a column with a missing level reads its missing values as
    (:func:`~privgraph.data.engines.sql.numeric_source`). A binary search of
    nested ``CASE`` over the edges (``k - 1`` comparisons written, ``log2 k`` evaluated), exact
    as :func:`bin_codes` is.

    >>> bin_sql("v", make_bins((0.0, 4.0), 2), "0")
    "CASE WHEN NOT (v BETWEEN -CAST('1.7976931348623157e+308' AS DOUBLE) AND CAST('1.7976931348623157e+308' AS DOUBLE)) OR v IS NULL THEN 0 WHEN v < CAST('2.0' AS DOUBLE) THEN 0 ELSE 1 END"
    """
    inner = bins.edges

    def search(lo: int, hi: int) -> str:
        if lo == hi:
            return str(lo)
        mid = (lo + hi + 1) // 2
        return f"CASE WHEN {value} < {_double(inner[mid])} THEN {search(lo, mid - 1)} ELSE {search(mid, hi)} END"

    body = search(0, bins.count - 1)
    body = body[len("CASE "):-len(" END")] if body.startswith("CASE ") else f"ELSE {body}"
    finite = f"{value} BETWEEN -{_double(_MAX)} AND {_double(_MAX)}"
    first = "" if missing is None else f"WHEN isnan({value}) THEN {int(missing)} "
    return f"CASE {first}WHEN NOT ({finite}) OR {value} IS NULL THEN {fallback} {body} END"


def numeric_sql(text: str, style: str = "ansi") -> str:
    """SQL: the DOUBLE that the text ``text`` spells under the module's rule, else NULL.

    >>> numeric_sql("t")
    "CASE WHEN regexp_full_match(t, ' *[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)? *') THEN TRY_CAST(trim(t) AS DOUBLE) END"
    """
    match = (f"regexp_full_match({text}, '{_TEXT}')" if style == "ansi" else f"{text} RLIKE '^{_TEXT}$'")
    return f"CASE WHEN {match} THEN TRY_CAST(trim({text}) AS DOUBLE) END"


def _double(value) -> str:
    return f"CAST('{float(value)!r}' AS DOUBLE)"


def draw_in_bins(codes: np.ndarray, bins: Bins, *, rng: np.random.Generator) -> np.ndarray:
    """A value in each code's bin, uniform in ``[e_i, e_i+1)`` (in log space for ``"log"``),
    from ``rng`` (post-processing of released codes); always inside the bounds.

    >>> b = make_bins((0.0, 10.0), 2)
    >>> x = draw_in_bins(np.array([0, 1, 1]), b, rng=np.random.default_rng(0))
    >>> bool((x[:1] < 5).all() and (x[1:] >= 5).all() and (x <= 10).all())
    True
    """
    codes = np.asarray(codes, dtype=np.int64)
    edges = np.asarray(bins.edges)
    lo, hi = edges[codes], edges[codes + 1]
    u = rng.random(codes.shape[0])
    if bins.scale == "log":
        x = np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo)))
    else:
        x = lo + u * (hi - lo)
    last = codes == bins.count - 1
    top = np.where(last, hi, np.nextafter(hi, -np.inf))  # the last bin holds hi, the others stop below e_i+1
    return np.clip(x, lo, top)


def decode_codes(domain, codes: np.ndarray, *, rng: np.random.Generator):
    """Records as a DataFrame from their codes (one column per ``domain`` column): each
    level's label, and for a binned continuous column a value drawn within its bin
    (:func:`draw_in_bins`, float64, the column's units), from ``rng``: post-processing.

    >>> from privgraph.data.domain import Domain, Kind
    >>> d = Domain(("a", "x"), (2, 2), (Kind.CATEGORICAL, Kind.CONTINUOUS), (("no", "yes"), ()),
    ...            bins=(None, make_bins((0.0, 1.0), 2)))
    >>> f = decode_codes(d, np.array([[1, 0], [0, 1]]), rng=np.random.default_rng(0))
    >>> f["a"].tolist(), f.dtypes["x"].name, bool(f["x"].iloc[0] < 0.5 <= f["x"].iloc[1])
    (['yes', 'no'], 'float64', True)
    """

    columns = {}
    for j, (name, levels, bins) in enumerate(zip(domain.names, domain.levels, domain.bins)):
        missing = missing_code(levels)
        if bins is None:
            columns[name] = np.asarray(levels)[codes[:, j]] if missing is None else level_values(levels, codes[:, j])
        elif missing is None:
            columns[name] = draw_in_bins(codes[:, j], bins, rng=rng)
        else:  # the missing level's rows: NaN (a value drawn for them too, so the draws do not depend on them)
            at = codes[:, j] == missing
            columns[name] = np.where(at, np.nan, draw_in_bins(np.where(at, 0, codes[:, j]), bins, rng=rng))
    return pd.DataFrame(columns)


def level_values(levels, codes: np.ndarray) -> pd.Series:
    """The values of ``codes`` in a column with a missing level: each level, and a missing
    value (``<NA>``) for the missing level's code, in a type that holds one (pandas' nullable
    integer or boolean for such levels), so that a CSV writes an empty cell, as the data had.

    >>> from privgraph.data.missing import MISSING
    >>> level_values((1, 2, MISSING), np.array([0, 2, 1])).tolist()
    [1, <NA>, 2]
    >>> level_values(("a", MISSING), np.array([1, 0])).tolist()
    [None, 'a']
    """
    missing = missing_code(levels)
    real = np.asarray(real_levels(levels))
    codes = np.asarray(codes, dtype=np.int64)
    at = codes == missing
    values = real[np.where(at, 0, codes - (codes > missing))] if real.size else np.empty(len(codes), dtype=object)
    if real.dtype.kind in "iu":
        return pd.Series(pd.array(values, dtype="Int64")).mask(at)
    if real.dtype.kind == "b":
        return pd.Series(pd.array(values, dtype="boolean")).mask(at)
    out = values.astype(object)
    out[at] = None
    return pd.Series(out, dtype=object)


__all__ = ["decode_codes", "Bins", "DEFAULT_BINS", "DEFAULT_LOG_RATIO", "NUMBER", "default_bins", "SCALES", "bin_codes", "bin_sql", "check_scale", "draw_in_bins", "edges_bins",
           "make_bins", "numeric_sql", "numeric_values"]
