"""Causal direction: is it X -> Y or Y -> X? The private additive-noise-model test, in one room.

* :mod:`~privgraph.causal.direction.data`: the public checks, the split, the common scale.
* :mod:`~privgraph.causal.direction.regression`: random-Fourier-feature ridge and its stability.
* :mod:`~privgraph.causal.direction.noisy_table`: the training part released as a noisy table
  (``privacy="record"``, every record protected) and the regressions fitted from it.
* :mod:`~privgraph.causal.direction.scores`: the dependence scores, the regression-error
  score RECI (the default), their sensitivities and releases: one registered class each
  (:data:`SCORES`; a new score is a class and a registry line).
* :mod:`~privgraph.causal.direction.modes`: the privacy modes (record, test, train+test), one
  registered class each (:data:`MODES`): their refusals, fits and charges.
* :mod:`~privgraph.causal.direction.estimator`: :func:`private_direction` and :class:`PrivateANM`.
* :mod:`~privgraph.causal.direction.orient`: orienting a released CPDAG's undirected edges.
* :mod:`~privgraph.causal.direction.reference`: the NON-private baseline, ANM-pHSIC of Mooij et al. 2016.
"""

from privgraph.causal.direction.data import fit_both_directions, validate_pair
from privgraph.causal.direction.estimator import (
    ABSTAIN_BELOW,
    DEFAULT_PRIVACY,
    DEFAULT_RIDGE,
    DIRECTIONS,
    PRIVACY_MODES,
    SMALL_PAIR_ROWS,
    DirectionResult,
    PrivateANM,
    check_bounds,
    check_settings,
    decide,
    laplace_sensitivity,
    pair_on_public_domain,
    private_direction,
    raw_scores,
    small_pair,
)
from privgraph.causal.direction.modes import MODES, TEST_ONLY_CAVEAT
from privgraph.causal.direction.scores import (
    DEFAULT_SCORE,
    SCORES,
    release_iqr_scores,
    release_laplace_scores,
    release_reci_scores,
)
from privgraph.causal.direction.reference import MAX_REFERENCE_ROWS, ReferenceDecision, anm_reference, reference_rows

__all__ = [
    "ABSTAIN_BELOW", "DEFAULT_SCORE", "MODES", "SCORES", "release_reci_scores", "DEFAULT_PRIVACY", "DEFAULT_RIDGE", "DIRECTIONS", "MAX_REFERENCE_ROWS", "ReferenceDecision", "anm_reference",
    "reference_rows", "PRIVACY_MODES", "SMALL_PAIR_ROWS", "small_pair", "TEST_ONLY_CAVEAT", "DirectionResult",
    "PrivateANM", "check_bounds", "check_settings", "decide", "fit_both_directions", "laplace_sensitivity",
    "pair_on_public_domain", "private_direction", "raw_scores", "release_iqr_scores", "release_laplace_scores",
    "validate_pair",
]
