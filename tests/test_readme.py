"""The README's quick start stays true: two commands, and CI runs both verbatim."""

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick start\s+```bash\n(.*?)```", text, re.S).group(1)
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_quick_start_has_two_commands_and_ci_runs_the_test_one():
    commands = quick_start_commands()
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[0] in ci and commands[1] in ci


def test_import_privgraph_is_light():
    code = "import sys, privgraph; print(len([m for m in sys.modules if m.startswith(('numpy','scipy','pandas','duckdb','pyspark','matplotlib'))]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


def test_main_job_runs():
    out = subprocess.run([sys.executable, "-m", "privgraph", "demo", "--seed", "3", "--rows", "2000"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Privacy ledger" in out.stdout and "NOT private" in out.stdout


HEAVY = ("numpy", "scipy", "pandas", "duckdb", "pyspark", "matplotlib", "networkx")


def heavy_modules_imported(*args: str) -> tuple[list[str], str]:
    """(the heavy modules that `privgraph ARGS` imported, its stderr), in a fresh process."""
    code = (f"import sys, runpy; sys.argv = ['privgraph', *{list(args)!r}]\n"
            "try:\n    runpy.run_module('privgraph', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return ast.literal_eval(out.stdout.strip().splitlines()[-1]), out.stdout + out.stderr


def test_every_commands_help_imports_nothing_heavy():
    """`privgraph COMMAND --help` builds the command from the estimators' declarations
    (privgraph.declarations), not from the estimators: no numerical stack (measured by
    benchmarks/bench_cli.py, not here)."""
    from privgraph.cli import COMMANDS

    for command in COMMANDS:
        heavy, output = heavy_modules_imported(command, "--help")
        assert heavy == [] and "Usage:" in output, (command, heavy, output[-2000:])


def test_a_missing_data_file_or_codebook_is_one_line_before_anything_heavy(tmp_path):
    """discover and release check the DATA path and the codebook path by name before they
    import the estimator, with the messages privgraph.inputs gives."""
    data = tmp_path / "data.csv"
    data.write_text("a,b\n0,1\n")
    missing_data = [str(tmp_path / "missing.csv"), "--domain", str(tmp_path / "d.json")]
    missing_codebook = [str(data), "--domain", str(tmp_path / "missing.json")]
    release = ["--epsilon", "1", "--out", str(tmp_path)]
    cases = [(["discover", *missing_data], "no such data file"), (["discover", *missing_codebook], "no such domain codebook"),
             (["release", *missing_data, *release], "no such data file"),
             (["release", *missing_codebook, *release], "no such domain codebook")]
    for args, message in cases:
        heavy, output = heavy_modules_imported(*args)
        lines = [line for line in output.splitlines() if line.startswith("privgraph: error:")]
        assert heavy == [] and len(lines) == 1 and message in lines[0], (args, heavy, output[-2000:])


def test_help_and_version_import_nothing_heavy():
    """`privgraph --help` and `--version` stay fast because they import no numerical stack
    (their time is measured by benchmarks/bench_cli.py, not here)."""
    for arg in ("--help", "--version"):
        heavy, output = heavy_modules_imported(arg)
        assert heavy == [], output


def test_help_skips_rich_help_rendering():
    """`privgraph --help` prints click's plain help: typer's rich formatter (its module imports
    rich's markdown, syntax and traceback renderers) would add about 60 ms to every --help."""
    code = ("import sys, runpy; sys.argv = ['privgraph', '--help']\n"
            "try:\n    runpy.run_module('privgraph', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('typer.rich_utils', 'rich.markdown') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr
