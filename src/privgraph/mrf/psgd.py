"""PSGD: private stochastic gradient ascent on the log-likelihood (the text's third method).

Each of a fixed number of steps draws a secret sub-sample of the privacy units, clips
every unit's gradient to L2 norm ``clip``, sums them, releases the sum with Gaussian noise
(:class:`~privgraph.privacy.gaussian_sums.GaussianSums`, which also derives the sensitivity
and pays the charge for all steps before any noise is drawn) and takes a step of
``learning_rate / sqrt(t)`` along the noisy sum divided by the batch size. The noise
multiplier is the smallest whose RDP total over the steps meets the target
(:func:`~privgraph.privacy.gaussian_sums.sampled_gaussian_multiplier`); read the ledger
with ``Ledger.total("rdp", delta)``.

Gradients. With log-potentials ``theta`` the log-likelihood of a record is
``sum_C theta_C(x_C) - A(theta)``; its gradient in clique C's table is ``e_C(x) - mu_C(theta)``
(``e_C(x)`` the record's one-hot cell, ``mu_C`` the model's marginal). With ``ties`` (a
group label per clique) one table ``theta_g`` serves every clique of group g, so by the
chain rule the gradient in ``theta_g`` is ``sum_{C in g} (e_C(x) - mu_C(theta))``.

The privacy unit (the thing one neighbour adds, removes or replaces):

* a record (default): its gradient as above;
* an individual (``individuals``, one id per record): the gradient of the individual's
  mean log-likelihood, ``(1/K) sum_r (e(x_r) - mu)`` over their K records. So each
  individual weighs the same whatever K (the 1/K weighting of the marginal release in
  :mod:`privgraph.mrf.individuals`, here without its null-null exclusion: PSGD fits the
  likelihood of whole records). The whole individual's gradient is clipped once, so an
  individual moves the clipped sum by at most ``clip`` however many records they hold.

Units are stored as distinct rows (records) or one row per individual, with
multiplicities; a sub-sample is a draw on the multiplicities, so a step costs one BP call
plus work proportional to the sampled rows.

Neighbouring relations, and why each piece is right:

* ``add_remove``: each unit is kept independently with probability ``rate`` (binomial
  thinning of the multiplicities: exactly a Poisson sub-sample). Adding or removing a unit
  moves the clipped sum by at most ``clip``; the accountant is dp_accounting's Poisson
  sub-sampled Gaussian, which it supports under add/remove only. The number of units N is
  private, so it is released first with the Laplace mechanism (sensitivity 1: one unit,
  however many records, changes N by one; a share :data:`COUNT_SHARE` of epsilon) and the
  step divides by ``rate * N_hat`` (post-processing). A pure eps_N-DP release has Renyi
  divergence at most eps_N at every order, so the RDP total stays within epsilon. The
  text treats N as public.
* ``replace_one``: neighbours have the same number of units, so N is public: it is taken
  from the data (``records``, if given, must agree). Each step draws exactly
  ``m = round(rate N)`` units without replacement (a multivariate hypergeometric draw on
  the multiplicities: exactly the counts of a uniform m-subset). Replacing a unit moves
  the clipped sum by at most ``2 clip``; the accountant is dp_accounting's sampled-without-
  replacement Gaussian (Wang, Balle, Kasiviswanathan 2019), which it supports under
  replace-one only, with the multiplier relative to that 2 clip. No count is released;
  the step divides by m. All of epsilon goes to the steps.

Poisson sampling under replace-one and sampling without replacement under add/remove are
refused: dp_accounting's RDP accountant does not account them.

Reach: with the steps and rate fixed in advance, a small epsilon needs a large noise
multiplier. Past ``max_noise_multiplier`` the gradient is all noise; the function then
raises instead of returning a useless model (the text omits such points from its plots).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import numpy as np
from scipy import sparse

from privgraph.data import NumpyEngine
from privgraph.data.domain import Domain
from privgraph.mrf.fit import tie_groups
from privgraph.mrf.inference import infer_potentials
from privgraph.mrf.model import MarkovRandomField, check_cliques
from privgraph.privacy import (
    Budget,
    GaussianSums,
    Ledger,
    Neighbours,
    NoiseSampler,
    Release,
    laplace_charge,
    laplace_mechanism,
    sampled_gaussian_multiplier,
)
from privgraph.privacy.neighbours import check_delta, check_epsilon, check_rate
from privgraph.privacy.events import PoissonSampling, Sampling, WithoutReplacementSampling
from privgraph.validation import InvalidInput, positive_int

#: Share of epsilon spent on the noisy number of units under add/remove (the step size needs it).
COUNT_SHARE = 0.02

#: Dense gradient block size (floats) when clipping a sampled batch.
_BLOCK = 2**22


def psgd(
    codes: np.ndarray,
    *,
    domain: Domain,
    cliques: Sequence[Sequence[str] | str],
    epsilon: float,
    delta: float,
    sampler: NoiseSampler,
    neighbours: Neighbours | str = "add_remove",
    individuals: Sequence | None = None,
    ties: Sequence | None = None,
    records: int | None = None,
    steps: int = 300,
    rate: float = 0.05,
    clip: float | None = None,
    learning_rate: float = 2.0,
    max_noise_multiplier: float = 50.0,
    budget: Budget | None = None,
) -> Release[MarkovRandomField]:
    """Fit a model to integer-coded records by PSGD: (epsilon, delta)-DP under ``neighbours``.

    ``individuals`` makes the individual the privacy unit; ``ties`` shares one potential
    among cliques with the same label; ``records`` is the public number of units under
    replace-one (default: the data's). ``clip`` defaults to ``sqrt(|C|)``, the norm of a
    record's indicator part without ties. Every argument is checked before ``budget`` is
    charged. The budget is charged for all steps before any noise is drawn, then (under
    add/remove) for the count before its noise; if it refuses the count, the steps stay
    reserved, unused.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> rng = np.random.default_rng(0)
    >>> x = rng.integers(0, 2, size=(2000, 3))
    >>> model, ledger = psgd(x, domain=Domain.of(a=2, b=2, c=2), cliques=["a,b", "b,c"],
    ...                      epsilon=1.0, delta=1e-4, sampler=SeededSampler(0), steps=50)
    >>> round(ledger.total("rdp", delta=1e-4).epsilon, 2) <= 1.0
    True
    >>> model, ledger = psgd(x, domain=Domain.of(a=2, b=2, c=2), cliques=["a,b", "b,c"], ties=[0, 0],
    ...                      individuals=np.arange(2000) // 4, neighbours="replace_one",
    ...                      epsilon=1.0, delta=1e-4, sampler=SeededSampler(0), steps=20)
    >>> [c.sampling for c in ledger], bool(np.all(model.potentials[0] == model.potentials[1]))
    ([WithoutReplacementSampling(size=25, population=500)], True)
    """
    cliques = check_cliques(domain, cliques)
    neighbours = Neighbours.parse(neighbours)
    epsilon, delta, steps = check_epsilon(epsilon), check_delta(delta), positive_int("steps", steps)
    if delta == 0:
        raise InvalidInput("PSGD needs delta > 0 (the text uses delta = 1/N)")
    groups, _ = tie_groups(domain, cliques, ties)
    shapes = _group_shapes(domain, cliques, groups)
    clip = math.sqrt(len(cliques)) if clip is None else check_epsilon(clip, "clip")
    units, counts = unit_indicators(codes, domain=domain, cliques=cliques, groups=groups, shapes=shapes,
                                    individuals=individuals)
    sampling = _sampling(neighbours, check_rate(rate, "rate"), int(counts.sum()), records)
    share, multiplier = _calibrate(epsilon, delta, sampling, steps, neighbours, max_noise_multiplier)
    unit = "record" if individuals is None else "individual"
    sums = GaussianSums(clip=clip, dimension=units.shape[1], multiplier=multiplier, steps=steps, delta=delta,
                        sampling=sampling, neighbours=neighbours, sampler=sampler, budget=budget,
                        note=f"unit={unit}")
    batch, ledger = _batch_size(sampling, int(counts.sum()), epsilon * share, sampler, budget, unit)
    theta = np.zeros(units.shape[1])
    for t in range(1, steps + 1):
        mu = _model_marginals(domain, cliques, groups, shapes, theta)
        total = clipped_sum(units, mu, _draw(sampling, counts, sampler), clip)
        stepped = theta + learning_rate / math.sqrt(t) * sums.release(total) / batch
        if np.isfinite(stepped).all():  # an overflowed step is dropped: post-processing never raises
            theta = stepped
    tables = _split(theta, shapes)
    return Release(MarkovRandomField.of(domain, cliques, [tables[g] for g in groups]), ledger + sums.ledger)


def unit_indicators(
    codes: np.ndarray,
    *,
    domain: Domain,
    cliques: Sequence[tuple[str, ...]],
    groups: Sequence[int],
    shapes: Sequence[tuple[int, ...]],
    individuals: Sequence | None = None,
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Each privacy unit's mean indicator vector ``a_u`` (its gradient is ``a_u - mu``) and multiplicities.

    Records: one row per distinct record, with its count. Individuals: one row per
    individual, the mean over their records of the record indicators, count 1. Columns are
    the parameter groups' tables, flattened and concatenated; a record adds 1 in each of
    its cliques' cells (so 2 in a cell two tied cliques share).

    >>> d = Domain.of(a=2, b=2)
    >>> a, n = unit_indicators(np.array([[0, 1], [1, 1], [0, 1]]), domain=d, cliques=[("a", "b"), ("b",)],
    ...                        groups=[0, 1], shapes=[(2, 2), (2,)], individuals=["u", "u", "v"])
    >>> a.toarray().tolist(), n.tolist()
    ([[0.0, 0.5, 0.0, 0.5, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0, 0.0, 1.0]], [1, 1])
    """
    codes = np.asarray(NumpyEngine(domain, codes).codes, dtype=np.int64)
    if individuals is None:
        rows, counts = np.unique(codes, axis=0, return_counts=True)
        return _record_indicators(rows, domain, cliques, groups, shapes), counts.astype(np.int64)
    ids = np.asarray(individuals)
    if ids.ndim != 1 or ids.shape[0] != codes.shape[0]:
        raise InvalidInput(f"individuals must hold one id per record: got shape {ids.shape} for {codes.shape[0]} records")
    owner = np.unique(ids, return_inverse=True)[1].ravel()
    k = np.bincount(owner)
    mean = sparse.csr_matrix((1.0 / k[owner], (owner, np.arange(owner.size))), shape=(k.size, owner.size))
    return (mean @ _record_indicators(codes, domain, cliques, groups, shapes)).tocsr(), np.ones(k.size, np.int64)


def clipped_sum(units: sparse.csr_matrix, mu: np.ndarray, taken: np.ndarray, clip: float) -> np.ndarray:
    """``sum_u taken_u * clip(a_u - mu)``: the sub-sample's sum of per-unit gradients clipped to ``clip``.

    Each unit's gradient ``a_u - mu`` (one row of ``units`` minus the model marginals) is
    scaled to norm at most ``clip`` as a whole, so one unit moves the sum by at most ``clip``.

    >>> a = sparse.csr_matrix(np.array([[3.0, 0.0], [0.0, 0.5]]))
    >>> clipped_sum(a, np.zeros(2), np.array([1, 2]), 1.0).tolist()
    [1.0, 1.0]
    """
    rows = np.flatnonzero(taken)
    out = np.zeros(units.shape[1])
    step = max(1, _BLOCK // max(1, units.shape[1]))
    for start in range(0, rows.size, step):
        block = rows[start:start + step]
        grads = units[block].toarray() - mu
        norms = np.linalg.norm(grads, axis=1)
        out += (taken[block] * np.minimum(1.0, clip / np.maximum(norms, 1e-300))) @ grads
    return out


def psgd_plan(
    *,
    domain: Domain,
    cliques: Sequence[Sequence[str] | str],
    epsilon: float,
    delta: float,
    neighbours: Neighbours | str = "add_remove",
    ties: Sequence | None = None,
    records: int | None = None,
    individuals: bool = False,
    steps: int = 300,
    rate: float = 0.05,
    clip: float | None = None,
    max_noise_multiplier: float = 50.0,
    **_ignored,
) -> Ledger:
    """The ledger :func:`psgd` charges, from public parameters only: under replace-one the
    public number of units ``records`` is needed (it sets the sample size m).

    >>> plan = psgd_plan(domain=Domain.of(a=2, b=2, c=2), cliques=["a,b", "b,c"], epsilon=1.0, delta=1e-4, steps=50)
    >>> [c.mechanism for c in plan]
    ['laplace', 'gaussian_sums']
    """
    cliques = check_cliques(domain, cliques)
    neighbours = Neighbours.parse(neighbours)
    epsilon, delta, steps = check_epsilon(epsilon), check_delta(delta), positive_int("steps", steps)
    if delta == 0:
        raise InvalidInput("PSGD needs delta > 0 (the text uses delta = 1/N)")
    if neighbours is Neighbours.REPLACE_ONE and records is None:
        raise InvalidInput("under replace_one the plan needs the public number of units, records=")
    groups, _ = tie_groups(domain, cliques, ties)
    dimension = sum(int(np.prod(s)) for s in _group_shapes(domain, cliques, groups))
    clip = math.sqrt(len(cliques)) if clip is None else check_epsilon(clip, "clip")
    sampling = _sampling(neighbours, check_rate(rate, "rate"), records or 0, records)
    share, multiplier = _calibrate(epsilon, delta, sampling, steps, neighbours, max_noise_multiplier)
    unit = "individual" if individuals else "record"
    sums = GaussianSums(clip=clip, dimension=dimension, multiplier=multiplier, steps=steps, delta=delta,
                        sampling=sampling, neighbours=neighbours, sampler=None, note=f"unit={unit}")
    if isinstance(sampling, WithoutReplacementSampling):
        return sums.ledger
    count = laplace_charge(epsilon * share, 1.0, Neighbours.ADD_REMOVE)
    return Ledger.of(replace(count, note=f"{count.note}; number of units; unit={unit}")) + sums.ledger


def _calibrate(epsilon, delta, sampling, steps, neighbours, max_noise_multiplier) -> tuple[float, float]:
    """(share of epsilon spent on the noisy count, noise multiplier of the steps)."""
    share = COUNT_SHARE if neighbours is Neighbours.ADD_REMOVE else 0.0
    multiplier = sampled_gaussian_multiplier(epsilon * (1 - share), delta, sampling=sampling, steps=steps,
                                             neighbours=neighbours, max_multiplier=max_noise_multiplier)
    return share, multiplier


def _sampling(neighbours: Neighbours, rate: float, n: int, records: int | None) -> Sampling:
    """The sub-sampling of each step: Poisson at ``rate`` (add/remove) or exactly round(rate N) of N."""
    if neighbours is Neighbours.ADD_REMOVE:
        if records is not None:
            raise InvalidInput(f"records={records!r} is the public number of units under replace_one; under "
                               "add_remove it is private (PSGD releases it with the Laplace mechanism): drop it")
        return PoissonSampling(rate)
    if records is not None and positive_int("records", records, 0) != n:
        raise InvalidInput(f"records={records} but the data holds {n} units (under replace_one N is public)")
    m = round(rate * n)
    if m < 1:
        raise InvalidInput(f"rate={rate} of N={n} units rounds to a sample of {m}: raise rate or use more data")
    return WithoutReplacementSampling(m, n)


def _batch_size(sampling, n: int, epsilon_count: float, sampler, budget, unit: str) -> tuple[float, Ledger]:
    """The step's divisor: m under replace-one (public); rate * noisy N under add/remove."""
    if isinstance(sampling, WithoutReplacementSampling):
        return float(sampling.size), Ledger()
    n_hat, ledger = laplace_mechanism(float(n), epsilon=epsilon_count, sensitivity=1.0,
                                      neighbours=Neighbours.ADD_REMOVE, sampler=sampler, budget=budget)
    ledger = Ledger(tuple(replace(c, note=f"{c.note}; number of units; unit={unit}") for c in ledger))
    return sampling.rate * max(n_hat, 1.0), ledger


def _draw(sampling: Sampling, counts: np.ndarray, sampler: NoiseSampler) -> np.ndarray:
    """How many of each unit row the step's secret sub-sample holds."""
    if isinstance(sampling, PoissonSampling):
        return sampler.binomial(counts, sampling.rate)
    return sampler.multivariate_hypergeometric(counts, sampling.size)


def _group_shapes(domain: Domain, cliques, groups) -> list[tuple[int, ...]]:
    first = {}
    for c, g in zip(cliques, groups):
        first.setdefault(g, domain.project(c).shape)
    return [tuple(first[g]) for g in range(len(first))]


def _record_indicators(rows: np.ndarray, domain: Domain, cliques, groups, shapes) -> sparse.csr_matrix:
    """One row per record: 1 in each clique's cell of its group's table (duplicates add)."""
    offsets = np.cumsum([0] + [math.prod(s) for s in shapes])
    cols = [offsets[g] + np.ravel_multi_index(tuple(rows[:, domain.index(n)] for n in c), shapes[g])
            for c, g in zip(cliques, groups)]
    owner = np.tile(np.arange(rows.shape[0]), len(cliques))
    return sparse.csr_matrix((np.ones(owner.size), (owner, np.concatenate(cols))), shape=(rows.shape[0], offsets[-1]))


def _split(flat: np.ndarray, shapes) -> list[np.ndarray]:
    ends = np.cumsum([math.prod(s) for s in shapes])
    return [p.reshape(s) for p, s in zip(np.split(flat, ends[:-1]), shapes)]


def _model_marginals(domain, cliques, groups, shapes, theta: np.ndarray) -> np.ndarray:
    """``mu`` per group: the sum of the model marginals of the group's cliques, flattened."""
    tables = _split(theta, shapes)
    beliefs = infer_potentials(domain, cliques, [tables[g] for g in groups])
    mu = [np.zeros(s) for s in shapes]
    for g, m in zip(groups, beliefs.marginals):
        mu[g] += m
    return np.concatenate([m.ravel() for m in mu])
