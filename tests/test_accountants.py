"""Each plan owns its accountant (issue 48, item 4).

Every registered variant (PC's skeleton methods, the release's structures, direction's privacy
modes and scores, the MRF's fits) names an accountant object of
:data:`privgraph.privacy.composition.ACCOUNTANTS` and its plans carry it; an accountant
totals a plan's ledger exactly as the string path did (pinned at full precision from the
head before the change); no composition name is written as a string outside
``privacy/composition.py`` but for the allow-list below.
"""

from __future__ import annotations

import ast
import math
import warnings
from pathlib import Path

import pytest

from privgraph.causal.direction.estimator import PrivateANM
from privgraph.causal.direction.modes import MODES
from privgraph.causal.direction.scores import SCORES
from privgraph.causal.estimators import PrivPC
from privgraph.causal.methods import METHODS as PC_METHODS
from privgraph.data import Domain
from privgraph.datasets import load_network
from privgraph.mrf.estimator import PrivateMRF
from privgraph.mrf.fits import FITS
from privgraph.privacy import Budget, Charge, Ledger, Neighbours, PrivacyPlan
from privgraph.privacy.composition import ACCOUNTANTS, BASIC, OPTIMAL, RDP, Accountant, as_accountant
from privgraph.privacy.ledger import guarantee
from privgraph.release.estimator import PrivateRelease
from privgraph.release.stage import STRUCTURES
from privgraph.validation import InvalidInput

SRC = Path(__file__).resolve().parents[1] / "src" / "privgraph"
ASIA = load_network("asia").domain
PAIR = Domain.of(a=2, b=3)

#: (module under src/privgraph, name) -> why a composition name stays a string literal there.
#: Empty: every printed name is an accountant's ``name``; the command line's
#: ``--compositions`` table lists :data:`ACCOUNTANTS` itself.
ALLOWED: dict[tuple[str, str], str] = {}


def _is_registered(accountant) -> bool:
    return isinstance(accountant, Accountant) and ACCOUNTANTS.get(accountant.name) is accountant


def _quiet(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make()


# -- every registered variant names a registered accountant, and its plans carry it ------------


@pytest.mark.parametrize("name", sorted(PC_METHODS))  # sg-pc's plan (10 s) is in the slow run (conftest)
def test_every_pc_method_names_its_accountant_and_its_plan_carries_it(name):
    method = PC_METHODS[name]
    for delta in (0.0, 1e-6):
        assert _is_registered(method.accountant(delta))
    assert all(_is_registered(m.accountant(d)) for m in PC_METHODS.values() for d in (0.0, 1e-6))  # sg-pc's too
    try:
        plan = PrivPC(epsilon=4.0, delta=1e-6, method=name).privacy_plan(ASIA, 100_000)
    except InvalidInput:  # a method with no plan ahead on this domain: its choice is still checked above
        return
    assert _is_registered(plan.accountant) and plan.accountant == method.accountant(1e-6)


@pytest.mark.parametrize("name", list(STRUCTURES))
def test_every_release_structure_names_its_accountant_and_its_plan_carries_it(name):
    release = PrivateRelease(epsilon=2.0, delta=1e-6, structure=name)
    plan = release.privacy_plan(ASIA, 5000)
    prediction = release.release_plan(ASIA, 5000)
    assert _is_registered(plan.accountant)
    assert plan.accountant is STRUCTURES[prediction.structure].accountant(release, prediction)


@pytest.mark.parametrize("name", list(FITS))
def test_every_mrf_fit_names_its_accountant_and_its_plan_carries_it(name):
    assert _is_registered(FITS[name].accountant)
    plan = PrivateMRF(epsilon=1.0, delta=1e-6, cliques="a,b", method=name).privacy_plan(PAIR, 1000)
    assert plan.accountant is FITS[name].accountant


@pytest.mark.parametrize("privacy", list(MODES))
def test_every_direction_mode_names_its_accountant_and_every_score_plan_carries_it(privacy):
    assert _is_registered(MODES[privacy].accountant)
    planned = 0
    for score in SCORES:
        try:
            plan = PrivateANM(epsilon=1.0, delta=1e-6, score=score, privacy=privacy,
                              bounds=((-2.0, 2.0), (-10.0, 10.0))).privacy_plan(None, 2000)
        except InvalidInput:  # a score with no form under this mode
            continue
        planned += 1
        assert plan.accountant is MODES[privacy].accountant
    assert planned > 0


# -- an accountant totals a ledger exactly as the string path did -------------------------------

#: (plan, its composition name, epsilon at the plan's delta, (epsilon, delta) at delta 1e-5), as
#: the head before the change computed them (``plan.composition``, ``plan.epsilon()``,
#: ``guarantee(plan.ledger, plan.composition, 1e-5)``).
PINNED = {
    "priv-pc": ("optimal", 0.9999999998886815, (0.8793631419676485, 1e-05)),
    "priv-pc pure": ("basic", 1.9999999999708962, (1.9999999999708962, 0.0)),
    "gauss-pc": ("rdp", 0.9999999994636376, (0.8840991748731367, 1e-05)),
    "priv-pc add/remove": ("optimal", 0.9940074328616808, (0.8700571356337143, 1e-05)),
    "release tree": ("rdp", 1.9999990139693877, (1.7850687066080908, 1e-05)),
    "release tree pure": ("basic", 1.999999, (1.999999, 0.0)),
    "release priv-pc": ("optimal", 1.9423820196008896, (1.8574679298446564, 1e-05)),
    "release gauss-pc add/remove": ("rdp", 1.9996106885639513, (1.7847688224470986, 1e-05)),
    "mrf psgd": ("rdp", 0.9775781807370204, (0.8608868677092671, 1e-05)),
    "mrf cgm-em": ("basic", 1.0, (1.0, 0.0)),
    "direction": ("basic", 1.0, (1.0, 0.0)),
}

PLANS = {
    "priv-pc": lambda: PrivPC(epsilon=1.0, delta=1e-6).privacy_plan(ASIA, 100_000),
    "priv-pc pure": lambda: PrivPC(epsilon=2.0, delta=0.0).privacy_plan(ASIA, 100_000),
    "gauss-pc": lambda: PrivPC(epsilon=1.0, delta=1e-6, method="gauss-pc").privacy_plan(ASIA, 100_000),
    "priv-pc add/remove": lambda: PrivPC(epsilon=1.0, delta=1e-6, neighbours="add_remove").privacy_plan(ASIA, 100_000),
    "release tree": lambda: PrivateRelease(epsilon=2.0, delta=1e-6, structure="tree").privacy_plan(ASIA, 5000),
    "release tree pure": lambda: PrivateRelease(epsilon=2.0, delta=0.0, structure="tree").privacy_plan(ASIA, 5000),
    "release priv-pc": lambda: PrivateRelease(epsilon=2.0, delta=1e-6, structure="priv-pc").privacy_plan(ASIA, 5000),
    "release gauss-pc add/remove": lambda: PrivateRelease(epsilon=2.0, delta=1e-6, structure="gauss-pc",
                                                          neighbours="add_remove").privacy_plan(ASIA, 5000),
    "mrf psgd": lambda: PrivateMRF(epsilon=1.0, delta=1e-6, cliques="a,b", method="psgd").privacy_plan(PAIR, 1000),
    "mrf cgm-em": lambda: PrivateMRF(epsilon=1.0, delta=1e-6, cliques="a,b").privacy_plan(PAIR, 1000),
    "direction": lambda: PrivateANM(epsilon=1.0, delta=1e-6).privacy_plan(None, 2000),
}


@pytest.mark.parametrize("case", list(PINNED))
def test_a_plans_accountant_totals_its_ledger_as_the_string_path_did(case):
    name, epsilon, at_1e5 = PINNED[case]
    plan = _quiet(PLANS[case])
    assert plan.accountant is ACCOUNTANTS[name] and plan.composition == name
    assert plan.epsilon() == epsilon  # exactly: the same float as before the change
    assert tuple(plan.accountant.total(plan.ledger, 1e-5)) == at_1e5
    assert tuple(guarantee(plan.ledger, name, 1e-5)) == at_1e5  # the name still reads the same
    budget = Budget(epsilon + 1e-9, plan.delta, composition=plan.accountant)
    plan.check(budget)  # the plan's accountant pays its own plan; a budget below it refuses
    with pytest.raises(Exception, match="budget exceeded"):
        plan.check(Budget(epsilon * (1 - 1e-6), plan.delta, composition=name))


def test_a_name_and_its_accountant_are_the_same_composition():
    charge = Charge("laplace", 0.1, 0.0, Neighbours.REPLACE_ONE).times(100)
    ledger = Ledger.of(charge)
    for name, accountant in ACCOUNTANTS.items():
        assert as_accountant(name) is accountant and as_accountant(accountant) is accountant
        delta = None if accountant.sums_deltas else 1e-6
        assert ledger.total(name, delta) == ledger.total(accountant, delta)
    plan = PrivacyPlan.of_ledger(ledger, Neighbours.REPLACE_ONE, "optimal", 1e-6)
    assert plan.accountant is OPTIMAL and plan == PrivacyPlan.of_ledger(ledger, Neighbours.REPLACE_ONE, OPTIMAL, 1e-6)
    assert Budget(1.0, 1e-6, composition="rdp").accountant is RDP and Budget(1.0).accountant is BASIC
    assert math.isclose(OPTIMAL.total(ledger, 1e-6).epsilon, 4.775, abs_tol=5e-4)
    assert OPTIMAL.total(ledger, 0.0).epsilon == BASIC.total(ledger, None).epsilon == pytest.approx(10.0)
    with pytest.raises(InvalidInput, match="composition 'rdp' needs delta > 0"):
        Budget(1.0, 0.0, composition=RDP)
    with pytest.raises(InvalidInput, match="composition must be one of"):
        Budget(1.0, 1e-6, composition="exact")


# -- no composition name written as a string outside privacy/composition.py --------------------


def _name_literals():
    """(module, name, line) of every string constant equal to a composition name."""
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        if module == "privacy/composition.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ACCOUNTANTS:
                yield module, node.value, node.lineno


def test_no_composition_name_is_a_string_outside_the_registry():
    found = list(_name_literals())
    stray = [f"{module}:{line}: {name!r}" for module, name, line in found if (module, name) not in ALLOWED]
    assert not stray, "composition chosen by a string (name an accountant of privacy.composition):\n" + \
        "\n".join(stray)
    stale = set(ALLOWED) - {(module, name) for module, name, _ in found}
    assert not stale, f"allow-list entries with no literal left: {sorted(stale)}"
