import dataclasses

import numpy as np
import pytest

from privgraph.data.domain import Domain
from privgraph.mrf.inference import enumerate_beliefs, flat_inference, infer, infer_potentials
from privgraph.mrf.junction_calibration import calibrate_flat, calibrate_scaled, flat_plan, scaled_plan
from privgraph.mrf.junction import junction_tree
from privgraph.mrf.loopy import loopy_beliefs
from privgraph.mrf.model import MarkovRandomField

from .cases import small_models, tree_models

CASES = small_models()


@pytest.mark.parametrize("name,model", CASES, ids=[c[0] for c in CASES])
def test_junction_tree_agrees_with_enumeration(name, model):
    exact, ref = infer(model), enumerate_beliefs(model)
    assert exact.is_exact
    assert exact.log_partition == pytest.approx(ref.log_partition, abs=1e-10)
    for got, want in zip(exact.marginals, ref.marginals):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("name,model", CASES, ids=[c[0] for c in CASES])
def test_junction_tree_has_running_intersection(name, model):
    tree = junction_tree(model.domain, model.cliques)
    for v in model.domain.names:  # the cliques holding v form a connected subtree
        holding = {i for i, c in enumerate(tree.cliques) if v in c}
        tops = [i for i in holding if tree.parent[i] not in holding]
        assert len(tops) == 1, (v, tree.cliques)
    for k, c in enumerate(model.cliques):
        assert set(c) <= set(tree.cliques[tree.assignment[k]])


TREES = tree_models()


@pytest.mark.parametrize("name,model", TREES, ids=[c[0] for c in TREES])
def test_loopy_bp_is_exact_on_trees(name, model):
    marg, log_z, ok = loopy_beliefs(model.domain, model.cliques, model.potentials)
    ref = enumerate_beliefs(model)
    assert ok
    assert log_z == pytest.approx(ref.log_partition, abs=1e-7)
    for got, want in zip(marg, ref.marginals):
        np.testing.assert_allclose(got, want, atol=1e-7)


def test_loopy_bp_close_on_weakly_coupled_cycle():
    d = Domain.of(a=2, b=2, c=2, d=2)
    rng = np.random.default_rng(0)
    cl = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
    m = MarkovRandomField.of(d, cl, [rng.normal(0, 0.2, (2, 2)) for _ in cl])
    marg, log_z, ok = loopy_beliefs(d, cl, m.potentials)
    ref = enumerate_beliefs(m)
    assert ok
    assert abs(log_z - ref.log_partition) < 1e-2
    assert max(np.abs(a - b).max() for a, b in zip(marg, ref.marginals)) < 1e-2


def test_infer_falls_back_to_loopy_when_tree_too_large():
    name, model = TREES[0]
    b = infer_potentials(model.domain, model.cliques, model.potentials, max_cells=1)
    assert not b.is_exact
    np.testing.assert_allclose(b.marginals[0], enumerate_beliefs(model).marginals[0], atol=1e-7)


def test_far_apart_potentials_keep_exact_beliefs():
    # exp underflows to zero off one cell in each table, and the two cells disagree on b:
    # in linear space the root's belief summed to zero (a FloatingPointError that escaped
    # CGM-EM after the release). In log space the beliefs are those of brute force.
    d = Domain.of(a=2, b=2, c=2)
    big = -1e4
    ab = np.array([[0.0, big], [big, big]])  # only a=0, b=0
    bc = np.array([[big, big], [0.0, big]])  # only b=1, c=0
    got = infer_potentials(d, [("a", "b"), ("b", "c")], [ab, bc])
    ref = enumerate_beliefs(MarkovRandomField.of(d, [("a", "b"), ("b", "c")], [ab, bc]))
    assert got.log_partition == pytest.approx(ref.log_partition, rel=1e-12)
    for a, b in zip(got.marginals, ref.marginals):
        np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_potentials_raise_floating_point_error(bad):
    # an optimiser's overflowed step; the optimisers catch FloatingPointError and back off
    d = Domain.of(a=2, b=2)
    with pytest.raises(FloatingPointError, match="not finite"):
        infer_potentials(d, [("a", "b")], [np.full((2, 2), bad)])


def _summed_reference(model, groups):
    """Per group, the sum of its cliques' brute-force marginals, raveled end to end."""
    ref = enumerate_beliefs(model)
    out = {}
    for k, g in enumerate(groups):
        out[g] = out.get(g, 0) + ref.marginals[k].ravel()
    return np.concatenate([out[g] for g in sorted(out)]), ref.log_partition


@pytest.mark.parametrize("name,model", CASES, ids=[c[0] for c in CASES])
def test_flat_inference_agrees_with_enumeration(name, model):
    groups = list(range(len(model.cliques)))
    run = flat_inference(model.domain, model.cliques, groups)
    sums, log_z = run(np.concatenate([p.ravel() for p in model.potentials]))
    want, want_log_z = _summed_reference(model, groups)
    assert log_z == pytest.approx(want_log_z, abs=1e-10)
    np.testing.assert_allclose(sums, want, atol=1e-12)


@pytest.mark.parametrize("name,model", CASES, ids=[c[0] for c in CASES])
def test_flat_inference_gathers_exactly_as_it_sums(name, model, monkeypatch):
    """Where each parameter meets one tree cell, ``run`` gathers instead of ``bincount``:
    the same numbers to the bit (forced off, the ``bincount`` path is the reference)."""
    from privgraph.mrf import inference

    groups = list(range(len(model.cliques)))
    flat = np.random.default_rng(5).normal(0, 2, sum(p.size for p in model.potentials))
    run = flat_inference(model.domain, model.cliques, groups)
    monkeypatch.setattr(inference, "_one_to_one", lambda *a, **k: False)
    reference = flat_inference(model.domain, model.cliques, groups)
    (sums, log_z), (want, want_log_z) = run(flat), reference(flat)
    np.testing.assert_array_equal(sums, want)
    assert log_z == want_log_z


@pytest.mark.parametrize("name,model", CASES, ids=[c[0] for c in CASES])
def test_flat_inference_broadcasts_as_it_sums(name, model, monkeypatch):
    """With many (model clique, tree cell) pairs per cell, ``run`` broadcasts each clique's
    table instead of ``bincount``-ing the pairs: the same numbers up to the order of sums
    (forced on for every case; a tied pair with its axes swapped rides along)."""
    from privgraph.mrf import inference

    cliques = list(model.cliques) + [model.cliques[-1][::-1]]
    groups = list(range(len(model.cliques))) + [len(model.cliques) - 1]
    flat = np.random.default_rng(6).normal(0, 2, sum(p.size for p in model.potentials))
    monkeypatch.setattr(inference, "_one_to_one", lambda *a, **k: False)
    reference = flat_inference(model.domain, cliques, groups)
    monkeypatch.setattr(inference, "BROADCAST_PAIRS", 0)
    run = flat_inference(model.domain, cliques, groups)
    assert "into" in run.__code__.co_freevars and "into" not in reference.__code__.co_freevars
    (sums, log_z), (want, want_log_z) = run(flat), reference(flat)
    np.testing.assert_allclose(sums, want, rtol=1e-12, atol=1e-12)
    assert log_z == pytest.approx(want_log_z, rel=1e-12)


def test_flat_inference_gathers_on_merged_cliques():
    from privgraph.mrf import inference

    d = Domain.of(a=2, b=3, c=2, d=2)
    cliques = [("a", "b", "c"), ("c", "d")]
    assert inference._one_to_one(np.array([0, 2, 1]), 3, full=True)
    assert not inference._one_to_one(np.array([0, 2]), 3, full=True) and inference._one_to_one(np.array([0, 2]), 3)
    run = flat_inference(d, cliques, [0, 1])
    assert "source" in run.__code__.co_freevars  # the gathered run
    model = MarkovRandomField.of(d, cliques, [np.random.default_rng(1).normal(0, 1, (2, 3, 2)),
                                              np.random.default_rng(2).normal(0, 1, (2, 2))])
    sums, log_z = run(np.concatenate([p.ravel() for p in model.potentials]))
    want, want_log_z = _summed_reference(model, [0, 1])
    assert log_z == pytest.approx(want_log_z, abs=1e-10)
    np.testing.assert_allclose(sums, want, atol=1e-12)


def test_flat_inference_sums_tied_cliques():
    # one table shared by two cliques with their axes in different orders, and a free node
    d = Domain.of(a=2, b=2, c=3)
    rng = np.random.default_rng(3)
    shared, node = rng.normal(0, 1, (2, 2)), rng.normal(0, 1, 3)
    cliques, groups = [("a", "b"), ("b", "a"), ("c",)], [0, 0, 1]
    sums, log_z = flat_inference(d, cliques, groups)(np.concatenate([shared.ravel(), node]))
    model = MarkovRandomField.of(d, cliques, [shared, shared, node])
    want, want_log_z = _summed_reference(model, groups)
    assert log_z == pytest.approx(want_log_z, abs=1e-10)
    np.testing.assert_allclose(sums, want, atol=1e-12)


def test_flat_inference_falls_back_to_loopy_beyond_the_cap():
    name, model = TREES[0]
    groups = list(range(len(model.cliques)))
    sums, log_z = flat_inference(model.domain, model.cliques, groups, max_cells=1)(
        np.concatenate([p.ravel() for p in model.potentials]))
    want, want_log_z = _summed_reference(model, groups)
    assert log_z == pytest.approx(want_log_z, abs=1e-7)
    np.testing.assert_allclose(sums, want, atol=1e-7)


@pytest.mark.parametrize("name,model", CASES, ids=[c[0] for c in CASES])
def test_flat_plan_passes_every_edge_once_by_depth(name, model):
    tree = junction_tree(model.domain, model.cliques)
    plan = flat_plan(tree)
    children = [np.unique(np.searchsorted(plan.offsets, lv.child, side="right") - 1) for lv in plan.levels]
    passed = np.concatenate(children) if children else np.array([], dtype=int)
    assert sorted(passed.tolist()) == sorted(set(range(len(tree.cliques))) - {plan.root})
    for lv in plan.levels:  # each level's child cells appear once, in the upward grouping too
        assert sorted(lv.up.tolist()) == sorted(lv.child.tolist())


def test_messages_between_far_apart_runs_stay_exact():
    # the level-wide shift underflows the second run: the per-run fallback must catch it
    d = Domain.of(a=2, b=2, c=2)
    ab = np.array([[0.0, -3000.0], [0.0, -3000.0]])  # b = 1 far below b = 0
    bc = np.array([[0.0, 0.0], [-5000.0, -5000.0]])
    got = infer_potentials(d, [("a", "b"), ("b", "c")], [ab, bc])
    ref = enumerate_beliefs(MarkovRandomField.of(d, [("a", "b"), ("b", "c")], [ab, bc]))
    assert got.log_partition == pytest.approx(ref.log_partition, rel=1e-12)
    for a, b in zip(got.marginals, ref.marginals):
        np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("bounded", [True, False])
@pytest.mark.parametrize("scale", [1.0, 30.0])
@pytest.mark.parametrize("name,model", CASES + TREES, ids=[c[0] for c in CASES + TREES])
def test_scaled_calibration_equals_log_space(name, model, scale, bounded):
    # bounded=False: the messages scaled depth by depth, as on trees whose products could overflow
    tree = junction_tree(model.domain, model.cliques)
    plan = dataclasses.replace(scaled_plan(tree), bounded=bounded)
    logs = np.random.default_rng(len(name)).normal(0, scale, tree.cells)
    want, want_log_z = calibrate_flat(flat_plan(tree), logs)
    got, log_z = calibrate_scaled(plan, logs[plan.perm])
    assert log_z == pytest.approx(want_log_z, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(got, want[plan.perm], rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("name,model", CASES, ids=[c[0] for c in CASES])
def test_scaled_plan_lays_each_depth_end_to_end(name, model):
    tree = junction_tree(model.domain, model.cliques)
    plan = scaled_plan(tree)
    assert sorted(plan.perm.tolist()) == list(range(tree.cells))
    assert plan.clique_sizes.sum() == tree.cells
    assert plan.clique_sizes[0] == np.diff(flat_plan(tree).offsets)[flat_plan(tree).root]
    ends = [plan.clique_sizes[0]] + [lv.hi for lv in plan.levels]
    assert [lv.lo for lv in plan.levels] == ends[:-1] and ends[-1] == tree.cells
    for lv in plan.levels:  # every parent cell receives each of its children's messages once
        assert len(lv.parent_cells) == len(lv.down) and sorted(lv.down.tolist()) == sorted(lv.parent_cells.tolist())
        assert lv.counts.sum() == lv.hi - lv.lo
        receivers = np.unique(lv.parent_cells)  # in order, each run of pairs one cell's
        assert np.arange(tree.cells)[lv.target].tolist() == receivers.tolist()
        assert np.all(np.diff(lv.parent_cells) >= 0)
        if lv.products is not None:
            assert lv.parent_cells[lv.products].tolist() == receivers.tolist()
        else:
            assert len(receivers) == len(lv.parent_cells)


def test_flat_inference_stays_exact_for_far_apart_potentials():
    # beliefs of 1e-1300: probability space underflows, the log-space calibration takes over
    d = Domain.of(a=2, b=2, c=2)
    ab = np.array([[0.0, -3000.0], [0.0, -3000.0]])
    bc = np.array([[0.0, 0.0], [-5000.0, -5000.0]])
    sums, log_z = flat_inference(d, [("a", "b"), ("b", "c")], [0, 1])(np.concatenate([ab.ravel(), bc.ravel()]))
    want, want_log_z = _summed_reference(MarkovRandomField.of(d, [("a", "b"), ("b", "c")], [ab, bc]), [0, 1])
    assert log_z == pytest.approx(want_log_z, rel=1e-12)
    np.testing.assert_allclose(sums, want, atol=1e-12)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_flat_inference_rejects_non_finite_potentials(bad):
    d = Domain.of(a=2, b=3)
    flat = np.zeros(6)
    flat[4] = bad
    with pytest.raises(FloatingPointError):
        flat_inference(d, [("a", "b")], [0])(flat)


def test_plans_kept_are_bounded_and_dropped_with_the_inference_cache():
    """The adaptive rounds build a new junction tree every round: the calibration plans kept
    for them are at most ``PLANS_KEPT`` (each ~300 bytes a tree cell; 32 were kept until
    136398a, 555 MB on gss), and the release's ``clear_inference_cache`` drops them all."""
    from privgraph.mrf import cgm, junction_calibration as jc

    jc.clear_plans()  # whatever earlier tests left
    d = Domain.of(a=2, b=3, c=2, d=2, e=3)
    trees = [junction_tree(d, cl) for cl in ((("a", "b"), ("b", "c")), (("a", "c"), ("c", "d")),
                                              (("b", "d"), ("d", "e")), (("a", "e"),))]
    for t in trees:
        scaled_plan(t)
    assert jc.scaled_plan.cache_info().currsize <= jc.PLANS_KEPT
    assert jc.flat_plan.cache_info().currsize == 0  # the log-space plan is built only when needed
    flat_inference(d, [("a", "b"), ("b", "c")], [0, 1])
    cgm.clear_inference_cache()
    assert jc.scaled_plan.cache_info().currsize == jc.flat_plan.cache_info().currsize == 0
