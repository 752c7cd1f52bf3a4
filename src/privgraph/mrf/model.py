"""Clique-structured Markov random fields in log-linear form, and the checks on cliques.

``p(x) = exp(sum_C theta_C(x_C) - A(theta))``: one log-potential table ``theta_C`` per clique
(a :class:`~privgraph.mrf.factor.Factor`), ``A`` the log-partition function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain, check_countable
from privgraph.mrf.factor import Factor
from privgraph.validation import InvalidInput, UnknownName

#: Largest clique table (cells) a model accepts: 8 bytes a cell, 80 MB.
MAX_TABLE_CELLS = 10_000_000

Clique = tuple[str, ...]


@dataclass(frozen=True)
class MarkovRandomField:
    """A discrete MRF: a domain and one log-potential factor per clique.

    Duplicate cliques are allowed (their potentials add). Variables in no clique are
    uniform.

    Examples
    --------
    >>> m = MarkovRandomField.of(Domain.of(a=2, b=2, c=3), ["a,b", ("b", "c")])
    >>> m.cliques
    (('a', 'b'), ('b', 'c'))
    >>> m.log_unnormalised(np.array([[0, 1, 2], [1, 1, 0]]))
    array([0., 0.])
    """

    domain: Domain
    factors: tuple[Factor, ...]

    @classmethod
    def of(
        cls,
        domain: Domain,
        cliques: Sequence[Sequence[str] | str],
        potentials: Sequence[np.ndarray] | None = None,
    ) -> "MarkovRandomField":
        """A model over ``cliques`` (validated) with the given log-potentials, zero by default."""
        cliques = check_cliques(domain, cliques)
        if potentials is None:
            potentials = [np.zeros(domain.project(c).shape) for c in cliques]
        if len(potentials) != len(cliques):
            raise InvalidInput(f"got {len(potentials)} potentials for {len(cliques)} cliques")
        return cls(domain, tuple(Factor(domain.project(c), p) for c, p in zip(cliques, potentials)))

    @property
    def cliques(self) -> tuple[Clique, ...]:
        return tuple(f.names for f in self.factors)

    @property
    def potentials(self) -> tuple[np.ndarray, ...]:
        return tuple(f.values for f in self.factors)

    def log_unnormalised(self, codes: np.ndarray) -> np.ndarray:
        """``sum_C theta_C(x_C)`` for each row of integer codes (columns in domain order)."""
        codes = np.asarray(codes)
        out = np.zeros(codes.shape[0])
        for f in self.factors:
            cols = [self.domain.index(n) for n in f.names]
            out += f.values[tuple(codes[:, c] for c in cols)]
        return out


def check_cliques(
    domain: Domain, cliques: Sequence[Sequence[str] | str], max_cells: int = MAX_TABLE_CELLS
) -> tuple[Clique, ...]:
    """Validate cliques against a domain and return them as tuples of names.

    A clique may be written as a comma-separated string ``"a,b"``.

    Examples
    --------
    >>> check_cliques(Domain.of(a=2, b=3), ["a,b", ["b"]])
    (('a', 'b'), ('b',))
    >>> check_cliques(Domain.of(a=2), [("a", "z")])
    Traceback (most recent call last):
    ...
    privgraph.validation.UnknownName: clique ('a', 'z') names columns ['z'] not in the domain ['a']
    >>> check_cliques(Domain.of(a=2), [])
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: the clique list is empty; give at least one clique of column names
    """
    if cliques is None or len(cliques) == 0:
        raise InvalidInput("the clique list is empty; give at least one clique of column names")
    return tuple(_check_clique(domain, c, max_cells) for c in cliques)


def _check_clique(domain: Domain, clique, max_cells: int) -> Clique:
    names = tuple(n.strip() for n in clique.split(",")) if isinstance(clique, str) else tuple(clique)
    if not names or any(not isinstance(n, str) or not n for n in names):
        raise InvalidInput(f"clique {clique!r} must be a non-empty sequence of column names")
    if len(set(names)) != len(names):
        raise InvalidInput(f"clique {names} names a column more than once")
    if missing := [n for n in names if n not in domain.names]:
        raise UnknownName(f"clique {names} names columns {missing} not in the domain {list(domain.names)}")
    if continuous := [n for n in names if n in domain.uncountable_names and domain.bounds_of(n) is None]:
        raise InvalidInput(
            f"clique {names} uses continuous columns {continuous} with no public bins: give each one \"bins\": k "
            "(or \"edges\") in the codebook, or \"bounds\" for public default bins"
        )
    cells = check_countable(domain.project(names)).cells()  # bounds-only columns: their default bins
    if cells > max_cells:
        raise InvalidInput(
            f"clique {names} would need a table of {cells:,} cells ({cells * 8 / 1e9:.3g} GB), "
            f"more than the limit of {max_cells:,} cells"
        )
    return names


def parse_cliques(text: str) -> tuple[tuple[str, ...], ...]:
    """Parse ``"a,b;b,c"`` into ``(("a", "b"), ("b", "c"))`` (the CLI's clique syntax).

    >>> parse_cliques("a,b; b,c")
    (('a', 'b'), ('b', 'c'))
    """
    return tuple(tuple(n.strip() for n in part.split(",")) for part in text.split(";") if part.strip())
