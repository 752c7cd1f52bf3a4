"""Tables-PC's skeleton F1 by network, rows, epsilon and noise seed (issue 44's target).

    nice -n 19 python3 benchmarks/bench_tables_pc.py --networks child,insurance --epsilons 1,3 \
        --seeds 0,1,2 --out benchmarks/results/tables_pc.jsonl     # the tuning set
    nice -n 19 python3 benchmarks/bench_tables_pc.py --networks alarm,hepar2 --epsilons 1,3 \
        --seeds 0,1,2 --out benchmarks/results/tables_pc.jsonl     # held out: reported on

Each network is forward-sampled once (``--rows`` rows, ``numpy`` rng ``--data-seed``, 0 by
default) and fitted by ``PrivPC(epsilon, delta=1e-6, method=--method)`` (``auto``, the
default, is tables-pc on 10 columns or more) with seeded noise ``random_state=seed`` (an
experiment, not a private release). One JSON line per fit is appended to ``--out``: network,
rows, epsilon, delta, seed, method (the one that ran), skeleton F1 against the network's
edges, edges found, true edges, the CPU seconds of the fit (``time.process_time``, this
process only), the ledger's epsilon, and the commit (with ``+dirty`` when the work tree
differs from it). The tables in docs/discovery.md are read from the file.

Constants were tuned on child and insurance only; alarm and hepar2 were not looked at until
the constants were fixed. The noisy test's design (the calibrated statistic, the level-1
common-neighbour restriction, the homogeneous component), the run-time split of levels 1
and 2 (``table_pc.SPLIT_POWER``, ``LEVEL0_SHARE``) and the combination with the earlier
releases (``table_pc.COMBINE``: ``--combine``) were chosen on child and insurance with
``--seeds 10,11,12,13,14`` (variants set on the module by the flags, recorded in each row),
apart from the reported seeds 0-2. The result files were written with
``OPENBLAS_NUM_THREADS=1`` (tables-pc now also holds BLAS to one thread around its tests).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np

from privgraph.causal import PrivPC, table_pc
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample

HERE = Path(__file__).resolve().parent


def commit() -> str:
    run = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True, cwd=HERE).stdout.strip()  # noqa: E731
    head = run("rev-parse", "--short", "HEAD")
    return head + ("+dirty" if run("status", "--porcelain", "--untracked-files=no", "--", "../src") else "")


def fit_row(net, codes, *, epsilon: float, delta: float, seed: int, method: str) -> dict:
    truth = {frozenset(e) for e in net.edges}
    t0 = time.process_time()
    est = PrivPC(epsilon=epsilon, delta=delta, method=method, random_state=seed).fit(NumpyEngine(net.domain, codes))
    cpu = time.process_time() - t0
    found = {frozenset(e) for e in est.skeleton_.edges}
    f1 = 2 * len(truth & found) / (len(truth) + len(found)) if truth or found else 1.0
    return {"network": net.name if hasattr(net, "name") else None, "rows": int(len(codes)), "epsilon": epsilon,
            "delta": delta, "seed": seed, "method": est.method_, "f1": round(f1, 4), "edges": len(found),
            "true_edges": len(truth), "correct": len(truth & found), "cpu_s": round(cpu, 2),
            "epsilon_spent": est.epsilon_spent_}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--networks", default="child,insurance")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--epsilons", default="1,3")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--data-seed", type=int, default=0)
    ap.add_argument("--method", default="auto")
    ap.add_argument("--split-power", type=float, default=None,
                    help="table_pc.SPLIT_POWER for this run (default: the module's)")
    ap.add_argument("--level0-share", type=float, default=None,
                    help="table_pc.LEVEL0_SHARE for this run (default: the module's)")
    ap.add_argument("--combine", choices=("none", "homogeneous", "both"), default=None,
                    help="table_pc.COMBINE for this run: which statistics of levels 1-2 read their table "
                         "combined with the released tables on subsets of its columns (default: the module's)")
    ap.add_argument("--out", default=None, help="JSONL file to append to (default: print only)")
    args = ap.parse_args(argv)
    settings = {k: v for k, v in (("split_power", args.split_power), ("level0_share", args.level0_share),
                                  ("combine", args.combine))
                if v is not None}
    for key, value in settings.items():  # a tuning run: the constant is set for this process only
        setattr(table_pc, key.upper(), value)
    warnings.simplefilter("ignore")  # the seeded-noise warning, once per fit
    tag = commit()
    for name in args.networks.split(","):
        net = load_network(name)
        codes = sample(net, args.rows, np.random.default_rng(args.data_seed))
        for epsilon in (float(e) for e in args.epsilons.split(",")):
            for seed in (int(s) for s in args.seeds.split(",")):
                row = fit_row(net, codes, epsilon=epsilon, delta=args.delta, seed=seed, method=args.method)
                row |= {"network": name, "data_seed": args.data_seed, "commit": tag} | settings
                print(json.dumps(row), flush=True)
                if args.out:
                    with open(args.out, "a") as out:
                        out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
