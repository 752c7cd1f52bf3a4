"""Checks once (issue 48): every declared parameter is checked by its declaration alone, before
``fit`` and ``privacy_plan`` read anything (:meth:`PrivateEstimator.check_params`).

* The sources: no module but the declarations passes an estimator's declared parameter (or,
  in the command line, the option of the same name) to a check; the few that must are listed
  in :data:`ALLOWED` with their reasons.
* The behaviour: each estimator's ``fit`` and ``privacy_plan`` refuse a bad value of every
  declared parameter with its declaration's message, before the data is touched; a fit checks
  each estimator object once (the add/remove form's inner fit is another object).
"""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import privgraph
from privgraph import declarations
from privgraph.causal import PrivPC
from privgraph.causal.direction import PrivateANM
from privgraph.datasets import load_network, sample_frame
from privgraph.estimator import PrivateEstimator
from privgraph.mrf import PrivateMRF
from privgraph.release import PrivateRelease
from privgraph.validation import InvalidInput

SRC = Path(privgraph.__file__).parent
ESTIMATORS = (PrivPC, PrivateANM, PrivateMRF, PrivateRelease)
#: The declared parameters that have a check (a kind or choices), by name.
CHECKED = {p.name for cls in ESTIMATORS for p in cls.PARAMS if p.kind is not None or p.choices}
#: A call that checks its argument: the validation kinds and every ``check_*`` function.
CHECK_CALL = re.compile(r"^(check_\w+|one_of|positive_int|positive_count|positive_number|positive_finite|count|"
                        r"count_or_auto|in_range|function_or_none)$")
#: The modules that hold the checks themselves: the kinds, the declarations, the base class
#: that runs them, and the command line's builder that runs them on the options.
CHECKERS = {"validation.py", "declarations.py", "estimator.py", "cli/params.py"}
#: Names an estimator is read through outside its own methods (a stage given the release).
ESTIMATOR_NAMES = {"self", "release", "estimator", "est", "rel"}

#: (module, called function, parameter): the checks that stay, each with its reason.
ALLOWED = {
    ("release/estimator.py", "check_tree_cap", "tree_cap"):
        "the cap against the public codebook's one-way cells (needs the domain, which check_params has not): "
        "fit's before its count, privacy_plan's in _predict",
    ("mrf/estimator.py", "check_invalid", "invalid"):
        "the missing-value policy's rule with the relation (drop changes n, public under replace-one)",
    ("cli/direction.py", "check_unit", "max_rows_per_person"):
        "the person unit's rule with the codebook: --max-rows-per-person without a codebook naming the person",
    ("cli/plan.py", "check_unit", "max_rows_per_person"):
        "the person unit of the plan, made from the codebook's person column (its rule with the codebook)",
    ("causal/direction/estimator.py", "check_bounds", "privacy"):
        "the bounds' rule with the privacy mode (train+test needs public bounds), before the pair is read",
    ("cli/direction.py", "check_unit", "neighbours"): "the person unit is made under the relation (as above)",
    ("cli/plan.py", "check_unit", "neighbours"): "the person unit is made under the relation (as above)",
    ("cli/demo.py", "check_options", "epsilon"): "demo's own budget (an option of demo alone, by its KINDS)",
    ("cli/demo.py", "check_options", "delta"): "demo's own budget (an option of demo alone, by its KINDS)",
    ("cli/audit.py", "check_options", "alpha"): "the audit's own test level (an option of audit alone, by its KINDS)",
}


def _func_name(call: ast.Call) -> str:
    return call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")


def _estimator_classes(tree) -> set:
    """The classes of a module that are estimators (their methods' ``self`` is one)."""
    names = {"PrivateEstimator", *(cls.__name__ for cls in ESTIMATORS)}
    return {node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(getattr(b, "id", getattr(b, "attr", None)) in names for b in node.bases)}


def _checked_arguments(call: ast.Call, module: str, self_is_estimator: bool):
    """The declared parameters ``call`` passes to a check: ``self.<p>`` (in an estimator's
    method), ``release.<p>`` and the like, or in the command line an option named ``<p>``."""
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.attr in CHECKED:
            if arg.value.id in ESTIMATOR_NAMES - {"self"} or (arg.value.id == "self" and self_is_estimator):
                yield arg.attr
        elif module.startswith("cli/") and isinstance(arg, ast.Name) and arg.id in CHECKED:
            yield arg.id


def checks_of_declared_parameters() -> dict:
    """{(module, function called, parameter): line} of every check of a declared parameter
    outside the checkers and the estimators' ``_check_rules``."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        if module in CHECKERS:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        estimator_methods = {id(f) for cls in _estimator_classes(tree) for f in cls.body
                             if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            if function.name == "_check_rules":  # the one hook for rules across parameters
                continue
            for call in [n for n in ast.walk(function) if isinstance(n, ast.Call)]:
                if CHECK_CALL.match(_func_name(call)):
                    for param in _checked_arguments(call, module, id(function) in estimator_methods):
                        found.setdefault((module, _func_name(call), param), call.lineno)
    return found


def test_no_declared_parameter_is_checked_outside_its_declaration():
    found = checks_of_declared_parameters()
    extra = {key: line for key, line in found.items() if key not in ALLOWED}
    assert not extra, f"checked again outside the declarations (module, check, parameter): line {extra}"


def test_every_allowed_check_is_still_there():
    """An allowance whose check is gone is removed from the list (it cannot hide a new one)."""
    assert set(ALLOWED) <= set(checks_of_declared_parameters())


def test_the_scan_finds_a_re_check():
    """The scan is not blind: a hand-written re-check in an estimator's method, in a stage given
    the release, and in a command's body, is found."""
    source = ("class PrivPC(PrivateEstimator):\n    def fit(self, X):\n        check_epsilon(self.epsilon)\n"
              "def run(release):\n    one_of('structure', release.structure, ('tree',))\n")
    tree = ast.parse(source)
    methods = {id(f) for cls in _estimator_classes(tree) for f in cls.body}
    calls = [(f, c) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for c in ast.walk(f)
             if isinstance(c, ast.Call)]
    assert sorted(p for f, c in calls for p in _checked_arguments(c, "x.py", id(f) in methods)) == ["epsilon",
                                                                                                    "structure"]
    cli = ast.parse("check_settings(score, privacy, epsilon, delta)").body[0].value
    assert list(_checked_arguments(cli, "cli/direction.py", False)) == ["score", "privacy", "epsilon", "delta"]


def test_every_declared_parameter_but_the_structured_ones_has_a_check():
    """A kind or choices on every declaration, except those whose value is a structure read
    against the data's columns or a function's own input (checked where it is parsed, once)."""
    structured = {"random_state", "forbidden", "required", "cliques", "individual", "ties", "null", "options",
                  "bounds"}
    unchecked = {(cls.__name__, p.name) for cls in ESTIMATORS for p in cls.PARAMS
                 if p.kind is None and not p.choices and p.name not in structured}
    assert not unchecked


def bad_value(param):
    """A value ``param``'s declaration refuses (not its default), and its message."""
    for value in (0, -1, 2.5, "bogus"):
        try:
            param.check(value)
        except InvalidInput as refused:
            return value, str(refused)
    raise AssertionError(f"no bad value found for {param.name}")


class Untouchable:
    """Data that fails the test if anything reads it."""

    def __getattr__(self, name):
        raise AssertionError(f"the data was read ({name}) before the parameters were checked")

    def __len__(self):
        raise AssertionError("the data was read (len) before the parameters were checked")


def cases():
    for cls in ESTIMATORS:
        for param in cls.PARAMS:
            if param.kind is not None or param.choices:
                yield pytest.param(cls, param, id=f"{cls.__name__}-{param.name}")


@pytest.mark.parametrize("cls,param", list(cases()))
def test_fit_and_plan_refuse_a_bad_value_by_its_declaration(cls, param):
    value, message = bad_value(param)
    est = cls(**{param.name: value})
    data = (Untouchable(), Untouchable()) if cls is PrivateANM else (Untouchable(),)
    with pytest.raises(InvalidInput) as refused:
        est.fit(*data, domain=Untouchable())
    assert str(refused.value) == message
    with pytest.raises(InvalidInput) as refused:
        est.privacy_plan(Untouchable(), 1000)
    assert str(refused.value) == message


def test_the_declarations_message_is_the_command_lines_with_the_flag():
    """The same check on the command line: the message names the flag instead."""
    param = PrivPC.declared_params()["ci_test"]
    assert str(pytest.raises(InvalidInput, param.check, "pearson", "--ci-test").value) == (
        "--ci-test must be 'auto' or one of ['chi-square', 'chisq', 'fisher-z', 'g', 'g-test', 'kendall', "
        "'kendall-ties', 'rank', 'spearman'], got 'pearson'")


def test_a_fit_checks_each_estimator_once(monkeypatch):
    """Nested calls (the fit's own plan and predictions, the add/remove form's inner fit on a
    clone) check each estimator object once."""
    calls = []
    check = PrivateEstimator.check_params
    monkeypatch.setattr(PrivateEstimator, "check_params", lambda self: calls.append(id(self)) or check(self))
    asia = load_network("asia")
    X = sample_frame(asia, 20_000, np.random.default_rng(0))
    for neighbours in ("replace_one", "add_remove"):
        est = PrivPC(epsilon=50.0, method="gauss-pc", neighbours=neighbours, random_state=0)
        calls.clear()
        with pytest.warns(UserWarning):
            est.fit(X, domain=asia.domain)
        assert calls[0] == id(est) and len(calls) == len(set(calls)), calls


def test_sampling_choices_are_the_samplers():
    from privgraph.cli.options import SAMPLING
    from privgraph.mrf.sampling import SAMPLE_METHODS

    assert SAMPLING == tuple(SAMPLE_METHODS)


def test_ci_test_choices_are_the_registrys():
    from privgraph.causal.estimators import CI_TESTS, FISHER_Z
    from privgraph.causal.rank_pc import RANK

    assert set(declarations.CI_TEST_CHOICES) == {"auto", *CI_TESTS, FISHER_Z, RANK}
