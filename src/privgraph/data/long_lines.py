"""Lines a scan does not read: invalid records, counted, never skipped.

Every reader has a line limit (DuckDB's CSV scan holds a line whole in its buffer; a Java
string holds at most 2 GiB), and whatever the limit, one record can cross it. A scan that
skipped such a line would print n - 1 where n is public (replace-one), with certainty. So a
line longer than :data:`MAX_LINE_BYTES` (line break not counted) is an invalid record like
any other malformed line (:mod:`privgraph.data.records`), in every engine:

* the readers skip lines beyond :data:`SCAN_LINE_BYTES` without holding them (DuckDB's
  ``max_line_size``, Hadoop's ``linerecordreader.line.maxlength`` under Spark), and each
  scan drops the lines between the two limits that it did read;
* :func:`long_lines` finds them all in one streamed pass over the file (a block at a time,
  so a file larger than memory stays out of core), and the scan adds that many records of
  missing values, which the relation's policy then drops or recodes;
* those records come last in a scan (counts do not depend on order); a frame read into
  memory puts them back at their lines' places (:func:`in_file_order`), so a split of the
  rows by position sees the file's order.

The pass finds lines the way the scans do: they end at LF, CR or CRLF, an empty line is not
a record, and the header (the first line, when the dialect has one) is not a record.

DuckDB's UTF-8 scan skips, likewise, a line whose bytes are not valid UTF-8 (its check and
Python's strict decoder agree: surrogates, overlong forms and truncated sequences are all
invalid; ``tests/data/test_hard_text.py``), so :func:`unread_lines` finds those lines in the
same pass, and the scan adds them back as records of missing values with the long ones. DuckDB
drops a UTF-8 byte-order mark at the start of a file; so does the pass.
"""

from __future__ import annotations

import codecs
import gzip
import os
from pathlib import Path

import numpy as np
import pandas as pd

import privgraph.caches as caches

#: Longest record line (bytes, line break not counted: 4 MiB); a longer line is an invalid record.
MAX_LINE_BYTES = 1 << 22
#: The readers' own limit: above :data:`MAX_LINE_BYTES` whatever the line break, so a reader never
#: skips a line the scan keeps (DuckDB buffers 16 times this per scan).
SCAN_LINE_BYTES = MAX_LINE_BYTES + 64
#: Bytes read at a time by :func:`long_lines`.
BLOCK_BYTES = 1 << 22
BOM = b"\xef\xbb\xbf"


def long_lines(path, *, header: bool, limit: int = MAX_LINE_BYTES) -> np.ndarray:
    """The places (0-based, among the file's records: its non-empty lines after the header) of
    the records whose line is longer than ``limit`` bytes. A ``.gz`` file is read decompressed.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"a,b\\n1,2\\n\\n1234567\\r\\n1,2\\r12345\\n")
    >>> long_lines(p, header=True, limit=4).tolist()
    [1, 3]
    >>> long_lines(p, header=True, limit=5).tolist(), long_lines(p, header=False, limit=2).tolist()
    ([1], [0, 1, 2, 3, 4])
    """
    stat = os.stat(path)
    return _unread(str(path), stat.st_size, stat.st_mtime_ns, header, limit, False).copy()


def unread_lines(path, *, header: bool, encoding: str) -> np.ndarray:
    """The places of the records DuckDB's scan does not read (:mod:`privgraph.data.records`):
    lines over :data:`MAX_LINE_BYTES` and, in a ``"utf-8"`` file, lines that are not valid
    UTF-8 (a leading byte-order mark dropped first), in order.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfa\\n\\xc3\\xbc\\n\\xc3\\n\\xff\\r\\n\\xed\\xa0\\x80\\n\\xe2\\x82\\xac")
    >>> unread_lines(p, header=False, encoding="utf-8").tolist(), unread_lines(p, header=False, encoding="latin-1").tolist()
    ([2, 3, 4], [])
    """
    stat = os.stat(path)
    is_utf8 = encoding == "utf-8"
    return _unread(str(path), stat.st_size, stat.st_mtime_ns, header, MAX_LINE_BYTES, is_utf8).copy()


@caches.lru(32)
def _unread(path: str, size: int, mtime: int, header: bool, limit: int, is_utf8: bool) -> np.ndarray:
    """:func:`unread_lines`, once per file version (size and mtime: the arguments only key the cache)."""
    opener = gzip.open if path.lower().endswith(".gz") else open
    with opener(path, "rb") as f:
        blocks = iter(lambda: f.read(BLOCK_BYTES), b"")
        if is_utf8:
            first = f.read(len(BOM))
            blocks = _chain(first[len(BOM):] if first == BOM else first, blocks)
        return _scan(blocks, header, limit, is_utf8)


def _chain(first: bytes, rest):
    """``first``, then the blocks of ``rest``."""
    yield first
    yield from rest


def _scan(blocks, header: bool, limit: int, is_utf8: bool = False) -> np.ndarray:
    """The places of the long records (and, ``is_utf8``, of those not valid UTF-8) in a stream
    of byte blocks (:func:`unread_lines`)."""
    found, run, records, is_header = [], 0, 0, header
    pending, is_bad = b"", False  # the line in progress: its incomplete UTF-8 sequence, and if it is invalid
    for block in blocks:
        a = np.frombuffer(block, np.uint8)
        ends = np.flatnonzero((a == 10) | (a == 13))
        bad = np.zeros(ends.size, bool)
        if is_utf8:
            bad, pending, is_bad = _undecodable(block, ends, pending, is_bad)
        if ends.size == 0:
            run += a.size
            continue
        lengths = np.diff(ends, prepend=-1) - 1
        lengths[0] += run
        if is_header:
            lengths, bad, is_header = lengths[1:], bad[1:], False
        records = _take(lengths, records, limit, found, bad)
        run = a.size - int(ends[-1]) - 1
    if not is_header:
        _take(np.array([run]), records, limit, found, np.array([is_bad or pending != b""]))
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def _undecodable(block: bytes, ends: np.ndarray, pending: bytes, is_bad: bool):
    """Which lines ending at ``ends`` in ``block`` are not valid UTF-8, and the state of the line
    in progress after it: (flags, its incomplete sequence, whether it is invalid so far). The
    decoder stops at each error, whose line is then flagged, and goes on after that line's end
    (a line break is ASCII, so an error always lies in the line that holds its first byte)."""
    data, shift = memoryview(pending + block), len(pending)
    stops = ends + shift
    bad = np.zeros(ends.size, bool)
    if ends.size:
        bad[0] = is_bad
    at = 0
    while True:
        try:
            _, used = codecs.utf_8_decode(data[at:], "strict", False)
        except UnicodeDecodeError as err:
            k = int(np.searchsorted(stops, at + err.start))  # the line holding the error's first byte
            if k == ends.size:
                return bad, b"", True
            bad[k], at = True, int(stops[k]) + 1
            continue
        return bad, bytes(data[at + used:]), is_bad and ends.size == 0


def _take(lengths: np.ndarray, records: int, limit: int, found: list, bad: np.ndarray) -> int:
    """Append the places of the long (or ``bad``) lines among ``lengths`` (the next lines, records
    counted so far ``records``) to ``found``; return the records counted after them."""
    is_record = lengths > 0
    places = records + np.cumsum(is_record) - 1
    found.append(places[is_record & ((lengths > limit) | bad)])
    return records + int(is_record.sum())


def in_file_order(frame: pd.DataFrame, places: np.ndarray) -> pd.DataFrame:
    """A scan's frame, whose last ``len(places)`` rows are the long lines' records, with those
    rows moved to ``places`` (the records' places in the file).

    >>> in_file_order(pd.DataFrame({"v": ["a", "b", "c", "long"]}), np.array([1]))["v"].tolist()
    ['a', 'long', 'b', 'c']
    """
    n, k = len(frame), len(places)
    order = np.empty(n, np.int64)
    kept = np.ones(n, bool)
    kept[places] = False
    order[kept] = np.arange(n - k)
    order[places] = np.arange(n - k, n)
    return frame.iloc[order].reset_index(drop=True)


__all__ = ["MAX_LINE_BYTES", "SCAN_LINE_BYTES", "in_file_order", "long_lines", "unread_lines"]
