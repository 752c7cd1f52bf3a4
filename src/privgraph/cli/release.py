"""``privgraph release``: graph, model, synthetic rows and a report under one budget.

``privgraph release asia.csv --domain asia.json --epsilon 1 --out release/`` runs
:class:`privgraph.release.PrivateRelease` (add/remove neighbours, the number of rows
private, released first when the structure needs it, :mod:`privgraph.privacy.resize`;
``--neighbours replace_one``: the number of rows public) and writes, all or nothing, into the directory OUT (created when missing, its parent
must exist; an existing one must be empty unless ``--overwrite``; a directory the run created
is removed again if the run fails): graph.json,
graph.dot, graph.png, model.json, synthetic.csv (or .parquet), ledger.json, plan.json,
report.md with budget.png and marginals.png, and report.html (the report and its figures as one
self-contained page). Every output is checked before the data is
read; the whole plan is checked against the budget before any noise is drawn.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from privgraph.cli.guarantee import COMPOSITIONS
from privgraph.cli.inputs import SPARK_MASTER
import privgraph.declarations as declarations
from privgraph.cli.params import EstimatorOptions


#: The declarations of the estimator's parameters that the options named after them are read from.
RELEASE = EstimatorOptions(declarations.RELEASE)


def release(
    data: Path = typer.Argument(..., help="CSV or Parquet file of discrete columns (needs --domain)."),
    domain: Optional[Path] = typer.Option(None, "--domain", help="The public domain codebook of DATA (JSON; draft one with `privgraph domain`)."),
    infer_domain: bool = typer.Option(False, "--infer-domain", help="Read the domain from DATA instead: the result is then NOT private."),
    epsilon: float = RELEASE.option(required=True),
    delta: float = RELEASE.option(),
    out: Path = typer.Option(..., help="Directory the outputs are written into: created when missing (not its parents); an existing one must be empty unless --overwrite."),
    split: Optional[float] = RELEASE.option(),
    structure: str = RELEASE.option(),
    cap: int = RELEASE.option(),
    tree_cap: int = RELEASE.option(),
    rows: Optional[int] = typer.Option(None, help="Number of synthetic rows (default: as many as DATA, public under replace-one; under add/remove the released estimate)."),
    data_format: str = typer.Option("csv", "--format", help="Synthetic rows as csv | parquet."),
    sampling: str = typer.Option("round", help="Synthetic rows from the model: round (controlled rounding, as Private-PGM) | sample (i.i.d.)."),
    seed: Optional[int] = typer.Option(None, help="Seed (tests/experiments only: seeded noise is NOT private)."),
    engine: str = typer.Option("duckdb", help="What counts DATA: duckdb (out of core, default) or spark."),
    spark_master: Optional[str] = SPARK_MASTER,
    neighbours: str = RELEASE.option(),
    max_rows_per_person: Optional[int] = RELEASE.option(),
    compositions: bool = COMPOSITIONS,
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help="Public time cap (wall-clock seconds) on the model fits and sampling after the data pass: past it the release stops, nothing written (the budget is spent)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace outputs that exist already (default: refuse them, before anything is read or spent)."),
) -> None:
    """Release a causal graph, its model and synthetic rows of DATA under one budget."""
    from privgraph.cli.inputs import check_inputs, fit_input, public_file
    from privgraph.cli.options import check_options
    from privgraph.timecap import check_seconds, time_cap

    check_options(rows=rows, seed=seed, sampling=sampling)
    check_seconds(max_seconds)
    data = check_inputs(data, domain, infer_domain)  # a wrong path in one line, before the numerical stack
    from privgraph.cli.guarantee import print_privacy
    from privgraph.data.frontdoor import first_level_notice
    from privgraph.outputs import check_outputs, output_directory, removed_on_failure, write_all
    from privgraph.release import PrivateRelease
    from privgraph.release.report import model_tables_text, release_outputs, release_writers

    console = Console()
    from privgraph.privacy import Neighbours

    asked = PrivateRelease(epsilon=epsilon, delta=delta, neighbours=neighbours, structure=structure, split=split,
                           cap=cap, tree_cap=tree_cap, max_rows_per_person=max_rows_per_person)
    asked.check_params()  # its rules, unread
    out, created = output_directory(out, flag="--out", overwrite=overwrite)  # before any data is read
    with removed_on_failure(out, created):
        paths = release_outputs(out, data_format)
        check_outputs({f"--out ({p.name})": (p, (p.suffix,)) for p in paths.values()}, overwrite=True)
        data, public = public_file(data, domain, infer_domain, engine)
        if rows is not None:  # the synthetic rows against memory, before any fit (the columns are public)
            from privgraph.cli.options import check_sample_memory
            from privgraph.data.files import file_columns

            columns = len(public.names) if public is not None else len(file_columns(data))
            check_sample_memory(rows, columns, "release", flag="--rows")
        if public is not None:
            from privgraph.data.domain import default_bins_notice

            if notice := default_bins_notice(public):  # the codebook only: one line, before any row is read
                console.print(notice)
            # every column countable (bounds-only ones in their default bins), the caps: before any row or spend
            public = asked.check_public(public, add_remove=Neighbours.parse(neighbours) is Neighbours.ADD_REMOVE)
        if infer_domain:
            console.print("[bold red]--infer-domain: the domain is read from the data; the result is NOT private[/]")
        est = PrivateRelease(epsilon=epsilon, delta=delta, split=split, cap=cap, random_state=seed, structure=structure,
                             neighbours=neighbours, tree_cap=tree_cap, max_rows_per_person=max_rows_per_person)
        from privgraph.cli.progress import stages

        if public is not None:  # the codebook and epsilon only (privgraph.release.timing)
            from privgraph.release.timing import release_time

            say_estimate(release_time(public.without_derived().sizes, epsilon).line(
                private=Neighbours.parse(neighbours) is Neighbours.ADD_REMOVE), console)
        with Console(stderr=True).status(f"release: structure, parameters and synthetic rows of {data.name}"), \
                progress_lines() as progress, stopped_by_time_cap(), time_cap(max_seconds), stages(RELEASE_STAGES) as stage:
            stage(RELEASE_STAGES[0])
            X, given = fit_input(data, domain, public, neighbours=neighbours, infer_domain=infer_domain, engine=engine,
                                 spark_master=spark_master)
            est.fit(X, domain=given, infer_domain=infer_domain)
            stage(RELEASE_STAGES[1])
            synthetic = est.sample(rows, random_state=seed, method=sampling)
            stage(RELEASE_STAGES[2])
            writers = release_writers(est, synthetic, paths)
            progress(f"writing {len(writers)} outputs")
            write_all(writers)
    console.print(f"released graph ({len(est.graph_.directed_edges)} directed, {len(est.graph_.undirected_edges)} "
                  f"undirected edges), {model_tables_text(est)}, {len(synthetic)} synthetic rows into {out}")
    if notice := first_level_notice(est.domain_, level_shares(est.domain_, synthetic)):
        console.print(notice)
    print_privacy(console, est.ledger_, est.composition_, delta, relation=neighbours, seeded=seed is not None,
                  compositions=compositions)


def say_estimate(line: str, console: Console, stream=None) -> None:
    """The planner's time estimate (public facts only), once before the long work: a stage-style
    line on ``stream`` (stderr) off a terminal, printed and silenced with the stage lines
    (:data:`privgraph.cli.progress.QUIET_SECONDS`), or a line of ``console`` on a terminal."""
    import sys

    import privgraph.cli.progress as progress

    stream = sys.stderr if stream is None else stream
    if getattr(stream, "isatty", lambda: False)():
        console.print(line, highlight=False)
    elif progress.QUIET_SECONDS <= 0:
        print(f"privgraph: {line}", file=stream, flush=True)


#: What ``release`` prints as each stage starts off a terminal (:mod:`privgraph.cli.progress`).
RELEASE_STAGES = ("the structure and the model's tables", "synthetic rows", "writing the outputs")


@contextlib.contextmanager
def stopped_by_time_cap():
    """A run stopped by ``--max-seconds`` (:class:`~privgraph.timecap.TimeCapReached`) as one
    line on stderr and exit status 1; nothing was written (the outputs are written last)."""
    from privgraph.timecap import TimeCapReached

    try:
        yield
    except TimeCapReached as err:
        typer.echo(f"privgraph: stopped: {err}", err=True)
        raise SystemExit(1) from None


def level_shares(domain, synthetic) -> dict[str, list[float]]:
    """The share of the synthetic rows at each level of each discrete column, in the
    codebook's order (the rows are released: post-processing)."""
    from privgraph.data.codebook import level_text
    from privgraph.data.domain import Kind

    out = {}
    for name, kind, levels in zip(domain.names, domain.kinds, domain.levels):
        if kind is Kind.CONTINUOUS or not len(synthetic):
            continue
        counts = synthetic[name].map(level_text).value_counts(normalize=True)
        out[name] = [float(counts.get(level_text(level), 0.0)) for level in levels]
    return out


@contextlib.contextmanager
def progress_lines(stream=None):
    """One line per stage of the release on ``stream`` (stderr) when it is not a terminal (a
    log, a batch job; a terminal shows the spinner instead): the release's logger's lines,
    each with the seconds since the start. Yields a function that adds a line. The lines
    name stages and counts of tables, rows and cells only (post-processing of the release).
    """
    import logging
    import sys
    import time

    stream = sys.stderr if stream is None else stream
    start = time.monotonic()
    shown = not stream.isatty()

    def line(message: str) -> None:
        if shown:
            print(f"release [{time.monotonic() - start:6.1f} s] {message}", file=stream, flush=True)

    class Lines(logging.Handler):
        def emit(self, record):
            line(record.getMessage())

    logger, handler = logging.getLogger("privgraph.release"), Lines()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield line
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
