"""No import circle among the modules of ``privgraph.data`` and ``privgraph.release`` (issue 48).

The graph is read from the source with ``ast``: every ``import`` and ``from ... import`` at any
depth (a lazy import inside a function closes a circle as surely as one at the top), resolved
to a module of the package: ``from privgraph.data import persons_sql`` names the submodule,
``from privgraph.data import Domain`` the package's ``__init__``. The implicit import of a
module's parent package (``privgraph.data.domain`` runs ``privgraph/data/__init__.py``
first) is not an edge: every package would otherwise be a circle with its own modules.
A circle is a strongly connected component of more than one module (or a module importing
itself).
"""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
#: The parts whose modules must import one another one way only.
CHECKED = ("privgraph.data", "privgraph.release")


def module_names(src: Path, top: str = "privgraph") -> dict[str, Path]:
    """Every module under ``src / top``, by dotted name (a package by its own name)."""
    names = {}
    for path in sorted((src / top).rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _imported(node, here: str, is_package: bool) -> list[tuple[str, list[str]]]:
    """(module, names) that one import node reads; relative imports resolved against ``here``."""
    if isinstance(node, ast.Import):
        return [(alias.name, []) for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        anchor = here.split(".") if is_package else here.split(".")[:-1]
        anchor = anchor[:len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    return [(base, [alias.name for alias in node.names])]


def import_graph(src: Path, top: str = "privgraph") -> dict[str, set[str]]:
    """Each module of ``top`` -> the modules of ``top`` it imports, at any depth of its source.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "pkg" / "sub").mkdir(parents=True)
    >>> _ = (root / "pkg" / "__init__.py").write_text("")
    >>> _ = (root / "pkg" / "sub" / "__init__.py").write_text("from pkg.sub.a import f")
    >>> _ = (root / "pkg" / "sub" / "a.py").write_text("import numpy\\ndef f():\\n    from . import b")
    >>> _ = (root / "pkg" / "sub" / "b.py").write_text("from pkg.sub import a, f")
    >>> sorted((k, sorted(v)) for k, v in import_graph(root, "pkg").items())
    [('pkg', []), ('pkg.sub', ['pkg.sub.a']), ('pkg.sub.a', ['pkg.sub.b']), ('pkg.sub.b', ['pkg.sub', 'pkg.sub.a'])]
    """
    modules = module_names(src, top)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for module, names in _imported(node, name, path.name == "__init__.py"):
                if module not in modules:
                    continue
                subs = {f"{module}.{n}" for n in names} & modules.keys()
                edges |= subs
                if not names or len(subs) < len(names):  # a name of the module itself
                    edges.add(module)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` that are circles (Tarjan, iterative).

    >>> circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    [['a', 'b', 'c']]
    >>> circles({"a": {"b"}, "b": set()}), circles({"a": {"a"}})
    ([], [['a']])
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


def test_no_import_circle_in_data_or_release():
    graph = import_graph(SRC)
    checked = [c for c in circles(graph) if any(m == p or m.startswith(p + ".") for m in c for p in CHECKED)]
    assert not checked, "import circles: " + "; ".join(" <-> ".join(c) for c in checked)


def test_the_graph_holds_the_known_one_way_imports():
    """The graph is read from the source as it is: the edges the refactor set one way are there."""
    graph = import_graph(SRC)
    assert {"privgraph.release.residuals", "privgraph.release.adaptive",
            "privgraph.release.pair_scores"} <= graph["privgraph.release.tree"]
    assert "privgraph.data.domain" in graph["privgraph.data.encoding"]
    assert "privgraph.data.encoding" not in graph["privgraph.data.domain"]


def test_a_planted_lazy_circle_is_found(tmp_path):
    """The check has teeth: a circle closed by an import inside a function (the kind removed
    from domain.py and tree.py) is reported, and removing that import clears it."""
    package = tmp_path / "toy" / "part"
    package.mkdir(parents=True)
    (tmp_path / "toy" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("class Domain:\n    def infer(self):\n        from toy.part.high import infer\n"
                                    "        return infer()\n")
    (package / "high.py").write_text("from toy.part.low import Domain\n\ndef infer():\n    return Domain()\n")
    assert circles(import_graph(tmp_path, "toy")) == [["toy.part.high", "toy.part.low"]]
    (package / "low.py").write_text("class Domain:\n    pass\n")
    assert circles(import_graph(tmp_path, "toy")) == []
