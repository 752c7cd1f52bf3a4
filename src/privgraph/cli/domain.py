"""``privgraph domain``: draft a domain codebook from a data file, or check a file against one.

Both READ THE DATA and print what they find without noise: they are tools for the data
owner, before a release, never part of one. ``privgraph domain data.csv --out domain.json``
drafts a codebook (levels that occur, observed bounds) for a person to review: widen the
bounds to public limits, add the levels the data lacks, drop rare ones only the data could
reveal, then delete the ``drafted_from_data`` key to mark it reviewed. The draft reads every
row (each column on its own), gives a column with missing values ``"missing": "level"`` (its
missing values kept as a level) and one without ``"missing": "invalid"``, and prints one line
for each column to look at: identifier-like ones (drop them) and wide ones (more than 100
levels; an integer one is drafted as continuous with bins). ``privgraph domain
data.csv --check domain.json`` counts, per column, the values a private run would drop or
recode (:mod:`privgraph.data.frontdoor`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table
from privgraph.validation import InvalidInput

from privgraph.cli.inputs import SPARK_MASTER

WARNING = ("[bold red]privgraph domain reads the data and prints what it finds WITHOUT noise: "
           "for the data owner only, not for release.[/]")


def domain(
    data: Path = typer.Argument(..., help="CSV or Parquet file."),
    out: Optional[Path] = typer.Option(None, help="Write a DRAFT codebook here (.json), to review before use: every row is read; columns with missing values get \"missing\": \"level\"; identifier-like and wide columns are named."),
    check: Optional[Path] = typer.Option(None, help="Count the values of DATA outside this codebook (per column)."),
    columns: Optional[str] = typer.Option(None, help="Only these columns, comma-separated (draft only)."),
    ordinal: Optional[str] = typer.Option(None, help="Columns to draft as ordinal, comma-separated (numeric text in numeric order)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace outputs that exist already (default: refuse them, before anything is read or spent)."),
    engine: str = typer.Option("duckdb", help="What reads DATA for --check: duckdb (default) or spark (one job)."),
    spark_master: Optional[str] = SPARK_MASTER,
) -> None:
    """Draft a domain codebook from DATA, or check DATA against one (reads the data: NOT private)."""
    from privgraph.data.files import check_path
    from privgraph.data.frontdoor import check_engine
    from privgraph.outputs import check_outputs

    if (out is None) == (check is None):
        raise InvalidInput("give --out FILE (draft a codebook) or --check CODEBOOK (check DATA), exactly one")
    check_outputs({"--out": (out, (".json",))}, overwrite=overwrite)
    if check_engine(engine) != "duckdb" and out is not None:
        raise InvalidInput("--engine spark reads DATA for --check only: draft a codebook (--out) with --engine duckdb")
    path = check_path(data)
    console = Console(stderr=True)
    console.print(WARNING)
    from privgraph.cli.progress import stages

    name = "drafting the codebook (every row)" if out is not None else "checking the values against the codebook"
    with stages((name,)) as stage:  # one read of the data: the heartbeat says how long it has run
        stage(name)
        if out is not None:
            draft(path, out, _names(columns), _names(ordinal), console)
        else:
            report(path, check, console, engine, spark_master)


def _names(text: Optional[str]) -> list[str] | None:
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]


def draft(path: Path, out: Path, columns, ordinal, console: Console) -> None:
    from privgraph.data import write_codebook
    from privgraph.data.draft import draft_with_notes

    kinds = {c: "ordinal" for c in ordinal or ()}
    domain, notes = draft_with_notes(path, columns=columns, kinds=kinds)
    write_codebook(domain, out, drafted_from=str(path))
    console.print(f"wrote a DRAFT codebook of {len(domain.names)} columns to {out}: review it (levels and bounds "
                  "came from the data), then delete its \"drafted_from_data\" key to mark it public")
    if drawn := [n for n, b in zip(domain.names, domain.bounds) if b is not None]:
        console.print(f"[bold red]warning:[/] the bounds of the continuous columns {drawn} are the data's minimum and "
                      "maximum (and their 10 bins are spaced over them): replace them with public limits before use")
    if domain.missing_names:
        console.print(f"columns {list(domain.missing_names)} have missing values: drafted with \"missing\": \"level\" "
                      "(kept as a level of their own, and missing in the synthetic rows as in the data); the others "
                      "with \"missing\": \"invalid\"")
    for note in notes:
        console.print(f"[bold red]warning:[/] {note}")


def report(path: Path, codebook: Path, console: Console, engine: str = "duckdb", spark_master=None) -> None:
    """Per column of the codebook: values that are missing or outside its levels/bounds (one
    query through ``engine``: :func:`privgraph.data.invalid_values.count_invalid_values`)."""
    from privgraph.data import Kind, read_codebook
    from privgraph.data.invalid_values import count_invalid_values

    domain = read_codebook(codebook)
    rows, malformed, cells = count_invalid_values(path, domain, engine, spark_master=spark_master)
    table = Table(title=f"{path.name} against {codebook.name} ({rows} rows; NOT private)",
                  caption=None if malformed is None else f"lines that do not parse (read as records of missing values): "
                  f"{malformed}", caption_justify="left")
    for col in ("column", "kind", "missing", "outside the domain", "missing is"):
        table.add_column(col, justify="left" if col in ("column", "kind", "missing is") else "right")
    for name, kind in zip(domain.names, domain.kinds):
        missing, outside = cells[name]
        treated = "a level" if name in domain.missing_names else "invalid"
        table.add_row(name, "nominal" if kind is Kind.CATEGORICAL else kind.value, str(missing), str(outside), treated)
    Console().print(table)
