"""``privgraph plan``: what a release budget buys, from public facts only; spends nothing.

``privgraph plan --domain asia.json --rows 100000 --epsilon 1`` prints, per stage, the
predicted noise against the effect it must detect, whether the budget affords it, and the
recommended split (see :mod:`privgraph.release.planner`). It reads no data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

import privgraph.declarations as declarations
from privgraph.cli.params import EstimatorOptions


#: The declarations of the estimator's parameters that the options named after them are read from.
RELEASE = EstimatorOptions(declarations.RELEASE)
#: ``--discover``'s estimator (its ``--ci-test``).
PRIVPC = EstimatorOptions(declarations.PRIVPC)


def plan(
    domain: Path = typer.Option(..., "--domain", help="The public domain codebook (JSON)."),
    rows: int = typer.Option(..., help="Number of rows of the table to release (public under replace-one; under add/remove a public guess the predictions use)."),
    epsilon: float = RELEASE.option(required=True),
    delta: float = RELEASE.option(),
    split: Optional[float] = RELEASE.option(),
    cap: int = RELEASE.option(),
    effect: float = typer.Option(0.1, help="Dependence (phi coefficient) the structure stage must detect."),
    cell: float = typer.Option(0.01, help="Probability of the cell whose relative error the parameters must bound."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
    neighbours: str = RELEASE.option(),
    discover: bool = typer.Option(False, "--discover", help="Plan `privgraph discover` with these settings instead of a release: its charges and the smallest effect its tests can detect."),
    ci_test: str = PRIVPC.option(),
) -> None:
    """Predict, without reading data, what a release with this budget can afford."""
    import json

    from privgraph.data import read_codebook
    from privgraph.privacy import Neighbours
    from privgraph.release import plan_release

    from privgraph.cli.options import check_options

    check_options(rows=rows, effect=effect, cell=cell)
    neighbours = Neighbours.parse(neighbours).value  # one spelling in the output
    if not domain.is_file():
        raise FileNotFoundError(f"--domain {str(domain)!r}: no such codebook file")
    public = read_codebook(domain)
    if discover:
        return plan_discovery(public, rows, epsilon=epsilon, delta=delta, neighbours=neighbours, ci_test=ci_test,
                              as_json=as_json)
    from privgraph.cli.progress import stages

    with stages(PLAN_STAGES) as stage:  # the codebook and --rows only: no data
        stage(PLAN_STAGES[0])
        result = plan_release(public, rows, epsilon=epsilon, delta=delta, split=split, cap=cap, effect=effect,
                              cell=cell, neighbours=neighbours)
    if as_json:
        typer.echo(json.dumps({"structure": result.structure, "neighbours": neighbours, "split": result.split,
                               "recommended_split": result.recommended_split, "rounds": result.rounds,
                               "stages": result.rows()}, default=float))
        return
    console = Console()
    of = {"gauss-pc": " of rho (one zCDP budget)", "priv-pc": " of epsilon"}.get(result.structure, "")
    share = (f"structure share {result.split:g}{of} (recommended {result.recommended_split:g})"
             if result.structure != "tree" else "its own shares")
    relation = "replace-one, n public" if neighbours == "replace_one" else "add/remove, n private: a public guess"
    console.print(f"release of {rows} rows at epsilon={epsilon:g}, delta={delta:g} ({relation}); "
                  f"structure {result.structure}, {share}")
    console.print(result.to_markdown(), markup=False, highlight=False)
    from privgraph.release.timing import release_time

    console.print(release_time(public.sizes, epsilon).line(rows), highlight=False)
    verdict = "affordable" if result.affordable else "NOT affordable at every stage: see the rows marked NO"
    console.print(f"verdict: {verdict}. Nothing was read or spent.")


#: What ``plan`` prints as its stage starts off a terminal (:mod:`privgraph.cli.progress`).
PLAN_STAGES = ("the planner's predictions (public facts only)",)


def plan_discovery(public, rows: int, *, epsilon: float, delta: float, neighbours: str, ci_test: str,
                   as_json: bool) -> None:
    """``plan --discover``: the charges ``privgraph discover`` would reserve (refused where it
    would refuse) and what its level-0 tests can detect, from the codebook and ``--rows`` only;
    the line :class:`~privgraph.causal.power.NoPowerWarning` gives when they cannot detect an
    effect of plausible size."""
    import json

    from privgraph.causal import PrivPC

    from privgraph.cli.progress import stages

    est = PrivPC(epsilon=epsilon, delta=delta, neighbours=neighbours, ci_test=ci_test)
    with stages(PLAN_STAGES) as stage:  # the codebook and --rows only: no data
        stage(PLAN_STAGES[0])
        plan = est.privacy_plan(public, rows)
        detectable = est.detectable(public, rows)
    if as_json:
        typer.echo(json.dumps({"command": "discover", "neighbours": neighbours, "ci_test": ci_test,
                               "charges": [c.mechanism for c in plan.ledger], "composition": plan.composition,
                               "power": None if detectable is None else detectable.record()}, default=float))
        return
    console = Console()
    relation = "replace-one, n public" if neighbours == "replace_one" else "add/remove, n private: a public guess"
    test = f"{detectable.test} test" if detectable is not None else f"--ci-test {ci_test}"
    console.print(f"discovery of {rows} rows at epsilon={epsilon:g}, delta={delta:g} ({relation}); {test}, "
                  f"{len(plan.ledger)} charges composed by {plan.composition}", highlight=False)
    if detectable is None:
        console.print("power: no prediction for this method", highlight=False)
    else:
        console.print(f"power: {detectable.line()}", highlight=False)
    console.print("Nothing was read or spent.")
