"""Derived columns (privgraph.data.derived): the rule's grammar, its public check over the
sources' levels, the codebook's key, and the columns computed on rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privgraph.data.derived as derived
from privgraph.data import Domain, Kind
from privgraph.data.codebook import domain_from_codebook, domain_to_codebook
from privgraph.data.derived import Rule, add_derived, level_codes
from privgraph.validation import InvalidInput


def book(*columns) -> dict:
    return {"format": "privgraph-domain", "version": 1, "columns": list(columns)}


def ordinal(name, levels, **extra) -> dict:
    return {"name": name, "kind": "ordinal", "levels": list(levels), **extra}


A, B = ordinal("a", range(5)), ordinal("b", range(5), missing="invalid")


def test_parse_names_its_sources_in_order_of_use():
    rule = Rule.parse("t", "max(b, a) - min(a, 2) * ceil(b / 3) + round(a) // 2 % 3 - abs(-a) + floor(b) ** 1")
    assert rule.sources == ("b", "a")
    values = {"a": np.array([1.0, 4.0]), "b": np.array([3.0, 0.0])}
    a, b = values["a"], values["b"]
    expect = np.maximum(b, a) - np.minimum(a, 2) * np.ceil(b / 3) + np.round(a) // 2 % 3 - np.abs(-a) + np.floor(b)
    assert rule.evaluate(values).tolist() == expect.tolist()


@pytest.mark.parametrize("text, words", [
    ("a.real", "got Attribute"),
    ("a[0]", "got Subscript"),
    ("a < b", "got Compare"),
    ("a if b else 1", "got IfExp"),
    ("(lambda: 1)()", "may call only"),
    ("open(a)", "got a call of open"),
    ("ceil(a, b)", "calls ceil with 2 arguments"),
    ("max(a)", "calls max with 1 arguments"),
    ("round(a, ndigits=1)", "may call only"),
    ("a + 'x'", "numbers only"),
    ("a + True", "numbers only"),
    ("t + a", "reads the column itself"),
    ("1 + 2", "reads no column"),
    ("a +", "is not an expression"),
    ("", "non-empty string"),
    (3, "non-empty string"),
])
def test_parse_refuses_anything_outside_the_grammar_naming_the_column(text, words):
    with pytest.raises(InvalidInput, match=r"column 't'") as err:
        Rule.parse("t", text)
    assert words in str(err.value)


def test_codebook_reads_checks_and_writes_back_the_rule():
    domain = domain_from_codebook(book(A, B, ordinal("s", range(9), derived="a + b")))
    assert domain.derived_names == ("s",) and domain.derived[0].sources == ("a", "b")
    again = domain_from_codebook(domain_to_codebook(domain))
    assert [(r.target, r.text) for r in again.derived] == [("s", "a + b")]
    assert domain.without_derived().names == ("a", "b") and domain.without_derived().derived == ()
    assert domain.project(["a", "s"]).derived == ()  # a source left out: the rule goes with it
    assert domain.project(["s", "b", "a"]).derived_names == ("s",)


@pytest.mark.parametrize("columns, words", [
    ([A, ordinal("s", range(9), derived="a + z")], "derived from 'z', which is not a column"),
    ([A, ordinal("u", range(5), derived="a"), ordinal("s", range(9), derived="u + a")], "itself derived"),
    ([A, {"name": "x", "kind": "continuous", "bounds": [0, 1]}, ordinal("s", range(9), derived="a + x")],
     "derived from 'x', which must be nominal or ordinal with numbers"),
    ([A, ordinal("c", ["lo", "hi"]), ordinal("s", range(9), derived="a + c")], "derived from 'c'"),
    ([A, B, {"name": "s", "kind": "continuous", "bounds": [0, 8], "derived": "a + b"}], "not continuous"),
    ([A, B, ordinal("s", ["x"], derived="a + b")], "its levels must be numbers"),
    ([A, B, ordinal("s", range(8), derived="a + b")], "at a=4, b=4 it gives 8, not one of its levels"),
    ([A, B, ordinal("s", range(9), derived="(a + b) / 2")], "at a=0, b=1 it gives 0.5"),
    ([A, B, ordinal("s", range(9), derived="a + b", missing="invalid")], "needs a missing level"),
])
def test_codebook_refuses_a_rule_that_cannot_hold_naming_file_and_column(columns, words):
    with pytest.raises(InvalidInput, match=r"^d\.json: column '\w+'") as err:
        domain_from_codebook(book(*columns), source="d.json")
    assert words in str(err.value)


def test_check_refuses_more_combinations_than_it_evaluates(monkeypatch):
    monkeypatch.setattr(derived, "MAX_COMBINATIONS", 24)
    with pytest.raises(InvalidInput, match="25 combinations of levels, more than the 24"):
        domain_from_codebook(book(A, B, ordinal("s", range(9), derived="a + b")))


def test_a_float_result_matches_its_integer_level_and_levels_in_any_order():
    assert level_codes(np.array([3.0, 7.0, 0.0, np.nan, -0.0]), (7, 0, 3)).tolist() == [2, 0, 1, -1, 1]
    domain = domain_from_codebook(book(A, B, ordinal("h", [2, 1, 0], derived="floor(a / 2)")))
    assert domain.derived_names == ("h",)


def test_add_derived_follows_the_rule_propagates_missing_and_keeps_order():
    domain = domain_from_codebook(book(A, ordinal("s", range(9), derived="a + b"), B))
    frame = pd.DataFrame({"b": [4, 0, 2, 1], "a": pd.array([4, 0, None, 3], dtype="Int64")})
    out = add_derived(frame, domain)
    assert list(out.columns) == ["a", "s", "b"]
    assert out["s"].tolist() == [8, 0, pd.NA, 4] and str(out["s"].dtype) == "Int64"
    assert frame.columns.tolist() == ["b", "a"]  # the input is not modified


def test_without_derived_on_a_domain_without_rules_is_the_domain():
    d = Domain(("a", "b"), (2, 2), (Kind.ORDINAL, Kind.ORDINAL))
    assert d.without_derived() is d and d.derived_names == ()


def test_add_derived_refuses_a_rule_nobody_checked():
    domain = Domain(("a", "s"), (2, 2), (Kind.ORDINAL,) * 2, levels=((0, 1), (0, 1)), derived=(Rule.parse("s", "a + 1"),))
    with pytest.raises(InvalidInput, match="column 's' is derived as 'a \\+ 1', which gives 2, not one of its levels"):
        add_derived(pd.DataFrame({"a": [0, 1]}), domain)
