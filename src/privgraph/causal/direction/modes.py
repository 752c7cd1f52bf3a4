"""The direction test's privacy modes as registered stages: which records are protected, and how.

Each mode (``privacy=``) holds what the plan
(:func:`~privgraph.causal.direction.estimator.direction_charges`) and the run
(:func:`~privgraph.causal.direction.private_direction`) read of it, so that they cannot
disagree: its refusals, its need for public bounds, its default ridge, its caveat, the
regressions it fits (:meth:`Mode.fitted`), the sensitivity it gives a Laplace score, and its
charges (:meth:`Mode.charges`, which :meth:`Mode.run` spends exactly). The score's own part
(its statistic, sensitivity, release) is its :class:`~privgraph.causal.direction.scores.Score`.
Under every mode the relation is replace-one (n public); add/remove goes through the generic
reduction (:mod:`privgraph.causal.direction.estimator`).

* ``"record"`` (:class:`Record`): every record, by parallel composition of a released
  training table and the test scores (one charge);
* ``"test"`` (:class:`Test`): the test records only (the training part used as public);
* ``"train+test"`` (:class:`TrainTest`): every record through ridge stability (HSIC only).
"""

from __future__ import annotations

import math

from privgraph.causal.direction.data import (
    BOUNDED_HALF_WIDTH,
    TRAIN_RESIDUAL_BANDWIDTH,
    fit_both_directions,
    inferred_bounds,
)
from privgraph.causal.direction.noisy_table import default_bins, parallel_charge, released_fit
from privgraph.causal.direction.regression import stability_bound
from privgraph.causal.direction.scores import Score
from privgraph.privacy import Charge, Ledger, Neighbours, Release
from privgraph.privacy.budget import check_affordable
from privgraph.privacy.composition import BASIC, Accountant
from privgraph.validation import InvalidInput

#: What ``privacy="test"`` leaves out, said in every ledger of such a run.
TEST_ONLY_CAVEAT = ("privacy='test': only the test part's records are protected; the training part's "
                    "records set the regression without noise")


class Mode:
    """A privacy mode: the records it protects and the releases that protect them (module docstring).

    The relation is replace-one: the charges and sensitivities below are for one record
    replaced, n public.
    """

    #: The registry's name (``privacy=``).
    name = ""
    #: How the mode's ledger composes to the fit's guarantee: basic composition (its charges
    #: are one release, or releases chosen in sequence; a privacy filter).
    accountant: Accountant = BASIC
    #: The ridge of the Fourier regressions when none is given.
    default_ridge: float | None = None
    #: The refusal when no public bounds are given (None: the mode scales by the training part).
    missing_bounds: str | None = None
    #: Whether the mode's need for bounds is said before the domain is read (``PrivateANM.fit``).
    bounds_first = False
    #: What the mode leaves unprotected, added to every ledger of a run and of a plan.
    caveats: tuple[str, ...] = ()
    #: Whether the residual kernel's bandwidth is the training residuals' spread (else
    #: :data:`~privgraph.causal.direction.data.TRAIN_RESIDUAL_BANDWIDTH`).
    spread_from_training = False

    def check(self, score: Score) -> None:
        """Refuse a score the mode has no guarantee for (none by default)."""

    def ridge(self, ridge: float | None) -> float | None:
        """The ridge the regressions use: ``ridge``, or the mode's default."""
        return self.default_ridge if ridge is None else ridge

    def bounds_of(self, bounds, x, y):
        """The bounds a fit with ``infer_domain=True`` runs on (None: none, where the mode allows it)."""
        return bounds

    def fit_shift(self, ridge: float, training_rows: int) -> float:
        """The largest move of any residual when one training record changes (0: not bounded, not needed)."""
        return 0.0

    def sensitivity(self, score: Score, m: int, shift: float, bandwidths) -> float:
        """A Laplace score's sensitivity on ``m`` test rows: its test-set bound (one test record replaced)."""
        return score.sensitivity(m)

    def planned_sensitivity(self, score: Score, m: int, training_rows: int, ridge: float | None) -> float:
        """:meth:`sensitivity` from public facts: the shift and bandwidths a fit on
        ``training_rows`` rows would carry (a fit's are :meth:`fit_shift` and the bandwidths
        of :func:`~privgraph.causal.direction.data.fit_both_directions`)."""
        return self.sensitivity(score, m, 0.0, ())

    def charges(self, score: Score, n: int, m: int, *, epsilon: float, delta: float, ridge, bins) -> Ledger:
        """The ledger :meth:`run` charges on ``n`` rows, ``m`` of them in the test part (``delta``:
        the score's spent delta): the test part's score releases."""
        return Ledger.of(*score.charges(m, epsilon, delta, sensitivity=lambda: self.planned_sensitivity(
            score, m, n - m, ridge)))

    def fitted(self, x, y, *, bounds, test_fraction, ridge, lengthscale, rng):
        """Both regressions on the training part and the test part's residuals (a
        :class:`~privgraph.causal.direction.data.FittedPair`), the training part used as is."""
        return fit_both_directions(x, y, privacy=self.name, bounds=bounds, test_fraction=test_fraction,
                                   ridge=self.ridge(ridge), lengthscale=lengthscale, rng=rng)

    def run(self, score: Score, x, y, *, epsilon, delta, sampler, rng, bounds, test_fraction, ridge, lengthscale,
            bins, budget) -> Release:
        """The scores released under this mode: ``Release(Released, ledger)``, the budget checked
        for the whole plan before any noise is drawn."""
        check_affordable([Charge("private_direction (whole plan)", epsilon, delta, Neighbours.REPLACE_ONE)], budget)
        fit = self.fitted(x, y, bounds=bounds, test_fraction=test_fraction, ridge=ridge, lengthscale=lengthscale,
                          rng=rng)
        return score.release(fit, x.size, self, epsilon, delta, sampler, budget)


class Record(Mode):
    """Every record (the default): the training part releases one noisy table, both
    regressions come from it (post-processing), the test part releases the scores.

    Replace-one: the split is public randomness fixed before the data is read, so a record
    lies in one part only; a training record enters the table alone (Laplace, sensitivity 2:
    one count moves between cells), a test record the score releases alone (their test-set
    sensitivities, the regressions being released), so the two compose in parallel: one
    charge of (epsilon, delta) (:func:`~privgraph.causal.direction.noisy_table.parallel_charge`).
    """

    name = "record"
    missing_bounds = ("privacy='record' needs public bounds=((x_lo, x_hi), (y_lo, y_hi)): the training "
                      "table is released on a grid over them (or infer_domain=True: NOT private)")

    def bounds_of(self, bounds, x, y):
        """Without bounds (``infer_domain=True``: NOT private, the ledger says so) the data's range."""
        return inferred_bounds(x, y) if bounds is None else bounds

    def charge(self, score: Score, n: int, m: int, *, epsilon: float, delta: float, bins) -> tuple[Charge, int]:
        """The one parallel charge and the table's grid on ``n`` rows, ``m`` in the test part."""
        k = default_bins(n - m, epsilon) if bins is None else bins
        return parallel_charge(epsilon, delta, bins=k, training_rows=n - m, test_rows=m, score=score.name), k

    def charges(self, score, n, m, *, epsilon, delta, ridge, bins):
        return Ledger.of(self.charge(score, n, m, epsilon=epsilon, delta=delta, bins=bins)[0])

    def run(self, score, x, y, *, epsilon, delta, sampler, rng, bounds, test_fraction, ridge, lengthscale, bins,
            budget):
        """The whole plan is one parallel charge, reserved before any noise."""
        m = int(round(x.size * test_fraction))
        charge, k = self.charge(score, x.size, m, epsilon=epsilon, delta=delta, bins=bins)
        if budget is not None:
            budget.reserve(charge)  # raises BudgetExceeded before any noise, recording nothing
        fit, _ = released_fit(x, y, bounds=bounds, test_fraction=test_fraction, epsilon=epsilon, sampler=sampler,
                              rng=rng, bins=k, fit=score.fit)
        released, _ = score.release(fit, x.size, self, epsilon, delta, sampler, None)
        return Release(released, Ledger.of(charge))


class Test(Mode):
    """The test records only (the text's test-set privacy): the training part sets the scales
    and fits the regressions without noise, as if public; the score releases are charged at
    their test-set sensitivities (replace-one of a test record)."""

    name = "test"
    default_ridge = 1e-3
    caveats = (TEST_ONLY_CAVEAT,)
    spread_from_training = True


class TrainTest(Mode):
    """Every record through the stability of a ridge fit (HSIC only): one training record moves
    every residual by at most the stability bound ``beta``
    (:func:`~privgraph.causal.direction.regression.stability_bound`), which moves HSIC by at most
    :func:`~privgraph.causal.direction.scores.hsic_training_sensitivity`; the sensitivity is the
    larger of that and the test-set bound (replace-one of either part's record)."""

    name = "train+test"
    default_ridge = 0.01
    missing_bounds = ("privacy='train+test' needs public bounds=((x_lo, x_hi), (y_lo, y_hi)): "
                      "the regression's stability bound needs bounded data")
    bounds_first = True

    def check(self, score):
        """Only a score with a training-record bound (HSIC).

        >>> from privgraph.causal.direction.scores import SCORES
        >>> MODES["train+test"].check(SCORES["hsic"])
        >>> MODES["train+test"].check(SCORES["kendall"])
        Traceback (most recent call last):
        ...
        privgraph.validation.InvalidInput: score='kendall' has no derived guarantee under privacy='train+test': one training record moves every residual, which re-ranks residuals (rank scores) or moves an IQR by an amount with only a local bound; use score='hsic' or privacy='test'
        """
        if not getattr(score, "training_stable", False):
            raise InvalidInput(
                f"score={score.name!r} has no derived guarantee under privacy='train+test': one training "
                "record moves every residual, which re-ranks residuals (rank scores) or moves an IQR "
                "by an amount with only a local bound; use score='hsic' or privacy='test'")

    def fit_shift(self, ridge, training_rows):
        return stability_bound(target_bound=BOUNDED_HALF_WIDTH, ridge=ridge, training_rows=training_rows)

    def sensitivity(self, score, m, shift, bandwidths):
        return max(score.sensitivity(m), *(score.training_sensitivity(m, shift, h) for h in bandwidths))

    def planned_sensitivity(self, score, m, training_rows, ridge):
        shift = self.fit_shift(self.ridge(ridge), training_rows)
        return self.sensitivity(score, m, shift, (TRAIN_RESIDUAL_BANDWIDTH, TRAIN_RESIDUAL_BANDWIDTH))


#: The privacy modes by name (``privacy=``; the first is the default).
MODES = {mode.name: mode for mode in (Record(), Test(), TrainTest())}


def check_bounds(bounds, privacy: str):
    """Validate ``bounds = ((x_lo, x_hi), (y_lo, y_hi))``; required under train+test privacy.

    >>> check_bounds(((0, 1), (-2, 2)), "train+test")
    ((0.0, 1.0), (-2.0, 2.0))
    >>> check_bounds(((1, 0), (-2, 2)), "test")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: bounds for x must be finite with lo < hi, got (1, 0)
    """
    if bounds is None:
        if MODES[privacy].missing_bounds is not None:
            raise InvalidInput(MODES[privacy].missing_bounds)
        return None, None
    try:
        (xl, xh), (yl, yh) = bounds
    except (TypeError, ValueError):
        raise InvalidInput(f"bounds must be ((x_lo, x_hi), (y_lo, y_hi)), got {bounds!r}") from None
    for lo, hi, name in ((xl, xh, "x"), (yl, yh, "y")):
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise InvalidInput(f"bounds for {name} must be finite with lo < hi, got ({lo!r}, {hi!r})")
    return (float(xl), float(xh)), (float(yl), float(yh))
