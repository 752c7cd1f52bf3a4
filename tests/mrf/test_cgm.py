import numpy as np
import pytest
from scipy.optimize import Bounds, minimize
from scipy.special import expit

from privgraph.mrf import cgm


def _problem(n: int, seed: int):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(n, 4)), rng.normal(size=n)

    def f(x):
        r = a.T @ x
        return 0.5 * float(r @ r) + float(np.logaddexp(0, x).sum() - b @ x), a @ r + expit(x) - b

    return f, rng.normal(0, 0.2, n)


@pytest.mark.parametrize("n,box", [(7, 0.3), (300, 0.05), (300, np.inf)])
@pytest.mark.parametrize("max_iter", [3, 100])
def test_lbfgsb_takes_minimizes_iterates(n, box, max_iter):
    f, x0 = _problem(n, n)
    lower, upper = np.full(n, -box), np.full(n, box)
    want = minimize(f, x0, jac=True, method="L-BFGS-B", bounds=Bounds(lower, upper),
                    options={"maxiter": max_iter, "gtol": 1e-12, "ftol": 1e-12})
    x, value = cgm.lbfgsb(f, x0, lower, upper, max_iter=max_iter, tol=1e-12)
    np.testing.assert_array_equal(x, want.x)
    assert value == want.fun


def test_lbfgsb_falls_back_to_minimize(monkeypatch):
    f, x0 = _problem(20, 1)
    box = np.full(20, 0.1)
    direct = cgm.lbfgsb(f, x0, -box, box, max_iter=50, tol=1e-12)
    monkeypatch.setattr(cgm, "_setulb", lambda: None)
    wrapped = cgm.lbfgsb(f, x0, -box, box, max_iter=50, tol=1e-12)
    np.testing.assert_array_equal(direct[0], wrapped[0])
    assert direct[1] == wrapped[1]


@pytest.mark.parametrize("box", [0.05, np.inf])
@pytest.mark.parametrize("after", [0, 1, 7])
def test_lbfgsb_stop_returns_the_iterate_it_is_asked_at(box, after):
    """Stopped after ``after`` iterations (0: at x0), lbfgsb returns the iterate a run
    capped at that many iterations returns, with the objective there."""
    f, x0 = _problem(300, 3)
    lower, upper = np.full(300, -box), np.full(300, box)
    seen = []

    def stop(x, value, grad):
        seen.append(value)
        np.testing.assert_array_equal(grad, f(x)[1])
        return len(seen) > after

    x, value = cgm.lbfgsb(f, x0, lower, upper, max_iter=100, tol=1e-12, stop=stop)
    if after == 0:
        np.testing.assert_array_equal(x, np.clip(x0, lower, upper))
    else:
        want = cgm.lbfgsb(f, x0, lower, upper, max_iter=after, tol=1e-12)
        np.testing.assert_array_equal(x, want[0])
        assert value == want[1]
    assert value == seen[-1] == f(x)[0] and seen == sorted(seen, reverse=True)  # iterates only descend


def _released(name: str, epsilon: float, noise: str):
    from privgraph.datasets import load_network, sample
    from privgraph.data import NumpyEngine, count_tables
    from privgraph.mrf.noisy_tables import release_tables
    from privgraph.privacy import Neighbours, SeededSampler

    net = load_network(name)
    cliques = [tuple(sorted((*net.parents_of(v), v), key=net.domain.index)) for v in net.domain.names]
    counts = count_tables(NumpyEngine(net.domain, sample(net, 5000, np.random.default_rng(0))), cliques)
    kw = {"delta": 1e-6} if noise == "gaussian" else {}
    noisy, _ = release_tables(counts, domain=net.domain, cliques=cliques, epsilon=epsilon, noise=noise,
                              neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(1), **kw)
    return noisy


@pytest.mark.parametrize("name,epsilon,noise", [("sachs", 1.0, "laplace"), ("child", 0.3, "laplace"),
                                                 ("asia", 10.0, "laplace"), ("sachs", 1.0, "gaussian")])
def test_settled_e_steps_give_the_fit_of_full_e_steps(name, epsilon, noise, monkeypatch):
    """An E-step that ends once EM's decision is settled (a rejected over-relaxed step, the
    last step) leaves the fit bit for bit that of E-steps run to their end, in fewer
    evaluations."""
    noisy = _released(name, epsilon, noise)
    evaluations = []

    def counted(settle: bool):
        def e_step(*args, settled=None, **kwargs):
            real = cgm.lbfgsb

            def lbfgsb(fun, *a, **k):
                def f(x):
                    evaluations[-1] += 1
                    return fun(x)
                return real(f, *a, **k)

            monkeypatch.setattr(cgm, "lbfgsb", lbfgsb)
            try:
                return cgm.dual_e_step(*args, settled=settled if settle else None, **kwargs)
            finally:
                monkeypatch.setattr(cgm, "lbfgsb", real)
        return e_step

    fits = []
    for settle in (False, True):
        evaluations.append(0)
        fits.append(cgm.cgm_em(noisy, e_step=counted(settle)))
    for a, b in zip(fits[0].potentials, fits[1].potentials):
        np.testing.assert_array_equal(a, b)
    assert evaluations[1] < evaluations[0]


def test_focus_fits_a_table_added_to_a_warm_start():
    """A warm start that fits every table but a new one already meets the stopping rule of all
    the tables together: EM stops at once and leaves the new table as the start predicted it.
    With ``focus`` on the new table, EM runs on until that table too is within its noise; under the
    default rule (:data:`privgraph.mrf.cgm.EACH_TABLE_SDS`) until every table is within 3 sd of its own."""
    from privgraph.data.domain import Domain
    from privgraph.mrf.noisy_tables import NoisyMarginals

    names = [f"v{i}" for i in range(12)]
    d = Domain.of(**{v: 4 for v in names})
    cliques = tuple((a, b) for a, b in zip(names, names[1:]))
    n = 10_000.0
    uniform = np.full((4, 4), n / 16)
    joint = uniform + np.where(np.eye(4, dtype=bool), 120.0, -40.0)  # misfit 4 (120/40)^2 + 12 (40/40)^2 = 48
    tables = (*[uniform] * (len(cliques) - 1), joint)  # the chain uniform but for its last pair
    start = [np.zeros((4, 4))] * len(cliques)  # the uniform model: every table fitted but the last
    noisy = NoisyMarginals(d, cliques, tuple(range(len(cliques))), tables, "gaussian", 40.0, n)
    misfit = lambda model: cgm._misfit(noisy, len(cliques) - 1,  # noqa: E731
                                       cgm._expected_and_log_z(noisy, list(model.potentials), 10**6)[0][-1])
    assert sum(cgm._misfits(noisy, [np.full((4, 4), n / 16)] * len(cliques))) <= cgm._noise_level(noisy)
    with pytest.MonkeyPatch.context() as patch:  # the sum alone (EACH_TABLE_SDS None): the table is ignored
        patch.setattr(cgm, "EACH_TABLE_SDS", None)
        ignored = cgm.cgm_em(noisy, start=start)
    each = cgm.cgm_em(noisy, start=start)  # the default: each table within 3 sd of its own noise
    focused = cgm.cgm_em(noisy, start=start, focus=len(cliques) - 1)
    assert misfit(ignored) == pytest.approx(48)  # the start's misfit: EM did not move
    assert misfit(each) <= 16 + 3 * np.sqrt(2 * 16) < 48  # chi-square with 16 cells: mean 16, sd sqrt(32)
    assert misfit(focused) <= 16
