"""The domain of a dataset: column names, kinds and sizes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Mapping, Sequence


class Kind(enum.Enum):
    """How a column's values are ordered."""

    CATEGORICAL = "categorical"  # no order
    ORDINAL = "ordinal"  # levels in an explicit order (codes 0..size-1 follow it)
    CONTINUOUS = "continuous"  # real values; size is 0 (no finite code range)


@dataclass(frozen=True)
class Domain:
    """Names, kinds, sizes and level labels of the columns of a discrete-coded dataset.

    Discrete columns are coded 0..size-1 in the order of ``levels``.

    Examples
    --------
    >>> d = Domain.of(a=2, b=3)
    >>> d.names, d.shape
    (('a', 'b'), (2, 3))
    >>> d.project(["b"]).shape
    (3,)
    """

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    kinds: tuple[Kind, ...] = ()
    levels: tuple[tuple, ...] = field(default=(), compare=False)

    def __post_init__(self):
        if len(set(self.names)) != len(self.names):
            dup = sorted({n for n in self.names if self.names.count(n) > 1})
            raise ValueError(f"duplicate column names {dup}")
        if len(self.sizes) != len(self.names):
            raise ValueError(f"got {len(self.sizes)} sizes for {len(self.names)} names")
        if not self.kinds:
            object.__setattr__(self, "kinds", tuple(Kind.CATEGORICAL for _ in self.names))
        if not self.levels:
            object.__setattr__(self, "levels", tuple(tuple(range(s)) for s in self.sizes))

    @classmethod
    def of(cls, **sizes: int) -> "Domain":
        """A categorical domain from keyword sizes, in keyword order."""
        return cls(tuple(sizes), tuple(int(s) for s in sizes.values()))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.sizes

    def size_of(self, name: str) -> int:
        return self.sizes[self.index(name)]

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"column {name!r} not in domain {list(self.names)}") from None

    def project(self, names: Sequence[str]) -> "Domain":
        """The sub-domain over ``names`` (in the order given)."""
        if missing := [n for n in names if n not in self.names]:
            raise KeyError(f"columns {missing} not in domain {list(self.names)}")
        idx = [self.names.index(n) for n in names]
        return Domain(
            tuple(names),
            tuple(self.sizes[i] for i in idx),
            tuple(self.kinds[i] for i in idx),
            tuple(self.levels[i] for i in idx),
        )

    def cells(self, names: Sequence[str] | None = None) -> int:
        """Number of cells of the table over ``names`` (all columns by default)."""
        out = 1
        for s in (self.project(names) if names is not None else self).sizes:
            out *= s
        return out

    def as_dict(self) -> Mapping[str, int]:
        return dict(zip(self.names, self.sizes))
