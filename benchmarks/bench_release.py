"""Benchmark of ``privgraph release`` against private synthetic-data peers (issue 15).

    python3 benchmarks/bench_release.py --nets asia:100000 child:20000 alarm:20000 --epsilon 1 --seeds 1
    python3 benchmarks/bench_release.py --nets asia:100000 --splits 0.3 0.5 0.7      # the split sweep
    python3 benchmarks/bench_release.py --nets asia:100000 --structure tree          # force stage 1
    python3 benchmarks/bench_release.py --nets asia:100000 --seeds 2 --privpc-alone  # the graph goal's reference
    python3 benchmarks/bench_release.py --peer dpmm:mst --python /tmp/peers/bin/python   # a peer (own venv)
    python3 benchmarks/bench_release.py --nets fair --seeds 2    # the real table (benchmarks/real_tables.py)
    python3 benchmarks/bench_release.py --nets fair child:20000 --seeds 3 --seed-base 100   # settling constants

``--nets`` takes ``network:rows`` (rows forward-sampled from a bundled network, sample seed
s) or the name of a real table of ``benchmarks/real_tables.py`` (all its rows, its
hand-written codebook; no true graph, so no F1).

Metrics, all against the training sample: average total-variation distance over every
2-way marginal and over a fixed set of 3-way marginals (the first 20 triples of a
seeded draw, seed 0), fit+sample CPU time, peak memory (tracemalloc for privgraph; the
peer's ru_maxrss in its own process), and the skeleton F1 of the released graph against
the network (privgraph only: the peers release no graph). privgraph's TVDs are given for
its default synthetic rows, drawn by controlled rounding (``tvd2``, ``tvd3``, in the CPU
time; the peers' Private-PGM draws theirs the same way), and, from the same fitted model,
for rows drawn i.i.d. (``tvd2_iid``, ``tvd3_iid``; ``method="sample"``). Each row is one JSON line with
its ledger (privgraph) so a table can be rebuilt from the output.

Peers (smartnoise-synth, dpmm) are never imported by the package or its tests; they run
in a subprocess of their own virtual environment (their pins conflict with this
project's numpy/pandas), from ``--python``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np
import pandas as pd


def tvd(a: pd.DataFrame, b: pd.DataFrame, cols) -> float:
    cols = list(cols)
    pa = a.groupby(cols, observed=True).size() / len(a)
    pb = b.groupby(cols, observed=True).size() / len(b)
    both = pd.concat([pa, pb], axis=1).fillna(0.0)
    return 0.5 * float(np.abs(both.iloc[:, 0] - both.iloc[:, 1]).sum())


def triples(names, k: int = 20):
    all3 = list(itertools.combinations(names, 3))
    pick = np.random.default_rng(0).choice(len(all3), size=min(k, len(all3)), replace=False)
    return [all3[i] for i in sorted(pick)]


def scores(train: pd.DataFrame, synth: pd.DataFrame) -> dict:
    from privgraph.data.codebook import level_text  # 22, 22.0 and "22" are one level

    synth = synth[train.columns].map(level_text)
    train = train.map(level_text)
    two = [tvd(train, synth, p) for p in itertools.combinations(train.columns, 2)]
    three = [tvd(train, synth, t) for t in triples(list(train.columns))]
    return {"tvd2": float(np.mean(two)), "tvd3": float(np.mean(three))}


def training_data(name: str, n: int | None, seed: int):
    """(training frame, public domain, true network or None) of a ``--nets`` entry."""
    from real_tables import TABLES, codebook, load

    from privgraph.data.codebook import domain_from_codebook, level_text
    from privgraph.datasets import load_network, sample_frame

    if name in TABLES:
        return load(name).map(level_text), domain_from_codebook(codebook(name)), None
    net = load_network(name)
    return sample_frame(net, n, np.random.default_rng(seed), labels=True), net.domain, net


def skeleton_f1(graph, net):
    from privgraph.graphs.metrics import skeleton_scores

    return None if net is None else skeleton_scores(graph, net.to_networkx())["f1"]


def run_privgraph(net_name: str, n: int, epsilon: float, seed: int, split, cap: int, structure: str = "auto",
                  delta: float = 1e-6, neighbours: str = "replace_one") -> dict:
    from privgraph.release import PrivateRelease

    train, domain, net = training_data(net_name, n, seed)
    n = len(train)
    tracemalloc.start()
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = PrivateRelease(epsilon=epsilon, delta=delta, split=split, cap=cap, structure=structure,
                             neighbours=neighbours, random_state=1000 + seed).fit(train, domain=domain)
        synth = rel.sample(random_state=seed)  # n_rows_: n (replace-one) or its estimate (add/remove)
    cpu = time.process_time() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    tree = rel.structure_kind_ == "tree"
    row = {"tool": "privgraph", "algo": "release", "structure": rel.structure_kind_, "neighbours": neighbours,
           "net": net_name, "n": n, "n_synthetic": len(synth),
           "epsilon": epsilon, "delta": delta, "seed": seed, "split": None if tree else rel.plan_.split,
           "rounds": None if tree else rel.plan_.rounds, "complete": None if tree else bool(rel.structure_.complete_),
           "cliques": len(rel.cliques_), "cpu_s": round(cpu, 2), "peak_mib": round(peak, 1),
           "f1": skeleton_f1(rel.graph_, net), "f1_model": skeleton_f1(_model_skeleton(rel), net) if tree else None,
           "composition": rel.composition_,
           "epsilon_spent": rel.ledger_.total(rel.composition_, delta or None).epsilon, "ledger": rel.ledger_.rows()}
    iid = {f"{k}_iid": v for k, v in scores(train, rel.sample(random_state=seed, method="sample")).items()}
    return row | scores(train, synth) | iid


def _model_skeleton(rel):
    """The tree's model skeleton: every pair within a clique of its model (the released tree, the
    residual pairs and the rounds' triples; for its own F1)."""
    from privgraph.graphs import CPDAG

    pairs = dict.fromkeys(p for c in rel.cliques_ for p in itertools.combinations(c, 2))
    return CPDAG(rel.domain_.names, undirected=list(pairs))


def run_privpc_alone(net_name: str, n: int, epsilon: float, seed: int, delta: float = 1e-6,
                     neighbours: str = "replace_one") -> dict:
    """Priv-PC alone at the release's total budget and relation (the graph goal's reference): its skeleton F1."""
    from privgraph.causal import PrivPC

    train, domain, net = training_data(net_name, n, seed)
    row = {"tool": "privgraph", "algo": "priv-pc alone", "net": net_name, "n": n, "epsilon": epsilon, "seed": seed,
           "neighbours": neighbours}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pc = PrivPC(epsilon=epsilon, delta=delta, neighbours=neighbours, random_state=1000 + seed).fit(
            train, domain=domain)
    return row | {"f1": skeleton_f1(pc.graph_, net)}


PEER_SCRIPT = r"""
import json, resource, sys, time, warnings
import numpy as np, pandas as pd
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[1])
train = pd.read_csv(spec["train"], dtype=str)
levels = spec["levels"]
lib, algo, eps = spec["lib"], spec["algo"], spec["epsilon"]
t0 = time.process_time()
if lib == "dpmm":
    from dpmm.pipelines import MSTPipeline, AIMPipeline, PrivBayesPipeline
    P = {"mst": MSTPipeline, "aim": AIMPipeline, "privbayes": PrivBayesPipeline}[algo]
    model = P(epsilon=eps, delta=1e-6)
    model.fit(train, domain={c: {"categories": levels[c]} for c in train.columns})
    synth = model.generate(len(train))
else:
    from snsynth import Synthesizer
    model = Synthesizer.create(algo, epsilon=eps, delta=1e-6)
    synth = model.fit_sample(train, preprocessor_eps=0.0, categorical_columns=list(train.columns))
cpu = time.process_time() - t0
synth.to_csv(spec["out"], index=False)
print(json.dumps({"cpu_s": cpu, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_peer(peer: str, python: str, net_name: str, n: int, epsilon: float, seed: int, timeout: float) -> dict:
    import tempfile

    from privgraph.data.codebook import level_text

    lib, algo = peer.split(":")
    train, domain, _ = training_data(net_name, n, seed)
    row = {"tool": lib, "algo": algo, "net": net_name, "n": len(train), "epsilon": epsilon, "seed": seed, "f1": None}
    with tempfile.TemporaryDirectory() as d:
        train.map(level_text).to_csv(f"{d}/train.csv", index=False)  # the levels below are in this form
        spec = {"train": f"{d}/train.csv", "out": f"{d}/synth.csv", "lib": lib, "algo": algo, "epsilon": epsilon,
                "levels": {c: [level_text(v) for v in lv] for c, lv in zip(domain.names, domain.levels)}}
        try:
            out = subprocess.run([python, "-c", PEER_SCRIPT, json.dumps(spec)], capture_output=True, text=True,
                                 timeout=timeout, check=True)
        except subprocess.TimeoutExpired:
            return row | {"status": f"did not finish in {timeout:.0f} s wall"}
        except subprocess.CalledProcessError as err:
            return row | {"status": "failed: " + err.stderr.strip().splitlines()[-1][:200]}
        row |= json.loads(out.stdout.strip().splitlines()[-1])
        synth = pd.read_csv(f"{d}/synth.csv", dtype=str)
    return row | scores(train, synth)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nets", nargs="+", default=["asia:100000", "child:20000", "alarm:20000"])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--seed-base", type=int, default=0,
                    help="first seed (settling constants on seeds never reported, e.g. 100)")
    ap.add_argument("--splits", type=float, nargs="*", default=[None])
    ap.add_argument("--cap", type=int, default=5000)
    ap.add_argument("--structure", default="auto", choices=["auto", "gauss-pc", "priv-pc", "tree"])
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--neighbours", default="add_remove", choices=["replace_one", "add_remove"],
                    help="privgraph's relation (the release's default and dpmm's: add/remove)")
    ap.add_argument("--residual-rounds", type=int, default=None,
                    help="the tree's rounds of residual pairs (settling RESIDUAL_ROUNDS; default: the package's)")
    ap.add_argument("--privpc-alone", action="store_true", help="Priv-PC alone at the same budget (its F1)")
    ap.add_argument("--peer", help="lib:algo, e.g. dpmm:mst, dpmm:aim, dpmm:privbayes, smartnoise:mst")
    ap.add_argument("--python", default=sys.executable, help="the peer's interpreter (its own venv)")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args(argv)
    if args.residual_rounds is not None:
        import privgraph.release.tree as tree

        tree.RESIDUAL_ROUNDS = args.residual_rounds
    for spec, seed in itertools.product(args.nets, range(args.seed_base, args.seed_base + args.seeds)):
        net, _, n = spec.partition(":")
        n = int(n) if n else None
        if args.peer:
            print(json.dumps(run_peer(args.peer, args.python, net, n, args.epsilon, seed, args.timeout)), flush=True)
            continue
        if args.privpc_alone:
            try:
                row = run_privpc_alone(net, n, args.epsilon, seed, args.delta, args.neighbours)
            except Exception as err:  # noqa: BLE001 -- a refusal is a row of the table
                row = {"algo": "priv-pc alone", "net": net, "seed": seed, "status": f"{type(err).__name__}: {str(err)[:120]}"}
            print(json.dumps(row), flush=True)
            continue
        for split in args.splits:
            try:
                row = run_privgraph(net, n, args.epsilon, seed, split, args.cap, args.structure, args.delta,
                                    args.neighbours)
            except Exception as err:  # noqa: BLE001 -- a refused release is a row of the table
                row = {"tool": "privgraph", "net": net, "n": n, "seed": seed, "split": split,
                       "status": f"{type(err).__name__}: {str(err)[:160]}"}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
