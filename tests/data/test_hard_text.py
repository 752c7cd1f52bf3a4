"""Issue 45, item 2: any UTF-8 text, in values and in column names, through every engine and command.

DuckDB's Latin-1 decoder stops a whole scan at a byte in 0x80-0x9F, and the UTF-8 bytes of
Ö, ß, €, every emoji and most CJK hold one: the former scan (each line as Latin-1 text) turned
such a value into a traceback. These tests read a corpus of hard characters as codebook
levels, as values outside the domain and as column names, through DuckDB, the pandas frames,
the in-memory path and Spark, and check that every engine gives the same codes and that a
hard value changes nothing but its own record's code.
"""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privgraph.data import Domain, Kind, read_codebook, write_codebook
from privgraph.data.files import read_table
from privgraph.data.frontdoor import open_engine
from privgraph.data.long_lines import _scan
from privgraph.data.records import Dialect, records_query
from privgraph.privacy import Neighbours

from tests.cli.test_fail_before_spending import run_main

#: Text a CSV of ordinary data holds (each UTF-8 encoding holds a byte in 0x80-0x9F but the
#: Hebrew, CJK and NBSP ones, there for the rest of the range).
HARD = {
    "umlaut": "Ö", "sharp s": "ß", "euro": "€", "emoji": "😀", "CJK": "中文", "combining mark": "e\u0301",
    "right to left": "שלום", "NEL": "a\u0085b", "line separator": "a\u2028b", "NBSP": "a\u00a0b",
    "zero-width joiner": "👩\u200d💻", "BOM mid-file": "\ufeffx",
}
#: Column names of hard characters.
NAMES = ("Größe€", "名前😀", "שם\u200dx")
LEVELS = tuple(HARD.values())
#: Values outside the domain, as hard.
OUTSIDE = ("Ö€", "😀😀", "x\u2028", "\u0085")


def _domain(levels=LEVELS) -> Domain:
    return Domain(NAMES, (len(levels), 2, 2), (Kind.CATEGORICAL,) * 3, (levels, ("ß", "€"), ("ja", "nein")))


def _frame(n: int = 400, seed: int = 0, outside=OUTSIDE) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    first = rng.choice(np.array(LEVELS + outside, dtype=object), n)
    second = np.where(np.isin(first, LEVELS[:6]), "ß", rng.choice(["ß", "€"], n))
    return pd.DataFrame({NAMES[0]: first, NAMES[1]: second, NAMES[2]: rng.choice(["ja", "nein", "nein€"], n)})


def _write(frame: pd.DataFrame, path, encoding: str = "utf-8"):
    text = ",".join(frame.columns) + "\n" + "".join(",".join(row) + "\n" for row in frame.itertuples(index=False))
    path.write_bytes(text.encode(encoding))
    return path


def test_a_hard_character_crashed_the_former_scan(tmp_path):
    """The root cause, kept visible: DuckDB's own Latin-1 decoder refuses the UTF-8 bytes of €."""
    path = _write(_frame(5), tmp_path / "d.csv")
    with pytest.raises(duckdb.InvalidInputException, match="latin-1"):
        duckdb.sql(f"SELECT * FROM read_csv('{path}', encoding = 'latin-1', all_varchar = true)").fetchall()
    header = list(NAMES)
    rows = duckdb.sql(f"SELECT * FROM {records_query(path, header, header, Dialect())}").fetchall()
    assert [r[:-1] for r in rows] == list(_frame(5).itertuples(index=False, name=None))


def test_every_value_and_name_reads_as_written(tmp_path):
    frame = _frame()
    path = _write(frame, tmp_path / "d.csv")
    read = read_table(path, as_text=True)
    assert list(read.columns) == list(NAMES)
    assert read.equals(frame)


@pytest.mark.parametrize("neighbours", [Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE])
def test_every_engine_gives_the_same_codes(tmp_path, neighbours):
    """A file through DuckDB, its frame in memory, and a DuckDB relation over it: one table."""
    frame = _frame()
    path = _write(frame, tmp_path / "d.csv")
    domain = _domain()
    relation = duckdb.sql(f"SELECT * FROM read_csv('{path}', all_varchar = true)")
    tables = [open_engine(x, domain, neighbours=neighbours).counts(list(NAMES)) for x in (path, frame, relation)]
    assert tables[0].sum() == (400 if neighbours is Neighbours.REPLACE_ONE else tables[1].sum())
    assert (tables[0] == tables[1]).all() and (tables[0] == tables[2]).all()
    kept = frame[frame[NAMES[0]].isin(LEVELS) & frame[NAMES[2]].isin(["ja", "nein"])]
    if neighbours is Neighbours.ADD_REMOVE:  # by hand: every level of the corpus counted where it stands
        by_level = tables[0].sum(axis=(1, 2))
        assert by_level.tolist() == [int((kept[NAMES[0]] == v).sum()) for v in LEVELS]


def test_spark_gives_duckdbs_codes(tmp_path, spark):
    from privgraph.data.frontdoor import open_file

    frame = _frame()
    path = _write(frame, tmp_path / "d.csv")
    domain = _domain()
    for neighbours in (Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE):
        duck = open_engine(path, domain, neighbours=neighbours).counts(list(NAMES))
        sparked = open_engine(open_file(path, "spark", domain.dialect), domain, neighbours=neighbours)
        assert (sparked.counts(list(NAMES)) == duck).all()


def test_a_latin1_file_reads_every_byte(tmp_path):
    """Bytes 0x80-0x9F are characters in Latin-1 (C1 controls): levels and values like any other."""
    c1 = tuple(chr(b) for b in range(0x80, 0xA0))
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.choice(np.array(c1 + ("ÿ", "x\x85y"), dtype=object), 300),
                          "b": rng.choice(["ß", "\x9f"], 300)})
    dialect = Dialect(encoding="latin-1")
    path = _write(frame, tmp_path / "d.csv", "latin-1")
    assert read_table(path, as_text=True, dialect=dialect).equals(frame)
    domain = Domain(("a", "b"), (len(c1), 2), (Kind.CATEGORICAL,) * 2, (c1, ("ß", "\x9f")), csv=dialect)
    book = write_codebook(domain, tmp_path / "d.json")
    for neighbours in (Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE):
        from_file = open_engine(path, read_codebook(book), neighbours=neighbours).counts(["a", "b"])
        assert (from_file == open_engine(frame, domain, neighbours=neighbours).counts(["a", "b"])).all()


@pytest.mark.parametrize("kind", sorted(HARD))
def test_a_hard_value_changes_only_its_own_record(tmp_path, kind):
    """Refusal-audit style, on the counts: one record's value a hard string outside the domain
    reads exactly as the same record with a plain value outside it (under both relations)."""
    frame = _frame(200, outside=())
    hard, plain = frame.copy(), frame.copy()
    hard.iloc[57, 0], plain.iloc[57, 0] = HARD[kind] + "!", "zqxj"
    hard.iloc[58, 2], plain.iloc[58, 2] = HARD[kind], "zqxj"
    paths = [_write(f, tmp_path / f"{i}.csv") for i, f in enumerate((hard, plain))]
    for neighbours in (Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE):
        left, right = (open_engine(p, _domain(), neighbours=neighbours).counts(list(NAMES)) for p in paths)
        assert (left == right).all()


def test_every_command_reads_hard_text(monkeypatch, capsys, tmp_path):
    """domain (draft and --check), discover, fit-mrf and release on a file of hard names and values."""
    path = _write(_frame(600), tmp_path / "d.csv")
    draft = tmp_path / "draft.json"
    status, _, err = run_main(monkeypatch, capsys, "domain", path, "--out", draft)
    assert status == 0, err
    drafted = read_codebook(draft)
    assert drafted.names == NAMES and set(drafted.levels[0]) == set(LEVELS + OUTSIDE)
    book = write_codebook(_domain(), tmp_path / "d.json")
    status, out, err = run_main(monkeypatch, capsys, "domain", path, "--check", book)
    assert status == 0, err
    outside = int(_frame(600)[NAMES[0]].isin(OUTSIDE).sum())
    assert NAMES[0] in out and str(outside) in out
    common = ["--domain", book, "--seed", "0"]
    (tmp_path / "r").mkdir()
    runs = {"discover": ["--epsilon", "5", "--out", tmp_path / "g.json"],
            "fit-mrf": ["--epsilon", "2", "--cliques", ",".join(NAMES[:2]), "--out", tmp_path / "m.json"],
            "release": ["--epsilon", "2", "--structure", "tree", "--out", tmp_path / "r"]}
    for command, args in runs.items():
        status, out, err = run_main(monkeypatch, capsys, command, path, *common, *args)
        assert status == 0, f"{command}: {err}"
    assert set(json.loads((tmp_path / "g.json").read_text())["nodes"]) == set(NAMES)
    synthetic = pd.read_csv(tmp_path / "r" / "synthetic.csv", dtype=str, keep_default_na=False)
    assert list(synthetic.columns) == list(NAMES) and set(synthetic[NAMES[0]]) <= set(LEVELS)


def test_direction_reads_hard_names(monkeypatch, capsys, tmp_path):
    rng = np.random.default_rng(2)
    x = rng.uniform(-2, 2, 400)
    frame = pd.DataFrame({"x€": [repr(v) for v in x], "y😀": [repr(v) for v in np.tanh(2 * x) + rng.uniform(-.3, .3, 400)]})
    frame.iloc[3, 0] = "Ö\u2028"  # a value that is no number: missing, recoded
    path = _write(frame, tmp_path / "p.csv")
    domain = Domain(("x€", "y😀"), (0, 0), (Kind.CONTINUOUS,) * 2, ((), ()), ((-3.0, 3.0), (-3.0, 3.0)))
    book = write_codebook(domain, tmp_path / "p.json")
    status, _, err = run_main(monkeypatch, capsys, "direction", path, "--domain", book, "--x", "x€", "--y", "y😀",
                              "--epsilon", "1", "--seed", "0", "--out", tmp_path / "r.json")
    assert status == 0, err


# --- the pass that finds the lines DuckDB's UTF-8 scan skips ---------------------------------

_BYTES = [b"a", b"\n", b"\r", b"\xc3\x96", b"\xc3", b"\x96", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80",
          b"\xc0\x80", b"\xff", b"\x85", b"\xef\xbb\xbf", b"\xf4\x90\x80\x80"]


def _undecodable_reference(data: bytes, header: bool) -> list[int]:
    lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    records = [line for line in lines[1 if header else 0:] if line]
    places = []
    for i, line in enumerate(records):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            places.append(i)
    return places


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_BYTES), max_size=40).map(b"".join), st.booleans(), st.integers(1, 9))
def test_the_pass_finds_the_lines_that_are_not_utf8(data, header, block):
    """Whatever the blocks cut (inside a character or a line), the pass flags exactly the lines
    Python's strict decoder refuses."""
    blocks = [data[i:i + block] for i in range(0, len(data), block)]
    assert _scan(iter(blocks), header, 1 << 20, True).tolist() == _undecodable_reference(data, header)
