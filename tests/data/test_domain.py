import numpy as np
import pandas as pd
import pytest

from privgraph.data import Domain, Kind, NumpyEngine, domain_of_array, domain_of_file, encode, infer_domain


def frame():
    return pd.DataFrame(
        {
            "grade": pd.Categorical(["lo", "hi", "mid", "lo"], categories=["lo", "mid", "hi"], ordered=True),
            "colour": pd.Categorical(["red", "blue", "red", "red"]),
            "visits": [10, 2, 2, 1],
            "smoker": [True, False, True, True],
            "city": ["Oslo", "Bergen", "Oslo", "Bergen"],
            "weight": [70.5, 80.1, 65.0, 90.2],
        }
    )


def test_kinds_and_levels_follow_the_data_types():
    d = infer_domain(frame())
    kinds = dict(zip(d.names, d.kinds))
    levels = dict(zip(d.names, d.levels))
    assert kinds["grade"] is Kind.ORDINAL and levels["grade"] == ("lo", "mid", "hi")
    assert kinds["colour"] is Kind.CATEGORICAL
    assert kinds["visits"] is Kind.ORDINAL and levels["visits"] == (1, 2, 10)  # numeric, not text order
    assert kinds["smoker"] is Kind.CATEGORICAL and levels["smoker"] == (False, True)
    assert kinds["city"] is Kind.CATEGORICAL
    assert kinds["weight"] is Kind.CONTINUOUS and d.size_of("weight") == 0
    assert d.discrete_names == ("grade", "colour", "visits", "smoker", "city")


def test_existing_domain_api_keeps_its_meaning():
    d = Domain.of(a=2, b=3, c=4)
    assert d.names == ("a", "b", "c") and d.shape == (2, 3, 4)
    assert d.project(["c", "a"]).shape == (4, 2) and d.cells(["a", "b"]) == 6 and d.cells() == 24
    assert d.as_dict() == {"a": 2, "b": 3, "c": 4} and d.index("b") == 1 and d.size_of("c") == 4
    assert d.levels == ((0, 1), (0, 1, 2), (0, 1, 2, 3)) and all(k is Kind.CATEGORICAL for k in d.kinds)
    with pytest.raises(KeyError, match="'z'"):
        d.project(["z"])


def test_string_ordinal_needs_an_explicit_order():
    df = pd.DataFrame({"age": ["old", "young", "adult"]})
    with pytest.raises(ValueError, match="column 'age' is declared ordinal but holds the non-numeric value"):
        infer_domain(df, kinds={"age": "ordinal"})
    d = infer_domain(df, kinds={"age": "ordinal"}, levels={"age": ["young", "adult", "old"]})
    assert d.levels == (("young", "adult", "old"),)
    assert encode(df, d).ravel().tolist() == [2, 0, 1]


def test_numeric_text_declared_ordinal_is_ordered_by_number():
    d = infer_domain(pd.DataFrame({"k": ["10", "2", "1"]}), kinds={"k": Kind.ORDINAL})
    assert d.levels == (("1", "2", "10"),)


def test_given_levels_must_cover_the_data_and_not_repeat():
    df = pd.DataFrame({"a": ["x", "y", "z"]})
    with pytest.raises(ValueError, match=r"column 'a' holds value\(s\) \['z'\] not among its levels"):
        infer_domain(df, levels={"a": ["x", "y"]})
    with pytest.raises(ValueError, match="repeat"):
        infer_domain(df, levels={"a": ["x", "y", "z", "x"]})
    assert infer_domain(df, levels={"a": ["z", "y", "x", "w"]}).sizes == (4,)  # unseen level kept


def test_missing_values_are_an_error_unless_dropped():
    df = pd.DataFrame({"a": ["x", None, "y", "y", "x"], "b": [1, 2, np.nan, 2, 3]})
    with pytest.raises(ValueError, match="column 'a' has 1 missing value.*missing='drop'"):
        infer_domain(df)
    e = NumpyEngine.from_frame(df, kinds={"b": "ordinal"}, missing="drop")
    assert int(e.counts([])) == 3  # rows incomplete in any column are gone
    assert e.counts(["a"]).tolist() == [2, 1] and e.domain.levels[1] == (1.0, 2.0, 3.0)


def test_constant_column_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"column 'c' has one value only \('k'\)"):
        infer_domain(pd.DataFrame({"c": ["k", "k"], "d": [1, 2]}))
    assert infer_domain(pd.DataFrame({"c": ["k", "k"]}), levels={"c": ["k", "l"]}).sizes == (2,)


def test_unknown_names_and_kinds_are_errors():
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(KeyError, match="kinds names columns \\['zz'\\]"):
        infer_domain(df, kinds={"zz": "ordinal"})
    with pytest.raises(ValueError, match="kind of column 'a' must be one of"):
        infer_domain(df, kinds={"a": "fuzzy"})
    with pytest.raises(ValueError, match="missing must be one of"):
        infer_domain(df, missing="ignore")


def test_domain_of_array_with_names():
    a = np.array([[0, 1.5], [1, 2.5], [2, 0.5]])
    d = domain_of_array(a, ["k", "v"], kinds={"k": "ordinal"})
    assert d.kinds == (Kind.ORDINAL, Kind.CONTINUOUS) and d.levels[0] == (0.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="one column per name"):
        domain_of_array(a, ["k"])


def test_domain_of_file_matches_infer_domain(tmp_path):
    df = pd.DataFrame({"city": ["Oslo", "Bergen", "Oslo"], "visits": [3, 1, 2], "w": [0.1, 0.2, 0.3]})
    for name in ("d.parquet", "d.csv"):
        path = tmp_path / name
        df.to_parquet(path) if name.endswith("parquet") else df.to_csv(path, index=False)
        d = domain_of_file(path)
        assert d.names == ("city", "visits", "w") and d.sizes == (2, 3, 0)
        assert d.levels[:2] == (("Bergen", "Oslo"), (1, 2, 3))
        assert domain_of_file(path, columns=["visits"]).names == ("visits",)
    with pytest.raises(FileNotFoundError, match="no such data file: '.*nope.csv'"):
        domain_of_file(tmp_path / "nope.csv")
    with pytest.raises(KeyError, match=r"columns \['zz'\] not in"):
        domain_of_file(tmp_path / "d.csv", columns=["zz"])


def test_encode_follows_levels_and_rejects_continuous():
    df = frame()
    d = infer_domain(df)
    codes = encode(df, d.project(d.discrete_names))
    assert codes.dtype == np.uint8 and codes[:, 0].tolist() == [0, 2, 1, 0]
    with pytest.raises(ValueError, match=r"columns \['weight'\] are continuous"):
        encode(df, d)


def test_domain_of_file_checks_kinds_and_levels(tmp_path):
    pd.DataFrame({"age": ["old", "young", "adult"], "w": [0.5, 1.5, 2.5]}).to_parquet(tmp_path / "a.parquet")
    d = domain_of_file(tmp_path / "a.parquet", kinds={"age": "ordinal", "w": "continuous"},
                       levels={"age": ["young", "adult", "old"]})
    assert d.levels[0] == ("young", "adult", "old") and d.kinds == (Kind.ORDINAL, Kind.CONTINUOUS)
    with pytest.raises(KeyError, match=r"kinds names columns \['zz'\]"):
        domain_of_file(tmp_path / "a.parquet", kinds={"zz": "ordinal"})
    with pytest.raises(ValueError, match="column 'age' is declared ordinal but holds the non-numeric"):
        domain_of_file(tmp_path / "a.parquet", kinds={"age": "ordinal"})


def test_a_public_column_round_trips_through_the_codebook_and_a_bad_value_is_named(tmp_path):
    """``"public": true`` (issue 43): kept by read/write and by project; anything but a boolean
    is an error naming the file and the column."""
    from privgraph.data import read_codebook, write_codebook
    from privgraph.data.codebook import domain_from_codebook

    d = Domain(("site", "x"), (2, 0), (Kind.CATEGORICAL, Kind.CONTINUOUS), (("a", "b"), ()), (None, (0.0, 1.0)),
               public_columns={"site"})
    back = read_codebook(write_codebook(d, tmp_path / "d.json"))
    assert back.public_columns == {"site"} and back.project(["x"]).public_columns == frozenset()
    assert '"public": true' in (tmp_path / "d.json").read_text()
    entry = {"name": "site", "kind": "nominal", "levels": ["a"], "public": "yes"}
    with pytest.raises(ValueError, match=r"^cb.json: column 'site' has \"public\": 'yes'; expected true or false$"):
        domain_from_codebook({"format": "privgraph-domain", "version": 1, "columns": [entry]}, source="cb.json")
    with pytest.raises(ValueError, match=r"public columns \['z'\] are not in the domain"):
        Domain(("a",), (2,), public_columns={"z"})
