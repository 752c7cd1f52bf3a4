"""A Parquet file larger than memory through the user's command (issue 13: 1e8 rows, 2 GB).

    python3 benchmarks/bench_large_file.py --network asia --rows 100000000 --dir /tmp/large

1. Writes ``rows`` forward-sampled rows of ``network`` to ``DIR/<network>-<rows>.parquet``
   in chunks (the level names as dictionary-encoded strings, as a user's file would hold
   them), and its codebook ``DIR/<network>.json`` (the network's public levels). Not timed;
   an existing file is reused.
2. Runs the user's command in a child process,
   ``python -m privgraph discover FILE --domain D --method pc --ci-test g --out G``
   (non-private PC, counted by DuckDB out of core with its default ``memory_limit`` of 1 GB),
   and reports the child's CPU seconds (user + system) and peak resident memory
   (``ru_maxrss`` from ``wait4``: the whole process, Python and DuckDB together), and the
   skeleton's F1 against the network. One JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np


def write_file(network: str, rows: int, out: Path, chunk: int) -> tuple[Path, Path]:
    """The Parquet file and the codebook (reused when present)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from privgraph.data.codebook import write_codebook
    from privgraph.datasets import load_network, sample

    net = load_network(network)
    path, book = out / f"{network}-{rows}.parquet", out / f"{network}.json"
    write_codebook(net.domain, book)
    if path.exists():
        return path, book
    d, rng, tmp = net.domain, np.random.default_rng(0), path.with_suffix(".part")
    with pq.ParquetWriter(tmp, pa.schema([(c, pa.dictionary(pa.int8(), pa.string())) for c in d.names])) as w:
        for start in range(0, rows, chunk):
            w.write_table(labelled_table(sample(net, min(chunk, rows - start), rng), d))
    tmp.rename(path)
    return path, book


def labelled_table(codes: np.ndarray, domain):
    """An Arrow table of ``codes`` (rows x columns, fewer than 128 levels a column) as
    dictionary-encoded level names, as a user's file would hold them: one byte a value in
    memory, where a pandas frame of strings takes some 60."""
    import pyarrow as pa

    return pa.table([pa.DictionaryArray.from_arrays(pa.array(codes[:, j].astype(np.int8)),
                                                    pa.array([str(v) for v in domain.levels[j]]))
                     for j in range(len(domain.names))], names=list(domain.names))


def run_discover(path: Path, book: Path, graph: Path) -> dict:
    """The user's command in a child; its CPU seconds and peak RSS from ``wait4``."""
    cmd = [sys.executable, "-m", "privgraph", "discover", str(path), "--domain", str(book),
           "--method", "pc", "--ci-test", "g", "--out", str(graph)]
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"discover failed on {path}: {child.stderr.read().decode()[-2000:]}")
    return {"cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024)}


def skeleton_f1(network: str, graph: Path) -> float:
    from privgraph.datasets import load_network

    truth = {frozenset(e) for e in load_network(network).edges}
    saved = json.loads(graph.read_text())
    found = {frozenset(e) for e in saved["directed"] + saved["undirected"]}
    return round(2 * len(truth & found) / (len(truth) + len(found)), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--network", default="asia")
    ap.add_argument("--rows", type=float, default=1e8)
    ap.add_argument("--chunk", type=float, default=5e6)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/privgraph-large"))
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    rows = int(args.rows)
    path, book = write_file(args.network, rows, args.dir, int(args.chunk))
    graph = args.dir / f"{args.network}-{rows}.graph.json"
    result = run_discover(path, book, graph)
    print(json.dumps({"network": args.network, "rows": rows, "file_mb": round(path.stat().st_size / 2**20),
                      **result, "f1": skeleton_f1(args.network, graph)}), flush=True)


if __name__ == "__main__":
    main()
