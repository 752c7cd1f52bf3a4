"""Lines longer than every scan reads: invalid records, counted, never skipped.

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
"""

from __future__ import annotations

import gzip
import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

#: Longest record line (bytes, line break not counted: 4 MiB); a longer line is an invalid record.
MAX_LINE_BYTES = 1 << 22
#: The readers' own limit: above :data:`MAX_LINE_BYTES` whatever the line break, so a reader never
#: skips a line the scan keeps (DuckDB buffers 16 times this per scan).
SCAN_LINE_BYTES = MAX_LINE_BYTES + 64
#: Bytes read at a time by :func:`long_lines`.
BLOCK_BYTES = 1 << 22


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
    return _long_lines(str(path), stat.st_size, stat.st_mtime_ns, header, limit).copy()


@lru_cache(maxsize=32)
def _long_lines(path: str, size: int, mtime: int, header: bool, limit: int) -> np.ndarray:
    """:func:`long_lines`, once per file version (size and mtime: the arguments only key the cache)."""
    opener = gzip.open if path.lower().endswith(".gz") else open
    with opener(path, "rb") as f:
        return _scan(iter(lambda: f.read(BLOCK_BYTES), b""), header, limit)


def _scan(blocks, header: bool, limit: int) -> np.ndarray:
    """The places of the long records in a stream of byte blocks (:func:`long_lines`)."""
    found, run, records, is_header = [], 0, 0, header
    for block in blocks:
        a = np.frombuffer(block, np.uint8)
        ends = np.flatnonzero((a == 10) | (a == 13))
        if ends.size == 0:
            run += a.size
            continue
        lengths = np.diff(ends, prepend=-1) - 1
        lengths[0] += run
        if is_header:
            lengths, is_header = lengths[1:], False
        records = _take(lengths, records, limit, found)
        run = a.size - int(ends[-1]) - 1
    if not is_header:
        _take(np.array([run]), records, limit, found)
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def _take(lengths: np.ndarray, records: int, limit: int, found: list) -> int:
    """Append the places of the long lines among ``lengths`` (the next lines, records counted so
    far ``records``) to ``found``; return the records counted after them."""
    is_record = lengths > 0
    places = records + np.cumsum(is_record) - 1
    found.append(places[lengths > limit])
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


__all__ = ["MAX_LINE_BYTES", "SCAN_LINE_BYTES", "in_file_order", "long_lines"]
