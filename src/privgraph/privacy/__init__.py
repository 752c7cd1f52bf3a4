"""The privacy core: the only place where noise is drawn and budget is composed.

Public names::

    from privgraph.privacy import (Neighbours, SecureSampler, SeededSampler, Release,
        Charge, Ledger, PrivacyPlan, Budget, BudgetExceeded, laplace_mechanism, gaussian_mechanism,
        exponential_mechanism, report_noisy_max, above_threshold, SparseVector,
        amplify_poisson, amplify_without_replacement, propose_test_release,
        smooth_sensitivity_median, GaussianSums, sampled_gaussian_multiplier)
"""

from privgraph.privacy.amplification import (
    amplify_poisson,
    amplify_without_replacement,
    epsilon_before_amplification,
)
from privgraph.privacy.budget import Budget, BudgetExceeded, BudgetTooSmall, check_affordable, reserve_plan
from privgraph.privacy.gaussian_sums import (
    GaussianSums,
    clipped_sum_sensitivity,
    sampled_gaussian_charge,
    sampled_gaussian_multiplier,
)
from privgraph.privacy.log_iqr import log_iqr_release, log_iqr_scale
from privgraph.privacy.ledger import Charge, Ledger, PrivacyCost
from privgraph.privacy.plan import PrivacyPlan
from privgraph.privacy.mechanisms import (
    Release,
    exponential_mechanism,
    gaussian_calibration,
    gaussian_mechanism,
    gaussian_charge,
    laplace_calibration,
    laplace_charge,
    laplace_mechanism,
    laplace_scale,
    report_noisy_max,
)
from privgraph.privacy.neighbours import (
    Neighbours,
    histogram_l1_sensitivity,
    histogram_l2_sensitivity,
)
from privgraph.privacy.samplers import (
    NoiseSampler,
    SecureSampler,
    SeededSampler,
    resolve_sampler,
)
from privgraph.privacy.sieve import SieveAndExamine, fit_rounds_to_budget, sieve_and_examine, sieve_rate
from privgraph.privacy.sparse_vector import SparseVector, above_threshold, sparse_vector_sessions
from privgraph.privacy.stability import (
    propose_test_release,
    ptr_threshold,
    smooth_sensitivity_median,
)

__all__ = [
    "Budget",
    "BudgetExceeded",
    "BudgetTooSmall",
    "Charge",
    "GaussianSums",
    "Ledger",
    "Neighbours",
    "NoiseSampler",
    "PrivacyCost",
    "PrivacyPlan",
    "Release",
    "SecureSampler",
    "SeededSampler",
    "SieveAndExamine",
    "SparseVector",
    "above_threshold",
    "amplify_poisson",
    "amplify_without_replacement",
    "clipped_sum_sensitivity",
    "epsilon_before_amplification",
    "exponential_mechanism",
    "fit_rounds_to_budget",
    "check_affordable",
    "reserve_plan",
    "gaussian_calibration",
    "gaussian_mechanism",
    "histogram_l1_sensitivity",
    "histogram_l2_sensitivity",
    "gaussian_charge",
    "laplace_calibration",
    "laplace_charge",
    "laplace_mechanism",
    "laplace_scale",
    "log_iqr_release",
    "log_iqr_scale",
    "propose_test_release",
    "ptr_threshold",
    "report_noisy_max",
    "resolve_sampler",
    "sampled_gaussian_charge",
    "sampled_gaussian_multiplier",
    "sieve_and_examine",
    "sieve_rate",
    "smooth_sensitivity_median",
    "sparse_vector_sessions",
]
