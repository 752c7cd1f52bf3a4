"""The layers of ``../shared/DESIGN.md`` hold: imports only go down, and no private name
crosses a module (read from the source with ``ast``, so a new upward import fails here)."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "privgraph"

#: Each top-level part of the package and its layer, bottom (0) to top (DESIGN.md): a module
#: may import from its own part and from parts of a lower layer only.
LAYERS = {
    "validation": 0, "heartbeat": 0, "registry": 0, "caches": 0, "threads": 1, "timecap": 1, "outputs": 1, "inputs": 1,
    "privacy": 2,
    "data": 3,
    "datasets": 4, "stats": 4, "graphs": 4, "estimator": 4,
    "declarations": 5,  # the estimators' parameters, light (read by --help without numpy)
    "causal": 6, "mrf": 6,
    "release": 7,
    "audit": 8,
    "cli": 9,
    "__main__": 10, "__init__": 10,
}


def _part(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path):
    """(imported module, names, line) of every privgraph import in ``path``, at any depth."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "privgraph":
            yield node.module, [a.name for a in node.names], node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "privgraph":
                    yield alias.name, [], node.lineno


def _target(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


FILES = sorted(SRC.rglob("*.py"))


def test_every_part_has_a_layer():
    assert {_part(f) for f in FILES} <= set(LAYERS), sorted({_part(f) for f in FILES} - set(LAYERS))


def test_imports_only_go_down():
    broken = []
    for f in FILES:
        part = _part(f)
        for module, names, line in _imports(f):
            target = _target(module)
            if names == ["__version__"]:  # the package's version, from its root (imports nothing)
                continue
            if target != part and LAYERS[target] >= LAYERS[part]:
                broken.append(f"{f.relative_to(SRC)}:{line} ({part}, layer {LAYERS[part]}) imports {module} "
                              f"(layer {LAYERS[target]})")
    assert not broken, "\n".join(broken)


def test_no_private_name_crosses_a_module():
    crossing = []
    for f in FILES:
        for module, names, line in _imports(f):
            crossing += [f"{f.relative_to(SRC)}:{line} imports {module}.{n}" for n in names
                         if n.startswith("_") and not n.startswith("__")]
    assert not crossing, "\n".join(crossing)


@pytest.mark.parametrize("part, bad", [("privacy", "privgraph.release.tree"), ("audit", "privgraph.cli")])
def test_the_check_sees_an_upward_import(tmp_path, part, bad):
    """The check has teeth: an upward import of the kind the review found is reported."""
    fake = tmp_path / "mod.py"
    fake.write_text(f"from {bad} import x\n")
    ((module, _, _),) = list(_imports(fake))
    assert LAYERS[_target(module)] >= LAYERS[part]
