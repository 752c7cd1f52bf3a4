"""The person as the privacy unit: one person's whole history, at most k rows, protected.

A table where one person has many rows (visits, prescriptions, waves) protects a *row*
with every mechanism of privgraph; a person with r rows is then protected only at group
privacy's cost, which grows with r and which nothing bounds. This module makes the person
the unit, for every estimator at once, by one generic conversion (as
:class:`~privgraph.privacy.add_remove.AddRemove` gives every replace-one estimator its
add/remove form):

1. **Truncate** (the data layer, :func:`privgraph.data.persons.truncate`): every person keeps
   at most ``k`` of their rows, chosen uniformly at random by a secret salted hash of
   (salt, person, the row's place among that person's rows), independently of every other
   person's rows; rows without a person are dropped; the person column is dropped. ``k`` is
   public (the user's choice, ``--max-rows-per-person``), fixed before any data is read.
2. **Run the estimator's add/remove fit** on the truncated rows at the *row target*
   (:func:`row_target`) and relabel nothing: its ledger is the row-level ledger, and the
   ledger carries the unit (:class:`PersonUnit`), so that :func:`~privgraph.privacy.ledger.guarantee`
   composes at the row level and converts once (:func:`person_cost`).

**Neighbours.** Under *person add/remove* two datasets differ by one person and all their
rows. For every value of the salt, the truncated datasets differ by that person's kept rows
only (every other person's kept rows depend on that person's rows and the salt alone): at
most ``g = k`` rows added or removed. Under *person replace-one* one person's history is
replaced by another's (each of at most k kept rows): at most ``k`` rows removed and ``k``
added, a path of ``g = 2k`` add/remove steps. The estimator's whole add/remove fit is
treated as a black box, (eps_r, delta_r)-DP for one row added or removed; by group privacy
(Vadhan 2017, Lemma 2.2; Dwork and Roth 2014) it is
``(g eps_r, g e^{(g - 1) eps_r} delta_r)``-DP for datasets ``g`` add/remove steps apart;
the salt's law is the same for both datasets, and a mixture with equal weights of pairs
that are (epsilon, delta)-close is (epsilon, delta)-close (joint convexity of the hockey-stick
divergence), so the bound holds for the truncation with its secret salt.

**The row target.** The user's (epsilon, delta) is per person; :func:`row_target` gives
``eps_r = epsilon / g`` and ``delta_r = delta / (g e^{(g - 1) epsilon / g})``, for which
:func:`person_cost` is exactly (epsilon, delta). For pure DP this is exact (group privacy of
pure DP is tight). For a Gaussian (zCDP) estimator the zCDP-native route would give each row
``rho / g^2`` (Bun and Steinke 2016, Proposition 1.9) instead of the rho of (eps_r, delta_r):
at epsilon 1, delta 1e-6 and k = 5 the black box leaves 0.000924 against 0.000974, 5.1% less
rho (2.6% more noise in standard deviation). The black box is kept: it is one conversion
for every estimator (pure, approximate, zCDP, RDP or a mixture of them inside one fit) and
it costs a few per cent at most where a native one exists.

**Why add/remove inside.** The estimator runs under add/remove whatever the person relation
is: the truncated data's number of rows depends on who is in it, so it is private under
both person relations, and the replace-one estimators reach add/remove through
:class:`~privgraph.privacy.add_remove.AddRemove` already. With ``k = 1`` under add/remove the
row target is the budget itself and the truncation of data with one row per person keeps
every row in order (it draws nothing from the noise sampler): the run is today's, byte for
byte.

This module is the privacy layer's half and imports no data layer: the truncation is passed
in (``truncate(data, column, k, salt)``).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable

from privgraph.privacy.budget import BudgetTooSmall
from privgraph.privacy.ledger import Ledger, PrivacyCost, guarantee
from privgraph.privacy.plan import PrivacyPlan
from privgraph.privacy.neighbours import Neighbours, check_delta, check_epsilon
from privgraph.validation import InvalidInput, positive_int

#: The parameter of every estimator that names the contribution bound k.
PARAMETER = "max_rows_per_person"


@dataclass(frozen=True)
class PersonUnit:
    """The privacy unit: a person named by ``column``, at most ``k`` rows each (public), under
    the person-level ``relation``. On a ledger, ``row_delta`` is the row-level target delta the
    estimator ran at (:func:`row_target`), which the ledger's guarantee composes to.

    >>> unit = PersonUnit("patient_id", 5, Neighbours.ADD_REMOVE)
    >>> unit.group, unit.describe()
    (5, 'for each person (at most 5 rows each)')
    >>> PersonUnit("patient_id", 5, "replace_one").group
    10
    """

    column: str
    k: int
    relation: Neighbours
    row_delta: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "relation", Neighbours.parse(self.relation))
        positive_int(PARAMETER, self.k)

    @property
    def group(self) -> int:
        """How many rows added or removed the truncated data of two neighbours differ by:
        ``k`` under person add/remove, ``2k`` under person replace-one (see the module)."""
        return self.k if self.relation is Neighbours.ADD_REMOVE else 2 * self.k

    def describe(self) -> str:
        """The unit as the guarantee's line names it."""
        return f"for each person (at most {self.k} row{'s' if self.k != 1 else ''} each)"

    def at(self, row_delta: float | None) -> "PersonUnit":
        """The unit as a ledger carries it: with the row-level target delta."""
        return replace(self, row_delta=row_delta)


def row_target(epsilon: float, delta: float | None, group: int) -> tuple[float, float | None]:
    """``(eps_r, delta_r)``: the per-row add/remove budget whose group-privacy cost over
    ``group`` rows (:func:`person_cost`) is the per-person ``(epsilon, delta)``.

    >>> row_target(1.0, 1e-6, 1)
    (1.0, 1e-06)
    >>> eps_r, delta_r = row_target(1.0, 1e-6, 5)
    >>> eps_r, round(delta_r / 1e-6, 6)  # 1e-6 / (5 e^0.8)
    (0.2, 0.089866)
    >>> row_target(2.0, None, 4)
    (0.5, None)
    """
    epsilon, group = check_epsilon(epsilon), positive_int("group", group)
    eps_r = epsilon / group
    if not delta:
        return eps_r, delta
    return eps_r, check_delta(delta) / (group * math.exp((group - 1) * eps_r))


def person_cost(cost: PrivacyCost, group: int) -> PrivacyCost:
    """Group privacy (Vadhan 2017, Lemma 2.2): an (eps, delta)-DP mechanism is
    ``(g eps, g e^{(g - 1) eps} delta)``-DP for datasets ``g`` rows apart.

    >>> c = person_cost(PrivacyCost(0.2, 1e-6 / (5 * math.exp(0.8)), "rdp"), 5)
    >>> round(c.epsilon, 12), round(c.delta, 18), c.method
    (1.0, 1e-06, 'rdp')
    >>> tuple(person_cost(PrivacyCost(0.5, 0.0, "basic"), 1))
    (0.5, 0.0)
    """
    g = positive_int("group", group)
    return PrivacyCost(g * cost.epsilon, g * math.exp((g - 1) * cost.epsilon) * cost.delta, cost.method)


def check_unit(column: str | None, k, relation) -> PersonUnit | None:
    """The unit of a fit: a person ``column`` (the codebook's ``"id"``) and the bound ``k``
    given together, or neither (None: the row is the unit); one without the other is a
    one-line error naming both.

    >>> check_unit(None, None, "add_remove") is None
    True
    >>> check_unit("pid", 3, "add_remove").k
    3
    >>> check_unit("pid", None, "add_remove")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: the codebook names the person column 'pid' ("id"), so the person is the privacy unit: give max_rows_per_person (--max-rows-per-person K), the most rows one person may contribute
    >>> check_unit(None, 3, "add_remove")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: max_rows_per_person=3 (--max-rows-per-person) needs a person column: name it in the codebook ("id": "COLUMN" at its top level)
    """
    if column is None and k is None:
        return None
    if k is None:
        raise InvalidInput(f"the codebook names the person column {column!r} (\"id\"), so the person is the privacy "
                           f"unit: give {PARAMETER} (--max-rows-per-person K), the most rows one person may contribute")
    if column is None:
        raise InvalidInput(f"{PARAMETER}={k!r} (--max-rows-per-person) needs a person column: name it in the "
                           "codebook (\"id\": \"COLUMN\" at its top level)")
    if isinstance(k, bool) or not isinstance(k, int) and not (isinstance(k, float) and k.is_integer()):
        raise InvalidInput(f"{PARAMETER} must be a positive integer, got {k!r}")
    return PersonUnit(column, int(positive_int(PARAMETER, int(k))), relation)


def truncation_salt(sampler) -> int:
    """The secret 64-bit salt of the truncation's choice of rows: from ``secrets`` (the OS's
    entropy) with the secure sampler; derived from the seed with a seeded one (reproducible,
    and as NOT private as the seeded noise). Never drawn from the sampler, so that the noise
    is the same with and without a unit (``k = 1`` is today's run).

    >>> from privgraph.privacy.samplers import SeededSampler
    >>> truncation_salt(SeededSampler(3)) == truncation_salt(SeededSampler(3)) != truncation_salt(SeededSampler(4))
    True
    """
    if getattr(sampler, "is_secure", True):
        return secrets.randbits(64)
    seed = sampler.seed
    text = repr(getattr(seed, "entropy", seed)) + repr(getattr(seed, "spawn_key", ()))
    return int.from_bytes(hashlib.blake2b(f"privgraph-person-salt:{text}".encode(), digest_size=8).digest(), "big")


def with_unit(ledger: Ledger, unit: PersonUnit) -> Ledger:
    """``ledger`` (a row-level add/remove ledger) carrying ``unit``: its guarantee is then
    composed at the row level and converted once (:func:`~privgraph.privacy.ledger.guarantee`).

    >>> from privgraph.privacy.ledger import Charge, guarantee
    >>> rows = Ledger.of(Charge("laplace", 0.2, 0.0, Neighbours.ADD_REMOVE, sensitivity=1.0))
    >>> tuple(guarantee(with_unit(rows, PersonUnit("pid", 5, "add_remove")), "basic", None))
    (1.0, 0.0)
    """
    return replace(ledger, unit=unit)


@contextmanager
def per_person(epsilon: float, unit: PersonUnit):
    """A refusal of the row-level fit (a budget too small, raised before any noise) said in
    the person's terms: the row budget it ran at and the budget per person it needs."""
    try:
        yield
    except BudgetTooSmall as err:
        needed = None if err.needed is None else unit.group * err.needed
        more = "" if needed is None else f"; the budget per person must then be epsilon >= {needed:.3g}"
        raise BudgetTooSmall(f"epsilon {epsilon:g} {unit.describe()} is epsilon {epsilon / unit.group:.3g} per row "
                             f"(group privacy over {unit.group} rows): {err}{more}", needed) from err


def row_estimator(estimator, unit: PersonUnit, sampler=None):
    """``estimator`` as the row-level black box: the same parameters at the row target,
    under add/remove, without a unit. Its ``random_state`` is the estimator's own (so that a
    seeded run's noise and post-processing draws are today's: ``k = 1`` is byte-identical),
    or ``sampler`` where the estimator's is a numpy Generator (drawn from once, already)."""
    eps_r, delta_r = row_target(estimator.epsilon, estimator.delta, unit.group)
    state = estimator.random_state
    params = estimator.get_params() | {"epsilon": eps_r, "delta": delta_r, "neighbours": "add_remove",
                                       PARAMETER: None,
                                       "random_state": sampler if type(state).__name__ == "Generator" else state}
    return type(estimator)(**params)


def fit_by_person(estimator, unit: PersonUnit, data, *, truncate: Callable, budget=None, fit: Callable | None = None,
                  **fit_kwargs):
    """Fit ``estimator`` with the person as the unit (the module's two steps): ``data``
    truncated (``truncate(data, column, k, salt)``), the row-level add/remove fit of
    :func:`row_estimator` on it (``fit(inner, rows, **fit_kwargs)``, by default
    ``inner.fit(rows, **fit_kwargs)``), its fitted attributes copied onto ``estimator`` and
    its ledger carrying the unit. An outside ``budget`` is refused: it would be spent per row."""
    if budget is not None:
        raise InvalidInput(f"budget= is spent row by row, but {PARAMETER} makes the person the unit: fit without "
                           "an outside budget (each fit's guarantee is per person)")
    sampler = estimator.noise_sampler()
    inner = row_estimator(estimator, unit, sampler)
    rows = truncate(data, unit.column, unit.k, truncation_salt(sampler))
    with per_person(estimator.epsilon, unit):
        if fit is None:
            inner.fit(rows, **fit_kwargs)
        else:
            fit(inner, rows, **fit_kwargs)
    for name, value in vars(inner).items():
        if name.endswith("_") and not name.startswith("_"):
            setattr(estimator, name, value)
    estimator.ledger_ = with_unit(inner.ledger_, unit.at(inner.delta))
    estimator.unit_ = estimator.ledger_.unit
    if hasattr(inner, "epsilon_spent_"):
        estimator.epsilon_spent_ = guarantee(estimator.ledger_, inner.composition_, estimator.delta).epsilon
    return estimator


def plan_by_person(estimator, unit: PersonUnit, domain, n_rows):
    """The plan of :func:`fit_by_person`: the row-level plan of :func:`row_estimator` (at a
    public guess ``n_rows`` of the truncated rows), carrying the unit, under the person
    relation; it equals the ledger the fit charges."""
    inner = row_estimator(estimator, unit)
    with per_person(estimator.epsilon, unit):
        plan = inner.privacy_plan(domain, n_rows)
    return PrivacyPlan.of_ledger(with_unit(plan.ledger, unit.at(inner.delta)), unit.relation, plan.accountant,
                                 estimator.delta)


__all__ = ["PARAMETER", "PersonUnit", "check_unit", "fit_by_person", "person_cost", "plan_by_person", "row_estimator",
           "row_target", "truncation_salt", "with_unit"]
