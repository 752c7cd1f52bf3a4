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
