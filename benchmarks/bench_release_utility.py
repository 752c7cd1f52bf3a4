"""Utility downstream: train a classifier on each tool's synthetic rows, test it on held-back real rows.

    python3 benchmarks/bench_release_utility.py --tables fair mpls gss cces16 anes --epsilon 1 \
        --peers dpmm:mst opendp:mst --python /work/venv-dpmm/bin/python --ceiling \
        --out benchmarks/results/release_utility.jsonl
    python3 benchmarks/bench_release_utility.py --summary benchmarks/results/release_utility.jsonl

Each table with a natural yes/no answer (:data:`TARGETS`) is split once (:func:`split`: seed 0,
80/20, stratified on the target's level); every tool (``bench_release_real.run``: privgraph in
this interpreter, dpmm's and OpenDP's AIM and MST in their own venvs) releases from the same
80%, which is the private input, and a logistic regression on one-hot features
(:func:`utility`) is trained on its synthetic rows and scored on the real 20% (AUC, accuracy at
0.5), the rows whose target is answered; the synthetic rows' levels are read as level texts first
(``bench_release_real.as_levels``: privgraph writes fair's ages as "22.0", the test rows say "22";
rows before that fix, which lack ``"synth_levels"``, scored privgraph's fair rows with those
levels unseen). ``--ceiling`` adds the same classifier trained on the
real 80% (no privacy: the ceiling). Each row also carries the TVD of the synthetic rows against
the 80% (``bench_release_real.scores``), CPU seconds and peak RSS of the tool's own process.
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

from bench_release_real import append_line, run, table  # noqa: E402

#: table -> (target column, positive level, negative level) as level texts: the answer a
#: survey's analyst would predict from the rest. Rows with any other level of the target (the
#: unanswered) are in the tools' input but neither trained nor scored on.
TARGETS = {
    "fair": ("any_affair", "1", "0"),            # Fair's outcome: any affair (his probit's y)
    "cces16": ("votetrump", "1", "0"),           # voted Trump, among presidential voters
    "gss": ("abany", "1", "0"),                  # legal abortion "for any reason": yes / no
    "anes": ("govt_biginterests", "1", "0"),     # government run by a few big interests: yes / no
    "mpls": ("personSearch", "YES", "NO"),       # the person was searched at the stop
}
SPLIT_SEED = 0
TEST_SHARE = 0.2
#: table -> (treatment column, its treated levels, its untreated levels, the covariates adjusted for),
#: level texts, chosen before any run: a natural question of each survey, adjusted for what comes
#: before the treatment. The outcome is :data:`TARGETS`' answer. fair: a good or very good marriage
#: (4-5 of 5) against the rest, on any affair, adjusted for Fair's demographics; cces16: a college
#: degree on a Trump vote, adjusted for age, sex, race and state; gss: 16 or more years of schooling on
#: legal abortion for any reason, adjusted for the year, age, sex, race and Hispanic origin.
EFFECTS = {
    "fair": ("rate_marriage", ("4", "5"), ("1", "2", "3"),
             ("age", "yrs_married", "children", "religious", "educ", "occupation", "occupation_husb")),
    "cces16": ("collegeed", ("1",), ("0",), ("age", "female", "racef", "state")),
    "gss": ("educ", tuple(str(y) for y in range(16, 21)), tuple(str(y) for y in range(16)),
            ("year", "age", "sex", "race", "hispanic")),
}


def split(frame: pd.DataFrame, target: str, seed: int = SPLIT_SEED,
          test: float = TEST_SHARE) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, test): ``test`` of each level of ``target``'s rows (rounded) held back, drawn
    with ``seed``; both in the table's row order, index reset; ``frame`` is not modified.

    >>> f = pd.DataFrame({"y": list("aaaaabbbbb"), "x": range(10)})
    >>> train, test = split(f, "y")
    >>> len(train), len(test), sorted(test["y"])
    (8, 2, ['a', 'b'])
    """
    if target not in frame.columns:
        raise ValueError(f"target {target!r}: expected a column of the table, one of {list(frame.columns)}")
    rng = np.random.default_rng(seed)
    held = np.zeros(len(frame), dtype=bool)
    for level in sorted(frame[target].astype(str).unique()):
        where = np.flatnonzero(frame[target].astype(str).to_numpy() == level)
        held[rng.permutation(where)[:round(test * len(where))]] = True
    return frame[~held].reset_index(drop=True), frame[held].reset_index(drop=True)


def utility(train: pd.DataFrame, test: pd.DataFrame, target: str, positive: str, negative: str) -> dict:
    """AUC and accuracy (at 0.5) on ``test`` of a logistic regression on one-hot features trained
    on ``train`` (rows whose ``target`` is ``positive`` or ``negative``; every other column a
    feature, levels unseen in training ignored). A train set of one class has no AUC: ``auc``
    None and the accuracy of always answering that class.

    >>> tr = pd.DataFrame({"y": ["1", "0"] * 50, "x": ["a", "b"] * 50})
    >>> u = utility(tr, tr, "y", "1", "0")
    >>> u["auc"], u["accuracy"], u["n_train"]
    (1.0, 1.0, 100)
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.preprocessing import OneHotEncoder

    def labelled(frame):
        frame = frame.astype(str)
        frame = frame[frame[target].isin([positive, negative])]
        return frame.drop(columns=target), (frame[target] == positive).to_numpy()

    x_train, y_train = labelled(train)
    x_test, y_test = labelled(test)
    out = {"target": target, "n_train": int(len(y_train)), "n_test": int(len(y_test)),
           "train_positive": float(y_train.mean()) if len(y_train) else None}
    if len(set(y_train)) < 2:
        majority = bool(y_train[0]) if len(y_train) else False
        return out | {"auc": None, "accuracy": float(np.mean(y_test == majority))}
    encoder = OneHotEncoder(handle_unknown="ignore")
    model = LogisticRegression(max_iter=2000).fit(encoder.fit_transform(x_train), y_train)
    p = model.predict_proba(encoder.transform(x_test))[:, 1]
    return out | {"auc": float(roc_auc_score(y_test, p)), "accuracy": float(np.mean((p >= 0.5) == y_test))}


def adjusted_effect(frame: pd.DataFrame, name: str) -> dict:
    """The adjusted effect of :data:`EFFECTS`' treatment on :data:`TARGETS`' outcome in ``frame``
    (level texts): the treatment's coefficient in a linear probability model of the outcome on the
    treatment and one-hot covariates (least squares), on the rows whose outcome and treatment are
    answered (``effect``), and how many rows it used. A frame with one arm only: ``effect`` None.

    >>> f = pd.DataFrame({"any_affair": ["1", "0", "0", "0"] * 25, "rate_marriage": ["5", "5", "1", "1"] * 25,
    ...                   **{c: ["a"] * 100 for c in EFFECTS["fair"][3]}})
    >>> round(adjusted_effect(f, "fair")["effect"], 6), adjusted_effect(f, "fair")["effect_rows"]
    (0.5, 100)
    """
    from sklearn.linear_model import LinearRegression
    from sklearn.preprocessing import OneHotEncoder

    target, positive, negative = TARGETS[name]
    treatment, treated, untreated, covariates = EFFECTS[name]
    frame = frame.astype(str)
    rows = frame[frame[target].isin([positive, negative]) & frame[treatment].isin([*treated, *untreated])]
    z = rows[treatment].isin(treated).to_numpy(dtype=float)
    if len(rows) == 0 or z.min() == z.max():
        return {"effect": None, "effect_rows": int(len(rows))}
    x = OneHotEncoder(drop="first", handle_unknown="ignore").fit_transform(rows[list(covariates)]).toarray()
    y = (rows[target] == positive).to_numpy(dtype=float)
    model = LinearRegression().fit(np.column_stack([z, x]), y)
    return {"effect": float(model.coef_[0]), "effect_rows": int(len(rows))}


def ceiling(name: str) -> dict:
    """The classifier trained on the real 80% itself (no privacy) and scored on the 20%."""
    frame, _ = table(name)
    train, test = split(frame, TARGETS[name][0])
    real = {}
    if name in EFFECTS:  # the effect on the 80%, and its sampling spread: 20 bootstrap resamples (seed 0)
        rng = np.random.default_rng(0)
        boot = [adjusted_effect(train.iloc[rng.integers(0, len(train), len(train))], name)["effect"] for _ in range(20)]
        real = {f"{k}_real": v for k, v in adjusted_effect(train, name).items()} | {"effect_bootstrap_sd": float(np.std(boot))}
    return {"tool": "real 80% (no privacy)", "table": name, "rows": len(train), "columns": len(frame.columns),
            "test_rows": len(test)} | utility(train, test, *TARGETS[name]) | real


def run_utility(tool: str, name: str, epsilon: float, delta: float, seed: int, python: str, timeout: float) -> dict:
    """One tool's release from the table's 80% (``bench_release_real.run``), scored downstream."""
    frame, _ = table(name)
    train, test = split(frame, TARGETS[name][0])
    def scored(synth):
        effect = adjusted_effect(synth, name) if name in EFFECTS else {}
        return utility(synth, test, *TARGETS[name]) | effect

    row = run(tool, name, epsilon, delta, seed, python, timeout, None, rows=train, extra=scored)
    return row | {"test_rows": len(test), "split_seed": SPLIT_SEED, "synth_levels": "level_text"}


def summary(paths) -> str:
    """Markdown: mean AUC, accuracy, 2-way TVD and CPU s over seeds per table, epsilon and tool."""
    rows = [json.loads(line) for path in paths for line in Path(path).read_text().splitlines() if line.strip()]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["table"], r.get("epsilon", "-"), r["tool"]), []).append(r)
    out = ["| table | epsilon | tool | runs | AUC | accuracy | 2-way TVD | CPU s |", "|---|---|---|---|---|---|---|---|"]
    for (name, eps, tool), g in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]), kv[0][2])):
        done = [r for r in g if "accuracy" in r]
        if not done:
            out.append(f"| {name} | {eps} | {tool} | 0 | {g[0]['status']} | | | |")
            continue
        aucs = [r["auc"] for r in done if r["auc"] is not None]
        cell = lambda k: f"{np.mean([r[k] for r in done]):.4f}" if k in done[0] else "-"  # noqa: E731
        out.append(f"| {name} | {eps} | {tool} | {len(done)} | {np.mean(aucs) if aucs else float('nan'):.4f} | "
                   f"{cell('accuracy')} | {cell('tvd2')} | {cell('cpu_s')} |")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="+", default=["fair"], choices=sorted(TARGETS))
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0])
    ap.add_argument("--delta", type=float, default=1e-9)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--peers", nargs="*", default=[], help="dpmm:mst, dpmm:aim, dpmm:privbayes, opendp:mst, opendp:aim")
    ap.add_argument("--no-privgraph", action="store_true", help="run the peers only")
    ap.add_argument("--ceiling", action="store_true", help="also the classifier trained on the real 80%")
    ap.add_argument("--python", default=sys.executable, help="dpmm's interpreter (its own venv)")
    ap.add_argument("--opendp-python", default="/work/venv-opendp/bin/python", help="OpenDP's interpreter")
    ap.add_argument("--timeout", type=float, default=600, help="wall seconds a run may take")
    ap.add_argument("--summary", type=Path, nargs="*", default=None, help="print the markdown table and stop")
    ap.add_argument("--out", type=Path, default=None, help="also append each row to this JSON-lines file")
    args = ap.parse_args(argv)
    if args.summary is not None:
        print(summary(args.summary))
        return
    for name in args.tables:
        if args.ceiling:
            line = json.dumps(ceiling(name))
            print(line, flush=True)
            append_line(args.out, line)
        for epsilon, seed in itertools.product(args.epsilon, range(args.first_seed, args.first_seed + args.seeds)):
            for tool in ([] if args.no_privgraph else ["privgraph"]) + args.peers:
                python = args.opendp_python if tool.startswith("opendp:") else args.python
                line = json.dumps(run_utility(tool, name, epsilon, args.delta, seed, python, args.timeout))
                print(line, flush=True)
                append_line(args.out, line)


if __name__ == "__main__":
    main()
