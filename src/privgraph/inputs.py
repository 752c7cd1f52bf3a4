"""The user's input files checked by their names, before anything is read from them.

The counterpart of :mod:`privgraph.outputs`: a DATA file and a domain codebook that are
missing, a directory, or (a data file) of no known format are refused here in one line. This
module imports no numerical stack, so that the commands report such a path before importing
numpy, pandas or DuckDB (:func:`privgraph.cli.inputs.check_inputs`).
"""

from __future__ import annotations

import os
from pathlib import Path

from privgraph.validation import InvalidInput


def file_format(path: Path) -> str | None:
    """'csv', 'parquet' or None, from the file name.

    >>> file_format(Path("a.csv.gz")), file_format(Path("a.pq")), file_format(Path("a.txt"))
    ('csv', 'parquet', None)
    """
    name = path.name.lower()
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    return None


def check_path(path) -> Path:
    """``path`` as a Path if it names an existing .csv or .parquet file (its name only: the
    file's header is read where its columns are, :func:`privgraph.data.records.check_csv_file`).

    >>> check_path("/no/such/file.csv")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no such data file: '/no/such/file.csv'
    """
    p = Path(os.fspath(path))
    if p.is_dir():
        raise IsADirectoryError(f"data file {str(p)!r} is a directory: give a .csv or .parquet file")
    if not p.is_file():
        raise FileNotFoundError(f"no such data file: {str(p)!r}")
    if file_format(p) is None:
        raise InvalidInput(f"data file {str(p)!r} must end in .csv or .parquet")
    return p


def check_codebook_path(path) -> Path:
    """``path`` as a Path if it names an existing file (a domain codebook, read by
    :func:`privgraph.data.codebook.read_codebook`).

    >>> check_codebook_path("/no/such/domain.json")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no such domain codebook: '/no/such/domain.json' (draft one with `privgraph domain DATA --out domain.json`)
    """
    p = Path(os.fspath(path))
    if p.is_dir():
        raise InvalidInput(f"domain codebook {str(p)!r} is a directory, not a JSON file")
    if not p.is_file():
        raise FileNotFoundError(f"no such domain codebook: {str(p)!r} (draft one with `privgraph domain DATA --out {p.name}`)")
    return p
