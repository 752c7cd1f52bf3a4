"""Tables of a ledger: its charges, and (behind ``--compositions``) its total by each method.

The guarantee itself is the one line of :mod:`privgraph.cli.guarantee`; these tables are
labelled as what they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from privgraph.privacy import Ledger


def ledger_table(ledger: Ledger, title: str = "Privacy ledger (charges)") -> Table:
    """A rich table with one row per charge (the caveats go with the headline)."""
    table = Table(title=title)
    for col in ("mechanism", "neighbours", "epsilon", "delta", "sensitivity", "count", "note"):
        table.add_column(col, justify="right" if col in ("epsilon", "delta", "count") else "left")
    for row in ledger.rows():
        table.add_row(
            row["mechanism"], row["neighbours"], f"{row['epsilon']:.4g}", f"{row['delta']:.3g}",
            "-" if row["sensitivity"] is None else f"{row['sensitivity']:.4g}",
            str(row["count"]), row["note"],
        )
    return table


def composition_table(ledger: Ledger, delta: float, methods=None) -> Table:
    """The ledger's total under each accounting method at a target delta (``methods``: the
    accountants or their names; None: every one of
    :data:`~privgraph.privacy.composition.ACCOUNTANTS`, in its order): a comparison of methods
    (some give no finite total for some charges), not the guarantee. A ledger with a person
    unit is composed per row and converted per person, as its guarantee is."""
    from privgraph.privacy.composition import ACCOUNTANTS, as_accountant
    from privgraph.privacy.ledger import guarantee

    table = Table(title=f"Accounting methods compared (target delta = {delta:g}); not the guarantee, "
                        "which the 'privacy:' line states")
    table.add_column("composition")
    table.add_column("epsilon", justify="right")
    table.add_column("delta", justify="right")
    for accountant in map(as_accountant, ACCOUNTANTS.values() if methods is None else methods):
        reading = None if accountant.sums_deltas else delta  # basic composition reads no target
        try:
            cost = ledger.total(accountant, reading) if ledger.unit is None else guarantee(ledger, accountant, reading)
            table.add_row(accountant.name, f"{cost.epsilon:.4f}", f"{cost.delta:.3g}")
        except ValueError as err:
            table.add_row(accountant.name, "n/a", str(err)[:60])
    return table
