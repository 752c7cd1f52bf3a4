"""Synthetic records from a model: exact through the junction tree, Gibbs sampling otherwise.

Records are integer codes, one column per domain variable in domain order. Sampling uses
``rng`` (non-private randomness): a learned model is already a release, so sampling from
it is post-processing.
"""

from __future__ import annotations

import numpy as np

import privgraph.heartbeat as heartbeat
from privgraph.mrf.inference import tree_limit
from privgraph.mrf.junction_calibration import calibrate
from privgraph.mrf.junction import junction_tree
from privgraph.mrf.model import MarkovRandomField
from privgraph.validation import InvalidInput, one_of

#: ``sample_model``'s methods: i.i.d. draws, or controlled rounding within each separator value.
SAMPLE_METHODS = ("sample", "round")

#: What each path of :func:`sampling_path` does, in the words of a report.
SAMPLING_PATHS = {
    "round": "exactly from the model by controlled rounding through its junction tree (each value's count "
             "within one of the model's)",
    "sample": "exactly from the model, i.i.d., through its junction tree",
    "gibbs": "approximately, by Gibbs sampling (the model's junction tree is too large for exact draws; "
             "controlled rounding was not possible)",
}


def sampling_path(model: MarkovRandomField, method: str, max_cells: int | None = None) -> str:
    """The path :func:`sample_model` takes for ``method``: ``"gibbs"`` when the model's
    junction tree exceeds ``max_cells`` (:data:`~privgraph.mrf.inference.MAX_TREE_CELLS`
    when None), else ``method`` itself (``"round"`` or ``"sample"``).

    >>> from privgraph.data.domain import Domain
    >>> m = MarkovRandomField.of(Domain.of(a=2, b=3), ["a,b"])
    >>> sampling_path(m, "round"), sampling_path(m, "round", max_cells=5)
    ('round', 'gibbs')
    """
    one_of("sampling method", method, SAMPLE_METHODS)
    return "gibbs" if junction_tree(model.domain, model.cliques).cells > tree_limit(max_cells) else method


def sample_model(
    model: MarkovRandomField,
    n: int,
    *,
    rng: np.random.Generator,
    max_cells: int | None = None,
    gibbs_sweeps: int = 500,
    method: str = "sample",
) -> np.ndarray:
    """``n`` records drawn from ``model``: exact when its junction tree has at most
    ``max_cells`` cells, otherwise approximately by Gibbs sampling (:func:`gibbs_sample`).

    ``method="sample"`` draws the records i.i.d. from the model. ``method="round"`` draws
    them through the same junction tree by *controlled rounding* (Private-PGM's ``round``):
    the records that share a value of a clique's separator get that clique's conditional
    table's counts, ``floor(m p)`` of each value plus ``m - sum(floor(m p))`` more chosen
    without replacement with weights ``frac(m p)``, in a uniformly random order among them.
    Every value's count in a group is then within one of its expected count, so the
    records' marginals follow the model more closely than i.i.d. draws do (the sampling
    error of i.i.d. records is about half the 2-way TVD of a release on a table of 6,366
    rows: docs/release.md); they are a stratified sample, not independent records. The
    Gibbs path has no rounding: there ``method`` is ignored.

    Examples
    --------
    >>> from privgraph.data.domain import Domain
    >>> m = MarkovRandomField.of(Domain.of(a=2, b=3), ["a,b"])
    >>> x = sample_model(m, 5, rng=np.random.default_rng(0))
    >>> x.shape, x.dtype, bool((x[:, 1] < 3).all())
    ((5, 2), dtype('int64'), True)
    """
    return next(sample_chunks(model, n, n, rng=rng, max_cells=max_cells, gibbs_sweeps=gibbs_sweeps, method=method))


def sample_chunks(model: MarkovRandomField, n: int, chunk: int, *, rng: np.random.Generator,
                  max_cells: int | None = None, gibbs_sweeps: int = 500, method: str = "sample"):
    """:func:`sample_model`'s ``n`` records in arrays of at most ``chunk`` rows (one array
    when ``n`` is 0), the junction tree built and calibrated once: memory of a chunk, time of
    one set-up. Controlled rounding (``method="round"``) rounds within each chunk.

    >>> from privgraph.data.domain import Domain
    >>> m = MarkovRandomField.of(Domain.of(a=2, b=3), ["a,b"])
    >>> [x.shape for x in sample_chunks(m, 5, 2, rng=np.random.default_rng(0))]
    [(2, 2), (2, 2), (1, 2)]
    """
    if n < 0:
        raise InvalidInput(f"number of records n must be >= 0, got {n!r}")
    path = sampling_path(model, method, max_cells)
    sizes = [min(chunk, n - start) for start in range(0, n, max(1, chunk))] or [0]
    tree = junction_tree(model.domain, model.cliques)
    if path == "gibbs":
        for size in sizes:
            yield gibbs_sample(model, size, rng=rng, sweeps=gibbs_sweeps)
        return
    beliefs, _ = calibrate(tree, model.potentials)
    draw = _categorical_rows if method == "sample" else _rounded_rows
    outer = heartbeat.position()  # the caller's step (a round of the release), kept in front
    for k, size in enumerate(sizes, 1):
        heartbeat.at(f"{outer + ': ' if outer else ''}drawing {n:,} rows: " + heartbeat.of(k, len(sizes), "chunk"))
        yield _draw_rows(model, tree, beliefs, size, draw, rng)


def _draw_rows(model: MarkovRandomField, tree, beliefs, n: int, draw, rng: np.random.Generator) -> np.ndarray:
    """``n`` records through the calibrated junction tree, each variable given its clique's
    separator (``draw``: i.i.d. or controlled rounding)."""
    names = model.domain.names
    out = np.zeros((n, len(names)), dtype=np.int64)
    for c in tree.order:
        clique = tree.cliques[c]
        p = tree.parent[c]
        sep = [v for v in clique if p >= 0 and v in tree.cliques[p]]
        rest = [v for v in clique if v not in sep]
        b = np.transpose(beliefs[c], [clique.index(v) for v in sep + rest])
        rows = b.reshape(-1 if sep else 1, int(np.prod([model.domain.size_of(v) for v in rest])))
        row = np.ravel_multi_index(
            tuple(out[:, names.index(v)] for v in sep), [model.domain.size_of(v) for v in sep]
        ) if sep else np.zeros(n, dtype=np.int64)
        picked = draw(rows, row, rng)
        values = np.unravel_index(picked, [model.domain.size_of(v) for v in rest])
        for v, val in zip(rest, values):
            out[:, names.index(v)] = val
    return out


def _rounded_rows(table: np.ndarray, row: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One column index per entry of ``row`` by controlled rounding (``method="round"`` of
    :func:`sample_model`): the ``m`` entries equal to ``r`` get column ``k`` about
    ``m table[r, k] / table[r].sum()`` times (floor, plus the remainder chosen without
    replacement with the fractional parts as weights, by Efraimidis-Spirakis keys), in a
    uniformly random order. A row of zeros is read as uniform.

    >>> t = np.array([[0.25, 0.75], [1.0, 0.0]])
    >>> x = _rounded_rows(t, np.array([0] * 8 + [1] * 3), np.random.default_rng(0))
    >>> np.bincount(x[:8], minlength=2).tolist(), x[8:].tolist()
    ([2, 6], [0, 0, 0])
    """
    m = np.bincount(row, minlength=table.shape[0]).astype(float)
    total = table.sum(axis=1, keepdims=True)
    p = np.divide(table, total, out=np.full(table.shape, 1.0 / table.shape[1]), where=total > 0)
    expected = m[:, None] * p
    counts = np.floor(expected)
    frac = expected - counts
    extra = (m - counts.sum(axis=1)).round().astype(np.int64)
    with np.errstate(divide="ignore"):
        keys = np.where(frac > 0, np.log(rng.random(frac.shape)) / frac, -np.inf)
    ranked = np.argsort(-keys, axis=1)
    take = np.arange(table.shape[1])[None, :] < extra[:, None]
    np.add.at(counts, (np.nonzero(take)[0], ranked[take]), 1)
    values = np.repeat(np.tile(np.arange(table.shape[1]), table.shape[0]), counts.astype(np.int64).ravel())
    order = np.lexsort((rng.random(row.shape[0]), row))
    out = np.empty(row.shape[0], dtype=np.int64)
    out[order] = values
    return out


def _categorical_rows(table: np.ndarray, row: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One column index per entry of ``row``, drawn from that row of ``table`` (rows of
    non-negative weights, each summing to at most 1).

    The same draws as ``_categorical(table[row], rng)`` without its ``len(row) x columns``
    matrix: every row's cumulative weights are shifted by twice the row's index into one
    increasing array, and a single ``searchsorted`` finds each draw.

    >>> t = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    >>> _categorical_rows(t, np.array([1, 1, 0]), np.random.default_rng(0))[:2].tolist()
    [2, 2]
    """
    cum = np.cumsum(table, axis=1)
    k = table.shape[1]
    shift = 2.0 * np.arange(table.shape[0])
    flat = (cum + shift[:, None]).ravel()
    u = rng.random(row.shape[0]) * cum[row, -1]
    return np.minimum(np.searchsorted(flat, u + shift[row], side="right") - row * k, k - 1)


def _categorical(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row of non-negative ``weights`` (rows need not be normalised)."""
    cum = np.cumsum(weights, axis=1)
    u = rng.random(weights.shape[0]) * cum[:, -1]
    return np.minimum((u[:, None] >= cum).sum(axis=1), weights.shape[1] - 1)


def gibbs_sample(
    model: MarkovRandomField, n: int, *, rng: np.random.Generator, sweeps: int = 500
) -> np.ndarray:
    """Approximate samples: ``n`` independent Gibbs chains, ``sweeps`` full sweeps each.

    Each chain starts from a uniform random record and resamples every variable in turn
    from its conditional given the rest; the final states are returned. This is MCMC: the
    records are only approximately distributed as the model (the error shrinks with
    ``sweeps``), unlike :func:`sample` on a model with a small junction tree.

    >>> from privgraph.data.domain import Domain
    >>> m = MarkovRandomField.of(Domain.of(a=2, b=2), ["a,b"], [np.log([[9.0, 1e-9], [1e-9, 1.0]])])
    >>> x = gibbs_sample(m, 50, rng=np.random.default_rng(1), sweeps=5)
    >>> bool((x[:, 0] == x[:, 1]).all())
    True
    """
    domain = model.domain
    names = domain.names
    x = np.column_stack([rng.integers(0, s, size=n) for s in domain.sizes]).astype(np.int64)
    if n == 0:
        return x.reshape(0, len(names))
    plans = {v: [] for v in names}  # v -> [(table with v last, other columns, their sizes)]
    for f in model.factors:
        for i, v in enumerate(f.names):
            others = [u for u in f.names if u != v]
            table = np.moveaxis(f.values, i, -1).reshape(-1, domain.size_of(v))
            plans[v].append((table, [names.index(u) for u in others], [domain.size_of(u) for u in others]))
    for _ in range(sweeps):
        for j, v in enumerate(names):
            logits = np.zeros((n, domain.size_of(v)))
            for table, cols, sizes in plans[v]:
                row = np.ravel_multi_index(tuple(x[:, c] for c in cols), sizes) if cols else 0
                logits += table[row]
            w = np.exp(logits - logits.max(axis=1, keepdims=True))
            x[:, j] = _categorical(w, rng)
    return x
