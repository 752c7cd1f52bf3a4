"""The public domain and the front door: refusals come from public facts only (issue 11).

Auditor-style tests: the same call on two neighbouring datasets that sit on a check's
boundary must behave the same way (both fit, or both refuse for a public reason).
"""

import json

import numpy as np
import pandas as pd
import pytest

from privgraph.causal import PrivPC
from privgraph.data import (
    NOT_PRIVATE_DOMAIN,
    Domain,
    DomainRequired,
    DuckDBEngine,
    Kind,
    NumpyEngine,
    domain_from_codebook,
    domain_to_codebook,
    draft_codebook,
    open_engine,
    read_codebook,
    write_codebook,
)
from privgraph.mrf import PrivateMRF
from privgraph.privacy import Neighbours

AR, RO = Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE
DOMAIN = Domain(("a", "b", "c"), (2, 3, 2), (Kind.CATEGORICAL, Kind.ORDINAL, Kind.CATEGORICAL),
                (("no", "yes"), (1, 2, 3), ("x", "y")))


def neighbours_on_the_constant_boundary(n=400, seed=0):
    """D: column c holds 'y' in one record only; D': that record replaced, c constant 'x'."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["no", "yes"], n)
    d = pd.DataFrame({"a": a, "b": np.where(a == "yes", rng.integers(2, 4, n), rng.integers(1, 3, n)),
                      "c": ["x"] * n})
    d.loc[0, "c"] = "y"
    d2 = d.copy()
    d2.loc[0, "c"] = "x"
    return d, d2


def test_codebook_round_trip_and_versioning(tmp_path):
    cont = Domain(("a", "v"), (2, 0), (Kind.ORDINAL, Kind.CONTINUOUS), (("lo", "hi"), ()), (None, (0.0, 5.0)))
    path = write_codebook(cont, tmp_path / "d.json")
    back = read_codebook(path)
    assert back == cont and back.levels == cont.levels and back.bounds == cont.bounds and back.public
    text = json.loads(path.read_text())
    assert text["format"] == "privgraph-domain" and text["version"] == 1
    assert text["columns"][0] == {"name": "a", "kind": "ordinal", "missing": "invalid", "levels": ["lo", "hi"]}
    with pytest.raises(ValueError, match="version 2 is not supported"):
        domain_from_codebook({**text, "version": 2})
    with pytest.raises(ValueError, match=r"d.json: column 'a' repeats levels \['1'\]"):
        domain_from_codebook({**text, "columns": [{"name": "a", "kind": "nominal", "levels": [1, "1"]}]},
                             source="d.json")
    with pytest.raises(ValueError, match="kind 'binary'"):
        domain_from_codebook({**text, "columns": [{"name": "a", "kind": "binary", "levels": [0, 1]}]})
    with pytest.raises(FileNotFoundError, match="privgraph domain"):
        read_codebook(tmp_path / "none.json")
    with pytest.raises(ValueError, match="is a directory"):
        read_codebook(tmp_path)


def test_a_draft_is_not_public_until_reviewed(tmp_path):
    frame = pd.DataFrame({"a": ["x", "y", "x"], "v": [0.5, 1.0, 3.0]})
    draft = draft_codebook(frame)
    assert not draft.public and draft.bounds_of("v") == (0.5, 3.0)
    path = write_codebook(draft, tmp_path / "d.json", drafted_from="data.csv")
    assert json.loads(path.read_text())["drafted_from_data"] == "data.csv"
    assert not read_codebook(path).public
    reviewed = json.loads(path.read_text())
    del reviewed["drafted_from_data"]
    assert domain_from_codebook(reviewed).public


def test_no_domain_is_refused_before_any_value_is_read(tmp_path):
    d, _ = neighbours_on_the_constant_boundary()
    for est in (PrivPC(epsilon=1.0, random_state=0), PrivateMRF(epsilon=1.0, cliques="a,b", random_state=0)):
        with pytest.raises(DomainRequired, match="privgraph domain DATA --out domain.json"):
            est.fit(d)
    path = tmp_path / "d.csv"
    path.write_text("a,b\n")  # a file is refused whatever it holds, even empty
    with pytest.raises(DomainRequired, match="no public domain"):
        PrivPC(epsilon=1.0).fit(str(path))


def test_a_column_made_constant_by_one_record_fits_alike():
    """Finding 2: with a public domain, D and D' (one record replaced) both fit."""
    d, d2 = neighbours_on_the_constant_boundary()
    for frame in (d, d2):
        est = PrivPC(epsilon=2.0, method="laplace-pc", random_state=0).fit(frame, domain=DOMAIN)
        assert est.ledger_.is_private and est.n_rows_ == len(frame)
        mrf = PrivateMRF(epsilon=1.0, cliques="a,b;b,c", random_state=0).fit(frame, domain=DOMAIN)
        assert mrf.ledger_.is_private and mrf.model_.domain.size_of("c") == 2


def test_inferred_domain_flips_on_the_boundary_and_says_it_is_not_private():
    """The opt-in reads the data: it may refuse on one record, and its ledger says so."""
    d, d2 = neighbours_on_the_constant_boundary()
    est = PrivPC(epsilon=2.0, method="laplace-pc", random_state=0).fit(d, infer_domain=True)
    assert est.ledger_.caveats == (NOT_PRIVATE_DOMAIN,) and not est.ledger_.is_private
    with pytest.raises(ValueError, match="one value only"):
        PrivPC(epsilon=2.0, random_state=0).fit(d2, infer_domain=True)


@pytest.mark.parametrize("bad", ["maybe", None, np.nan])
def test_out_of_domain_and_missing_values_never_raise(bad):
    d, _ = neighbours_on_the_constant_boundary()
    d2 = d.astype({"a": object}).copy()
    d2.loc[5, "a"] = bad
    for frame in (d, d2):
        PrivPC(epsilon=2.0, method="laplace-pc", random_state=0).fit(frame, domain=DOMAIN)
        PrivateMRF(epsilon=1.0, cliques="a,b", random_state=0).fit(frame, domain=DOMAIN)
        PrivateMRF(epsilon=1.0, cliques="a,b", neighbours="replace_one", random_state=0).fit(frame, domain=DOMAIN)


def test_the_policies_drop_and_recode():
    frame = pd.DataFrame({"a": ["yes", "maybe", None, "no"], "b": [1, 2, 9, "3"], "c": ["x", "y", "y", "x"]})
    recoded = open_engine(frame, DOMAIN, neighbours=RO)
    assert recoded.counts([]) == 4 and recoded.counts(["a"]).tolist() == [3, 1]
    assert recoded.counts(["b"]).tolist() == [2, 1, 1]  # 9 is outside: recoded to the first level
    dropped = open_engine(frame, DOMAIN, neighbours=AR)
    assert dropped.counts([]) == 2 and dropped.counts(["a", "b"]).tolist() == [[0, 0, 1], [1, 0, 0]]
    with pytest.raises(ValueError, match="replace-one"):
        open_engine(frame, DOMAIN, neighbours=RO, invalid="drop")


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("invalid", ["drop", "recode"])
def test_duckdb_applies_the_same_policy_as_memory(tmp_path, suffix, invalid):
    frame = pd.DataFrame({"a": ["yes", "maybe", None, "no", "no"], "b": ["1", "2", "9", "3", "2"],
                          "c": ["x", "y", "y", "x", None]})
    path = tmp_path / f"d{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    memory = open_engine(frame, DOMAIN, neighbours=AR, invalid=invalid)
    disk = open_engine(str(path), DOMAIN, neighbours=AR, invalid=invalid)
    assert isinstance(disk, DuckDBEngine) and isinstance(memory, NumpyEngine)
    for cols in ([], ["a"], ["b", "c"], ["a", "b", "c"]):
        np.testing.assert_array_equal(disk.counts(cols), memory.counts(cols))
    if suffix == ".parquet":
        rows = np.array([0, 1]) if invalid == "drop" else np.array([0, 3, 4])
        np.testing.assert_array_equal(disk.counts(["a", "b"], rows), memory.counts(["a", "b"], rows))


def test_values_match_levels_by_their_text():
    d = Domain(("n", "f"), (3, 2), levels=((1, 2, 3), (False, True)))
    frame = pd.DataFrame({"n": ["1", 2.0, " 3"], "f": ["TRUE", False, "true"]})
    assert open_engine(frame, d, neighbours=RO).counts(["n", "f"]).tolist() == [[0, 1], [1, 0], [0, 1]]


def test_categorical_dtypes_are_a_public_domain():
    d, _ = neighbours_on_the_constant_boundary()
    cats = d.astype({"a": pd.CategoricalDtype(["no", "yes"]), "b": pd.CategoricalDtype([1, 2, 3], ordered=True),
                     "c": pd.CategoricalDtype(["x", "y"])})
    est = PrivPC(epsilon=2.0, method="laplace-pc", random_state=0).fit(cats)
    assert est.ledger_.is_private
    assert domain_to_codebook(open_engine(cats, neighbours=RO).domain)["columns"][1]["kind"] == "ordinal"


def test_numbers_that_can_never_spell_a_level_are_refused_from_the_schema():
    """Integer codes against a codebook of labels: every value would be invalid and silently
    recoded to the first level (or dropped). The dtype and the codebook say so before any value
    is read, so every estimator refuses, naming the column; the same codes as Categorical or
    against integer levels pass."""
    from privgraph.release import PrivateRelease

    d = Domain(("a", "b"), (2, 2), levels=(("low", "high"), ("no", "yes")))
    codes = pd.DataFrame({"a": [0, 1, 1, 0] * 50, "b": [1, 1, 0, 0] * 50})
    for fit in (lambda: PrivPC(epsilon=1.0, random_state=0).fit(codes, domain=d),
                lambda: PrivPC(epsilon=1.0, random_state=0, neighbours="add_remove").fit(codes, domain=d),
                lambda: PrivateMRF(epsilon=1.0, cliques="a,b", random_state=0).fit(codes, domain=d),
                lambda: PrivateRelease(epsilon=1.0, random_state=0).fit(codes, domain=d)):
        with pytest.raises(ValueError, match="column 'a' holds int64 values, which can never spell"):
            fit()
    numbers = Domain(("a", "b"), (2, 2), levels=((0, 1), ("0", "1")))
    assert open_engine(codes, numbers, neighbours=RO).counts(["a"]).tolist() == [100, 100]
    # text cannot be judged from its type: the same codes as text are recoded value by value (a
    # per-record map, never an error), which is why the codebook's levels must be the data's spellings
    assert open_engine(codes.astype(str), d, neighbours=RO, invalid="recode").counts(["a"]).tolist() == [200, 0]
