"""The ``privgraph`` command line: one sub-command per module in this package.

The only module that imports everything; each command lives in its own module and is
registered below.
"""

from __future__ import annotations

import typer

from privgraph.cli import demo
from privgraph.cli import audit
from privgraph.cli import direction
from privgraph.cli import discover
from privgraph.cli import fit_mrf
from privgraph.cli import domain

app = typer.Typer(
    name="privgraph",
    help="Causal and graphical models from sensitive data, under differential privacy.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """privgraph: private causal discovery, causal direction and graphical models."""


app.command("demo")(demo.demo)
app.command("audit")(audit.audit)
app.command("direction")(direction.direction)
app.command("discover")(discover.discover)
app.command("fit-mrf")(fit_mrf.fit_mrf)
app.command("domain")(domain.domain)


def main() -> None:
    """Entry point of the ``privgraph`` script and of ``python -m privgraph``.

    Bad input (ValueError, KeyError, BudgetExceeded, and a file or directory that is
    missing, is a directory where a file is expected, or may not be written) is reported in
    one line on stderr with exit status 2, not as a traceback.
    """
    from privgraph.privacy import BudgetExceeded

    bad_input = (ValueError, KeyError, BudgetExceeded, FileNotFoundError, IsADirectoryError,
                 NotADirectoryError, PermissionError)
    try:
        app()
    except bad_input as err:
        typer.echo(f"privgraph: error: {err}", err=True)
        raise SystemExit(2) from None
