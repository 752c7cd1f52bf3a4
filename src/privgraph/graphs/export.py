"""Export of a CPDAG: DOT and JSON text, GraphML and PNG files; of an undirected tree (a
dependence structure, no orientation claimed): DOT and JSON text in its own format.

Files are written atomically: to a temporary file in the target's directory, renamed
over the target once complete, so a failed write leaves no partial output behind.
:func:`graph_writer` and :func:`drawing_writer` only render (to whatever path they are
given), so that a command can render all its outputs before committing any of them
with :func:`privgraph.outputs.write_all`.
matplotlib is imported only when :func:`draw` is called (with the Agg backend).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import networkx as nx

from privgraph.graphs.cpdag import CPDAG
from privgraph.outputs import write_atomically
from privgraph.validation import InvalidInput

_JSON_FORMAT = "privgraph.cpdag"
_TREE_FORMAT = "privgraph.tree"
#: What a tree's file says it is: a tree claims dependence, not direction or causation.
TREE_CLAIM = "an undirected dependence structure (a spanning tree of pairs that depend): no orientation, no causal claim"

GRAPH_SUFFIXES = (".json", ".dot", ".graphml")
"""The file formats :func:`graph_writer` writes, by file name suffix."""
DRAWING_SUFFIXES = (".png", ".svg", ".pdf")
"""The image formats the command line offers for :func:`draw` (matplotlib writes more)."""


def to_dot(cpdag: CPDAG) -> str:
    """The graph in Graphviz DOT: a ``digraph``, undirected edges drawn with ``dir=none``.

    Examples
    --------
    >>> print(to_dot(CPDAG(["a", "b", "c"], directed=[("a", "b")], undirected=[("b", "c")])))
    digraph cpdag {
      "a";
      "b";
      "c";
      "a" -> "b";
      "b" -> "c" [dir=none];
    }
    """
    lines = ["digraph cpdag {"]
    lines += [f"  {_dot_id(v)};" for v in cpdag.nodes]
    lines += [f"  {_dot_id(a)} -> {_dot_id(b)};" for a, b in cpdag.directed_edges]
    lines += [f"  {_dot_id(a)} -> {_dot_id(b)} [dir=none];" for a, b in cpdag.undirected_edges]
    return "\n".join(lines + ["}"])


def _dot_id(name: str) -> str:
    escaped = name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def to_json(cpdag: CPDAG, privacy: dict | None = None) -> str:
    """The graph as JSON: ``nodes``, ``directed`` and ``undirected`` edge lists; see :func:`from_json`.

    ``privacy`` (the run's budget, ledger rows and caveats) is stored under that key, so the
    file says what the graph cost and what is not covered.

    Examples
    --------
    >>> print(to_json(CPDAG(["a", "b", "c"], directed=[("a", "b")], undirected=[("b", "c")])))
    {"format": "privgraph.cpdag", "nodes": ["a", "b", "c"], "directed": [["a", "b"]], "undirected": [["b", "c"]]}
    """
    out = {
        "format": _JSON_FORMAT,
        "nodes": list(cpdag.nodes),
        "directed": [list(e) for e in cpdag.directed_edges],
        "undirected": [list(e) for e in cpdag.undirected_edges],
    }
    if privacy is not None:
        out["privacy"] = privacy
    return json.dumps(out)


def tree_to_json(graph: CPDAG, privacy: dict | None = None) -> str:
    """An undirected tree (or forest) as JSON: ``nodes`` and ``edges``, format ``privgraph.tree``,
    with ``structure`` saying what it claims (dependence only); not a CPDAG, which would claim
    that independence tests ran and that the edges left undirected could not be oriented.

    Examples
    --------
    >>> print(tree_to_json(CPDAG(["a", "b", "c"], undirected=[("a", "b"), ("b", "c")])))  # doctest: +ELLIPSIS
    {"format": "privgraph.tree", "structure": "an undirected dependence structure ...", "nodes": ["a", "b", "c"], "edges": [["a", "b"], ["b", "c"]]}
    """
    _check_undirected(graph)
    out = {"format": _TREE_FORMAT, "structure": TREE_CLAIM, "nodes": list(graph.nodes),
           "edges": [list(e) for e in graph.undirected_edges]}
    if privacy is not None:
        out["privacy"] = privacy
    return json.dumps(out)


def tree_to_dot(graph: CPDAG) -> str:
    """An undirected tree in Graphviz DOT: a ``graph`` with ``--`` edges (no arrows).

    Examples
    --------
    >>> print(tree_to_dot(CPDAG(["a", "b"], undirected=[("a", "b")])))
    graph tree {
      "a";
      "b";
      "a" -- "b";
    }
    """
    _check_undirected(graph)
    lines = ["graph tree {"]
    lines += [f"  {_dot_id(v)};" for v in graph.nodes]
    lines += [f"  {_dot_id(a)} -- {_dot_id(b)};" for a, b in graph.undirected_edges]
    return "\n".join(lines + ["}"])


def _check_undirected(graph: CPDAG) -> None:
    if graph.directed_edges:  # a tree is released undirected: a directed edge here is a bug
        raise InvalidInput(f"a tree has no directed edges, got {list(graph.directed_edges)}")


def from_json(text: str) -> CPDAG:
    """Read a graph written by :func:`to_json` (or a tree by :func:`tree_to_json`, as a graph
    of undirected edges).

    Raises
    ------
    ValueError
        If the text is not JSON, not an object with ``nodes``, ``directed`` and
        ``undirected``, or describes an invalid graph.

    Examples
    --------
    >>> g = CPDAG(["a", "b", "c"], directed=[("a", "b")], undirected=[("b", "c")])
    >>> from_json(to_json(g)) == g
    True
    >>> from_json('{"nodes": ["a"]}')
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: CPDAG JSON must be an object with keys 'nodes', 'directed', 'undirected'; got keys ['nodes']
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InvalidInput(f"CPDAG JSON is not valid JSON: {err}") from None
    if isinstance(data, dict) and data.get("format") == _TREE_FORMAT and isinstance(data.get("edges"), list) \
            and isinstance(data.get("nodes"), list):
        return CPDAG(data["nodes"], undirected=data["edges"])
    keys = ("nodes", "directed", "undirected")
    if not isinstance(data, dict) or not all(isinstance(data.get(k), list) for k in keys):
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise InvalidInput(f"CPDAG JSON must be an object with keys 'nodes', 'directed', 'undirected'; got keys {got}")
    return CPDAG(data["nodes"], directed=data["directed"], undirected=data["undirected"])


def write_json(cpdag: CPDAG, path: str | os.PathLike) -> Path:
    """Write :func:`to_json` to ``path`` atomically; return the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_json(CPDAG(["a", "b"], directed=[("a", "b")]), pathlib.Path(d) / "g.json")
    ...     from_json(p.read_text()).directed_edges
    (('a', 'b'),)
    """
    return write_atomically(path, graph_writer(cpdag, ".json"))


def to_graphml(cpdag: CPDAG, path: str | os.PathLike) -> Path:
    """Write the graph as GraphML (the :meth:`CPDAG.to_networkx` form, edge attribute ``kind``).

    ``networkx.read_graphml`` reads it back, and ``CPDAG.from_networkx`` of that gives the
    same graph.

    Examples
    --------
    >>> import tempfile, pathlib, networkx as nx
    >>> g = CPDAG(["a", "b", "c"], directed=[("a", "b")], undirected=[("b", "c")])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     back = nx.read_graphml(to_graphml(g, pathlib.Path(d) / "g.graphml"))
    >>> CPDAG.from_networkx(back) == g
    True
    """
    return write_atomically(path, graph_writer(cpdag, ".graphml"))


def graph_writer(cpdag: CPDAG, suffix: str, privacy: dict | None = None) -> Callable[[str], object]:
    """A function that writes the graph, in the format named by ``suffix``, to the path it is given.

    ``privacy`` (JSON-ready) travels with the graph: a ``privacy`` key in JSON, a comment in
    DOT, a graph attribute in GraphML.

    ``suffix`` is one of :data:`GRAPH_SUFFIXES`: ``.json`` (:func:`to_json`), ``.dot``
    (:func:`to_dot`) or ``.graphml``. For :func:`privgraph.outputs.write_all`, which
    renders every output of a command before committing any.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     tmp = pathlib.Path(d) / "any.tmp"
    ...     _ = graph_writer(CPDAG(["a", "b"], directed=[("a", "b")]), ".DOT")(tmp)
    ...     tmp.read_text().splitlines()[0]
    'digraph cpdag {'
    >>> graph_writer(CPDAG(["a"]), ".txt")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: a graph is written as .json, .dot or .graphml, got '.txt'
    """
    kind = suffix.lower()
    if kind == ".graphml":
        graph = cpdag.to_networkx()
        if privacy is not None:
            graph.graph["privacy"] = json.dumps(privacy)
        return lambda tmp: nx.write_graphml(graph, tmp)
    if kind not in (".json", ".dot"):
        raise InvalidInput(f"a graph is written as {', '.join(GRAPH_SUFFIXES[:-1])} or {GRAPH_SUFFIXES[-1]}, got {suffix!r}")
    text = to_json(cpdag, privacy) if kind == ".json" else _dot_with_privacy(to_dot(cpdag), privacy)
    return _text_writer(text)


def tree_writer(graph: CPDAG, suffix: str, privacy: dict | None = None) -> Callable[[str], object]:
    """As :func:`graph_writer`, for an undirected tree: ``.json`` (:func:`tree_to_json`) or
    ``.dot`` (:func:`tree_to_dot`), ``privacy`` carried the same way.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     tmp = pathlib.Path(d) / "any.tmp"
    ...     _ = tree_writer(CPDAG(["a", "b"], undirected=[("a", "b")]), ".json")(tmp)
    ...     json.loads(tmp.read_text())["format"]
    'privgraph.tree'
    """
    kind = suffix.lower()
    if kind not in (".json", ".dot"):
        raise InvalidInput(f"a tree is written as .json or .dot, got {suffix!r}")
    text = tree_to_json(graph, privacy) if kind == ".json" else _dot_with_privacy(tree_to_dot(graph), privacy)
    return _text_writer(text)


def _dot_with_privacy(dot: str, privacy: dict | None) -> str:
    """``dot`` with the privacy record as a comment after its first line (none without one).

    >>> _dot_with_privacy("graph g {\\n}", {"epsilon": 1})
    'graph g {\\n  // privacy: {"epsilon": 1}\\n}'
    """
    head, _, rest = dot.partition("\n")
    return head + "\n" + (f"  // privacy: {json.dumps(privacy)}\n" if privacy is not None else "") + rest


def _text_writer(text: str) -> Callable[[str], object]:
    """A writer of ``text`` and a final line break to the path it is given."""
    return lambda tmp: Path(tmp).write_text(text + "\n")


def draw(cpdag: CPDAG, path: str | os.PathLike, *, title: str | None = None) -> Path:
    """Draw the graph to an image file (PNG unless ``path`` names another matplotlib format).

    Directed edges get arrowheads, undirected edges are plain lines. The layout is
    deterministic (Kamada-Kawai on the skeleton). matplotlib is imported here, with the Agg backend and
    without pyplot, so drawing never opens a window or touches global figure state.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     draw(CPDAG(["a", "b"], directed=[("a", "b")]), pathlib.Path(d) / "g.png").stat().st_size > 0
    True
    """
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    return write_atomically(path, drawing_writer(cpdag, fmt, title=title))


def drawing_writer(cpdag: CPDAG, fmt: str = "png", *, title: str | None = None) -> Callable[[str], object]:
    """A function that draws the graph (see :func:`draw`) as ``fmt`` to the path it is given.

    ``fmt`` is a matplotlib format name without the dot (the command line offers
    :data:`DRAWING_SUFFIXES`). For :func:`privgraph.outputs.write_all`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     tmp = pathlib.Path(d) / "any.tmp"
    ...     _ = drawing_writer(CPDAG(["a", "b"], directed=[("a", "b")]), "png")(tmp)
    ...     tmp.read_bytes()[:4]
    b'\\x89PNG'
    """
    # lazy: matplotlib is heavy and imported only to draw
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=_figure_size(len(cpdag.nodes)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.02, right=0.98, bottom=0.02, top=0.94)
    _draw_on(ax, cpdag)
    if title:
        ax.set_title(title)
    return lambda tmp: fig.savefig(tmp, format=fmt, dpi=100)


def _figure_size(n_nodes: int) -> tuple[float, float]:
    side = min(4.0 + 0.35 * n_nodes, 16.0)
    return side, side


def _draw_on(ax, cpdag: CPDAG) -> None:
    graph = cpdag.to_networkx()
    pos = _layout(cpdag)
    box = dict(boxstyle="round,pad=0.3", facecolor="#dde6f0", edgecolor="#34495e")
    # a name is drawn as written: matplotlib reads text between two "$" as TeX unless escaped
    labels = {v: str(v).replace("$", r"\$") for v in graph.nodes}
    nx.draw_networkx_labels(graph, pos, labels=labels, ax=ax, font_size=_FONT_SIZE, bbox=box)
    sizes = [_label_area(v) for v in graph.nodes]
    style = dict(ax=ax, node_size=sizes, arrows=True, edge_color="#34495e")
    nx.draw_networkx_edges(graph, pos, edgelist=list(cpdag.directed_edges), arrowstyle="-|>", arrowsize=12, **style)
    nx.draw_networkx_edges(graph, pos, edgelist=list(cpdag.undirected_edges), arrowstyle="-", **style)
    ax.set_axis_off()
    _fit_limits(ax, pos)


def _fit_limits(ax, pos) -> None:
    """Axis limits around every node: matplotlib autoscales to the edges only, so edges that
    span less than the nodes (e.g. one vertical edge and isolated nodes) would push the labels
    millions of pixels away."""
    if not pos:
        return
    xs, ys = zip(*(tuple(map(float, p)) for p in pos.values()))
    for setter, lo, hi in ((ax.set_xlim, min(xs), max(xs)), (ax.set_ylim, min(ys), max(ys))):
        pad = 0.12 * max(hi - lo, 1.0)
        setter(lo - pad, hi + pad)


_FONT_SIZE = 8


def _layout(cpdag: CPDAG) -> dict[str, tuple[float, float]]:
    """Kamada-Kawai on the skeleton (started from a circle, so deterministic)."""
    if len(cpdag.nodes) < 2:
        return {v: (0.0, 0.0) for v in cpdag.nodes}
    skeleton = cpdag.skeleton()
    return nx.kamada_kawai_layout(skeleton, pos=nx.circular_layout(skeleton))


def _label_area(name: str) -> float:
    """A marker area (points^2) that stops edges near the label's box (a circle, so roughly)."""
    return (0.35 * _FONT_SIZE * len(name) + 1.5 * _FONT_SIZE) ** 2
