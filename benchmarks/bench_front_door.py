"""The front door's cost beside the PC run it feeds, and causal-learn's on the same frame.

    python3 benchmarks/bench_front_door.py [--rows 1000000] [--repeats 3]
        [--out benchmarks/results/front_door.json]

One process, CPU time (``time.process_time``), best of ``--repeats``:

* ``encode``: :func:`privgraph.data.frontdoor.encode_public` of ``--rows`` rows of the bundled
  ``asia`` network (8 columns) under the ``"recode"`` policy, as Categorical columns and as
  text labels (as pandas reads a file), and the text frame with one more float column read
  through 10 public bins;
* ``pc``: non-private PC (G test, causal-learn's convention for a test with no information) on the encoded codes, privgraph's numpy engine;
* ``causal-learn``: causal-learn's stable PC with its ``gsq`` test on the same codes (its
  import outside the clock), on the same frame.

Issue 27 asks that encoding cost at most as much as the PC run it feeds.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

import numpy as np


def best(fn, repeats: int) -> tuple[float, object]:
    """(least CPU seconds over ``repeats`` calls of ``fn``, its last result)."""
    times, out = [], None
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        out = fn()
        times.append(time.process_time() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/front_door.json"))
    args = parser.parse_args()

    from causallearn.search.ConstraintBased.PC import pc  # its import (about 1 s) outside the clock

    from privgraph.causal import NonPrivate, Tables, stable_pc_skeleton
    from privgraph.data import Domain, Kind, NumpyEngine
    from privgraph.data.bins import make_bins
    from privgraph.data.frontdoor import encode_public
    from privgraph.datasets import load_network
    from privgraph.datasets.network import sample_frame
    from privgraph.stats import GTest

    net = load_network("asia")
    rng = np.random.default_rng(0)
    categorical = sample_frame(net, args.rows, rng, labels=True)  # Categorical columns (the case)
    frame = categorical.astype(str)  # text, as pandas reads a file
    domain = Domain(net.domain.names, net.domain.sizes, net.domain.kinds,
                    tuple(tuple(str(v) for v in lv) for lv in sample_frame(net, 1, rng, labels=True)
                          .apply(lambda c: list(c.cat.categories)).T.values))
    wide = frame.assign(x=rng.normal(50, 10, args.rows))
    binned = Domain(domain.names + ("x",), domain.sizes + (10,), domain.kinds + (Kind.CONTINUOUS,),
                    domain.levels + (make_bins((0.0, 100.0), 10).labels(),), domain.bounds + ((0.0, 100.0),),
                    bins=(None,) * len(domain.names) + (make_bins((0.0, 100.0), 10),))

    encode_s, codes = best(lambda: encode_public(frame, domain, "recode"), args.repeats)
    encode_cat_s, cat_codes = best(lambda: encode_public(categorical, domain, "recode"), args.repeats)
    assert (cat_codes == codes).all()
    encode_binned_s, _ = best(lambda: encode_public(wide, binned, "recode"), args.repeats)

    def privgraph_pc():
        tables = Tables.from_engine(NumpyEngine(domain, codes))
        return {frozenset(e) for e in stable_pc_skeleton(domain.names, NonPrivate(tables, GTest(degenerate="independent"), 0.05)).graph.edges}

    def causal_learn_pc():
        cg = pc(codes.astype(np.int64), 0.05, "gsq", stable=True, show_progress=False, uc_rule=0)
        adj, names = cg.G.graph, domain.names
        return {frozenset((names[i], names[j])) for i in range(len(names)) for j in range(i + 1, len(names))
                if adj[i, j] != 0 or adj[j, i] != 0}

    pc_s, ours = best(privgraph_pc, args.repeats)
    cl_s, theirs = best(causal_learn_pc, 1)
    result = {"command": " ".join(["python3"] + sys.argv), "rows": args.rows, "table": "asia, 8 text columns",
              "cpu_s": {"encode_categorical": round(encode_cat_s, 3), "encode_text": round(encode_s, 3), "encode_with_binned_float": round(encode_binned_s, 3),
                        "pc_privgraph": round(pc_s, 3), "pc_causal_learn": round(cl_s, 3)},
              "encode_categorical_over_pc": round(encode_cat_s / pc_s, 2), "encode_text_over_pc": round(encode_s / pc_s, 2), "same_skeleton": ours == theirs}
    print(json.dumps(result, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
