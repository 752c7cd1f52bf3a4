"""The CLI's options cannot drift from the estimators' parameters: every option named after a
parameter has that parameter's default (the drift the design review found: ``discover
--ci-test`` defaulted to ``kendall`` while ``PrivPC`` defaulted to ``auto``)."""

import inspect

import pytest
import typer

from privgraph.causal import PrivPC
from privgraph.causal.direction import PrivateANM
from privgraph.cli import app
from privgraph.mrf import PrivateMRF
from privgraph.release import PrivateRelease

COMMANDS = {"discover": PrivPC, "direction": PrivateANM, "fit-mrf": PrivateMRF, "release": PrivateRelease}


def shared_options(command: str):
    """(option name, CLI default, estimator default, required) of each option named after a parameter."""
    click_command = typer.main.get_command(app).commands[command]
    parameters = inspect.signature(COMMANDS[command].__init__).parameters
    return [(p.name, p.default, parameters[p.name].default, p.required)
            for p in click_command.params if p.name in parameters]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_shared_option_has_the_estimators_default(command):
    shared = shared_options(command)
    assert len(shared) >= 4, shared  # the comparison reads real options
    drifted = [(name, cli, est) for name, cli, est, required in shared if not required and cli != est]
    assert not drifted, f"{command}: options whose default is not the estimator's: {drifted}"


def test_a_drifted_default_is_seen(monkeypatch):
    """The check has teeth: an estimator default changed under the CLI shows as drift."""
    original = PrivPC.__init__
    signature = inspect.signature(original)
    changed = signature.replace(parameters=[p.replace(default="kendall") if p.name == "ci_test" else p
                                            for p in signature.parameters.values()])
    monkeypatch.setattr(PrivPC.__init__, "__signature__", changed, raising=False)
    assert ("ci_test", "auto", "kendall", False) in shared_options("discover")
