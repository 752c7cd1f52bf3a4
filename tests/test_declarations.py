"""Each estimator's declarations (privgraph.declarations, imported by the command line without
the estimator) name the same choices as the registries that implement them, and the same
defaults as the constructors' signatures."""

import inspect

import pytest

from privgraph import declarations
from privgraph.causal import PrivPC
from privgraph.causal.direction import PrivateANM
from privgraph.mrf import PrivateMRF
from privgraph.release import PrivateRelease


def registries():
    """(estimator, parameter, the names of the registry that implements its choices)."""
    from privgraph.causal.direction import scores
    from privgraph.causal.direction.estimator import PRIVACY_MODES
    from privgraph.causal.estimators import CI_TESTS, FISHER_Z, ORIENTS
    from privgraph.causal.methods import AUTO, METHODS
    from privgraph.causal.rank_pc import RANK
    from privgraph.data.frontdoor import INVALID_POLICIES
    from privgraph.mrf.estimator import METHODS as MRF_METHODS, TABLE_METHODS
    from privgraph.mrf.noisy_tables import NOISES
    from privgraph.release.stage import STRUCTURES
    from privgraph.stats.strata import CONVENTIONS

    return [(PrivPC, "ci_test", ("auto", *CI_TESTS, FISHER_Z, RANK)), (PrivPC, "method", (AUTO, *METHODS)),
            (PrivPC, "orient", ORIENTS), (PrivPC, "degenerate", CONVENTIONS),
            (PrivateRelease, "method", tuple(TABLE_METHODS)), (PrivateRelease, "structure", ("auto", *STRUCTURES)),
            (PrivateMRF, "method", MRF_METHODS), (PrivateMRF, "noise", NOISES), (PrivateMRF, "invalid", INVALID_POLICIES),
            (PrivateANM, "score", scores.SCORES), (PrivateANM, "privacy", PRIVACY_MODES)]


def test_every_declared_choice_list_is_its_registrys():
    checked = set()
    for cls, name, names in registries():
        assert cls.declared_params()[name].choices == tuple(names), (cls.__name__, name)
        checked.add((cls, name))
    with_choices = {(cls, p.name) for cls in (PrivPC, PrivateRelease, PrivateMRF, PrivateANM) for p in cls.PARAMS
                    if p.choices and p.name != "neighbours"}  # neighbours: privacy_params reads the enum itself
    assert with_choices == checked


@pytest.mark.parametrize("cls, params", [(PrivPC, declarations.PRIVPC), (PrivateRelease, declarations.RELEASE),
                                         (PrivateMRF, declarations.MRF), (PrivateANM, declarations.ANM)])
def test_every_declared_default_is_the_signatures(cls, params):
    assert cls.PARAMS is params
    signature = inspect.signature(cls.__init__).parameters
    drifted = [(p.name, p.default, signature[p.name].default) for p in params
               if p.default != signature[p.name].default or type(p.default) is not type(signature[p.name].default)]
    assert not drifted, drifted
