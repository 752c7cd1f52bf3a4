"""White-box sensitivity checks: run an estimator with zero noise and look at every release.

**A TEST TOOL. NOTHING RUN UNDER IT IS PRIVATE**: :class:`RecordingSampler` adds no noise at
all, so every "release" is the exact query value.

A statistical audit (:mod:`privgraph.audit.auditor`) sees only as much of a claim as its
neighbouring pair moves the one statistic it watches: a fraction of it (the fractions are in
the docstrings of :mod:`privgraph.audit.estimators` and :mod:`privgraph.audit.release_cases`),
so a bug that makes the true sensitivity exceed the claim by less than the unseen part (a
record-norm clip removed, the add/remove count sensitivity under replace-one) passes. These
checks look inside instead. Under :func:`capture`, every call of
:func:`~privgraph.privacy.mechanisms.laplace_mechanism`,
:func:`~privgraph.privacy.mechanisms.gaussian_mechanism`,
:func:`~privgraph.privacy.zcdp.zcdp_gaussian_vector` (the releases every estimator's
numeric output goes through) and :func:`~privgraph.privacy.mechanisms.exponential_mechanism`
is recorded as a :class:`Measurement`: the calling function, the query's value before noise,
the claimed sensitivity and relation, the charge the mechanism returns and the noise scale it
actually asked the sampler for. Behaviour is unchanged: the wrappers call the mechanisms as
they are.

Running an estimator on D, then on its neighbour D' with D's releases replayed
(``capture(replay=...)``: every later query sees the same earlier releases on both sides, as
the sensitivity of an adaptively chosen query is a bound for a fixed history), and matching
the two lists in order (:func:`matched`: until the first release whose calling site,
mechanism or shape differs, where choices not made through a recorded mechanism may
diverge), :func:`problems` then states, for each matched release:

(a) **sensitivity**: the noise-free change ``||q(D') - q(D)||`` (L1 for Laplace, L2 for the
    Gaussians, L-infinity for the exponential mechanism's utilities) is at most the claimed
    sensitivity, plus one grid unit;
(b) **noise**: the scale asked of the sampler is at least what the charge's epsilon (rho,
    delta) and sensitivity require (:func:`~privgraph.privacy.mechanisms.laplace_calibration`,
    :func:`~privgraph.privacy.mechanisms.gaussian_calibration`,
    :func:`~privgraph.privacy.zcdp.zcdp_gaussian_scale`), and :func:`uncovered` checks that the
    estimator's own ledger pays for what the releases spend (a release whose own charge is
    thrown away can ask for less noise than the ledger pays for);
(c) **relation**: the release's relation is the estimator's.

A check that holds for a pair that moves a release by only a little says little, so the
tests also assert how much of the claim their pair reaches (:func:`reach`).

For the exponential mechanism the value is its utilities and the claim bounds each one's
move (so (a) in the L-infinity norm); its noise is a race with no scale to read, so (b) is its
charge's epsilon in :func:`uncovered` only). The sparse vector and the other selections are not
recorded; their randomness, and the sub-samples', comes from the sampler's seeded generator,
the same for D and D'.
"""

from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from privgraph.privacy import mechanisms, zcdp
from privgraph.privacy.calibration import grid_for, grid_shift, l1_grid_for
from privgraph.privacy.ledger import Ledger
from privgraph.privacy.events import ZCDPCurve
from privgraph.privacy.neighbours import Neighbours
from privgraph.privacy.samplers import PURE_DP_SLACK, NoiseSampler


class RecordingSampler(NoiseSampler):
    """NOT PRIVATE: a sampler whose Laplace and Gaussian noise is exactly zero.

    Every integer-noise draw (``discrete_laplace``, ``discrete_gaussian``, and so every
    real-valued draw on a grid) returns zeros and appends ``(kind, scale, size)`` to
    :attr:`draws`, the scale in the units asked for (grid units for the mechanisms).
    Secret selections (sub-samples, races) come from numpy's PCG64 seeded with ``seed``, so
    two runs with the same seed make the same choices wherever their inputs agree.

    >>> s = RecordingSampler(0)
    >>> s.discrete_laplace(4.0, 3).tolist(), s.draws
    ([0, 0, 0], [('laplace', 4.0, 3)])
    """

    is_secure = False

    def __init__(self, seed: int = 0):
        super().__init__(np.random.Generator(np.random.PCG64(seed)))
        self.draws: list[tuple[str, float, int]] = []

    def _zeros(self, kind: str, scale: float, size) -> np.ndarray:
        shape = (size,) if np.isscalar(size) else tuple(size)
        self.draws.append((kind, float(scale), int(np.prod(shape))))
        return np.zeros(shape, dtype=np.int64)

    def discrete_laplace(self, scale: float, size=1) -> np.ndarray:
        return self._zeros("laplace", scale, size)

    def discrete_gaussian(self, sigma: float, size=1) -> np.ndarray:
        return self._zeros("gaussian", sigma, size)


@dataclass(frozen=True)
class Measurement:
    """One mechanism call seen by :func:`capture` (a release of the exact value: no noise).

    ``requested``: the noise scale the mechanism asked the sampler for, in the value's units
    (the smallest, if it drew more than once; None if it drew nothing). ``required``: the
    scale its charge's privacy parameters and sensitivity call for. ``rho``: the zCDP
    parameter the requested noise gives (``shift^2 / (2 s^2)``, Canonne, Kamath, Steinke
    2020, Theorem 14; for Laplace ``epsilon^2 / 2``, Bun and Steinke 2016, Prop. 1.4);
    ``epsilon``: the pure epsilon the requested Laplace noise gives (None for Gaussians). For
    the exponential mechanism ``value`` holds the utilities, the sensitivity bounds each one's
    move, and ``epsilon``, ``rho`` are its charge's (``epsilon^2 / 8``: bounded range).
    """

    site: str
    mechanism: str  # "laplace", "gaussian", "gaussian_vector" or "exponential"
    value: np.ndarray
    sensitivity: float
    neighbours: Neighbours
    grid: float
    requested: float | None
    required: float
    epsilon: float | None
    rho: float
    output: object  # what the mechanism released (replayed by capture(replay=...))

    @property
    def norm(self) -> float:
        return {"laplace": 1, "exponential": np.inf}.get(self.mechanism, 2)

    @property
    def key(self) -> tuple:
        return self.site, self.mechanism, self.value.shape


def _measure(site: str, mechanism: str, value, sensitivity: float, neighbours, sampler, release,
             start: int) -> Measurement:
    """The :class:`Measurement` of one call (``start``: the sampler's draws before it)."""
    if not isinstance(sampler, RecordingSampler):
        raise TypeError(f"capture() needs the estimator to draw from a RecordingSampler, got {sampler!r}")
    x = np.array(value, dtype=np.float64).reshape(-1)
    d, sensitivity = max(1, x.size), float(sensitivity)
    charge = release.ledger.charges[0]
    units = [scale for _, scale, _ in sampler.draws[start:]]
    if mechanism == "exponential":  # a selection: its noise is a race, no scale to read (requested None)
        grid, required, epsilon, rho = 0.0, 0.0, charge.epsilon, charge.curve.rho
    elif mechanism == "laplace":
        grid = l1_grid_for(sensitivity, d) if sensitivity else 0.0
        required = mechanisms.laplace_calibration(charge.epsilon, sensitivity, d)[0] if sensitivity else 0.0
        epsilon = grid_shift(sensitivity, grid, d) / min(units) + PURE_DP_SLACK if units else 0.0
        rho = epsilon**2 / 2
    else:
        grid = grid_for(sensitivity, d)
        if mechanism == "gaussian":
            required = mechanisms.gaussian_calibration(charge.epsilon, charge.delta, sensitivity, d)[0]
            shift = grid_shift(sensitivity, grid) if d == 1 else sensitivity / grid + math.sqrt(d)
        else:
            required = zcdp.zcdp_gaussian_scale(charge.curve.rho, sensitivity, d)[0]
            shift = sensitivity / grid + math.sqrt(d)
        epsilon, rho = None, shift**2 / (2 * min(units) ** 2) if units else 0.0
    requested = min(units) * grid if units else None
    return Measurement(site, mechanism, x, sensitivity, Neighbours.parse(neighbours), grid, requested, required,
                       epsilon, rho, release.value)


#: The mechanisms :func:`capture` records, by their names in :mod:`privgraph.privacy`.
_MECHANISMS = {"laplace_mechanism": (mechanisms, "laplace"), "gaussian_mechanism": (mechanisms, "gaussian"),
               "zcdp_gaussian_vector": (zcdp, "gaussian_vector"),
               "exponential_mechanism": (mechanisms, "exponential")}


@contextlib.contextmanager
def capture(replay: Sequence[Measurement] | None = None) -> Iterator[list[Measurement]]:
    """Record every Laplace, Gaussian, zCDP-Gaussian-vector and exponential-mechanism release
    made inside the block.

    NOT PRIVATE: use it with a :class:`RecordingSampler` only (a release through any other
    sampler raises TypeError). Each mechanism is replaced, in every loaded ``privgraph``
    module that holds it, by a wrapper that calls it unchanged and records a
    :class:`Measurement`; all are restored on exit (also in a module first imported inside
    the block).

    ``replay``: the measurements of a run on the neighbour D. Each release then returns D's
    released value instead of its own (with its own ledger), as long as the calls agree in
    site, mechanism and shape, so that every query is evaluated on this dataset *with the
    same earlier releases* as on D: the sensitivity of an adaptively chosen query is a bound
    for a fixed history. (A zero-noise output of D is a possible output on D' too.) From the
    first call that differs on, each release returns its own value.

    >>> with capture() as seen:  # the module attribute: a name imported before the block is not wrapped
    ...     _ = mechanisms.laplace_mechanism([1.0, 2.0], epsilon=1.0, sensitivity=1.0,
    ...                                      neighbours=Neighbours.ADD_REMOVE, sampler=RecordingSampler(0))
    >>> seen[0].mechanism, seen[0].value.tolist(), seen[0].requested >= seen[0].required
    ('laplace', [1.0, 2.0], True)
    """
    log: list[Measurement] = []
    diverged = [replay is None]
    originals = {name: getattr(module, name) for name, (module, _) in _MECHANISMS.items()}

    def wrap(name: str):
        original, mechanism = originals[name], _MECHANISMS[name][1]

        def wrapper(value, *, sensitivity, neighbours, sampler, **kw):
            start = len(getattr(sampler, "draws", ()))
            rel = original(value, sensitivity=sensitivity, neighbours=neighbours, sampler=sampler, **kw)
            m = _measure(sys._getframe(1).f_code.co_qualname, mechanism, value, sensitivity, neighbours, sampler,
                         rel, start)
            log.append(m)
            if not diverged[0]:
                i = len(log) - 1
                if i < len(replay) and replay[i].key == m.key:
                    return mechanisms.Release(_copy(replay[i].output), rel.ledger)
                diverged[0] = True
            return rel

        return wrapper

    wrappers = {name: wrap(name) for name in originals}
    _swap(originals, wrappers)
    try:
        yield log
    finally:
        _swap(wrappers, originals)


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _swap(old: dict, new: dict) -> None:
    """In every loaded privgraph module, replace each attribute holding ``old[name]`` (under
    any name: an alias too) by ``new[name]``."""
    by_id = {id(value): new[name] for name, value in old.items()}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "privgraph" or name.startswith("privgraph.")):
            continue
        for attr, value in list(vars(module).items()):
            if id(value) in by_id:
                setattr(module, attr, by_id[id(value)])


def matched(left: Sequence[Measurement], right: Sequence[Measurement]) -> list[tuple[Measurement, Measurement]]:
    """The releases of D and D' paired in order, up to the first whose site, mechanism or shape
    differs (after it, choices made from earlier releases may have diverged)."""
    pairs = []
    for a, b in zip(left, right):
        if a.key != b.key:
            break
        pairs.append((a, b))
    return pairs


def change(a: Measurement, b: Measurement) -> float:
    """The noise-free move of the release between D and D', in its mechanism's norm."""
    return float(np.linalg.norm(b.value - a.value, ord=a.norm))


def reach(a: Measurement, b: Measurement) -> float:
    """The fraction of the claimed sensitivity the pair moves the release by."""
    return change(a, b) / a.sensitivity if a.sensitivity else 0.0


def problems(pairs: Sequence[tuple[Measurement, Measurement]], relation: Neighbours | str) -> list[str]:
    """Checks (a), (b), (c) of the module docstring on matched releases: one line per failure.

    >>> def run(x, replay=None):
    ...     with capture(replay) as seen:
    ...         _ = mechanisms.laplace_mechanism(x, epsilon=1.0, sensitivity=1.0, neighbours="add_remove",
    ...                                          sampler=RecordingSampler(0))
    ...     return seen
    >>> d = run([0.0, 0.0])
    >>> pairs = matched(d, run([1.0, 1.0], replay=d))
    >>> problems(pairs, "add_remove"), reach(*pairs[0])
    (['release 0 (laplace at run): moved by 2 (L1) > claimed sensitivity 1'], 2.0)
    """
    relation = Neighbours.parse(relation)
    out = []
    for i, (a, b) in enumerate(pairs):
        where = f"release {i} ({a.mechanism} at {a.site})"
        claim = min(a.sensitivity, b.sensitivity)
        moved = change(a, b)
        if moved > claim + max(a.grid, b.grid) + 1e-12:
            out.append(f"{where}: moved by {moved:.6g} (L{a.norm}) > claimed sensitivity {claim:.6g}")
        for side, m in (("D", a), ("D'", b)):
            drawn = m.requested is not None and m.requested >= m.required * (1 - 1e-9)
            if m.sensitivity and m.mechanism != "exponential" and not drawn:
                out.append(f"{where} on {side}: noise scale {m.requested} < {m.required:.6g} its charge requires")
            if m.neighbours is not relation:
                out.append(f"{where} on {side}: relation {m.neighbours.value}, the estimator's is {relation.value}")
    return out


def uncovered(seen: Sequence[Measurement], ledger: Ledger, parts=None) -> str | None:
    """Whether the releases spend more than the estimator's ``ledger`` pays (a necessary check:
    each release's spend is read from the noise it asked for, not from its own charge).

    Pure ledgers and Laplace (or exponential) releases: the sum of the releases' epsilons
    against the ledger's basic total. Otherwise in zCDP: the releases' rhos against the
    ledger's (a charge's :class:`~privgraph.privacy.events.ZCDPCurve`; a pure charge without one at
    ``epsilon^2 / 2``); charges with other curves (sub-sampled ones) make the check
    inapplicable (None). ``parts``: for a ledger composed in parallel over disjoint records,
    a function giving each release's part; then each part's sum must be paid for.
    """
    if all(m.epsilon is not None for m in seen) and all(c.is_pure for c in ledger):
        spend, paid, unit = (lambda m: m.epsilon), ledger.total().epsilon, "epsilon"
    else:
        paid = 0.0
        for c in ledger:
            if c.sampling is not None:
                return None
            if isinstance(c.curve, ZCDPCurve):
                paid += c.curve.rho * c.count
            elif c.is_pure:
                paid += c.epsilon**2 / 2 * c.count
            else:
                return None
        spend, unit = (lambda m: m.rho), "rho"
    totals: dict = {}
    for m in seen:
        part = parts(m) if parts is not None else None
        totals[part] = totals.get(part, 0.0) + spend(m)
    spent = max(totals.values(), default=0.0)
    if spent > paid * (1 + 1e-6) + 1e-12:
        return f"the releases spend {unit} {spent:.6g}, the ledger pays {paid:.6g}"
    return None


__all__ = ["Measurement", "RecordingSampler", "capture", "change", "matched", "problems", "reach", "uncovered"]
