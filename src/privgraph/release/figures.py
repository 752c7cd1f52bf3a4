"""The report's figures: ``budget.png`` (what each part of the ledger paid for) and
``marginals.png`` (each released table against the synthetic rows' table), and their SVG
for ``report.html`` (:func:`svg_text`: the same figure, its text kept as text).

Both are drawn from released values and public names only (the budget rows, the released
noisy tables, the synthetic rows' tables, the codebook's level names and the released bins):
post-processing, no data read. Each figure is a matplotlib ``Figure`` with a constrained
layout, so that every title, label and tick stays inside what is saved. A name from the
codebook is drawn as written (``parse_math=False``: a level ``$1-$5`` is not read as TeX).
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from typing import Sequence

import numpy as np

#: The most cells one panel of ``marginals.png`` draws (the rest are named in its title).
MAX_CELLS = 48
#: The most tick labels on one axis; with more cells, every k-th cell is labelled.
MAX_TICKS = 16
#: The longest level name drawn whole; a longer one ends in an ellipsis.
LABEL_CHARS = 14

#: What each series of ``marginals.png`` is (its legend).
SERIES = ("released table (noisy, clipped)", "synthetic rows")


def shorten(text, width: int = LABEL_CHARS) -> str:
    """``text`` as a string of at most ``width`` characters, an ellipsis ending a longer one.

    >>> shorten("never smoked"), shorten("a very long level name indeed")
    ('never smoked', 'a very long l…')
    """
    text = str(text)
    return text if len(text) <= width else text[:width - 1] + "…"


def thinned(n: int, most: int = MAX_TICKS) -> range:
    """The positions of ``n`` cells that get a tick label: all of them, or every k-th, at most ``most``.

    >>> list(thinned(5)), list(thinned(40, most=10))
    ([0, 1, 2, 3, 4], [0, 4, 8, 12, 16, 20, 24, 28, 32, 36])
    """
    return range(0, n, max(1, math.ceil(n / most)))


def bin_names(names: Sequence, bins) -> tuple[str, ...]:
    """The names of a table axis's codes: its level names, or, for an axis in bins (each
    level's bin, consecutive levels), each bin's first and last level.

    >>> bin_names(["[0, 1)", "[1, 2)", "[2, 3]"], (0, 0, 1)), bin_names(["a", "b"], None)
    (('[0, 1)–[1, 2)', '[2, 3]'), ('a', 'b'))
    """
    if bins is None:
        return tuple(str(v) for v in names)
    out = []
    for b in range(max(bins) + 1):
        members = [str(v) for v, code in zip(names, bins) if code == b]
        out.append(members[0] if len(members) == 1 else f"{members[0]}–{members[-1]}")
    return tuple(out)


def figure(width: float, height: float):
    """An empty figure with a constrained layout, on the Agg canvas (no display needed)."""
    # lazy: matplotlib is heavy and imported only to draw
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def png_writer(fig):
    """A writer of ``fig`` as a PNG (for :func:`privgraph.outputs.write_all`)."""
    return lambda tmp: fig.savefig(tmp, format="png", dpi=100)


def svg_writer(fig):
    """A writer of ``fig`` as an SVG (for :func:`svg_text`)."""
    return lambda file: fig.savefig(file, format="svg", dpi=100)


def svg_text(save, *, prefix: str) -> str:
    """The ``<svg>`` element that ``save(file)`` writes (a figure's SVG writer, such as
    :func:`svg_writer` or :func:`privgraph.graphs.export.drawing_writer` with ``"svg"``), to be
    inlined in an HTML page: its text kept as ``<text>`` elements (``svg.fonttype: none``, so a
    level name is in the page's DOM), without the XML prolog and the metadata (a date, a
    creator's URL), every element id (and every reference to one) starting with ``prefix-``, so
    that two figures on one page share none (and the same drawing gets the same ids: no random salt).
    Matplotlib escapes every text it writes (``&``, ``<``, ``>``; quotes too in attributes), so
    every ``<`` left is a tag's.

    >>> fig = figure(2, 1)
    >>> _ = fig.add_subplot().set_xlabel('Ö & <b> id="x"', parse_math=False)
    >>> svg = svg_text(svg_writer(fig), prefix="demo")
    >>> svg.startswith("<svg"), 'Ö &amp; &lt;b&gt; id="x"</text>' in svg, "<metadata" in svg
    (True, True, False)
    >>> re.findall(r' id="([^"]*)"', svg)[:2]
    ['demo-figure_1', 'demo-patch_1']
    """
    # lazy: matplotlib is heavy and imported only to draw
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": prefix}):
        save(buffer)
    text = buffer.getvalue().decode("utf-8")
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text[text.index("<svg"):], count=1, flags=re.DOTALL)
    return re.sub(r"<[^>]*>", lambda tag: _prefixed_ids(tag.group(), prefix), text)


def _prefixed_ids(tag: str, prefix: str) -> str:
    """One SVG tag with its ``id``, ``href="#..."`` and ``url(#...)`` prefixed."""
    tag = re.sub(r'(\sid=")', rf"\g<1>{prefix}-", tag)
    tag = re.sub(r'(href="#)', rf"\g<1>{prefix}-", tag)
    return tag.replace("url(#", f"url(#{prefix}-")


_STAGE_COLOURS = {"0 size": "tab:gray", "1 structure": "tab:blue", "3 parameters": "tab:orange"}


def budget_figure(rows: Sequence[tuple[str, str, float]]):
    """One bar per budget row ``(stage, what it paid for, epsilon)``, labelled as the report's
    budget table labels it (``stage: what``, wrapped, never cut), in the report's order."""
    labels = [textwrap.fill(f"{stage}: {what}", 56) for stage, what, _ in rows]
    lines = sum(label.count("\n") + 1 for label in labels)
    fig = figure(8, 1.6 + 0.16 * lines + 0.12 * len(rows))
    ax = fig.add_subplot()
    y = np.arange(len(rows))[::-1]
    epsilons = [eps for *_, eps in rows]
    bars = ax.barh(y, epsilons, color=[_STAGE_COLOURS.get(stage, "tab:green") for stage, *_ in rows])
    ax.bar_label(bars, fmt="%.4g", fontsize=7, padding=2)
    ax.set_yticks(y, labels, fontsize=7, parse_math=False)
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlim(0, 1.2 * max(epsilons, default=0) or 1)
    ax.set_xlabel(textwrap.fill("epsilon of each part, composed alone (the release's total is in ledger.json "
                                "and report.md)", 80), fontsize=8)
    ax.set_title(textwrap.fill("Budget: what each part of the ledger paid for (orientation and synthetic rows: "
                               "post-processing, no budget)", 80), fontsize=9)
    return fig


def marginals_figure(checks: Sequence[dict]):
    """One panel per released table (``checks``: :func:`~privgraph.release.report.marginal_checks`'s
    rows, with ``labels``, each axis's code names): its released shares against the synthetic
    rows', the cells named by their levels, the panel by its columns."""
    panels = max(1, len(checks))
    fig = figure(8, 0.6 + 2.6 * panels)
    for i, check in enumerate(checks):
        _marginal_panel(fig.add_subplot(panels, 1, i + 1), check, is_first=i == 0)
    return fig


def _marginal_panel(ax, check: dict, *, is_first: bool) -> None:
    columns, labels = check["clique"], check["labels"]
    size = check["released"].size
    cells = min(MAX_CELLS, size)
    x = np.arange(cells)
    ax.bar(x - 0.2, check["released"][:cells], width=0.4, label=SERIES[0])
    ax.bar(x + 0.2, check["synthetic"][:cells], width=0.4, label=SERIES[1])
    ticks = list(thinned(cells))
    names = [" / ".join(shorten(labels[a][c]) for a, c in enumerate(cell)) for cell in np.ndindex(*map(len, labels))]
    is_long = any(len(names[t]) > 6 for t in ticks) or len(ticks) > 8
    ax.set_xticks(ticks, [names[t] for t in ticks], fontsize=6, rotation=35 if is_long else 0,
                  ha="right" if is_long else "center", rotation_mode="anchor", parse_math=False)
    ax.tick_params(axis="y", labelsize=6)
    every = ticks[1] if len(ticks) > 1 else 1
    ax.set_xlabel(" / ".join(columns) + (f" (one cell in {every} named)" if every > 1 else ""), fontsize=7,
                  parse_math=False)
    ax.set_ylabel("share of rows", fontsize=7)
    shown = f" (first {cells} of {size} cells)" if cells < size else ""
    ax.set_title(f"{' × '.join(columns)}: TVD {check['tvd']:.4f}{shown}", fontsize=8, parse_math=False)
    if is_first:
        ax.legend(fontsize=6)


__all__ = ["LABEL_CHARS", "MAX_CELLS", "MAX_TICKS", "SERIES", "bin_names", "budget_figure", "figure",
           "marginals_figure", "png_writer", "shorten", "svg_text", "svg_writer", "thinned"]
