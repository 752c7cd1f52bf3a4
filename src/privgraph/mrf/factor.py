"""Factors: log-valued tables over a sub-domain, and the axis plumbing they share.

A :class:`Factor` holds ``log psi(x_C)`` for a clique ``C`` with its axes in the order of
``factor.domain.names``. Multiplying factors adds their log-values after aligning axes
(:func:`expand`); summing a variable out is a log-sum-exp over its axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.validation import InvalidInput


@dataclass(frozen=True)
class Factor:
    """A log-potential ``log psi`` over ``domain`` (axes in ``domain.names`` order).

    Examples
    --------
    >>> f = Factor(Domain.of(a=2, b=3), np.zeros((2, 3)))
    >>> g = Factor(Domain.of(b=3), np.log([1.0, 2.0, 3.0]))
    >>> h = f * g
    >>> h.domain.names, h.values.shape
    (('a', 'b'), (2, 3))
    >>> np.round(np.exp(h.marginal(["b"]).values), 3)
    array([2., 4., 6.])
    >>> round(float(h.normalised().probabilities().sum()), 6)
    1.0
    """

    domain: Domain
    values: np.ndarray

    def __post_init__(self):
        values = np.asarray(self.values, dtype=np.float64)
        if values.shape != tuple(self.domain.shape):
            raise InvalidInput(
                f"factor values have shape {values.shape}, expected {tuple(self.domain.shape)} "
                f"for columns {list(self.domain.names)}"
            )
        object.__setattr__(self, "values", values)

    @property
    def names(self) -> tuple[str, ...]:
        return self.domain.names

    def __mul__(self, other: "Factor") -> "Factor":
        """The product ``psi_1 psi_2`` over the union of the two domains."""
        names = list(self.names) + [n for n in other.names if n not in self.names]
        sizes = [self.domain.size_of(n) if n in self.names else other.domain.size_of(n) for n in names]
        union = Domain(tuple(names), tuple(sizes))
        return Factor(union, expand(self.values, self.names, names) + expand(other.values, other.names, names))

    def marginal(self, names: Sequence[str]) -> "Factor":
        """Sum every other variable out (log-sum-exp), axes in the order of ``names``."""
        names = list(names)
        sub = self.domain.project(names)
        drop = tuple(i for i, n in enumerate(self.names) if n not in names)
        kept = [n for n in self.names if n in names]
        values = logsumexp(self.values, drop) if drop else self.values
        return Factor(sub, np.transpose(values, [kept.index(n) for n in names]))

    def normalised(self) -> "Factor":
        """The same factor shifted so that its exponentials sum to one."""
        return Factor(self.domain, self.values - logsumexp(self.values, None))

    def probabilities(self) -> np.ndarray:
        """``exp(values)``; a probability table when the factor is normalised."""
        return np.exp(self.values)


def logsumexp(values: np.ndarray, axis, keepdims: bool = False):
    """``log(sum(exp(values), axis))`` computed without overflow; -inf where all are -inf.

    >>> float(logsumexp(np.log([1.0, 3.0]), None))
    1.3862943611198906
    """
    top = np.max(values, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(values - top), axis=axis, keepdims=True)) + top
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out


def expand(values: np.ndarray, names: Sequence[str], target: Sequence[str]) -> np.ndarray:
    """View ``values`` (axes ``names``) broadcastable against a table with axes ``target``.

    The axes are transposed to their order in ``target`` and the missing ones get size 1.

    >>> expand(np.zeros((3, 2)), ["b", "a"], ["a", "c", "b"]).shape
    (2, 1, 3)
    """
    names = list(names)
    present = [n for n in target if n in names]
    moved = np.transpose(values, [names.index(n) for n in present])
    shape = [values.shape[names.index(n)] if n in names else 1 for n in target]
    return moved.reshape(shape)
