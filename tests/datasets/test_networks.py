import math
import string

import networkx as nx
import numpy as np
import pytest

from privgraph.datasets import NETWORKS, load_network, parse_bif, read_bif, sample

#: (nodes, edges) from the bnlearn repository pages (also in shared/datasets/bif/SOURCES.md).
SIZES = {
    "earthquake": (5, 4), "cancer": (5, 4), "asia": (8, 8), "survey": (6, 6), "alarm": (37, 46),
    "sachs": (11, 17), "child": (20, 25), "insurance": (27, 52), "hepar2": (70, 123),
}


def exact_marginal(net, name: str) -> np.ndarray:
    """P(name) by variable elimination over its ancestors (greedy smallest-factor order)."""
    keep = nx.ancestors(net.to_networkx(), name) | {name}
    factors = [((*net.parents_of(v), v), net.cpt(v)) for v in net.domain.names if v in keep]
    todo = set(keep) - {name}
    while todo:
        v = min(todo, key=lambda u: _merged_size(net, factors, u))
        todo.remove(v)
        touching = [f for f in factors if v in f[0]]
        factors = [f for f in factors if v not in f[0]] + [_sum_out(touching, v)]
    result = _multiply(factors)
    return result[1] / result[1].sum()


def _merged_size(net, factors, v):
    names = set().union(*[set(f[0]) for f in factors if v in f[0]])
    return math.prod(net.domain.size_of(u) for u in names)


def _multiply(factors):
    names = list(dict.fromkeys(u for f in factors for u in f[0]))
    letters = dict(zip(names, string.ascii_letters))
    spec = ",".join("".join(letters[u] for u in f[0]) for f in factors)
    out = "".join(letters[u] for u in names)
    return tuple(names), np.einsum(f"{spec}->{out}", *[f[1] for f in factors])


def _sum_out(factors, v):
    names, table = _multiply(factors)
    return tuple(u for u in names if u != v), table.sum(axis=names.index(v))


@pytest.mark.parametrize("name", NETWORKS)
def test_bundled_network_has_the_published_size_and_is_a_dag(name):
    net = load_network(name)
    assert (len(net.domain.names), len(net.edges)) == SIZES[name]
    assert nx.is_directed_acyclic_graph(net.to_networkx())
    for v in net.domain.names:
        cpt = net.cpt(v)
        assert cpt.shape == tuple(net.domain.size_of(p) for p in net.parents_of(v)) + (net.domain.size_of(v),)
        assert np.allclose(cpt.sum(axis=-1), 1.0)


def test_forward_samples_match_exact_marginals_within_hoeffding():
    n = 40_000
    checks = sum(sum(load_network(k).domain.sizes) for k in NETWORKS)
    tol = math.sqrt(math.log(2 * checks / 1e-6) / (2 * n))  # union bound over every state
    rng = np.random.default_rng(7)
    for name in NETWORKS:
        net = load_network(name)
        x = sample(net, n, rng)
        for j, v in enumerate(net.domain.names):
            freq = np.bincount(x[:, j], minlength=net.domain.size_of(v)) / n
            assert np.abs(freq - exact_marginal(net, v)).max() <= tol, (name, v)


def test_asia_either_is_the_deterministic_or_of_tub_and_lung():
    net = load_network("asia")
    x = sample(net, 20_000, np.random.default_rng(1))
    col = {v: x[:, net.domain.index(v)] for v in ("either", "tub", "lung")}
    yes = net.domain.levels[net.domain.index("either")].index("yes")
    assert np.array_equal(col["either"] == yes, (col["tub"] == yes) | (col["lung"] == yes))


def test_survey_keeps_the_meaningful_order_of_states():
    d = load_network("survey").domain
    assert d.levels[d.index("A")] == ("young", "adult", "old")


def test_sampling_is_reproducible_and_checks_its_arguments():
    net = load_network("cancer")
    assert np.array_equal(sample(net, 50, np.random.default_rng(3)), sample(net, 50, np.random.default_rng(3)))
    assert sample(net, 0, np.random.default_rng(0)).shape == (0, 5)
    with pytest.raises(ValueError, match="n must be an integer >= 0"):
        sample(net, -1, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        sample(net, 10, 42)


def test_bif_errors_name_the_variable(tmp_path):
    head = "variable a { type discrete [ 2 ] { yes, no }; }\n"
    with pytest.raises(ValueError, match=r"variables \['a'\] of 'bad' have no probability block"):
        parse_bif(head, "bad")
    with pytest.raises(ValueError, match="'a' of 'bad' declares 3 states but lists 2"):
        parse_bif(head.replace("[ 2 ]", "[ 3 ]"), "bad")
    with pytest.raises(ValueError, match="table of 'a' in 'bad' has rows that are not distributions"):
        parse_bif(head + "probability ( a ) { table 0.5, 0.6; }", "bad")
    with pytest.raises(ValueError, match=r"'a' in 'bad' has undeclared parents \['z'\]"):
        parse_bif(head + "probability ( a | z ) { (yes) 0.5, 0.5; }", "bad")
    with pytest.raises(FileNotFoundError, match="no such BIF file"):
        read_bif(tmp_path / "none.bif")
    (tmp_path / "tiny.bif").write_text(head + "probability ( a ) { table 0.5, 0.5; }")
    assert read_bif(tmp_path / "tiny.bif").name == "tiny"
