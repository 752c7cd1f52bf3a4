"""Samplers: the only place in privgraph where entropy becomes noise or a secret choice.

Two samplers share one implementation and differ only in where their bits come from:

* :class:`SecureSampler` (the default everywhere): a ChaCha20 stream cipher (20 rounds,
  randomgen's ``ChaCha`` bit generator) keyed with 256 bits from ``os.urandom``, i.e. a
  cryptographically secure generator seeded from OS entropy. It cannot be seeded, so
  nobody, including the analyst, can reproduce or predict its noise or sub-samples.
* :class:`SeededSampler` (tests and experiments only): numpy's PCG64 from a seed. Its
  output is reproducible, hence *not private*: anyone with the seed can subtract the noise.

Floating-point safety (Mironov 2012)
------------------------------------
Adding textbook ``numpy`` Laplace noise to a double leaks the input through the low-order
bits of the sum: the set of doubles reachable from ``0 + noise`` differs from that of
``1 + noise``. privgraph never releases such a sum. Real-valued noise lives on a power-of-two
grid: the mechanism rounds its input to a multiple of ``grid`` (a power of two) and adds
``grid * Z`` with ``Z`` an integer drawn from the discrete Laplace or discrete Gaussian
(Canonne, Kamath and Steinke 2020). Every output is then an exact multiple of ``grid``
(exactly representable while ``|x| < 2**52 * grid``), so the set of possible outputs does
not depend on the data. The rounding adds at most ``grid`` to the sensitivity, which the
mechanisms account for.

Accuracy of the integer noise
-----------------------------
The integer samplers are built from one primitive, :meth:`NoiseSampler.exponential`, an
Exp(1) sampler accurate in *relative* terms in both tails:
``E = K ln 2 - log1p(-V)`` with ``K ~ Geometric(1/2)`` (memorylessness: each ``ln 2``
block is entered with probability exactly 1/2) and ``V`` uniform on (0, 1/2) with full
53-bit relative precision (exponent from a geometric number of zero bits, 52 mantissa
bits). So ``P(E >= x)`` is within a relative ``2**-48`` of ``exp(-x)`` and ``P(E < x)``
within a relative ``2**-48`` of ``1 - exp(-x)``, for every ``x`` below ``2**40``.

A geometric variable with ratio ``exp(-lam)`` is drawn as ``A * s + B`` with ``s = 2**j``
and ``lam * s`` in (1/2, 1]: ``B`` uniform on ``{0..s-1}`` from integer bits (exact),
accepted with probability ``exp(-lam B)`` (an event ``E >= lam B``), and
``A = floor(E / (lam s))``, whose bins have width at least 1/2. Each outcome probability is
therefore within a relative ``eta <= 2**-40`` of the exact discrete Laplace (for every
outcome of probability above ``1e-300``; outcomes beyond hold less than ``exp(-10**4)`` in
all). The privacy loss of a discrete-Laplace release is then at most the exact one plus
``2 eta``; the mechanisms add :data:`PURE_DP_SLACK` (``2**-30``) to their calibration to
cover it. OpenDP's exact samplers are the reference the tests compare against.
"""

from __future__ import annotations

import math
import os
from typing import Sequence

import numpy as np

#: Privacy-loss slack added by every pure-DP mechanism to cover the sampler's relative
#: error (``2 eta <= 2**-39``, rounded up generously). See the module docstring.
PURE_DP_SLACK = 2.0**-30

_LN2 = math.log(2.0)
_TWO_M52 = 2.0**-52


class NoiseSampler:
    """Noise and secret random choices from a stream of 64-bit words.

    Subclasses provide :attr:`generator` (a ``numpy.random.Generator``). All public
    methods are vectorised.
    """

    #: True only for samplers whose output nobody can reproduce.
    is_secure: bool = False

    def __init__(self, generator: np.random.Generator):
        self._gen = generator
        self._bits = generator.bit_generator

    # -- raw material --------------------------------------------------------------

    def _words(self, size: int) -> np.ndarray:
        """``size`` independent uniform 64-bit words."""
        return self._bits.random_raw(size).astype(np.uint64, copy=False)

    def _geometric_half(self, size: int, ones: bool) -> np.ndarray:
        """Number of leading (low-order) one bits (``ones``) or zero bits: P(k) = 2^-(k+1).

        Uses 16 bits per round and continues only where all 16 were equal (memoryless).
        """
        out = np.zeros(size, dtype=np.int64)
        todo = np.arange(size)
        while todo.size:
            w = self._words(todo.size) & np.uint64(0xFFFF)
            if ones:
                w = ~w & np.uint64(0xFFFF)
            full = w == 0
            low = w & (~w + np.uint64(1))  # lowest set bit of w
            k = np.where(full, 16, np.log2(np.where(full, 1, low).astype(np.float64)))
            out[todo] += k.astype(np.int64)
            todo = todo[full]
        return out

    def exponential(self, size: int) -> np.ndarray:
        """Exp(1) draws, accurate in relative terms in both tails (see module docstring).

        >>> e = SeededSampler(1).exponential(100_000)
        >>> bool(abs(e.mean() - 1) < 0.03)
        True
        """
        size = int(size)
        k = self._geometric_half(size, ones=True)
        z = self._geometric_half(size, ones=False)
        mant = (self._words(size) >> np.uint64(12)).astype(np.float64)  # 52 bits
        v = np.ldexp(mant * _TWO_M52 + 1.0, -(2 + z))  # uniform on (0, 1/2)
        return k * _LN2 - np.log1p(-v)

    def uniform(self, size: int) -> np.ndarray:
        """Uniform draws on (0, 1], on the grid of multiples of 2**-53."""
        return ((self._words(int(size)) >> np.uint64(11)).astype(np.float64) + 1.0) * 2.0**-53

    def bernoulli_exp(self, x: np.ndarray) -> np.ndarray:
        """Bernoulli(exp(-x)) for each x >= 0, accurate in relative terms both ways."""
        x = np.asarray(x, dtype=np.float64)
        return self.exponential(x.size).reshape(x.shape) >= x

    # -- integer noise -------------------------------------------------------------

    def geometric(self, lam: float, size: int) -> np.ndarray:
        """Draws with P(G = g) = (1 - exp(-lam)) exp(-lam g), g = 0, 1, 2, ...

        Decomposed as ``A * s + B`` (see the module docstring) so that the relative error
        of every outcome stays below ``2**-40`` however small ``lam`` is.
        """
        size = int(size)
        if lam >= 0.5:
            return np.floor(self.exponential(size) / lam).astype(np.int64)
        j = int(math.floor(math.log2(1.0 / lam)))  # lam * 2**j in (1/2, 1]
        if j > 62:
            raise ValueError(f"noise scale {1 / lam!r} grid units is too large (max 2**62)")
        s = 1 << j
        b = np.empty(size, dtype=np.int64)
        todo = np.arange(size)
        while todo.size:
            cand = (self._words(todo.size) & np.uint64(s - 1)).astype(np.int64)
            ok = self.bernoulli_exp(lam * cand)
            b[todo[ok]] = cand[ok]
            todo = todo[~ok]
        a = np.floor(self.exponential(size) / (lam * s)).astype(np.int64)
        return a * s + b

    def discrete_laplace(self, scale: float, size: int | Sequence[int] = 1) -> np.ndarray:
        """Integer noise with P(Z = z) proportional to exp(-|z| / scale).

        The geometric mechanism: added to an integer query of sensitivity ``d`` it gives
        ``(d / scale)``-DP (plus :data:`PURE_DP_SLACK`). A sign and a magnitude, rejecting
        "negative zero" so that zero is not counted twice.

        >>> z = SeededSampler(3).discrete_laplace(2.0, size=5)
        >>> z.dtype, z.shape
        (dtype('int64'), (5,))
        """
        if not (0 < scale < math.inf):
            raise ValueError(f"scale must be positive and finite, got {scale!r}")
        shape = (size,) if np.isscalar(size) else tuple(size)
        n = int(np.prod(shape))
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        lam = 1.0 / scale
        while todo.size:
            g = self.geometric(lam, todo.size)
            negative = (self._words(todo.size) >> np.uint64(63)) == 1
            ok = ~(negative & (g == 0))
            out[todo[ok]] = np.where(negative, -g, g)[ok]
            todo = todo[~ok]
        return out.reshape(shape)

    def discrete_gaussian(self, sigma: float, size: int | Sequence[int] = 1) -> np.ndarray:
        """Integer noise with P(Z = z) proportional to exp(-z^2 / (2 sigma^2)).

        Canonne, Kamath and Steinke (2020), Algorithm 3: propose from a discrete Laplace
        of scale ``t = floor(sigma) + 1`` and accept with probability
        ``exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2))``.
        """
        if not (0 < sigma < math.inf):
            raise ValueError(f"sigma must be positive and finite, got {sigma!r}")
        shape = (size,) if np.isscalar(size) else tuple(size)
        n = int(np.prod(shape))
        t = math.floor(sigma) + 1.0
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            y = self.discrete_laplace(t, todo.size)
            ok = self.bernoulli_exp((np.abs(y) - sigma**2 / t) ** 2 / (2 * sigma**2))
            out[todo[ok]] = y[ok]
            todo = todo[~ok]
        return out.reshape(shape)

    # -- real-valued noise on a power-of-two grid ------------------------------------

    def laplace_on_grid(self, scale: float, grid: float, size: int | Sequence[int] = 1) -> np.ndarray:
        """``grid * Z`` with Z discrete Laplace of scale ``scale / grid`` (floats, exact)."""
        return grid * self.discrete_laplace(scale / grid, size).astype(np.float64)

    def gaussian_on_grid(self, sigma: float, grid: float, size: int | Sequence[int] = 1) -> np.ndarray:
        """``grid * Z`` with Z discrete Gaussian of parameter ``sigma / grid``."""
        return grid * self.discrete_gaussian(sigma / grid, size).astype(np.float64)

    # -- secret selections (sub-sampling, selection mechanisms) ------------------------

    def bernoulli(self, p: float, size: int) -> np.ndarray:
        """Independent Bernoulli(p) flags (Poisson sub-sampling of rows)."""
        return self.uniform(size) <= p

    def binomial(self, n: np.ndarray, p: float) -> np.ndarray:
        """Binomial(n, p) per entry: Poisson sub-sampling applied to a table of counts."""
        return self._gen.binomial(np.asarray(n, dtype=np.int64), p)

    def multivariate_hypergeometric(self, colors: np.ndarray, m: int) -> np.ndarray:
        """Counts of an exactly-m sample without replacement from a table of counts."""
        colors = np.asarray(colors, dtype=np.int64)
        flat = self._gen.multivariate_hypergeometric(colors.ravel(), int(m), method="marginals")
        return flat.reshape(colors.shape)

    def choice(self, n: int, m: int) -> np.ndarray:
        """m distinct indices of range(n), uniformly (sampling without replacement)."""
        return self._gen.choice(int(n), size=int(m), replace=False, shuffle=False)

    def permutation(self, n: int) -> np.ndarray:
        """A uniform random permutation of range(n)."""
        return self._gen.permutation(int(n))

    def race(self, log_weights: np.ndarray) -> int:
        """Index i with probability proportional to exp(log_weights[i]).

        A race of exponential clocks: ``argmin E_i / w_i``. Both the probability of each
        winner and of its complement are accurate in relative terms (the exponentials
        are), which the exponential mechanism's pure-DP claim relies on.
        """
        lw = np.asarray(log_weights, dtype=np.float64)
        return int(np.argmin(np.log(self.exponential(lw.size)) - (lw - lw.max())))


class SecureSampler(NoiseSampler):
    """The default sampler: ChaCha20 keyed from OS entropy; cannot be seeded.

    Use it for every release that is meant to be private. Two instances never share a
    stream, and nothing about the key is stored or exposed.

    >>> SecureSampler().is_secure
    True
    >>> SecureSampler(seed=1)
    Traceback (most recent call last):
    ...
    TypeError: SecureSampler cannot be seeded; use SeededSampler(seed) for tests and experiments
    """

    is_secure = True

    def __init__(self, **kwargs):
        if kwargs:
            raise TypeError(
                "SecureSampler cannot be seeded; use SeededSampler(seed) for tests and experiments"
            )
        from randomgen import ChaCha

        key = int.from_bytes(os.urandom(32), "little")
        super().__init__(np.random.Generator(ChaCha(seed=key, rounds=20)))

    def __repr__(self) -> str:
        return "SecureSampler()"


class SeededSampler(NoiseSampler):
    """A reproducible sampler for TESTS AND EXPERIMENTS ONLY: its noise is not private.

    Anyone who knows the seed can regenerate the noise and subtract it. Same
    constructions and distributions as :class:`SecureSampler`, bits from numpy's PCG64.

    >>> a = SeededSampler(7).discrete_laplace(3.0, size=4)
    >>> b = SeededSampler(7).discrete_laplace(3.0, size=4)
    >>> bool((a == b).all())
    True
    """

    is_secure = False

    def __init__(self, seed: int | np.random.SeedSequence):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer, np.random.SeedSequence)):
            raise ValueError(f"seed must be an integer or a SeedSequence, got {seed!r}")
        self.seed = seed
        super().__init__(np.random.Generator(np.random.PCG64(seed)))

    def __repr__(self) -> str:
        return f"SeededSampler({self.seed!r})"


def resolve_sampler(random_state: "None | int | NoiseSampler") -> NoiseSampler:
    """The public entry points' rule: None -> SecureSampler(); an int -> SeededSampler.

    >>> resolve_sampler(None).is_secure, resolve_sampler(5).is_secure
    (True, False)
    """
    if random_state is None:
        return SecureSampler()
    if isinstance(random_state, NoiseSampler):
        return random_state
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return SeededSampler(int(random_state))
    raise ValueError(
        f"random_state must be None, an integer seed or a NoiseSampler, got {random_state!r}"
    )


def power_of_two_at_most(x: float) -> float:
    """The largest power of two <= x (x > 0).

    >>> power_of_two_at_most(3.0), power_of_two_at_most(0.25)
    (2.0, 0.25)
    """
    m, e = math.frexp(x)  # x = m * 2**e, m in [0.5, 1)
    return math.ldexp(1.0, e - 1)
