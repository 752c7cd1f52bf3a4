"""PC with Fisher's z on one private covariance: the whole search is post-processing.

**One release** (:func:`release_covariance`): the columns are scaled by their public domain
into ``[-1/2, 1/2]`` (continuous: raw values clipped to the codebook's bounds; ordinal and
binary: codes over their size; :mod:`privgraph.data.moments`), the sums of x and of x x^T
(and n under add/remove) are computed in one pass (numpy for frames, one DuckDB query for
files), and released once by the Gaussian mechanism at the whole (epsilon, delta)
(:func:`~privgraph.privacy.moments.release_moments`: the sensitivity for each relation is
derived there). That is the only charge: PC then asks as many tests as it likes, at every
level, for free, so nothing caps its rounds and nothing refuses tens of columns.

**Post-processing** (:func:`covariance_from_moments`): the covariance
``S2 / n - m m^T`` (m = S1 / n) is made positive definite by clipping its eigenvalues from
below at :data:`EIGEN_FLOOR` times the noise's spectral scale ``s sqrt(d)`` (``s`` the noise's
standard deviation on one covariance entry, public), then turned into a correlation matrix.

**The test** (:class:`FisherZDecider`): Fisher's z of each partial correlation, its standard
deviation widened by the noise's first-order effect on that partial correlation
(:func:`~privgraph.stats.fisher_z.partial_correlation_noise`, computed from the released
matrix and the public s) so that noise alone does not look like dependence (a dense graph):
measured against the plain test and an effective sample size in docs/discovery.md. Without
noise (``method="pc"``) it is causal-learn's fisherz exactly.

**Refusal** (:func:`check_useful`, public facts only: d, n, epsilon, delta, relation): when
the noise on the correlation of two columns that spread over their bounds as uniforms do
(variance 1/12 after scaling) would have standard deviation above :data:`MAX_CORRELATION_NOISE`,
every test would read noise, and the run is refused before any noise is drawn. Under
add/remove n is private and released with the moments, so nothing refuses on it; the
planner predicts at a public guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privgraph.causal.deciders import BudgetTooSmall
from privgraph.data.domain import Domain
from privgraph.privacy import Budget, Ledger, Neighbours, NoiseSampler
from privgraph.privacy.composition import BASIC, RDP, Accountant
from privgraph.privacy.mechanisms import Release
from privgraph.privacy.moments import MEAN_WEIGHT, Moments, moments_charge, moments_noise, release_moments
from privgraph.stats.fisher_z import FisherZTest

#: Eigenvalues of the released covariance are clipped from below at this many times the
#: noise's spectral scale ``s sqrt(d)`` (measured, docs/discovery.md).
EIGEN_FLOOR = 1.0
#: Largest standard deviation of the noise on the correlation of two uniformly spread
#: columns (scaled variance 1/12) that the run accepts: at 1 every correlation is noise.
MAX_CORRELATION_NOISE = 1.0
#: The scaled variance of a column spread over its bounds as a uniform.
UNIFORM_VARIANCE = 1.0 / 12.0


@dataclass(frozen=True)
class ReleasedCovariance:
    """A covariance of scaled columns (post-processed), the n it stands for, and its noise."""

    names: tuple[str, ...]
    covariance: np.ndarray
    n: float
    noise_sd: float  # standard deviation of the noise on one covariance entry (0: not private)

    @property
    def correlation(self) -> np.ndarray:
        a = 1.0 / np.sqrt(np.diag(self.covariance))
        return self.covariance * np.outer(a, a)


def release_accountant(private: bool) -> Accountant:
    """How a PC on ONE released covariance composes (Fisher-z here, rank in
    :mod:`~privgraph.causal.rank_pc`): its one zCDP charge by RDP; not private, basic
    composition of no charges. The one place these fits choose it.

    >>> release_accountant(True).name, release_accountant(False).name
    ('rdp', 'basic')
    """
    return RDP if private else BASIC


def covariance_noise(d: int, n: float, *, epsilon: float, delta: float, neighbours, mean: float = 0.0,
                     norm: float | None = None) -> float:
    """Standard deviation of the noise on one entry of ``S2 / n - m m^T`` (public facts, and
    ``mean``: the largest |released mean|, post-processing). The entry's noise is
    ``(E_jk - m_j e_k - m_k e_j) / n`` with E the sums of products' noise (sd sigma) and e the
    sums of x's (sd sigma / MEAN_WEIGHT), so its sd is at most
    ``sigma / n sqrt(1 + 2 mean^2 / MEAN_WEIGHT^2)``.

    >>> 0 < covariance_noise(20, 10_000, epsilon=1.0, delta=1e-6, neighbours="replace_one") < 0.01
    True
    """
    sigma = moments_noise(d, epsilon=epsilon, delta=delta, neighbours=Neighbours.parse(neighbours), norm=norm)
    return sigma / max(n, 1.0) * math.sqrt(1 + 2 * mean**2 / MEAN_WEIGHT**2)


def correlation_noise(d: int, n: float, *, epsilon: float, delta: float, neighbours, norm: float | None = None) -> float:
    """The noise's standard deviation on the correlation of two uniformly spread columns
    centred in their bounds (public facts only).

    >>> correlation_noise(20, 10_000, epsilon=1.0, delta=1e-6, neighbours="replace_one") < 0.1
    True
    """
    return covariance_noise(d, n, epsilon=epsilon, delta=delta, neighbours=neighbours, norm=norm) / UNIFORM_VARIANCE


def check_useful(d: int, n: int, *, epsilon: float, delta: float, neighbours, norm: float | None = None) -> None:
    """Refuse (before any noise) a release whose noise would drown every correlation.

    >>> check_useful(50, 200, epsilon=0.1, delta=1e-6, neighbours="replace_one")
    Traceback (most recent call last):
    ...
    privgraph.privacy.budget.BudgetTooSmall: epsilon=0.1 (delta=1e-06) on 200 rows and 50 columns gives the covariance release noise of standard deviation ... on a correlation (columns spread over their bounds), above 1: every test would read noise. It needs about ... times the rows (or about ... times epsilon), or fewer columns
    """
    tau = correlation_noise(d, n, epsilon=epsilon, delta=delta, neighbours=neighbours, norm=norm)
    if tau > MAX_CORRELATION_NOISE:
        need = tau / MAX_CORRELATION_NOISE
        raise BudgetTooSmall(f"epsilon={epsilon:g} (delta={delta:g}) on {n} rows and {d} columns gives the covariance "
                             f"release noise of standard deviation {tau:.3g} on a correlation (columns spread over "
                             f"their bounds), above {MAX_CORRELATION_NOISE:g}: every test would read noise. It needs "
                             f"about {need:.3g} times the rows (or about {need:.3g} times epsilon), or fewer columns")


def fisher_z_plan(domain: Domain, n: int, *, epsilon: float, delta: float, neighbours,
                  norm: float | None = None) -> Ledger:
    """The ledger :func:`release_covariance` reserves (public facts only), after the refusal
    check (replace-one: n public).

    >>> from privgraph.data import Kind
    >>> d = Domain(tuple("abc"), (0, 0, 0), (Kind.CONTINUOUS,) * 3, bounds=((0, 1),) * 3)
    >>> [c.mechanism for c in fisher_z_plan(d, 1000, epsilon=1.0, delta=1e-6, neighbours="replace_one")]
    ['gaussian_vector']
    """
    neighbours = Neighbours.parse(neighbours)
    if neighbours is Neighbours.REPLACE_ONE:
        check_useful(len(domain.names), n, epsilon=epsilon, delta=delta, neighbours=neighbours, norm=norm)
    return Ledger.of(moments_charge(len(domain.names), epsilon=epsilon, delta=delta, neighbours=neighbours, norm=norm))


def release_covariance(moments: Moments, names, *, epsilon: float, delta: float, neighbours,
                       sampler: NoiseSampler, budget: Budget | None = None) -> Release:
    """The private covariance: the refusal check (replace-one), the one release of the
    moments (its charge reserved on ``budget`` first), and the post-processing.

    >>> from privgraph.privacy import SeededSampler
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-0.5, 0.5, size=(5000, 3))
    >>> m = Moments(5000.0, x.sum(0), x.T @ x)
    >>> cov, ledger = release_covariance(m, ("a", "b", "c"), epsilon=1.0, delta=1e-6, neighbours="replace_one",
    ...                                  sampler=SeededSampler(0))
    >>> cov.covariance.shape, bool(np.all(np.linalg.eigvalsh(cov.covariance) > 0)), len(ledger)
    ((3, 3), True, 1)
    """
    neighbours = Neighbours.parse(neighbours)
    d = len(names)
    if neighbours is Neighbours.REPLACE_ONE:
        check_useful(d, int(moments.count), epsilon=epsilon, delta=delta, neighbours=neighbours, norm=moments.norm)
    noisy, ledger = release_moments(moments, epsilon=epsilon, delta=delta, neighbours=neighbours, sampler=sampler,
                                    budget=budget)
    n = max(noisy.count, d + 4.0)  # post-processing: a released n below d + 4 leaves no degrees of freedom
    mean = float(np.max(np.abs(noisy.first))) / n if d else 0.0
    s = covariance_noise(d, n, epsilon=epsilon, delta=delta, neighbours=neighbours, mean=min(mean, 0.5),
                         norm=moments.norm)
    return Release(covariance_from_moments(noisy, tuple(names), noise_sd=s, n=n), ledger)


def covariance_from_moments(moments: Moments, names: tuple, *, noise_sd: float = 0.0,
                            n: float | None = None) -> ReleasedCovariance:
    """The covariance of the moments, its eigenvalues clipped from below (post-processing).

    Without noise the floor is a relative 1e-12 of the largest eigenvalue, which leaves a
    positive definite matrix unchanged up to rounding; the plain covariance is used when it
    is positive definite already (non-private runs are causal-learn's exactly).

    >>> m = Moments(4.0, np.array([0.0, 0.0]), np.array([[1.0, 0.5], [0.5, 1.0]]))
    >>> covariance_from_moments(m, ("a", "b")).correlation.tolist()
    [[1.0, 0.5], [0.5, 1.0]]
    """
    n = moments.count if n is None else n
    mean = moments.first / n
    cov = moments.second / n - np.outer(mean, mean)
    cov = (cov + cov.T) / 2
    if noise_sd > 0:
        values, vectors = np.linalg.eigh(cov)
        floor = EIGEN_FLOOR * noise_sd * math.sqrt(len(names))
        cov = (vectors * np.maximum(values, floor)) @ vectors.T
    return ReleasedCovariance(tuple(names), cov, float(n), float(noise_sd))


class FisherZDecider:
    """``decide(x, y, S)``: Fisher's z on the released covariance at level alpha (no budget).

    ``noise_aware`` (default True) widens the test by the noise's effect on each partial
    correlation (module docstring); False is the plain test on the noisy matrix.

    >>> m = Moments(1000.0, np.zeros(3), 1000 * np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.25], [0.5, 0.25, 1.0]]))
    >>> decide = FisherZDecider(covariance_from_moments(m, ("a", "b", "c")), 0.05)
    >>> decide("b", "c", ("a",)), decide("a", "b", ())
    (True, False)
    """

    exhausted = False

    def __init__(self, released: ReleasedCovariance, alpha: float, *, noise_aware: bool = True):
        self.released, self.alpha = released, alpha
        self.index = {name: i for i, name in enumerate(released.names)}
        noise = released.noise_sd if noise_aware else 0.0
        self.test = FisherZTest(released.correlation, released.n, noise_sd=noise,
                                variances=np.diag(released.covariance))
        self.ledger = Ledger()

    def __call__(self, x: str, y: str, S: tuple) -> bool:
        i = self.index
        return self.test.p_value(i[x], i[y], [i[v] for v in S]) > self.alpha


__all__ = ["EIGEN_FLOOR", "FisherZDecider", "MAX_CORRELATION_NOISE", "ReleasedCovariance", "check_useful",
           "correlation_noise", "covariance_from_moments", "covariance_noise", "fisher_z_plan", "release_covariance"]
