"""The privacy core: the only place where noise is drawn and budget is composed.

Public names::

    from privgraph.privacy import (Neighbours, SecureSampler, SeededSampler, Release,
        Charge, Ledger, PrivacyPlan, Budget, BudgetExceeded, laplace_mechanism, gaussian_mechanism,
        exponential_mechanism, report_noisy_max, above_threshold, SparseVector,
        amplify_poisson, amplify_without_replacement, propose_test_release,
        smooth_sensitivity_median, GaussianSums, sampled_gaussian_multiplier)

The names are imported on first use (``import privgraph.privacy`` is light).
"""

import importlib

#: Each public name by the module of this package that defines it (imported on first use,
#: so that ``privgraph.privacy.neighbours`` and its checks import no numerical stack).
_WHERE = {
    **dict.fromkeys(("amplify_poisson", "amplify_without_replacement", "epsilon_before_amplification"), "amplification"),
    **dict.fromkeys(("Budget", "BudgetExceeded", "BudgetTooSmall", "check_affordable", "reserve_plan"), "budget"),
    **dict.fromkeys(("GaussianSums", "clipped_sum_sensitivity", "sampled_gaussian_charge",
        "sampled_gaussian_multiplier"), "gaussian_sums"),
    **dict.fromkeys(("log_iqr_release", "log_iqr_scale"), "log_iqr"),
    **dict.fromkeys(("Charge", "Ledger", "PrivacyCost"), "ledger"),
    **dict.fromkeys(("PrivacyPlan",), "plan"),
    **dict.fromkeys(("Release", "exponential_mechanism", "gaussian_calibration", "gaussian_mechanism",
        "gaussian_charge", "laplace_calibration", "laplace_charge", "laplace_mechanism",
        "laplace_scale", "report_noisy_max"), "mechanisms"),
    **dict.fromkeys(("Neighbours", "histogram_l1_sensitivity", "histogram_l2_sensitivity"), "neighbours"),
    **dict.fromkeys(("NoiseSampler", "SecureSampler", "SeededSampler", "resolve_sampler"), "samplers"),
    **dict.fromkeys(("SieveAndExamine", "fit_rounds_to_budget", "sieve_and_examine", "sieve_rate"), "sieve"),
    **dict.fromkeys(("SparseVector", "above_threshold", "sparse_vector_sessions"), "sparse_vector"),
    **dict.fromkeys(("propose_test_release", "ptr_threshold", "smooth_sensitivity_median"), "stability"),
}


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"privgraph.privacy.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'privgraph.privacy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])

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
