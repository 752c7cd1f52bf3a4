"""``privgraph audit``: the table, the verdicts, the exit status and the errors."""

import subprocess
import sys
import time

from typer.testing import CliRunner

from privgraph.audit import correct_cases
from privgraph.cli import app


def test_quick_audit_passes_every_mechanism_well_within_ci_time():
    start = time.perf_counter()
    result = CliRunner().invoke(app, ["audit", "--quick", "--seed", "0"])
    elapsed = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") > 5}
    for case in correct_cases():
        assert "pass" in rows[case.name], result.output
    assert "lower bound" in result.output
    assert elapsed < 90  # CI allows two minutes


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
    assert str(result.exception) == "alpha must be in (0, 1), got 0.0"


def test_import_of_the_audit_package_stays_light():
    code = ("import sys, privgraph.audit; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'rich', 'typer', 'pandas'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
