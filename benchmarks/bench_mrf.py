"""Benchmark of privgraph.mrf against the text's protocol and against Private-PGM (mbi).

Usage (from the repository root)::

    python benchmarks/bench_mrf.py calibrate --out bench_out/mrf     # knobs, separate seeds
    python benchmarks/bench_mrf.py grid --out bench_out/mrf [--family chain] [--mbi-python PY]
    python benchmarks/bench_mrf.py individuals --out bench_out/mrf

``grid`` follows the text's Figure 2: third-order chains and connected Erdos-Renyi graphs
on 10 binary nodes with Dirichlet(1) edge potentials, a grid of N and epsilon, 5 populations
x 5 noise draws per point; CGM-EM, naive MLE, PSGD (delta = 1/N), non-private MLE and the
random estimator; KL(true || learned) and seconds per fit; and, when ``--mbi-python`` names
an interpreter with ``mbi`` installed, mbi's default estimator (mirror descent, L2 loss,
1000 iterations, float64) on the *same* noisy marginals, cold (first fit of a structure in
a fresh process) and warm (the same fit again). mbi is a benchmark-only peer: it runs in its
own process (``worker`` mode of this script) and is never imported by privgraph.

``calibrate`` settles the free knobs (CGM-EM's discrepancy factor, naive MLE's ridge
factor, PSGD's learning rate) on population seeds 1000+ and noise seeds 2000+, disjoint
from the reported runs (populations 0..4, noise 100..): the rule is the candidate with the
smallest mean log-KL over every calibration setting. The chosen values are the defaults in
``privgraph.mrf.cgm.DISCREPANCY``, ``privgraph.mrf.baselines.RIDGE_FACTOR`` and
``privgraph.mrf.psgd`` (``learning_rate``).

Every output row carries the ledger's total (epsilon, delta) of the release it scores.
Timings are seconds on a shared machine: compare ratios between methods run side by side.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from privgraph.data import NumpyEngine, count_tables
from privgraph.caches import clear_caches
from privgraph.mrf.baselines import naive_mle, nonprivate_mle, random_estimator
from privgraph.mrf.cgm import cgm_em
from privgraph.mrf.evaluation import kl_divergence, log_likelihood
from privgraph.mrf.individuals import individual_tables, time_homogeneous_chain
from privgraph.mrf.model import MarkovRandomField
from privgraph.mrf.psgd import psgd
from privgraph.mrf.noisy_tables import release_tables
from privgraph.mrf.sampling import sample_model
from privgraph.mrf.synthetic import erdos_renyi, third_order_chain
from privgraph.privacy import Neighbours, SeededSampler

FAMILIES = {"chain": third_order_chain, "er": erdos_renyi}
GRID_N = (1_000, 10_000, 100_000)
GRID_EPS = (0.1, 1.0, 10.0)
POPULATIONS, DRAWS = 5, 5


# --- one trial -----------------------------------------------------------------------


def population(family: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    model = FAMILIES[family](10, rng=rng)
    codes = sample_model(model, n, rng=rng)
    return model, codes, count_tables(NumpyEngine(model.domain, codes), model.cliques)


def noisy_release(model, counts, epsilon: float, seed: int, noise: str = "laplace"):
    """Noisy tables of one trial; Gaussian noise takes delta = 1/N, the text's delta for PSGD."""
    delta = 1.0 / float(np.sum(counts[0])) if noise == "gaussian" else None
    return release_tables(counts, domain=model.domain, cliques=model.cliques, epsilon=epsilon,
                          neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(seed), noise=noise, delta=delta)


def timed(fit, *args, **kwargs):
    clear_caches("privgraph.mrf")  # every fit is cold for privgraph (junction trees, plans, inference)
    t0 = time.perf_counter()
    model = fit(*args, **kwargs)
    return model, time.perf_counter() - t0


def score_methods(model, codes, counts, noisy, ledger, epsilon, seed, methods, knobs) -> list[dict]:
    rows = []
    eps_total = ledger.total().epsilon
    n = codes.shape[0]
    for name in methods:
        delta = 0.0
        try:
            if name == "cgm-em":
                fitted, sec = timed(cgm_em, noisy, discrepancy=knobs.get("discrepancy", 1.0))
            elif name == "naive-mle":
                fitted, sec = timed(naive_mle, noisy, ridge_factor=knobs.get("ridge_factor", 1.0))
            elif name == "naive-mle-text":  # the text's: the non-private routine on the noisy tables
                fitted, sec = timed(nonprivate_mle, model.domain, model.cliques, noisy.tables)
            elif name == "psgd":
                (fitted, led), sec = timed(psgd, codes, domain=model.domain, cliques=model.cliques,
                                           epsilon=epsilon, delta=1.0 / n, sampler=SeededSampler(seed),
                                           learning_rate=knobs.get("learning_rate", 2.0))
                cost = led.total("rdp", delta=1.0 / n)
                eps_total_m, delta = cost.epsilon, cost.delta
            elif name == "nonprivate":
                fitted, sec = timed(nonprivate_mle, model.domain, model.cliques, counts)
            elif name == "random":
                fitted, sec = timed(random_estimator, model.domain, model.cliques, rng=np.random.default_rng(seed))
            kl = kl_divergence(model, fitted)
        except ValueError as err:  # e.g. epsilon out of PSGD's reach
            rows.append({"method": name, "kl": "", "seconds": "", "note": str(err)[:80]})
            continue
        if name not in ("psgd", "nonprivate", "random"):
            delta = ledger.total().delta
        eps_row = eps_total_m if name == "psgd" else (0.0 if name in ("nonprivate", "random") else eps_total)
        rows.append({"method": name, "kl": kl, "seconds": sec, "ledger_epsilon": eps_row,
                     "ledger_delta": delta, "note": ""})
    return rows


# --- mbi, in its own interpreter ---------------------------------------------------------


def run_mbi(python: str, jobs: list[dict]) -> list[dict]:
    """Fit each job (cliques, noisy tables, noise sd) with mbi in one fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps(jobs))
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        subprocess.run([python, __file__, "worker", str(src), str(dst)], check=True, env=env)
        return json.loads(dst.read_text())


def mbi_worker(src: str, dst: str) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    from mbi import Domain, LinearMeasurement, estimation

    out, seen = [], set()
    for job in json.loads(Path(src).read_text()):
        domain = Domain(tuple(job["names"]), tuple(job["sizes"]))
        ms = [LinearMeasurement(np.asarray(t, dtype=float).ravel(), tuple(c), stddev=job["sd"])
              for c, t in zip(job["cliques"], job["tables"])]
        key = tuple(map(tuple, job["cliques"]))
        t0 = time.perf_counter()
        model = estimation.MirrorDescent().estimate(domain, ms, iters=1000)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        model = estimation.MirrorDescent().estimate(domain, ms, iters=1000)
        warm = time.perf_counter() - t0
        pots = [np.asarray(model.potentials[tuple(c)].values).tolist() for c in job["cliques"]]
        out.append({"potentials": pots, "cold": first if key not in seen else "", "warm": warm})
        seen.add(key)
    Path(dst).write_text(json.dumps(out))


def mbi_rows(python, trials) -> list[dict]:
    jobs = [{"names": list(m.domain.names), "sizes": list(m.domain.sizes), "cliques": [list(c) for c in m.cliques],
             "tables": [t.tolist() for t in noisy.tables],
             "sd": math.sqrt(2) * noisy.scale if noisy.noise == "laplace" else noisy.scale}
            for m, noisy in trials]
    rows = []
    for (model, noisy), res in zip(trials, run_mbi(python, jobs)):
        fitted = MarkovRandomField.of(model.domain, model.cliques, [np.asarray(p) for p in res["potentials"]])
        rows.append({"method": "mbi", "kl": kl_divergence(model, fitted), "seconds": res["warm"],
                     "cold_seconds": res["cold"], "note": "mirror descent, L2, 1000 iters, x64"})
    return rows


# --- the grid ---------------------------------------------------------------------------


def grid(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"grid_{'_'.join(args.family)}{args.tag}.csv"
    fields = ["family", "n", "epsilon", "population", "draw", "method", "kl", "seconds", "cold_seconds",
              "ledger_epsilon", "ledger_delta", "note"]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for family in args.family:
            for n in args.n:
                for eps in args.epsilon:
                    mbi_trials, keys = [], []
                    for p in range(POPULATIONS):
                        model, codes, counts = population(family, n, p)
                        for d in range(DRAWS):
                            seed = 100 + 10 * p + d
                            noisy, ledger = noisy_release(model, counts, eps, seed, args.noise)
                            methods = args.methods if d < args.psgd_draws else [m for m in args.methods if m != "psgd"]
                            key = {"family": family, "n": n, "epsilon": eps, "population": p, "draw": d}
                            for row in score_methods(model, codes, counts, noisy, ledger, eps, seed, methods, {}):
                                w.writerow({**key, **row})
                            mbi_trials.append((model, noisy))
                            keys.append(key)
                    if args.mbi_python:
                        for key, row in zip(keys, mbi_rows(args.mbi_python, mbi_trials)):
                            w.writerow({**key, **row, "ledger_epsilon": eps,
                                        "ledger_delta": 1.0 / n if args.noise == "gaussian" else 0.0})
                    fh.flush()
                    print(f"{family} n={n} eps={eps} done", flush=True)
    summarise(path)


def summarise(path: Path) -> None:
    import pandas as pd

    df = pd.read_csv(path)
    df = df[df["kl"].notna()]
    table = df.groupby(["family", "n", "epsilon", "method"]).agg(
        kl=("kl", "mean"), kl_sd=("kl", "std"), trials=("kl", "size"), seconds=("seconds", "median"))
    table.to_csv(path.with_name(path.stem + "_summary.csv"))
    print(table.to_string())
    plot(df, path.with_suffix(".png"))


def plot(df, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families, ns = sorted(df["family"].unique()), sorted(df["n"].unique())
    fig, axes = plt.subplots(len(families), len(ns), figsize=(4 * len(ns), 3.2 * len(families)), squeeze=False)
    for i, fam in enumerate(families):
        for j, n in enumerate(ns):
            ax = axes[i][j]
            sub = df[(df["family"] == fam) & (df["n"] == n)]
            for method, g in sub.groupby("method"):
                m = g.groupby("epsilon")["kl"].mean()
                ax.plot(m.index, m.values, marker="o", label=method)
            ax.set(xscale="log", yscale="log", title=f"{fam}, N={n}", xlabel="epsilon", ylabel="KL")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


# --- knob calibration on separate seeds --------------------------------------------------

CANDIDATES = {
    "discrepancy": (0.5, 0.75, 1.0, 1.3, 1.5, 2.0, 3.0),
    "ridge_factor": (0.1, 0.3, 1.0, 3.0, 10.0),
    "learning_rate": (0.5, 2.0, 8.0),
}


def calibrate(args) -> None:
    """KL of every candidate knob value on calibration seeds; then :func:`decide`."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for family in args.family:
        for n in args.n:
            for eps in args.epsilon:
                for p in range(3):
                    model, codes, counts = population(family, n, 1000 + p)
                    noisy, _ = noisy_release(model, counts, eps, 2000 + p, args.noise)
                    for tau in CANDIDATES["discrepancy"]:
                        rows.append((family, n, eps, "discrepancy", tau, kl_divergence(model, cgm_em(noisy, discrepancy=tau))))
                    for r in CANDIDATES["ridge_factor"]:
                        rows.append((family, n, eps, "ridge_factor", r, kl_divergence(model, naive_mle(noisy, ridge_factor=r))))
                    if p == 0 and args.psgd:
                        for lr in CANDIDATES["learning_rate"]:
                            try:
                                fitted, _ = psgd(codes, domain=model.domain, cliques=model.cliques, epsilon=eps,
                                                 delta=1.0 / n, sampler=SeededSampler(2000), learning_rate=lr)
                                rows.append((family, n, eps, "learning_rate", lr, kl_divergence(model, fitted)))
                            except ValueError:
                                pass
                print(f"calibrate {family} n={n} eps={eps}", flush=True)
    with open(out / f"calibration_{'_'.join(args.family)}{args.tag}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["family", "n", "epsilon", "knob", "value", "kl"])
        w.writerows(rows)
    decide(out)


def decide(out: Path) -> None:
    """The rule: for each knob, the candidate with the smallest mean log-KL over all
    calibration rows found in ``out`` (every family, N and epsilon)."""
    import pandas as pd

    df = pd.concat([pd.read_csv(f) for f in sorted(Path(out).glob("calibration_*.csv"))])
    df["log_kl"] = np.log(df["kl"].clip(lower=1e-12))
    for knob, g in df.groupby("knob"):
        means = g.groupby("value")["log_kl"].mean()
        print(f"{knob}: mean log-KL {means.round(3).to_dict()} -> {means.idxmin()}")


# --- individuals with many records --------------------------------------------------------


def simulate_individuals(n_people: int, *, rng, hours: int = 6, states: int = 4):
    """Sequences from a time-homogeneous chain; state 0 is null; 1 + Poisson(2) records each."""
    columns = [f"h{t}" for t in range(hours)]
    pair = rng.dirichlet(np.ones(states), size=states)
    pair[0] = 0.7 * np.eye(states)[0] + 0.3 * pair[0]  # null tends to stay null
    start = rng.dirichlet(np.ones(states))
    records = 1 + rng.poisson(2.0, size=n_people)
    owner = np.repeat(np.arange(n_people), records)
    x = np.zeros((owner.size, hours), dtype=np.int64)
    x[:, 0] = rng.choice(states, size=owner.size, p=start)
    for t in range(1, hours):
        u = rng.random(owner.size)[:, None]
        x[:, t] = np.minimum((u > np.cumsum(pair[x[:, t - 1]], axis=1)).sum(axis=1), states - 1)
    return columns, x, owner


def individuals(args) -> None:
    from privgraph.data import Domain

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for n_people in (1_000, 10_000):
        for eps in (0.1, 1.0, 10.0):
            for trial in range(5):
                rng = np.random.default_rng(500 + trial)
                columns, x, owner = simulate_individuals(n_people, rng=rng)
                domain = Domain(tuple(columns), (4,) * len(columns))
                cliques, ties = time_homogeneous_chain(columns)
                test_people = rng.permutation(n_people)[: n_people // 4]
                is_test = np.isin(owner, test_people)
                # null=None: every transition counts. Dropping null-null transitions (null=0, the
                # text's option) leaves that cell empty, and held-out null-null runs score -inf.
                train = individual_tables(x[~is_test], owner[~is_test], domain=domain, cliques=cliques, ties=ties)
                noisy, ledger = release_tables(train, domain=domain, cliques=cliques, ties=ties, epsilon=eps,
                                               neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(700 + trial),
                                               unit="individual")
                from privgraph.mrf.fit import fit_mle
                from privgraph.mrf.baselines import project_to_simplex

                people = n_people - test_people.size
                fits = {
                    "cgm-em": lambda: (cgm_em(noisy), ledger.total().epsilon),
                    "naive-mle": lambda: (naive_mle(noisy), ledger.total().epsilon),
                    # PSGD at the individual level: each individual's mean record gradient,
                    # clipped as a whole; Poisson sampling of individuals; delta = 1/individuals
                    "psgd": lambda: _psgd_individuals(x[~is_test], owner[~is_test], domain, cliques, ties, eps,
                                                      1.0 / people, SeededSampler(700 + trial)),
                    "nonprivate": lambda: (fit_mle(domain, cliques, [project_to_simplex(t) for t in train],
                                                   ties=ties), 0.0),
                }
                for name, fit in fits.items():
                    t0 = time.perf_counter()
                    try:
                        model, spent = fit()
                    except ValueError as err:  # epsilon out of PSGD's reach
                        print(f"  {name} skipped at eps={eps}: {str(err)[:70]}", flush=True)
                        continue
                    sec = time.perf_counter() - t0
                    rows.append({"individuals": n_people, "epsilon": eps, "trial": trial, "method": name,
                                 "heldout_loglik": log_likelihood(model, x[is_test]), "seconds": sec,
                                 "ledger_epsilon": spent, "unit": noisy.unit})
            print(f"individuals n={n_people} eps={eps}", flush=True)
    import pandas as pd

    df = pd.DataFrame(rows)
    df.to_csv(out / "individuals.csv", index=False)
    summary = df.groupby(["individuals", "epsilon", "method"])["heldout_loglik"].agg(["mean", "std"])
    summary.to_csv(out / "individuals_summary.csv")
    print(summary.to_string())


def _psgd_individuals(codes, owner, domain, cliques, ties, epsilon, delta, sampler):
    model, ledger = psgd(codes, domain=domain, cliques=cliques, ties=ties, individuals=owner,
                         epsilon=epsilon, delta=delta, sampler=sampler)
    return model, ledger.total("rdp", delta=delta).epsilon


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    for mode in ("grid", "calibrate", "individuals"):
        p = sub.add_parser(mode)
        p.add_argument("--out", default="bench_out/mrf")
        p.add_argument("--n", type=int, nargs="+", default=list(GRID_N))
        p.add_argument("--epsilon", type=float, nargs="+", default=list(GRID_EPS))
        p.add_argument("--family", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
        p.add_argument("--methods", nargs="+",
                       default=["cgm-em", "naive-mle", "naive-mle-text", "psgd", "nonprivate", "random"])
        p.add_argument("--noise", default="laplace", choices=("laplace", "gaussian"),
                       help="noise on the tables (gaussian: delta = 1/N); PSGD is unaffected")
        p.add_argument("--psgd-draws", type=int, default=DRAWS, help="noise draws per population that run PSGD")
        p.add_argument("--psgd", action="store_true", help="calibrate PSGD's learning rate too")
        p.add_argument("--mbi-python", default=None, help="an interpreter with mbi installed")
        p.add_argument("--tag", default="", help="suffix of the output file names")
    w = sub.add_parser("worker")
    w.add_argument("src")
    w.add_argument("dst")
    args = ap.parse_args(argv)
    if args.mode == "worker":
        mbi_worker(args.src, args.dst)
    else:
        {"grid": grid, "calibrate": calibrate, "individuals": individuals}[args.mode](args)


if __name__ == "__main__":
    main()
