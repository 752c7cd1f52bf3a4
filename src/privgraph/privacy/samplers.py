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

Exact secret selections
-----------------------
Amplification by sub-sampling assumes the sub-sample has exactly the law of the theorem
(independent Bernoulli(q) rows; a uniform m-subset) and nothing charges for a deviation,
so these draws use no floating-point approximation (numpy's float-based ``binomial`` and
``multivariate_hypergeometric`` are not used):

* :meth:`NoiseSampler.bernoulli`: a float ``p`` is a dyadic rational ``a / 2**k``; a trial
  compares a stream of uniform bits with ``p``'s binary expansion and succeeds iff it is
  below ``p``, so with probability exactly ``p``. Sixty-four trials run in parallel, one
  per bit of a word; about 8 words per 64 trials.
* :meth:`NoiseSampler.binomial`: the number of such successes among ``n`` trials, per cell.
* :meth:`NoiseSampler.multivariate_hypergeometric`: an exact Poisson sample whose size is
  then corrected by dropping or adding a uniform subset (see the method).
* :meth:`NoiseSampler.choice` and :meth:`NoiseSampler.permutation`: numpy's
  ``Generator.choice(replace=False)`` (Floyd's algorithm or Fisher-Yates) and
  ``Generator.permutation`` (Fisher-Yates), which draw bounded integers by rejection on the
  generator's raw words (Lemire's method or masking), hence exactly uniform.

The only assumption left is the generator's: its words are uniform and independent
(ChaCha20 for :class:`SecureSampler`).
"""

from __future__ import annotations

import math
import os
from typing import Sequence

import numpy as np
from randomgen import ChaCha
from privgraph.validation import InvalidInput

#: Privacy-loss slack added by every pure-DP mechanism to cover the sampler's relative
#: error (``2 eta <= 2**-39``, rounded up generously). See the module docstring.
PURE_DP_SLACK = 2.0**-30

_LN2 = math.log(2.0)
_TWO_M52 = 2.0**-52
_CHUNK_WORDS = 2**20  # binomial trials are drawn 64 * 2**20 at a time
#: Most rows a multivariate hypergeometric draw chooses directly (Floyd's algorithm: some
#: 40 bytes a row), so its memory never grows with the table's rows.
_DIRECT_ROWS = 2**20


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
            raise InvalidInput(f"noise scale {1 / lam!r} grid units is too large (max 2**62)")
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
            raise InvalidInput(f"scale must be positive and finite, got {scale!r}")
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
            raise InvalidInput(f"sigma must be positive and finite, got {sigma!r}")
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
    # Exact: see "Exact secret selections" in the module docstring.

    def _bernoulli_words(self, p: float, size: int) -> np.ndarray:
        """``size`` 64-bit words whose 64 * size bits are independent Bernoulli(p), exactly.

        Each bit lane compares its own stream of uniform bits ``u1 u2 ...`` (one bit from
        each fresh word) with the finite binary expansion ``p = 0.b1 b2 ... bk`` and is a
        success iff ``U = 0.u1 u2 ... < p``: at the first position where they differ,
        ``u_i = 0`` and ``b_i = 1``. Lanes still tied after ``k`` bits have ``U >= p``:
        failures. So ``P(success) = p`` exactly. Words whose 64 lanes are all decided drop
        out: about 8 words per 64 trials whatever ``p`` (one for ``p = 1/2``).
        """
        out = np.zeros(size, dtype=np.uint64)
        if p >= 1:
            return ~out
        if p <= 0:
            return out
        a, denominator = float(p).as_integer_ratio()  # p = a / 2**k exactly
        k = denominator.bit_length() - 1
        todo = np.arange(size)
        tied = np.full(size, ~np.uint64(0))
        for i in range(k - 1, -1, -1):  # b_1 .. b_k, most significant first
            if not todo.size:
                break
            u = self._words(todo.size)
            if (a >> i) & 1:
                out[todo] |= tied & ~u
                tied &= u
            else:
                tied &= ~u
            live = tied != 0
            todo, tied = todo[live], tied[live]
        return out

    def bernoulli(self, p: float, size: int) -> np.ndarray:
        """Independent Bernoulli(p) flags (Poisson sub-sampling of rows), exact for the float p.

        >>> flags = SeededSampler(0).bernoulli(0.25, 10)
        >>> flags.dtype, flags.shape
        (dtype('bool'), (10,))
        >>> bool(SeededSampler(0).bernoulli(1.0, 5).all()), bool(SeededSampler(0).bernoulli(0.0, 5).any())
        (True, False)
        """
        size = int(size)
        words = self._bernoulli_words(float(p), -(-size // 64))
        return np.unpackbits(words.view(np.uint8), bitorder="little")[:size].astype(bool)

    def binomial(self, n: np.ndarray, p: float) -> np.ndarray:
        """Binomial(n, p) per entry, exactly: the successes among ``n`` exact Bernoulli(p) trials.

        Poisson sub-sampling applied to a table of counts (binomial thinning). The
        ``n.sum()`` trials are laid end to end as bits of :meth:`_bernoulli_words` and
        each entry counts the ones in its own range. O(``n.sum()``) work, drawn in chunks
        of ``2**26`` trials, so memory stays O(entries + chunk).

        >>> b = SeededSampler(0).binomial(np.array([[10, 0], [3, 1000]]), 0.5)
        >>> b.shape, int(b[0, 1]), bool((b <= [[10, 0], [3, 1000]]).all())
        ((2, 2), 0, True)
        """
        n = np.asarray(n, dtype=np.int64)
        return self._binomial(n.ravel(), float(p)).reshape(n.shape)

    def _binomial(self, flat: np.ndarray, p: float) -> np.ndarray:
        """:meth:`binomial` on a flat int64 array (internal callers use this, not the hook)."""
        if p >= 1 or p <= 0:
            return flat.copy() if p >= 1 else np.zeros_like(flat)
        bounds = np.concatenate([[0], np.cumsum(flat)])  # trial ranges [bounds[j], bounds[j+1])
        ones = np.empty(bounds.size, dtype=np.int64)  # ones before each bound
        chunk, done, before = _CHUNK_WORDS * 64, 0, 0
        while True:
            lo, hi = np.searchsorted(bounds, [done, done + chunk])
            words = self._bernoulli_words(float(p), -(-min(chunk, int(bounds[-1]) - done) // 64))
            ones[lo:hi] = before + _ones_before(words, bounds[lo:hi] - done)
            before += int(np.bitwise_count(words).sum())
            done += chunk
            if done >= bounds[-1]:
                ones[hi:] = before
                break
        return np.diff(ones)

    def multivariate_hypergeometric(self, colors: np.ndarray, m: int) -> np.ndarray:
        """Counts of an exactly-m sample without replacement from a table of counts, exactly.

        Number the table's ``N`` rows cell by cell. First a Poisson sample ``S`` at rate
        ``q = m/N`` (the float; any fixed ``q`` works) through :meth:`binomial`: given its
        size ``K``, ``S`` is a uniform K-subset (every K-subset has probability
        ``q^K (1-q)^(N-K)``). Then fix the size: if ``K > m`` keep a uniform m-subset of
        ``S`` (drop ``K - m`` of its rows, chosen as in :meth:`choice`), if
        ``K < m`` add a uniform ``(m - K)``-subset of the other rows. Either way the result
        is a uniform m-subset of all ``N`` rows, and only its counts per cell are kept.
        O(N / 8) random words and O(cells + |K - m|) memory (``|K - m|`` is about
        ``sqrt(N q (1 - q))``). When ``m`` or ``N - m`` is at most ``N/64`` and at most
        2^20 (:data:`_DIRECT_ROWS`), those rows are chosen directly instead (:meth:`choice`,
        Floyd's algorithm: O(m) work and memory), so memory never grows with N.

        >>> t = SeededSampler(0).multivariate_hypergeometric(np.array([[5, 0], [3, 2]]), 7)
        >>> int(t.sum()), int(t[0, 1]), bool((t <= [[5, 0], [3, 2]]).all())
        (7, 0, True)
        """
        colors = np.asarray(colors, dtype=np.int64)
        flat = colors.ravel()
        total, m = int(flat.sum()), int(m)
        if not 0 <= m <= total:
            raise InvalidInput(f"m must lie in [0, {total}] (the table's rows), got {m}")
        if min(m, total - m) <= min(total // 64, _DIRECT_ROWS):  # few drawn or left out: choose them directly
            if m <= total // 2:
                return self._uniform_cells(flat, m).reshape(colors.shape)
            return (flat - self._uniform_cells(flat, total - m)).reshape(colors.shape)
        kept = self._binomial(flat, m / total)
        size = int(kept.sum())
        if size >= m:
            kept = kept - self._uniform_cells(kept, size - m)
        else:
            kept = kept + self._uniform_cells(flat - kept, m - size)
        return kept.reshape(colors.shape)

    def _uniform_cells(self, counts: np.ndarray, k: int) -> np.ndarray:
        """Per-cell counts of k rows drawn uniformly without replacement from ``counts``' rows."""
        picked = self._gen.choice(int(counts.sum()), size=int(k), replace=False, shuffle=False)
        cells = np.searchsorted(np.cumsum(counts), picked, side="right")
        return np.bincount(cells, minlength=counts.size)

    def choice(self, n: int, m: int) -> np.ndarray:
        """m distinct indices of range(n), uniformly (sampling without replacement).

        numpy's ``Generator.choice(replace=False)``: Floyd's algorithm (O(m) memory), or a
        partial Fisher-Yates shuffle of ``range(n)`` when ``n > 10000`` and ``m > n/50``
        (O(n) memory). Both draw bounded integers by rejection on the generator's words
        (Lemire's method, masking), so every m-subset has exactly the same probability.
        """
        return self._gen.choice(int(n), size=int(m), replace=False, shuffle=False)

    def permutation(self, n: int) -> np.ndarray:
        """A uniform random permutation of range(n): numpy's Fisher-Yates on exact integers."""
        return self._gen.permutation(int(n))

    def race(self, log_weights: np.ndarray) -> int:
        """Index i with probability proportional to exp(log_weights[i]).

        A race of exponential clocks: ``argmin E_i / w_i``. Both the probability of each
        winner and of its complement are accurate in relative terms (the exponentials
        are), which the exponential mechanism's pure-DP claim relies on.
        """
        lw = np.asarray(log_weights, dtype=np.float64)
        return int(np.argmin(np.log(self.exponential(lw.size)) - (lw - lw.max())))

    def race_order(self, log_weights: np.ndarray) -> np.ndarray:
        """The finishing order of the race of :meth:`race` (one draw of the same clocks).

        Its first entry is distributed as :meth:`race`. The first entry of the order that
        lies in any fixed subset S is distributed as a race over S alone (the clocks of S
        are independent exponentials whatever the others do), so a caller can restrict a
        race to the candidates that pass a test without evaluating the test on all of them.

        >>> order = SeededSampler(0).race_order(np.array([0.0, 50.0, 0.0]))
        >>> int(order[0]), sorted(order.tolist())
        (1, [0, 1, 2])
        """
        lw = np.asarray(log_weights, dtype=np.float64)
        return np.argsort(np.log(self.exponential(lw.size)) - (lw - lw.max()), kind="stable")


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
            raise InvalidInput(f"seed must be an integer or a SeedSequence, got {seed!r}")
        self.seed = seed
        super().__init__(np.random.Generator(np.random.PCG64(seed)))

    def __repr__(self) -> str:
        return f"SeededSampler({self.seed!r})"


def resolve_sampler(random_state: "None | int | np.random.Generator | NoiseSampler") -> NoiseSampler:
    """The public entry points' rule: None -> SecureSampler(); an int or a numpy Generator
    -> SeededSampler (a Generator gives it a seed drawn from itself, so the noise follows
    the Generator's state); a NoiseSampler is used as it is.

    >>> resolve_sampler(None).is_secure, resolve_sampler(5).is_secure
    (True, False)
    >>> resolve_sampler(np.random.default_rng(0)).is_secure
    False
    """
    if random_state is None:
        return SecureSampler()
    if isinstance(random_state, NoiseSampler):
        return random_state
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return SeededSampler(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return SeededSampler(int(random_state.integers(0, 2**63)))
    raise InvalidInput(
        f"random_state must be None, an integer seed, a numpy Generator or a NoiseSampler, got {random_state!r}"
    )


def _ones_before(words: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Number of one bits of ``words`` (bit j of word i is bit 64 i + j) before each position.

    >>> _ones_before(np.array([3, 1], dtype=np.uint64), np.array([0, 1, 2, 64, 65, 128]))
    array([0, 1, 2, 2, 3, 3])
    """
    if not positions.size:
        return np.zeros(0, dtype=np.int64)
    prefix = np.concatenate([[0], np.cumsum(np.bitwise_count(words), dtype=np.int64)])
    q, r = positions >> 6, (positions & 63).astype(np.uint64)
    inside = q < words.size
    partial = np.zeros(positions.size, dtype=np.int64)
    masks = (np.uint64(1) << r[inside]) - np.uint64(1)
    partial[inside] = np.bitwise_count(words[q[inside]] & masks)
    return prefix[q] + partial


def power_of_two_at_most(x: float) -> float:
    """The largest power of two <= x (x > 0).

    >>> power_of_two_at_most(3.0), power_of_two_at_most(0.25)
    (2.0, 0.25)
    """
    m, e = math.frexp(x)  # x = m * 2**e, m in [0.5, 1)
    return math.ldexp(1.0, e - 1)
