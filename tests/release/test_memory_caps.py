"""Memory bounded by the public shape (issue 45, item 4): the arithmetic of the caps and their
refusals, read from the codebook alone, and the memory-light paths giving the same answers.

The peak RSS itself is measured by ``benchmarks/bench_memory.py`` (results in
``benchmarks/results/memory.jsonl``), not here: a test that measures memory would be slow and
machine-bound.
"""

import itertools
import math
import time

import numpy as np
import pytest
from privgraph.data import Domain, write_codebook
from privgraph.data.engines.numpy_engine import NumpyEngine
from privgraph.privacy import Charge, Ledger, Neighbours, SeededSampler
from privgraph.privacy.mechanisms import laplace_charge
from privgraph.release.model_size import (
    BASE_BYTES, MEMORY_CAP_BYTES, check_tree_memory, fits, forest_fits, tree_stage_bytes,
)
from privgraph.validation import InvalidInput

WIDE = Domain.of(**{f"x{j}": 2 for j in range(1000)})


def test_the_tree_stage_of_1000_binary_columns_passes_the_cap_and_is_refused_naming_what_to_do():
    assert BASE_BYTES + tree_stage_bytes(WIDE) > MEMORY_CAP_BYTES
    with pytest.raises(InvalidInput, match=r"1,000 columns .* 499,500 pairs.*memory cap.*release at most [\d,]+ of "
                                           r"these columns.*--structure gauss-pc"):
        check_tree_memory(WIDE)


def test_the_most_columns_named_fit_and_one_more_does_not():
    with pytest.raises(InvalidInput) as refused:
        check_tree_memory(WIDE)
    most = int(str(refused.value).split("release at most ")[1].split(" ")[0].replace(",", ""))
    check_tree_memory(Domain.of(**{f"x{j}": 2 for j in range(most)}))
    with pytest.raises(InvalidInput):
        check_tree_memory(Domain.of(**{f"x{j}": 2 for j in range(most + 1)}))


def test_the_estimate_grows_with_pairs_and_cells_only():
    narrow, wide = Domain.of(a=2, b=2, c=2), Domain.of(a=2, b=2, c=200)
    assert tree_stage_bytes(wide) > tree_stage_bytes(narrow)
    assert tree_stage_bytes(Domain.of(z=10_000, a=3, b=2, c=4, e=5)) < MEMORY_CAP_BYTES - BASE_BYTES


def test_auto_passes_the_tree_over_when_it_would_pass_the_cap():
    from privgraph.release.planner import TREE_MEMORY_NOTE, plan_release, tree_fits_memory

    assert not tree_fits_memory(WIDE)
    domain = Domain.of(**{f"x{j}": 2 for j in range(900)})
    plan = plan_release(domain, 2000, epsilon=0.1, delta=1e-6, neighbours="replace_one")
    assert plan.structure != "tree" and TREE_MEMORY_NOTE in plan.notes


def test_a_wide_tree_release_is_refused_before_any_row_is_read_whatever_the_rows(tmp_path, monkeypatch, capsys):
    """The refusal reads the codebook only: files of no row, one row and two rows (neighbours
    of one another) give the same one line, nothing is fitted and no output folder is left."""
    from privgraph.release import PrivateRelease
    from tests.cli.test_fail_before_spending import never_fit, run_main

    monkeypatch.setattr(PrivateRelease, "fit", never_fit)
    write_codebook(Domain.of(**{f"x{j}": 2 for j in range(900)}), tmp_path / "d.json")
    header = ",".join(f"x{j}" for j in range(900))
    outputs = []
    for name, rows in (("none", 0), ("one", 1), ("two", 2)):
        (tmp_path / f"{name}.csv").write_text(header + "\n" + "".join(",".join("0" * 900) + "\n" for _ in range(rows)))
        status, out, err = run_main(monkeypatch, capsys, "release", tmp_path / f"{name}.csv", "--domain",
                                    tmp_path / "d.json", "--epsilon", 1, "--structure", "tree", "--out",
                                    tmp_path / f"out-{name}")
        assert status == 2 and not (tmp_path / f"out-{name}").exists()
        outputs.append((out + err).replace(name, "FILE"))
    assert "memory cap" in outputs[0] and len(outputs[0].strip().splitlines()) == 1
    assert outputs[0] == outputs[1] == outputs[2]


def test_forest_fits_agrees_with_the_junction_tree_on_random_forests():
    rng = np.random.default_rng(0)
    for _ in range(20):
        domain = Domain.of(**{f"v{i}": int(rng.integers(2, 7)) for i in range(8)})
        order = list(rng.permutation(domain.names))
        edges = [(order[i], order[int(rng.integers(0, i))]) for i in range(1, 5)]  # a tree on 5 of the 8
        candidate = (order[int(rng.integers(0, 5))], order[int(rng.integers(5, 8))])  # joins another tree
        for cap in (30, 60, 120):
            assert forest_fits(domain, edges, candidate, cap) == fits(domain, edges, candidate, cap)


def test_the_pair_predictions_from_one_product_equal_the_pair_by_pair_counts():
    from privgraph.mrf.cgm import cgm_em
    from privgraph.mrf.noisy_tables import NoisyMarginals
    from privgraph.mrf.sampling import sample_chunks
    from privgraph.release import pair_scores, tree

    domain = Domain.of(**{f"v{i}": 2 + i % 3 for i in range(12)})  # 3^4 * 4^4 * 2^4 cells: drawn, not enumerated
    rng = np.random.default_rng(1)
    cliques = tuple((f"v{i}", f"v{i + 1}") for i in range(11))
    tables = tuple(rng.integers(1, 500, domain.project(c).shape).astype(float) for c in cliques)
    model = cgm_em(NoisyMarginals(domain, cliques, tuple(range(11)), tables, "gaussian", 1.0, 1e4))
    pairs = list(itertools.combinations(domain.names, 2)) + [("v0", "v1", "v2")]
    fast = pair_scores.model_pair_tables(model, pairs, np.random.default_rng(5), rows=30_000)
    totals = {p: np.zeros(domain.project(p).shape) for p in pairs}
    draws = sample_chunks(model, 30_000, pair_scores._CHUNK, rng=np.random.default_rng(5), max_cells=tree.DEFAULT_TREE_CAP)
    for codes in draws:
        for p in pairs:
            at = [domain.index(v) for v in p]
            totals[p] += np.bincount(np.ravel_multi_index(tuple(codes[:, j] for j in at), totals[p].shape),
                                     minlength=totals[p].size).reshape(totals[p].shape)
    assert all(np.array_equal(fast[p], totals[p] / totals[p].sum()) for p in pairs)


def test_blocks_of_a_large_joint_table_are_its_nonzero_cells_with_the_same_draws(monkeypatch):
    import privgraph.data.tables as tables

    rng = np.random.default_rng(0)
    domain = Domain.of(a=50, b=3, c=4)
    engine = NumpyEngine(domain, np.stack([rng.integers(0, s, 3000) for s in domain.sizes], axis=1))
    found = []
    for cap in (10**9, 10):  # the joint copied per block, then its nonzero cells held once
        monkeypatch.setattr(tables, "MAX_JOINT_CELLS", cap)
        blocks = tables.Tables.from_engine(engine, max_cells=10**6).blocks(7, SeededSampler(5))
        found.append((type(blocks).__name__, [blocks.table(c) for c in (["a", "b"], ["c"], ["b", "c", "a"])]))
    assert [name for name, _ in found] == ["Blocks", "DistinctBlocks"]
    assert all(np.array_equal(x, y) for x, y in zip(found[0][1], found[1][1]))


def test_pld_totals_a_wide_laplace_table_at_once_and_validly():
    """A Laplace table of 20,000 cells has a discrete Laplace curve 2**27 grid units wide: its
    exact PLD took 100 s and 5.5 GB; it now enters as randomized response at its epsilon."""
    charge = laplace_charge(1.96, 2.0, Neighbours.ADD_REMOVE, 20_000)
    ledger = Ledger.of(charge, Charge("laplace", 0.07, 0.0, Neighbours.ADD_REMOVE).times(20))
    start = time.process_time()
    pld = ledger.total("pld", 1e-6).epsilon
    assert time.process_time() - start < 10
    assert pld <= ledger.total().epsilon + 1e-9
    assert pld >= 1.96  # the wide charge alone is 1.96-DP at best (randomized response: tight)
    assert math.isfinite(pld)
