"""The slow statistical tests and audits, run by ``pytest -m slow`` (CI runs both sets).

The default ``pytest`` stays a run a developer can live with (about a minute and a half
on two cores); the tests below each take several seconds of sampling to reach their
tail-bound tolerances, so they run as their own step. Whole modules mark themselves with
``pytestmark = pytest.mark.slow``; single tests of otherwise fast modules are named here.
"""

import pytest

#: Node-id prefixes of single slow tests (seconds measured on a quiet 2-core machine).
SLOW = (
    "tests/audit/test_cases.py::test_tight_mechanisms_pass",
    "tests/audit/test_cases.py::test_planted_bugs_are_caught",
    "tests/privacy/test_sieve.py::test_sieve_noise_scales_are_lyu_su_li_at_the_pre_amplification_epsilon",
    "tests/privacy/test_mechanisms.py::test_sparse_vector_noise_scales",
    "tests/privacy/test_mechanisms.py::test_gaussian_noise_scale",
    "tests/privacy/test_stability.py::test_smooth_median_noise_is_smooth_sensitivity_over_alpha",
    "tests/privacy/test_stability.py::test_ptr_release_noise_scale",
    "tests/privacy/test_stability.py::test_ptr_unstable_data_passes_with_probability_at_most_delta",
    "tests/privacy/test_gaussian_sums.py::test_multiplier_is_the_smallest_meeting_epsilon",
    "tests/causal/test_priv_pc.py::test_ledger_total_equals_the_budget_asked[sg-pc]",
    "tests/data/test_engines.py::test_all_engines_give_identical_tables",
    "tests/mrf/test_private.py::test_em_runs_on_loopy_bp_when_the_tree_is_too_large",
    "tests/graphs/test_orient.py::test_orient_with_oracle_sepsets_on_bundled_networks[hepar2]",
    "tests/causal/test_direction_reference.py::test_gp_matches_scikit_learn_marginal_likelihood_fit",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _no_progress_lines(monkeypatch):
    """Off a terminal (as under pytest) every stage prints a line on stderr as it starts, and a
    heartbeat while it runs; the tests that count stderr's lines would see them (the heartbeats
    as many as a loaded machine's timing makes). Silenced here; tests of the lines themselves
    set the constants they need."""
    from privgraph.cli import progress

    monkeypatch.setattr(progress, "QUIET_SECONDS", 1e9)
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 1e9)
