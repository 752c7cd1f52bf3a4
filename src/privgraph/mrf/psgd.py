"""PSGD: private stochastic gradient ascent on the log-likelihood (the text's third method).

Each step draws a secret Poisson sub-sample (rate ``q``) of the records, clips every
record's gradient ``e(x) - mu(theta)`` (``e(x)`` the record's indicator in every clique
table) to L2 norm ``clip``, sums them, adds Gaussian noise of standard deviation
``noise_multiplier * clip`` (on a power-of-two grid, from the sampler) and takes a step
of ``learning_rate / sqrt(t)`` along the sum divided by the expected batch size. The
guarantee is (epsilon, delta)-DP under add/remove, by the RDP accountant of the Poisson
sub-sampled Gaussian over the fixed number of steps (``Ledger.total("rdp", delta)``); the
noise multiplier is the smallest meeting the target (bisection on the accountant).

Records are handled as distinct rows with multiplicities, so a step costs one BP call
plus work proportional to the number of distinct rows, and the sub-sample is drawn by
binomial thinning of the multiplicities (exactly a Poisson sub-sample).

Reach: with the steps and rate fixed in advance, a small epsilon needs a large noise
multiplier. Past ``max_noise_multiplier`` the gradient is all noise; the function then
raises instead of returning a useless model (the text omits such points from its plots).
The step size divides by the expected batch size ``q N``. Under add/remove ``N`` is
private, so it is released first with the Laplace mechanism (sensitivity 1, a share
:data:`COUNT_SHARE` of epsilon) and the noisy count is used; the text treats N as public.
The Gaussian steps get the rest of epsilon; since a pure eps_N-DP release has Renyi
divergence at most eps_N at every order, the RDP total of the ledger stays within epsilon.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np

from privgraph.data.domain import Domain
from privgraph.mrf.inference import infer_potentials
from privgraph.mrf.model import MarkovRandomField, check_cliques
from privgraph.privacy import Charge, Ledger, Neighbours, NoiseSampler, Release, laplace_mechanism
from privgraph.privacy.composition import rdp_epsilon
from privgraph.privacy.neighbours import check_delta, check_epsilon, check_rate
from privgraph.privacy.samplers import power_of_two_at_most

#: Share of epsilon spent on the noisy number of records (the step size needs it).
COUNT_SHARE = 0.02


def psgd(
    codes: np.ndarray,
    *,
    domain: Domain,
    cliques: Sequence[Sequence[str] | str],
    epsilon: float,
    delta: float,
    sampler: NoiseSampler,
    steps: int = 300,
    rate: float = 0.05,
    clip: float | None = None,
    learning_rate: float = 2.0,
    max_noise_multiplier: float = 50.0,
) -> Release[MarkovRandomField]:
    """Fit a model to integer-coded records by PSGD; (epsilon, delta)-DP under add/remove.

    ``clip`` defaults to ``sqrt(|C|)``, the norm of a record's indicator part.

    Examples
    --------
    >>> from privgraph.privacy import SeededSampler
    >>> rng = np.random.default_rng(0)
    >>> x = rng.integers(0, 2, size=(2000, 3))
    >>> model, ledger = psgd(x, domain=Domain.of(a=2, b=2, c=2), cliques=["a,b", "b,c"],
    ...                      epsilon=1.0, delta=1e-4, sampler=SeededSampler(0), steps=50)
    >>> round(ledger.total("rdp", delta=1e-4).epsilon, 2) <= 1.0
    True
    """
    cliques = check_cliques(domain, cliques)
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    rate = check_rate(rate, "rate")
    if delta == 0:
        raise ValueError("PSGD needs delta > 0 (the text uses delta = 1/N)")
    clip = math.sqrt(len(cliques)) if clip is None else float(clip)
    rows, counts = np.unique(np.asarray(codes, dtype=np.int64), axis=0, return_counts=True)
    indicators = _indicators(rows, domain, cliques)
    grid = power_of_two_at_most(clip * 2.0**-20)
    sensitivity = clip + grid * math.sqrt(indicators.shape[1])  # clipping plus grid rounding
    multiplier = noise_multiplier(epsilon * (1 - COUNT_SHARE), delta, rate, steps, max_noise_multiplier)
    charge = psgd_charge(multiplier, rate, steps, delta, sensitivity)
    n_hat, ledger = laplace_mechanism(float(counts.sum()), epsilon=epsilon * COUNT_SHARE, sensitivity=1.0,
                                      neighbours=Neighbours.ADD_REMOVE, sampler=sampler)
    theta = np.zeros(indicators.shape[1])
    batch = rate * max(n_hat, 1.0)
    for t in range(1, steps + 1):
        mu = _model_marginals(domain, cliques, theta)
        grads = indicators - mu
        norms = np.linalg.norm(grads, axis=1)
        grads *= np.minimum(1.0, clip / np.maximum(norms, 1e-300))[:, None]
        taken = sampler.binomial(counts, rate)
        total = np.round((taken @ grads) / grid) * grid
        total += sampler.gaussian_on_grid(multiplier * sensitivity, grid, total.size)
        theta += learning_rate / math.sqrt(t) * total / batch
    return Release(_as_model(domain, cliques, theta), ledger + Ledger.of(charge))


@functools.lru_cache(maxsize=256)
def psgd_charge(multiplier: float, rate: float, steps: int, delta: float, sensitivity: float) -> Charge:
    """The ledger entry of ``steps`` Poisson-sub-sampled Gaussian steps (add/remove).

    Its (epsilon, delta) per step are those of one step at delta/steps (RDP), so basic
    composition stays valid; ``Ledger.total("rdp", delta)`` uses the exact curve.

    >>> c = psgd_charge(noise_multiplier(1.0, 1e-4, 0.05, 50, 50.0), 0.05, 50, 1e-4, 1.0)
    >>> c.count, c.sampling, round(Ledger.of(c).total("rdp", delta=1e-4).epsilon, 2) <= 1.0
    (50, ('poisson', 0.05), True)
    """
    # an accountant query on the exact curve only (epsilon 0 is a placeholder, never a ledger entry)
    one = Charge("psgd_gaussian", 0.0, 0.0, Neighbours.ADD_REMOVE, sensitivity=sensitivity,
                 curve=("gaussian", multiplier), sampling=("poisson", rate))
    per_step = rdp_epsilon((one,), delta / steps)
    return Charge(
        "psgd_gaussian", per_step, delta / steps, Neighbours.ADD_REMOVE, sensitivity=sensitivity,
        count=steps, curve=("gaussian", multiplier), sampling=("poisson", rate),
        note=f"noise multiplier {multiplier:.4g}, rate {rate:g}, {steps} steps",
    )


@functools.lru_cache(maxsize=256)
def noise_multiplier(epsilon: float, delta: float, rate: float, steps: int, max_multiplier: float) -> float:
    """Smallest noise multiplier (to 1%) whose ``steps``-fold RDP total is at most epsilon.

    Public parameters only, so the result is cached (each accountant call costs ~0.5 s).

    >>> noise_multiplier(1.0, 1e-4, 0.05, 50, 50.0) > 0.5
    True
    """

    def cost(m):
        # curve-only accountant query; never a ledger entry
        c = Charge("psgd_gaussian", 0.0, 0.0, Neighbours.ADD_REMOVE, count=steps,
                   curve=("gaussian", m), sampling=("poisson", rate))
        return rdp_epsilon((c,), delta)

    if cost(max_multiplier) > epsilon:
        raise ValueError(
            f"epsilon={epsilon} is out of PSGD's reach with {steps} steps at rate {rate} and "
            f"delta={delta:g}: it would need a noise multiplier above {max_multiplier}"
        )
    lo, hi = 0.05, max_multiplier
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if cost(mid) <= epsilon else (mid, hi)
        if hi / lo < 1.01:
            break
    return hi


def _indicators(rows: np.ndarray, domain: Domain, cliques) -> np.ndarray:
    """One-hot of each distinct row in every clique table, concatenated."""
    blocks = []
    for c in cliques:
        shape = domain.project(c).shape
        flat = np.ravel_multi_index(tuple(rows[:, domain.index(n)] for n in c), shape)
        block = np.zeros((rows.shape[0], int(np.prod(shape))))
        block[np.arange(rows.shape[0]), flat] = 1.0
        blocks.append(block)
    return np.hstack(blocks)


def _split(domain: Domain, cliques, flat: np.ndarray) -> list[np.ndarray]:
    shapes = [domain.project(c).shape for c in cliques]
    ends = np.cumsum([int(np.prod(s)) for s in shapes])
    return [p.reshape(s) for p, s in zip(np.split(flat, ends[:-1]), shapes)]


def _model_marginals(domain, cliques, theta: np.ndarray) -> np.ndarray:
    beliefs = infer_potentials(domain, cliques, _split(domain, cliques, theta))
    return np.concatenate([m.ravel() for m in beliefs.marginals])


def _as_model(domain, cliques, theta) -> MarkovRandomField:
    return MarkovRandomField.of(domain, cliques, _split(domain, cliques, theta))
