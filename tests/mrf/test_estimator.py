import math

import numpy as np
import pandas as pd
import pytest

from privgraph.data.domain import Domain
from privgraph.mrf.estimator import PrivateMRF
from privgraph.mrf.individuals import individual_tables, time_homogeneous_chain
from privgraph.mrf.psgd import psgd
from privgraph.mrf.sampling import sample_model
from privgraph.mrf.synthetic import third_order_chain
from privgraph.privacy import Neighbours, SeededSampler, sampled_gaussian_multiplier


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(5)
    model = third_order_chain(5, rng=rng)
    codes = sample_model(model, 3000, rng=rng)
    return pd.DataFrame(codes, columns=model.domain.names), model


@pytest.mark.parametrize("method", ["cgm-em", "naive-mle"])
def test_ledger_total_is_the_budget(frame, method):
    df, model = frame
    est = PrivateMRF(epsilon=0.7, cliques=model.cliques, method=method, random_state=1).fit(df, domain=model.domain)
    assert est.ledger_.total().epsilon == pytest.approx(0.7)
    assert est.model_.cliques == model.cliques
    assert est.marginal(["x0", "x4"]).sum() == pytest.approx(1.0)
    assert "unit=record" in est.ledger_.charges[0].note


def test_gaussian_and_psgd_ledgers(frame):
    df, model = frame
    est = PrivateMRF(epsilon=1.0, cliques=model.cliques, noise="gaussian", delta=1e-5, random_state=1).fit(df, domain=model.domain)
    assert est.ledger_.total().delta == pytest.approx(1e-5)
    # same public parameters as psgd's doctest, so the cached noise calibration is reused
    est = PrivateMRF(epsilon=1.0, cliques=model.cliques, method="psgd", delta=1e-4, random_state=1,
                     options={"steps": 50}).fit(df, domain=model.domain)
    assert est.ledger_.total("rdp", delta=1e-4).epsilon <= 1.0
    assert est.marginals_ is None


@pytest.mark.parametrize(
    "cliques,match",
    [(["x0,nope"], "not in the domain"), ([], "empty"), (["x0,x1,x2,x3,x4,big"], "cells")],
)
def test_bad_input_raises_before_any_noise(frame, cliques, match):
    df, _ = frame
    df = df.assign(big=np.arange(len(df)) % 3000)
    sampler = SeededSampler(0)
    state = sampler._bits.state
    with pytest.raises((KeyError, ValueError), match=match):
        PrivateMRF(epsilon=1.0, cliques=cliques, random_state=sampler).fit(
            df, domain=Domain(tuple(df.columns), (2,) * 5 + (10**6,)))
    assert sampler._bits.state == state  # no noise drawn


def test_non_discrete_column_is_refused(frame):
    df, _ = frame
    with pytest.raises(ValueError, match="continuous"):
        PrivateMRF(epsilon=1.0, cliques="x0,v", random_state=0).fit(df.assign(v=np.linspace(0, 1, len(df))),
                                                                   infer_domain=True)


def test_individual_tables_bound_each_individuals_weight():
    rng = np.random.default_rng(3)
    d = Domain(tuple(f"h{i}" for i in range(6)), (4,) * 6)
    cliques, ties = time_homogeneous_chain(d.names)
    codes = rng.integers(0, 4, size=(400, 6))
    ids = rng.integers(0, 50, size=400)
    full = individual_tables(codes, ids, domain=d, cliques=cliques, ties=ties, null=0)
    for drop in range(0, 50, 7):
        keep = ids != drop
        less = individual_tables(codes[keep], ids[keep], domain=d, cliques=cliques, ties=ties, null=0)
        for a, b in zip(full, less):
            assert np.abs(a - b).sum() <= 1 + 1e-9


def test_individuals_are_the_privacy_unit():
    rng = np.random.default_rng(4)
    names = [f"h{i}" for i in range(4)]
    df = pd.DataFrame(rng.integers(0, 3, size=(300, 4)), columns=names).assign(user=rng.integers(0, 40, 300))
    cliques, ties = time_homogeneous_chain(names)
    est = PrivateMRF(epsilon=1.0, cliques=cliques, ties=ties, individual="user", null=0, random_state=2).fit(
        df, domain=Domain.of(**{n: 3 for n in names}))
    assert est.marginals_.unit.startswith("individual")
    assert "individual" in est.ledger_.charges[0].note
    assert est.ledger_.charges[0].sensitivity == 2  # two tables: pairs and first node
    np.testing.assert_allclose(est.model_.potentials[0], est.model_.potentials[2])


def test_psgd_noise_is_the_calibrated_multiplier_and_the_count_is_noisy():
    # a sampler that records the Gaussian sigma PSGD asks for: halving the noise fails here
    from privgraph.mrf.psgd import COUNT_SHARE

    class Recording(SeededSampler):
        sigmas: list = []

        def gaussian_on_grid(self, sigma, grid, size=1):
            self.sigmas.append(sigma)
            return super().gaussian_on_grid(sigma, grid, size)

    x = np.random.default_rng(0).integers(0, 2, size=(2000, 3))
    sampler = Recording(0)
    _, ledger = psgd(x, domain=Domain.of(a=2, b=2, c=2), cliques=["a,b", "b,c"], epsilon=1.0, delta=1e-4,
                     sampler=sampler, steps=50)
    expected = sampled_gaussian_multiplier(1.0 * (1 - COUNT_SHARE), 1e-4, sampling=("poisson", 0.05), steps=50,
                                           neighbours=Neighbours.ADD_REMOVE, max_multiplier=50.0)
    clip = math.sqrt(2)
    assert len(sampler.sigmas) == 50 and all(s == pytest.approx(expected * clip, rel=1e-4) for s in sampler.sigmas)
    assert [c.mechanism for c in ledger.charges] == ["laplace", "gaussian_sums"]
    assert ledger.total("rdp", delta=1e-4).epsilon <= 1.0


def test_psgd_fits_a_tied_chain_of_individuals_under_replace_one():
    rng = np.random.default_rng(4)
    names = [f"h{i}" for i in range(4)]
    df = pd.DataFrame(rng.integers(0, 3, size=(600, 4)), columns=names).assign(user=rng.integers(0, 200, 600))
    users = df["user"].nunique()
    cliques, ties = time_homogeneous_chain(names)
    est = PrivateMRF(epsilon=2.0, cliques=cliques, ties=ties, method="psgd", delta=1e-3, individual="user",
                     neighbours="replace_one", random_state=2, options={"steps": 20}).fit(
        df, domain=Domain.of(**{n: 3 for n in names}))
    (charge,) = est.ledger_.charges
    assert charge.neighbours is Neighbours.REPLACE_ONE and "unit=individual" in charge.note
    assert charge.sampling.as_tuple() == ("without_replacement", round(0.05 * users), users)
    assert est.ledger_.total("rdp", delta=1e-3).epsilon <= 2.0
    np.testing.assert_array_equal(est.model_.potentials[0], est.model_.potentials[2])
    with pytest.raises(ValueError, match="null=0"):
        PrivateMRF(epsilon=2.0, cliques=cliques, method="psgd", delta=1e-3, individual="user", null=0).fit(
            df, domain=Domain.of(**{n: 3 for n in names}))


def test_uai_export_is_the_fitted_distribution(tmp_path):
    """The UAI MARKOV file's factors multiply back to the model's marginals (exact digits)."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 3000)
    df = pd.DataFrame({"a": a, "b": (a + rng.integers(0, 2, 3000)) % 3, "c": rng.integers(0, 2, 3000)})
    est = PrivateMRF(epsilon=5.0, cliques="a,b;b,c", random_state=0).fit(df, domain=Domain.of(a=2, b=3, c=2))
    lines = est.to_uai().splitlines()
    assert lines[:6] == ["MARKOV", "3", "2 3 2", "2", "2 0 1", "2 1 2"]
    assert "e" not in est.to_uai().split("2 1 2", 1)[1]  # no exponents
    f1 = np.array(lines[8].split(), dtype=float).reshape(2, 3)
    f2 = np.array(lines[11].split(), dtype=float).reshape(3, 2)
    joint = f1[:, :, None] * f2[None, :, :]
    joint /= joint.sum()
    np.testing.assert_allclose(joint.sum(axis=(0, 2)), est.marginal(["b"]), rtol=1e-9)
    np.testing.assert_allclose(joint.sum(axis=1), est.marginal(["a", "c"]), rtol=1e-9)
