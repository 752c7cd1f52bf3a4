"""The in-memory count engine: mixed-radix codes and ``bincount``, in chunks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.data.encoding import complete_rows, encode, infer_domain
from privgraph.data.engines.base import check_columns, check_rows
from privgraph.validation import InvalidInput

#: Rows per chunk: the temporary cell index stays a few MB whatever n is.
CHUNK_ROWS = 1 << 20


@dataclass(frozen=True, eq=False)
class NumpyEngine:
    """Counts over integer-coded data held in memory.

    ``codes`` has one column per name of ``domain`` (codes ``0..size-1``), any integer
    dtype; it is stored column-major in the smallest unsigned dtype.

    Examples
    --------
    >>> e = NumpyEngine(Domain.of(a=2, b=3), np.array([[0, 2], [1, 0], [0, 2]]))
    >>> e.counts(["a", "b"]).tolist()
    [[0, 0, 2], [1, 0, 0]]
    >>> e.counts(["b"], rows=np.array([0, 1])).tolist(), int(e.counts([]))
    ([1, 0, 1], 3)
    """

    domain: Domain
    codes: np.ndarray = field(repr=False)

    def __post_init__(self):
        codes = np.asarray(self.codes)
        if codes.ndim != 2 or codes.shape[1] != len(self.domain.names):
            raise InvalidInput(
                f"codes must have shape (rows, {len(self.domain.names)}) for domain "
                f"{list(self.domain.names)}, got {codes.shape}"
            )
        _check_code_range(self.domain, codes)
        object.__setattr__(self, "codes", np.asfortranarray(codes.astype(self.domain.code_dtype, copy=False)))

    @classmethod
    def from_frame(
        cls, frame, domain: Domain | None = None, *, kinds=None, levels=None, missing: str = "error"
    ) -> "NumpyEngine":
        """An engine over a DataFrame's discrete columns (domain inferred if not given).

        >>> import pandas as pd
        >>> e = NumpyEngine.from_frame(pd.DataFrame({"a": ["x", "y", "x"], "v": [0.5, 1.5, 2.5]}))
        >>> e.domain.names, e.counts(["a"]).tolist()
        (('a',), [2, 1])
        """
        if domain is None:
            domain = infer_domain(frame, kinds=kinds, levels=levels, missing=missing)
        frame = complete_rows(frame, domain.names, missing)  # continuous columns count too
        discrete = domain.project(domain.discrete_names)
        return cls(discrete, encode(frame, discrete, missing=missing))

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    def counts(self, columns: Sequence[str], rows: np.ndarray | None = None) -> np.ndarray:
        """Integer table over ``columns`` (see :class:`~privgraph.data.engines.CountEngine`)."""
        columns = check_columns(self.domain, columns)
        shape = self.domain.project(columns).shape
        cols = [self.codes[:, self.domain.index(c)] for c in columns]
        if rows is not None:
            rows = check_rows(rows, self.n_rows)
            cols = [c[rows] for c in cols]
        if not columns:
            n = self.n_rows if rows is None else int(rows.sum() if rows.dtype == np.bool_ else rows.size)
            return np.array(n, dtype=np.int64)
        return bincount_codes(cols, shape)



def bincount_codes(cols: Sequence[np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """Joint counts of code columns, via mixed-radix cell indices in chunks.

    >>> bincount_codes([np.array([0, 1, 1]), np.array([2, 0, 0])], (2, 3)).tolist()
    [[0, 0, 1], [2, 0, 0]]
    """
    cells = int(np.prod(shape))
    dtype = np.min_scalar_type(max(cells - 1, 0))
    n = len(cols[0])
    out = np.zeros(cells, dtype=np.int64)
    for start in range(0, n, CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, n)
        idx = cols[0][start:stop].astype(dtype)
        for col, size in zip(cols[1:], shape[1:]):
            idx *= dtype.type(size)
            np.add(idx, col[start:stop], out=idx, casting="unsafe")  # fits: idx < cells
        out += np.bincount(idx, minlength=cells)
    return out.reshape(shape)


def _check_code_range(domain: Domain, codes: np.ndarray) -> None:
    if not np.issubdtype(codes.dtype, np.integer):
        raise InvalidInput(f"codes must be integers, got dtype {codes.dtype}")
    if codes.size == 0:
        return
    lo, hi = codes.min(axis=0), codes.max(axis=0)
    for name, size, a, b in zip(domain.names, domain.sizes, lo, hi):
        if a < 0 or b >= size:
            raise InvalidInput(f"column {name!r} holds codes outside 0..{size - 1} (min {a}, max {b})")
