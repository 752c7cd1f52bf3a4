"""A Latin-1 file as UTF-8, for DuckDB's scan: every byte one character, none refused.

DuckDB's CSV reader decodes ``encoding = 'latin-1'`` itself and stops the whole scan at a byte
in 0x80-0x9F ("File is not latin-1 encoded": it takes those C1 control characters for a sign
of Windows-1252), so one record could stop a command (measured, duckdb 2.0.1). Latin-1 maps
every byte to the character of the same number, so a file in it is read through a UTF-8 copy
made here: one streamed pass (a block at a time; ``.gz`` decompressed), each byte written as
its character's UTF-8, which DuckDB's UTF-8 scan reads whole. Line breaks are ASCII, so the
lines are the file's lines. The copy lives in a private temporary folder (like DuckDB's
spill files), once per file version per process, and is removed when the process ends.
"""

from __future__ import annotations

import atexit
import gzip
import itertools
import os
import shutil
import tempfile
from pathlib import Path

import privgraph.caches as caches
from privgraph.data.long_lines import BLOCK_BYTES

_COPIES: dict[str, tuple[int, int, Path]] = {}  # a file's path: its size and mtime, and its copy
_FOLDER: list[Path] = []
_NUMBERS = itertools.count()


def _clear_copies() -> None:
    """Remove the copies made so far (the next read of a file copies it again)."""
    for _, _, copy in _COPIES.values():
        copy.unlink(missing_ok=True)
    _COPIES.clear()


caches.register(f"{__name__}.copies", "one UTF-8 copy per Latin-1 file read (on disk; removed at exit)",
                _clear_copies, _COPIES)


def utf8_copy(path) -> Path:
    """A UTF-8 copy of the Latin-1 file ``path`` (made once per version of the file).

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"a\\n\\x80\\x9f\\xff\\n")
    >>> utf8_copy(p).read_bytes().decode("utf-8") == p.read_bytes().decode("latin-1")
    True
    """
    path, stat = str(path), os.stat(path)
    size, mtime, copy = _COPIES.get(path, (-1, -1, None))
    if (size, mtime) == (stat.st_size, stat.st_mtime_ns):
        return copy
    if copy is not None:
        copy.unlink(missing_ok=True)
    copy = _folder() / f"{next(_NUMBERS)}-{Path(path).name.removesuffix('.gz')}"
    opener = gzip.open if path.lower().endswith(".gz") else open
    with opener(path, "rb") as source, open(copy, "wb") as target:
        for block in iter(lambda: source.read(BLOCK_BYTES), b""):
            target.write(block.decode("latin-1").encode("utf-8"))
    _COPIES[path] = (stat.st_size, stat.st_mtime_ns, copy)
    return copy


def _folder() -> Path:
    """This process's folder of copies (private to the user; removed at exit)."""
    if not _FOLDER:
        folder = Path(tempfile.mkdtemp(prefix="privgraph-latin1-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _FOLDER.append(folder)
    return _FOLDER[0]


__all__ = ["utf8_copy"]
