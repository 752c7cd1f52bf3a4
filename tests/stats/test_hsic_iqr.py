import numpy as np
import pytest

from privgraph.stats import hsic, iqr


def test_hsic_equals_the_trace_formula():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=40), rng.normal(size=40)
    k = np.exp(-(x[:, None] - x[None, :]) ** 2 / 2)
    l = np.exp(-(y[:, None] - y[None, :]) ** 2 / (2 * 0.5**2))
    h = np.eye(40) - 1 / 40
    assert hsic(x, y, bandwidth_y=0.5) == pytest.approx(np.trace(k @ h @ l @ h) / 39**2, rel=1e-12)


def test_iqr_uses_order_statistics():
    rng = np.random.default_rng(1)
    for m in (1, 2, 5, 8, 101):
        x = rng.normal(size=m)
        q = np.quantile(x, [0.25, 0.75], method="inverted_cdf")
        assert iqr(x) == pytest.approx(q[1] - q[0])


def test_bad_input():
    with pytest.raises(ValueError, match="bandwidth_x must be positive"):
        hsic([1.0, 2.0], [1.0, 2.0], bandwidth_x=0)
    with pytest.raises(ValueError, match="same number of rows"):
        hsic([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="2 <= m"):
        hsic([1.0], [1.0])
    with pytest.raises(ValueError, match="finite"):
        iqr([1.0, np.inf])
