"""The slow statistical tests and audits, run by ``pytest -m slow`` (CI runs both sets).

The default ``pytest`` stays a run a developer can live with (under five minutes on a quiet
two-core machine, its ten slowest tests printed); the tests below each take several seconds
of sampling to reach their tail-bound tolerances, so they run as their own step. Whole
modules mark themselves with ``pytestmark = pytest.mark.slow``; single tests of otherwise
fast modules are named here.

Spark: every test that needs pyspark (:func:`needs_spark`) is slow, but one smoke test,
``SPARK_SMOKE``, which the default run keeps (the session starts, and the engine codes a
Parquet file as the in-memory engine does). A default-run test that starts Spark any other
way fails at teardown (``_spark_only_where_marked``).
"""

import sys

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
    "tests/causal/test_methods.py::test_each_method_plans_what_privpc_plans[sg-pc]",  # ~5 s; the other five stay
    "tests/test_accountants.py::test_every_pc_method_names_its_accountant_and_its_plan_carries_it[sg-pc]",  # ~10 s
    "tests/release/test_time_cap.py::test_under_a_generous_cap_the_release_completes",  # ~8 s; the zero cap stays
)


#: The one test that needs Spark and stays in the default run (the session's start, ~8 s
#: quiet, is most of its time).
SPARK_SMOKE = "tests/data/test_engines.py::test_spark_codes_only_the_values_of_complete_rows"


def needs_spark(item) -> bool:
    """Whether a test needs pyspark: it takes the ``spark`` fixture, or it (or its parameter,
    as a ``"spark"`` engine does) is skipped without pyspark (``tests.data.conftest.requires_spark``)."""
    return "spark" in getattr(item, "fixturenames", ()) or any(
        "pyspark" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif"))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW) or (needs_spark(item) and item.nodeid != SPARK_SMOKE):
            item.add_marker(pytest.mark.slow)


def _spark_running() -> bool:
    pyspark = sys.modules.get("pyspark")
    return pyspark is not None and pyspark.SparkContext._active_spark_context is not None


@pytest.fixture(autouse=True)
def _spark_only_where_marked(request):
    """A default-run test other than ``SPARK_SMOKE`` that starts Spark (say through ``--engine
    spark`` without the ``spark`` fixture) fails: mark it slow. (Once the smoke test has started
    the session, a later test cannot be caught this way; the rule above still marks every test
    that names Spark.)"""
    before = _spark_running()
    yield
    item = request.node
    if not before and _spark_running() and item.get_closest_marker("slow") is None and item.nodeid != SPARK_SMOKE:
        pytest.fail(f"{item.nodeid} starts Spark in the default run: mark it @pytest.mark.slow "
                    "(tests/conftest.py keeps one Spark smoke test there)", pytrace=False)


@pytest.fixture(autouse=True)
def _no_progress_lines(monkeypatch):
    """Off a terminal (as under pytest) every stage prints a line on stderr as it starts, and a
    heartbeat while it runs; the tests that count stderr's lines would see them (the heartbeats
    as many as a loaded machine's timing makes). Silenced here; tests of the lines themselves
    set the constants they need."""
    from privgraph.cli import progress

    monkeypatch.setattr(progress, "QUIET_SECONDS", 1e9)
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 1e9)
