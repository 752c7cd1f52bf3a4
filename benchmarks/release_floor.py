"""The sampling floor of the release benchmark: a same-size bootstrap resample of each real table
against the table, over the marginals ``bench_release_real.py`` scores (issue 46, item 1).

    nice -n 19 python3 benchmarks/release_floor.py --tables fair cces16 gss anes mpls census_shape --seeds 3 \
        --out benchmarks/results/release_real_floor.jsonl

A synthetic table of n rows drawn from the true distribution is, at best, another sample of
it: the TVD of a bootstrap resample (n rows drawn with replacement from the table) against the
table is the error such a sample has from sampling alone, the floor no release of n rows
reaches on average. One row per table and resample seed: the mean and max TVD over every 1-way
and 2-way marginal and the 20 fixed triples of ``bench_release_real.scores`` (seed 0), the worst
pair and triple, and every pair's TVD (``pairs``, for the per-pair floors of
``release_error_anatomy.py``). Reads the tables offline (``benchmarks/real_tables.py``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_release_real import append_line  # noqa: E402


def marginal_tvds(train: pd.DataFrame, other: pd.DataFrame) -> dict:
    """``{"one": {col: tvd}, "two": {"a|b": tvd}, "three": {"a|b|c": tvd}}`` of ``other`` against
    ``train`` (level texts) over every column, every pair and the benchmark's 20 triples."""
    from bench_release import triples, tvd

    cols = list(train.columns)
    return {"one": {c: tvd(train, other, [c]) for c in cols},
            "two": {"|".join(p): tvd(train, other, p) for p in itertools.combinations(cols, 2)},
            "three": {"|".join(t): tvd(train, other, t) for t in triples(cols)}}


def summary(tvds: dict) -> dict:
    """Means and maxima of :func:`marginal_tvds`, with the worst pair and triple."""
    out = {}
    for key, name in (("one", "tvd1"), ("two", "tvd2"), ("three", "tvd3")):
        values = tvds[key]
        worst = max(values, key=values.get)
        out |= {name: float(np.mean(list(values.values()))), f"{name}_max": values[worst], f"{name}_worst": worst}
    return out


def bootstrap(train: pd.DataFrame, seed: int) -> pd.DataFrame:
    """A same-size resample of ``train`` with replacement (seed ``seed``)."""
    rng = np.random.default_rng(seed)
    return train.iloc[rng.integers(0, len(train), len(train))].reset_index(drop=True)


def floor_row(name: str, seed: int) -> dict:
    from bench_release_real import table

    train, _ = table(name)
    train = train.astype(str)
    tvds = marginal_tvds(train, bootstrap(train, seed))
    return {"table": name, "rows": len(train), "columns": len(train.columns), "seed": seed, **summary(tvds),
            "pairs": tvds["two"]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="+", default=["fair", "cces16", "gss", "anes", "mpls", "census_shape"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="also append each row to this JSON-lines file")
    args = ap.parse_args(argv)
    for name, seed in itertools.product(args.tables, range(args.seeds)):
        line = json.dumps(floor_row(name, seed))
        print(line[:200], flush=True)
        append_line(args.out, line)


if __name__ == "__main__":
    main()
