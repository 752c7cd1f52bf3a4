"""Composition of charges: the one place where privacy costs are added up.

Methods (all over charges whose number and parameters are fixed in advance; see
:class:`privgraph.privacy.budget.Budget` for adaptively chosen charges), each an
:class:`Accountant` in :data:`ACCOUNTANTS` (a plan holds one; :func:`as_accountant` turns a
name into it):

``basic``
    Sum of epsilons and of deltas (Dwork, McSherry, Nissim, Smith 2006). Also valid
    when each charge is chosen adaptively (it is a privacy filter; Rogers et al. 2016).
``advanced``
    Dwork, Rothblum and Vadhan (2010), heterogeneous form: k releases with
    (eps_i, delta_i) compose to ``sqrt(2 ln(1/d') sum eps_i^2) + sum eps_i (e^eps_i - 1)``
    with delta ``d' + sum delta_i``; we report the minimum with basic composition.
``optimal``
    Exact optimal composition for pure DP (Kairouz, Oh and Viswanath 2015, Theorems 3.3
    and 3.4; heterogeneous form as in Murtagh and Vadhan 2016): the worst case of an
    eps_i-DP mechanism is randomized response, so the composed privacy-loss variable is
    ``sum_i +-eps_i`` with P(+) = e^eps_i / (1 + e^eps_i), and the smallest epsilon with
    ``E[(1 - e^(eps - L))_+] <= 1 - (1 - delta) / prod(1 - delta_i)`` is exact. Computed
    exactly by enumerating the distinct epsilons (at most 2e6 support points).
``pld``
    Google's ``dp_accounting`` privacy-loss distributions (pessimistic, connect-the-dots),
    using each charge's exact curve when it has one and its (epsilon, delta) otherwise.
``rdp``
    Google's ``dp_accounting`` Renyi accountant at integer orders (:data:`RDP_ORDERS`: every
    order up to 32, then sparser up to 2048).

Every method reports at most what basic composition gives when the target delta covers
the charges' own deltas (a valid bound may always be replaced by a tighter valid one). Pure-DP charges without a Gaussian curve enter as randomized response with the
    same epsilon (the worst case of any eps-DP mechanism). Charges with delta > 0 and no
    Gaussian curve cannot be expressed in RDP and are refused.
"""

from __future__ import annotations

import math
from typing import ClassVar, Sequence

import numpy as np

from privgraph.privacy.events import PLD_MAX_SHIFT as _PLD_MAX_SHIFT
from privgraph.privacy.ledger import Charge, Ledger, PrivacyCost
from privgraph.privacy.neighbours import Neighbours, check_delta
from privgraph.validation import InvalidInput, one_of

#: Orders of the RDP accountant: integers only, where the discrete Gaussian's Renyi
#: divergences equal the continuous Gaussian's (Poisson summation; see mechanisms). Dense
#: where the optimum usually lies, sparse above: sub-sampling without replacement costs
#: ~0.1 s per total here against ~3 s for every order up to 256 (any subset of orders
#: gives a valid bound; a sparser one is at most slightly looser).
RDP_ORDERS = tuple(range(2, 33)) + (40, 48, 56, 64, 80, 96, 128, 192, 256, 384, 512, 768, 1024, 2048)

_MAX_SUPPORT = 2_000_000


def compose(charges: Sequence[Charge], method, delta: float | None) -> PrivacyCost:
    """Compose ``charges`` by ``method`` (an :class:`Accountant` or its name) to a total delta
    of ``delta`` (see module doc)."""
    return as_accountant(method).compose(charges, delta)


def _basic_if_covered(charges: Sequence[Charge], delta: float) -> float:
    """Basic composition's epsilon when its delta fits in ``delta`` (else infinity).

    A ledger that is (sum eps, sum delta)-DP is also (sum eps, delta)-DP for any larger
    delta, so no method needs to report more than basic composition does.
    """
    own = math.fsum(c.count * c.delta for c in charges)
    return math.fsum(c.count * c.epsilon for c in charges) if own <= delta else math.inf


def _own_delta(charges: Sequence[Charge], delta: float) -> float:
    """delta left for the composition after the charges' own deltas; must be > 0."""
    own = math.fsum(c.count * c.delta for c in charges)
    if delta <= own:
        raise InvalidInput(
            f"target delta {delta!r} must exceed the charges' own total delta {own!r}"
        )
    return delta - own


def advanced_epsilon(charges: Sequence[Charge], delta: float) -> float:
    """Heterogeneous advanced composition (Dwork, Rothblum, Vadhan 2010), min with basic.

    >>> c = Charge("laplace", 0.1, 0.0, Neighbours.ADD_REMOVE)
    >>> round(advanced_epsilon([c.times(100)], 1e-6), 3)
    6.308
    """
    d_prime = _own_delta(charges, delta)
    sq = math.fsum(c.count * c.epsilon**2 for c in charges)
    drift = math.fsum(c.count * c.epsilon * (math.expm1(c.epsilon) if c.epsilon < 709 else math.inf) for c in charges)
    basic = math.fsum(c.count * c.epsilon for c in charges)
    return min(basic, math.sqrt(2 * math.log(1 / d_prime) * sq) + drift)


def _rr_loss_distribution(charges: Sequence[Charge]) -> tuple[np.ndarray, np.ndarray]:
    """Support and log-probabilities of the composed randomized-response privacy loss
    (the points of probability zero in floating point left out)."""
    from scipy.special import gammaln  # lazy: keeps import privgraph.audit free of scipy

    groups: dict[float, int] = {}
    for c in charges:
        if c.epsilon > 0:
            groups[c.epsilon] = groups.get(c.epsilon, 0) + c.count
    support = math.prod(k + 1 for k in groups.values())
    if support > _MAX_SUPPORT:
        raise InvalidInput(
            f"exact optimal composition needs {support} support points (> {_MAX_SUPPORT}); "
            "use method='pld'"
        )
    loss, logp = np.zeros(1), np.zeros(1)
    for eps, k in groups.items():
        flips = _likely_flips(k, eps)  # number of invocations whose loss is -eps
        lp = (gammaln(k + 1) - gammaln(flips + 1) - gammaln(k - flips + 1)
              + (k - flips) * (eps - np.logaddexp(0, eps)) - flips * np.logaddexp(0, eps))
        loss = (loss[:, None] + (k - 2 * flips) * eps).ravel()
        logp = (logp[:, None] + lp).ravel()
    return loss, logp


def _likely_flips(k: int, eps: float) -> np.ndarray:
    """The flip counts j (of k, each with probability 1 / (1 + e^eps)) whose probability
    can be told from zero in floating point: Hoeffding's bound puts every j at least
    ``20 sqrt(k)`` from the mean at ``2 exp(-800)``, which is 0.0 as a double, so leaving
    them out changes no sum. A million rounds then cost tens of thousands of terms.

    >>> _likely_flips(10, 0.1).tolist() == list(range(11)), len(_likely_flips(2_000_000, 0.01)) < 60_000
    (True, True)
    """
    mean, half = k * math.exp(-float(np.logaddexp(0, eps))), 20 * math.sqrt(k) + 1
    return np.arange(max(0, math.floor(mean - half)), min(k, math.ceil(mean + half)) + 1)


def _rr_delta(loss: np.ndarray, logp: np.ndarray, eps: float) -> float:
    """E[(1 - e^(eps - L))_+] for the privacy-loss variable L."""
    above = loss > eps
    return float(np.sum(np.exp(logp[above]) * -np.expm1(eps - loss[above])))


def _rr_tail(loss: np.ndarray, logp: np.ndarray):
    """``eps -> E[(1 - e^(eps - L))_+]`` in O(log support) per call, after one sort.

    With L sorted in decreasing order, the sum over L > eps is ``P - e^eps Q`` for the
    running sums ``P = sum p_i`` and ``Q = sum p_i e^(-L_i)``, kept as log-sums; each
    bisection step of :func:`optimal_epsilon` then reads two prefix sums instead of
    summing the whole support (which was cubic over a wide table's plan).

    >>> loss, logp = _rr_loss_distribution([Charge("rr", 0.1, 0.0, Neighbours.ADD_REMOVE).times(50)])
    >>> tail = _rr_tail(loss, logp)
    >>> all(abs(tail(e) - _rr_delta(loss, logp, e)) < 1e-15 for e in (0.0, 0.5, 1.3, 4.9, 5.0))
    True
    """
    order = np.argsort(-loss, kind="stable")
    ordered = loss[order]
    mass = np.logaddexp.accumulate(logp[order])
    tilted = np.logaddexp.accumulate(logp[order] - ordered)

    def delta_at(eps: float) -> float:
        above = int(np.searchsorted(-ordered, -eps, side="left"))  # how many L exceed eps
        if above == 0:
            return 0.0
        return max(0.0, math.exp(mass[above - 1]) - math.exp(eps + tilted[above - 1]))

    return delta_at


def optimal_shortfall(charges: Sequence[Charge], epsilon: float, delta: float) -> float:
    """How far exact optimal composition of pure ``charges`` is from affording ``epsilon``
    at a total ``delta``: <= 0 exactly when :func:`optimal_epsilon` is at most ``epsilon``.

    One pass over the support, no bisection: what a search over per-round epsilons asks
    (:func:`~privgraph.privacy.sieve.fit_rounds_to_budget`).

    >>> c = Charge("laplace", 0.1, 0.0, Neighbours.ADD_REMOVE).times(100)
    >>> optimal_shortfall([c], 4.8, 1e-6) <= 0 < optimal_shortfall([c], 4.7, 1e-6)
    True
    """
    keep = math.prod((1 - c.delta) ** c.count for c in charges)
    loss, logp = _rr_loss_distribution(charges)
    return _rr_delta(loss, logp, epsilon) - (1 - (1 - delta) / keep)


def optimal_epsilon(charges: Sequence[Charge], delta: float) -> float:
    """Exact optimal composition (Kairouz, Oh, Viswanath 2015), heterogeneous pure parts.

    >>> c = Charge("laplace", 0.1, 0.0, Neighbours.ADD_REMOVE)
    >>> round(optimal_epsilon([c.times(100)], 1e-6), 3)
    4.775
    """
    keep = math.prod((1 - c.delta) ** c.count for c in charges)
    target = 1 - (1 - delta) / keep
    if target <= 0:
        raise InvalidInput(
            f"target delta {delta!r} must exceed the charges' own total delta "
            f"{1 - keep!r}"
        )
    loss, logp = _rr_loss_distribution(charges)
    hi = float(loss.max()) if loss.size else 0.0
    delta_at = _rr_tail(loss, logp)
    if delta_at(0.0) <= target:
        return 0.0
    lo = 0.0
    for _ in range(200):  # bisection: delta(eps) is continuous and decreasing
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if delta_at(mid) <= target else (mid, hi)
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return hi


#: The largest charge epsilon the PLD accountant is asked to compose. Above it
#: ``dp_accounting``'s distribution of a pure charge overflows (e^epsilon, at 709.78) and a
#: Gaussian's grid grows as 1/sigma^2 (0.5 s at epsilon 10, 10 s at 100, minutes beyond):
#: :func:`pld_epsilon` refuses such a charge at once (a comparison then shows no PLD total).
PLD_MAX_EPSILON = 50.0
#: The largest discrete Laplace sensitivity, in grid units, whose exact curve the PLD accountant
#: is given. ``dp_accounting`` lists the privacy loss at every grid point of the sensitivity's
#: span: linear in it (0.37 s and 27 MB at 2**18, 1.5 s and 110 MB at 2**20, measured on this
#: project's 2-core machine); a table's shift is about ``2**12`` times its cells
#: (:func:`~privgraph.privacy.mechanisms.laplace_calibration`), so 20,000 cells are about 2**27:
#: over 100 s and 5.5 GB, for a total that equals the charge's epsilon to 1e-9. Above it the
#: charge enters as randomized response at its epsilon, the worst case of every epsilon-DP
#: mechanism (Kairouz, Oh, Viswanath 2015), so the total is still valid, at most as loose as
#: ``optimal`` composition. Public: the charge's parameters only.
PLD_MAX_SHIFT = _PLD_MAX_SHIFT  # defined beside the curve that reads it (privacy.events)


def pld_epsilon(charges: Sequence[Charge], delta: float) -> float:
    """Privacy-loss-distribution accounting with ``dp_accounting`` (pessimistic); a charge
    above :data:`PLD_MAX_EPSILON` is refused (InvalidInput) before any distribution is built.

    >>> pld_epsilon([Charge("laplace", 1e3, 0.0, Neighbours.ADD_REMOVE)], 1e-6)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: PLD accounting composes charges of epsilon up to 50; 'laplace' has epsilon 1000
    """
    if big := [c for c in charges if c.epsilon > PLD_MAX_EPSILON]:
        raise InvalidInput(f"PLD accounting composes charges of epsilon up to {PLD_MAX_EPSILON:g}; "
                           f"{big[0].mechanism!r} has epsilon {big[0].epsilon:g}")
    total, extra = None, 0.0
    for c in charges:
        pld, used_curve = _pld_of(c)
        pld = pld.self_compose(c.count) if c.count > 1 else pld
        total = pld if total is None else total.compose(pld)
        extra += c.count * c.slack if used_curve else 0.0
    return float(total.get_epsilon_for_delta(delta)) + extra


def _pld_of(c: Charge):
    """(``dp_accounting`` PLD of one invocation of ``c``, whether its exact curve was used): a
    discrete Laplace curve wider than :data:`PLD_MAX_SHIFT` grid units, and a charge with no
    curve, enter as randomized response at ``c.epsilon``.

    >>> from privgraph.privacy.mechanisms import laplace_charge
    >>> _pld_of(laplace_charge(1.0, 2.0, Neighbours.ADD_REMOVE, 10))[1]  # shift 2**16 + 10: exact
    True
    >>> _pld_of(laplace_charge(1.0, 2.0, Neighbours.ADD_REMOVE, 20_000))[1]  # shift about 2**27: randomized response
    False
    """
    # lazy: keeps import privgraph.audit free of scipy (dp_accounting imports it)
    from dp_accounting.pld import privacy_loss_distribution as pl
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    rate = 1.0 if c.sampling is None else c.sampling.pld_rate  # None: no exact curve behind it
    exact = c.curve.pld(rate) if c.curve is not None and rate is not None else None
    if exact is not None:
        return exact, True
    return pl.from_privacy_parameters(DifferentialPrivacyParameters(c.epsilon, c.delta)), False


def rdp_epsilon(charges: Sequence[Charge], delta: float) -> float:
    """Renyi-DP accounting at :data:`RDP_ORDERS`, converted by ``dp_accounting``.

    Gaussian curves go through ``dp_accounting``'s accountant (with its sub-sampling
    theorems); pure charges without one add the Renyi divergence of randomized response
    with the same epsilon, the largest of any eps-DP mechanism at every order.
    """
    # lazy: keeps import privgraph.audit free of scipy (dp_accounting imports it)
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    rel = {
        Neighbours.ADD_REMOVE: dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        Neighbours.REPLACE_ONE: dp_accounting.NeighboringRelation.REPLACE_ONE,
    }[charges[0].neighbours]
    orders = np.array(RDP_ORDERS, dtype=np.float64)
    total, extra = np.zeros_like(orders), 0.0
    for c in charges:
        event = _rdp_event(c)
        if event is None:
            total += c.count * _pure_rdp(c.epsilon, orders)
            continue
        acc = RdpAccountant(orders=list(RDP_ORDERS), neighboring_relation=rel)
        acc.compose(event, c.count)
        total += np.asarray(acc.rdp, dtype=np.float64)  # public (a copy of its curve at the orders)
        extra += c.count * c.slack
    return float(compute_epsilon(orders, total, delta)[0]) + extra


def _pure_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Renyi divergence of randomized response with ratio e^eps, at each order."""
    log_p = epsilon - np.logaddexp(0.0, epsilon)
    log_q = -np.logaddexp(0.0, epsilon)
    both = np.logaddexp(orders * log_p + (1 - orders) * log_q, orders * log_q + (1 - orders) * log_p)
    return both / (orders - 1)


def _rdp_event(c: Charge):
    """The dp_accounting event for a Gaussian-type or zCDP charge (its typed curve's
    :meth:`rdp_event`), or None for a pure charge that enters as randomized response."""
    event = c.curve.rdp_event(c.sampling) if c.curve is not None else None
    if event is not None:
        return event
    if c.delta > 0:
        raise InvalidInput(
            f"RDP cannot compose the approximate-DP charge {c.mechanism!r} "
            f"(epsilon={c.epsilon}, delta={c.delta}); use method='pld' or 'optimal'"
        )
    return None


class Accountant:
    """How a ledger's charges add up to one (epsilon, delta) guarantee: one subclass per
    method of the module docstring, one instance of each in :data:`ACCOUNTANTS`.

    A :class:`~privgraph.privacy.PrivacyPlan` holds one, chosen once by the variant that
    makes the plan; a :class:`~privgraph.privacy.Budget` checks charges by it. ``name`` is
    the text every report prints; :func:`as_accountant` turns a name into its accountant.

    >>> c = Charge("laplace", 0.1, 0.0, Neighbours.ADD_REMOVE).times(100)
    >>> OPTIMAL.name, round(OPTIMAL.total(Ledger.of(c), 1e-6).epsilon, 3), OPTIMAL.total(Ledger.of(c), 0.0).epsilon
    ('optimal', 4.775, 10.0)
    """

    #: The method's name (what reports print, the key in :data:`ACCOUNTANTS`).
    name: ClassVar[str] = ""
    #: Whether a budget under it needs a target delta > 0 (basic sums deltas; optimal at
    #: delta 0 reads pure charges by their sum).
    needs_delta: ClassVar[bool] = True
    #: Whether the total's delta is the sum of the charges' own deltas (a budget's remaining
    #: delta then shrinks) rather than the fixed target delta.
    sums_deltas: ClassVar[bool] = False

    def epsilon(self, charges: Sequence[Charge], delta: float) -> float:
        """The composed epsilon of non-empty ``charges`` at target ``delta``."""
        raise NotImplementedError

    def compose(self, charges: Sequence[Charge], delta: float | None) -> PrivacyCost:
        """Compose ``charges`` to a total delta of ``delta``: never more than basic composition
        when ``delta`` covers the charges' own deltas."""
        if not charges:
            return PrivacyCost(0.0, 0.0, self.name)
        if delta is None:
            raise InvalidInput(f"composition method {self.name!r} needs a target total delta")
        check_delta(delta, "delta")
        return PrivacyCost(min(self.epsilon(charges, delta), _basic_if_covered(charges, delta)), delta, self.name)

    def reading(self, delta: float | None) -> "Accountant":
        """The accountant a total at target ``delta`` is read by (itself, but for optimal at
        delta 0 or None: pure charges compose optimally by their sum)."""
        return self

    def total(self, ledger: Ledger, delta: float | None) -> PrivacyCost:
        """The guarantee ``ledger`` has under a budget of this accountant at target ``delta``
        (:func:`~privgraph.privacy.ledger.guarantee`, the one rule)."""
        if ledger.unit is not None:
            from privgraph.privacy.person import person_cost  # cycle: person builds on the ledger

            rows = Ledger(ledger.charges, ledger.caveats)
            return person_cost(self.total(rows, ledger.unit.row_delta if delta else delta), ledger.unit.group)
        return ledger.total(self.reading(delta), delta)

    def check_budget(self, delta: float) -> None:
        """Refuse a budget's ``delta`` this accountant cannot compose to."""
        if self.needs_delta and delta == 0:
            raise InvalidInput(f"composition {self.name!r} needs delta > 0, got delta=0")

    def __eq__(self, other) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Basic(Accountant):
    """Sum of epsilons and of deltas (needs no target; valid for adaptive charges)."""

    name, needs_delta, sums_deltas = "basic", False, True

    def compose(self, charges: Sequence[Charge], delta: float | None = None) -> PrivacyCost:
        eps = math.fsum(c.count * c.epsilon for c in charges)
        dlt = math.fsum(c.count * c.delta for c in charges)
        return PrivacyCost(eps, min(dlt, 1.0), self.name)


class Advanced(Accountant):
    """Heterogeneous advanced composition (:func:`advanced_epsilon`)."""

    name = "advanced"

    def epsilon(self, charges, delta):
        return advanced_epsilon(charges, delta)


class Optimal(Accountant):
    """Exact optimal composition of pure charges (:func:`optimal_epsilon`); at delta 0 their sum."""

    name, needs_delta = "optimal", False

    def epsilon(self, charges, delta):
        return optimal_epsilon(charges, delta)

    def reading(self, delta):
        return self if delta else BASIC


class Pld(Accountant):
    """``dp_accounting``'s privacy-loss distributions (:func:`pld_epsilon`)."""

    name = "pld"

    def epsilon(self, charges, delta):
        return pld_epsilon(charges, delta)


class Rdp(Accountant):
    """``dp_accounting``'s Renyi accountant at :data:`RDP_ORDERS` (:func:`rdp_epsilon`)."""

    name = "rdp"

    def epsilon(self, charges, delta):
        return rdp_epsilon(charges, delta)


BASIC, ADVANCED, OPTIMAL, PLD, RDP = Basic(), Advanced(), Optimal(), Pld(), Rdp()
#: The accountants by name, in the order reports list them.
ACCOUNTANTS: dict[str, Accountant] = {a.name: a for a in (BASIC, ADVANCED, OPTIMAL, PLD, RDP)}
#: Their names (what :meth:`~privgraph.privacy.ledger.Ledger.total` and ``Budget`` accept).
METHODS = tuple(ACCOUNTANTS)


def as_accountant(method, what: str = "composition method") -> Accountant:
    """The accountant ``method`` is, or names (the one place a name becomes an accountant).

    >>> as_accountant("rdp") is RDP, as_accountant(BASIC) is BASIC
    (True, True)
    >>> as_accountant("exact")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: composition method must be one of ('basic', 'advanced', 'optimal', 'pld', 'rdp'), got 'exact'
    """
    if isinstance(method, Accountant):
        return method
    return ACCOUNTANTS[one_of(what, method, METHODS)]


def accountant_for(delta: float) -> Accountant:
    """The accountant a plan fixed in advance is reserved and reported under: exact optimal
    composition (Kairouz, Oh, Viswanath; exact for heterogeneous pure charges) when a
    target ``delta > 0`` pays for it, basic composition at ``delta = 0``. The one place that
    decides which delta goes with which composition for the estimators' pure plans.

    >>> accountant_for(1e-6), accountant_for(0.0)
    (Optimal(), Basic())
    """
    return OPTIMAL if delta > 0 else BASIC
