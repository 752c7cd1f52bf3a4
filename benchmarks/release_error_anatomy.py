"""Where the release's remaining error is, pair by pair and triple by triple (issue 46, item 1).

    nice -n 19 python3 benchmarks/release_error_anatomy.py --tables fair cces16 gss anes mpls census_shape \
        --epsilon 1 3 --seeds 1 --out benchmarks/results/release_error_anatomy.jsonl

Each run is ``bench_release_real.py``'s privgraph run (delta 1e-9, noise seed 1000 + seed,
synthetic rows drawn with ``seed``, read back through a CSV as there), scored over every pair
and the 20 fixed triples, each marginal also against its own sampling floor (the mean TVD of
three same-size bootstrap resamples of the table, ``release_floor.py``). Every pair is
classified from the fitted release (its released tables and model, public facts):

* ``measured``: a released table of the model at full resolution (the tree's edges, the
  adaptive rounds' pairs, the last round's residual pairs: ``sources``), with the noise its
  table got (``noise_tvd``: the expected TVD of that noise alone, ``sqrt(2/pi) sigma cells /
  2N``, the table's measurements combined by inverse variance) and the model's distance to it
  over that noise (``misfit``, :func:`privgraph.release.misfit.table_misfits`);
* ``bins``: measured only with a wide ordered column in bins;
* ``clique``: in one clique of the model's junction tree, not measured itself;
* ``implied``: answered only through the model's structure, with why it was not measured
  (``reason``: ``cap`` when adding its table would pass the model-size cap, else ``not
  selected``).

``merged``: its columns whose rare levels were merged (``release.levels``). ``junction``: how
the model's junction tree spends the cap (cells by clique size, the largest cliques). A triple is
``clique`` when one junction-tree clique holds it, else ``implied``, with how many of its pairs
were measured. Each output line is one run: its means (the benchmark's ``tvd1``, ``tvd2``,
``tvd3``), every pair and triple worst first, and per class the pairs' count, mean TVD and
share of the 2-way error above the floor (``excess``).
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_release_real import append_line  # noqa: E402


def fitted(name: str, epsilon: float, seed: int, delta: float = 1e-9):
    """(train, synthetic rows as level texts, fitted release, CPU s) as bench_release_real's run."""
    from bench_release_real import table

    from privgraph.data.codebook import level_text
    from privgraph.release import PrivateRelease

    train, domain = table(name)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = PrivateRelease(epsilon=epsilon, delta=delta, random_state=1000 + seed).fit(train, domain=domain)
        synth = rel.sample(random_state=seed)
    cpu = time.process_time() - t0
    buffer = io.StringIO()
    synth.to_csv(buffer, index=False)
    buffer.seek(0)
    synth = pd.read_csv(buffer, dtype=str, keep_default_na=False)[train.columns].astype(str).map(level_text)
    return train.astype(str), synth, rel, cpu


def floors(train: pd.DataFrame, seeds: int = 3) -> dict:
    """Each pair's and triple's mean bootstrap TVD over ``seeds`` resamples (release_floor.py's)."""
    from release_floor import bootstrap, marginal_tvds

    runs = [marginal_tvds(train, bootstrap(train, s)) for s in range(seeds)]
    return {key: {m: float(np.mean([r[key][m] for r in runs])) for m in runs[0][key]} for key in ("two", "three")}


def released(rel) -> dict:
    """What the release measured, from its fitted stages: ``sources`` per pair, each distinct
    table's noise, the misfits, the unmeasured pairs' reasons, the junction tree's cliques."""
    from privgraph.mrf.junction import junction_tree
    from privgraph.release.misfit import noise_l1, release_misfits, release_tables, released_groups

    s = rel.structure_
    sources: dict = {}
    if rel.structure_kind_ == "tree":
        for p in s.edges:
            sources.setdefault(frozenset(p), []).append("tree")
        rounds = s.adaptive
        if rounds is not None:
            for p, b in zip(rounds.pairs, rounds.bins or (None,) * len(rounds.pairs)):
                sources.setdefault(frozenset(p), []).append("adaptive" if b is None else "adaptive-bins")
                for pair in itertools.combinations(p, 2) if len(p) == 3 else ():  # a triple holds its pairs' tables
                    sources.setdefault(frozenset(pair), []).append("adaptive-triple")
        for p in s.last:
            if len(p) == 2:
                sources.setdefault(frozenset(p), []).append("last")
    noisy = release_tables(rel)
    n = float(noisy.records)
    noise = {}
    for clique, bins, table, scale in released_groups(noisy):
        if len(clique) == 2 and (bins is None or all(b is None for b in bins)):
            noise[frozenset(clique)] = noise_l1(noisy.noise, scale, table.size)[0] / (2 * n)
    misfits, unmeasured, _ = release_misfits(rel)
    model = rel.parameters_.model_
    tree = junction_tree(model.domain, tuple(tuple(c) for c in model.cliques))
    return {"sources": sources, "noise": noise, "n": n,
            "misfit": {frozenset(m.clique): m for m in misfits if len(m.clique) == 2 and not m.binned},
            "reason": {frozenset(u.pair): u.reason for u in unmeasured},
            "tree_cliques": [set(c) for c in tree.cliques], "merged": set(rel.levels_.merged_text()),
            "domain": model.domain, "junction": junction_summary(tree)}


def junction_summary(tree) -> dict:
    """How the model's junction tree spends the cap: cliques and cells by clique size, and the
    five largest cliques with their cells."""
    cells = [int(np.prod([tree.domain.size_of(v) for v in c])) for c in tree.cliques]
    sizes = sorted({len(c) for c in tree.cliques})
    largest = sorted(zip(cells, tree.cliques), key=lambda x: -x[0])[:5]
    return {"by_size": {str(k): {"cliques": sum(len(c) == k for c in tree.cliques),
                                 "cells": sum(x for x, c in zip(cells, tree.cliques) if len(c) == k)} for k in sizes},
            "largest": [{"clique": "|".join(c), "cells": x} for x, c in largest]}


def pair_rows(tvds: dict, floor: dict, facts: dict, domain) -> list[dict]:
    """Every pair worst first, with its class and the release's facts about it."""
    rows = []
    for key, value in tvds.items():
        pair = tuple(key.split("|"))
        k = frozenset(pair)
        src = facts["sources"].get(k, [])
        full = [x for x in src if x != "adaptive-bins"]
        in_clique = any(set(pair) <= c for c in facts["tree_cliques"])
        derived = any(v not in facts["domain"].names for v in pair)  # computed on the rows by its codebook rule
        cls = "derived" if derived else "measured" if full else "bins" if src else "clique" if in_clique else "implied"
        row = {"pair": key, "tvd": value, "floor": floor[key], "cells": int(domain.cells(pair)),
               "merged_cells": int(domain.cells(pair) if derived else facts["domain"].cells(pair)), "class": cls,
               "sources": src,
               "merged": [v for v in pair if v in facts["merged"]]}
        if k in facts["noise"]:
            row["noise_tvd"] = facts["noise"][k]
        if k in facts["misfit"]:
            row["misfit"] = facts["misfit"][k].ratio
        if k in facts["reason"]:
            row["reason"] = facts["reason"][k]
        rows.append(row)
    return sorted(rows, key=lambda r: -r["tvd"])


def triple_rows(tvds: dict, floor: dict, facts: dict) -> list[dict]:
    rows = []
    for key, value in tvds.items():
        triple = key.split("|")
        measured = sum(any(x != "adaptive-bins" for x in facts["sources"].get(frozenset(p), []))
                       for p in itertools.combinations(triple, 2))
        cls = ("derived" if any(v not in facts["domain"].names for v in triple)
               else "clique" if any(set(triple) <= c for c in facts["tree_cliques"]) else "implied")
        rows.append({"triple": key, "tvd": value, "floor": floor[key], "class": cls, "pairs_measured": measured,
                     "merged": [v for v in triple if v in facts["merged"]]})
    return sorted(rows, key=lambda r: -r["tvd"])


def by_class(pairs: list[dict]) -> dict:
    """Per class: pairs, mean TVD, mean floor, and the class's share of the summed excess over the floor."""
    total = sum(max(r["tvd"] - r["floor"], 0.0) for r in pairs) or 1.0
    out = {}
    for cls in ("measured", "bins", "clique", "implied", "derived"):
        rows = [r for r in pairs if r["class"] == cls]
        if rows:
            out[cls] = {"pairs": len(rows), "tvd": float(np.mean([r["tvd"] for r in rows])),
                        "floor": float(np.mean([r["floor"] for r in rows])),
                        "excess_share": sum(max(r["tvd"] - r["floor"], 0.0) for r in rows) / total}
    return out


def anatomy(name: str, epsilon: float, seed: int) -> dict:
    from bench_release_real import table
    from release_floor import marginal_tvds, summary

    train, synth, rel, cpu = fitted(name, epsilon, seed)
    tvds = marginal_tvds(train, synth)
    floor = floors(train)
    facts = released(rel)
    _, domain = table(name)
    pairs = pair_rows(tvds["two"], floor["two"], facts, domain)
    return {"table": name, "epsilon": epsilon, "seed": seed, "delta": 1e-9, "cpu_s": cpu,
            "structure": rel.structure_kind_, "model_cells": rel.model_cells_, "tree_cap": rel.tree_cap,
            **{k: v for k, v in summary(tvds).items() if not k.startswith("tvd1_")},
            "floor_tvd2": float(np.mean(list(floor["two"].values()))),
            "floor_tvd3": float(np.mean(list(floor["three"].values()))),
            "junction": facts["junction"], "classes": by_class(pairs), "pairs": pairs,
            "triples": triple_rows(tvds["three"], floor["three"], facts)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="+", default=["fair", "cces16", "gss", "anes", "mpls", "census_shape"])
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 3.0])
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="also append each row to this JSON-lines file")
    args = ap.parse_args(argv)
    for name, epsilon, seed in itertools.product(args.tables, args.epsilon,
                                                 range(args.first_seed, args.first_seed + args.seeds)):
        row = anatomy(name, epsilon, seed)
        line = json.dumps(row)
        shown = ("table", "epsilon", "seed", "tvd2", "tvd2_max", "tvd2_worst", "floor_tvd2", "classes")
        print(json.dumps({k: row[k] for k in shown}), flush=True)
        append_line(args.out, line)


if __name__ == "__main__":
    main()
