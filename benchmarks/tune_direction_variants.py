"""Issue 47, step 1: RECI's variants on the TUNING collections only (Tuebingen pairs, SIM families).

Every variant shares the package's released training table and cubic fits
(``noisy_table.released_fit``, fit="polynomial") and differs in what the test part releases:
the loss per test record (squared or absolute residual on the unit-width scale), its clip c,
the test fraction, the table's grid. The released D gets Laplace noise of scale
``sens / (0.8 epsilon)`` with sens = 2 c^2 / m (squared) or 2 c / m (absolute): the
package's budget split. Accuracy counts every pair, the decision being the sign of D~
(no abstention). The held-out pairs are NOT read here.

``--levels k`` rounds the cause to k equally spaced values (a designed experiment's doses or
time points): the tuning sets' discrete-cause variant (k = 6 and 12 were run).

Decision, taken on these results before any score was computed on the held-out pairs
(``direction_pairs_heldout.py``): keep the squared loss, the clip c = 0.1, the half split
and the grid of at most 32 bins. On the Tuebingen pairs (plain, and with the cause rounded
to 6 or 12 levels; unweighted and weighted) the small clips (0.05-0.2) win at every epsilon
(0.1 best or within 2.5 points) and a clip of 0.3 or more, or none, loses 2-9 points; the absolute loss at its best clip (0.1) ties
the squared one; the sign loss (which direction leaves each record the smaller residual:
no clip at all) loses 1-5 points; a 0.7 test share and a 64-bin grid change nothing or
lose. Only the SIM families with a rounded cause prefer larger clips, and RECI is below a
coin on plain SIM whatever the variant.

    OPENBLAS_NUM_THREADS=1 nice -n 19 python benchmarks/tune_direction_variants.py
    OPENBLAS_NUM_THREADS=1 nice -n 19 python benchmarks/tune_direction_variants.py --levels 6 \
        --out benchmarks/results/direction_tune_variants_d6.json                         # and --levels 12

Writes ``benchmarks/results/direction_tune_variants.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import numpy as np

from bench_direction_real import WHEEL, real_pairs, shown
from direction_pairs import FAMILIES, TUEBINGEN_WEIGHTS, discretise, sim_pair
from privgraph.causal.direction.noisy_table import default_bins, released_fit
from privgraph.privacy import SeededSampler
from privgraph.threads import single_threaded_blas

EPSILONS = (1e6, 3.0, 1.0, 0.3)
CLIPS = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
LOSSES = ("squared", "absolute", "sign")
FRACTIONS = (0.5, 0.7)
MAX_BINS = (32, 64)
SIM_BOUNDS = ((-3.0, 3.0), (-3.0, 3.0))
D_SHARE = 0.8


def bins_for(train_rows: int, epsilon: float, max_bins: int) -> int:
    k = default_bins(train_rows, epsilon)
    if k == 32 and max_bins > 32:
        k = int(min(max_bins, round((epsilon * train_rows / 0.3) ** (1 / 3))))
    return k


def variant_rows(x, y, bounds, truth, seed, meta):
    """One row per (epsilon, fraction, grid, loss, clip): right or wrong."""
    out = []
    noise = np.random.default_rng((seed, 47))
    for eps in EPSILONS:
        for tf in FRACTIONS:
            m = int(round(x.size * tf))
            if m < 10 or x.size - m < 10:
                continue
            for max_bins in MAX_BINS:
                k = bins_for(x.size - m, eps, max_bins)
                if max_bins > 32 and k <= 32:
                    continue  # same as the 32 grid
                fit, _ = released_fit(x, y, bounds=bounds, test_fraction=tf, epsilon=eps, sampler=SeededSampler(seed),
                                      rng=np.random.default_rng((seed, 1)), bins=k, fit="polynomial")
                ry, rx = np.abs(fit.res_y) / 4.0, np.abs(fit.res_x) / 4.0
                lap = noise.laplace()
                for loss in LOSSES:
                    for c in CLIPS:
                        if loss == "squared":
                            d = np.minimum(ry * ry, c * c) - np.minimum(rx * rx, c * c)
                            sens = 2 * c * c / m
                        elif loss == "absolute":
                            d = np.minimum(ry, c) - np.minimum(rx, c)
                            sens = 2 * c / m
                        elif c != CLIPS[0]:
                            continue
                        else:  # which direction leaves the record the smaller residual: no clip
                            d = np.sign(ry - rx)
                            sens = 2 / m
                        dd = d.mean() + lap * sens / (D_SHARE * eps)
                        direction = "x->y" if dd < 0 else "y->x"
                        out.append({**meta, "n": int(x.size), "epsilon": eps, "tf": tf, "max_bins": max_bins,
                                    "bins": k, "loss": loss, "clip": c, "right": direction == truth})
    return out


def run(repeats: int, sim_pairs: int, sim_n: int, levels: int | None):
    """``levels``: the cause rounded to that many equally spaced values (a designed experiment's
    doses or time points), the tuning sets' discrete-cause variant."""
    rows = []
    pairs = list(real_pairs(WHEEL))
    tag = "" if levels is None else f"-d{levels}"
    for rep in range(repeats):
        for i, (name, a, b) in enumerate(pairs):
            seed = 1000 * rep + i
            a = a if levels is None else discretise(a, levels)
            x, y, truth, bounds = shown(a, b, seed, 5000)
            rows += variant_rows(x, y, bounds, truth, seed, {"set": "tuebingen" + tag, "pair": i, "repeat": rep})
    for family in FAMILIES:
        for k in range(sim_pairs):
            x, y, truth = sim_pair(family, sim_n, k)  # tuning seeds 0..
            if levels is not None:
                x, y = (discretise(x, levels), y) if truth == "x->y" else (x, discretise(y, levels))
            rows += variant_rows(x, y, SIM_BOUNDS, truth, k, {"set": family + tag, "pair": k, "repeat": 0})
    return rows


def collection(name: str) -> str:
    """The row's collection: "tuebingen" or "SIM" (the four families together), with the ``-dK`` tag."""
    tag = re.search(r"-d\d+$", name)
    return ("tuebingen" if name.startswith("tuebingen") else "SIM") + (tag.group(0) if tag else "")


def table(rows, weighted: bool = False):
    """Accuracy per (collection, epsilon, fraction, grid, loss, clip); ``weighted``: the Tuebingen
    collections only, with Mooij et al.'s pair weights."""
    out = {}
    key = lambda r: (collection(r["set"]), r["epsilon"], r["tf"], r["max_bins"], r["loss"], r["clip"])  # noqa: E731
    for k in sorted({key(r) for r in rows if not weighted or r["set"].startswith("tuebingen")}, key=str):
        sel = [r for r in rows if key(r) == k]
        w = np.array([TUEBINGEN_WEIGHTS[r["pair"]] if weighted else 1.0 for r in sel])
        out[" ".join(map(str, k))] = round(float(np.sum(w * [r["right"] for r in sel]) / w.sum()), 4)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sim-pairs", type=int, default=40)
    parser.add_argument("--sim-n", type=int, default=1000)
    parser.add_argument("--levels", type=int, default=None, help="discretise the cause to this many levels")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "direction_tune_variants.json")
    args = parser.parse_args()
    start = time.process_time()
    with single_threaded_blas():
        rows = run(args.repeats, args.sim_pairs, args.sim_n, args.levels)
    result = {"protocol": __doc__, "args": vars(args) | {"out": str(args.out)}, "accuracy": table(rows),
              "weighted_accuracy": table(rows, weighted=True), "cpu_s": time.process_time() - start}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result))
    print(json.dumps(result["accuracy"], indent=0))


if __name__ == "__main__":
    main()
