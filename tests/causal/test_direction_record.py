"""privacy="record" (the default): every record protected; orientation of a CPDAG with it."""

import numpy as np
import pytest

from privgraph.causal import direction as dr
from privgraph.causal.direction import noisy_table as rel
from privgraph.causal.direction import PrivateANM, private_direction
from privgraph.causal.direction.data import split_indices, to_common_scale
from privgraph.causal.direction.orient import orient_by_direction
from privgraph.graphs import CPDAG
from privgraph.privacy import Budget, SeededSampler

BOUNDS = ((-3.0, 3.0), (-3.0, 3.0))
SPLIT_SEED = 7


def anm_pair(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, n)
    return x, np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, n)


def outlier_in_training(n=400, seed=1):
    """(x, y) and (x, y') where y' replaces one *training* record's y by 500 (clipped to the bound 3)."""
    x, y = anm_pair(n, seed)
    train, _ = split_indices(n, 0.5, np.random.default_rng(SPLIT_SEED))
    moved = y.copy()
    moved[train[0]] = 500.0
    return (x, y), (x, moved)


def test_the_default_protects_every_record():
    model = PrivateANM(epsilon=1.0, bounds=BOUNDS, random_state=0).fit(*anm_pair(600, 0))
    assert model.privacy == "record" and model.ledger_.is_private
    assert dr.TEST_ONLY_CAVEAT not in model.ledger_.caveats
    (charge,) = model.ledger_.charges
    assert charge.epsilon == 1.0 and "parallel" in charge.mechanism


def test_a_training_record_reaches_the_scores_only_through_the_released_table(monkeypatch):
    """Fails on the old default (privacy="test"): there the training outlier moves the score
    by many sensitivities with no noise in between. Under "record", with the released table
    held fixed, the scores do not move at all, and the exact tables differ by one moved count."""
    (x, y), (x2, y2) = outlier_in_training()
    train, test = split_indices(x.size, 0.5, np.random.default_rng(SPLIT_SEED))
    k = rel.default_bins(train.size, 1.0)
    tables = [rel.pair_table(to_common_scale(a[train], a[:0], b0), to_common_scale(b[train], b[:0], b1), k)
              for (a, b), (b0, b1) in (((x, y), BOUNDS), ((x2, y2), BOUNDS))]
    assert np.abs(tables[0] - tables[1]).sum() == 2  # the histogram's replace-one sensitivity

    fixed = tables[0].astype(float)
    monkeypatch.setattr(rel, "release_table", lambda *a, **k: (fixed, None))
    scores = [dr.raw_scores(rel.released_fit(a, b, bounds=BOUNDS, test_fraction=0.5, epsilon=1.0,
                                             sampler=SeededSampler(0), rng=np.random.default_rng(SPLIT_SEED),
                                             bins=k).value, "kendall") for a, b in ((x, y), (x2, y2))]
    assert scores[0] == scores[1]

    old = [dr.raw_scores(dr.fit_both_directions(a, b, privacy="test", bounds=(None, None), test_fraction=0.5,
                                                ridge=1e-3, lengthscale=1.0, rng=np.random.default_rng(SPLIT_SEED)),
                         "kendall") for a, b in ((x, y), (x2, y2))]
    sensitivity = 4 / test.size
    assert max(abs(old[0][0] - old[1][0]), abs(old[0][1] - old[1][1])) > 3 * sensitivity  # the old leak


@pytest.mark.parametrize("score", ["kendall", "spearman", "hsic", "iqr"])
def test_large_epsilon_agrees_with_the_exact_table(score):
    for seed in range(3):
        x, y = anm_pair(2000, seed)
        fit, _ = rel.released_fit(x, y, bounds=BOUNDS, test_fraction=0.5, epsilon=np.inf, sampler=SeededSampler(0),
                                  rng=np.random.default_rng(seed), bins=rel.default_bins(1000, 1e7))
        if score == "iqr":
            from privgraph.stats import iqr

            q = [np.log(iqr(v)) for v in (fit.x, fit.res_y, fit.y, fit.res_x)]
            raw = (q[0] + q[1], q[2] + q[3])
        else:
            raw = dr.raw_scores(fit, score)
        result, _ = private_direction(x, y, epsilon=1e7, score=score, bounds=BOUNDS, sampler=SeededSampler(seed),
                                      rng=np.random.default_rng(seed))
        assert result.direction == ("x->y" if raw[0] < raw[1] else "y->x")


def test_private_accuracy_at_epsilon_one():
    """Fixed pairs y = tanh(x) + noise, n = 2000, epsilon = 1: at least 20 of 24 right (24 seen, and 24
    with test_fraction 0.3 and 0.7, and for tanh(2x), x^3/4 and sin(1.5x): docs/direction.md)."""
    hits = 0
    for seed in range(24):
        rng = np.random.default_rng(200 + seed)
        x = rng.uniform(-2, 2, 2000)
        y = np.tanh(x) + 0.3 * rng.uniform(-1, 1, 2000)
        flip = seed % 2 == 1
        a, b = (y, x) if flip else (x, y)
        model = PrivateANM(epsilon=1.0, bounds=BOUNDS, random_state=seed).fit(a, b)
        hits += model.direction_ == ("y->x" if flip else "x->y")
    assert hits >= 20


def test_table_regression_recovers_a_smooth_curve():
    rng = np.random.default_rng(0)
    z = rng.uniform(-2, 2, 20_000)
    table = rel.pair_table(z, np.sin(z), 32).astype(float)
    f = rel.regression_from_table(table, cause_axis=0, smoothing=rel.smoothing_for(z.size, 32))
    grid = np.linspace(-1.8, 1.8, 50)
    assert np.abs(f.predict(grid) - np.sin(grid)).max() < 0.1  # bin width 0.125 plus smoothing


# --- orientation inside discovery ------------------------------------------------------------------


def chain(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, n)
    b = np.tanh(2 * a) + 0.3 * rng.uniform(-1, 1, n)
    c = np.tanh(2 * b) + 0.3 * rng.uniform(-1, 1, n)
    return {"a": a, "b": b, "c": c}


BOX = dict.fromkeys("abc", (-2.5, 2.5))


@pytest.mark.parametrize("seed", range(4))
def test_orientation_gives_a_dag_within_the_share(seed):
    g = CPDAG(["a", "b", "c"], undirected=[("a", "b"), ("b", "c")])
    budget = Budget(2.0)
    dag, ledger = orient_by_direction(g, chain(seed=seed), bounds=BOX, epsilon=2.0, sampler=SeededSampler(seed),
                                      rng=np.random.default_rng(seed), budget=budget)
    assert not dag.undirected_edges and dag.skeleton().number_of_edges() == 2
    assert not any(dag.has_directed("a", "b") and dag.has_directed("c", "b") for _ in [0])  # no new collider
    assert ledger.total().epsilon <= 2.0 + 1e-12 and budget.ledger.total().epsilon == ledger.total().epsilon
    assert len(ledger) in (1, 2)  # a -> b first: Meek's rule 1 orients b -> c for free


def test_orientation_keeps_directed_edges_and_refuses_before_spending():
    g = CPDAG(["a", "b", "c"], directed=[("a", "b")], undirected=[])
    same, ledger = orient_by_direction(g, chain(), bounds=BOX, epsilon=1.0, sampler=SeededSampler(0),
                                       rng=np.random.default_rng(0))
    assert same == g and len(ledger) == 0
    budget = Budget(1.0)
    small = {k: v[:30] for k, v in chain().items()}  # RECI at a share of 0.5 needs 20 test rows
    with pytest.raises(ValueError, match="needs 20 test rows at that share and 10 training rows, the data gives 15 and 15"):
        orient_by_direction(CPDAG(["a", "b", "c"], undirected=[("a", "b"), ("b", "c")]), small, bounds=BOX,
                            epsilon=1.0, sampler=SeededSampler(0), rng=np.random.default_rng(0), budget=budget)
    assert len(budget.ledger) == 0
    with pytest.raises(KeyError, match="no public bounds"):
        orient_by_direction(CPDAG(["a", "b"], undirected=[("a", "b")]), chain(), bounds={"a": (-2, 2)},
                            epsilon=1.0, sampler=SeededSampler(0), rng=np.random.default_rng(0))


@pytest.mark.parametrize("untestable", ["raise", "skip"])
def test_orientation_on_data_under_20_rows_never_fails_and_spends_nothing(untestable):
    g = CPDAG(["a", "b", "c"], undirected=[("a", "b"), ("b", "c")])
    budget = Budget(1.0)
    tiny = {k: v[:19] for k, v in chain().items()}
    same, ledger = orient_by_direction(g, tiny, bounds=BOX, epsilon=1.0, sampler=SeededSampler(0),
                                       rng=np.random.default_rng(0), budget=budget, untestable=untestable)
    assert same == g and len(ledger) == 0 and len(budget.ledger) == 0


def test_training_table_noise_is_laplace_two_over_epsilon():
    """Fails if the training table's noise is halved: each cell gets Laplace of scale
    histogram sensitivity (2, replace-one) / epsilon, so |noise| <= b ln 2 half the time."""
    from tests.privacy.bounds import hoeffding

    z, eps, bins, reps = np.zeros(500), 0.8, 32, 8
    exact = rel.pair_table(z, z, bins)
    noise = np.concatenate([(rel.release_table(z, z, bins=bins, epsilon=eps, sampler=SeededSampler(s)).value
                             - exact).ravel() for s in range(reps)])
    b = 2 / eps
    assert abs(np.mean(np.abs(noise) <= b * np.log(2)) - 0.5) <= hoeffding(noise.size) + 1e-3
