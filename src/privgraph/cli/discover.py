"""``privgraph discover``: private causal discovery from a file or a bundled network.

Prints the CPDAG, the privacy report (budget, what was reserved and spent, the
composition used) and, when the data comes from a bundled network, the scores against
its true graph. Output paths are checked before anything is fitted (a bad one costs no
budget), and the outputs are written all or nothing once the fit is done.
"""

from __future__ import annotations

import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from privgraph.cli.guarantee import COMPOSITIONS
from privgraph.cli.inputs import SPARK_MASTER
import privgraph.declarations as declarations
from privgraph.cli.params import EstimatorOptions
from privgraph.validation import InvalidInput

#: The declarations of the estimator's parameters that the options named after them are read from.
PRIVPC = EstimatorOptions(declarations.PRIVPC)


def discover(
    data: Optional[Path] = typer.Argument(None, help="CSV or Parquet file of discrete columns (needs --domain)."),
    domain: Optional[Path] = typer.Option(None, "--domain", help="The public domain codebook of DATA (JSON; draft one with `privgraph domain`)."),
    infer_domain: bool = typer.Option(False, "--infer-domain", help="Read the domain from DATA instead: the result is then NOT private."),
    engine: str = typer.Option("duckdb", help="What counts DATA: duckdb (out of core, default) or spark."),
    spark_master: Optional[str] = SPARK_MASTER,
    network: Optional[str] = typer.Option(None, help="A bundled network to sample from instead (asia, cancer, ...)."),
    samples: int = typer.Option(100_000, help="Rows to sample from --network."),
    epsilon: float = PRIVPC.option(),
    delta: float = PRIVPC.option(),
    alpha: float = PRIVPC.option(),
    method: str = PRIVPC.option(),
    ci_test: str = PRIVPC.option(),
    max_cond_size: Optional[int] = PRIVPC.option(),
    max_rounds: Optional[int] = PRIVPC.option(),
    degenerate: str = PRIVPC.option(),
    orient: str = PRIVPC.option(),
    orient_share: float = PRIVPC.option(),
    neighbours: str = PRIVPC.option(),
    max_rows_per_person: Optional[int] = PRIVPC.option(),
    seed: Optional[int] = typer.Option(None, help="Seed the noise (experiments only: seeded noise is NOT private)."),
    data_seed: int = typer.Option(0, help="Seed for sampling --network (public synthetic data)."),
    out: Optional[Path] = typer.Option(None, help="Write the CPDAG here (.json, .dot or .graphml, or any name with --format)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Format of --out: json, dot or graphml (default: from its suffix)."),
    plot: Optional[Path] = typer.Option(None, help="Draw the CPDAG to this image (.png, .svg or .pdf)."),
    compositions: bool = COMPOSITIONS,
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace outputs that exist already (default: refuse them, before anything is read or spent)."),
) -> None:
    """Learn a causal graph (CPDAG) under a total privacy budget."""
    from privgraph.cli.inputs import check_inputs
    from privgraph.cli.options import check_options

    check_options(samples=samples if network is not None else None, seed=seed, data_seed=data_seed)
    if data is not None and network is None:  # a wrong path in one line, before the numerical stack is imported
        data = check_inputs(data, domain, infer_domain)
    from privgraph.causal import PrivPC
    from privgraph.graphs.export import DRAWING_SUFFIXES, GRAPH_SUFFIXES
    from privgraph.outputs import check_outputs

    console = Console()
    if fmt is not None and f".{fmt}" not in GRAPH_SUFFIXES:
        raise InvalidInput(f"--format must be one of {', '.join(s[1:] for s in GRAPH_SUFFIXES)}, got {fmt!r}")
    check_outputs({"--out": (out, () if fmt else GRAPH_SUFFIXES), "--plot": (plot, DRAWING_SUFFIXES)}, overwrite=overwrite)
    from privgraph.cli.progress import stages

    with stages(("reading the data", "the PC search")) as stage:
        stage("reading the data")
        with Console(stderr=True).status(f"{method}: reading {data or network}"):
            X, truth, label = load_input(data, network, samples, data_seed, domain, infer_domain, engine, spark_master,
                                         neighbours)
        est = PrivPC(epsilon=epsilon, delta=delta, alpha=alpha, ci_test=ci_test, method=method,
                     max_cond_size=max_cond_size, max_rounds=max_rounds, random_state=seed, orient=orient,
                     orient_share=orient_share, degenerate=degenerate, neighbours=neighbours,
                     max_rows_per_person=max_rows_per_person)
        if infer_domain:
            from privgraph.cli.inputs import INFER_NOTICE

            console.print(INFER_NOTICE)
        stage("the PC search")
        seconds = fit_with_progress(est, X, console, label)
    report(est, truth, console, seconds, compositions)
    write_outputs(est, out, plot, console, fmt)


def load_input(data, network, samples, data_seed, domain=None, infer_domain=False, engine="duckdb",
               spark_master=None, neighbours="replace_one"):
    """(X, true CPDAG or None, label) from a file or a sampled bundled network.

    X is ``(data, domain or None, infer_domain)``: a file opened through the front door with its
    public domain (:func:`~privgraph.cli.inputs.fit_input`). For a file (its path checked by
    :func:`~privgraph.cli.inputs.check_inputs`) the codebook is read (or the refusal raised)
    here, before any value of the data is read; a sampled network's domain comes with its
    Categorical columns.
    """
    import numpy as np

    if (data is None) == (network is None):
        raise InvalidInput("give either a DATA file or --network NAME (exactly one)")
    if data is not None:
        from privgraph.cli.inputs import fit_input, public_file

        path, codebook = public_file(data, domain, infer_domain, engine)
        X, given = fit_input(path, domain, codebook, neighbours=neighbours, infer_domain=infer_domain, engine=engine,
                             spark_master=spark_master)
        return (X, given, infer_domain), None, str(data)
    if domain is not None or infer_domain:
        raise InvalidInput("--domain and --infer-domain are for a DATA file; a --network has its own domain")
    from privgraph.datasets import load_network, sample_frame
    from privgraph.graphs import CPDAG

    from privgraph.cli.options import check_sample_memory

    net = load_network(network)
    check_sample_memory(samples, len(net.domain.names), "discover")
    frame = sample_frame(net, samples, np.random.default_rng(data_seed))
    return (frame, None, False), CPDAG.from_dag(net.to_networkx()), f"{network} ({samples} rows)"


def fit_with_progress(est, X, console: Console, label: str) -> float:
    """Fit with a spinner that shows the PC level; returns the seconds taken."""
    import privgraph.heartbeat as heartbeat

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task(f"{est.method} on {label}: preparing", total=None)

        def on_level(level: int, edges: int) -> None:  # the edges left: released by the levels before
            progress.update(task, description=f"{est.method} on {label}: level {level}, {edges} edges left")
            heartbeat.at(f"level {level}, {edges:,} edges left")

        start = time.perf_counter()
        data, domain, infer_domain = X
        with say_power_before_spending(console):
            est.fit(data, domain=domain, infer_domain=infer_domain, on_level=on_level)
        return time.perf_counter() - start


@contextmanager
def say_power_before_spending(console: Console):
    """Print the fit's :class:`~privgraph.causal.power.NoPowerWarning` (public facts only, raised
    before any noise is drawn) as one line when it is raised; other warnings go their usual way."""
    from privgraph.causal.power import NoPowerWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", NoPowerWarning)
        shown = warnings.showwarning

        def show(message, category, *args, **kwargs):
            if issubclass(category, NoPowerWarning):
                console.print(f"[yellow]power[/]: {message}", markup=True, highlight=False)
            else:
                shown(message, category, *args, **kwargs)

        warnings.showwarning = show
        yield


def power_line(est) -> str | None:
    """What the run's tests could detect (the public prediction made before the spend), and,
    when they had no power for an effect of plausible size, that the graph is uninformative."""
    detectable = getattr(est, "detectable_", None)
    if detectable is None:
        return None
    if est.is_informative_:
        return f"[bold]Power[/]: {detectable.line()}"
    empty = not est.graph_.directed_edges and not est.graph_.undirected_edges
    what = "an empty graph" if empty else "a missing edge"
    return (f"[bold red]Uninformative[/]: {detectable.warning()}. The tests had no power: {what} here is no "
            "evidence of independence")


def report(est, truth, console: Console, seconds: float, compositions: bool = False) -> None:
    """The CPDAG, the privacy report (its facts, the charges, the guarantee's headline), and
    scores against the truth when known."""
    console.print(f"[bold]CPDAG[/] ({len(est.graph_.directed_edges)} directed, "
                  f"{len(est.graph_.undirected_edges)} undirected; {est.n_tests_} tests, {seconds:.3f} s)")
    console.print(str(est.graph_) or "(no edges)")
    console.print(ci_test_line(est))
    if (power := power_line(est)) is not None:
        console.print(power, highlight=False)
    console.print(privacy_summary(est))
    if est.method != "pc":
        from privgraph.cli.guarantee import print_privacy

        print_privacy(console, est.ledger_, est.composition_, est.delta, relation=est.neighbours,
                      seeded=not est.sampler_.is_secure, compositions=compositions,
                      title="Privacy ledger (charges: the whole cap, reserved in advance)")
    if truth is not None:
        console.print(metrics_table(est.graph_, truth))


def ci_test_line(est) -> str:
    """Which CI test ran, and why when ``--ci-test auto`` chose it."""
    why = ""
    if est.ci_test == "auto":
        why = (" (auto: every column is continuous)" if est.ci_test_ in ("fisher-z", "rank")
               else " (auto: from the columns' kinds)")
    extra = ""
    if est.ci_test_ == "fisher-z" and est.method != "pc":
        extra = ("; one private release of the covariance of the bounded columns, PC on it as post-processing "
                 f"({est.n_tests_} tests at no further cost)")
    return f"[bold]CI test[/]: {est.ci_test_}{why}{extra}"


def privacy_summary(est) -> str:
    """One paragraph of facts the guarantee's headline does not carry: the budget asked for,
    the plan, the relation's public facts, cap use, the noise. What was spent is the
    headline's (printed below it by :func:`~privgraph.cli.guarantee.print_privacy`), not
    repeated here."""
    if est.method == "pc":
        return "[red]method pc is NOT private[/]: no noise, no budget."
    rounds = "" if est.rounds_ is None else f"; rounds used {est.rounds_used_} of a cap of {est.rounds_}"
    done = "" if est.complete_ else " [yellow](cap reached before PC finished: remaining edges kept)[/]"
    return (f"[bold]Privacy[/]: budget epsilon={est.epsilon:g}, delta={est.delta:g}, reserved whole by "
            f"{est.composition_} composition over the plan fixed in advance (the guarantee: the 'privacy:' "
            f"line below); neighbours: {_relation(est)}{rounds}{done}; noise: "
            f"{'SecureSampler' if est.sampler_.is_secure else 'SeededSampler (NOT private)'}")


def _relation(est) -> str:
    if (unit := est.ledger_.unit) is not None:  # the person is the unit: the kept rows' number is private
        return (f"{_relation_name(est).replace('_', '-').replace('add-remove', 'add/remove')} {unit.describe()} "
                f"(the tests ran on {est.n_rows_} of the kept rows, their released size less its margin)")
    if _relation_name(est) == "replace_one":
        return f"replace-one (n={est.n_rows_} public)"
    return f"add/remove (n private; the tests ran on {est.n_rows_} rows, the released size less its margin)"


def _relation_name(est) -> str:
    from privgraph.privacy import Neighbours

    return Neighbours.parse(est.neighbours).value


def metrics_table(graph, truth) -> Table:
    from privgraph.graphs import arc_f1, arrowhead_scores, shd, skeleton_scores

    table = Table(title="Against the true network")
    for col in ("score", "precision", "recall", "F1"):
        table.add_column(col, justify="left" if col == "score" else "right")
    for name, s in (("skeleton", skeleton_scores(graph, truth)), ("arrowheads", arrowhead_scores(graph, truth))):
        table.add_row(name, f"{s['precision']:.3f}", f"{s['recall']:.3f}", f"{s['f1']:.3f}")
    table.add_row("arcs (Priv-PC paper's F1)", "", "", f"{arc_f1(graph, truth):.3f}")
    table.add_row("SHD (against the true CPDAG)", "", "", str(shd(graph, truth)))
    return table


def privacy_record(est) -> dict:
    """What the graph file says about its privacy: budget, ledger, caveats."""
    private = est.method != "pc"
    caveats = list(est.ledger_.caveats) + ([] if private else ["method pc is not private"])
    if private and not est.sampler_.is_secure:
        caveats.append("seeded noise: not private")
    detectable = getattr(est, "detectable_", None)
    return {"method": est.method, "epsilon": est.epsilon if private else None,
            "delta": est.delta if private else None, "neighbours": _relation_name(est),
            "ledger": est.ledger_.rows(), "caveats": caveats,
            "power": None if detectable is None else detectable.record()}


def write_outputs(est, out, plot, console: Console, fmt: str | None = None) -> None:
    """Write the graph and its drawing (those asked for) all or nothing."""
    from privgraph.graphs.export import drawing_writer, graph_writer
    from privgraph.outputs import write_all

    writers = {}
    if out is not None:
        writers[out] = graph_writer(est.graph_, f".{fmt}" if fmt else out.suffix, privacy=privacy_record(est))
    if plot is not None:
        writers[plot] = drawing_writer(est.graph_, plot.suffix.lstrip(".").lower(),
                                       title=f"{est.method}, epsilon={est.epsilon:g}")
    for path in write_all(writers):
        console.print(f"wrote {path}")
