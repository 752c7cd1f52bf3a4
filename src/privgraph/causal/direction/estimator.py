"""Private causal direction for a pair of continuous variables (additive-noise models).

private-anm.txt, Section 4.1, with its errata fixed (see ``docs/direction.md``). The
records are split into a training and a test part (public randomness from ``rng``);
Y is regressed on X and X on Y on the training part (random-Fourier-feature ridge,
:mod:`privgraph.causal.direction.regression`); on the test part either the dependence between
each putative cause and its residual is scored (kendall, spearman, hsic, iqr), or the two
directions' regression errors are compared (``"reci"``, the default;
:mod:`privgraph.causal.direction.scores`), the scores are released privately, and X -> Y is
decided when ``s(X->Y) < s(Y->X)``. Under RECI the decision carries its **agreement
probability**: the chance that the noise-free score on this data (all rows, no privacy
noise) points the same way, covering the privacy noise and the test part's sampling
(:func:`~privgraph.causal.direction.scores.reci_agreement_probability`); it is not a
confidence in the direction. Under Kendall (``privacy="record"``) the decision carries a
probability that the direction is causal, calibrated on the SIM families only
(:mod:`privgraph.causal.direction.calibration`). Either is ``"undecided"`` when its
probability is below the public ``abstain_below`` (post-processing: no extra cost). A pair
of fewer than :data:`SMALL_PAIR_ROWS` rows is answered ``"undecided"`` with its reason,
nothing spent (n is public under replace-one).

Guarantees, under replace-one neighbours (``privacy=`` names the records covered):

* ``privacy="record"`` (the default) protects **every record**. The data is clipped to
  public ``bounds``; the training part releases one noisy K x K table of the pair on a
  public grid (:mod:`privgraph.causal.direction.noisy_table`), both regressions are computed
  from that table (post-processing), and the test part releases the scores with their
  test-set sensitivities. A record is in one part only (the split is public randomness
  fixed before the data is read), so the two releases compose in parallel: the whole
  decision is (epsilon, delta)-DP, delta > 0 for the IQR score only. Every score.
* ``privacy="test"`` protects the **test records only** (the text's test-set privacy):
  the training part is used as if public (its mean, spread and residual scale set the
  scales, and it fits the regression without noise), so use it only when those records
  are public. Its ledger carries :data:`TEST_ONLY_CAVEAT`. Every score.
* ``privacy="train+test"`` protects every record through the stability of a ridge fit
  (HSIC only; :func:`~privgraph.causal.direction.scores.hsic_training_sensitivity`):
  correct but useless below about 10^7 records (docs/direction.md); kept for comparison.

No check reads a data value: constant or tied columns and missing or non-finite values
are valid input with documented per-record conventions (:mod:`privgraph.causal.direction.data`),
so the behaviour on two neighbouring datasets differs only through the released values.
The only refusals read public inputs: dtypes, shapes, the number of rows against
:func:`~privgraph.causal.direction.data.min_test_rows` (a function of the score and epsilon).

In every mode the split is fixed by ``rng`` independently of the data: the argument holds
for every split, so the split need not be secret.

**Add/remove** (``neighbours="add_remove"``): the replace-one fit above reached through the
generic reduction (:class:`~privgraph.privacy.add_remove.AddRemove`, proof in
:mod:`privgraph.privacy.resize`): the number of records is released with 1% of epsilon, the
pair resized secretly to the public m it gives (:func:`resize_pair`: a uniform m-subset, or
padded with missing values, which map to the bounds' midpoint), and the replace-one fit runs
on it with the rest. **The person as the unit** (``max_rows_per_person`` with a codebook
naming ``"id"``, :mod:`privgraph.privacy.person`): the person's id is a third column, given as
``fit(x, y, persons=ids)`` (``privgraph direction`` reads the codebook's id column beside --x
and --y); at most k records per person are kept and the add/remove fit runs at the row target.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privgraph.causal.direction import scores as ds
from privgraph.causal.direction.data import (
    MIN_PART_ROWS,
    FittedPair,
    min_test_rows,
    pair_on_public_domain,
    validate_pair,
)
from privgraph.causal.direction.modes import MODES, Mode, check_bounds
from privgraph.causal.direction.scores import Score
from privgraph.data.codebook import NOT_PRIVATE_DOMAIN
from privgraph.declarations import ANM, check_abstain
from privgraph.estimator import PrivateEstimator
from privgraph.data import resolve_domain
from privgraph.data.persons import fit_per_person, person_unit, plan_per_person
from privgraph.data.sampling import rows_without_replacement
from privgraph.privacy.add_remove import AddRemove
from privgraph.privacy import (
    Budget,
    Ledger,
    Neighbours,
    NoiseSampler,
    PrivacyPlan,
    Release,
)
from privgraph.validation import InvalidInput, one_of, positive_int

#: The privacy modes' names (:data:`~privgraph.causal.direction.modes.MODES`).
PRIVACY_MODES = tuple(MODES)
#: The default: every record protected.
DEFAULT_PRIVACY = "record"
#: Default ridge per privacy mode (chosen on the tuning seeds of benchmarks/bench_direction.py).
DEFAULT_RIDGE = {name: mode.default_ridge for name, mode in MODES.items()}
DIRECTIONS = ("x->y", "y->x")
#: Default public threshold: a RECI decision whose probability is below it is "undecided"
#: (chosen on the SIM tuning seeds and the real pairs: docs/direction.md, "Abstaining").
ABSTAIN_BELOW = 0.6
#: A pair with fewer rows (public under replace-one) is answered "undecided" with its reason,
#: nothing released or spent: each part of the split needs MIN_PART_ROWS records.
SMALL_PAIR_ROWS = 2 * MIN_PART_ROWS


@dataclass(frozen=True)
class DirectionResult:
    """A private causal-direction decision.

    Attributes
    ----------
    direction : str
        ``"x->y"``, ``"y->x"``, or ``"undecided"`` (an IQR release returned bottom, or the
        RECI or Kendall probability is below the public ``abstain_below``).
    scores : dict
        The private scores ``{"x->y": s, "y->x": s}`` (None where an IQR release returned
        bottom); smaller wins. RECI releases only the difference D of the two clipped mean
        squared errors: its scores are ``(D/2, -D/2)``, whose difference is D.
    noise_kept_order : float or None
        An *estimate* of the probability that the privacy noise has not flipped the
        decision: Theorem 3 (Laplace scores) or Theorem 5 (IQR) evaluated at the *private*
        margin. It covers the privacy noise only, not the scores' sampling error, and says
        nothing of whether the direction is causal (the command line calls it "P(noise kept
        the order)"; ``confidence`` is its deprecated name).
    score, privacy : str
        The score and the privacy mode used.
    agreement_probability : float or None
        RECI only: the chance that the **noise-free score on this data** (the same released
        regressions, all n rows, no privacy noise) points the same way as the reported one.
        It covers the privacy noise on the released error difference and the test part's
        sampling (:func:`~privgraph.causal.direction.scores.reci_agreement_probability`;
        calibration checked in tests/causal/test_direction_agreement.py), and is reported
        even when the decision is ``"undecided"``. It is NOT a confidence in the direction:
        whether the smaller regression error marks the cause is RECI's assumption (on real
        pairs, a fifth to a third of the answers reported at >= 0.99 are wrong:
        docs/direction.md, "What the agreement probability covers").
    causal_probability_sim : float or None
        Kendall under ``privacy="record"`` only: the probability that the reported direction
        is causal, calibrated on the equal mixture of the four SIM families of simulated pairs
        (:func:`~privgraph.causal.direction.calibration.kendall_causal_probability`); not
        calibrated on real pairs.
    reason : str or None
        Why the answer is ``"undecided"`` without a release (a pair too small), else None.
    """

    direction: str
    scores: dict
    noise_kept_order: float | None
    score: str
    privacy: str
    agreement_probability: float | None = None
    causal_probability_sim: float | None = None
    reason: str | None = None

    @property
    def confidence(self) -> float | None:
        """Deprecated name of :attr:`noise_kept_order` (it is not a confidence in the direction)."""
        return _deprecated("DirectionResult.confidence", "noise_kept_order", self.noise_kept_order)

    @property
    def probability(self) -> float | None:
        """Deprecated alias: :attr:`agreement_probability` (RECI) or :attr:`causal_probability_sim` (Kendall)."""
        return _deprecated("DirectionResult.probability", "agreement_probability (RECI) or causal_probability_sim (Kendall)",
                           self.agreement_probability if self.causal_probability_sim is None else self.causal_probability_sim)


def _deprecated(old: str, use: str, value):
    """``value``, with a DeprecationWarning at the caller's line that ``old`` is now ``use``."""
    warnings.warn(f"{old} is deprecated: use {use}", DeprecationWarning, stacklevel=3)
    return value


def check_settings(score: str, privacy: str, epsilon: float, delta: float) -> None:
    """Refuse unknown scores and modes, and the combinations that have no guarantee.

    >>> check_settings("kendall", "record", 1.0, 1e-6)
    >>> check_settings("hsic", "train+test", 0.0, 1e-6)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: epsilon must be positive and finite, got 0.0
    """
    settings(score, privacy, epsilon, delta)


def settings(score: str, privacy: str, epsilon: float, delta: float) -> tuple[Score, Mode]:
    """The registered score and privacy mode (:func:`check_settings`'s refusals first: the
    mode's of the score, then epsilon, then the score's own).

    >>> [type(v).__name__ for v in settings("hsic", "train+test", 1.0, 1e-6)]
    ['Hsic', 'TrainTest']
    """
    one_of("score", score, tuple(ds.SCORES))
    one_of("privacy", privacy, PRIVACY_MODES)
    stage, mode = ds.SCORES[score], MODES[privacy]
    mode.check(stage)
    if not (0 < epsilon < math.inf):
        raise InvalidInput(f"epsilon must be positive and finite, got {epsilon!r}")
    stage.check(delta)
    return stage, mode


def laplace_sensitivity(fit: FittedPair, score: str, privacy: str) -> float:
    """The score's sensitivity: the test-set bound, or under train+test the larger of both parts'.

    >>> fit = FittedPair(*(np.zeros(400),) * 4, bandwidths=(0.5, 0.5), shift=0.0)
    >>> laplace_sensitivity(fit, "kendall", "test")
    0.01
    """
    return score_sensitivity(score, privacy, fit.x.size, fit.shift, fit.bandwidths)


def score_sensitivity(score: str, privacy: str, m: int, shift: float, bandwidths) -> float:
    """A Laplace score's sensitivity on ``m`` test rows: the test-set bound, or under
    train+test the larger of it and the training part's (residual ``shift``, ``bandwidths``).

    >>> score_sensitivity("kendall", "test", 400, 0.0, (1.0, 1.0))
    0.01
    """
    return MODES[privacy].sensitivity(ds.test_set_score(score), m, shift, bandwidths)


def raw_scores(fit: FittedPair, score: str) -> tuple[float, float]:
    """The non-private scores ``(s(X->Y), s(Y->X))`` of a Laplace score (never released as is).

    >>> c, noise = np.linspace(-1, 1, 200), np.random.default_rng(0).normal(size=200)
    >>> fit = FittedPair(c, c, noise, noise * np.abs(c), bandwidths=(1.0, 1.0), shift=0.0)
    >>> s_xy, s_yx = raw_scores(fit, "kendall")
    >>> s_xy < s_yx
    True
    """
    return ds.laplace_score(score, alternatives=" here").raw(fit)


def private_direction(
    x,
    y,
    *,
    epsilon: float,
    sampler: NoiseSampler,
    rng: np.random.Generator,
    score: str = ds.DEFAULT_SCORE,
    privacy: str = DEFAULT_PRIVACY,
    delta: float = 1e-6,
    bounds=None,
    test_fraction: float = 0.5,
    ridge: float | None = None,
    lengthscale: float = 1.0,
    bins: int | None = None,
    budget: Budget | None = None,
    abstain_below: float = ABSTAIN_BELOW,
) -> Release:
    """Decide X -> Y or Y -> X from privately released dependence scores.

    Parameters
    ----------
    x, y : array_like
        The two columns (same length, a numeric dtype). No data value is refused: ties and
        constant columns are valid, and a missing or non-finite value is replaced by the
        centre of the common scale (the bounds' midpoint, or the training mean); see
        :func:`~privgraph.causal.direction.data.validate_pair`. The checks read only public
        properties: dtypes, shapes and the number of rows (public under replace-one).
    epsilon : float
        Epsilon of the whole decision. Under ``privacy="record"`` each part spends it once
        (parallel composition: one charge of epsilon); otherwise the score releases compose.
    sampler : NoiseSampler
        Noise (SecureSampler in production).
    rng : numpy.random.Generator
        Public randomness: the train/test split (and the Fourier frequencies of the
        ``"test"`` and ``"train+test"`` regressions).
    score : {"reci", "kendall", "spearman", "hsic", "iqr"}
        Default RECI (regression errors): the most accurate on the real pairs, non-private and
        at epsilon = 1 (docs/direction.md, "Which score"); the others are the paper's four
        dependence scores.
    privacy : {"record", "test", "train+test"}
        Which records are protected (see the module docstring); default every record.
    delta : float
        Total delta, used by the IQR score only (the Laplace scores are pure).
    bounds : ((x_lo, x_hi), (y_lo, y_hi)) or None
        Public clipping bounds; required under ``"record"`` and ``"train+test"``.
    test_fraction : float
        Share of the rows in the test part (public).
    ridge, lengthscale
        The Fourier ridge of the ``"test"`` and ``"train+test"`` modes.
    bins : int, optional
        Grid of the ``"record"`` mode's training table; default the public rule
        :func:`~privgraph.causal.direction.noisy_table.default_bins` (training size, epsilon).
    budget : Budget, optional
        Checked for the whole decision before any noise is drawn.
    abstain_below : float
        Public threshold in [0.5, 1): a RECI decision whose probability is below it is
        ``"undecided"`` (post-processing of the released values, no extra cost). Kendall
        under ``privacy="record"`` likewise, with its calibrated probability. Not used by
        the other scores.

    Returns
    -------
    Release
        ``(DirectionResult, Ledger)``.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-2, 2, 2000)
    >>> y = np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, 2000)
    >>> result, ledger = private_direction(x, y, epsilon=1.0, bounds=((-2, 2), (-2, 2)),
    ...                                    sampler=SeededSampler(0), rng=np.random.default_rng(1))
    >>> result.direction, ledger.total().epsilon, len(ledger), result.agreement_probability > 0.99
    ('x->y', 1.0, 1, True)
    >>> private_direction(x[:15], y[:15], epsilon=1.0, bounds=((-2, 2), (-2, 2)), sampler=SeededSampler(0),
    ...                   rng=np.random.default_rng(1)).value.direction
    'undecided'
    """
    stage, mode = settings(score, privacy, epsilon, delta)
    abstain_below = check_abstain(abstain_below)
    x, y = validate_pair(x, y, min_rows=0)
    bounds = check_bounds(bounds, privacy)
    if x.size < SMALL_PAIR_ROWS:  # n is public: answered, not refused, so that a graph's orientation never fails
        return small_pair(x.size, score, privacy)
    check_split_rows(x.size, test_fraction, score, epsilon)
    released, ledger = mode.run(stage, x, y, epsilon=epsilon, delta=stage.spent_delta(delta), sampler=sampler, rng=rng,
                                bounds=bounds, test_fraction=test_fraction, ridge=ridge, lengthscale=lengthscale,
                                bins=bins, budget=budget)
    return Release(decide(released.scores, released.scale, released.flip_free, score, privacy,
                          agreement_probability=released.agreement_probability,
                          causal_probability_sim=released.causal_probability_sim, abstain_below=abstain_below),
                   ledger)


def check_split_rows(n: int, test_fraction: float, score: str, epsilon: float) -> int:
    """The test part's size m on ``n`` rows, refusing a split too small for the score (public:
    n, the fraction, the score and epsilon).

    >>> check_split_rows(2000, 0.5, "kendall", 1.0)
    1000
    >>> check_split_rows(40, 0.5, "kendall", 1.0)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: the split leaves 20 test and 20 training rows; the kendall score at epsilon=1 needs 32 test rows (min_test_rows) and each part 10
    """
    m = int(round(n * test_fraction))
    need = min_test_rows(score, epsilon)
    if m < need or n - m < MIN_PART_ROWS:
        raise InvalidInput(f"the split leaves {m} test and {n - m} training rows; the {score} score at "
                           f"epsilon={epsilon:g} needs {need} test rows (min_test_rows) and each part {MIN_PART_ROWS}")
    return m


def direction_charges(n: int, *, epsilon: float, score: str, privacy: str, delta: float, test_fraction: float,
                      ridge: float | None, bins: int | None) -> Ledger:
    """The ledger :func:`private_direction` charges on a pair of ``n`` rows, from public facts
    only (n is public under replace-one): the parallel charge of ``privacy="record"``, or the
    score releases' charges (RECI's two Laplace releases, the four log-IQRs, or the two
    Laplace scores at their sensitivities on the test part).

    >>> [c.mechanism for c in direction_charges(2000, epsilon=1.0, score="kendall", privacy="test", delta=1e-6,
    ...                                         test_fraction=0.5, ridge=None, bins=None)]
    ['laplace', 'laplace']
    """
    stage, mode = settings(score, privacy, epsilon, delta)
    n = positive_int("n_rows", n)
    if n < 2 * MIN_PART_ROWS:  # as validate_pair refuses
        raise InvalidInput(f"need at least {2 * MIN_PART_ROWS} rows (each part needs {MIN_PART_ROWS}), got {n}")
    if not (0 < test_fraction < 1):  # as split_indices refuses
        raise InvalidInput(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    m = check_split_rows(n, test_fraction, score, epsilon)
    return mode.charges(stage, n, m, epsilon=epsilon, delta=stage.spent_delta(delta), ridge=ridge, bins=bins)


def decide(scores, scale: float, flip_free, score: str, privacy: str, *,
           agreement_probability: float | None = None, causal_probability_sim: float | None = None,
           abstain_below: float = ABSTAIN_BELOW) -> DirectionResult:
    """The decision from private scores (post-processing only); ``"undecided"`` where the
    probability it carries (RECI's agreement probability, Kendall's) is below the public
    ``abstain_below``.

    >>> r = decide((0.1, 0.5), 0.1, lambda g, s: 0.9, "hsic", "test")
    >>> r.direction, r.noise_kept_order
    ('x->y', 0.9)
    >>> decide((0.1, -0.1), 0.1, lambda g, s: 0.9, "reci", "record", agreement_probability=0.55).direction
    'undecided'
    """
    if scores is None:
        return DirectionResult("undecided", dict.fromkeys(DIRECTIONS), None, score, privacy)
    s_xy, s_yx = scores
    direction = DIRECTIONS[0] if s_xy < s_yx else DIRECTIONS[1]
    probability = agreement_probability if causal_probability_sim is None else causal_probability_sim
    if probability is not None and probability < abstain_below:
        direction = "undecided"
    return DirectionResult(direction, dict(zip(DIRECTIONS, scores)), flip_free(s_yx - s_xy, scale), score, privacy,
                           agreement_probability, causal_probability_sim)


def small_pair(n: int, score: str, privacy: str) -> Release:
    """The answer for a pair of fewer than :data:`SMALL_PAIR_ROWS` rows: ``"undecided"`` with
    its reason, nothing released and nothing spent (an empty ledger). It reads n only, which
    is public under replace-one, so two neighbouring datasets get the same answer.

    >>> result, ledger = small_pair(12, "reci", "record")
    >>> result.direction, len(ledger), result.reason
    ('undecided', 0, 'too few rows to decide: 12 (a split needs at least 20, each part 10); nothing was spent')
    """
    reason = (f"too few rows to decide: {n} (a split needs at least {SMALL_PAIR_ROWS}, each part {MIN_PART_ROWS}); "
              "nothing was spent")
    return Release(DirectionResult("undecided", dict.fromkeys(DIRECTIONS), None, score, privacy, reason=reason),
                   Ledger())


class PrivateANM(PrivateEstimator):
    """Estimator: the additive-noise direction of a pair, from privately released scores.

    Parameters
    ----------
    epsilon : float
        Total privacy budget of one ``fit``.
    score : {"reci", "kendall", "spearman", "hsic", "iqr"}
        Default RECI (regression errors): the most accurate on the real pairs, non-private
        and at epsilon = 1 (docs/direction.md); HSIC is the only score allowed under
        ``privacy="train+test"``.
    privacy : {"record", "test", "train+test"}
        ``"record"`` (default) protects every record (a released training table, parallel
        composition); ``"test"`` the test records only (its ledger says so);
        ``"train+test"`` every record through ridge stability (HSIC only; useless below
        about 10^7 records). See :mod:`privgraph.causal.direction`.
    random_state : None, int or NoiseSampler
        None: SecureSampler noise and a fresh public split. An int: SeededSampler noise
        and a reproducible split, for tests and experiments only: **seeded noise is not
        private** (anyone with the seed can subtract it).
    delta, bounds, test_fraction, ridge, lengthscale, bins, abstain_below
        As in :func:`private_direction`.

    Attributes
    ----------
    direction_ : str
        ``"x->y"``, ``"y->x"`` or ``"undecided"`` (RECI: :attr:`agreement_probability_`
        below ``abstain_below``; Kendall: :attr:`causal_probability_sim_` below it; IQR: a
        release answered bottom; a pair of fewer than 20 rows: :attr:`reason_` says so).
    agreement_probability_ : float or None
        RECI: the chance that the noise-free score on this data (all rows, no privacy
        noise) points the same way; it covers the privacy noise and the test part's
        sampling, and is NOT a confidence in the direction (see
        :attr:`DirectionResult.agreement_probability`). None for the other scores.
    causal_probability_sim_ : float or None
        Kendall (``privacy="record"``): the probability that the direction is causal,
        calibrated on the SIM families, not on real pairs. None for the other scores.
    reason_ : str or None
        Why the answer is ``"undecided"`` with nothing released (a pair under 20 rows).
    probability_ : float or None
        Deprecated alias of the two above.
    scores_ : dict
        The private scores.
    noise_kept_order_ : float or None
        Estimated probability that the privacy noise did not flip the decision (Theorem 3 /
        5 at the private margin): an estimate, not a guarantee, and blind to sampling error
        (see :attr:`DirectionResult.noise_kept_order`; ``confidence_`` is its deprecated name).
    ledger_ : Ledger
        What was released and what it cost.
    composition_ : str
        How :attr:`ledger_` composes to the fit's guarantee: ``"basic"`` (one charge under
        ``privacy="record"``; the score releases summed otherwise).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-2, 2, 2000)
    >>> y = np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, 2000)
    >>> model = PrivateANM(epsilon=1.0, random_state=0, bounds=((-2, 2), (-2, 2))).fit(x, y)
    >>> model.direction_, model.ledger_.total().epsilon, model.ledger_.is_private
    ('x->y', 1.0, True)
    >>> PrivateANM(epsilon=1.0, score="kendall", privacy="train+test", bounds=((-2, 2), (-2, 2))).fit(x, y)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: score='kendall' has no derived guarantee under privacy='train+test': ...
    """

    #: The parameters' declarations (the CLI's ``direction`` options are built from them).
    PARAMS = ANM

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, neighbours: str | Neighbours = "replace_one",
                 random_state=None, score: str = ds.DEFAULT_SCORE, privacy: str = DEFAULT_PRIVACY, bounds=None,
                 test_fraction: float = 0.5, ridge: float | None = None, lengthscale: float = 1.0,
                 bins: int | None = None, abstain_below: float = ABSTAIN_BELOW, max_rows_per_person: int | None = None):
        self.epsilon, self.delta, self.neighbours, self.random_state = epsilon, delta, neighbours, random_state
        self.score, self.privacy, self.bounds, self.test_fraction = score, privacy, bounds, test_fraction
        self.ridge, self.lengthscale, self.bins = ridge, lengthscale, bins
        self.abstain_below = abstain_below
        self.max_rows_per_person = max_rows_per_person

    def fit(self, x, y, *, domain=None, infer_domain: bool = False, budget: Budget | None = None,
            persons=None) -> "PrivateANM":
        """Decide the direction of (x, y); returns self.

        The pair needs a public domain: ``domain`` (a :class:`~privgraph.data.Domain`, a
        codebook path or dict, naming x and y by their Series names or holding exactly two
        columns: continuous ones with ``bounds``, or ordinal ones, used through their codes),
        or the estimator's own ``bounds``. Without either the fit refuses before reading a
        value, unless ``infer_domain=True`` (scales then come from the training rows and the
        ledger says the domain is not private; under ``privacy="record"`` the bounds are then
        the data's range). Values outside the bounds are clipped, and missing ones go to the
        bounds' midpoint: a fixed per-record map, never an error.

        ``persons``: the person of each record (the codebook's ``"id"`` column), with
        ``max_rows_per_person``: the person is then the unit (module docstring).
        """
        if (unit := person_unit(domain, self.max_rows_per_person, self.neighbours)) is not None:
            frame, names = pair_frame(x, y, persons, unit.column)
            return fit_per_person(self, unit, frame, domain=domain, budget=budget, infer_domain=infer_domain,
                                  fit=lambda inner, rows, **kw: inner.fit(rows[names[0]], rows[names[1]], **kw))
        if persons is not None:
            raise InvalidInput("persons= names each record's person, which needs max_rows_per_person and a codebook "
                               "naming the person column (\"id\")")
        if self._relation() is Neighbours.ADD_REMOVE:
            return self._fit_add_remove(x, y, domain=domain, infer_domain=infer_domain, budget=budget)
        mode = MODES[self.privacy]
        if domain is None and mode.bounds_first:
            check_bounds(self.bounds, self.privacy)  # train+test names its own need for bounds first
        x, y, bounds, public = pair_on_public_domain(x, y, domain, self.bounds, infer_domain)
        x, y = validate_pair(x, y, min_rows=0)
        if x.size < SMALL_PAIR_ROWS:  # n is public: answered "undecided" with its reason, nothing spent
            result, ledger = small_pair(x.size, self.score, self.privacy)
        else:
            bounds = mode.bounds_of(bounds, x, y)  # infer_domain=True: the caveat below says so
            sampler = self.noise_sampler()
            seed = self.random_state if isinstance(self.random_state, (int, np.integer)) else getattr(
                self.random_state, "seed", None)  # a SeededSampler (the add/remove form's): its seed
            if isinstance(seed, np.random.SeedSequence):  # a SeededSampler of a SeedSequence (the audits')
                seed = int(seed.generate_state(1)[0])
            result, ledger = private_direction(
                x, y, epsilon=self.epsilon, sampler=sampler,
                rng=np.random.default_rng(None if seed is None else (int(seed), 1)), score=self.score,
                privacy=self.privacy, delta=self.delta, bounds=bounds, test_fraction=self.test_fraction,
                ridge=self.ridge, lengthscale=self.lengthscale, bins=self.bins, budget=budget,
                abstain_below=self.abstain_below)
        if not public:
            ledger = ledger.with_caveat(NOT_PRIVATE_DOMAIN)
        ledger = with_caveats(ledger, mode)
        self.result_ = result
        self.direction_, self.scores_, self.noise_kept_order_, self.ledger_ = (
            result.direction, result.scores, result.noise_kept_order, ledger)
        self.agreement_probability_ = result.agreement_probability
        self.causal_probability_sim_ = result.causal_probability_sim
        self.reason_ = result.reason
        self.composition_ = self._accountant().name
        return self

    @property
    def confidence_(self) -> float | None:
        """Deprecated name of :attr:`noise_kept_order_` (it is not a confidence in the direction)."""
        return _deprecated("PrivateANM.confidence_", "noise_kept_order_", self.noise_kept_order_)

    @property
    def probability_(self) -> float | None:
        """Deprecated alias of :attr:`agreement_probability_` (RECI) or :attr:`causal_probability_sim_` (Kendall)."""
        return _deprecated("PrivateANM.probability_", "agreement_probability_ (RECI) or causal_probability_sim_ (Kendall)",
                           self.agreement_probability_ if self.causal_probability_sim_ is None else self.causal_probability_sim_)

    def privacy_plan(self, domain, n_rows: int) -> PrivacyPlan:
        """The charges :meth:`fit` makes on a pair of ``n_rows`` records (public under
        replace-one), composed by basic composition (:func:`direction_charges`: derived from
        public facts, no data read, no noise drawn). ``domain``: the pair's public domain
        (as :meth:`fit` takes it) or None; the charges do not depend on it.

        >>> PrivateANM(epsilon=1.0).privacy_plan(None, 2000).epsilon()
        1.0
        >>> [c.mechanism for c in PrivateANM(epsilon=1.0, neighbours="add_remove").privacy_plan(None, 2000)]
        ['laplace', 'private_anm (parallel: training table | test scores)']
        """
        if (unit := person_unit(domain, self.max_rows_per_person, self.neighbours)) is not None:
            return plan_per_person(self, unit, domain, n_rows)
        if self._relation() is Neighbours.ADD_REMOVE:  # the size's charge, then the plan at m, relabelled
            if domain is not None:
                resolve_domain(None, domain)
            ledger = AddRemove(self.epsilon, self.delta, self._accountant()).plan(self._replace_one(None), None, n_rows)
            return PrivacyPlan.of_ledger(ledger, Neighbours.ADD_REMOVE, self._accountant(), self.delta)
        self._relation()
        if domain is not None:
            resolve_domain(None, domain)  # a codebook that cannot be read is refused here too
        if 0 <= n_rows < SMALL_PAIR_ROWS:  # answered "undecided", nothing spent (fit's small_pair)
            return PrivacyPlan.of_ledger(Ledger(), Neighbours.REPLACE_ONE, self._accountant(), self.delta)
        ledger = direction_charges(n_rows, epsilon=self.epsilon, score=self.score, privacy=self.privacy,
                                   delta=self.delta, test_fraction=self.test_fraction, ridge=self.ridge,
                                   bins=self.bins)
        return PrivacyPlan.of_ledger(with_caveats(ledger, MODES[self.privacy]), Neighbours.REPLACE_ONE,
                                     self._accountant(), self.delta)

    def _check_rules(self) -> None:
        """The rules across parameters: the score under the privacy mode, and the score's need of
        delta (:func:`check_settings`; each parameter is checked by its declaration first)."""
        check_settings(self.score, self.privacy, self.epsilon, self.delta)

    def _accountant(self):
        """How the ledger composes: the privacy mode's accountant (:attr:`Mode.accountant`)."""
        return MODES[self.privacy].accountant

    def _relation(self) -> Neighbours:
        """The relation: replace-one, which the direction tests are derived for, or add/remove
        through the generic reduction (module docstring)."""
        return Neighbours.parse(self.neighbours)

    def _fit_add_remove(self, x, y, *, domain, infer_domain: bool, budget) -> "PrivateANM":
        """Add/remove: the pair on its public domain, its number of records released, the pair
        resized secretly to the public m it gives (:func:`resize_pair`) and the replace-one fit
        on it with the rest of the budget (:class:`~privgraph.privacy.add_remove.AddRemove`)."""
        x, y, bounds, public = pair_on_public_domain(x, y, domain, self.bounds, infer_domain)
        x, y = validate_pair(x, y, min_rows=0)
        bounds = MODES[self.privacy].bounds_of(bounds, x, y)  # infer_domain=True: the caveat below says so
        wrapper = AddRemove(self.epsilon, self.delta, self._accountant())
        fitted, ledger, m, n_hat = wrapper.fit(self._replace_one(bounds), PairRecords(x, y), resize=resize_pair,
                                               sampler=self.noise_sampler(), budget=budget)
        inner = fitted.model
        for name in ("result_", "direction_", "scores_", "noise_kept_order_", "agreement_probability_",
                     "causal_probability_sim_", "reason_"):
            setattr(self, name, getattr(inner, name))
        self.ledger_ = ledger if public else ledger.with_caveat(NOT_PRIVATE_DOMAIN)
        self.composition_, self.n_rows_, self.size_estimate_ = wrapper.composition, m, n_hat
        return self

    def _replace_one(self, bounds):
        """``estimator_at(epsilon, sampler)`` for the reduction: this estimator under replace-one
        on the pair's public ``bounds``, as the reduction's contract wants it (:class:`PairFit`)."""
        def at(epsilon: float, sampler) -> PairFit:
            params = self.get_params() | dict(epsilon=epsilon, neighbours="replace_one", random_state=sampler,
                                              bounds=bounds, max_rows_per_person=None)
            return PairFit(type(self)(**params))
        return at


@dataclass(frozen=True)
class PairRecords:
    """A pair's records on its public domain (numbers, NaN missing); as a count engine it
    counts its rows only, the one count the add/remove reduction releases.

    >>> int(PairRecords(np.zeros(5), np.ones(5)).counts([]))
    5
    """

    x: np.ndarray
    y: np.ndarray
    domain = None  # the pair's scales are the fit's bounds: the plan needs no domain

    def counts(self, columns, rows=None) -> np.ndarray:
        if len(columns) or rows is not None:
            raise InvalidInput("a pair's records count their rows only")
        return np.array(len(self.x), dtype=np.int64)


def resize_pair(records: PairRecords, m: int, sampler) -> PairRecords:
    """Exactly ``m`` of the pair's records, secretly: a uniform m-subset drawn by ``sampler``
    when there are at least m, else all of them and ``m - n`` missing records (a fixed public
    record: missing values go to the bounds' midpoint). Step 3 of the add/remove reduction.

    >>> from privgraph.privacy import SeededSampler
    >>> r = PairRecords(np.arange(5.0), np.arange(5.0))
    >>> len(resize_pair(r, 3, SeededSampler(0)).x), resize_pair(r, 6, SeededSampler(0)).x[-1]
    (3, np.float64(nan))
    """
    n = len(records.x)
    if m <= n:
        kept = rows_without_replacement(n, m, sampler=sampler)
        return PairRecords(records.x[kept], records.y[kept])
    pad = np.full(m - n, np.nan)
    return PairRecords(np.concatenate([records.x, pad]), np.concatenate([records.y, pad]))


@dataclass
class PairFit:
    """The replace-one pair estimator as the reduction calls it: ``fit(records)`` on a
    :class:`PairRecords`, its ``privacy_plan`` and ``ledger_``."""

    model: object

    def fit(self, records: PairRecords, **kwargs) -> "PairFit":
        self.model.fit(records.x, records.y, **kwargs)
        return self

    def privacy_plan(self, domain, n_rows: int):
        return self.model.privacy_plan(domain, n_rows)

    @property
    def ledger_(self):
        return self.model.ledger_


def pair_frame(x, y, persons, column: str):
    """``(frame, names)``: the pair and its ``persons`` as one frame (the names of x and y
    kept where they have them, for the domain), so that the person's rows are truncated
    together (:func:`privgraph.data.persons.truncate`).

    >>> import pandas as pd
    >>> f, names = pair_frame(pd.Series([1, 2], name="a"), [3, 4], ["u", "v"], "pid")
    >>> list(f.columns), names
    (['a', 'y', 'pid'], ('a', 'y'))
    """
    if persons is None:
        raise InvalidInput(f"the person is the unit (the codebook's \"id\": {column!r}): give persons=, the person "
                           "of each record (privgraph direction reads that column beside --x and --y)")
    names = tuple(getattr(v, "name", None) or default for v, default in ((x, "x"), (y, "y")))
    if names[0] == names[1] or column in names:
        names = ("x", "y")
    values = [v.to_numpy() if hasattr(v, "to_numpy") else np.asarray(v) for v in (x, y, persons)]
    if len({len(v) for v in values}) != 1:
        raise InvalidInput(f"x, y and persons must have one value per record, got {[len(v) for v in values]}")
    return pd.DataFrame(dict(zip((*names, column), values))), names


def with_caveats(ledger: Ledger, mode: Mode) -> Ledger:
    """``ledger`` with the caveats of the privacy ``mode`` (what it leaves unprotected).

    >>> [len(with_caveats(Ledger(), MODES[name]).caveats) for name in ("record", "test")]
    [0, 1]
    """
    for caveat in mode.caveats:
        ledger = ledger.with_caveat(caveat)
    return ledger
