"""``privgraph direction``: the private causal direction of one pair, or of many pairs in a batch.

One pair: ``privgraph direction data.csv --x age --y income --epsilon 1``.
Batch: several files (one pair per file, the same --x/--y column names in each), or one
long table with a pair column: ``privgraph direction pairs.parquet --pair-column pair
--x a --y b --epsilon 1 --domain d.json --out results.json``. The settings and ``--out`` are
checked before any data is read (a bad one costs no budget); results are written atomically
(a temporary file in the same folder, then renamed), as JSON or CSV by the extension of ``--out``.

The pair column: the pairs are its codebook levels, in order, whatever the file holds (a
level without rows is a pair too small; a value outside them is recoded to the first level,
replace-one's fixed policy, and never shown). Each pair's size is printed and sets its
split, so the codebook must declare the column ``"public": true`` (its values are then
public knowledge and not protected, and the ledger says so): without that, or with
--x-bounds/--y-bounds (no levels), --pair-column is refused before any data is read. Under
replace-one of the long table a replaced record could otherwise move between pairs, making
the sizes private. With --infer-domain (NOT private) the pairs are the values that occur.

Accounting across pairs: each pair gets the full ``--epsilon``. If the pairs hold disjoint
records (the rows of a long table, files about different people), a record is in one pair
only and the guarantee per record is epsilon (parallel composition). If the same people
appear in several pairs, the guarantee is the sum, which the headline also prints.

``p_agreement`` (the table's "P(noise-free agrees)", the default RECI score only) is the
agreement probability: the chance that the noise-free score on this data (the same released
regressions, all rows, no privacy noise) points the same way. It covers the privacy noise
and the test part's sampling, and below ``--abstain-below`` (public, default 0.6) the
direction is ``undecided`` (no extra cost). It is NOT a confidence in the direction: on real
pairs a third of the answers reported at >= 0.99 can be wrong (docs/direction.md, "What the
agreement probability covers").
``p_causal_sim`` (the table's "P(causal, SIM)", the kendall score only) is the probability
that the reported direction is the causal one, calibrated on the equal mixture of the four
SIM families of simulated pairs (``privgraph.causal.direction.calibration``); below
``--abstain-below`` the direction is ``undecided``. It is not calibrated on the real pairs.
``p_noise_kept_order`` (the table's "P(noise kept the order)") is the probability that the
privacy noise did not swap the two scores, evaluated at the private margin (Theorem 3 or 5):
it covers the privacy noise only, not the sampling error of the scores (a wrong direction
with a large margin still reads near 1). It is not a confidence in the direction.
A pair of fewer than 20 rows (public) is answered ``undecided`` with its ``reason``, nothing
spent, rather than refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional, Tuple

import typer
from rich.console import Console
from rich.progress import Progress

from privgraph.cli.guarantee import COMPOSITIONS
import privgraph.declarations as declarations
from privgraph.cli.params import EstimatorOptions
from privgraph.outputs import check_outputs, write_atomically
from privgraph.validation import InvalidInput, UnknownName

# numpy, pandas and the estimators are imported where used: `privgraph --help` stays fast


def read_pairs(paths: List[Path], x: str, y: str, pair_column: Optional[str], as_text: bool = False,
               dialect=None, pairs=None, person: Optional[str] = None):
    """Yield ``(name, x_values, y_values)`` for every pair in the files (as Series named x, y),
    and the ``person`` column's values fourth when the codebook names one (``"id"``).

    One file without ``pair_column`` is one pair named after the file; with it, one pair
    per level of ``pairs`` (the pair column's public domain, :func:`_pair_domain`), in the
    codebook's order, whatever the file holds: a level without rows is an empty pair, and a
    value outside the levels goes through replace-one's fixed policy (recoded to the first
    level, :func:`~privgraph.data.frontdoor.encode_public`), so no value read from the file
    names a pair. Without ``pairs`` (``--infer-domain`` only: NOT private), one pair per value
    that occurs. Names are prefixed by the file's name when there are several files.
    ``as_text`` reads a CSV as text, so that no type is guessed from the data (the public
    domain then says how to read each value). A CSV is read by the fixed ``dialect`` (the
    codebook's, else RFC 4180): a line that does not parse is a record of missing values.

    >>> import tempfile
    >>> from privgraph.data import Domain
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("g,a,b\\nu,1,2\\nsecret,3,4\\nv,5,6\\n")
    >>> pairs = Domain(("g",), (3,), levels=(("u", "v", "w"),), public_columns={"g"})
    >>> [(name, list(xs)) for name, xs, _ in read_pairs([p], "a", "b", "g", as_text=True, pairs=pairs)]
    [('u', ['1', '3']), ('v', ['5']), ('w', [])]
    """
    from privgraph.data.files import read_table

    for path in paths:
        columns = [c for c in dict.fromkeys((x, y, pair_column, person)) if c is not None]
        frame = read_table(path, columns, as_text=as_text, dialect=dialect)
        if pair_column is None:
            yield path.stem, frame[x], frame[y], *([frame[person]] if person else [])
            continue
        for name, group in _pair_groups(frame, pair_column, pairs):
            yield (f"{path.stem}:{name}" if len(paths) > 1 else str(name), group[x], group[y],
                   *([group[person]] if person else []))


def _pair_groups(frame, pair_column: str, pairs):
    """``(name, rows)`` per pair: the public levels of ``pairs`` (every one, in order), or
    without them the values that occur (--infer-domain)."""
    if pairs is None:
        yield from frame.groupby(pair_column, sort=True)
        return
    from privgraph.data.frontdoor import check_invalid, encode_public

    codes = encode_public(frame[[pair_column]], pairs, check_invalid(None, "replace_one"))[:, 0]
    for code, level in enumerate(pairs.levels[0]):
        yield str(level), frame[codes == code]


def _pair_domain(path: Path, x: str, y: str, pair_column: Optional[str]):
    """The codebook's domain over the two columns, and the pair column's (None without one),
    which must be declared public (read before any data)."""
    from privgraph.data import read_codebook
    from privgraph.data.domain import check_public_column

    full = read_codebook(path)
    if missing := [c for c in (x, y) if c not in full.names]:
        raise UnknownName(f"columns {missing} are not in the domain codebook {str(path)!r} (its columns: {list(full.names)})")
    if pair_column is not None:
        check_public_column(full, pair_column, "--pair-column")
    return full.project([x, y]), None if pair_column is None else full.project([pair_column])


def write_rows(rows: list[dict], out: Path) -> None:
    """Write rows as JSON or CSV (by extension), atomically; the folder must exist.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "r.json"
    >>> write_rows([{"pair": "a", "direction": "x->y"}], out)
    >>> json.loads(out.read_text())[0]["direction"], [p.name for p in out.parent.iterdir()]
    ('x->y', ['r.json'])
    """
    if out.suffix.lower() == ".csv":
        import pandas as pd

        write_atomically(out, lambda tmp: pd.DataFrame(rows).to_csv(tmp, index=False))
    else:
        write_atomically(out, lambda tmp: Path(tmp).write_text(json.dumps(rows, indent=1)))


def result_row(name: str, model, n: int, error: str | None) -> dict:
    """One output row: the private result of a fitted model, or the error that stopped it.

    >>> result_row("p", None, 10, "need at least 200 rows")["direction"] is None
    True
    """
    row = {"pair": name, "rows": n, "direction": None, "score_x_to_y": None, "score_y_to_x": None,
           "p_agreement": None, "p_causal_sim": None, "p_noise_kept_order": None, "epsilon": None, "delta": None,
           "reason": None, "error": error}
    if model is not None:
        from privgraph.privacy.ledger import guarantee

        total = guarantee(model.ledger_, model.composition_, model.delta)  # per person with a unit
        row.update(direction=model.direction_, score_x_to_y=model.scores_["x->y"],
                   score_y_to_x=model.scores_["y->x"],
                   p_agreement=model.agreement_probability_, p_causal_sim=model.causal_probability_sim_,
                   p_noise_kept_order=model.noise_kept_order_, reason=model.reason_,
                   epsilon=total.epsilon, delta=total.delta)
    return row


#: The declarations of the estimator's parameters that the options named after them are read from.
ANM = EstimatorOptions(declarations.ANM)


def direction(
    data: List[Path] = typer.Argument(..., help="CSV or Parquet file(s); several files = one pair per file."),
    domain: Optional[Path] = typer.Option(None, "--domain", help="Public domain codebook naming --x and --y (continuous with bounds, or ordinal)."),
    infer_domain: bool = typer.Option(False, "--infer-domain", help="Scale by the data instead of a domain: the result is then NOT private."),
    x: str = typer.Option(..., "--x", help="Column of the first variable."),
    y: str = typer.Option(..., "--y", help="Column of the second variable."),
    epsilon: float = ANM.option(required=True),
    score: str = ANM.option(),
    abstain_below: float = ANM.option(),
    privacy: str = ANM.option(),
    delta: float = ANM.option(),
    neighbours: str = ANM.option(),
    max_rows_per_person: Optional[int] = ANM.option(),
    x_bounds: Optional[Tuple[float, float]] = typer.Option(None, metavar="LO HI", help="Public clipping bounds of x, two numbers: --x-bounds 0 100 (instead of --domain)."),
    y_bounds: Optional[Tuple[float, float]] = typer.Option(None, metavar="LO HI", help="Public clipping bounds of y, two numbers: --y-bounds 0 100 (instead of --domain)."),
    pair_column: Optional[str] = typer.Option(
        None, help="Long table: the column naming each pair. The pairs are its levels in the --domain codebook, "
                   "where it must be declared \"public\": true (each pair's size is printed, so its values are "
                   "not protected); values outside the levels are recoded to the first one."),
    out: Optional[Path] = typer.Option(None, help="Write the results here (.json or .csv), atomically."),
    seed: Optional[int] = typer.Option(None, help="Seed (tests/experiments only: seeded noise is NOT private)."),
    compositions: bool = COMPOSITIONS,
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace outputs that exist already (default: refuse them, before anything is read or spent)."),
) -> None:
    """Decide X -> Y or Y -> X for one or many pairs from privately released dependence scores."""
    console = Console()
    from privgraph.causal.direction import PrivateANM
    from privgraph.data import DomainRequired
    from privgraph.data.frontdoor import how_to_get_a_domain

    from privgraph.cli.options import check_options

    check_options(seed=seed)
    if x == y:
        raise InvalidInput(f"--x and --y name the same column {x!r}: a direction needs two variables")
    PrivateANM(epsilon=epsilon, delta=delta, neighbours=neighbours, score=score, privacy=privacy,
               abstain_below=abstain_below).check_params()  # the estimator's own checks, before any file is read
    check_outputs({"--out": (out, (".json", ".csv"))}, overwrite=overwrite)
    bounds = None if x_bounds is None and y_bounds is None else (x_bounds, y_bounds)
    if domain is not None and (infer_domain or bounds is not None):
        raise InvalidInput("give --domain, or --x-bounds/--y-bounds, or --infer-domain: one of them")
    pair_domain, person, codebook = None, None, domain
    if max_rows_per_person is not None and domain is None:
        from privgraph.privacy.person import check_unit

        check_unit(None, max_rows_per_person, neighbours)  # the one-line error: no codebook, no person column
    if domain is not None:
        from privgraph.data.codebook import person_column

        person = person_column(domain)  # the codebook's "id": read beside --x and --y, the person is the unit
        domain, pair_domain = _pair_domain(domain, x, y, pair_column)
    elif bounds is None and not infer_domain:
        raise DomainRequired(how_to_get_a_domain(f"the pair {x!r}, {y!r}").replace(
            "Give one:", "Give --x-bounds/--y-bounds, or"))
    elif pair_column is not None and not infer_domain:
        raise InvalidInput(f"--pair-column {pair_column!r} needs public levels, which --x-bounds/--y-bounds do not "
                           f"give: use a --domain codebook with column {pair_column!r} nominal or ordinal, its "
                           "levels, and \"public\": true")
    if infer_domain:
        from privgraph.cli.inputs import INFER_NOTICE

        console.print(INFER_NOTICE)
    # public bounds or a domain: every value read as text and mapped on its own (a value that
    # is no number is missing), so no record can change how a column is typed
    import privgraph.heartbeat as heartbeat
    from privgraph.cli.progress import stages

    with stages(("reading the pairs", "the direction models")) as stage:
        stage("reading the pairs")
        pairs = list(read_pairs(list(data), x, y, pair_column, as_text=not infer_domain,
                                dialect=None if domain is None else domain.dialect, pairs=pair_domain, person=person))
        if domain is None and not infer_domain:
            import pandas as pd

            pairs = [(name, pd.to_numeric(xs, errors="coerce").astype(float), pd.to_numeric(ys, errors="coerce").astype(float))
                     for name, xs, ys in pairs]
        batch = len(pairs) > 1
        from privgraph.privacy import Neighbours

        # the rows are public under replace-one of records only; else the size the fit ran on (released)
        public_n = person is None and Neighbours.parse(neighbours) is Neighbours.REPLACE_ONE
        rows, ledgers, caveats = [], [], set()
        if pair_domain is not None:  # public: the codebook's declaration, shown even if every pair fails
            from privgraph.data.domain import public_column_caveat

            caveats.add(public_column_caveat(pair_column))
        stage("the direction models")
        with Progress(console=console, transient=True, disable=not batch) as progress:
            task = progress.add_task("pairs", total=len(pairs))
            for i, (name, xs, ys, *ids) in enumerate(pairs):
                heartbeat.at(heartbeat.of(i + 1, len(pairs), "pair"))  # the pairs named by the input: public
                model = PrivateANM(epsilon=epsilon, score=score, privacy=privacy, delta=delta, bounds=bounds, abstain_below=abstain_below,
                                   random_state=None if seed is None else seed + i,  # one noise stream per pair
                                   neighbours=neighbours, max_rows_per_person=max_rows_per_person)
                try:
                    model.fit(xs, ys, domain=domain if person is None else codebook, infer_domain=infer_domain,
                              persons=ids[0] if ids else None)
                    rows.append(result_row(name, model, len(xs) if public_n else model.n_rows_, None))
                    ledger = model.ledger_ if pair_domain is None else model.ledger_.with_caveat(
                        public_column_caveat(pair_column))
                    caveats.update(ledger.caveats)
                    ledgers.append(ledger)
                except ValueError as err:
                    if not batch:
                        raise
                    rows.append(result_row(name, None, len(xs) if public_n else None, str(err)))
                progress.advance(task)
    _report(console, rows, batch)
    _privacy(console, ledgers, sorted(caveats), delta, seeded=seed is not None, compositions=compositions,
             relation=neighbours, privacy=privacy)
    if out is not None:
        write_rows(rows, out)
        console.print(f"results written to {out}")


def _report(console: Console, rows: list[dict], batch: bool) -> None:
    from rich.table import Table

    table = Table(title="Private causal direction")
    for col in ("pair", "rows (public; else the released size)", "direction", "score x->y", "score y->x", "P(noise-free agrees)",
                "P(causal, SIM)", "P(noise kept the order)", "error or reason"):
        table.add_column(col)
    for r in rows:
        fmt = lambda v: "-" if v is None else f"{v:.4g}"  # noqa: E731
        table.add_row(r["pair"], "-" if r["rows"] is None else str(r["rows"]), r["direction"] or "-", fmt(r["score_x_to_y"]),
                      fmt(r["score_y_to_x"]), fmt(r["p_agreement"]), fmt(r["p_causal_sim"]),
                      fmt(r["p_noise_kept_order"]), r["error"] or r["reason"] or "")
    console.print(table)
    console.print("P(noise kept the order): the privacy noise only, Theorem 3/5 at the private margin; sampling "
                  "error is not included. P(noise-free agrees), reci only: the chance that the noise-free score on "
                  "this data (all rows, no privacy noise) points the same way; privacy noise and the test part's "
                  "sampling; not the chance that the direction is causal. P(causal, SIM), kendall "
                  "only: calibrated on simulated SIM pairs, not on real ones.", soft_wrap=True)


def _privacy(console: Console, ledgers: list, caveats: list[str], delta: float, *, seeded: bool,
             compositions: bool, relation: str = "replace_one", privacy: str = "record") -> None:
    """The headline: one pair's guarantee; for a batch, each pair's (parallel composition over
    disjoint records) and, on the same line, the sum that holds when the pairs share records.
    Each pair's ledger composes by its privacy mode's accountant (:attr:`Mode.accountant
    <privgraph.causal.direction.modes.Mode.accountant>`, basic; :attr:`PrivateANM.composition_`)."""
    from privgraph.causal.direction.modes import MODES
    from privgraph.cli.guarantee import caveat_lines, headline, print_privacy, relation_of
    from privgraph.privacy.ledger import guarantee, merge

    if len(ledgers) == 1:
        return print_privacy(console, ledgers[0], MODES[privacy].accountant, delta, relation=relation, seeded=seeded,
                             compositions=compositions)
    if ledgers:  # with a person unit each total is composed per row and converted per person (guarantee)
        accountant = MODES[privacy].accountant  # a pair was fitted: the mode is a registered one
        per_pair = max((guarantee(ledger, accountant, delta) for ledger in ledgers), key=lambda cost: cost.epsilon)
        shared = guarantee(merge(ledgers), accountant, delta)
        who = "records" if ledgers[0].unit is None else "persons"
        console.print(headline(per_pair, relation_of(ledgers[0], relation),
                               f" for each pair if the {len(ledgers)} pairs hold disjoint {who}; if they share "
                               f"{who}, ({shared.epsilon:.4g}, {shared.delta:.3g}), composed by {accountant.name}",
                               unit=ledgers[0].unit))
        if compositions:
            from privgraph.cli.ledger_table import composition_table

            console.print(composition_table(merge(ledgers), delta or 1e-6))
    for line in caveat_lines(caveats, seeded):
        console.print(line)
