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
from privgraph.cli import sample
from privgraph.cli import release
from privgraph.cli import plan

app = typer.Typer(
    name="privgraph",
    help="Causal and graphical models from sensitive data, under differential privacy.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain (click) help and usage errors: typer's rich formatter imports rich's markdown,
    # syntax and traceback renderers, about 60 ms of a fresh `privgraph --help` (0.25 s median
    # against 0.18 s plain, `python3 benchmarks/bench_cli.py`). Commands still print with rich.
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from privgraph import __version__

        typer.echo(f"privgraph {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """privgraph: private causal discovery, causal direction and graphical models."""
    import warnings

    # every command prints its own notice for --seed; the estimators' UserWarning would repeat it
    warnings.filterwarnings("ignore", message="random_state seeds the noise")


app.command("demo")(demo.demo)
app.command("audit")(audit.audit)
app.command("direction")(direction.direction)
app.command("discover")(discover.discover)
app.command("fit-mrf")(fit_mrf.fit_mrf)
app.command("sample")(sample.sample)
app.command("domain")(domain.domain)
app.command("release")(release.release)
app.command("plan")(plan.plan)


def main() -> None:
    """Entry point of the ``privgraph`` script and of ``python -m privgraph``.

    Bad input is reported in one line on stderr with exit status 2, not as a traceback:
    :class:`~privgraph.validation.InvalidInput` (what privgraph's checks raise, each naming
    the input and what was expected), the budget's refusal
    (:class:`~privgraph.privacy.BudgetExceeded`), and a file or directory that is missing,
    is a directory where a file is expected, or may not be written. Any other exception (a
    ValueError or KeyError raised inside numpy, pandas, DuckDB, ... included) is a bug of
    privgraph's and keeps its traceback.
    """
    try:
        app()
    except Exception as err:  # noqa: BLE001 -- sorted below; anything else keeps its traceback
        if not is_bad_input(err):
            raise
        typer.echo(f"privgraph: error: {err}", err=True)
        raise SystemExit(2) from None


#: The operating system's refusals of a path the user named: bad input whoever raised them.
FILE_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)


def is_bad_input(err: BaseException) -> bool:
    """Whether ``err`` is the user's mistake (shown in one line) rather than a bug.

    >>> from privgraph.validation import InvalidInput
    >>> is_bad_input(InvalidInput("--cap must be an integer >= 1, got 0")), is_bad_input(ValueError("broadcast"))
    (True, False)
    """
    from privgraph.privacy.budget import BudgetExceeded  # only once something was raised: not for --help
    from privgraph.validation import InvalidInput

    return isinstance(err, (InvalidInput, BudgetExceeded, *FILE_ERRORS))
