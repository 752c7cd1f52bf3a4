"""Imports sit at module top (the project standard): a function-level import is allowed only
of a heavy or optional module (:data:`LAZY_MODULES`) or with a ``# lazy: why`` or
``# cycle: a <-> b`` comment on its line or on a comment line just above its block of imports.
Read from the source with ``ast``, so a new function-level import fails here."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "privgraph"

#: Heavy optional parts and optional extras, imported where they are used.
LAZY_MODULES = {"pyspark", "matplotlib", "causallearn", "sklearn", "threadpoolctl"}

#: Parts not checked: ``cli/`` (commands import their work on use, to keep start-up fast).
SKIPPED = {"cli"}

MARKS = ("# lazy:", "# cycle:")


def function_level_imports(path: Path):
    """(line, text) of each import inside a function of ``path`` that is neither of a
    :data:`LAZY_MODULES` module nor marked with a ``# lazy:`` or ``# cycle:`` comment."""
    source = path.read_text()
    lines = source.splitlines()

    def marked(node) -> bool:
        if any(m in lines[node.lineno - 1] for m in MARKS):
            return True
        i = node.lineno - 2  # up through the imports just above it, to a comment line
        while i >= 0 and lines[i].strip().startswith(("import ", "from ")):
            i -= 1
        return i >= 0 and lines[i].strip().startswith(MARKS)

    def modules(node):
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        return ["." * node.level + (node.module or "")]

    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if inside and isinstance(child, (ast.Import, ast.ImportFrom)):
                if not all(m.split(".")[0] in LAZY_MODULES for m in modules(child)) and not marked(child):
                    found.append((child.lineno, lines[child.lineno - 1].strip()))
            visit(child, inside)

    visit(ast.parse(source, str(path)), False)
    return found


def _checked_files():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if len(rel.parts) > 1 and rel.parts[0] in SKIPPED:
            continue
        yield path


def test_imports_are_at_module_top():
    bad = [f"{path.relative_to(SRC)}:{line}: {text}" for path in _checked_files()
           for line, text in function_level_imports(path)]
    assert not bad, "move these imports to the module top (or mark them '# lazy: why' / '# cycle: a <-> b'):\n" + \
        "\n".join(bad)


def test_the_check_sees_a_function_level_import(tmp_path):
    """The check has teeth: a plain function-level import is reported; a marked one, an
    allowed lazy one and a module-level one are not."""
    fake = tmp_path / "mod.py"
    fake.write_text(
        "import os\n\n\n"
        "def f():\n    import json\n    return json\n\n\n"
        "def g():\n    import json  # cycle: mod <-> other\n    return json\n\n\n"
        "def h():\n    # lazy: heavy\n    import json\n    from json import dumps\n    return json, dumps\n\n\n"
        "def k():\n    from matplotlib.figure import Figure\n    return Figure\n\n\n"
        "class C:\n    def m(self):\n        from privgraph import validation\n        return validation\n")
    assert function_level_imports(fake) == [(5, "import json"), (28, "from privgraph import validation")]
