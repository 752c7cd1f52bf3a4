"""Printing a ledger: the privacy report every command shows with its result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from privgraph.privacy import Ledger


def ledger_table(ledger: Ledger, title: str = "Privacy ledger") -> Table:
    """A rich table with one row per charge; the ledger's caveats in red beneath it."""
    caption = "\n".join(f"[bold red]NOT PRIVATE:[/] {c}" for c in ledger.caveats) or None
    table = Table(title=title, caption=caption, caption_justify="left")
    for col in ("mechanism", "neighbours", "epsilon", "delta", "sensitivity", "count", "note"):
        table.add_column(col, justify="right" if col in ("epsilon", "delta", "count") else "left")
    for row in ledger.rows():
        table.add_row(
            row["mechanism"], row["neighbours"], f"{row['epsilon']:.4g}", f"{row['delta']:.3g}",
            "-" if row["sensitivity"] is None else f"{row['sensitivity']:.4g}",
            str(row["count"]), row["note"],
        )
    return table


def composition_table(ledger: Ledger, delta: float, methods=("basic", "advanced", "optimal", "pld", "rdp")) -> Table:
    """Total epsilon of the ledger under each composition method, at a target delta."""
    table = Table(title=f"Total privacy cost (target delta = {delta:g})")
    table.add_column("composition")
    table.add_column("epsilon", justify="right")
    table.add_column("delta", justify="right")
    for method in methods:
        try:
            cost = ledger.total(method, delta=None if method == "basic" else delta)
            table.add_row(method, f"{cost.epsilon:.4f}", f"{cost.delta:.3g}")
        except ValueError as err:
            table.add_row(method, "n/a", str(err)[:60])
    return table


def print_ledger(ledger: Ledger, delta: float, console: Console | None = None) -> None:
    console = console or Console()
    console.print(ledger_table(ledger))
    console.print(composition_table(ledger, delta))
