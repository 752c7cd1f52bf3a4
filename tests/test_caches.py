"""Every process-wide cache has one owner (privgraph.caches): registered with its name and its
bound, cleared by one clear. Read from the source with ``ast``, so a new module-level cache
that is not registered fails here."""

import ast
import importlib
from pathlib import Path

import pytest

from privgraph import caches

SRC = Path(__file__).resolve().parents[1] / "src" / "privgraph"

#: Module-level stores written by functions that are state, not caches (nothing to clear).
STATE = {
    ("privgraph.heartbeat", "_POSITION"): "the long work's current position, read by the heartbeat's thread",
    ("privgraph.threads", "_HELD"): "the BLAS limits entered and not yet left (a stack)",
    ("privgraph.data.transcoded", "_FOLDER"): "this process's one folder of copies, removed at exit",
}
_MUTABLE_CALLS = {"dict", "list", "set", "OrderedDict", "defaultdict", "WeakKeyDictionary", "WeakValueDictionary"}
_MUTATORS = {"append", "add", "update", "setdefault", "pop", "popitem", "clear", "move_to_end", "extend", "insert"}


def _module_stores(tree: ast.Module) -> set[str]:
    """Names bound at module level to a mutable container (a literal or a container's constructor)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        call = value.func if isinstance(value, ast.Call) else None
        called = getattr(call, "id", None) or getattr(call, "attr", None)
        if isinstance(value, (ast.Dict, ast.List, ast.Set)) or called in _MUTABLE_CALLS:
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _written(function: ast.AST) -> set[str]:
    """Names whose items a function writes (``name[k] = ...``, ``del name[k]``) or that it
    mutates by a method (``name.append(...)``, ...)."""
    out = set()
    for node in ast.walk(function):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else (
            [node.target] if isinstance(node, ast.AugAssign) else [])
        out |= {t.value.id for t in targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                and isinstance(node.func.value, ast.Name):
            out.add(node.func.value.id)
    return out


def cache_sites(source: str) -> tuple[list[str], list[str], list[str]]:
    """(module-level stores written by a function, functions decorated by ``caches.lru``,
    decorators that cache without the registry) of one module's ``source``."""
    tree = ast.parse(source)
    stores = _module_stores(tree)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    written = sorted(stores & set().union(set(), *(_written(f) for f in functions)))
    registered, bare = [], []
    for f in functions:
        for decorator in f.decorator_list:
            text = ast.unparse(decorator)
            if text.startswith("caches.lru("):
                registered.append(f.name)
            elif "lru_cache" in text or text in ("cache", "functools.cache"):
                bare.append(f"{f.name} (@{text})")
    return written, registered, bare


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        if path.name != "caches.py" or path.parent != SRC:
            parts = path.relative_to(SRC.parent).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def test_every_module_level_cache_is_registered():
    found, bare = [], []
    for module, path in _modules():
        written, registered, unregistered = cache_sites(path.read_text())
        bare += [f"{module}.{b}" for b in unregistered]
        found += [(importlib.import_module(module), name) for name in written + registered
                  if (module, name) not in STATE]
    held = {id(c.holds) for c in caches.caches().values()}  # every module with a cache imported: registered
    missing = [f"{module.__name__}.{name}" for module, name in found if id(getattr(module, name)) not in held]
    assert not bare, f"caches without an owner (use privgraph.caches.lru): {bare}"
    assert not missing, f"module-level caches not registered in privgraph.caches: {missing}"


def test_the_scan_sees_an_unregistered_cache():
    source = ("import functools\n_SEEN = {}\n\ndef f(x):\n    _SEEN[x] = 1\n\n"
              "@functools.lru_cache(maxsize=4)\ndef g(x):\n    return x\n")
    assert cache_sites(source) == (["_SEEN"], [], ["g (@functools.lru_cache(maxsize=4))"])


def test_every_registered_cache_has_a_bound_and_clears():
    from privgraph.data import Domain
    from privgraph.mrf.junction import junction_tree

    registered = caches.caches()
    assert {"privgraph.mrf.junction.junction_tree", "privgraph.mrf.cgm.inference",
            "privgraph.privacy.calibration.analytic_gaussian_sigma"} <= set(registered)
    assert all(c.bound and c.name.startswith("privgraph.") for c in registered.values())
    junction_tree(Domain.of(a=2, b=2), (("a", "b"),))
    assert junction_tree.cache_info().currsize >= 1
    caches.clear_caches("privgraph.mrf")
    assert junction_tree.cache_info().currsize == 0


@pytest.mark.parametrize("names", [(), ("privgraph.mrf.cgm",)])
def test_clear_caches_empties_the_inference_cache(names):
    from privgraph.mrf import cgm

    cgm._RUNS["probe"] = (None, 1)
    caches.clear_caches(*names)
    assert "probe" not in cgm._RUNS
