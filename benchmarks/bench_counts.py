"""Counting engines side by side: numpy (memory), DuckDB (Parquet) and Spark (Parquet, local).

Workloads, at each row count: one table over 3 columns, one over 5 columns, and a batch of
50 random 3-column tables (counted as marginals of one joint table by ``count_tables``,
and, for numpy, also one by one). Data: 8 categorical columns of 2-4 levels. The machine
is shared and noisy: read the ratios to numpy, not the seconds.

    python benchmarks/bench_counts.py --rows 1e6 1e7 --engines numpy duckdb spark
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from privgraph.data import Domain, DuckDBEngine, NumpyEngine, SparkEngine, count_tables

SIZES = (2, 3, 4, 2, 3, 4, 2, 3)
NAMES = tuple(f"c{i}" for i in range(len(SIZES)))


def make_data(n: int, rng: np.random.Generator) -> tuple[Domain, np.ndarray]:
    domain = Domain(NAMES, SIZES, levels=tuple(tuple(range(s)) for s in SIZES))
    codes = np.column_stack([rng.integers(0, s, n, dtype=np.int8) for s in SIZES])
    return domain, codes


def workloads(rng: np.random.Generator) -> dict:
    batch = [tuple(rng.choice(NAMES, 3, replace=False)) for _ in range(50)]
    return {"3 columns": [NAMES[:3]], "5 columns": [NAMES[:5]], "batch of 50": batch}


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run(n: int, engines: list[str], rng: np.random.Generator, root: Path) -> list[dict]:
    domain, codes = make_data(n, rng)
    path = root / f"data_{n}.parquet"
    pd.DataFrame(codes, columns=list(NAMES)).to_parquet(path, row_group_size=1 << 20)
    made = {"numpy": lambda: NumpyEngine(domain, codes)}
    made["duckdb"] = lambda: DuckDBEngine(path, domain=domain, memory_limit="1GB")
    made["spark"] = lambda: SparkEngine(path, domain=domain, spark=spark_session())
    rows = []
    for name in engines:
        start = time.perf_counter()
        engine = made[name]()
        rows.append({"rows": n, "engine": name, "workload": "setup", "seconds": time.perf_counter() - start})
        if name == "spark":
            engine.counts(NAMES[:1])  # warm-up: Spark's first query pays 8-15 s of JIT
        for label, sets in workloads(np.random.default_rng(0)).items():
            rows.append({"rows": n, "engine": name, "workload": label,
                         "seconds": timed(lambda: count_tables(engine, sets))})
        if name == "numpy":
            sets = workloads(np.random.default_rng(0))["batch of 50"]
            rows.append({"rows": n, "engine": name, "workload": "batch of 50, one by one",
                         "seconds": timed(lambda: [engine.counts(s) for s in sets])})
    return rows


_SPARK = []


def spark_session():
    if not _SPARK:
        from pyspark.sql import SparkSession

        s = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
        s.sparkContext.setLogLevel("ERROR")
        _SPARK.append(s)
    return _SPARK[0]


def report(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    base = df[df.engine == "numpy"].set_index(["rows", "workload"])["seconds"]
    df["x numpy"] = [s / base.get((r, w), np.nan) for r, w, s in zip(df.rows, df.workload, df.seconds)]
    return df


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, nargs="+", default=[1e6, 1e7])
    parser.add_argument("--engines", nargs="+", default=["numpy", "duckdb", "spark"])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/counts.json"))
    args = parser.parse_args()
    rng = np.random.default_rng(12345)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [r for n in args.rows for r in run(int(n), args.engines, rng, Path(tmp))]
    df = report(rows)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
