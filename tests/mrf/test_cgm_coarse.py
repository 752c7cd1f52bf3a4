"""CGM-EM on coarsened tables (a clique's counts summed into bins, a linear measurement):
the measurement's map and its transpose, the fit of a coarse table, and the refusal of the
fits that take only full-resolution tables."""

import numpy as np
import pytest

from privgraph.data import Domain
from privgraph.mrf.baselines import naive_mle
from privgraph.mrf.cgm import cgm_em
from privgraph.mrf.inference import infer
from privgraph.mrf.noisy_tables import NoisyMarginals, coarsen, expand, join_releases
from privgraph.validation import InvalidInput

BINS_A = (0, 0, 1, 1, 1, 2)  # a's six codes in three runs


def _noisy(tables, cliques, bins, scale=1.0, records=None):
    domain = Domain.of(a=6, b=2, c=3)
    records = float(sum(tables[0].ravel())) if records is None else records
    return NoisyMarginals(domain, tuple(cliques), tuple(range(len(cliques))), tuple(tables), "gaussian", scale,
                          records, bins=tuple(bins))


def test_to_tables_and_to_potentials_are_transposes():
    rng = np.random.default_rng(0)
    noisy = _noisy([np.ones(6), np.ones((3, 2)), np.ones((2, 3))], [("a",), ("a", "b"), ("b", "c")],
                   [None, (BINS_A, None), None])
    fine = rng.normal(size=6 + 12 + 6)
    coarse = rng.normal(size=6 + 6 + 6)
    assert noisy.potential_shapes() == ((6,), (6, 2), (2, 3))
    assert np.dot(noisy.to_tables(fine), coarse) == pytest.approx(np.dot(fine, noisy.to_potentials(coarse)))
    # the coarsened group's part is coarsen(); the others pass through
    assert np.allclose(noisy.to_tables(fine)[6:12], coarsen(fine[6:18].reshape(6, 2), (BINS_A, None)).ravel())
    assert np.allclose(noisy.to_tables(fine)[:6], fine[:6]) and np.allclose(noisy.to_tables(fine)[12:], fine[18:])


def test_expand_checks_the_clique_shape():
    with pytest.raises(InvalidInput, match="not its clique's"):
        expand(np.ones((3, 2)), (BINS_A, None), shape=(5, 2))


def test_a_coarse_table_is_fitted_and_the_model_keeps_the_fine_one_way_within_bins():
    """Exact tables (tiny noise): a's fine one-way table and (a in bins, b). The fit matches the
    coarse table, a's one-way table, and within a bin splits each b by a's one-way shares (the
    maximum-entropy answer: nothing measured says otherwise)."""
    rng = np.random.default_rng(1)
    joint = rng.dirichlet(np.ones(12)).reshape(6, 2) * 10_000
    one = joint.sum(axis=1)
    coarse = coarsen(joint, (BINS_A, None))
    noisy = _noisy([one, coarse], [("a",), ("a", "b")], [None, (BINS_A, None)], scale=0.01, records=10_000.0)
    model = cgm_em(noisy)
    assert model.cliques == (("a",), ("a", "b")) and model.potentials[1].shape == (6, 2)
    fitted = infer(model).marginals[1] * 10_000
    assert np.allclose(coarsen(fitted, (BINS_A, None)), coarse, atol=1.0)
    assert np.allclose(fitted.sum(axis=1), one, atol=1.0)
    for k in range(3):
        codes = [i for i, b in enumerate(BINS_A) if b == k]
        expected = np.outer(one[codes] / one[codes].sum(), coarse[k])
        assert np.allclose(fitted[codes], expected, atol=1.0)


def test_joined_releases_keep_their_bins():
    one = _noisy([np.ones(6)], [("a",)], [None], records=6.0)
    two = _noisy([np.ones((3, 2))], [("a", "b")], [(BINS_A, None)], records=6.0)
    assert join_releases(one, two).bins == (None, (BINS_A, None))
    plain = NoisyMarginals(one.domain, one.cliques, one.ties, one.tables, "gaussian", 1.0, 6.0)
    assert join_releases(plain, plain).bins is None


def test_naive_mle_refuses_coarse_tables():
    noisy = _noisy([np.ones(6), np.ones((3, 2))], [("a",), ("a", "b")], [None, (BINS_A, None)])
    with pytest.raises(InvalidInput, match="naive MLE .* coarsened"):
        naive_mle(noisy)
