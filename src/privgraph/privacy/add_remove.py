"""The add/remove form of any replace-one estimator: the size released, the data resized to
it, the estimator run on the resized data, its ledger relabelled.

:mod:`privgraph.privacy.resize` has the reduction and its proof; this module orchestrates it
once for every estimator with the contract of :mod:`privgraph.estimator`: a replace-one
``privacy_plan(domain, n_rows)`` from public facts, and ``fit(data, budget=...)`` that
leaves its ledger in ``ledger_`` and charges what the plan said. It knows nothing of what
the estimator computes. The data's secret resize (``resize(engine, m, sampler)``,
:func:`privgraph.data.subset.resize_engine`) is passed in, so this module stays in the
privacy layer.

* :class:`AddRemove` is the whole wrapper (:meth:`AddRemove.plan`, :meth:`AddRemove.fit`):
  the size with :data:`~privgraph.privacy.resize.SIZE_SHARE` of the budget, then the
  estimator built at the rest (``estimator_at(epsilon, sampler)``) on m rows.
* :func:`resized_plan` and :func:`fit_resized` are its second half, for a caller that
  releases the size once for several stages and plans them all at m (the release).

Mechanisms: the size is a Laplace count (add/remove, sensitivity 1); the estimator's
charges are its own (replace-one), recorded under add/remove by
:func:`~privgraph.privacy.resize.as_add_remove`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Protocol

from privgraph.privacy.budget import Budget, BudgetTooSmall, reserve_plan
from privgraph.privacy.composition import Accountant, as_accountant
from privgraph.privacy.ledger import Ledger
from privgraph.privacy.mechanisms import laplace_scale
from privgraph.privacy.resize import (
    RESIZED, as_add_remove, public_size, release_public_size, size_charge, size_epsilons, whole_epsilon,
)
from privgraph.privacy.samplers import NoiseSampler


class ReplaceOneEstimator(Protocol):
    """What the wrapper needs of an estimator: its replace-one plan and fit (the contract)."""

    ledger_: Ledger

    def privacy_plan(self, domain, n_rows: int) -> Ledger: ...

    def fit(self, X, **kwargs): ...


class AddRemoveFit(NamedTuple):
    """What :meth:`AddRemove.fit` returns: the fitted replace-one estimator, the whole
    add/remove ledger (the size's charge, then the estimator's relabelled), the public size
    m it ran on and the released size ``n_hat``."""

    estimator: ReplaceOneEstimator
    ledger: Ledger
    m: int
    n_hat: float


@dataclass(frozen=True)
class AddRemove:
    """The add/remove reduction of a replace-one estimator at the whole budget (epsilon, delta)
    composed by ``accountant`` (an accountant or its name, converted once;
    :func:`~privgraph.privacy.resize.size_epsilons` splits it; :attr:`composition` is its name);
    ``minimum``: the least public size (e.g. the number of columns).

    Examples
    --------
    >>> ar = AddRemove(1.0, 1e-6, "optimal")
    >>> ar.epsilons, ar.composition
    ((0.01, 0.99), 'optimal')
    >>> ar.at_guess(100_000)
    (98687, 0.99)
    """

    epsilon: float
    delta: float
    accountant: Accountant
    minimum: int = 1

    def __post_init__(self):
        object.__setattr__(self, "accountant", as_accountant(self.accountant))

    @property
    def composition(self) -> str:
        """The name of the reduction's accountant (what reports print)."""
        return self.accountant.name

    @property
    def epsilons(self) -> tuple[float, float]:
        """``(size, rest)``: the size's epsilon and the estimator's."""
        return size_epsilons(self.epsilon, self.delta, self.accountant)

    def at_guess(self, n_rows: int) -> tuple[int, float]:
        """``(m, rest)``: the public size a public guess ``n_rows`` of n would give (its
        released size taken as the guess) and the estimator's epsilon."""
        size, rest = self.epsilons
        return public_size(int(n_rows), laplace_scale(size, 1.0), minimum=self.minimum), rest

    def release_size(self, engine, *, sampler: NoiseSampler, budget: Budget | None) -> tuple[int, float, Ledger]:
        """``(m, n_hat, ledger)``: steps 1 and 2 of the reduction, the size of ``engine``'s data
        released at the size's epsilon (charged to ``budget``) and the public m it gives
        (:func:`~privgraph.privacy.resize.release_public_size`)."""
        return release_public_size(engine, epsilon=self.epsilons[0], sampler=sampler, budget=budget,
                                   minimum=self.minimum)

    def plan(self, estimator_at: Callable[[float, NoiseSampler | None], ReplaceOneEstimator], domain,
             n_rows: int) -> Ledger:
        """The charges :meth:`fit` will make at a public guess ``n_rows`` of n: the size's,
        then the estimator's plan at the m the guess gives, relabelled add/remove."""
        m, rest = self.at_guess(n_rows)
        inner = estimator_at(rest, None).privacy_plan(domain, m)
        return Ledger.of(size_charge(self.epsilons[0])) + as_add_remove(inner, RESIZED)

    def fit(self, estimator_at: Callable[[float, NoiseSampler | None], ReplaceOneEstimator], engine, *,
            resize: Callable, sampler: NoiseSampler, budget: Budget | None = None, **fit_kwargs) -> AddRemoveFit:
        """Release the size of ``engine``'s data (charged to ``budget``, by default one of the
        whole (epsilon, delta)), then fit ``estimator_at(rest, sampler)`` on the data resized
        secretly to the public m (:func:`fit_resized`). A refusal of the estimator's plan at m
        says what the whole budget must be."""
        size_epsilon, rest = self.epsilons
        budget = budget if budget is not None else Budget(self.epsilon, self.delta, composition=self.accountant)
        m, n_hat, sized = self.release_size(engine, sampler=sampler, budget=budget)
        inner = estimator_at(rest, sampler)
        try:
            resized = fit_resized(inner, engine, m, resize=resize, sampler=sampler, budget=budget,
                                  size_epsilon=size_epsilon, **fit_kwargs)
        except BudgetTooSmall as err:  # a function of the released size: say it in the caller's epsilon
            if err.needed is None:
                raise
            whole = whole_epsilon(err.needed, self.delta, self.accountant)
            raise BudgetTooSmall(f"--epsilon {self.epsilon:g} is too small for this table: {err}; the whole "
                                 f"budget must then be epsilon >= {whole:.3g}", whole) from err
        return AddRemoveFit(inner, sized + resized, m, n_hat)


def resized_plan(estimator: ReplaceOneEstimator, domain, m: int, size_epsilon: float) -> Ledger:
    """``estimator``'s replace-one plan at ``m`` rows, relabelled add/remove
    (:func:`~privgraph.privacy.resize.as_add_remove`): what running it on the data resized
    to m rows, after the size's release at ``size_epsilon``, will charge. A plan refused at
    m says that the size was spent (:func:`refused_after_size`)."""
    try:
        return as_add_remove(estimator.privacy_plan(domain, m), RESIZED)
    except BudgetTooSmall as err:  # a function of the released size only
        raise refused_after_size(err, size_epsilon, m) from err


def fit_resized(estimator: ReplaceOneEstimator, engine, m: int, *, resize: Callable, sampler: NoiseSampler,
                budget: Budget, size_epsilon: float, plan: Ledger | None = None, **fit_kwargs) -> Ledger:
    """Fit the replace-one ``estimator`` on ``engine``'s data resized secretly to ``m`` rows
    (``resize(engine, m, sampler)``), its whole plan (``plan``, if the caller has made it:
    :func:`resized_plan`) reserved on the add/remove ``budget`` first; its ledger,
    relabelled add/remove (:mod:`privgraph.privacy.resize` has the reduction and its proof)."""
    plan = plan if plan is not None else resized_plan(estimator, engine.domain, m, size_epsilon)
    reserve_plan(plan.charges, budget)
    estimator.fit(resize(engine, m, sampler), **fit_kwargs)  # its own replace-one budget
    return as_add_remove(estimator.ledger_, RESIZED)


def refused_after_size(err: BudgetTooSmall, size_epsilon: float, m: int) -> BudgetTooSmall:
    """``err`` (a plan refused at m rows under add/remove) saying that the size was spent.

    >>> str(refused_after_size(BudgetTooSmall("too small"), 0.01, 990))
    'too small (add/remove: the number of rows was released first, at epsilon 0.01, and the plan made at 990 rows)'
    """
    return BudgetTooSmall(f"{err} (add/remove: the number of rows was released first, at epsilon "
                          f"{size_epsilon:.3g}, and the plan made at {m} rows)", err.needed)


__all__ = ["AddRemove", "AddRemoveFit", "ReplaceOneEstimator", "fit_resized", "refused_after_size", "resized_plan"]
