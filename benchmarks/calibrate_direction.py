"""Fit the public calibration map of the Kendall direction decision (issue 29) on simulated pairs.

Distribution (stated in ``privgraph.causal.direction.calibration``): the equal mixture of the
SIM, SIM-c, SIM-ln and SIM-G families of ``direction_pairs.py``, n in (300, 1,000, 3,000),
public bounds +-3, epsilon in (1, 1e6: the non-private limit), seeds 0-119 per family and n
(disjoint from the evaluation seeds 2000+ of ``bench_direction_real.py`` and from the test
seeds 7000+). Every decision is the package's ``private_direction(score="kendall")`` under the
default ``privacy="record"``; the map's feature is the released margin over its public spread
(``calibration.kendall_margin_statistic``), and the map's constants (a, k, c) are its maximum-likelihood
fit without intercept, with a power k on the log and a slope that grows with the public
epsilon m (three constants). The real pairs are not read.

    cd benchmarks && OPENBLAS_NUM_THREADS=1 PYTHONPATH=../src python3 calibrate_direction.py   # ~1.5 CPU-minutes

Writes ``benchmarks/results/direction_calibration.json`` (the slope, the training reliability
table, the rows); copy (a, k, c) into ``KENDALL_CALIBRATION``. The RECI map of
the same form (on RECI's signed logit of its agreement probability) is fitted too and reported, not used:
its slope is at or below 0 (RECI's order carries no causal information on these families, or is
inverted), see docs/direction.md; and so is a two-feature map of both.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from direction_pairs import FAMILIES, sim_pair
from privgraph.causal.direction import private_direction
from privgraph.causal.direction.calibration import budget_term, kendall_margin_statistic
from privgraph.privacy import SeededSampler, laplace_scale
from privgraph.stats.sensitivity import kendall_tau_a_sensitivity_replace_one
from privgraph.threads import single_threaded_blas

SIZES = (300, 1000, 3000)
EPSILONS = (1.0, 1e6)
BOUNDS = ((-3.0, 3.0), (-3.0, 3.0))
TEST_FRACTION = 0.5


def signed_log(t: float, power: float = 1.0) -> float:
    return math.copysign(math.log1p(abs(t)) ** power, t)


def decision_rows(seeds) -> list[dict]:
    """One row per (family, n, seed, epsilon): the released Kendall margin's statistic, RECI's, the truth."""
    rows = []
    for family in FAMILIES:
        for n in SIZES:
            for seed in seeds:
                x, y, truth = sim_pair(family, n, seed)
                for eps in EPSILONS:
                    row = {"family": family, "n": n, "seed": seed, "epsilon": eps, "truth": truth}
                    for score in ("kendall", "reci"):
                        res, _ = private_direction(x, y, epsilon=eps, sampler=SeededSampler(seed),
                                                   rng=np.random.default_rng((seed, 1)), score=score,
                                                   bounds=BOUNDS, test_fraction=TEST_FRACTION, abstain_below=0.5)
                        margin = res.scores["y->x"] - res.scores["x->y"]
                        if score == "kendall":
                            m = int(round(n * TEST_FRACTION))
                            b = laplace_scale(eps / 2, kendall_tau_a_sensitivity_replace_one(m))
                            row["t_kendall"] = kendall_margin_statistic(margin, m, b)
                        else:  # RECI's probability of its sign, as a signed logit
                            p = min(res.agreement_probability, 1 - 1e-12)
                            row["t_reci"] = math.copysign(math.log(p / (1 - p)), margin)
                    rows.append(row)
    return rows


def combined_map(rows) -> list[float]:
    """The two-feature map P(x->y) = sigmoid(a g(t_reci) + c g(t_kendall)), no intercept, fitted
    on the same rows: RECI and Kendall each at the full epsilon (no budget split, so an upper
    bound on what the pair of scores can do under one budget). Reported, not used."""
    from scipy.optimize import minimize

    z = np.array([[signed_log(r["t_reci"]), signed_log(r["t_kendall"])] for r in rows])
    sign = np.where([r["truth"] == "x->y" for r in rows], 1.0, -1.0)
    return [float(v) for v in minimize(lambda w: np.logaddexp(0.0, -(z @ w) * sign).sum(), np.zeros(2)).x]


def platt_fit(features: np.ndarray, budget: np.ndarray, truth: np.ndarray) -> list[float]:
    """Maximum-likelihood (a, k, c) of P(x->y) = sigmoid((a + c u) sign(t) log(1 + |t|)^k), no
    intercept; u = ``calibration.budget_term(epsilon, m)``."""
    from scipy.optimize import minimize

    g, sign = np.sign(features), np.where(truth, 1.0, -1.0)
    logs = np.log1p(np.abs(features))
    nll = lambda w: np.logaddexp(0.0, -(w[0] + w[2] * budget) * g * logs ** w[1] * sign).sum()  # noqa: E731
    fit = minimize(nll, [0.5, 1.0, 0.0], method="Nelder-Mead", options={"maxiter": 4000, "xatol": 1e-6})
    return [float(v) for v in fit.x]


def reliability(prob: np.ndarray, right: np.ndarray) -> list[dict]:
    edges = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0 + 1e-9)
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (prob >= lo) & (prob < hi)
        if sel.any():
            out.append({"bin": [lo, min(hi, 1.0)], "decisions": int(sel.sum()),
                        "mean_probability": float(prob[sel].mean()), "right": float(right[sel].mean())})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=120)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "direction_calibration.json")
    parser.add_argument("--from-rows", type=Path, help="refit from the rows of an earlier output (no new pairs)")
    args = parser.parse_args()
    start = time.process_time()
    cpu_s = None
    if args.from_rows:
        earlier = json.loads(args.from_rows.read_text())
        rows, cpu_s = earlier["rows"], earlier["cpu_s"]  # the CPU time of simulating the rows
    else:
        with single_threaded_blas():
            rows = decision_rows(range(args.seeds))
    truth = np.array([r["truth"] == "x->y" for r in rows])
    u = np.array([budget_term(r["epsilon"], int(round(r["n"] * TEST_FRACTION))) for r in rows])
    slopes = {s: platt_fit(np.array([r[f"t_{s}"] for r in rows]), u, truth) for s in ("kendall", "reci")}
    a, k, c = slopes["kendall"]
    p_xy = 1 / (1 + np.exp(-(a + c * u) * np.array([signed_log(r["t_kendall"], k) for r in rows])))
    prob, right = np.maximum(p_xy, 1 - p_xy), (p_xy >= 0.5) == truth
    result = {"protocol": __doc__, "seeds": args.seeds, "map_constants": slopes, "combined_reci_kendall": combined_map(rows),
              "training_reliability": reliability(prob, right), "cpu_s": cpu_s or time.process_time() - start, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: result[k] for k in ("map_constants", "combined_reci_kendall", "training_reliability", "cpu_s")},
                     indent=1))


if __name__ == "__main__":
    main()
