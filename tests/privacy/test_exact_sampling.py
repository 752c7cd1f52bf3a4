"""Secret sub-samples have exactly the law amplification assumes (issue 11, finding 7).

Deterministic checks feed the Bernoulli construction scripted words and compare every
trial with the exact rule ``U < p`` (Fractions); statistical checks compare frequencies with
the exact laws, each tolerance a Hoeffding bound with a union over the outcomes.
"""

import math
from fractions import Fraction
from itertools import product

import numpy as np
import pytest

import privgraph.privacy.samplers as samplers
from privgraph.privacy.samplers import NoiseSampler, SecureSampler, SeededSampler
from tests.privacy.bounds import hoeffding


class ScriptedSampler(NoiseSampler):
    """Hands out given words (then words from a seeded stream) and records them."""

    def __init__(self, words=(), seed=0):
        self._script = list(words)
        self._rng = np.random.default_rng(seed)
        self.used: list[np.ndarray] = []

    def _words(self, size):
        take, self._script = self._script[:size], self._script[size:]
        rest = self._rng.integers(0, 2**64, size - len(take), dtype=np.uint64)
        w = np.concatenate([np.array(take, dtype=np.uint64), rest])
        self.used.append(w)
        return w


@pytest.mark.parametrize("bits", [1, 2, 3, 6])
def test_bernoulli_is_exact_on_every_bit_pattern(bits):
    # Lane L of round i sees bit i of L: the 64 lanes run through all 2**6 patterns of
    # their first six bits, so exactly a of every 2**bits patterns must succeed for p = a/2**bits.
    rounds = [sum(((lane >> i) & 1) << lane for lane in range(64)) for i in range(6)]
    for a in range(1, 2**bits):
        p = a / 2**bits
        flags = ScriptedSampler(rounds).bernoulli(p, 64)
        assert flags.sum() == 64 * a // 2**bits, (p, flags.sum())


@pytest.mark.parametrize("p", [0.1, 1 / 3, 0.7, 1 - 2.0**-53, 2.0**-70, 5e-324, 0.5 + 2.0**-40])
def test_bernoulli_is_the_exact_comparison_with_p(p):
    # Trial = bit lane; each round hands one fresh word to every 64-trial word that still
    # has a lane whose bits so far equal p's leading bits. Then a trial must succeed iff
    # the number its bits form is below p (exact rule U < p; a tie to the end is U >= p).
    words, target = 40, Fraction(p)
    s = ScriptedSampler(seed=11)
    flags = s.bernoulli(p, 64 * words).reshape(words, 64)
    prefix, depth, alive = [[0] * 64 for _ in range(words)], [0] * words, list(range(words))
    for w in s.used:
        assert len(w) == len(alive)
        for j, word in zip(alive, w.tolist()):
            prefix[j] = [2 * v + ((word >> lane) & 1) for lane, v in enumerate(prefix[j])]
            depth[j] += 1
        alive = [j for j in alive if math.floor(target * 2 ** depth[j]) in prefix[j]]
    expected = [[Fraction(v, 2 ** depth[j]) < target for v in prefix[j]] for j in range(words)]
    assert flags.tolist() == expected


def test_bernoulli_frequency_and_edges():
    n = 1_000_000
    for p in (0.1, 0.5, 0.999):
        assert abs(SeededSampler(1).bernoulli(p, n).mean() - p) <= hoeffding(n, events=3)
    assert SeededSampler(2).bernoulli(1.0, 100).all() and not SeededSampler(2).bernoulli(0.0, 100).any()
    assert not SeededSampler(3).bernoulli(5e-324, n).any()  # terminates, P(any) < 1e-317
    assert SeededSampler(4).bernoulli(0.3, 0).shape == (0,)


def test_binomial_matches_the_exact_law_on_a_tiny_case():
    reps, n, p = 200_000, 3, 0.375
    draws = SeededSampler(5).binomial(np.full(reps, n), p)
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    freq = np.bincount(draws, minlength=n + 1) / reps
    assert np.abs(freq - pmf).max() <= hoeffding(reps, events=n + 1)


def test_binomial_counts_the_same_bits_whatever_the_chunking(monkeypatch):
    # At p = 1/2 every word holds 64 finished trials, so the bit stream does not depend
    # on how the trials are chunked: counts must equal the ranges of bernoulli's flags.
    counts = np.array([0, 1, 63, 64, 65, 0, 127, 300, 2, 0, 1000])
    flags = SeededSampler(6).bernoulli(0.5, int(counts.sum()))
    ends = np.cumsum(counts)
    expected = [int(flags[e - c:e].sum()) for c, e in zip(counts, ends)]
    for chunk_words in (1, 2, 3, 5, 2**20):
        monkeypatch.setattr(samplers, "_CHUNK_WORDS", chunk_words)
        assert SeededSampler(6).binomial(counts, 0.5).tolist() == expected


def test_binomial_edges_and_shape():
    table = np.array([[5, 0], [3, 1000]])
    assert np.array_equal(SeededSampler(7).binomial(table, 1.0), table)
    assert not SeededSampler(7).binomial(table, 0.0).any()
    b = SeededSampler(7).binomial(table, 0.2)
    assert b.shape == (2, 2) and b[0, 1] == 0 and (b <= table).all() and (b >= 0).all()
    assert SeededSampler(7).binomial(np.zeros(3, dtype=np.int64), 0.5).tolist() == [0, 0, 0]


def _hypergeometric_law(colors, m):
    """Exact law of the per-cell counts of a uniform m-subset, by enumeration."""
    total = math.comb(sum(colors), m)
    law = {}
    for draw in product(*(range(c + 1) for c in colors)):
        if sum(draw) == m:
            law[draw] = math.prod(math.comb(c, k) for c, k in zip(colors, draw)) / total
    return law


@pytest.mark.parametrize("colors,m", [
    ([2, 1, 3], 2), ([2, 1, 3], 4), ([0, 2, 0, 3], 3),  # Poisson sample, then size fixed
    ([30, 0, 34], 1), ([30, 0, 34], 63),  # at most N/64 drawn or left out: chosen directly
])
def test_hypergeometric_matches_the_exact_law_on_tiny_tables(colors, m):
    law = _hypergeometric_law(colors, m)
    reps, s = 8_000, SeededSampler(8)
    seen = {}
    for _ in range(reps):
        draw = tuple(s.multivariate_hypergeometric(np.array(colors), m).tolist())
        seen[draw] = seen.get(draw, 0) + 1
    assert set(seen) <= set(law)
    tol = hoeffding(reps, events=len(law))
    assert max(abs(seen.get(k, 0) / reps - q) for k, q in law.items()) <= tol


@pytest.mark.parametrize("m", [50, 3200, 6350])  # direct choice, Poisson and fix-up, complement
def test_hypergeometric_mean_on_a_larger_table(m):
    # The first cell's share of a sample without replacement obeys Hoeffding's bound
    # (Hoeffding 1963, Theorem 4) around its mean 3000 / 6400, for one draw and for the mean.
    colors, reps, s = np.array([3000, 0, 3400]), 400, SeededSampler(9)
    shares = [s.multivariate_hypergeometric(colors, m)[0] / m for _ in range(reps)]
    assert abs(np.mean(shares) - 3000 / 6400) <= hoeffding(reps)


@pytest.mark.parametrize("m", [1, 63])
def test_hypergeometric_is_exact_past_the_cap_on_direct_rows(monkeypatch, m):
    monkeypatch.setattr(samplers, "_DIRECT_ROWS", 0)  # the Poisson sample and its fix-up instead
    test_hypergeometric_matches_the_exact_law_on_tiny_tables([30, 0, 34], m)


class _ChoiceSizes:
    """A generator's ``choice`` that records the sizes asked for."""

    def __init__(self, gen):
        self.gen, self.sizes = gen, []

    def choice(self, *args, size, **kwargs):
        self.sizes.append(size)
        return self.gen.choice(*args, size=size, **kwargs)


def test_hypergeometric_memory_does_not_grow_with_the_rows():
    """Past 2^20 rows (N/100 of N = 2^27 here) no row is chosen directly: the Poisson sample's
    fix-up chooses about sqrt(N q) of them, so the draw's memory is bounded whatever N."""
    s = SeededSampler(12)
    spy = s._gen = _ChoiceSizes(s._gen)
    table, m = np.array([2**26, 0, 2**26]), 2**27 // 100
    t = s.multivariate_hypergeometric(table, m)
    assert t.sum() == m and t[1] == 0 and max(spy.sizes, default=0) <= 30 * math.isqrt(m)


def test_hypergeometric_edges():
    table = np.array([[5, 0], [3, 2]])
    s = SeededSampler(10)
    assert not s.multivariate_hypergeometric(table, 0).any()
    assert np.array_equal(s.multivariate_hypergeometric(table, 10), table)
    assert s.multivariate_hypergeometric(np.zeros((2, 2), dtype=np.int64), 0).tolist() == [[0, 0], [0, 0]]
    big = np.array([10**6, 0, 3 * 10**6])
    for m in (1, 12_345, 2 * 10**6, 4 * 10**6 - 7):
        t = SecureSampler().multivariate_hypergeometric(big, m)
        assert t.sum() == m and t[1] == 0 and (t <= big).all() and (t >= 0).all()
    with pytest.raises(ValueError, match=r"m must lie in \[0, 10\].*got 11"):
        s.multivariate_hypergeometric(table, 11)


def test_ones_before_counts_bits_in_order():
    rng = np.random.default_rng(12)
    words = rng.integers(0, 2**64, 5, dtype=np.uint64)
    bits = np.unpackbits(words.view(np.uint8), bitorder="little")
    positions = np.array([0, 1, 63, 64, 65, 100, 319, 320])
    expected = [int(bits[:q].sum()) for q in positions]
    assert samplers._ones_before(words, positions).tolist() == expected
