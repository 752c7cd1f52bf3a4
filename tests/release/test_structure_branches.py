"""Issue 48, item 1: no branch on a release structure's name outside its registry.

What each structure does is its registered object's (:mod:`privgraph.release.stage`,
:mod:`privgraph.release.structures`); anywhere else in the package a comparison of a
``structure`` / ``structure_kind_`` with a name (``structure == "tree"``, ``!= "gauss-pc"``,
``in ("tree", ...)``) or a table keyed by the structures' names is a second place to edit when a
structure is added. Read from the source with ``ast``; the few lines left are listed below, each
with why.
"""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "privgraph"

#: The registry: where the structures' names may be compared and keyed.
REGISTRY = {"release/stage.py", "release/structures.py"}
#: The structures' names (the built-in ones; "auto" is the planner's choice, not a structure).
NAMES = {"gauss-pc", "priv-pc", "tree"}
#: What names a structure in an expression.
STRUCTURE_WORDS = {"structure", "structure_kind_"}

#: (file, text of the line, why it stays): parameter checks of issue 48 item 2 ("checks once"),
#: owned there and left verbatim here; they go when the declarations' checks replace them.
ALLOWED: dict = {}  # none: the structures' own public checks are Structure.check_domain


def _names_structure(node) -> bool:
    return (isinstance(node, ast.Name) and node.id in STRUCTURE_WORDS) or \
        (isinstance(node, ast.Attribute) and node.attr in STRUCTURE_WORDS)


def _strings(node) -> set:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_strings(e) for e in node.elts)) if node.elts else set()
    return set()


def branches(tree: ast.AST) -> list[int]:
    """Lines that compare a structure with a name, or compare anything with a structure's
    name, or key a table by two or more structures' names.

    >>> branches(ast.parse('if s.structure_kind_ == "tree": pass\\nx = {"tree": 1, "priv-pc": 2}\\ny = k == "a"'))
    [1, 2]
    >>> branches(ast.parse('STRUCTURES[release.structure_kind_].run()\\nif method == "gauss-pc": pass'))
    []
    """
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
                                                 for op in node.ops):
            sides = [node.left, *node.comparators]
            named = any(_names_structure(s) for s in sides) and any(_strings(s) for s in sides)
            if named or any("tree" in _strings(s) for s in sides):
                found.append(node.lineno)
        elif isinstance(node, ast.Dict):
            keys = set().union(*(_strings(k) for k in node.keys if k is not None)) if node.keys else set()
            if len(keys & NAMES) >= 2 and "tree" in keys:
                found.append(node.lineno)
    return sorted(set(found))


def _code(line: str) -> str:
    """A line's code, without its indentation and its comment."""
    return line.split("  #")[0].strip()


def test_no_branch_on_a_structure_name_outside_the_registry():
    left = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in REGISTRY:
            continue
        source = path.read_text()
        lines = source.splitlines()
        for line in branches(ast.parse(source, rel)):
            if (rel, _code(lines[line - 1])) not in ALLOWED:
                left.append(f"{rel}:{line}: {lines[line - 1].strip()}")
    assert not left, "branches on a structure's name outside the registry:\n" + "\n".join(left)


def test_every_allowed_line_is_still_there():
    """An allowed line that is gone (item 2 removed it) leaves the list."""
    for (rel, text), why in ALLOWED.items():
        assert text in (SRC / rel).read_text(), (rel, text, why)
