"""The one line every private command prints about privacy: the guarantee its estimator claims.

``privacy: (0.9998, 1e-06)-DP under add/remove, composed by rdp`` (with a person unit,
:mod:`privgraph.privacy.person`: ``privacy: (1, 1e-06)-DP for each person (at most 5 rows
each) under add/remove, composed by rdp``), then the caveats (what
the guarantee does not cover: a ``NOT PRIVATE`` line per ledger caveat, and seeded noise).
The numbers are the estimator's ledger composed by the estimator's own method, the one its
budget reserved under (:func:`privgraph.privacy.ledger.guarantee`), never another
accountant's. Above it the ledger's charges, in a table titled as charges; the comparison of
accounting methods (:func:`~privgraph.cli.ledger_table.composition_table`) only with
``--compositions``. Nothing here reads the data: only the released ledger and public flags.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from privgraph.privacy import Ledger, PrivacyCost

#: How the headline names each neighbouring relation.
RELATIONS = {"add_remove": "add/remove", "replace_one": "replace-one"}

#: The caveat of a run whose noise was seeded (printed with the headline).
SEEDED = "[yellow]seeded sampler: reproducible noise, NOT private (experiments only)[/]"

#: ``--compositions``, the same flag on every private command.
COMPOSITIONS = typer.Option(
    False, "--compositions",
    help="Also print the ledger composed by every accounting method (basic, advanced, optimal, pld, rdp): "
         "a comparison of methods, not the guarantee (which the 'privacy:' line states).")


def headline(cost: PrivacyCost, relation: str, scope: str = "", unit=None) -> str:
    """The guarantee in one line: ``(epsilon, delta)-DP under <relation>, composed by <method>``;
    with a person ``unit`` (:class:`~privgraph.privacy.person.PersonUnit`) it names the person.

    >>> from privgraph.privacy import PrivacyCost
    >>> headline(PrivacyCost(0.99981, 1e-6, "rdp"), "add_remove")
    'privacy: (0.9998, 1e-06)-DP under add/remove, composed by rdp'
    >>> headline(PrivacyCost(1.0, 0.0, "basic"), "replace_one", " for each pair")
    'privacy: (1, 0)-DP under replace-one, composed by basic for each pair'
    >>> from privgraph.privacy.person import PersonUnit
    >>> headline(PrivacyCost(0.99995, 9.9999e-7, "rdp"), "add_remove", unit=PersonUnit("pid", 5, "add_remove"))
    'privacy: (1, 1e-06)-DP for each person (at most 5 rows each) under add/remove, composed by rdp'
    """
    person = "" if unit is None else f" {unit.describe()}"
    return (f"privacy: ({cost.epsilon:.4g}, {cost.delta:.3g})-DP{person} under {RELATIONS[relation]}, "
            f"composed by {cost.method}{scope}")


def relation_of(ledger: Ledger, declared) -> str:
    """The relation the ledger's charges hold under (``declared`` when it has none); with a
    person unit, the person's relation (the charges are the rows', under add/remove).

    >>> from privgraph.privacy import Ledger
    >>> relation_of(Ledger(), "replace_one")
    'replace_one'
    """
    from privgraph.privacy import Neighbours

    if ledger.unit is not None:
        return ledger.unit.relation.value
    found = sorted(n.value for n in ledger.neighbours)
    return found[0] if len(found) == 1 else Neighbours.parse(declared).value


def caveat_lines(caveats: Iterable[str], seeded: bool) -> list[str]:
    """What the guarantee does not cover, one line each (markup for rich).

    >>> caveat_lines(["domain read from the data"], seeded=False)
    ['[bold red]NOT PRIVATE:[/] domain read from the data']
    """
    lines = [f"[bold red]NOT PRIVATE:[/] {c}" for c in dict.fromkeys(caveats)]
    return lines + ([SEEDED] if seeded else [])


def print_privacy(console: Console, ledger: Ledger, composition, delta: float | None, *, relation,
                  seeded: bool, compositions: bool = False, title: str = "Privacy ledger (charges)") -> None:
    """The charges, the comparison of methods when asked, then the headline and its caveats.

    ``composition`` and ``delta`` are the estimator's own (its ``composition_`` or its plan's
    accountant, and target delta); ``relation`` names the relation when the ledger has no charge.
    """
    from privgraph.cli.ledger_table import composition_table, ledger_table
    from privgraph.privacy.ledger import guarantee

    if ledger.charges:
        per_row = "" if ledger.unit is None else f" (per row: {ledger.unit.describe()}, converted once below)"
        console.print(ledger_table(ledger, title=title + per_row))
    if compositions:
        console.print(composition_table(ledger, delta or 1e-6))
    console.print(headline(guarantee(ledger, composition, delta), relation_of(ledger, relation), unit=ledger.unit))
    for line in caveat_lines(ledger.caveats, seeded):
        console.print(line)
