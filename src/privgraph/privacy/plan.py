"""A privacy plan: what a fit will charge, stated before any data is read.

OpenDP's measurement in one small value: the neighbouring relation of the guarantee, the
accountant the charges are added up by (:class:`~privgraph.privacy.composition.Accountant`,
chosen once by the variant that makes the plan), and the charges themselves. A plan *is* a
:class:`~privgraph.privacy.Ledger` (the charges and caveats a fit will record), with the
relation and the composition it is read under; every estimator's ``privacy_plan(domain,
n_rows)`` returns one, and it equals the ledger the fit then charges.
"""

from __future__ import annotations

from dataclasses import dataclass

from privgraph.privacy.budget import Budget, check_affordable
from privgraph.privacy.composition import BASIC, Accountant, as_accountant
from privgraph.privacy.ledger import Ledger, PrivacyCost
from privgraph.privacy.neighbours import Neighbours


@dataclass(frozen=True, eq=False)
class PrivacyPlan(Ledger):
    """The charges a fit will make (a :class:`Ledger`), under ``relation``, composed by ``accountant``.

    ``delta`` is the target delta the composition is read at (the estimator's); equality
    with a ledger compares the charges and caveats, so ``plan == est.fit(X).ledger_``.

    Examples
    --------
    >>> from privgraph.privacy import Charge
    >>> c = Charge("laplace", 0.25, 0.0, Neighbours.REPLACE_ONE, sensitivity=2.0)
    >>> from privgraph.privacy.composition import BASIC
    >>> plan = PrivacyPlan.of_ledger(Ledger.of(c.times(4)), Neighbours.REPLACE_ONE, BASIC)
    >>> plan.epsilon(), plan == Ledger.of(c.times(4)), plan.ledger == Ledger.of(c.times(4)), plan.composition
    (1.0, True, True, 'basic')
    >>> plan.check(Budget(0.5))
    Traceback (most recent call last):
    ...
    privgraph.privacy.budget.BudgetExceeded: budget exceeded: 'laplace' asks epsilon=0.25, ...
    """

    relation: Neighbours = Neighbours.REPLACE_ONE
    accountant: Accountant = BASIC
    delta: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "relation", Neighbours.parse(self.relation))
        object.__setattr__(self, "accountant", as_accountant(self.accountant))  # a name: converted once

    @classmethod
    def of_ledger(cls, ledger: Ledger, relation, accountant: Accountant | str,
                  delta: float | None = None) -> "PrivacyPlan":
        """The plan of ``ledger``'s charges and caveats under ``relation`` and ``accountant``."""
        return cls(ledger.charges, ledger.caveats, ledger.unit, relation, accountant, delta)

    @property
    def composition(self) -> str:
        """The name of the plan's accountant (what reports print)."""
        return self.accountant.name

    @property
    def ledger(self) -> Ledger:
        """The plain ledger of the plan's charges and caveats (what the fit records)."""
        return Ledger(self.charges, self.caveats, self.unit)

    def cost(self, delta: float | None = None) -> PrivacyCost:
        """The composed guarantee at target ``delta`` (default: the plan's own)."""
        return self.accountant.total(self.ledger, self.delta if delta is None else delta)

    def epsilon(self, delta: float | None = None) -> float:
        """The epsilon the fit will spend, composed by the plan's accountant at ``delta``."""
        return self.cost(delta).epsilon

    def check(self, budget: Budget | None) -> None:
        """Raise :class:`~privgraph.privacy.BudgetExceeded` if ``budget`` cannot pay the
        whole plan (:func:`~privgraph.privacy.check_affordable`); reserves nothing."""
        check_affordable(self.charges, budget)

    def with_caveat(self, text: str) -> "PrivacyPlan":
        return PrivacyPlan.of_ledger(super().with_caveat(text), self.relation, self.accountant, self.delta)

    def __eq__(self, other) -> bool:
        if isinstance(other, PrivacyPlan):
            return (self.ledger, self.relation, self.accountant, self.delta) == \
                (other.ledger, other.relation, other.accountant, other.delta)
        if isinstance(other, Ledger):
            return self.ledger == other
        return NotImplemented

    __hash__ = Ledger.__hash__


__all__ = ["PrivacyPlan"]
