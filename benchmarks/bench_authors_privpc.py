"""Priv-PC against the authors' code, side by side at matched total epsilon (issue 13).

For each of the paper's four networks (earthquake, cancer, asia, survey), n = 100,000 rows
forward-sampled from the bundled network (sample seed s), and each target total epsilon T
of a grid, run

* the authors' ``estimate_skeleton_probe_examine`` (their ``src/pc.py``, in a subprocess
  with ``sys.path`` pointing at ``--authors``; nothing of theirs is imported here or in
  privgraph) with their evaluation's settings: ``bincondKendall`` (``discondKendall`` on
  survey, the same code), alpha = 0.10 (one-sided p), tweak 0.02, delta = 1e-3,
  ``max_reach = min(floor(log2 n) - 5, d - 2)``, numpy's global seed = s;
* privgraph's ``PrivPC(method="priv-pc", epsilon=TOTAL, delta=1e-3, ci_test="kendall",
  random_state=s)``, with its defaults otherwise (alpha = 0.05, two-sided), and again at
  alpha = 0.20: the authors' alpha of 0.10 is on ``norm.sf(|z|)``, half the two-sided
  p-value, so 0.20 puts the same threshold (1.28) on |z|;
* the same with ``ci_test="kendall-ties"`` (alpha 0.05): Kendall's z against a threshold
  corrected for ties (:class:`privgraph.stats.KendallTest`, ``tie_corrected=True``);
* non-private Kendall PC in each of these (what Priv-PC tends to as epsilon grows),

on the same sample, and score the skeleton F1 of each against the TRUE network.
The authors' code runs unpatched (Python 3.11, numpy 2, scipy 1.17, networkx 3, and
``gsq==0.1.6`` for its imports); their ``eval.py`` and ``dataset.py`` are bypassed (they
read CSVs and use ``np.int``): the runner below calls their skeleton function directly.

**Matching epsilon.** The authors' ``eps`` is per round (a round = one sieve hit); they
report ``eps' = sum over (sieve, examine) of sqrt(2 c ln(2/delta)) e_i + c e_i (e^e_i - 1)``
with ``e_i = eps / 2`` and c the number of hits the run made (advanced composition,
delta = 1e-3, over a count the data chose). For a target T: a pilot run (seed 100) at the
per-round eps that maps a guessed count to T gives a count c; every run then uses the
per-round eps that maps c to T; and privgraph runs at *that run's reported eps'* on the
same sample and seed. So each pair of runs is matched exactly, under the authors' own
accounting; the table's "total" column is the mean of those reported totals.

**Coding.** Both get privgraph's codes (the BIF's level order). The authors' loader codes
categories alphabetically (``astype('category').cat.codes``), which on survey turns
A = (young, adult, old) into (adult, old, young) and T = (car, train, other) into
(car, other, train); here both use the BIF order, so the comparison is of the methods,
not of the coding. Binary variables are unaffected: a flipped code only flips tau's sign.

**Judging "at or above".** Besides the mean F1 of each cell, the summary gives each cell's
mean *paired* difference (privgraph minus authors, run pair by run pair) with its standard
error, and marks ``*`` a cell below zero by more than two standard errors: one run's F1
varies by up to 0.2 within a cell, so a mean over a few pairs moves by hundredths from
noise alone.

Run (about 15 CPU-minutes with the default 5 seeds, 40 with ``--seeds 20``, mostly the
authors' code):
    python3 benchmarks/bench_authors_privpc.py --authors /tmp/privpc-authors \\
        --python /tmp/authors-venv/bin/python --seeds 20
Writes benchmarks/results/authors_privpc.csv (one row per run pair). With
``--reuse-authors CSV`` the authors' columns come from an earlier run's CSV (same samples,
same matched totals: their code is deterministic given both) and only privgraph runs
(a few CPU-minutes).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from privgraph.causal import BudgetTooSmall, PrivPC
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.graphs import CPDAG, skeleton_scores

RESULTS = Path(__file__).resolve().parent / "results"
NETWORKS = ("earthquake", "cancer", "asia", "survey")
TOTALS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
DELTA = 1e-3
N = 100_000
PILOT_SEED = 100

#: Runs in the authors' interpreter: reads jobs (JSON lines), writes one JSON line per job.
AUTHORS_RUNNER = r"""
import json, sys, time, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
warnings.filterwarnings("ignore")
from pc import estimate_skeleton_probe_examine
from indep_test import bincondKendall, discondKendall
for line in sys.stdin:
    job = json.loads(line)
    dm = np.load(job["data"]).astype(int)
    np.random.seed(job["seed"])
    reach = max(min(int(np.log2(dm.shape[0])) - 5, dm.shape[1] - 2), 0)
    test = bincondKendall if job["binary"] else discondKendall
    start = time.perf_counter()
    g, _, eps_total, _, tests = estimate_skeleton_probe_examine(
        indep_test_func=test, data_matrix=dm, alpha=0.10, eps=job["eps"], delta=job["delta"], max_reach=reach)
    print(json.dumps(dict(job, edges=[list(map(int, e)) for e in g.edges()], eps_total=float(eps_total),
                          tests=int(tests), seconds=time.perf_counter() - start)), flush=True)
"""


def authors_total(eps: float, hits: float, delta: float = DELTA) -> float:
    """The authors' reported total for per-round ``eps`` after ``hits`` hits (their pc.py)."""
    half = eps / 2
    return 2 * (math.sqrt(2 * hits * math.log(2 / delta)) * half + hits * half * math.expm1(half))


def hits_of(eps: float, total: float, delta: float = DELTA) -> float:
    """The hit count c that makes :func:`authors_total` equal ``total`` (a quadratic in sqrt(c))."""
    half = eps / 2
    a, b = 2 * half * math.expm1(half), 2 * half * math.sqrt(2 * math.log(2 / delta))
    s = (-b + math.sqrt(b * b + 4 * a * total)) / (2 * a)
    return s * s


def per_round_eps(total: float, hits: float, delta: float = DELTA) -> float:
    """The per-round eps whose reported total after ``hits`` hits is ``total`` (bisection)."""
    lo, hi = 1e-9, 50.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if authors_total(mid, max(hits, 1.0), delta) < total else (lo, mid)
    return (lo + hi) / 2


def run_authors(jobs: list[dict], authors: Path, python: str) -> list[dict]:
    """The authors' Priv-PC on each job, in one subprocess of ``python``."""
    done = subprocess.run([python, "-c", AUTHORS_RUNNER, str(authors / "src")], check=True, text=True,
                          input="".join(json.dumps(j) + "\n" for j in jobs), capture_output=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def skeleton_f1(names, edges, truth: CPDAG) -> float:
    return skeleton_scores(CPDAG(list(names), undirected=[(names[a], names[b]) for a, b in edges]), truth)["f1"]


#: privgraph's variants: (column tag, ci_test, alpha). The authors' 0.10 is on a one-sided p
#: of |z|: alpha = 0.20 two-sided puts the same threshold on |z|.
VARIANTS = (("ours", "kendall", 0.05), ("ours_a20", "kendall", 0.20), ("ours_ties", "kendall-ties", 0.05),
            ("ours_ties_a01", "kendall-ties", 0.01))


def run_privgraph(codes: np.ndarray, net, total: float, seed: int) -> dict:
    """privgraph's Priv-PC at ``total`` in each of :data:`VARIANTS`."""
    engine = NumpyEngine(net.domain, codes)  # the codes as they are (a frame of 0/1 would not match the BIF's level names)
    truth, out = CPDAG.from_dag(net.to_networkx()), {}
    for tag, ci_test, alpha in VARIANTS:
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # seeded noise: an experiment
                est = PrivPC(method="priv-pc", epsilon=total, delta=DELTA, ci_test=ci_test, alpha=alpha,
                             random_state=seed).fit(engine)
        except BudgetTooSmall:
            out.update({f"{tag}_f1": math.nan, f"{tag}_refused": True})
            continue
        out.update({f"{tag}_f1": skeleton_scores(est.graph_, truth)["f1"], f"{tag}_refused": False,
                    f"{tag}_seconds": time.perf_counter() - start, f"{tag}_spent": est.epsilon_spent_,
                    f"{tag}_rounds_used": est.rounds_used_, f"{tag}_rounds": est.rounds_})
    return out


def nonprivate_f1(codes: np.ndarray, net) -> dict:
    """Non-private Kendall PC's skeleton F1 in each variant (what Priv-PC tends to)."""
    engine, truth = NumpyEngine(net.domain, codes), CPDAG.from_dag(net.to_networkx())
    return {f"pc_f1{tag[4:]}": skeleton_scores(
        PrivPC(method="pc", ci_test=ci_test, alpha=alpha).fit(engine).graph_, truth)["f1"]
        for tag, ci_test, alpha in VARIANTS}


def rerun_ours(rows: list[dict]) -> list[dict]:
    """privgraph's columns recomputed on the rows of an earlier run (same samples: seed s, N
    rows; same matched totals), the authors' columns kept: their code is deterministic given
    the sample and numpy's seed, so it need not run again."""
    out, nets, pcs = [], {}, {}
    for row in rows:
        name, seed = row["network"], int(row["seed"])
        net = nets.setdefault(name, load_network(name))
        if (name, seed) not in pcs:
            codes = sample(net, N, np.random.default_rng(seed))
            pcs[name, seed] = (codes, nonprivate_f1(codes, net))
        codes, pc = pcs[name, seed]
        kept = {k: v for k, v in row.items() if not k.startswith(("ours", "pc_f1"))}
        out.append({**kept, **run_privgraph(codes, net, float(row["matched_total"]), seed), **pc})
        print(name, row["target_total"], seed, {k: round(float(v), 3) for k, v in out[-1].items() if k.endswith("_f1")},
              flush=True)
    return out


def network_runs(name: str, totals, seeds, authors: Path, python: str, tmp: Path) -> list[dict]:
    net = load_network(name)
    names, truth = net.domain.names, CPDAG.from_dag(net.to_networkx())
    binary = all(s == 2 for s in net.domain.sizes)
    data = {}
    for seed in (PILOT_SEED, *seeds):
        data[seed] = sample(net, N, np.random.default_rng(seed))
        np.save(tmp / f"{name}_{seed}.npy", data[seed])
    d = len(names)
    guess = d * (d - 1) / 2 - net.to_networkx().number_of_edges()  # perfect PC: one hit per removal
    pilots = run_authors([dict(network=name, target=t, seed=PILOT_SEED, data=str(tmp / f"{name}_{PILOT_SEED}.npy"),
                               binary=binary, delta=DELTA, eps=per_round_eps(t, guess)) for t in totals],
                         authors, python)
    hits = {p["target"]: hits_of(p["eps"], p["eps_total"]) for p in pilots}
    jobs = [dict(network=name, target=t, seed=s, data=str(tmp / f"{name}_{s}.npy"), binary=binary, delta=DELTA,
                 eps=per_round_eps(t, hits[t]), pilot_hits=hits[t]) for t in totals for s in seeds]
    pcs = {s: nonprivate_f1(data[s], net) for s in seeds}
    rows = []
    for job in run_authors(jobs, authors, python):
        ours = run_privgraph(data[job["seed"]], net, job["eps_total"], job["seed"])
        ours.update(pcs[job["seed"]])
        rows.append(dict(network=name, target_total=job["target"], seed=job["seed"], authors_eps_per_round=job["eps"],
                         pilot_hits=round(job["pilot_hits"], 2), authors_hits=round(hits_of(job["eps"], job["eps_total"]), 2),
                         matched_total=job["eps_total"], authors_f1=skeleton_f1(names, job["edges"], truth),
                         authors_seconds=job["seconds"], authors_tests=job["tests"], **ours))
        print(name, job["target"], job["seed"], f"total={job['eps_total']:.3g}",
              f"authors={rows[-1]['authors_f1']:.3f}", f"ours={rows[-1]['ours_f1']:.3f}",
              f"ours_a20={rows[-1]['ours_a20_f1']:.3f}", flush=True)
    return rows


def summarise(rows: list[dict], ours: str = "ours_f1") -> str:
    """Markdown table: network x target total, privgraph mean F1 (column ``ours``) / authors'
    mean F1, and the mean matched total under each target."""
    totals = sorted({float(r["target_total"]) for r in rows})
    lines = ["| network | " + " | ".join(f"{t:g}" for t in totals) + " |", "|---" * (len(totals) + 1) + "|"]
    for name in dict.fromkeys(r["network"] for r in rows):
        cells = []
        for t in totals:
            cell = [r for r in rows if r["network"] == name and float(r["target_total"]) == t]
            mine, theirs = np.nanmean([float(r[ours]) for r in cell]), np.mean([float(r["authors_f1"]) for r in cell])
            cells.append(f"{mine:.2f} / {theirs:.2f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    matched = [f"{np.mean([float(r['matched_total']) for r in rows if float(r['target_total']) == t]):.3g}" for t in totals]
    return "\n".join(lines + ["| mean matched total | " + " | ".join(matched) + " |"])


def paired(rows: list[dict], ours: str = "ours_f1") -> str:
    """Markdown table: network x target total, the mean paired difference privgraph minus
    authors (same sample, same matched total) and its standard error over the run pairs,
    marked ``*`` where it is below zero by more than two standard errors (the cells where
    "at or above" fails beyond run-to-run noise)."""
    totals = sorted({float(r["target_total"]) for r in rows})
    lines = ["| network | " + " | ".join(f"{t:g}" for t in totals) + " |", "|---" * (len(totals) + 1) + "|"]
    for name in dict.fromkeys(r["network"] for r in rows):
        cells = []
        for t in totals:
            diff = np.array([float(r[ours]) - float(r["authors_f1"]) for r in rows
                             if r["network"] == name and float(r["target_total"]) == t])
            diff = diff[~np.isnan(diff)]
            se = diff.std(ddof=1) / math.sqrt(len(diff)) if len(diff) > 1 else math.nan
            cells.append(f"{diff.mean():+.3f} ± {se:.3f}" + (" *" if diff.mean() + 2 * se < 0 else ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--authors", type=Path, default=None, help="checkout of the authors' repository")
    ap.add_argument("--python", default=sys.executable, help="interpreter with the authors' needs (gsq, networkx)")
    ap.add_argument("--networks", nargs="+", default=list(NETWORKS))
    ap.add_argument("--totals", nargs="+", type=float, default=list(TOTALS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS / "authors_privpc.csv")
    ap.add_argument("--summarise", action="store_true", help="only print the tables of an existing --out")
    ap.add_argument("--reuse-authors", type=Path, default=None,
                    help="take the authors' runs from this earlier CSV and rerun privgraph only")
    args = ap.parse_args()
    if args.summarise:
        with open(args.out) as f:
            print(summaries(list(csv.DictReader(f))))
        return
    if args.authors is None and args.reuse_authors is None:
        ap.error("give --authors (a checkout of their repository) or --reuse-authors (an earlier CSV)")
    rows = []
    if args.reuse_authors is not None:
        with open(args.reuse_authors) as f:
            rows = rerun_ours(list(csv.DictReader(f)))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for name in args.networks:
                rows += network_runs(name, args.totals, range(args.seeds), args.authors, args.python, Path(tmp))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
        writer.writeheader()
        writer.writerows(rows)
    print(summaries(rows))


def summaries(rows: list[dict]) -> str:
    """The tables of every variant present in ``rows``."""
    titles = {"ours": "privgraph (kendall, alpha 0.05)", "ours_a20": "privgraph at alpha 0.20 (the authors' level)",
              "ours_ties": "privgraph with kendall-ties (alpha 0.05)",
              "ours_ties_a01": "privgraph with kendall-ties at alpha 0.01"}
    pairs = len(rows) // max(len({(r["network"], float(r["target_total"])) for r in rows}), 1)
    return "\n\n".join(f"{title}:\n{summarise(rows, tag + '_f1')}\n\npaired difference, privgraph - authors "
                        f"(mean ± standard error over the {pairs} run pairs a cell):\n{paired(rows, tag + '_f1')}"
                        for tag, title in titles.items() if rows and tag + "_f1" in rows[0])


if __name__ == "__main__":
    main()
