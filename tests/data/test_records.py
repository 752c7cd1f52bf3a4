"""CSV records under a fixed dialect: one line never changes how another is read.

The SQL scans (DuckDB and Spark) are checked against the Python reference rule
(:func:`privgraph.data.records.split_line`) on lines built to break a sniffing reader, and
neighbouring files that differ by one malformed line give counts that differ by exactly the
relation's policy: nothing under add/remove (the line is dropped), one record in the first
cell under replace-one (every value recoded).
"""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from privgraph.data import Domain, Kind, write_codebook
from privgraph.data.engines import DuckDBEngine
from privgraph.data.files import read_table
from privgraph.data.frontdoor import open_engine
from privgraph.data.records import VALID, Dialect, header_of, records_query, spark_records, split_line
from privgraph.privacy import Neighbours

HEADER = ["a", "b", "c"]
DOMAIN = Domain(("a", "b", "c"), (2, 3, 2), (Kind.CATEGORICAL, Kind.ORDINAL, Kind.CATEGORICAL),
                (("no", "yes"), (1, 2, 3), ("x", "y")))

#: One malformed line of each kind the issue lists (and a few more).
MALFORMED = {
    "extra field": b"no,1,x,EXTRA",
    "short row": b"no,1",
    "bad byte": b"no,\xff,x",
    "unterminated quote": b'"no,1,x',
    "stray quote": b'no,1",x',
    "text after a closing quote": b'"no"x,1,x',
    "replacement character": "no,1,x\ufffd".encode(),
    "unit separator": b"no,1\x1f,x",
    "scan separator": b"no,1,x\x1c\x1d\x1e\x1fzz",
}


def _reference(raw_lines: list[bytes], dialect: Dialect, width: int) -> list[list[str] | None]:
    """What the rule says each non-empty line is (lines end at LF, CRLF or CR): its fields, or None;
    in the scan's order (the lines it does not read, not valid in the encoding, come last)."""
    out, unread = [], []
    for raw in b"\n".join(raw_lines).splitlines():
        try:
            text = raw.decode(dialect.encoding)
        except UnicodeDecodeError:
            unread.append(None)
            continue
        if text == "":
            continue
        fields = split_line(text, dialect)
        ok = fields is not None and len(fields) == width and "\ufffd" not in text
        out.append(fields if ok else None)
    return out + unread


def _write(path, header: list[str], raw_lines: list[bytes], newline: bytes = b"\n"):
    path.write_bytes(newline.join([",".join(header).encode(), *raw_lines]) + newline)
    return path


def _duckdb_rows(path, dialect: Dialect) -> list[tuple]:
    header = header_of(path, dialect)
    return duckdb.sql(f"SELECT * FROM {records_query(path, header, header, dialect)}").fetchall()


def _as_rows(expected: list[list[str] | None], width: int) -> list[tuple]:
    return [tuple(None if v == "" else v for v in f) + (True,) if f is not None else (None,) * width + (False,)
            for f in expected]


_ALPHABET = [b"a", b"b", b",", b'"', b" ", b"\xc3\xbc", b"\xff", b"\x1f", b"\x1c", b"\x1c\x1d\x1e\x1f", b"\t", b";",
             b"\r", b"\xe2\x82\xac", b"\x85", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f\x98\x80"]  # C1 bytes: issue 45
_LINE = st.lists(st.sampled_from(_ALPHABET), max_size=12).map(b"".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=30),
       st.sampled_from([Dialect(), Dialect(quote=None), Dialect(encoding="latin-1")]))
@example([b",\x1c\x1d\x1e\x1f\x1c\x1d\x1e\x1f\xff"], Dialect())  # the old scan saw only ',' (two empty splits)
@example([b"a,b\x1c\x1d\x1e\x1f", b"\x1ca,b", b"a,b"], Dialect())  # a separator at the end; a mark at a line's start
def test_duckdb_scan_follows_the_reference_rule(tmp_path_factory, lines, dialect):
    path = _write(tmp_path_factory.mktemp("r") / "d.csv", ["p", "q"], lines)
    assert _duckdb_rows(path, dialect) == _as_rows(_reference(lines, dialect, 2), 2)


def test_line_breaks_and_blank_lines(tmp_path):
    """LF, CRLF and a lone CR end a line; an empty line is not a record; a BOM is not a name."""
    path = tmp_path / "d.csv"
    path.write_bytes(b'\xef\xbb\xbfa,b,c\r\nno,1,x\r\n\r\nyes,2,y\rno,"3",x\n\n')
    assert header_of(path, Dialect()) == HEADER
    assert _duckdb_rows(path, Dialect()) == [("no", "1", "x", True), ("yes", "2", "y", True), ("no", "3", "x", True)]


def test_the_dialect_comes_from_the_codebook(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes("a;b;c\nno;1;x\nyes;2;\xff\n".encode("latin-1"))
    domain = Domain(DOMAIN.names, DOMAIN.sizes, DOMAIN.kinds, DOMAIN.levels,
                    csv=Dialect(delimiter=";", encoding="latin-1"))
    book = write_codebook(domain, tmp_path / "d.json")
    frame = read_table(path, HEADER, as_text=True, dialect=Dialect(delimiter=";", encoding="latin-1"))
    assert frame["c"].tolist() == ["x", "ÿ"]
    engine = open_engine(path, book, neighbours=Neighbours.REPLACE_ONE)
    assert engine.counts(["a"]).tolist() == [1, 1]
    headerless = Dialect.from_codebook({"header": False}, names=HEADER)
    (tmp_path / "h.csv").write_bytes(b"no,1,x\nyes,2,y\n")
    assert _duckdb_rows(tmp_path / "h.csv", headerless) == [("no", "1", "x", True), ("yes", "2", "y", True)]


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_one_malformed_line_is_one_invalid_record(tmp_path, kind):
    rng = np.random.default_rng(0)
    good = [f"{rng.choice(['no', 'yes'])},{rng.integers(1, 4)},{rng.choice(['x', 'y'])}".encode() for _ in range(200)]
    left = _write(tmp_path / "left.csv", HEADER, good)
    right = _write(tmp_path / "right.csv", HEADER, good[:100] + [MALFORMED[kind]] + good[100:])
    for neighbours, extra in ((Neighbours.ADD_REMOVE, 0), (Neighbours.REPLACE_ONE, 1)):
        tables = [open_engine(p, DOMAIN, neighbours=neighbours).counts(["a", "b", "c"]) for p in (left, right)]
        difference = tables[1] - tables[0]
        assert difference.sum() == extra and difference[0, 0, 0] == extra  # recoded: every column's first level
    with_valid = read_table(right, HEADER, as_text=True, with_valid=True)
    assert (~with_valid[VALID]).sum() == 1 and len(with_valid) == 201


def test_header_errors_never_quote_the_line(tmp_path):
    path = _write(tmp_path / "d.csv", ["no", "1", "zqxj"], [b"no,1,x"])  # the header line lost
    with pytest.raises(KeyError) as err:
        DuckDBEngine(path, DOMAIN, invalid="drop")
    message = err.value.args[0]
    assert "zqxj" not in message and "'a'" in message
    (tmp_path / "e.csv").write_bytes(b"a,b,a\n")
    with pytest.raises(ValueError, match="more than once") as err:
        header_of(tmp_path / "e.csv", Dialect())


def test_spark_scan_reads_as_duckdb(tmp_path, spark):
    lines = [b"no,1,x", *MALFORMED.values(), b'yes,"2",y', b"", b"a,b,c", b"no,3,\xc3\xbc", b"  "]
    path = _write(tmp_path / "d.csv", HEADER, lines)
    rows = spark_records(spark, path, HEADER, Dialect()).collect()
    # the same records; DuckDB's come in file order but for the lines its reader skips (last)
    assert sorted(map(repr, map(tuple, rows))) == sorted(map(repr, _duckdb_rows(path, Dialect())))


# --- lines over 4 MiB: invalid records, counted, in their places ------------------------

from privgraph.data.long_lines import MAX_LINE_BYTES, SCAN_LINE_BYTES, _scan, long_lines  # noqa: E402


def _long_reference(data: bytes, header: bool, limit: int) -> list[int]:
    """The places of the records longer than ``limit`` (lines end at LF, CR, CRLF; empty ones skipped)."""
    lines = data.replace(b"\r\n", b"\n\n").replace(b"\r", b"\n").split(b"\n")
    if data.endswith((b"\n", b"\r")):
        lines = lines[:-1]
    records = [line for line in lines[1 if header else 0:] if line]
    return [i for i, line in enumerate(records) if len(line) > limit]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"bbbb", b"\n", b"\r", b"\r\n", b"xxxxxxx"]), max_size=30).map(b"".join),
       st.booleans(), st.integers(1, 7), st.integers(1, 9))
def test_long_lines_follow_the_reference(data, header, limit, block):
    blocks = [data[i:i + block] for i in range(0, len(data), block)]
    assert _scan(iter(blocks), header, limit).tolist() == _long_reference(data, header, limit)


def test_long_lines_reads_gzip(tmp_path):
    import gzip

    data = b"a,b\n1,2\n" + b"9" * 20 + b"\n1,2\n"
    (tmp_path / "d.csv.gz").write_bytes(gzip.compress(data))
    assert long_lines(tmp_path / "d.csv.gz", header=True, limit=10).tolist() == [1]


def _around_the_limit(tmp_path, newline: bytes = b"\n"):
    """A file whose records 1, 2 and 3 are 'no,1,x...' lines of MAX, MAX + 1 and 3 * SCAN bytes (the
    first parses: a value outside the domain; the others are over the limit), between good ones."""
    long = [b"no,1,zqxj" + b"x" * (size - 9) for size in (MAX_LINE_BYTES, MAX_LINE_BYTES + 1, 3 * SCAN_LINE_BYTES)]
    return _write(tmp_path / "long.csv", HEADER, [b"no,1,x", *long, b"yes,2,y"], newline)


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_an_over_long_line_is_an_invalid_record_duckdb(tmp_path, newline):
    path = _around_the_limit(tmp_path, newline)
    valid = [row[-1] for row in _duckdb_rows(path, Dialect())]
    assert sorted(valid) == [False, False, True, True, True]  # the two over the limit, last in the scan
    for neighbours, n, first in ((Neighbours.ADD_REMOVE, 2, 1), (Neighbours.REPLACE_ONE, 5, 4)):
        counts = open_engine(path, DOMAIN, neighbours=neighbours).counts(["a", "b", "c"])
        assert counts.sum() == n and counts[0, 0, 0] == first  # recoded to the first levels, or dropped


def test_an_over_long_line_keeps_its_place_in_memory(tmp_path):
    """The pandas frames (discover's in-memory path, direction) hold the record at its line's place."""
    frame = read_table(_around_the_limit(tmp_path), HEADER, as_text=True, with_valid=True)
    assert frame[VALID].tolist() == [True, True, False, False, True]
    assert frame["a"].tolist()[:2] == ["no", "no"] and frame["a"].isna().tolist() == [False, False, True, True, False]


def test_an_over_long_line_is_an_invalid_record_spark(tmp_path, spark):
    path = _around_the_limit(tmp_path)
    rows = spark_records(spark, path, HEADER, Dialect()).collect()
    assert [tuple(r) for r in rows] == _duckdb_rows(path, Dialect())
