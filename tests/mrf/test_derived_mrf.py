"""fit-mrf with derived columns (privgraph.data.derived): cliques may not name one, its values are
never read, and the synthetic records carry each derived column whose sources the model holds."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

from privgraph.mrf import PrivateMRF
from privgraph.validation import InvalidInput
from tests.release.test_derived_release import BOOK, table


def fitted(frame, cliques="a,b;b,c", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded-noise warning
        return PrivateMRF(epsilon=2.0, cliques=cliques, random_state=0, **kw).fit(frame, domain=BOOK)


def test_records_carry_the_derived_columns_whose_sources_are_modelled():
    rows = fitted(table()).sample(500, random_state=1)
    assert list(rows.columns) == ["a", "s", "b", "c", "h"]
    answered = rows["a"].notna()
    assert (rows.loc[answered, "s"] == rows.loc[answered, "a"] + rows.loc[answered, "b"]).all()
    assert (rows["h"] == rows["b"] // 2).all()
    only_b = fitted(table(), cliques="b,c").sample(50, random_state=1)
    assert list(only_b.columns) == ["b", "c", "h"]  # s needs a, which no clique holds


@pytest.mark.parametrize("method", ["cgm-em", "psgd"])
def test_the_derived_values_are_never_read(method):
    """The same rows, the derived columns true in one input and junk in the other (under add/remove
    the default policy drops a row with an invalid value: were they read, the rows would differ)."""
    true = table()
    junk = true.assign(s=["junk"] * len(true), h=[None] * len(true))
    kw = {"method": method} if method == "cgm-em" else {"method": method, "delta": 1e-6, "options": {"steps": 20}}
    first, second = fitted(true, **kw), fitted(junk, **kw)
    assert first.ledger_ == second.ledger_
    pd.testing.assert_frame_equal(first.sample(200, random_state=3), second.sample(200, random_state=3))


def test_a_clique_naming_a_derived_column_is_refused_before_any_read():
    with pytest.raises(InvalidInput, match=r"column 's' is derived \(a \+ b\).*name its sources \['a', 'b'\]"):
        PrivateMRF(epsilon=1.0, cliques="a,s").privacy_plan(BOOK, None)
    with pytest.raises(InvalidInput, match="column 's' is derived"):
        fitted(table(), cliques="s,c")


def test_cli_fit_mrf_writes_the_derived_columns(tmp_path):
    from typer.testing import CliRunner

    from privgraph.cli import app

    table().to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "t.json").write_text(json.dumps(BOOK))
    res = CliRunner().invoke(app, ["fit-mrf", str(tmp_path / "t.csv"), "--domain", str(tmp_path / "t.json"),
                                   "--cliques", "a,b;b,c", "--epsilon", "1", "--seed", "0", "--out",
                                   str(tmp_path / "m.json"), "--synthetic", "300", str(tmp_path / "s.csv")])
    assert res.exit_code == 0, res.output
    rows = pd.read_csv(tmp_path / "s.csv")
    assert list(rows.columns) == ["a", "s", "b", "c", "h"] and (rows["h"] == rows["b"] // 2).all()
