"""Installs that cannot rot: every import declared, every bound capped, the README's first command
in a clean virtual environment.

A package that privgraph imports without declaring it works on a machine where something else
happened to install it, and fails for a new user (typer 0.29 stopped depending on click, which the
CLI imported). So the declarations are checked against the source, not against this environment.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import os
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "privgraph"
#: The extras a user may install for the package's own optional parts (not benchmarks' peers).
PACKAGE_EXTRAS = ("spark", "interop")
#: Import names whose distribution is not installed in CI (so packages_distributions cannot say).
NOT_INSTALLED = {"pgmpy": "pgmpy"}


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def requirements(group: str | None) -> dict[str, Requirement]:
    """The requirements of the base install (``group=None``) or of one extra, by canonical name."""
    listed = project()["dependencies"] if group is None else project()["optional-dependencies"][group]
    return {canonicalize_name(r.name): r for r in map(Requirement, listed)}


def imports(top_level_only: bool, package: Path = PACKAGE) -> dict[str, set[str]]:
    """Third-party top-level module names the package imports -> the files importing them.

    ``top_level_only``: only imports that run when the module is imported (module body, or a
    ``try`` at module level), not those inside functions (imported lazily, when used).
    """
    found: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        nodes = _module_level(tree.body) if top_level_only else ast.walk(tree)
        for node in nodes:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "privgraph":
                    found.setdefault(top, set()).add(str(path.relative_to(package.parent)))
    return found


def _module_level(body):
    for node in body:
        yield node
        if isinstance(node, (ast.Try, ast.If)):
            yield from _module_level(node.body)


def distribution(module: str) -> str:
    names = metadata.packages_distributions().get(module) or [NOT_INSTALLED.get(module, "")]
    return canonicalize_name(names[0]) if names[0] else ""


def undeclared(package: Path = PACKAGE) -> dict[str, list[str]]:
    """Modules imported anywhere in ``package`` whose distribution pyproject.toml does not declare
    (in the base install or an extra of the package's own optional parts), with their files."""
    declared = set(requirements(None)).union(*(requirements(extra) for extra in PACKAGE_EXTRAS))
    return {module: sorted(files) for module, files in imports(False, package).items()
            if distribution(module) not in declared}


def test_every_import_is_declared():
    assert not undeclared(), f"imported but not declared in pyproject.toml: {undeclared()}"


def test_modules_import_only_the_base_install_when_loaded():
    """An import at module level runs on ``import privgraph.x``: it must be a base dependency."""
    base = set(requirements(None))
    extra = {module: sorted(files) for module, files in imports(top_level_only=True).items()
             if distribution(module) not in base}
    assert not extra, f"imported at module level but only in an extra: {extra}"


def test_the_check_sees_an_undeclared_import(tmp_path):
    """The check is not one that cannot fail: a module importing click (not declared) is found,
    and numpy (declared) is not."""
    fake = tmp_path / "privgraph"
    fake.mkdir()
    (fake / "cli.py").write_text("import click\nimport numpy\n\ndef f():\n    import pyspark\n")
    assert set(imports(True, fake)) == {"click", "numpy"}
    assert undeclared(fake) == {"click": ["privgraph/cli.py"]}


@pytest.mark.parametrize("group", [None, *PACKAGE_EXTRAS, "test"])
def test_every_requirement_is_bounded_above(group):
    unbounded = [str(r) for r in requirements(group).values()
                 if not any(s.operator in ("<", "<=", "==", "~=") for s in r.specifier)]
    assert not unbounded, f"no upper bound ({group or 'dependencies'}): {unbounded}"


def test_constraints_pin_a_tested_version_inside_every_bound():
    """constraints.txt pins the tested environment; each pin of a declared requirement must lie
    inside pyproject.toml's bounds (a bound moved without a new test run fails here)."""
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    for group in (None, "spark", "test"):
        for name, requirement in requirements(group).items():
            assert name in pins, f"{name} ({group or 'dependencies'}) has no pin in constraints.txt"
            assert requirement.specifier.contains(pins[name], prereleases=True), \
                f"constraints.txt pins {name}=={pins[name]}, outside {requirement}"


def test_ci_runs_both_quick_start_commands_in_a_fresh_venv():
    from tests.test_readme import quick_start_commands

    ci = (ROOT / ".ci" / "run").read_text()
    assert all(command in ci.splitlines() for command in quick_start_commands())
    assert re.search(r"python3 -m venv", ci) and ci.index("python3 -m venv") < ci.index(quick_start_commands()[0])


@pytest.mark.slow
def test_readme_first_command_in_a_clean_venv(tmp_path):
    """The README's first command, verbatim, in a new virtual environment that sees nothing of this
    one: pip installs the newest versions the bounds allow, then the main job runs."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    from tests.test_readme import quick_start_commands

    run = subprocess.run(quick_start_commands()[0], shell=True, cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=1500)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "privacy: (1, 1e-06)-DP under replace-one" in run.stdout
