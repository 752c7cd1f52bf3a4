"""The domain of a dataset: column names, kinds and sizes."""

from __future__ import annotations

from dataclasses import dataclass, field
import enum
from typing import Mapping, Sequence

import numpy as np

from privgraph.data.missing import MISSING, missing_code
from privgraph.data.records import Dialect
from privgraph.validation import InvalidInput, UnknownName


class Kind(enum.Enum):
    """How a column's values are ordered."""

    CATEGORICAL = "categorical"  # no order
    ORDINAL = "ordinal"  # levels in an explicit order (codes 0..size-1 follow it)
    CONTINUOUS = "continuous"  # real values; size 0, or k with public bins (codes 0..k-1 are the bins, in order)


@dataclass(frozen=True)
class Domain:
    """Names, kinds, sizes and level labels of the columns of a discrete-coded dataset.

    Discrete columns are coded 0..size-1 in the order of ``levels``. ``bounds`` holds a
    ``(lo, hi)`` pair for each continuous column that has public bounds (None otherwise).
    ``public`` is False when any of it was read from the data (:func:`~privgraph.data.infer_domain` and its
    siblings without levels): estimators then say "domain read from the data: not
    private" in their ledger. ``bins`` holds the public :class:`~privgraph.data.bins.Bins`
    of each continuous column that has them (None otherwise): such a column keeps its kind
    (continuous, with its bounds and units) and has size k, its codes the k bins in order,
    so it is counted, tested and modelled as an ordinal column of k levels
    (:attr:`discrete_names`, :meth:`is_ordered`); without bins a continuous column has size
    0 and is counted only through the default bins of its bounds (:func:`check_countable`). ``public_columns`` names the columns
    whose *values* are public knowledge (the codebook's ``"public": true``, see
    :func:`check_public_column`). A column whose levels hold
    :data:`~privgraph.data.missing.MISSING` (last; for a binned column after its bins, for an
    unbinned continuous one its only "level") codes its missing values to it
    (:attr:`missing_names`). Build a public domain from a codebook
    (:func:`privgraph.data.read_codebook`), from categorical dtypes, or by hand.

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
    bounds: tuple = field(default=(), compare=False)
    public: bool = field(default=True, compare=False)
    #: How a CSV file of this domain is read (the codebook's ``"csv"``; None: RFC 4180, UTF-8, header).
    csv: object = field(default=None, compare=False, repr=False)
    #: The public bins of each continuous column that has them (None otherwise).
    bins: tuple = ()
    #: The columns whose values are public knowledge, not protected (:func:`check_public_column`).
    public_columns: frozenset = field(default=frozenset(), compare=False)
    #: The public rules of the derived columns (:class:`~privgraph.data.derived.Rule`: a column
    #: computed from others, the codebook's ``"derived"``), in the domain's column order.
    derived: tuple = field(default=(), compare=False)

    def __post_init__(self):
        if len(set(self.names)) != len(self.names):
            dup = sorted({n for n in self.names if self.names.count(n) > 1})
            raise InvalidInput(f"duplicate column names {dup}")
        if len(self.sizes) != len(self.names):
            raise InvalidInput(f"got {len(self.sizes)} sizes for {len(self.names)} names")
        if not self.kinds:
            object.__setattr__(self, "kinds", tuple(Kind.CATEGORICAL for _ in self.names))
        if not self.levels:
            object.__setattr__(self, "levels", tuple(tuple(range(s)) for s in self.sizes))
        if not self.bounds:
            object.__setattr__(self, "bounds", tuple(None for _ in self.names))
        if len(self.bounds) != len(self.names):
            raise InvalidInput(f"got {len(self.bounds)} bounds for {len(self.names)} names")
        if not self.bins:
            object.__setattr__(self, "bins", tuple(None for _ in self.names))
        if len(self.bins) != len(self.names):
            raise InvalidInput(f"got {len(self.bins)} bins for {len(self.names)} names")
        if any(b is not None for b in self.bins):
            self._check_bins()
        object.__setattr__(self, "public_columns", frozenset(self.public_columns))
        if unknown := sorted(self.public_columns - set(self.names)):
            raise UnknownName(f"public columns {unknown} are not in the domain {list(self.names)}")
        object.__setattr__(self, "derived", tuple(sorted(self.derived, key=lambda r: self.index(r.target))))

    def _check_bins(self) -> None:
        """A binned column is continuous, of size k, its bounds the bins' (levels: their labels)."""
        levels, bounds = list(self.levels), list(self.bounds)
        for i, (name, kind, size, bins) in enumerate(zip(self.names, self.kinds, self.sizes, self.bins)):
            if bins is None:
                continue
            extra = (MISSING,) if missing_code(levels[i]) is not None else ()  # the missing level: code k
            if kind is not Kind.CONTINUOUS or size != bins.count + len(extra):
                raise InvalidInput(f"column {name!r} has {bins.count} bins{' and a missing level' if extra else ''}: "
                                   f"it must be continuous of size {bins.count + len(extra)}, got {kind.value} of size {size}")
            if len(levels[i]) != size:
                levels[i] = bins.labels() + extra
            bounds[i] = bins.bounds
        object.__setattr__(self, "levels", tuple(levels))
        object.__setattr__(self, "bounds", tuple(bounds))

    @classmethod
    def of(cls, **sizes: int) -> "Domain":
        """A categorical domain from keyword sizes, in keyword order."""
        return cls(tuple(sizes), tuple(int(s) for s in sizes.values()))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.sizes

    @property
    def discrete_names(self) -> tuple[str, ...]:
        """Names of the columns engines can count: the discrete ones and the binned continuous ones.

        >>> from privgraph.data.bins import make_bins
        >>> d = Domain(("a", "x", "z"), (2, 0, 4), (Kind.CATEGORICAL, Kind.CONTINUOUS, Kind.CONTINUOUS),
        ...            bins=(None, None, make_bins((0.0, 1.0), 4)))
        >>> d.discrete_names, d.uncountable_names, d.is_ordered("z")
        (('a', 'z'), ('x',), True)
        """
        return tuple(n for n, k, b in zip(self.names, self.kinds, self.bins) if k is not Kind.CONTINUOUS or b is not None)

    @property
    def uncountable_names(self) -> tuple[str, ...]:
        """Names of the continuous columns without bins (no finite code range: never counted)."""
        return tuple(n for n, k, b in zip(self.names, self.kinds, self.bins) if k is Kind.CONTINUOUS and b is None)

    @property
    def missing_names(self) -> tuple[str, ...]:
        """Names of the columns whose missing values are a level of their own (the codebook's
        ``"missing": "level"``, :mod:`privgraph.data.missing`): public, the codebook only.

        >>> from privgraph.data.missing import MISSING
        >>> Domain(("a", "b"), (3, 2), levels=(("x", "y", MISSING), ("u", "v"))).missing_names
        ('a',)
        """
        return tuple(n for n, lv in zip(self.names, self.levels) if missing_code(lv) is not None)

    def bins_of(self, name: str):
        """The public :class:`~privgraph.data.bins.Bins` of a continuous column, or None."""
        return self.bins[self.index(name)]

    def is_ordered(self, name: str) -> bool:
        """Whether a column's codes are ordered: ordinal, or continuous read through its bins."""
        i = self.index(name)
        return self.kinds[i] is Kind.ORDINAL or self.bins[i] is not None

    @property
    def code_dtype(self) -> np.dtype:
        """The smallest unsigned integer type that holds every column's codes (0..size-1).

        >>> Domain.of(a=2, b=4).code_dtype, Domain.of(a=2, b=300).code_dtype
        (dtype('uint8'), dtype('uint16'))
        """
        return np.min_scalar_type(max(max(self.sizes, default=1) - 1, 0))

    def size_of(self, name: str) -> int:
        return self.sizes[self.index(name)]

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise UnknownName(f"column {name!r} not in domain {list(self.names)}") from None

    def project(self, names: Sequence[str]) -> "Domain":
        """The sub-domain over ``names`` (in the order given)."""
        if missing := [n for n in names if n not in self.names]:
            raise UnknownName(f"columns {missing} not in domain {list(self.names)}")
        idx = [self.names.index(n) for n in names]
        return Domain(
            tuple(names),
            tuple(self.sizes[i] for i in idx),
            tuple(self.kinds[i] for i in idx),
            tuple(self.levels[i] for i in idx),
            tuple(self.bounds[i] for i in idx),
            self.public,
            self.csv,
            tuple(self.bins[i] for i in idx),
            self.public_columns & set(names),
            tuple(r for r in self.derived if r.target in names and set(r.sources) <= set(names)),
        )

    @property
    def derived_names(self) -> tuple[str, ...]:
        """The derived columns (:mod:`privgraph.data.derived`): computed from others by a public
        rule, never counted or modelled by a release."""
        return tuple(r.target for r in self.derived)

    def without_derived(self) -> "Domain":
        """The sub-domain a release models: every column but the derived ones (this domain
        where there are none).

        >>> from privgraph.data.derived import Rule
        >>> Domain.of(a=2, b=2, s=3).without_derived().names
        ('a', 'b', 's')
        >>> Domain(("a", "b", "s"), (2, 2, 3), derived=(Rule.parse("s", "a + b"),)).without_derived().names
        ('a', 'b')
        """
        if not self.derived:
            return self
        return self.project([n for n in self.names if n not in self.derived_names])

    @property
    def dialect(self):
        """The :class:`~privgraph.data.records.Dialect` a CSV file of this domain is read with."""
        return self.csv or Dialect()

    def cells(self, names: Sequence[str] | None = None) -> int:
        """Number of cells of the table over ``names`` (all columns by default)."""
        out = 1
        for s in (self.project(names) if names is not None else self).sizes:
            out *= s
        return out

    def as_dict(self) -> Mapping[str, int]:
        return dict(zip(self.names, self.sizes))

    def bounds_of(self, name: str) -> tuple[float, float] | None:
        """The public ``(lo, hi)`` of a continuous column, or None if it has none."""
        return self.bounds[self.index(name)]


def check_countable(domain: Domain) -> Domain:
    """``domain`` as every counting command counts it, else the one refusal (public: the domain
    only) that every counting command and ``plan`` share.

    A continuous column with bounds but no bins gets the public default bins of its bounds
    (:func:`~privgraph.data.bins.default_bins`; :func:`default_binned_names` names them); one
    with no bounds either is refused. Idempotent: a domain it returned comes back unchanged.

    >>> d = check_countable(Domain(("a", "x"), (2, 0), (Kind.CATEGORICAL, Kind.CONTINUOUS), bounds=(None, (0.0, 5.0))))
    >>> d.sizes, d.bins_of("x").edges[:3], check_countable(d) == d
    ((2, 10), (0.0, 0.5, 1.0), True)
    >>> check_countable(Domain(("a", "x"), (2, 0), (Kind.CATEGORICAL, Kind.CONTINUOUS)))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: columns ['x'] are continuous with no public bins and no bounds, so they cannot be counted: give each one "bounds": [lo, hi] (public default bins then follow from them) or "bins": k (with "scale": "linear" or "log") or "edges": [...] in the codebook (docs/data.md)
    """
    if cont := [n for n in domain.uncountable_names if domain.bounds_of(n) is None]:
        raise InvalidInput(f"columns {cont} are continuous with no public bins and no bounds, so they cannot be "
                           "counted: give each one \"bounds\": [lo, hi] (public default bins then follow from them) "
                           "or \"bins\": k (with \"scale\": \"linear\" or \"log\") or \"edges\": [...] in the "
                           "codebook (docs/data.md)")
    if not (names := default_binned_names(domain)):
        return domain
    from privgraph.data.bins import default_bins  # lazy: bins' doctests build Domains

    bins, sizes = list(domain.bins), list(domain.sizes)
    for name in names:
        i = domain.index(name)
        try:
            bins[i] = default_bins(domain.bounds[i])
        except InvalidInput as err:
            raise InvalidInput(f"column {name!r} (default bins from its bounds): {err}") from None
        sizes[i] = bins[i].count + (missing_code(domain.levels[i]) is not None)  # the missing level: one more
    return Domain(domain.names, tuple(sizes), domain.kinds, domain.levels, domain.bounds, domain.public, domain.csv,
                  tuple(bins), domain.public_columns, domain.derived)


def default_binned_names(domain: Domain, names=None) -> tuple[str, ...]:
    """The continuous columns (of ``names``, all by default) that :func:`check_countable`
    gives default bins: bounds, no bins of their own.

    >>> default_binned_names(Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS,) * 2, bounds=((0.0, 1.0), None)))
    ('x',)
    """
    wanted = domain.names if names is None else set(names)
    return tuple(n for n in domain.uncountable_names if n in wanted and domain.bounds_of(n) is not None)


def default_bins_notice(domain: Domain, names=None) -> str | None:
    """The one line a command prints for the columns (of ``names``) it counts through default
    bins, or None if there are none. Public: the codebook only.

    >>> default_bins_notice(Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS,) * 2, bounds=((0.0, 1.0), (1.0, 1e6))))
    'default bins (public, from the bounds; give "bins" or "edges" to choose): x: 10 linear over [0, 1]; y: 10 log over [1, 1e+06]'
    """
    if not (binned := default_binned_names(domain, names)):
        return None
    from privgraph.data.bins import default_bins  # lazy: bins' doctests build Domains

    parts = []
    for name in binned:
        lo, hi = domain.bounds_of(name)
        try:
            b = default_bins((lo, hi))
        except InvalidInput:  # too narrow: check_countable names it
            continue
        parts.append(f"{name}: {b.count} {b.scale} over [{lo:g}, {hi:g}]")
    return ("default bins (public, from the bounds; give \"bins\" or \"edges\" to choose): " + "; ".join(parts)
            if parts else None)


def check_public_column(domain: Domain, name: str, use: str) -> tuple:
    """The levels of ``name`` if the domain declares it a public discrete column, else the one
    refusal (public: the domain only, raised before any data is read).

    A column declared public (the codebook's ``"public": true``) is one whose every record's
    value is public knowledge, so the guarantee does not protect it: neighbouring data sets
    are then those that differ in one record's *other* values, its public value fixed, and
    anything computed from the public column alone (the size of each of its groups) may be
    released exactly. A command that releases per-group results with each group's size (a
    long table's pairs, ``privgraph direction --pair-column``) needs that declaration: without
    it a replaced record could move from one group to another, and the sizes would be private.
    Its ledger carries :func:`public_column_caveat`. Elsewhere the declaration changes nothing
    (the column is protected like any other). ``use`` names what needs it in the message.

    >>> d = Domain(("pair", "x"), (2, 0), (Kind.CATEGORICAL, Kind.CONTINUOUS), (("p0", "p1"), ()),
    ...            public_columns={"pair"})
    >>> check_public_column(d, "pair", "--pair-column")
    ('p0', 'p1')
    >>> check_public_column(d.project(["pair"]), "pair", "--pair-column")
    ('p0', 'p1')
    >>> check_public_column(Domain(("pair",), (2,), levels=(("p0", "p1"),)), "pair", "--pair-column")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --pair-column 'pair' reports each group's size, which is private unless the column's values are public knowledge: if they are, add "public": true to column 'pair' in the codebook (its values and group sizes are then not protected)
    """
    if name not in domain.names:
        raise UnknownName(f"{use} {name!r} is not in the domain codebook (its columns: {list(domain.names)}): add it "
                          "as a nominal or ordinal column with its levels and \"public\": true")
    i = domain.index(name)
    if domain.kinds[i] is Kind.CONTINUOUS:
        raise InvalidInput(f"{use} {name!r} is continuous in the codebook: its groups are its levels, so expected a "
                           "nominal or ordinal column with \"levels\" and \"public\": true")
    if name not in domain.public_columns:
        raise InvalidInput(f"{use} {name!r} reports each group's size, which is private unless the column's values "
                           f"are public knowledge: if they are, add \"public\": true to column {name!r} in the "
                           "codebook (its values and group sizes are then not protected)")
    return domain.levels[i]


def public_column_caveat(name: str) -> str:
    """The caveat of a run that treats column ``name`` as public (:func:`check_public_column`).

    >>> public_column_caveat("pair")
    "column 'pair' is public by the codebook: its values and each group's size are not protected (the guarantee covers the other values of each record)"
    """
    return (f"column {name!r} is public by the codebook: its values and each group's size are not protected "
            "(the guarantee covers the other values of each record)")
