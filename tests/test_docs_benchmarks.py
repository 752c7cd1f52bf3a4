"""The measurement pages in docs/benchmarks/ are generated, never hand-edited: regenerating them
from the committed result files gives the committed pages, and every page names result files
that exist (benchmarks/report.py)."""

import re
import runpy
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "benchmarks"


#: The commit and date beside each result file: masked when pages are compared, since a shallow
#: or squashed clone gives every file another last commit (the data must still agree).
COMMIT = re.compile(r"\(commit [^)]+\)")


def unstamped(text: str) -> str:
    return COMMIT.sub("(commit)", text)


def report():
    return runpy.run_path(str(ROOT / "benchmarks" / "report.py"), run_name="report")


def test_pages_are_what_report_py_writes(tmp_path):
    if subprocess.run(["git", "rev-parse"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout: the pages name commits")
    written = report()["write_pages"](tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in PAGES.glob("*.md")), \
        "docs/benchmarks/ holds a page report.py does not write (or lacks one): run python3 benchmarks/report.py"
    for path in written:
        assert unstamped(path.read_text()) == unstamped((PAGES / path.name).read_text()), \
            f"docs/benchmarks/{path.name} differs from what benchmarks/report.py writes: regenerate it, don't edit it"


def test_every_table_names_an_existing_result_file_and_its_command():
    for page in PAGES.glob("*.md"):
        text = page.read_text()
        files = re.findall(r"- result file: `(benchmarks/results/[^`]+)` \(commit ([^)]+)\)", text)
        commands = re.findall(r"- command: `([^`]+)`", text)
        assert files and len(files) == len(commands), page.name
        for name, commit in files:
            assert (ROOT / name).is_file(), f"{page.name} names {name}, which is not in the repository"
            assert commit != "uncommitted", f"{page.name}: {name} is not committed (git add -f it first)"


def test_each_benchmark_page_is_linked_from_its_reference_page_and_the_readme():
    readme = (ROOT / "README.md").read_text()
    for page in PAGES.glob("*.md"):
        assert f"benchmarks/{page.name}" in (ROOT / "docs" / page.name).read_text(), \
            f"docs/{page.name} does not link docs/benchmarks/{page.name}"
        assert f"docs/benchmarks/{page.name}" in readme, f"README.md does not link docs/benchmarks/{page.name}"
