"""``privgraph audit``: the table, the verdicts, the exit status and the errors."""

import subprocess
import sys
from collections import Counter

import pytest
from typer.testing import CliRunner

from privgraph.audit import all_cases, find_cases
from privgraph.cli import app

pytestmark = pytest.mark.slow  # whole audits: run by `pytest -m slow`


@pytest.fixture(scope="module")
def quick_audit():
    """``privgraph audit --quick`` as CI would run it, its cases in two worker processes: (exit
    code, rows by name)."""
    result = CliRunner().invoke(app, ["audit", "--quick", "--seed", "0", "--jobs", "2"])
    audit_part = result.output.split("No data-dependent refusal")[0]  # the refusal table follows
    lines = [line.split("│")[1:-1] for line in audit_part.splitlines() if line.count("│") > 5]
    header = [cell.strip() for cell in result.output.split("┃")[1:11]]
    rows = {cells[0].strip(): dict(zip(header, (c.strip() for c in cells))) for cells in lines
            if cells[0].strip()}  # a long event wraps onto a row with no name
    return result, rows


def test_quick_audit_passes_every_mechanism(quick_audit):
    result, rows = quick_audit
    assert result.exit_code == 0, result.output
    assert sorted(rows) == sorted(c.name for c in all_cases())
    for case in all_cases():
        row = rows[case.name]
        assert row["verdict"] == "pass" and float(row["audited bound"]) <= case.epsilon, row
    assert "lower bound" in result.output
    refusals = result.output.split("No data-dependent refusal")[1]
    assert "DIFFERENT" not in refusals and refusals.count("same") >= 12


def test_cases_audited_in_worker_processes_give_what_one_at_a_time_gives(quick_audit):
    _, rows = quick_audit
    for name in ("laplace", "release_tree_adaptive"):
        (case,) = find_cases(name)
        here = case.audit(seed=0, quick=True, alpha=1e-3)
        assert rows[name]["audited bound"] == f"{here.epsilon_bound:.4f}", (name, rows[name])
        assert rows[name]["runs"] == f"{here.runs:,}"


def test_jobs_must_be_a_positive_number_of_workers():
    result = CliRunner().invoke(app, ["audit", "--quick", "--mechanism", "laplace", "--jobs", "0"])
    assert result.exit_code != 0 and "--jobs must be a whole number of worker processes, at least 1, got 0" in (
        result.output + str(result.exception))


def test_quick_audit_size_stays_within_the_ci_budget():
    # The CI budget is guarded by the quick audit's size, which is public and fixed, not by its
    # time: a timed assertion failed on CI at c73e8a3 (570 CPU seconds against 160 to 183 on
    # a loaded 2-core machine here), with nothing changed but the machine. The bounds are
    # today's sizes: growing them is a choice made here, after timing the quick audit
    # (`/usr/bin/time privgraph audit --quick --seed 0`).
    runs = Counter()
    for case in all_cases():
        runs[case.group] += case.quick_runs
    assert runs["estimators"] <= 22_000 and runs["primitives"] <= 1_080_000, runs


def test_quick_audit_sees_every_mechanism_that_can_leak(quick_audit):
    # Not tight everywhere, but no correct case may pass by seeing nothing: each bound is
    # at least half its claim. (The floating-point attack must find nothing instead; it
    # runs on SecureSampler, so test_cases.py checks that at alpha = 1e-6.) Priv-PC on two
    # variables reaches about half its claim at most (the sieve's one query spends little
    # of its share): about 0.34 at quick size.
    # Three end-to-end cases see little at quick size and are kept for the violations they
    # would show, not for tightness: the record-level direction test (its test part holds
    # 100 rows at 2,000 training rows, about 0.4 of its claim at 2,000 runs), a changed
    # training record (one noisy table cell of many), the release's stages (one
    # statistic behind Priv-PC's sieve or a CGM-EM fit), and Gauss-PC (a Gaussian release
    # audited against an (epsilon, delta) claim converted from zCDP, which no finite audit
    # reaches: about 0.13 of its claim at its full 20,000 runs, 0 at quick size; so too the tree's
    # adaptive rounds, one Gaussian cell inside a zCDP filter's claim).
    # A floor of 0 here is no test by itself: that each such case can see its pair apart at all
    # is checked with the noise taken out (tests/audit/test_estimators.py,
    # test_without_its_noise_every_case_sees_its_pair_apart), or, for the PC decisions, by
    # the margin-move tests there.
    _, rows = quick_audit
    # The tie-corrected Kendall pair moves its margin by 0.66 of the sensitivity (which pays
    # for the threshold's move too): 0.43 at quick size.
    least = {"priv_pc": 0.3, "laplace_pc_ties": 0.3, "anm_record_test": 0.1, "anm_record_train": 0.0, "anm_reci_test": 0.1, "release_structure": 0.0,
             "release_table": 0.0, "release_tree": 0.0, "gauss_pc": 0.0, "release_gauss_edge": 0.0,
             "release_gauss_cell": 0.0, "release_tree_adaptive": 0.0, "release_tree_coarse": 0.0, "release_tree_rows": 0.0, "release_tree_rounds": 0.0, "release_tree_levels": 0.0,
             "priv_pc_rows": 0.0,
             "release_sized_cell": 0.0, "fisher_z_cov": 0.0,
             # the person as the unit (privgraph.audit.persons): the MRF cases are tight (about 0.55 at
             # quick size, the replace-one pair's two cells 0.48); the others run the truncation and the
             # conversion end to end behind an add/remove fit that sees little (as priv_pc_rows does)
             "mrf_person_replace": 0.3, **dict.fromkeys([f"{e}_person_{kind}" for e in ("pc", "anm", "release")
                                                         for kind in ("k", "more", "replace")], 0.0)}
    for case in all_cases():
        if case.name != "laplace_float_attack":
            assert float(rows[case.name]["ratio"]) >= least.get(case.name, 0.5), rows[case.name]


def test_planted_bug_shows_as_caught():
    result = CliRunner().invoke(app, ["audit", "--quick", "--mechanism", "broken_laplace_scale"])
    assert result.exit_code == 0, result.output
    assert "caught" in result.output


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "privgraph", "audit", *args], capture_output=True, text=True, timeout=120)


def test_bad_input_is_one_line_naming_it():
    out = _cli("--mechanism", "nope")
    assert out.returncode == 2 and "unknown mechanism 'nope'" in out.stderr
    assert "Traceback" not in out.stderr
    result = CliRunner().invoke(app, ["audit", "--mechanism", "laplace", "--alpha", "0"])
    assert isinstance(result.exception, ValueError)
    assert str(result.exception) == "--alpha must lie in (0, 1), got 0.0"


def test_unknown_group_is_named_in_the_error():
    result = CliRunner().invoke(app, ["audit", "--group", "nope"])
    assert isinstance(result.exception, ValueError)
    assert "unknown group 'nope'" in str(result.exception)


def test_import_of_the_audit_package_stays_light():
    code = ("import sys, privgraph.audit; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'rich', 'typer', 'pandas'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
