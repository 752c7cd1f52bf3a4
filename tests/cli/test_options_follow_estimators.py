"""The CLI's options cannot drift from the estimators' parameters: every option named after a
parameter has that parameter's default (the drift the design review found: ``discover
--ci-test`` defaulted to ``kendall`` while ``PrivPC`` defaulted to ``auto``)."""

import inspect

import pytest
import typer

from privgraph.causal import PrivPC
from privgraph.causal.direction import PrivateANM
from typer.testing import CliRunner

from privgraph.cli import app, command_function
from privgraph.cli.params import EstimatorOption, flag
from privgraph.mrf import PrivateMRF
from privgraph.release import PrivateRelease

COMMANDS = {"discover": PrivPC, "direction": PrivateANM, "fit-mrf": PrivateMRF, "release": PrivateRelease}


def shared_options(command: str):
    """(option name, CLI default, estimator default, required) of each option named after a parameter."""
    click_command = typer.main.get_command(app).get_command(None, command)
    parameters = inspect.signature(COMMANDS[command].__init__).parameters
    return [(p.name, p.default, parameters[p.name].default, p.required)
            for p in click_command.params if p.name in parameters]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_shared_option_has_the_estimators_default(command):
    shared = shared_options(command)
    assert len(shared) >= 4, shared  # the comparison reads real options
    drifted = [(name, cli, est) for name, cli, est, required in shared if not required and cli != est]
    assert not drifted, f"{command}: options whose default is not the estimator's: {drifted}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_options_hold_the_very_declarations_the_estimator_does(command):
    """No copy to drift (the review's drift: ``discover --ci-test`` defaulted to ``kendall``
    while ``PrivPC`` defaulted to ``auto``): each placeholder holds the tuple that is the
    estimator's ``PARAMS`` (privgraph.declarations), whose defaults tests/test_declarations.py
    holds equal to the signature's; the command line reads it without importing the estimator."""
    placeholders = [p.default for p in inspect.signature(command_function(command)).parameters.values()
                    if isinstance(p.default, EstimatorOption)]
    assert placeholders and all(p.estimator.params is COMMANDS[command].PARAMS for p in placeholders)


@pytest.mark.parametrize("command", sorted(COMMANDS) + ["plan"])
def test_every_option_named_after_a_parameter_is_read_from_its_declaration(command):
    """No hand-written copy: each such parameter of the command's function has the placeholder
    default, and its option carries the declaration's help and choices."""
    estimator = COMMANDS.get(command, PrivateRelease)
    function = command_function(command)
    declared = estimator.declared_params()
    shared = [p for p in inspect.signature(function).parameters.values() if p.name in declared]
    assert shared and all(isinstance(p.default, EstimatorOption) for p in shared), \
        [p.name for p in shared if not isinstance(p.default, EstimatorOption)]
    options = {p.name: p for p in typer.main.get_command(app).get_command(None, command).params}
    for p in shared:
        option, param = options[p.name], declared[p.name]
        assert option.help == param.help and option.opts == [flag(p.name)]
        assert option.metavar == (f"[{'|'.join(param.choices)}]" if param.choices else None)


def test_a_declared_choice_is_checked_with_the_flag_named():
    result = CliRunner().invoke(app, ["discover", "--network", "asia", "--degenerate", "skip"])
    assert result.exit_code != 0
    assert str(result.exception) == "--degenerate must be one of ('dependent', 'independent'), got 'skip'"
