"""Raw-data forms agree with their references: blocked HSIC with the matrix form, rho-a with scipy."""

import numpy as np
from scipy.stats import spearmanr

from privgraph.stats import hsic, spearman_rho_a_raw


def test_blocked_hsic_equals_the_matrix_form():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=900), rng.normal(size=900)
    blocked = hsic(a, a * b, bandwidth_x=1.0, bandwidth_y=0.3)
    matrix = hsic(a[:, None], (a * b)[:, None], bandwidth_x=1.0, bandwidth_y=0.3)
    assert abs(blocked - matrix) < 1e-12


def test_blocked_hsic_has_no_row_cap():
    rng = np.random.default_rng(2)
    a = rng.normal(size=6000)
    assert hsic(a, a) > 0


def test_rho_a_raw_equals_scipy_without_ties():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=300), rng.normal(size=300)
    assert abs(spearman_rho_a_raw(a, a + b) - spearmanr(a, a + b).statistic) < 1e-12
