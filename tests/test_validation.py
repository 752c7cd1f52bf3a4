"""Issue 28: one InvalidInput error, one validation module, and the CLI that shows only it in one line."""

import ast
from pathlib import Path

import pytest

import privgraph
from privgraph.validation import InvalidInput, UnknownName, in_range, one_of, positive_int

SRC = Path(privgraph.__file__).parent


def test_invalid_input_is_a_value_error_and_unknown_name_a_key_error():
    assert issubclass(InvalidInput, ValueError) and issubclass(UnknownName, InvalidInput)
    assert issubclass(UnknownName, KeyError) and str(UnknownName("column 'x' not found")) == "column 'x' not found"


def test_each_message_names_the_input_and_what_was_expected():
    with pytest.raises(InvalidInput, match=r"^noise must be one of \('laplace', 'gaussian'\), got 'gauss'$"):
        one_of("noise", "gauss", ("laplace", "gaussian"))
    with pytest.raises(InvalidInput, match=r"^rounds must be an integer >= 1, got 0$"):
        positive_int("rounds", 0)
    with pytest.raises(InvalidInput, match=r"^max_rounds must be an integer >= 1 or None or 'auto', got 2.5$"):
        positive_int("max_rounds", 2.5, or_none=True, whole_floats=True, alternatives=" or 'auto'")
    with pytest.raises(InvalidInput, match=r"^rate must lie in \(0, 1\], got 1.5$"):
        in_range("rate", 1.5, 0, 1, low_open=True)
    for bad in (True, "3", 3.0, float("nan")):
        with pytest.raises(InvalidInput):
            positive_int("n", bad)
    assert positive_int("n", 3.0, whole_floats=True) == 3 and one_of("x", [1], ([1], [2])) == [1]
    with pytest.raises(InvalidInput):
        one_of("x", [1], {"a": 1})  # unhashable against a dict: refused, not a TypeError


def test_the_validation_module_is_the_bottom_layer():
    tree = ast.parse((SRC / "validation.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m and m.startswith("privgraph") for m in imported), imported


def test_privgraph_raises_no_bare_value_or_key_error():
    """Every check in the package raises InvalidInput (or a subclass), so the CLI can tell a
    user's mistake from a bug without reading frames."""
    found = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and \
                    getattr(node.exc.func, "id", None) in ("ValueError", "KeyError"):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not found, found


def test_the_cli_shows_invalid_input_in_one_line_and_a_library_key_error_with_its_traceback(monkeypatch, capsys):
    from privgraph.causal import PrivPC
    from tests.cli.test_fail_before_spending import run_main

    def refused(*args, **kwargs):
        raise UnknownName("columns ['z'] not in domain ['a']")

    monkeypatch.setattr(PrivPC, "fit", refused)
    status, out, err = run_main(monkeypatch, capsys, "discover", "--network", "asia", "--samples", 100, "--epsilon", 1)
    assert status == 2 and err == "privgraph: error: columns ['z'] not in domain ['a']\n", err

    def broken(*args, **kwargs):
        return {}["a key a library lost"]

    monkeypatch.setattr(PrivPC, "fit", broken)
    with pytest.raises(KeyError, match="a key a library lost"):
        run_main(monkeypatch, capsys, "discover", "--network", "asia", "--samples", 100, "--epsilon", 1)
