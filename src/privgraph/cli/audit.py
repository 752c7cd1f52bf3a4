"""``privgraph audit``: run the built-in privacy audits and print what they found.

Each row is one mechanism (or one whole estimator, below the line) on its worst-case
neighbouring pair: the claimed epsilon, the audited lower bound (true with probability
1 - alpha), their ratio and the verdict. The command exits with status 1 if a correct
mechanism is violated or a planted bug is missed; a known failure (a documented gap of an
estimator, shown with ``--include-broken``) reads "known leak" and does not fail the run.
"""

from __future__ import annotations

import functools
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
import privgraph.caches as caches
from privgraph.validation import InvalidInput


def verdict(case, result) -> str:
    """'pass' / 'VIOLATION' for a correct mechanism, 'caught' / 'MISSED' for a planted bug,
    'known leak' / 'not shown' for a known failure."""
    if case.is_known_failure:
        return "known leak" if result.violates(case.epsilon) else "not shown"
    if case.is_broken:
        return "caught" if result.violates(case.epsilon) else "MISSED"
    return "VIOLATION" if result.violates(case.epsilon) else "pass"


def audit_table(rows, alpha: float) -> Table:
    """A rich table with one row per (case, result)."""
    table = Table(title=f"Privacy audit (lower bounds hold with probability 1 - {alpha:g})")
    for col in ("mechanism", "neighbours", "pair", "claimed eps", "audited bound", "ratio", "verdict",
                "runs", "seconds", "event"):
        table.add_column(col, justify="right" if col in ("claimed eps", "audited bound", "ratio", "runs", "seconds") else "left",
                         no_wrap=col != "event")
    for i, (case, result) in enumerate(rows):
        if i and case.group != rows[i - 1][0].group:
            table.add_section()
        claim = f"{case.epsilon:g}" + (f" (delta {case.delta:g})" if case.delta else "")
        mark = {"pass": "green", "caught": "green", "known leak": "yellow"}.get(verdict(case, result), "bold red")
        table.add_row(
            case.name, case.neighbours.value, case.pair, claim, f"{result.epsilon_bound:.4f}",
            f"{result.epsilon_bound / case.epsilon:.3f}", f"[{mark}]{verdict(case, result)}[/]",
            f"{result.runs:,}", f"{result.seconds:.1f}", result.event,
        )
    return table


def audit(
    quick: bool = typer.Option(False, "--quick", help="CI-sized runs: 2e5 per side instead of 1e6 (a tenth of that for the selection mechanisms, a few thousand for the estimators)."),
    group: str = typer.Option("all", "--group", help="primitives (the privacy core's mechanisms), estimators (whole estimators end to end), persons (the estimators with the person as the unit, on neighbours differing by one person's history), refusals (every command on neighbouring files at each check's boundary) or all."),
    mechanism: Optional[str] = typer.Option(None, "--mechanism", help="Audit only this case (see the table for names)."),
    include_broken: bool = typer.Option(False, "--include-broken", help="Also audit the planted bugs (must be caught) and the estimators' known failures."),
    alpha: float = typer.Option(1e-3, help="Each bound fails with probability at most alpha."),
    seed: int = typer.Option(0, help="Seed of the mechanisms' noise, so that an audit can be rerun exactly."),
    secure: bool = typer.Option(False, "--secure", help="Draw all noise from SecureSampler instead (not reproducible)."),
    jobs: int = typer.Option(1, "--jobs", help="Audit this many cases at once, each in a worker process; the results are those of one at a time (each case draws from --seed alone)."),
) -> None:
    """Audit the privacy mechanisms empirically: a lower bound on each epsilon, never a proof."""
    from privgraph.audit import find_cases

    from privgraph.cli.options import check_options

    check_options(alpha=alpha, seed=seed)
    if isinstance(jobs, bool) or jobs < 1:
        raise InvalidInput(f"--jobs must be a whole number of worker processes, at least 1, got {jobs!r}")
    if group not in ("all", "primitives", "estimators", "persons", "refusals"):
        raise InvalidInput(f"unknown group {group!r}; choose from primitives, estimators, persons, refusals, all")
    console = Console()
    if not console.is_terminal:  # piped or captured (CI logs): do not squeeze to 80 columns
        console = Console(width=max(console.width, 170))
    refusals = [] if mechanism is not None or group not in ("all", "refusals") else audit_refusal_rows(jobs)
    if group == "refusals":
        console.print(refusal_table(refusals))
        _exit_on(refusals, [])
        return
    cases = find_cases(mechanism, include_broken, group)
    audit_one = functools.partial(_audit_one, seed=None if secure else seed, quick=quick, alpha=alpha)
    results = _in_order([c.name for c in cases], audit_one, jobs, "auditing")
    rows = list(zip(cases, results))
    console.print(audit_table(rows, alpha))
    console.print("An audit gives a lower bound on epsilon: 'pass' means no leak was found, not that none exists.")
    if refusals:
        console.print(refusal_table(refusals))
    _exit_on(refusals, rows)


def _exit_on(refusals, rows) -> None:
    if any(not r.same for r in refusals) or any(verdict(c, r) in ("VIOLATION", "MISSED") for c, r in rows):
        raise typer.Exit(1)


def audit_refusal_rows(jobs: int = 1):
    """Run the "no data-dependent refusal" audit (:mod:`privgraph.cli.refusals`) with progress, in ``jobs``
    worker processes."""
    from privgraph.cli.refusals import RefusalResult, refusal_cases

    cases = refusal_cases()
    seen = _in_order([c.name for c in cases], _refusal_one, jobs, "refusal audit")
    return [RefusalResult(case, *got) for case, got in zip(cases, seen)]


def _in_order(names: list, work, jobs: int, what: str) -> list:
    """``work(name)`` for every name, in ``jobs`` worker processes (spawned: a fresh interpreter
    each, so nothing of this one's state reaches a case) or here when ``jobs`` is 1, with a
    progress bar; the results in ``names``' order."""
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(what, total=len(names))
        if jobs == 1:
            out = []
            for name in names:
                progress.update(task, description=f"{what}: {name}")
                out.append(work(name))
                progress.advance(task)
            return out
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(work, name): i for i, name in enumerate(names)}
            out = [None] * len(names)
            for done in as_completed(futures):
                out[futures[done]] = done.result()
                progress.update(task, description=f"{what}: {names[futures[done]]}")
                progress.advance(task)
            return out


def _audit_one(name: str, *, seed, quick: bool, alpha: float):
    """The audit of the case called ``name`` (found again by name: a worker process gets names only)."""
    return _cases_by_name()[name].audit(seed=seed, quick=quick, alpha=alpha)


@caches.lru(1, bound="1 table of the audit cases")
def _cases_by_name() -> dict:
    """Every audit case, broken ones included, by name: built once per process (building them all
    takes about 0.1 s, once per case when looked up one name at a time)."""
    from privgraph.audit import all_cases

    return {case.name: case for case in all_cases(include_broken=True)}


def _refusal_one(name: str) -> tuple:
    """What :func:`~privgraph.cli.refusals.run_case` saw for the refusal case called ``name``:
    (same, left, right)."""
    from privgraph.cli.refusals import refusal_cases, run_case

    (case,) = [c for c in refusal_cases() if c.name == name]
    result = run_case(case)
    return result.same, result.left, result.right


def refusal_table(results) -> Table:
    """One row per command and boundary: what each neighbour got, and whether they match."""
    table = Table(title="No data-dependent refusal: each command on two neighbouring files at a check's boundary")
    for col in ("case", "command", "neighbours", "boundary", "first file", "neighbouring file", "verdict"):
        table.add_column(col)
    for r in results:
        mark = "[green]same[/]" if r.same else "[bold red]DIFFERENT[/]"
        table.add_row(r.case.name, r.case.command, r.case.relation, r.case.boundary, r.left[:40], r.right[:40], mark)
    return table
