"""What the commands that read a user's file share: the file, its public domain, the engine.

Everything here reads public facts only (the flags, the file's name and header, the
codebook): a data file without a domain is refused before any of its values is read.
"""

from __future__ import annotations

from pathlib import Path

import typer
from privgraph.validation import InvalidInput

INFER_NOTICE = "[bold red]--infer-domain: the domain is read from the data; the result is NOT private[/]"


#: ``--spark-master``, the same flag on every command with ``--engine spark``.
SPARK_MASTER = typer.Option(
    None, "--spark-master",
    help="With --engine spark and no active session: the master to start one on (default: $PRIVGRAPH_SPARK_MASTER, "
         "else local[*]; e.g. spark://host:7077, yarn, local-cluster[2,1,1024]).")


def check_inputs(data, domain, infer_domain: bool) -> Path:
    """The DATA file checked by its name, and the codebook's path when ``domain`` names one, or a
    one-line error; imports no numerical stack, so that a command calls it before its own heavy
    imports.

    >>> check_inputs("d.csv", "d.json", True)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: give --domain or --infer-domain, not both
    """
    from privgraph.inputs import check_codebook_path, check_path

    if domain is not None and infer_domain:
        raise InvalidInput("give --domain or --infer-domain, not both")
    path = check_path(data)
    if domain is not None:
        check_codebook_path(domain)
    return path


def estimator_domain(codebook, public):
    """What a command passes an estimator as ``domain=``: the ``codebook`` path itself when it
    names a person column (``"id"``: the estimator reads it there, :mod:`privgraph.data.persons`),
    else the ``public`` Domain read from it (or None under --infer-domain).

    >>> estimator_domain(None, None) is None
    True
    """
    from privgraph.data.codebook import person_column

    if codebook is not None and public is not None and person_column(codebook) is not None:
        return codebook
    return public


def fit_input(path: Path, codebook, public, *, neighbours, infer_domain: bool, engine: str,
              spark_master: str | None):
    """``(X, domain)`` a command passes an estimator's ``fit``: the file opened once through the
    front door (:func:`~privgraph.data.open_private`, read for ``engine`` by the handle's
    dialect), its ``public`` domain in the handle. Under ``--infer-domain`` (no domain until the
    data is read: the estimator's parameters are checked first) the path, and with a person
    column (``"id"``) the file for ``engine`` and the codebook path, which the estimator's person
    unit reads: the estimator's ``fit`` opens them through the same front door."""
    from privgraph.data.frontdoor import open_file, open_private

    domain = estimator_domain(codebook, public)
    if public is None or domain is not public:
        return open_file(path, engine, None if public is None else public.dialect, spark_master=spark_master), domain
    return open_private(path, public, neighbours=neighbours, infer_domain=infer_domain,
                        what=f"data file {str(path)!r}", engine=engine, spark_master=spark_master), None


def public_file(path: Path, domain, infer_domain: bool, engine: str = "duckdb"):
    """``(path, public domain or None under --infer-domain)`` of a file :func:`check_inputs`
    checked, or a one-line error.

    >>> public_file(Path("d.csv"), None, True, engine="spark")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --infer-domain reads the file with DuckDB: use --engine duckdb
    """
    from privgraph.data import resolve_domain
    from privgraph.data.frontdoor import check_engine

    check_engine(engine)
    if infer_domain and engine != "duckdb":
        raise InvalidInput("--infer-domain reads the file with DuckDB: use --engine duckdb")
    if infer_domain:
        return path, None
    return path, resolve_domain(path, domain, what=f"data file {str(path)!r}")
