"""A release's outputs: graph (JSON, DOT, PNG), model, synthetic rows, ledger and a report.

:func:`release_outputs` names the files of a release directory (checked before any spend
by the command), :func:`release_writers` renders them for
:func:`privgraph.outputs.write_all` (all or nothing). Everything written is the released
graph, the released noisy tables, the model fitted from them, rows sampled from it and
public facts (domain, n, the plan): post-processing of the release.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from privgraph.data.frontdoor import column_codes
from privgraph.graphs.export import drawing_writer
from privgraph.mrf.noisy_tables import coarsen
from privgraph.release.figures import bin_names, budget_figure, marginals_figure, png_writer, svg_writer
from privgraph.mrf.sampling import SAMPLING_PATHS
from privgraph.privacy import Neighbours
from privgraph.privacy.composition import METHODS, RDP
from privgraph.privacy.ledger import guarantee
from privgraph.privacy.resize import SIZE_SHARE
from privgraph.release.levels import RARE_SIGMAS
from privgraph.release.misfit import BEYOND_SDS, release_misfits
from privgraph.release.page import page_writer
from privgraph.release.planner import size_accountant
from privgraph.release.stage import stage_of
from privgraph.release.structures import adaptive_text  # the report's words on AIM's rounds, re-exported
from privgraph.release.tree import proportions
from privgraph.validation import InvalidInput

#: Files of a release directory by role; the synthetic rows take ``.csv`` or ``.parquet``.
FILES = {"graph_json": "graph.json", "graph_dot": "graph.dot", "graph_png": "graph.png", "model": "model.json",
         "ledger": "ledger.json", "report": "report.md", "budget_png": "budget.png",
         "marginals_png": "marginals.png", "plan": "plan.json", "report_html": "report.html"}


def release_outputs(out_dir, data_format: str = "csv") -> dict[str, Path]:
    """The paths a release writes into ``out_dir`` by role (synthetic as ``synthetic.<format>``).

    >>> sorted(release_outputs("out"))[:3]
    ['budget_png', 'graph_dot', 'graph_json']
    """
    if data_format not in ("csv", "parquet"):
        raise InvalidInput(f"--format must be csv or parquet, got {data_format!r}")
    out = Path(out_dir)
    return {role: out / name for role, name in FILES.items()} | {"synthetic": out / f"synthetic.{data_format}"}


def relation(release) -> str:
    """The release's neighbouring relation, ``"replace_one"`` or ``"add_remove"``."""
    return Neighbours.parse(release.neighbours).value


def privacy_summary(release) -> dict:
    """The privacy facts every output carries: relation, totals, ledger rows, caveats; the
    number of rows as ``n_rows_public`` (replace-one) or ``n_rows_estimated`` (add/remove:
    estimated from the noisy tables, post-processing)."""
    total = guarantee(release.ledger_, release.composition_, release.delta)
    unit = release.ledger_.unit  # a person unit: the rows' number is private under either relation
    rows = "n_rows_public" if relation(release) == "replace_one" and unit is None else "n_rows_estimated"
    person = {} if unit is None else {"privacy_unit": {"person_column": unit.column, "max_rows_per_person": unit.k,
                                                       "ledger_rows_per_person": unit.group}}
    return {"neighbours": relation(release), **person, rows: release.n_rows_, "epsilon": total.epsilon,
            "delta": total.delta, "composition": total.method, "ledger": release.ledger_.rows(),
            "caveats": list(release.ledger_.caveats)}


def release_writers(release, synthetic, paths: dict[str, Path]) -> dict:
    """``{path: writer}`` for every output of a fitted release and its synthetic rows, drawn
    by ``release.sample`` (the report names the path that ran, ``release.sampling_``)."""
    privacy = privacy_summary(release)
    fitted = json.loads(release.parameters_.to_json())  # its ledger is the parameters' alone: privacy's is whole
    model = {k: v for k, v in fitted.items() if k not in ("ledger", "caveats")} | {
        "merged_levels": release.levels_.merged_text(), "privacy": privacy}
    plan = {"split": release.plan_.split, "rounds": release.plan_.rounds, "stages": release.plan_.rows(),
            "recommended_split": release.plan_.recommended_split, "tree_cap": release.tree_cap,
            "model_cells": release.model_cells_}
    checks = marginal_checks(release, synthetic)
    stage = stage_of(release)
    graph = stage.writer
    title = f"released graph ({stage.label}, {relation(release).replace('_', '-')})"
    budget, marginals, report = budget_figure(budget_rows(release)), marginals_figure(checks), \
        report_markdown(release, checks, paths, missing=missing_caveats(release, synthetic))
    figures = {paths["budget_png"].name: svg_writer(budget), paths["graph_png"].name:
               drawing_writer(release.graph_, "svg", title=title), paths["marginals_png"].name: svg_writer(marginals)}
    writers = {
        paths["graph_json"]: graph(release.graph_, ".json", privacy),
        paths["graph_dot"]: graph(release.graph_, ".dot", privacy),
        paths["graph_png"]: drawing_writer(release.graph_, "png", title=title),
        paths["model"]: _text(json.dumps(model)),
        paths["ledger"]: _text(json.dumps(privacy | {"accounting_methods_compared": method_comparison(release)},
                                          indent=1)),
        paths["plan"]: _text(json.dumps(plan, indent=1, default=float)),
        paths["budget_png"]: png_writer(budget),
        paths["marginals_png"]: png_writer(marginals),
        paths["report"]: _text(report),
        paths["report_html"]: page_writer(report, figures),  # the same report, its figures inline as SVG
    }
    if paths["synthetic"].suffix == ".parquet":
        writers[paths["synthetic"]] = lambda tmp: synthetic.to_parquet(tmp, index=False)
    else:
        writers[paths["synthetic"]] = lambda tmp: synthetic.to_csv(tmp, index=False)
    return writers


def method_comparison(release) -> dict:
    """The release's ledger totalled by every accounting method at its delta, for
    ledger.json: a comparison of methods, not the guarantee (which is ``epsilon``, ``delta``
    and ``composition`` beside it). A method that gives no finite total is None."""
    out = {"note": "each accounting method's total of the same charges; the guarantee is the "
                   "release's own composition (the top-level epsilon, delta, composition)"}
    for method in METHODS:
        try:
            cost = guarantee(release.ledger_, method, release.delta or None)
        except ValueError:
            cost = None
        finite = cost is not None and np.isfinite(cost.epsilon)
        out[method] = {"epsilon": cost.epsilon, "delta": cost.delta} if finite else None
    return out


def _text(text: str):
    return lambda tmp: Path(tmp).write_text(text + "\n")


def budget_rows(release) -> list[tuple[str, str, float]]:
    """``(stage, what it paid for, epsilon)`` for every part of the ledger, each composed alone
    by the release's composition: the size (when stage 0 released it), the structure's
    charges (the tree's by what each paid for: its one-way tables, selections, pair tables,
    rounds) and the parameters' tables. Together they are the whole ledger."""
    composition, delta = release.composition_, release.delta or None

    def alone(ledger) -> float:
        return ledger.total(composition, delta).epsilon

    rows = [("0 size", "the number of rows (Laplace, sensitivity 1)", release.plan_.size_epsilon)] \
        if release.plan_.size_epsilon else []
    return rows + [(stage, what, alone(ledger)) for stage, what, ledger in stage_of(release).budget(release)]


def _size_row(release) -> str:
    """Stage 0's table row (with its line end), or nothing when no size was released: why it
    was released and its exact share of the budget."""
    eps = release.plan_.size_epsilon
    if not eps:
        return ""
    zcdp = size_accountant(release.delta) == RDP
    share = (f"{SIZE_SHARE:.0%} of rho, the zCDP budget (epsilon, delta) converts to (epsilon {eps:.4g} alone, "
             f"{100 * eps / release.epsilon:.3g}% of epsilon {release.epsilon:g})" if zcdp
             else f"{SIZE_SHARE:.0%} of epsilon ({eps:.4g})")
    use = stage_of(release).size_use(release)
    return f"| 0 size | the number of rows with Laplace noise (sensitivity 1), {share}; {use} |\n"


def _structure_row(release) -> str:
    """What stage 1 did, in one table cell (the structure's words)."""
    return stage_of(release).structure_row(release)


def _orientation_row(release) -> str:
    """What stage 2 did, in one table cell: nothing for the tree (no orientation claim)."""
    return stage_of(release).orientation_row(release)


def _parameters_row(release) -> str:
    """What stage 3 released, in one table cell."""
    return stage_of(release).parameters_row(release)


def distinct_tables(cliques) -> list[tuple[str, ...]]:
    """The model's tables counted once each (a pair measured twice, or as ``(b, a)``, is one
    table), in first-seen order: what the report and the command line count.

    >>> distinct_tables([("a",), ("a", "b"), ("b", "a"), ("a", "b")])
    [('a',), ('a', 'b')]
    """
    first: dict = {}
    for c in cliques:
        first.setdefault(frozenset(c), tuple(c))
    return list(first.values())


def model_tables_text(release) -> str:
    """The fitted model's distinct tables, one-way ones apart (the command line's words).

    The count is of :func:`distinct_tables` of the model's cliques."""
    tables = distinct_tables(release.parameters_.model_.cliques)
    ones = sum(len(c) == 1 for c in tables)
    return f"{len(tables)} distinct model tables ({ones} one-way, {len(tables) - ones} of two or more columns)"


def marginal_checks(release, synthetic, limit: int = 6) -> list[dict]:
    """For the first ``limit`` released tables: the noisy table (clipped, normalised), the
    synthetic rows' table, their total-variation distance (both post-processing), and each
    axis's code names (``labels``: the codebook's levels, the merged rare levels' code, a
    bin's first and last level), the tables flat in C order over those axes."""
    noisy = release.parameters_.marginals_
    out = []
    for g, (clique, table) in list(enumerate(zip(noisy.group_cliques(), noisy.tables)))[:limit]:
        released = proportions(table)  # flat, as the synthetic table below
        merged = release.levels_.merged.project(clique)
        bins = noisy.group_bins(g) or (None,) * len(clique)
        synth = _proportions(synthetic, release.levels_, clique).reshape(merged.shape)
        synth = coarsen(synth, noisy.group_bins(g)).ravel()
        out.append({"clique": clique, "released": released, "synthetic": synth,
                    "tvd": 0.5 * float(np.abs(released - synth).sum()),
                    "labels": tuple(bin_names(levels, b) for levels, b in zip(merged.levels, bins))})
    return out


def _proportions(frame, levels, clique) -> np.ndarray:
    """The synthetic rows' table over ``clique`` in the released tables' (merged) codes."""
    domain = levels.domain
    codes = [levels.codes[domain.index(name)][column_codes(frame[name], domain, name)] for name in clique]
    shape = levels.merged.project(clique).shape
    counts = np.bincount(np.ravel_multi_index(tuple(codes), shape), minlength=int(np.prod(shape)))
    return counts / max(1, counts.sum())


def what_ran(release) -> str:
    """The report's account of what actually ran: the structure the planner chose, the
    model's cliques, its junction tree against the public cap, the model's inference (exact:
    the cap keeps it so) and the path the synthetic rows took."""
    cliques = distinct_tables(release.parameters_.model_.cliques)
    rounds = getattr(release.structure_, "adaptive", None)
    adaptive = f"- Adaptive rounds: {adaptive_text(rounds).rstrip(', ')}.\n" if rounds is not None else ""
    return (f"- Structure: {stage_of(release).label} (asked for: {release.structure}).\n"
            f"{adaptive}"
            f"- Model: {len(cliques)} distinct tables (a table measured more than once counted once), "
            f"{model_cliques_text(cliques)}.\n"
            f"- Rare levels: {merged_levels_text(release.levels_.merged_text())}.\n"
            f"- Junction tree: {release.model_cells_:,} cells, within the public model-size cap of "
            f"{release.tree_cap:,} cells (`tree_cap`, fixed before the data was read; every table the release "
            f"added had to keep the model within it).\n"
            f"- Model's inference: exact (junction tree), in the fit and in sampling; never loopy belief "
            f"propagation or Gibbs sampling.\n"
            f"- Synthetic rows: drawn {SAMPLING_PATHS[release.sampling_]}.")


def merged_levels_text(merged: dict) -> str:
    """Which columns' rare levels were merged (from the released one-way tables; the model and
    its tables are over the merged codes, the synthetic rows over the original levels).

    >>> merged_levels_text({}), merged_levels_text({"age": ["97", "98", "99"]})
    ('none merged', 'merged into one code each (3 sigma of the one-way noise; drawn back by their noisy shares) in age (3 levels)')
    """
    if not merged:
        return "none merged"
    return (f"merged into one code each ({RARE_SIGMAS:g} sigma of the one-way noise; drawn back by their noisy shares) in "
            + ", ".join(f"{name} ({len(levels)} levels)" for name, levels in merged.items()))


def model_cliques_text(cliques) -> str:
    """The model's cliques, the one-way ones counted apart (post-processing of the release).

    >>> model_cliques_text([("a",), ("b",), ("a", "b"), ("b", "c")])
    '2 one-way and (a, b), (b, c)'
    """
    wider = [f"({', '.join(c)})" for c in cliques if len(c) > 1]
    ones = len(cliques) - len(wider)
    return (f"{ones} one-way and " if ones else "") + (", ".join(wider) or "no wider table")


def _graph_text(release) -> str:
    """What the released graph is, in its own terms: a tree's undirected edges, or a CPDAG's."""
    return stage_of(release).graph_text(release)


#: The rows of each list of the report's section on the model's worst answers.
WORST_ROWS = 8
_REASONS = {"cap": "adding its table would pass the model-size cap", "bins": "measured only in bins",
            "not selected": "fits the cap; not selected"}


def worst_answers_section(release) -> str:
    """The report's section on where the model answers worst, as far as the released values
    can tell (:func:`privgraph.release.misfit.release_misfits`: the released tables against the
    model, beside their noise's expected distance; the pairs no released table measures, the
    widest first, with why). Post-processing of the release: no data is read."""
    if release.parameters_.model_ is None:  # a custom fit that returned no model
        return ""
    misfits, unmeasured, count = release_misfits(release, limit=WORST_ROWS)
    beyond = sum(m.beyond for m in misfits)
    tables = "\n".join(
        f"| {_cell(', '.join(m.clique))}{' (in bins)' if m.binned else ''} | {m.cells} | {m.distance:.4f} | "
        f"{m.noise:.4f} | {m.ratio:.2f} | {'**yes**' if m.beyond else 'no'} |" for m in misfits[:WORST_ROWS])
    pairs = len(release.domain_.names) * (len(release.domain_.names) - 1) // 2
    widest = "\n".join(f"| {_cell(' x '.join(u.pair))} | {u.cells} | {_REASONS[u.reason]} | "
                       f"{_cell(', '.join(u.merged)) or '-'} |" for u in unmeasured[:WORST_ROWS])
    left = (f"{count} of the {pairs} pairs of columns are in no released table and are answered only through the "
            f"model's structure. On the benchmark's real tables most of the error above the sampling floor is in "
            f"such pairs, the worst of them wide pairs the model-size cap kept out (docs/benchmarks/release.md); "
            f"the widest {len(unmeasured)} (cells after rare levels were merged), with why:\n\n"
            f"| pair | cells | why not measured | rare levels merged in |\n|---|---|---|---|\n{widest}"
            if unmeasured else "Every pair of columns is in a released table.")
    return f"""## Where the model answers worst (released values only)

Each released table against the model fitted to all of them, as a total-variation distance,
beside the distance its noise alone explains (the expected distance of noise of its public
scale); a table beyond the noise by {BEYOND_SDS:g} of the noise's standard deviations is one the
model does not hold together with the others. Released tables beyond their noise: {beyond} of
{len(misfits)}; the worst {min(WORST_ROWS, len(misfits))} by the ratio:

| released table | cells | model vs released | noise alone | ratio | beyond the noise |
|---|---|---|---|---|---|
{tables}

{left}
"""


def derived_text(release) -> str:
    """The report's line on the derived columns (:mod:`privgraph.data.derived`), empty where there
    are none: public rules, never read from the data."""
    domain = release.derived_domain_
    if domain is None:
        return ""
    rules = "; ".join(f"`{r.target}` = `{r.text}`" for r in domain.derived)
    return (f"\n- Derived columns, computed on the synthetic rows by the codebook's public rules (never read from "
            f"the data, counted or modelled; no budget): {rules}.")


def _cell(text: str) -> str:
    """Text for a Markdown table cell (a ``|`` in a column name escaped)."""
    return text.replace("|", "\\|")


def missing_caveats(release, synthetic) -> list[str]:
    """The report's caveats on missing and invalid values (:mod:`privgraph.data.missing`): per
    column with a missing level, how many synthetic rows are missing there (the rows are
    released: post-processing), and which columns treat a missing value as invalid, recoded
    with any value outside the codebook (how many is private: no number is given). Public
    facts (the codebook) and released rows only; no data is read."""
    domain, n = release.domain_, len(synthetic)
    lines = [f"missing values: column `{name}` keeps them as a level of its own (\"missing\": \"level\"): "
             f"{k} of the {n} synthetic rows ({100 * k / max(n, 1):.1f}%) are missing there, as the released model "
             "draws them (the data's share is private; this one carries the release's noise)"
             for name in domain.missing_names for k in [int(synthetic[name].isna().sum())]]
    invalid = [f"`{name}`" for name in domain.names if name not in domain.missing_names]
    treated = (f"and a missing value in column(s) {', '.join(invalid)} (\"missing\": \"invalid\") "
               if invalid else "")
    lines.append(f"invalid values: a value outside the codebook in any column {treated}is recoded to the column's "
                 "first level (a binned column's first bin), a fixed map of each record under either relation; how "
                 "many rows that concerned is private and not released (`privgraph domain DATA --check CODEBOOK` "
                 "counts them for the data owner)")
    return lines


def report_markdown(release, checks, paths, *, missing=()) -> str:
    """The report: what was released, at what cost, what ran, what is private and what is not;
    ``missing``: :func:`missing_caveats`' lines, among the caveats."""
    p = privacy_summary(release)
    budget = "\n".join(f"| {stage} | {_cell(what)} | {eps:.4g} |" for stage, what, eps in budget_rows(release))
    caveats = "\n".join([f"  - **NOT PRIVATE:** {c}" for c in p["caveats"]] + [f"  - {c}" for c in missing]) or "  - none"
    rows = "\n".join(f"| {_cell(', '.join(c['clique']))} | {c['tvd']:.4f} |" for c in checks)
    if "privacy_unit" in p:  # the person is the unit (privgraph.privacy.person)
        person = p["privacy_unit"]
        unit, public_n = (f"**{p['neighbours'].replace('_', '-').replace('add-remove', 'add/remove')}** neighbours "
                          f"for each person (column `{person['person_column']}`, at most "
                          f"{person['max_rows_per_person']} rows each, chosen at random; the number of rows is "
                          f"private: {release.n_rows_} is its estimate)"), "the\n  bound on each person's rows, "
    elif p["neighbours"] == "replace_one":
        unit, public_n = (f"**replace-one**\nneighbours (one row changed; the number of rows, {release.n_rows_}, is "
                          "public)"), "the\n  number of rows, "
    else:
        unit, public_n = (f"**add/remove**\nneighbours (one row added or removed; the number of rows is private: "
                          f"{release.n_rows_} is its estimate from the noisy tables)"), ""
    return f"""# privgraph release

**Guarantee**: ({p['epsilon']:.4g}, {p['delta']:.3g})-differential privacy under {unit}, composed by
{p['composition']} composition over every charge in `{paths['ledger'].name}`.

## What ran

{what_ran(release)}

## What is private and what is not

- Private (covered by the guarantee): the graph, the model, the synthetic rows, the released
  tables behind the plots below. All of them are functions of the noisy releases listed in
  the ledger.
- Public (not protected, by assumption): the domain codebook (names, levels, order), {public_n}the
  parameters of the run (epsilon, split, cap, alpha).
- The synthetic rows are drawn from the model; they are not records of the data and
  carry no more information than the model.{derived_text(release)}
- Caveats:
{caveats}

## Stages

| stage | what ran |
|---|---|
{_size_row(release)}| 1 structure | {_cell(_structure_row(release))} |
| 2 orientation | {_cell(_orientation_row(release))} |
| 3 parameters | {_cell(_parameters_row(release))} |
| 4 synthetic rows | drawn {SAMPLING_PATHS[release.sampling_]} |

## Budget

What each part of the ledger paid for, each composed alone at delta {p['delta']:.3g} (stages 2
and 4 are post-processing and cost nothing); together they cost ({p['epsilon']:.4g}, {p['delta']:.3g}) by
{p['composition']} composition, which for Gaussian (zCDP) parts is less than the sum.

| stage | paid for | epsilon |
|---|---|---|
{budget}

![budget split]({paths['budget_png'].name})

## Graph

{_graph_text(release)} (`{paths['graph_json'].name}`, `{paths['graph_dot'].name}`).

![graph]({paths['graph_png'].name})

## Planner's prediction (public facts only)

{release.plan_.to_markdown()}

## Released tables against the synthetic rows

| clique | TVD (released noisy table vs synthetic rows) |
|---|---|
{rows}

![marginals]({paths['marginals_png'].name})

{worst_answers_section(release)}"""


__all__ = ["FILES", "adaptive_text", "budget_rows", "derived_text", "distinct_tables", "marginal_checks", "method_comparison", "model_cliques_text",
           "missing_caveats", "model_tables_text", "privacy_summary", "relation", "release_outputs", "release_writers", "report_markdown",
           "what_ran", "worst_answers_section"]
