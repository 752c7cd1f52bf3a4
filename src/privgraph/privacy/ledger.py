"""The ledger: one charge per release, composed in one place.

A :class:`Charge` records what one release cost: the mechanism, its (epsilon, delta)
guarantee per invocation (after any amplification by sub-sampling), the neighbouring
relation it holds under, the sensitivity it was calibrated to, how many identical
invocations were reserved in advance (``count``, e.g. the cap of sieve-and-examine
rounds), and optionally an exact description of its privacy curve (``curve``) and
sub-sampling (``sampling``) that the PLD and RDP accountants can use for tighter totals.

A :class:`Ledger` is an immutable tuple of charges; ledgers add with ``+`` and
:meth:`Ledger.total` is the one place where charges are composed
(see :mod:`privgraph.privacy.composition` for the methods and their theorems).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

from privgraph.privacy.events import Curve, Sampling, as_curve, as_sampling
from privgraph.privacy.neighbours import Neighbours, check_delta
from privgraph.validation import InvalidInput, positive_int

@dataclass(frozen=True)
class Charge:
    """The privacy cost of one release (or of ``count`` identical releases planned ahead).

    Parameters
    ----------
    mechanism : str
        A short name ("laplace", "sparse_vector", ...).
    epsilon, delta : float
        The (epsilon, delta)-DP guarantee of one invocation, as charged.
    neighbours : Neighbours
        The neighbouring relation the guarantee holds under.
    sensitivity : float or None
        The sensitivity the noise was calibrated to (documentation; None if not one).
    count : int
        Number of identical invocations reserved in advance (a cap fixed before the data
        is seen, never a count the data chose).
    curve : Curve or None
        Optional exact privacy curve for the accountants, a typed curve of
        :mod:`privgraph.privacy.events` (:class:`~privgraph.privacy.events.DiscreteLaplaceCurve`,
        ``DiscreteGaussianCurve``, ``GaussianCurve``, ``ZCDPCurve``); its legacy tuple
        (``("zcdp", rho)``, ...) is converted on construction. None: only (epsilon, delta)
        is known (a generic (epsilon, delta)-DP mechanism).
    sampling : Sampling or None
        :class:`~privgraph.privacy.events.PoissonSampling` (add/remove) or
        :class:`~privgraph.privacy.events.WithoutReplacementSampling` (replace-one), or their
        tuples, when ``curve`` describes the mechanism *before* sub-sampling;
        ``epsilon``/``delta`` are always the amplified values.
    slack : float
        Privacy-loss slack per invocation already included in ``epsilon`` (the
        sampler's floating-point error); the exact accountants add it back.

    Examples
    --------
    >>> c = Charge("laplace", 0.5, 0.0, Neighbours.ADD_REMOVE, sensitivity=1.0)
    >>> c.is_pure
    True
    """

    mechanism: str
    epsilon: float
    delta: float
    neighbours: Neighbours
    sensitivity: float | None = None
    count: int = 1
    curve: Curve | None = None
    sampling: Sampling | None = None
    slack: float = 0.0
    note: str = field(default="", compare=False)

    def __post_init__(self):
        object.__setattr__(self, "neighbours", Neighbours.parse(self.neighbours))
        object.__setattr__(self, "curve", as_curve(self.curve))
        object.__setattr__(self, "sampling", as_sampling(self.sampling))
        if not (0 <= self.epsilon < float("inf")):
            raise InvalidInput(f"charge epsilon must be non-negative and finite, got {self.epsilon!r}")
        check_delta(self.delta, "charge delta")
        positive_int("charge count", self.count)

    @property
    def is_pure(self) -> bool:
        return self.delta == 0.0

    def times(self, count: int) -> "Charge":
        """The same charge reserved ``count`` times in advance."""
        return replace(self, count=self.count * positive_int("count", count))


@dataclass(frozen=True)
class PrivacyCost:
    """A composed guarantee: the whole ledger is (epsilon, delta)-DP by ``method``."""

    epsilon: float
    delta: float
    method: str

    def __iter__(self):
        return iter((self.epsilon, self.delta))


@dataclass(frozen=True)
class Ledger:
    """An immutable record of charges; ``+`` concatenates, :meth:`total` composes.

    Examples
    --------
    >>> c = Charge("laplace", 0.1, 0.0, Neighbours.ADD_REMOVE, sensitivity=1.0)
    >>> ledger = Ledger.of(c.times(100))
    >>> ledger.total().epsilon  # basic composition
    10.0
    >>> round(ledger.total("advanced", delta=1e-6).epsilon, 2)
    6.31
    >>> round(ledger.total("optimal", delta=1e-6).epsilon, 3)
    4.775
    """

    charges: tuple[Charge, ...] = ()
    caveats: tuple[str, ...] = ()
    #: The privacy unit when it is not the row: a :class:`~privgraph.privacy.person.PersonUnit`
    #: (the charges are then row-level, and :func:`guarantee` converts their total once).
    unit: object = None

    @classmethod
    def of(cls, *charges: Charge) -> "Ledger":
        return cls(tuple(charges))

    def __add__(self, other: "Ledger") -> "Ledger":
        if not isinstance(other, Ledger):
            return NotImplemented
        return Ledger(self.charges + other.charges, tuple(dict.fromkeys(self.caveats + other.caveats)),
                      _common_unit(self, other))

    def with_caveat(self, text: str) -> "Ledger":
        """The same charges with a caveat every report of this ledger must show.

        A caveat says what the guarantee does *not* cover, e.g. "domain read from the
        data: not private".

        >>> Ledger().with_caveat("x").with_caveat("x").caveats
        ('x',)
        """
        return Ledger(self.charges, tuple(dict.fromkeys(self.caveats + (text,))), self.unit)

    @property
    def is_private(self) -> bool:
        """False when a caveat voids the guarantee (the charges alone are then not the whole story)."""
        return not self.caveats

    def __len__(self) -> int:
        return len(self.charges)

    def __iter__(self):
        return iter(self.charges)

    @property
    def neighbours(self) -> frozenset[Neighbours]:
        """The neighbouring relations that appear in the ledger."""
        return frozenset(c.neighbours for c in self.charges)

    def total(self, method=None, delta: float | None = None) -> PrivacyCost:
        """Compose every charge by ``method`` (an accountant of
        :data:`~privgraph.privacy.composition.ACCOUNTANTS` or its name; None: basic
        composition); ``delta`` is the target total delta.

        ``basic`` needs no target (it sums deltas). The others need ``delta`` larger
        than the sum of the charges' own deltas. All charges must share one
        neighbouring relation.
        """
        from privgraph.privacy.composition import BASIC, compose  # cycle: privacy.ledger <-> privacy.composition

        if len(self.neighbours) > 1:
            raise InvalidInput(
                "cannot compose charges under different neighbouring relations "
                f"{sorted(n.value for n in self.neighbours)}; convert them first"
            )
        return compose(self.charges, BASIC if method is None else method, delta)

    def rows(self) -> list[dict]:
        """One plain dict per charge (for tables, JSON and benchmark rows)."""
        return [
            {
                "mechanism": c.mechanism,
                "neighbours": c.neighbours.value,
                "epsilon": c.epsilon,
                "delta": c.delta,
                "sensitivity": c.sensitivity,
                "count": c.count,
                "note": c.note,
            }
            for c in self.charges
        ]


def guarantee(ledger: Ledger, method, delta: float | None) -> PrivacyCost:
    """The guarantee ``ledger`` has under a budget composed by ``method`` (an accountant or
    its name: :meth:`~privgraph.privacy.composition.Accountant.total`) at target ``delta``.

    The one rule, shared by :class:`~privgraph.privacy.Budget` and every report of a
    result: ``basic`` sums the charges (it needs no target), as does ``optimal`` at
    ``delta`` 0 or None (pure charges compose optimally by their sum); every other method
    composes to the target ``delta``.

    >>> c = Charge("laplace", 0.1, 0.0, Neighbours.ADD_REMOVE, sensitivity=1.0)
    >>> tuple(guarantee(Ledger.of(c.times(10)), "optimal", 0.0))
    (1.0, 0.0)
    >>> cost = guarantee(Ledger.of(c.times(100)), "optimal", 1e-6)
    >>> round(cost.epsilon, 3), cost.delta, cost.method
    (4.775, 1e-06, 'optimal')

    A ledger with a person unit (:mod:`privgraph.privacy.person`) holds row-level charges: they
    are composed at the row-level target delta the fit ran at, then converted once by group
    privacy (:func:`~privgraph.privacy.person.person_cost`); ``delta`` is then the person's.
    """
    from privgraph.privacy.composition import as_accountant  # cycle: privacy.ledger <-> privacy.composition

    return as_accountant(method).total(ledger, delta)


def _common_unit(a: Ledger, b: Ledger):
    """The unit of ``a + b``: the one they share; a ledger without charges takes the other's.
    Charges of different units do not compose (convert them first)."""
    if a.unit == b.unit or (not b.charges and b.unit is None):
        return a.unit
    if not a.charges and a.unit is None:
        return b.unit
    raise InvalidInput(f"cannot compose charges of different privacy units ({a.unit!r} and {b.unit!r})")


def merge(ledgers: Iterable[Ledger]) -> Ledger:
    """Concatenate several ledgers.

    >>> merge([Ledger(), Ledger()]).charges
    ()
    """
    out = Ledger()
    for ledger in ledgers:
        out = out + ledger
    return out
