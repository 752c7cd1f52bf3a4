"""``privgraph plan``: what a release budget buys, from public facts only; spends nothing.

``privgraph plan --domain asia.json --rows 100000 --epsilon 1`` prints, per stage, the
predicted noise against the effect it must detect, whether the budget affords it, and the
recommended split (see :mod:`privgraph.release.planner`). It reads no data.

When the codebook names a person column (``"id"``), the person is the privacy unit
(:mod:`privgraph.privacy.person`): ``plan`` then shows what each bound k on a person's rows
(:data:`PERSON_BOUNDS`) costs in noise, the run at the user's budget per person planned at
the row target of each k, so that the user can choose k (``--max-rows-per-person``) from
public facts; with ``--max-rows-per-person`` the release (or ``--discover``) is planned at it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

import privgraph.declarations as declarations
from privgraph.cli.guarantee import RELATIONS
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
    max_rows_per_person: Optional[int] = RELEASE.option(),
    structure: str = RELEASE.option(),
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
    from privgraph.data.codebook import person_column
    from privgraph.privacy.person import check_unit, row_target

    person = person_column(domain)
    unit = check_unit(person, max_rows_per_person, neighbours) if max_rows_per_person is not None else None
    if discover:
        return plan_discovery(public, rows, epsilon=epsilon, delta=delta, neighbours=neighbours, ci_test=ci_test,
                              as_json=as_json, unit=unit, codebook=domain)
    if person is not None:
        costs = person_costs(public, rows, epsilon=epsilon, delta=delta, neighbours=neighbours, split=split, cap=cap,
                             effect=effect, cell=cell)
    if person is not None and unit is None:  # the codebook's person, no k yet: what each k costs
        return print_person_costs(costs, person, rows, epsilon, delta, neighbours, as_json)
    row_epsilon, row_delta = (epsilon, delta) if unit is None else row_target(epsilon, delta, unit.group)
    from privgraph.cli.progress import stages

    with stages(PLAN_STAGES) as stage:  # the codebook and --rows only: no data
        stage(PLAN_STAGES[0])
        result = plan_release(public, rows, epsilon=row_epsilon, delta=row_delta, split=split, cap=cap, effect=effect,
                              cell=cell, neighbours=neighbours if unit is None else "add_remove", structure=structure)
    if as_json:
        person_json = {} if unit is None else {"privacy_unit": {"person_column": unit.column, "max_rows_per_person":
                                                                unit.k, "epsilon_per_row": row_epsilon,
                                                                "delta_per_row": row_delta}, "per_k": costs}
        typer.echo(json.dumps({"structure": result.structure, "neighbours": neighbours, "split": result.split,
                               "recommended_split": result.recommended_split, "rounds": result.rounds,
                               "stages": result.rows(), **person_json}, default=float))
        return
    console = Console()
    from privgraph.release.stage import STRUCTURES

    share = STRUCTURES[result.structure].share_text(result)
    relation = "replace-one, n public" if neighbours == "replace_one" else "add/remove, n private: a public guess"
    if unit is not None:
        relation = (f"{unit.describe()} under {RELATIONS[neighbours]}: "
                    f"epsilon={row_epsilon:.4g}, delta={row_delta or 0:.3g} per row under add/remove, n private: "
                    "a public guess of the rows kept")
    console.print(f"release of {rows} rows at epsilon={epsilon:g}, delta={delta:g} ({relation}); "
                  f"structure {result.structure}, {share}")
    console.print(result.to_markdown(), markup=False, highlight=False)
    from privgraph.release.timing import release_time

    console.print(release_time(public.without_derived().sizes, epsilon).line(rows), highlight=False)
    verdict = "affordable" if result.affordable else "NOT affordable at every stage: see the rows marked NO"
    if person is not None:
        console.print(person_table(costs, person, rows))
    console.print(f"verdict: {verdict}. Nothing was read or spent.")


#: The bounds k on a person's rows whose cost ``plan`` shows when the codebook names a person.
PERSON_BOUNDS = (1, 2, 5, 10)


def person_costs(public, rows: int, *, epsilon: float, delta: float, neighbours: str, **planner) -> list[dict]:
    """For each k of :data:`PERSON_BOUNDS`: the row target (epsilon, delta per row) of the
    budget per person and the release planned at it (public facts only: the codebook, --rows
    as the guess of the rows kept, the budget)."""
    from privgraph.privacy.budget import BudgetTooSmall
    from privgraph.privacy.person import PersonUnit, row_target
    from privgraph.release import plan_release

    out = []
    for k in PERSON_BOUNDS:
        unit = PersonUnit("id", k, neighbours)
        row_epsilon, row_delta = row_target(epsilon, delta, unit.group)
        entry = {"k": k, "rows_per_person_in_ledger": unit.group, "epsilon_per_row": row_epsilon,
                 "delta_per_row": row_delta}
        try:
            result = plan_release(public, rows, epsilon=row_epsilon, delta=row_delta, neighbours="add_remove",
                                  **planner)
        except BudgetTooSmall as err:  # a budget too small at this k: said in its row, from public facts
            out.append(entry | {"structure": None, "stages": [], "affordable": False, "refused": str(err)})
            continue
        out.append(entry | {"structure": result.structure, "stages": result.rows(), "affordable": result.affordable})
    return out


def person_table(costs: list[dict], person: str, rows: int):
    """The rich table of :func:`person_costs`: each k's budget per row and its stages' noise."""
    from rich.table import Table

    table = Table(title=f"what each bound k on a person's rows costs (person column {person!r}; --rows {rows} as the "
                        "guess of the rows kept): noise against the effect each stage must detect")
    for name in ("k", "eps/row", "delta/row", "structure", "structure noise", "tables noise", "ok"):
        table.add_column(name, justify="left" if name == "structure" else "right")

    def noise(c, stage):
        found = [s for s in c["stages"] if s["stage"].startswith(stage)]
        return f"{found[0]['noise']:.4g} / {found[0]['effect_size']:.4g}" if found else "-"

    for c in costs:
        table.add_row(str(c["k"]), f"{c['epsilon_per_row']:.4g}", f"{c['delta_per_row'] or 0:.3g}",
                      c["structure"] or "refused", noise(c, "structure"), noise(c, "parameters"),
                      "yes" if c["affordable"] else "NO")
    return table


def print_person_costs(costs, person: str, rows: int, epsilon: float, delta: float, neighbours: str,
                       as_json: bool) -> None:
    """``plan`` with a codebook naming a person and no ``--max-rows-per-person``: the table of
    what each k costs, and how to plan at one."""
    import json

    if as_json:
        typer.echo(json.dumps({"person_column": person, "neighbours": neighbours, "per_k": costs}, default=float))
        return
    console = Console()
    console.print(f"the codebook names the person column {person!r}: the guarantee is for each person, at "
                  f"epsilon={epsilon:g}, delta={delta:g} per person, spent per row by group privacy")
    console.print(person_table(costs, person, rows))
    console.print("give --max-rows-per-person K to plan the release at one of them. Nothing was read or spent.")


#: What ``plan`` prints as its stage starts off a terminal (:mod:`privgraph.cli.progress`).
PLAN_STAGES = ("the planner's predictions (public facts only)",)


def plan_discovery(public, rows: int, *, epsilon: float, delta: float, neighbours: str, ci_test: str,
                   as_json: bool, unit=None, codebook=None) -> None:
    """``plan --discover``: the charges ``privgraph discover`` would reserve (refused where it
    would refuse) and what its level-0 tests can detect, from the codebook and ``--rows`` only;
    the line :class:`~privgraph.causal.power.NoPowerWarning` gives when they cannot detect an
    effect of plausible size."""
    import json

    from privgraph.causal import PrivPC

    from privgraph.cli.progress import stages

    from privgraph.privacy.person import row_estimator

    est = PrivPC(epsilon=epsilon, delta=delta, neighbours=neighbours, ci_test=ci_test,
                 max_rows_per_person=None if unit is None else unit.k)
    with stages(PLAN_STAGES) as stage:  # the codebook and --rows only: no data
        stage(PLAN_STAGES[0])
        plan = est.privacy_plan(public if unit is None else codebook, rows)
        detectable = (est if unit is None else row_estimator(est, unit, None)).detectable(public, rows)
    if as_json:
        typer.echo(json.dumps({"command": "discover", "neighbours": neighbours, "ci_test": ci_test,
                               "charges": [c.mechanism for c in plan.ledger], "composition": plan.composition,
                               "power": None if detectable is None else detectable.record()}, default=float))
        return
    console = Console()
    relation = "replace-one, n public" if neighbours == "replace_one" else "add/remove, n private: a public guess"
    if unit is not None:
        relation = f"{unit.describe()}, {relation.split(',')[0]}; per row under add/remove, n private"
    test = f"{detectable.test} test" if detectable is not None else f"--ci-test {ci_test}"
    console.print(f"discovery of {rows} rows at epsilon={epsilon:g}, delta={delta:g} ({relation}); {test}, "
                  f"{len(plan.ledger)} charges composed by {plan.composition}", highlight=False)
    if detectable is None:
        console.print("power: no prediction for this method", highlight=False)
    else:
        console.print(f"power: {detectable.line()}", highlight=False)
    console.print("Nothing was read or spent.")
