"""A privacy budget that refuses a charge it cannot pay, before any noise is drawn."""

from __future__ import annotations

from typing import Sequence

from privgraph.privacy.composition import BASIC, Accountant, as_accountant
from privgraph.privacy.ledger import Charge, Ledger, PrivacyCost
from privgraph.privacy.neighbours import Neighbours, check_delta, check_epsilon  # noqa: F401 (doctests)
from privgraph.validation import InvalidInput

_TOLERANCE = 1e-12


class BudgetExceeded(RuntimeError):
    """A charge was refused: it names what was asked and what was left.

    Attributes
    ----------
    requested : Charge
    remaining : tuple[float, float]
        (epsilon, delta) left under the budget's composition method.
    """

    def __init__(self, requested: Charge, remaining: tuple[float, float], would_spend: PrivacyCost):
        self.requested = requested
        self.remaining = remaining
        self.would_spend = would_spend
        super().__init__(
            f"budget exceeded: {requested.mechanism!r} asks epsilon={requested.epsilon:.6g}, "
            f"delta={requested.delta:.3g} x {requested.count}; composed by "
            f"{would_spend.method} the total would be epsilon={would_spend.epsilon:.6g}, "
            f"delta={would_spend.delta:.3g}; remaining epsilon={remaining[0]:.6g}, "
            f"delta={remaining[1]:.3g}"
        )


class BudgetTooSmall(InvalidInput):
    """The budget cannot pay for a mechanism at a noise level that leaves its output any use
    (e.g. a cap of PC's tests whose noise would make them coin flips); raised before any
    budget is spent.

    ``needed``: the epsilon the refused mechanism would need (None where there is none to
    name), so that a caller that gave it a share of a larger budget can say what that
    budget must be.

    >>> BudgetTooSmall("too small", 2.0).needed
    2.0
    """

    def __init__(self, message: str, needed: float | None = None):
        super().__init__(message)
        self.needed = needed


class Budget:
    """A total (epsilon, delta) and the ledger of what has been reserved against it.

    :meth:`reserve` composes the ledger plus the new charge by the budget's method and
    refuses (raises :class:`BudgetExceeded`, recording nothing) if the total would exceed
    the budget. Mechanisms call it before drawing noise.

    ``composition`` is an :class:`~privgraph.privacy.composition.Accountant` or its name
    (:attr:`accountant` holds the accountant, :attr:`composition` its name).
    With ``composition="basic"`` (the default) the charges may be chosen adaptively, from
    earlier noisy outputs: basic composition is a valid privacy filter (Rogers, Roth,
    Ullman, Vadhan 2016). The tighter methods ("advanced", "optimal", "pld", "rdp") are
    valid only for a plan fixed in advance: reserve a cap of rounds up front
    (``charge.times(cap)``) before looking at the data, never a count the data chose.

    Examples
    --------
    >>> b = Budget(1.0)
    >>> b.reserve(Charge("laplace", 0.6, 0.0, Neighbours.ADD_REMOVE, sensitivity=1.0))
    >>> b.remaining()
    (0.4, 0.0)
    >>> b.reserve(Charge("laplace", 0.6, 0.0, Neighbours.ADD_REMOVE, sensitivity=1.0))
    Traceback (most recent call last):
    ...
    privgraph.privacy.budget.BudgetExceeded: budget exceeded: 'laplace' asks epsilon=0.6, ...
    >>> len(b.ledger)
    1
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, composition: Accountant | str = BASIC):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.accountant = as_accountant(composition, "composition")
        self.accountant.check_budget(self.delta)
        self._ledger = Ledger()

    @property
    def composition(self) -> str:
        """The name of the budget's accountant (what reports print)."""
        return self.accountant.name

    def __repr__(self) -> str:
        return f"Budget(epsilon={self.epsilon}, delta={self.delta}, composition={self.composition!r})"

    @property
    def ledger(self) -> Ledger:
        return self._ledger

    def _compose(self, ledger: Ledger) -> PrivacyCost:
        return self.accountant.total(ledger, self.delta)

    def spent(self) -> PrivacyCost:
        return self._compose(self._ledger)

    def remaining(self) -> tuple[float, float]:
        """(epsilon, delta) left; under non-basic methods, delta is the fixed target."""
        spent = self.spent()
        eps = max(0.0, round(self.epsilon - spent.epsilon, 12))
        dlt = max(0.0, self.delta - spent.delta) if self.accountant.sums_deltas else self.delta
        return eps, dlt

    def can_afford(self, charge: Charge) -> bool:
        try:
            would = self._compose(self._ledger + Ledger.of(charge))
        except ValueError:
            return False
        return would.epsilon <= self.epsilon + _TOLERANCE and would.delta <= self.delta + _TOLERANCE

    def reserve(self, charge: Charge) -> None:
        """Record ``charge`` if the budget can pay it; otherwise raise, recording nothing."""
        if not isinstance(charge, Charge):
            raise TypeError(f"reserve expects a Charge, got {type(charge).__name__}")
        if self._ledger.charges and charge.neighbours not in self._ledger.neighbours:
            raise InvalidInput(
                f"charge under {charge.neighbours.value} cannot join a budget spent under "
                f"{sorted(n.value for n in self._ledger.neighbours)}"
            )
        if not self.can_afford(charge):
            try:
                would = self._compose(self._ledger + Ledger.of(charge))
            except ValueError:
                would = (self._ledger + Ledger.of(charge)).total(BASIC)
            raise BudgetExceeded(charge, self.remaining(), would)
        self._ledger = self._ledger + Ledger.of(charge)


def reserve_plan(planned: Sequence[Charge], budget: Budget | None) -> Ledger:
    """Reserve a whole plan on ``budget``, or none of it (checked on a copy first).

    >>> b = Budget(1.0)
    >>> reserve_plan([Charge("laplace", 0.5, 0.0, Neighbours.REPLACE_ONE).times(3)], b)
    Traceback (most recent call last):
    ...
    privgraph.privacy.budget.BudgetExceeded: budget exceeded: 'laplace' asks epsilon=0.5, ...
    >>> len(b.ledger)
    0
    """
    planned = tuple(planned)
    if budget is not None:
        check_affordable(planned, budget)
        for c in planned:
            budget.reserve(c)
    return Ledger(planned)


def check_affordable(planned: Sequence[Charge], budget: Budget | None) -> None:
    """Raise BudgetExceeded if ``budget`` cannot pay the whole plan; reserve nothing.

    The one place where a plan is checked before the first of its charges is reserved
    (so a run is refused before any noise, not half-way through).

    >>> b = Budget(1.0)
    >>> check_affordable([Charge("laplace", 0.4, 0.0, Neighbours.REPLACE_ONE).times(2)], b)
    >>> len(b.ledger)
    0
    """
    if budget is None:
        return
    trial = Budget(budget.epsilon, budget.delta, composition=budget.accountant)
    for c in budget.ledger.charges + tuple(planned):
        trial.reserve(c)
