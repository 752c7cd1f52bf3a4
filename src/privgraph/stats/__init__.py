"""Test statistics and their sensitivities: pure functions of tables or arrays.

Nothing here knows about privacy budgets; the algorithms add noise and spend budget.
"""

from privgraph.stats.ci_test import ChiSquareTest, CIResult, CITest, GTest, KendallTest, SpearmanTest
from privgraph.stats.gtest import ChiSquareResult, chi_square_test, degrees_of_freedom, g_test
from privgraph.stats.hsic import hsic
from privgraph.stats.iqr import iqr
from privgraph.stats.kendall import (
    conditional_kendall,
    kendall_tau_a,
    kendall_tau_a_raw,
    kendall_tau_b,
)
from privgraph.stats.spearman import (
    conditional_spearman,
    spearman_rho_a,
    spearman_rho_a_raw,
    spearman_rho_b,
    spearman_rho_raw,
)
from privgraph.stats.strata import StratifiedZ

__all__ = [
    "CIResult",
    "CITest",
    "ChiSquareResult",
    "ChiSquareTest",
    "GTest",
    "KendallTest",
    "SpearmanTest",
    "StratifiedZ",
    "chi_square_test",
    "conditional_kendall",
    "conditional_spearman",
    "degrees_of_freedom",
    "g_test",
    "hsic",
    "iqr",
    "kendall_tau_a",
    "kendall_tau_a_raw",
    "kendall_tau_b",
    "spearman_rho_a",
    "spearman_rho_a_raw",
    "spearman_rho_b",
    "spearman_rho_raw",
]
