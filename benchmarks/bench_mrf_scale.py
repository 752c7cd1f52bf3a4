"""CGM-EM on wide models: privgraph against Private-PGM (mbi) on the same released tables.

Usage (from the repository root)::

    python benchmarks/bench_mrf_scale.py --out bench_out/mrf_scale --mbi-python /tmp/mbi/bin/python

    # with the warm fit, KL and log-likelihood of an earlier commit on the same tables:
    git archive <commit> src | tar -x -C /tmp/before
    python benchmarks/bench_mrf_scale.py --before /tmp/before/src --mbi-python /tmp/mbi/bin/python

For each model (the text's 10-node third-order chain; the families -- node plus parents
-- of the bundled networks sachs 11, child 20, alarm 37 and hepar2 70 columns; and alarm's
families merged as a release merges them, up to 10^4 cells a clique): sample
``--rows`` training and 5,000 held-out rows (``rng`` seeds 0 and 9), count the clique
tables, release them once with Laplace noise (``--epsilon``, add/remove, ``SeededSampler``
seeds 1..): then fit CGM-EM cold (fresh junction-tree and inference caches) and warm (the
same fit again, ``--repeats`` times), sample ``--rows`` synthetic rows, and score
KL(true || learned) and the held-out log-likelihood per record. mbi's default estimator
(mirror descent, L2 loss, 1000 iterations, float64; Laplace noise given as its standard
deviation) fits the *same* noisy tables in its own process (``worker`` mode of this
script), cold (first fit of a structure, JAX compiles) and warm (``--repeats`` times),
and samples the same number of rows. Times are CPU seconds of the fitting process
(``time.process_time``; JAX may use several threads, so its wall seconds are written
too). mbi is a benchmark-only peer, never imported by privgraph.

The machine is shared: compare the two columns of one row, not rows of different runs.
A warm time is the least of the ``--repeats`` warm fits (every implementation alike),
the figure least disturbed by the other work on the machine.
Every output row carries the release's ledger total.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from privgraph.data import NumpyEngine, count_tables
from privgraph.datasets import load_network, sample as network_sample
from privgraph.caches import clear_caches
from privgraph.mrf import cgm, junction
from privgraph.mrf.evaluation import kl_divergence, log_likelihood
from privgraph.mrf.model import MarkovRandomField
from privgraph.mrf.noisy_tables import release_tables
from privgraph.mrf.sampling import sample_model
from privgraph.mrf.synthetic import third_order_chain
from privgraph.privacy import Neighbours, SeededSampler

MODELS = ("chain10", "sachs", "child", "alarm", "hepar2", "alarm-1e4")
#: Cell cap of the merged cliques of the ``NAME-CAP`` models (a release's tractable cliques).
MERGED = {"alarm-1e4": ("alarm", 10**4)}
HELD_OUT = 5_000


def true_model(name: str) -> tuple[MarkovRandomField, tuple, callable]:
    """The true model, the cliques to fit and a sampler ``(n, rng) -> codes``.

    The cliques are the true model's, except for ``MERGED`` models: there they are the
    release's tractable cliques (families merged while their union fits in the cap)."""
    if name == "chain10":
        model = third_order_chain(10, rng=np.random.default_rng(0))
        return model, model.cliques, lambda n, rng: sample_model(model, n, rng=rng)
    if name in MERGED:
        from privgraph.release.cliques import tractable_cliques

        base, cap = MERGED[name]
        model, _, draw = true_model(base)
        net = load_network(base)
        return model, tractable_cliques(net.to_networkx(), net.domain, cap=cap, tree_cap=10**6), draw
    net = load_network(name)
    cliques, potentials = [], []
    for v in net.domain.names:
        family = (*net.parents_of(v), v)
        clique = tuple(sorted(family, key=net.domain.index))
        with np.errstate(divide="ignore"):
            log_cpt = np.maximum(np.log(net.cpt(v)), -700.0)  # zeros of a CPT: finite, tiny
        potentials.append(np.transpose(log_cpt, [family.index(u) for u in clique]))
        cliques.append(clique)
    model = MarkovRandomField.of(net.domain, cliques, potentials)
    return model, model.cliques, lambda n, rng: network_sample(net, n, rng).astype(np.int64)


def cpu(fit, *args, **kwargs):
    t0 = time.process_time()
    out = fit(*args, **kwargs)
    return out, time.process_time() - t0


def warm_fits(fit, noisy, repeats: int):
    """The fit and the least CPU time of ``repeats`` warm fits (the same fit each time)."""
    fits = [cpu(fit, noisy) for _ in range(repeats)]
    return fits[-1][0], min(t for _, t in fits)


def privgraph_rows(model, noisy, test, rows: int, repeats: int) -> dict:
    clear_caches("privgraph.mrf")  # cold: junction trees, calibration plans, inference structures
    fitted, cold = cpu(cgm.cgm_em, noisy)
    fitted, warm = warm_fits(cgm.cgm_em, noisy, repeats)
    _, sampling = cpu(sample_model, fitted, rows, rng=np.random.default_rng(5))
    return {"cold_cpu": cold, "warm_cpu": warm, "sample_cpu": sampling,
            "kl": kl_divergence(model, fitted), "heldout_ll": log_likelihood(fitted, test)}


def mbi_rows(python: str, model, noisy, test, rows: int, repeats: int) -> dict:
    job = {"repeats": repeats, "names": list(model.domain.names), "sizes": list(model.domain.sizes),
           "cliques": [list(c) for c in noisy.cliques], "tables": [t.tolist() for t in noisy.tables],
           "sd": math.sqrt(2) * noisy.scale, "rows": rows}
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps(job))
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        subprocess.run([python, __file__, "worker", str(src), str(dst)], check=True, env=env)
        res = json.loads(dst.read_text())
    fitted = MarkovRandomField.of(model.domain, [tuple(c) for c in res["cliques"]],
                                  [np.asarray(p) for p in res["potentials"]])
    return {"mbi_cold_cpu": res["cold_cpu"], "mbi_warm_cpu": res["warm_cpu"], "mbi_cold_wall": res["cold_wall"],
            "mbi_warm_wall": res["warm_wall"], "mbi_sample_cpu": res["sample_cpu"],
            "mbi_kl": kl_divergence(model, fitted), "mbi_heldout_ll": log_likelihood(fitted, test)}


def before_rows(src_dir: str, model, noisy, test, repeats: int) -> dict:
    """The warm fit of another checkout of privgraph (``--before``, its ``src`` folder, e.g. a
    ``git archive`` of an earlier commit) on the same noisy tables, in its own process."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.pkl", Path(tmp) / "out.pkl"
        src.write_bytes(pickle.dumps((noisy, repeats)))
        env = dict(os.environ, PYTHONPATH=src_dir)
        subprocess.run([sys.executable, __file__, "before", str(src), str(dst)], check=True, env=env)
        res = pickle.loads(dst.read_bytes())
    if not Path(res["module"]).resolve().is_relative_to(Path(src_dir).resolve()):
        raise RuntimeError(f"--before ran {res['module']}, not the checkout in {src_dir}")
    fitted = MarkovRandomField.of(model.domain, noisy.cliques, res["potentials"])
    return {"before_warm_cpu": res["warm_cpu"], "before_kl": kl_divergence(model, fitted),
            "before_heldout_ll": log_likelihood(fitted, test)}


def before_worker(src: str, dst: str) -> None:
    noisy, repeats = pickle.loads(Path(src).read_bytes())
    cgm.cgm_em(noisy)
    fitted, warm = warm_fits(cgm.cgm_em, noisy, repeats)
    Path(dst).write_bytes(pickle.dumps({"warm_cpu": warm, "potentials": [np.asarray(p) for p in fitted.potentials],
                                        "module": cgm.__file__}))


def mbi_worker(src: str, dst: str) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    from mbi import Domain, LinearMeasurement, estimation

    job = json.loads(Path(src).read_text())
    domain = Domain(tuple(job["names"]), tuple(job["sizes"]))
    ms = [LinearMeasurement(np.asarray(t, dtype=float).ravel(), tuple(c), stddev=job["sd"])
          for c, t in zip(job["cliques"], job["tables"])]
    out = {}
    for label in ["cold"] + ["warm"] * job["repeats"]:
        t0, c0 = time.perf_counter(), time.process_time()
        fitted = estimation.MirrorDescent().estimate(domain, ms, iters=1000)
        jax.block_until_ready(fitted.potentials)
        cpu_s, wall_s = time.process_time() - c0, time.perf_counter() - t0
        if label == "cold" or cpu_s < out.get("warm_cpu", math.inf):
            out[f"{label}_cpu"], out[f"{label}_wall"] = cpu_s, wall_s
    c0 = time.process_time()
    fitted.synthetic_data(job["rows"])
    out["sample_cpu"] = time.process_time() - c0
    cliques = list(fitted.potentials.cliques)
    out["cliques"] = [list(c) for c in cliques]
    out["potentials"] = [np.asarray(fitted.potentials[c].values).tolist() for c in cliques]
    Path(dst).write_text(json.dumps(out))


def run(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"scale_eps{args.epsilon:g}.csv"
    rows = []
    for name in args.models:
        model, cliques, draw = true_model(name)
        train, test = draw(args.rows, np.random.default_rng(0)), draw(HELD_OUT, np.random.default_rng(9))
        counts = count_tables(NumpyEngine(model.domain, train), cliques)
        noisy, ledger = release_tables(counts, domain=model.domain, cliques=cliques, epsilon=args.epsilon,
                                       neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(1 + MODELS.index(name)))
        row = {"model": name, "columns": len(model.domain.names), "cliques": len(cliques),
               "max_clique_cells": max(model.domain.cells(c) for c in cliques),
               "tree_cells": junction.junction_tree(model.domain, tuple(cliques)).cells,
               "rows": args.rows, "ledger_epsilon": ledger.total().epsilon}
        row.update(privgraph_rows(model, noisy, test, args.rows, args.repeats))
        if args.before:
            row.update(before_rows(args.before, model, noisy, test, args.repeats))
        if args.mbi_python:
            row.update(mbi_rows(args.mbi_python, model, noisy, test, args.rows, args.repeats))
        rows.append(row)
        print({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}, flush=True)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
        w.writeheader()
        w.writerows(rows)
    print(markdown(rows))


def markdown(rows: list[dict]) -> str:
    """The docs table: times in CPU seconds, KL in nats, log-likelihood per held-out record."""
    head = ("| model | columns | cliques (largest, cells) | warm before | privgraph warm | mbi warm | privgraph cold "
            "| mbi cold | sample privgraph | sample mbi | KL before | KL privgraph | KL mbi | held-out LL before "
            "| held-out LL privgraph | held-out LL mbi |")
    lines = [head, "|" + " --- |" * 16]
    for r in rows:
        get = lambda k, f: f.format(r[k]) if k in r else "-"  # noqa: E731
        lines.append(" | ".join([
            f"| {r['model']}", str(r["columns"]), f"{r['cliques']} ({r['max_clique_cells']})",
            get("before_warm_cpu", "{:.3f}"), get("warm_cpu", "{:.3f}"), get("mbi_warm_cpu", "{:.3f}"),
            get("cold_cpu", "{:.3f}"), get("mbi_cold_cpu", "{:.2f}"), get("sample_cpu", "{:.3f}"),
            get("mbi_sample_cpu", "{:.3f}"), get("before_kl", "{:.4f}"), get("kl", "{:.4f}"), get("mbi_kl", "{:.4f}"),
            get("before_heldout_ll", "{:.4f}"), get("heldout_ll", "{:.4f}"), get("mbi_heldout_ll", "{:.4f}") + " |"]))
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode")
    for mode in ("worker", "before"):
        w = sub.add_parser(mode)
        w.add_argument("src")
        w.add_argument("dst")
    ap.add_argument("--out", default="bench_out/mrf_scale")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3, help="warm fits per implementation; the least time is reported")
    ap.add_argument("--mbi-python", default=None, help="an interpreter with mbi installed (JAX)")
    ap.add_argument("--before", default=None, help="the src folder of another checkout: its warm fit, KL and LL")
    args = ap.parse_args(argv)
    if args.mode == "worker":
        mbi_worker(args.src, args.dst)
    elif args.mode == "before":
        before_worker(args.src, args.dst)
    else:
        run(args)


if __name__ == "__main__":
    sys.exit(main())
