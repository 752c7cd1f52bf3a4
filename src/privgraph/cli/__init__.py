"""The ``privgraph`` command line: one sub-command per module in this package.

Each command lives in its own module, of the same name as its function, listed in
:data:`COMMANDS`; the module is imported, and the command built (its estimator's options read
from the estimator's declarations, :mod:`privgraph.cli.params`), only when the command runs or
shows its help. ``privgraph --help`` reads the commands' docstrings from their source, so it
imports neither a command module nor rich nor the numerical stack.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import typer
from typer.core import TyperCommand, TyperGroup
from typer.main import get_command_from_info
from typer.models import CommandInfo

from privgraph.cli.params import build

#: The commands by name, in the order ``privgraph --help`` lists them: the module of this
#: package that holds each, and its function of the same name.
COMMANDS = {"demo": "demo", "audit": "audit", "direction": "direction", "discover": "discover",
            "fit-mrf": "fit_mrf", "sample": "sample", "domain": "domain", "release": "release", "plan": "plan"}


def command_function(name: str):
    """The function of the command ``name`` (its module imported now)."""
    module = COMMANDS[name]
    return getattr(importlib.import_module(f"privgraph.cli.{module}"), module)


def command_doc(name: str) -> str:
    """The docstring of the command ``name``, read from its module's source (nothing imported).

    >>> command_doc("discover")
    'Learn a causal graph (CPDAG) under a total privacy budget.'
    """
    module = COMMANDS[name]
    tree = ast.parse(Path(__file__).with_name(f"{module}.py").read_text())
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == module)
    return ast.get_docstring(function) or ""


class Commands(TyperGroup):
    """The group of :data:`COMMANDS`, each built on first use; the list in ``--help`` reads only
    their docstrings."""

    def list_commands(self, ctx) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx, cmd_name: str):
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            self.commands[cmd_name] = get_command_from_info(
                CommandInfo(name=cmd_name, callback=build(command_function(cmd_name))),
                pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx, formatter) -> None:
        limit = formatter.width - 6 - max(map(len, COMMANDS))
        rows = [(name, TyperCommand(name, help=command_doc(name)).get_short_help_str(limit)) for name in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    name="privgraph",
    help="Causal and graphical models from sensitive data, under differential privacy.",
    cls=Commands,
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
    from privgraph.validation import InvalidInput

    if isinstance(err, (InvalidInput, *FILE_ERRORS)):
        return True
    from privgraph.privacy.budget import BudgetExceeded  # not before: a missing file imports no numpy

    return isinstance(err, BudgetExceeded)
