import math

import numpy as np
import pytest

from privgraph.data.domain import Domain
from privgraph.mrf.psgd import clipped_sum, psgd, unit_indicators
from privgraph.privacy import Budget, BudgetExceeded, Neighbours, SeededSampler, sampled_gaussian_multiplier

D = Domain.of(a=3, b=3, c=2)
CLIQUES = (("a", "b"), ("b", "c"))
LAYOUT = dict(domain=D, cliques=CLIQUES, groups=[0, 1], shapes=[(3, 3), (3, 2)])
MU = np.concatenate([np.full(9, 1 / 9), np.full(6, 1 / 6)])  # any model marginals
CLIP = math.sqrt(2)


def records(seed: int, n: int = 2000) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, [3, 3, 2], size=(n, 3))


class Recording(SeededSampler):
    """Records the Gaussian sigmas and the sub-samples PSGD asks for."""

    def __init__(self, seed):
        super().__init__(seed)
        self.sigmas, self.samples = [], []

    def gaussian_on_grid(self, sigma, grid, size=1):
        self.sigmas.append(sigma)
        return super().gaussian_on_grid(sigma, grid, size)

    def binomial(self, n, p):
        self.samples.append(("poisson", len(n), p))
        return super().binomial(n, p)

    def multivariate_hypergeometric(self, colors, m):
        drawn = super().multivariate_hypergeometric(colors, m)
        self.samples.append(("without_replacement", len(colors), int(drawn.sum())))
        return drawn


def test_one_individual_moves_the_clipped_sum_by_at_most_clip():
    rng = np.random.default_rng(1)
    codes = records(1, 400)
    codes[:60] = [0, 0, 0]
    ids = np.concatenate([np.zeros(60, int), rng.integers(1, 80, 340)])  # individual 0 holds 60 records
    units, counts = unit_indicators(codes, individuals=ids, **LAYOUT)
    per_record, weights = unit_indicators(codes[:60], **LAYOUT)
    np.testing.assert_allclose(units[0].toarray().ravel(), weights @ per_record.toarray() / 60)  # the mean
    full = clipped_sum(units, MU, counts, CLIP)
    removed = clipped_sum(units, MU, np.where(np.arange(counts.size) == 0, 0, counts), CLIP)
    assert np.linalg.norm(full - removed) <= CLIP * (1 + 1e-9)  # add/remove: C
    swapped = codes.copy()
    swapped[:60] = [2, 0, 1]
    other, _ = unit_indicators(swapped, individuals=ids, **LAYOUT)
    assert np.linalg.norm(full - clipped_sum(other, MU, counts, CLIP)) <= 2 * CLIP * (1 + 1e-9)  # replace-one: 2C
    # with the record as the unit, the same 60 records move the sum far more
    rec, rec_counts = unit_indicators(codes, **LAYOUT)
    rest, rest_counts = unit_indicators(codes[60:], **LAYOUT)
    assert np.linalg.norm(clipped_sum(rec, MU, rec_counts, CLIP) - clipped_sum(rest, MU, rest_counts, CLIP)) > 10 * CLIP


def test_replace_one_noise_is_twice_the_clip_and_the_sample_is_exactly_m():
    sampler = Recording(0)
    _, ledger = psgd(records(0), domain=D, cliques=CLIQUES, epsilon=1.0, delta=1e-4, sampler=sampler, steps=30,
                     neighbours="replace_one")
    (charge,) = ledger.charges  # N is public: no count release
    assert charge.neighbours is Neighbours.REPLACE_ONE and charge.sampling.as_tuple() == ("without_replacement", 100, 2000)
    multiplier = sampled_gaussian_multiplier(1.0, 1e-4, sampling=("without_replacement", 100, 2000), steps=30,
                                             neighbours=Neighbours.REPLACE_ONE, max_multiplier=50.0)
    assert all(s == pytest.approx(multiplier * 2 * CLIP, rel=1e-4) for s in sampler.sigmas)
    assert len(sampler.sigmas) == 30 and all(s[0] == "without_replacement" and s[2] == 100 for s in sampler.samples)
    assert ledger.total("rdp", delta=1e-4).epsilon <= 1.0
    assert "unit=record" in charge.note


def test_individuals_are_poisson_sampled_and_named_in_the_ledger():
    sampler = Recording(1)
    ids = np.arange(2000) // 5  # 400 individuals of 5 records
    _, ledger = psgd(records(2), domain=D, cliques=CLIQUES, epsilon=1.0, delta=1e-4, sampler=sampler, steps=50,
                     individuals=ids)
    assert [c.mechanism for c in ledger] == ["laplace", "gaussian_sums"]
    assert all("unit=individual" in c.note for c in ledger)
    assert set(sampler.samples) == {("poisson", 400, 0.05)}
    assert ledger.total("rdp", delta=1e-4).epsilon <= 1.0


def test_budget_is_paid_before_any_noise():
    budget = Budget(1.0, 1e-4, composition="rdp")
    _, ledger = psgd(records(3), domain=D, cliques=CLIQUES, epsilon=1.0, delta=1e-4, sampler=SeededSampler(3),
                     steps=50, budget=budget)
    assert budget.ledger.charges == tuple(sorted(ledger.charges, key=lambda c: c.mechanism != "gaussian_sums"))
    sampler = SeededSampler(4)
    state = sampler._bits.state
    with pytest.raises(BudgetExceeded):
        psgd(records(3), domain=D, cliques=CLIQUES, epsilon=1.0, delta=1e-4, sampler=sampler, steps=50,
             budget=Budget(0.5, 1e-4, composition="rdp"))
    assert sampler._bits.state == state


@pytest.mark.parametrize("kwargs,match", [
    (dict(individuals=np.arange(10)), "one id per record"),
    (dict(neighbours="replace_one", records=1999), "records=1999 but the data holds 2000"),
    (dict(records=2000), "private"),
    (dict(neighbours="replace_one", rate=1e-4), "rounds to a sample of 0"),
    (dict(ties=[0]), "ties has 1 labels for 2 cliques"),
    (dict(ties=[0, 0]), "different shapes"),
    (dict(clip=0.0), "clip must be positive"),
    (dict(codes=records(0) + 1), "column 'a' holds codes outside"),
])
def test_bad_input_raises_before_any_budget_or_noise(kwargs, match):
    sampler, budget = SeededSampler(0), Budget(10.0, 1e-4, composition="rdp")
    state = sampler._bits.state
    codes = kwargs.pop("codes", records(0))
    with pytest.raises(ValueError, match=match):
        psgd(codes, domain=D, cliques=CLIQUES, epsilon=1.0, delta=1e-4, sampler=sampler, budget=budget, **kwargs)
    assert sampler._bits.state == state and len(budget.ledger) == 0
