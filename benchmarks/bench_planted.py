"""Power of the end-to-end audit: is each case's noise-halved twin caught, at what run count and CPU cost?

    nice -n 19 python3 benchmarks/bench_planted.py --runs 100,200,400 --seeds 0,1,2 \
        --out benchmarks/results/planted_twins.jsonl
    nice -n 19 python3 benchmarks/bench_planted.py --chosen --seeds 0,1,2 \
        --out benchmarks/results/planted_twins.jsonl

For every end-to-end case (``estimator_cases()`` and ``release_cases()``, or ``--cases``), its
twin :func:`privgraph.audit.broken.halved_twin` (every noise draw at half its scale, NOT
private) is audited at alpha = 1e-3 (the audit's default) with ``runs`` runs per side (a
quarter as many more choose the event) on ``SeededSampler`` streams from each seed and the
twin's name, as ``privgraph audit --seed`` would. One JSON line per (case, runs, seed) is
appended to ``--out``: the claim, the twin's lower bound, whether it exceeds the claim
(``caught``), the event, and the CPU seconds of the twin's audit (``time.process_time``, this
process only; the machine's other load does not count); with ``--with-case``, the bound
the correct case itself reaches at the same runs and seed (``case_bound``, ``case_ratio``:
how much of its claim the case sees). The run counts of
``privgraph.audit.broken.TWIN_RUNS`` and the table in docs/audit.md come from this file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
import warnings
from pathlib import Path

from privgraph.audit.broken import TWIN_RUNS, halved_twin
from privgraph.audit.estimators import estimator_cases
from privgraph.audit.release_cases import release_cases

HERE = Path(__file__).resolve().parent
ALPHA = 1e-3


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="", help="comma-separated case names (default: every end-to-end case)")
    ap.add_argument("--runs", default="100", help="comma-separated runs per side")
    ap.add_argument("--chosen", action="store_true",
                    help="instead of --runs: each case at its TWIN_RUNS count (its quick size when not there)")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--with-case", action="store_true",
                    help="also audit the (correct) case itself at the same runs and seed: case_bound, case_ratio")
    ap.add_argument("--out", default=str(HERE / "results" / "planted_twins.jsonl"))
    args = ap.parse_args(argv)
    cases = {c.name: c for c in estimator_cases() + release_cases()}
    names = args.cases.split(",") if args.cases else list(cases)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    warnings.simplefilter("ignore")  # every fit warns that SeededSampler is not private
    with open(args.out, "a") as out:
        for name in names:
            case = cases[name]
            ladder = [TWIN_RUNS.get(name, case.quick_runs)] if args.chosen else [int(r) for r in args.runs.split(",")]
            for runs in ladder:
                for seed in (int(s) for s in args.seeds.split(",")):
                    twin = halved_twin(case, runs)
                    start = time.process_time()
                    result = twin.audit(seed=seed, alpha=ALPHA)
                    row = {"case": name, "twin": twin.name, "claim": case.epsilon, "delta": case.delta,
                           "runs": runs, "seed": seed, "alpha": ALPHA, "bound": round(result.epsilon_bound, 4),
                           "ratio": round(result.epsilon_bound / case.epsilon, 3),
                           "caught": result.violates(case.epsilon), "event": result.event,
                           "cpu_s": round(time.process_time() - start, 2), "commit": commit}
                    if args.with_case:
                        bound = case.audit(seed=seed, alpha=ALPHA, runs=runs).epsilon_bound
                        row.update(case_bound=round(bound, 4), case_ratio=round(bound / case.epsilon, 3))
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
