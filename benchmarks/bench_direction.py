"""Private causal direction on SIM-style synthetic pairs: accuracy vs epsilon and n, and speed.

Pairs are generated in the manner of the SIM benchmarks of Mooij et al. (2016, JMLR,
Section 5.1 / Appendix C), with the parameters written here:

* a "random distribution" (for the cause and for every noise): ``e ~ N(0, 1)`` pushed
  through a random increasing warp ``w(e) = e + a GP(e)`` (GP with squared-exponential
  kernel, lengthscale ``GP_LENGTHSCALE``, unit variance, drawn with 300 random Fourier
  features; ``a = WARP``), then raised to a sign-preserving power ``|.|^p``,
  ``p ~ U(P_LOW, P_HIGH)`` (non-Gaussian), standardised;
* the mechanism ``f ~ GP`` on the standardised cause, lengthscale ~ U(LS_LOW, LS_HIGH);
* ``Y = f(X) + s E_Y`` with noise-to-signal ``s ~ U(NOISE_LOW, NOISE_HIGH)`` times std(f(X));
* confounded variant ("SIM-c"): a random-distribution ``Z``; ``X = E_X + c g(Z)``,
  ``Y = f(X) + s E_Y + c h(Z)`` with g, h ~ GP and ``c = CONFOUNDING``;
* each pair is shown as (X, Y) or (Y, X) at random (a fair coin).

Protocol: defaults (the score, the kernel lengthscale, the ridge) are chosen on the
TUNING seeds and every number reported is on the REPORT seeds. Reported: accuracy
against epsilon and n for each score, the non-private ceiling, the Theorem 3/5 prediction
of the flip rate next to the observed flip rate (noise redrawn FLIP_DRAWS times per pair),
and time per pair against causal-learn's ANM (optional import, benchmark only).

    python benchmarks/bench_direction.py --quick          # a couple of minutes here
    python benchmarks/bench_direction.py --tune           # the tuning sweep
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from privgraph.causal import direction as dr
from privgraph.causal.direction import scores as ds
from privgraph.privacy import SeededSampler

GP_LENGTHSCALE, WARP = 1.0, 0.5
P_LOW, P_HIGH = 0.5, 2.0
LS_LOW, LS_HIGH = 0.5, 2.0
NOISE_LOW, NOISE_HIGH = 0.1, 0.5
CONFOUNDING = 0.5
TUNING_SEEDS = range(0, 100)
REPORT_SEEDS = range(1000, 1100)
FLIP_DRAWS = 200
#: Public clipping bounds for train+test privacy: fixed by the generator (standardised
#: causes, unit-variance GP mechanisms), never read from the data.
TRAIN_BOUNDS = ((-3.0, 3.0), (-3.0, 3.0))
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
SIZES = (500, 1000, 5000)


def gp_function(lengthscale: float, rng: np.random.Generator, features: int = 300):
    """A draw from a zero-mean GP with unit-variance squared-exponential kernel (RFF approximation)."""
    w = rng.normal(size=features) / lengthscale
    b = rng.uniform(0, 2 * np.pi, features)
    a = rng.normal(size=features)
    return lambda v: np.sqrt(2.0 / features) * np.cos(np.outer(v, w) + b) @ a


def random_distribution(n: int, rng: np.random.Generator) -> np.ndarray:
    e = rng.normal(size=n)
    e = e + WARP * gp_function(GP_LENGTHSCALE, rng)(e)
    p = rng.uniform(P_LOW, P_HIGH)
    e = np.sign(e) * np.abs(e) ** p
    return (e - e.mean()) / e.std()


def sim_pair(n: int, seed: int, confounded: bool = False) -> tuple[np.ndarray, np.ndarray, str]:
    """One pair ``(a, b, truth)`` with truth "x->y" if a causes b."""
    rng = np.random.default_rng(seed)
    x = random_distribution(n, rng)
    if confounded:
        z = random_distribution(n, rng)
        x = x + CONFOUNDING * gp_function(1.0, rng)(z)
    fx = gp_function(rng.uniform(LS_LOW, LS_HIGH), rng)((x - x.mean()) / x.std())
    noise = rng.uniform(NOISE_LOW, NOISE_HIGH) * fx.std() * random_distribution(n, rng)
    y = fx + noise
    if confounded:
        y = y + CONFOUNDING * fx.std() * gp_function(1.0, rng)(z)
    if rng.random() < 0.5:
        return y, x, "y->x"
    return x, y, "x->y"


def fitted(a, b, seed: int, privacy: str = "test", bounds=None, **settings):
    """Split and fit both directions as the private pipeline does (rng fixed by seed)."""
    a, b = dr.validate_pair(a, b)
    bounds = dr.check_bounds(bounds, privacy)
    ridge = settings.get("ridge", dr.DEFAULT_RIDGE[privacy])
    return dr.fit_both_directions(a, b, privacy=privacy, bounds=bounds, test_fraction=0.5, ridge=ridge,
                                  lengthscale=settings.get("lengthscale", 1.0), rng=np.random.default_rng(seed))


def raw_pair_scores(fit, score: str):
    """Non-private scores (s_xy, s_yx), never released; the IQR score from exact log-IQRs."""
    if score == "iqr":
        from privgraph.stats import iqr

        q = [np.log(iqr(v)) for v in (fit.x, fit.res_y, fit.y, fit.res_x)]
        return q[0] + q[1], q[2] + q[3]
    return dr.raw_scores(fit, score)


def nonprivate_accuracy(seeds, n: int, score: str, confounded=False, **settings) -> float:
    hits = []
    for seed in seeds:
        a, b, truth = sim_pair(n, seed, confounded)
        s_xy, s_yx = raw_pair_scores(fitted(a, b, seed, **settings), score)
        hits.append(("x->y" if s_xy < s_yx else "y->x") == truth)
    return float(np.mean(hits))


def private_draws(fit, score: str, epsilon: float, draws: int, seed: int, privacy="test", delta=1e-6):
    """``draws`` private decisions on one fitted pair (None for bottom), the noise scale, one draw's ledger."""
    out, scale, ledger = [], None, None
    sens = None if score == "iqr" else dr.laplace_sensitivity(fit, score, privacy)
    raw = None if score == "iqr" else dr.raw_scores(fit, score)
    for d in range(draws):
        sampler = SeededSampler(seed * 100_003 + d)
        if score == "iqr":
            (scores, scale), ledger = dr.release_iqr_scores(fit, epsilon, delta, sampler, None)
        else:
            (scores, scale), ledger = dr.release_laplace_scores(raw, sens, epsilon, sampler, None)
        out.append(None if scores is None else ("x->y" if scores[0] < scores[1] else "y->x"))
    return out, scale, ledger


def private_row(pairs, score, epsilon, draws, privacy="test") -> dict:
    """Accuracy, undecided rate, observed flip rate and the Theorem 3/5 prediction over pairs."""
    acc, undecided, flips, predicted = [], [], [], []
    flip_free = ds.iqr_flip_free if score == "iqr" else ds.laplace_flip_free
    for seed, fit, truth in pairs:
        raw = raw_pair_scores(fit, score)
        plain = "x->y" if raw[0] < raw[1] else "y->x"
        decisions, scale, ledger = private_draws(fit, score, epsilon, draws, seed, privacy)
        made = [d for d in decisions if d is not None]
        undecided.append(1 - len(made) / len(decisions))
        acc.extend(d == truth for d in decisions)  # bottom counts as a miss
        if made:
            flips.append(np.mean([d != plain for d in made]))
            predicted.append(1 - flip_free(raw[1] - raw[0], scale))
    return dict(score=score, privacy=privacy, epsilon=epsilon, n=pairs[0][1].x.size * 2, pairs=len(pairs),
                accuracy=float(np.mean(acc)), undecided=float(np.mean(undecided)),
                flip_observed=float(np.mean(flips)) if flips else None,
                flip_theorem=float(np.mean(predicted)) if predicted else None,
                ledger_total=tuple(ledger.total()), ledger=ledger.rows())


def time_pairs(n: int, seeds, peer: bool) -> list[dict]:
    """Seconds per pair: the private pipeline (Kendall and HSIC, epsilon 1) and causal-learn's ANM on the same pairs."""
    rows = []
    for seed in seeds:
        a, b, truth = sim_pair(n, seed)
        row = dict(n=n, seed=seed)
        for score in ("kendall", "hsic"):
            start, cpu = time.perf_counter(), time.process_time()
            dr.private_direction(a, b, epsilon=1.0, score=score, sampler=SeededSampler(seed),
                                 rng=np.random.default_rng(seed))
            row[f"{score}_s"], row[f"{score}_cpu_s"] = time.perf_counter() - start, time.process_time() - cpu
        row.update(causallearn_s=None, causallearn_cpu_s=None, causallearn_correct=None)
        if peer:
            try:
                from causallearn.search.FCMBased.ANM.ANM import ANM
            except ImportError:
                peer = False
            else:
                start, cpu = time.perf_counter(), time.process_time()
                p_fwd, p_bwd = ANM().cause_or_effect(a[:, None], b[:, None])
                row["causallearn_s"] = time.perf_counter() - start
                row["causallearn_cpu_s"] = time.process_time() - cpu
                row["causallearn_correct"] = ("x->y" if p_fwd > p_bwd else "y->x") == truth
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def report(args) -> list[dict]:
    seeds = list(REPORT_SEEDS[: args.pairs])
    sizes = (1000,) if args.quick else SIZES
    rows = []
    parts = {"nonprivate": report_nonprivate, "private": report_private, "train": report_train, "time": report_time}
    for part in args.parts:
        rows.extend(parts[part](seeds, sizes, args))
    return rows


def _emit(rows: list[dict], row: dict) -> None:
    rows.append(row)
    print(json.dumps(row), flush=True)


def report_nonprivate(seeds, sizes, args) -> list[dict]:
    rows = []
    for n in sizes:
        for confounded in (False, True):
            for score in ds.SCORES:
                acc = nonprivate_accuracy(seeds, n, score, confounded)
                _emit(rows, dict(kind="non-private", n=n, confounded=confounded, score=score, accuracy=acc))
    return rows


def report_private(seeds, sizes, args) -> list[dict]:
    rows = []
    for n in sizes:
        pairs = [(seed, fitted(*sim_pair(n, seed)[:2], seed), sim_pair(n, seed)[2]) for seed in seeds]
        for score in ds.SCORES:
            for eps in EPSILONS if n == 1000 else (1.0,):
                draws = max(1, args.draws // 4) if score == "iqr" else args.draws
                _emit(rows, dict(kind="private", **private_row(pairs, score, eps, draws)))
    return rows


def report_train(seeds, sizes, args) -> list[dict]:
    rows = []
    for n in sizes:
        pairs = [(seed, fitted(*sim_pair(n, seed)[:2], seed, privacy="train+test", bounds=TRAIN_BOUNDS),
                  sim_pair(n, seed)[2]) for seed in seeds]
        plain = np.mean([(lambda s: "x->y" if s[0] < s[1] else "y->x")(dr.raw_scores(f, "hsic")) == t
                         for _, f, t in pairs])
        _emit(rows, dict(kind="non-private", privacy="train+test", n=n, score="hsic", accuracy=float(plain)))
        for eps in EPSILONS if n == 1000 else (1.0,):
            _emit(rows, dict(kind="private", **private_row(pairs, "hsic", eps, args.draws, "train+test")))
    return rows


def report_time(seeds, sizes, args) -> list[dict]:
    rows = []
    for n in (1000, 5000):
        for r in time_pairs(n, seeds[: args.peer_pairs], peer=args.peer and n == 1000):
            rows.append(dict(kind="time", **r))
    return rows


def tune(args) -> list[dict]:
    rows = []
    for score in ds.SCORES:
        for lengthscale in (0.5, 1.0, 2.0):
            for ridge in (1e-4, 1e-3, 1e-2):
                acc = nonprivate_accuracy(TUNING_SEEDS[: args.pairs], 1000, score, lengthscale=lengthscale, ridge=ridge)
                rows.append(dict(score=score, lengthscale=lengthscale, ridge=ridge, accuracy=acc))
                print(json.dumps(rows[-1]), flush=True)
    rows.extend(tune_training_privacy(TUNING_SEEDS[: args.pairs]))
    return rows


def tune_training_privacy(seeds, n: int = 2000) -> list[dict]:
    """Ridge and residual bandwidth under train+test privacy: accuracy and margin / sensitivity."""
    from privgraph.causal.direction import data as dd

    rows, default = [], dd.TRAIN_RESIDUAL_BANDWIDTH
    data = [(seed, *sim_pair(n, seed)) for seed in seeds]
    try:
        for ridge in (0.01, 0.03, 0.1, 0.3, 1.0):
            for width in (0.1, 0.25, 0.5):
                dd.TRAIN_RESIDUAL_BANDWIDTH = width
                hits, ratios = [], []
                for seed, a, b, truth in data:
                    fit = fitted(a, b, seed, privacy="train+test", bounds=TRAIN_BOUNDS, ridge=ridge)
                    s_xy, s_yx = dr.raw_scores(fit, "hsic")
                    hits.append(("x->y" if s_xy < s_yx else "y->x") == truth)
                    ratios.append(abs(s_yx - s_xy) / dr.laplace_sensitivity(fit, "hsic", "train+test"))
                rows.append(dict(privacy="train+test", n=n, ridge=ridge, residual_bandwidth=width,
                                 accuracy=float(np.mean(hits)), median_margin_over_sensitivity=float(np.median(ratios))))
                print(json.dumps(rows[-1]), flush=True)
    finally:
        dd.TRAIN_RESIDUAL_BANDWIDTH = default
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--draws", type=int, default=FLIP_DRAWS, help="noise draws per pair")
    parser.add_argument("--peer", action="store_true", help="time causal-learn's ANM on the same pairs")
    parser.add_argument("--peer-pairs", type=int, default=3)
    parser.add_argument("--parts", nargs="+", default=["nonprivate", "private", "train", "time"],
                        choices=["nonprivate", "private", "train", "time"])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/direction.json"))
    args = parser.parse_args()
    rows = tune(args) if args.tune else report(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
