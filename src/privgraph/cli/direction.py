"""``privgraph direction``: the private causal direction of one pair, or of many pairs in a batch.

One pair: ``privgraph direction data.csv --x age --y income --epsilon 1``.
Batch: several files (one pair per file, the same --x/--y column names in each), or one
long table with a pair column: ``privgraph direction pairs.parquet --pair-column pair
--x a --y b --epsilon 1 --out results.json``. The settings and ``--out`` are checked before
any data is read (a bad one costs no budget); results are written atomically (a temporary
file in the same folder, then renamed), as JSON or CSV by the extension of ``--out``.

Accounting across pairs: each pair gets the full ``--epsilon``. If the pairs hold disjoint
records (the rows of a long table, files about different people), a record is in one pair
only and the guarantee per record is epsilon (parallel composition). If the same people
appear in several pairs, the guarantee is the sum, which the summary also prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional, Tuple

import typer
from rich.console import Console
from rich.progress import Progress

from privgraph.outputs import check_outputs, write_atomically

# numpy, pandas and the estimators are imported where used: `privgraph --help` stays fast


def read_pairs(paths: List[Path], x: str, y: str, pair_column: Optional[str], as_text: bool = False):
    """Yield ``(name, x_values, y_values)`` for every pair in the files (as Series named x, y).

    One file without ``pair_column`` is one pair named after the file; with it, one pair
    per value of that column (prefixed by the file's name when there are several files).
    ``as_text`` reads a CSV as text, so that no type is guessed from the data (the public
    domain then says how to read each value).
    """
    for path in paths:
        from privgraph.data.files import read_table

        frame = read_table(path, as_text=as_text)
        missing = [c for c in (x, y, pair_column) if c is not None and c not in frame.columns]
        if missing:
            raise KeyError(f"columns {missing} not in {str(path)!r} (columns: {list(frame.columns)})")
        if pair_column is None:
            yield path.stem, frame[x], frame[y]
            continue
        for name, group in frame.groupby(pair_column, sort=True):
            yield f"{path.stem}:{name}" if len(paths) > 1 else str(name), group[x], group[y]


def _pair_domain(path: Path, x: str, y: str):
    """The codebook's domain over the two columns (read before any data)."""
    from privgraph.data import read_codebook

    full = read_codebook(path)
    if missing := [c for c in (x, y) if c not in full.names]:
        raise KeyError(f"columns {missing} are not in the domain codebook {str(path)!r} (its columns: {list(full.names)})")
    return full.project([x, y])


def write_rows(rows: list[dict], out: Path) -> None:
    """Write rows as JSON or CSV (by extension), atomically; the folder must exist.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "r.json"
    >>> write_rows([{"pair": "a", "direction": "x->y"}], out)
    >>> json.loads(out.read_text())[0]["direction"], [p.name for p in out.parent.iterdir()]
    ('x->y', ['r.json'])
    """
    if out.suffix.lower() == ".csv":
        import pandas as pd

        write_atomically(out, lambda tmp: pd.DataFrame(rows).to_csv(tmp, index=False))
    else:
        write_atomically(out, lambda tmp: Path(tmp).write_text(json.dumps(rows, indent=1)))


def result_row(name: str, model, n: int, error: str | None) -> dict:
    """One output row: the private result of a fitted model, or the error that stopped it.

    >>> result_row("p", None, 10, "need at least 200 rows")["direction"] is None
    True
    """
    row = {"pair": name, "rows": n, "direction": None, "score_x_to_y": None, "score_y_to_x": None,
           "confidence_estimate": None, "epsilon": None, "delta": None, "error": error}
    if model is not None:
        total = model.ledger_.total()
        row.update(direction=model.direction_, score_x_to_y=model.scores_["x->y"],
                   score_y_to_x=model.scores_["y->x"], confidence_estimate=model.confidence_,
                   epsilon=total.epsilon, delta=total.delta)
    return row


def direction(
    data: List[Path] = typer.Argument(..., help="CSV or Parquet file(s); several files = one pair per file."),
    domain: Optional[Path] = typer.Option(None, "--domain", help="Public domain codebook naming --x and --y (continuous with bounds, or ordinal)."),
    infer_domain: bool = typer.Option(False, "--infer-domain", help="Scale by the data instead of a domain: the result is then NOT private."),
    x: str = typer.Option(..., "--x", help="Column of the first variable."),
    y: str = typer.Option(..., "--y", help="Column of the second variable."),
    epsilon: float = typer.Option(..., help="Privacy budget epsilon per pair."),
    score: str = typer.Option("kendall", help="Dependence score: kendall, spearman, hsic or iqr."),
    privacy: str = typer.Option("record", help="'record' (default: every record protected), 'test' (test records only: NOT private for the training part) or 'train+test' (every record, hsic only, needs ~1e7 rows)."),
    delta: float = typer.Option(1e-6, help="Delta per pair (the iqr score only)."),
    x_bounds: Optional[Tuple[float, float]] = typer.Option(None, help="Public clipping bounds of x (instead of --domain)."),
    y_bounds: Optional[Tuple[float, float]] = typer.Option(None, help="Public clipping bounds of y (instead of --domain)."),
    pair_column: Optional[str] = typer.Option(None, help="Long table: the column naming each pair."),
    out: Optional[Path] = typer.Option(None, help="Write the results here (.json or .csv), atomically."),
    seed: Optional[int] = typer.Option(None, help="Seed (tests/experiments only: seeded noise is NOT private)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace outputs that exist already (default: refuse them, before anything is read or spent)."),
) -> None:
    """Decide X -> Y or Y -> X for one or many pairs from privately released dependence scores."""
    console = Console()
    from privgraph.causal.direction import PrivateANM, check_settings
    from privgraph.data import DomainRequired
    from privgraph.data.frontdoor import how_to_get_a_domain

    from privgraph.cli.options import check_options

    check_options(epsilon=epsilon, delta=delta, seed=seed)
    if x == y:
        raise ValueError(f"--x and --y name the same column {x!r}: a direction needs two variables")
    check_settings(score, privacy, epsilon, delta)
    check_outputs({"--out": (out, (".json", ".csv"))}, overwrite=overwrite)
    if seed is not None:
        console.print("[yellow]seeded sampler: reproducible noise, NOT private (experiments only)[/]")
    bounds = None if x_bounds is None and y_bounds is None else (x_bounds, y_bounds)
    if domain is not None and (infer_domain or bounds is not None):
        raise ValueError("give --domain, or --x-bounds/--y-bounds, or --infer-domain: one of them")
    if domain is not None:
        domain = _pair_domain(domain, x, y)
    elif bounds is None and not infer_domain:
        raise DomainRequired(how_to_get_a_domain(f"the pair {x!r}, {y!r}").replace(
            "Give one:", "Give --x-bounds/--y-bounds, or"))
    if infer_domain:
        from privgraph.cli.inputs import INFER_NOTICE

        console.print(INFER_NOTICE)
    pairs = list(read_pairs(list(data), x, y, pair_column, as_text=domain is not None))
    batch = len(pairs) > 1
    rows, ledgers, caveats = [], [], set()
    with Progress(console=console, transient=True, disable=not batch) as progress:
        task = progress.add_task("pairs", total=len(pairs))
        for i, (name, xs, ys) in enumerate(pairs):
            model = PrivateANM(epsilon, score=score, privacy=privacy, delta=delta, bounds=bounds,
                               random_state=None if seed is None else seed + i)  # one noise stream per pair
            try:
                model.fit(xs, ys, domain=domain, infer_domain=infer_domain)
                rows.append(result_row(name, model, len(xs), None))
                caveats.update(model.ledger_.caveats)
                ledgers.append(model.ledger_)
            except ValueError as err:
                if not batch:
                    raise
                rows.append(result_row(name, None, len(xs), str(err)))
            progress.advance(task)
    _report(console, rows, ledgers, delta, batch)
    for caveat in sorted(caveats):
        console.print(f"[bold red]NOT PRIVATE:[/] {caveat}")
    if out is not None:
        write_rows(rows, out)
        console.print(f"results written to {out}")


def _report(console: Console, rows: list[dict], ledgers: list, delta: float, batch: bool) -> None:
    from rich.table import Table

    table = Table(title="Private causal direction (confidence: an estimate, Theorem 3/5 at the private margin)")
    for col in ("pair", "rows (public)", "direction", "score x->y", "score y->x", "confidence", "error"):
        table.add_column(col)
    for r in rows:
        fmt = lambda v: "-" if v is None else f"{v:.4g}"  # noqa: E731
        table.add_row(r["pair"], str(r["rows"]), r["direction"] or "-", fmt(r["score_x_to_y"]),
                      fmt(r["score_y_to_x"]), fmt(r["confidence_estimate"]), r["error"] or "")
    console.print(table)
    if not ledgers:
        return
    if batch:
        from privgraph.privacy.ledger import merge

        total = merge(ledgers).total()
        console.print(f"{len(ledgers)} pairs decided; per record epsilon {ledgers[0].total().epsilon:g} if the "
                      f"pairs hold disjoint records, epsilon {total.epsilon:g} (delta {total.delta:g}) if they share them")
    else:
        from privgraph.cli.ledger_table import print_ledger

        print_ledger(ledgers[0], max(delta, 1e-12), console)
