"""Options read from an estimator's parameter declarations, so that they cannot drift from it.

A command names its estimator's declarations once, ``PRIVPC =
EstimatorOptions(declarations.PRIVPC)`` (:mod:`privgraph.declarations`, the tuple that is also
``PrivPC.PARAMS``), and writes each option that is one of the estimator's parameters as
``ci_test: str = PRIVPC.option()``: the command's parameter is named after the estimator's (the
flag is ``--ci-test``), its default, its help and its metavar (the choices,
``[auto|kendall|...]``) are the declaration's (:class:`~privgraph.estimator.Param`). Options of
the command line alone (paths, ``--seed``, ``--format``, ...) stay written out.

The placeholders become typer options when the command is built (:func:`build`, called by the
command group on first use). The declarations import no numerical stack, so neither a
command's ``--help`` nor the checks below import the estimator: the command's body imports it
after its own checks of the input paths. The built command checks each such option by its
declaration, naming the flag (``--alpha must lie in (0, 1), got 0.0``), and any
``--epsilon``/``--delta`` against what the accountants compose
(:func:`~privgraph.cli.options.check_budget`, with its warning above epsilon 10), before the
command's body runs.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass

import typer


def flag(name: str) -> str:
    """The flag of a parameter: ``--`` and its name with dashes.

    >>> flag("orient_share")
    '--orient-share'
    """
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class EstimatorOptions:
    """The declarations of an estimator's parameters (a tuple of :mod:`privgraph.declarations`)
    that a command's options are read from."""

    params: tuple

    def option(self, *, required: bool = False) -> "EstimatorOption":
        """A placeholder default for the command parameter of the same name; ``required``: the
        command line asks for a value where the estimator has a default (``--epsilon``)."""
        return EstimatorOption(self, required)

    def declarations(self) -> dict:
        """The declarations by parameter name (the estimator's
        :meth:`~privgraph.estimator.PrivateEstimator.declared_params`)."""
        return {param.name: param for param in self.params}


@dataclass(frozen=True)
class EstimatorOption:
    """A command parameter's placeholder default: the option of the estimator's parameter of the
    same name (:func:`build` makes it a typer option)."""

    estimator: EstimatorOptions
    required: bool = False


def typer_option(param, required: bool = False):
    """The typer option of a declaration: its default (or none when ``required``), its help, and
    its choices as the metavar.

    >>> from privgraph.estimator import Param
    >>> option = typer_option(Param("noise", "Noise.", choices=("laplace", "gaussian"), default="laplace"))
    >>> option.default, option.help, option.metavar
    ('laplace', 'Noise.', '[laplace|gaussian]')
    """
    metavar = f"[{'|'.join(param.choices)}]" if param.choices else None
    return typer.Option(... if required else param.default, help=param.help, metavar=metavar)


def build(command):
    """``command`` (a function left untouched) as typer reads it: a wrapper whose signature has
    each :class:`EstimatorOption` replaced by its typer option, and which checks those options
    by their declarations (a value of None, not given, is not checked) before calling it.

    >>> from privgraph import declarations
    >>> PRIVPC = EstimatorOptions(declarations.PRIVPC)
    >>> def command(alpha: float = PRIVPC.option(), seed: int = 0):
    ...     return alpha
    >>> inspect.signature(build(command)).parameters["alpha"].default.default
    0.05
    >>> build(command)(alpha=0.0, seed=0)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --alpha must lie in (0, 1), got 0.0
    """
    signature = inspect.signature(command)
    declared, parameters = {}, []
    for parameter in signature.parameters.values():
        if isinstance(parameter.default, EstimatorOption):
            declared[parameter.name] = parameter.default.estimator.declarations()[parameter.name]
            parameter = parameter.replace(default=typer_option(declared[parameter.name], parameter.default.required))
        parameters.append(parameter)

    @functools.wraps(command)
    def checked(**values):
        for name, param in declared.items():
            if values[name] is not None:
                param.check(values[name], flag(name))
        from privgraph.cli.options import check_budget  # a cycle at import: options imports flag from here

        check_budget(values.get("epsilon"), values.get("delta"))
        return command(**values)

    checked.__signature__ = signature.replace(parameters=parameters)
    return checked
