"""``privgraph fit-mrf``: a private Markov random field over given cliques, and synthetic data.

``privgraph fit-mrf data.csv --cliques "a,b;b,c" --epsilon 1 --out model.json
--synthetic 1000 synthetic.csv``. The model (structure, log-potentials, ledger) and the
synthetic records are post-processing of the noisy release. Output paths are checked before
the data is read (a bad one costs no budget); both outputs are written all or nothing.
Nothing printed is derived from the data except released values: under add/remove the
number of records is private, so only the model's noisy estimate of it is shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Tuple

import typer
from rich.console import Console

from privgraph.cli.guarantee import COMPOSITIONS
from privgraph.cli.inputs import SPARK_MASTER
import privgraph.declarations as declarations
from privgraph.cli.params import EstimatorOptions
from privgraph.outputs import check_outputs, write_all
from privgraph.validation import InvalidInput


#: The declarations of the estimator's parameters that the options named after them are read from.
MRF = EstimatorOptions(declarations.MRF)


def fit_mrf(
    data: Path = typer.Argument(..., help="CSV or Parquet file of discrete columns (needs --domain)."),
    domain: Optional[Path] = typer.Option(None, "--domain", help="The public domain codebook of DATA (JSON; draft one with `privgraph domain`)."),
    infer_domain: bool = typer.Option(False, "--infer-domain", help="Read the domain from DATA instead: the result is then NOT private."),
    engine: str = typer.Option("duckdb", help="What counts DATA: duckdb (out of core, default) or spark (cgm-em and naive-mle without --individual)."),
    spark_master: Optional[str] = SPARK_MASTER,
    invalid: Optional[str] = MRF.option(),
    cliques: str = MRF.option(required=True),
    epsilon: float = MRF.option(required=True),
    method: str = MRF.option(),
    neighbours: str = MRF.option(),
    noise: str = MRF.option(),
    delta: Optional[float] = MRF.option(),
    individual: Optional[str] = MRF.option(),
    max_rows_per_person: Optional[int] = MRF.option(),
    out: Optional[Path] = typer.Option(None, help="Write the model here: .json (with its ledger) or .uai (the UAI MARKOV format)."),
    synthetic: Optional[Tuple[int, Path]] = typer.Option(None, metavar="N PATH", help="Write N synthetic records as CSV to PATH: --synthetic 1000 synthetic.csv."),
    seed: Optional[int] = typer.Option(None, help="Seed (tests/experiments only: seeded noise is NOT private)."),
    compositions: bool = COMPOSITIONS,
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace outputs that exist already (default: refuse them, before anything is read or spent)."),
) -> None:
    """Fit a differentially private MRF to DATA and print its privacy guarantee."""
    from privgraph.cli.inputs import INFER_NOTICE, check_inputs, fit_input, public_file
    from privgraph.cli.guarantee import print_privacy

    from privgraph.cli.options import check_options

    console = Console()
    check_options(seed=seed, synthetic=synthetic[0] if synthetic else None)
    check_outputs({"--out": (out, (".json", ".uai")), "--synthetic": (synthetic[1] if synthetic else None, (".csv",))},
                  overwrite=overwrite)
    if engine == "spark":
        _check_spark(method, individual)
    data = check_inputs(data, domain, infer_domain)  # a wrong path in one line, before the numerical stack
    from privgraph.mrf import PrivateMRF

    data, public = public_file(data, domain, infer_domain, engine)
    if synthetic:  # the synthetic records against memory, before any fit (the columns are public)
        from privgraph.cli.options import check_sample_memory
        from privgraph.data.files import file_columns

        columns = len(public.names) if public is not None else len(file_columns(data))
        check_sample_memory(synthetic[0], columns, "fit-mrf", flag="--synthetic")
    if public is not None:  # the modelled columns counted through default bins (the codebook only)
        from privgraph.data.domain import default_bins_notice
        from privgraph.mrf.model import parse_cliques

        if notice := default_bins_notice(public, {c for clique in parse_cliques(cliques) for c in clique}):
            console.print(notice)
    if infer_domain:
        console.print(INFER_NOTICE)
    est = PrivateMRF(epsilon=epsilon, cliques=cliques, method=method, neighbours=neighbours, noise=noise,
                     delta=delta, individual=individual, invalid=invalid, random_state=seed,
                     max_rows_per_person=max_rows_per_person)
    from privgraph.cli.progress import stages

    names = FIT_STAGES if synthetic else (FIT_STAGES[0], FIT_STAGES[2])
    with stages(names) as stage:
        stage(FIT_STAGES[0])
        with Console(stderr=True).status(f"{method}: counting {Path(data).name}, releasing the tables, fitting the model"):
            X, given = fit_input(data, domain, public, neighbours=neighbours, infer_domain=infer_domain,
                                 engine=engine, spark_master=spark_master)
            est.fit(X, domain=given, infer_domain=infer_domain)
        console.print(f"fitted {method} over cliques {[list(c) for c in est.model_.cliques]}{_units(est)}")
        writers = {}
        if out is not None:
            text = est.to_uai() if out.suffix.lower() == ".uai" else est.to_json()
            writers[out] = lambda tmp: Path(tmp).write_text(text)
        if synthetic:
            stage(FIT_STAGES[1])
            records = est.sample(synthetic[0])
            writers[synthetic[1]] = lambda tmp: records.to_csv(tmp, index=False)
        stage(FIT_STAGES[2])
        write_all(writers)
    if out is not None:
        console.print(f"model written to {out}")
    if synthetic:
        console.print(f"{synthetic[0]} synthetic records written to {synthetic[1]}, columns {list(records.columns)} "
                      f"(the clique columns{_derived_words(est)}, in the codebook's order)")
        if left := _left_out(est, public, data, records.columns):
            console.print(f"not in any clique, so not modelled and left out of the synthetic records: {left}")
    print_privacy(console, est.ledger_, est.composition_, delta, relation=neighbours, seeded=seed is not None,
                  compositions=compositions)


def _derived_words(est) -> str:
    """How the records' columns say they carry derived columns (:mod:`privgraph.data.derived`), if any."""
    return "" if est.derived_domain_ is None else " and the derived columns whose sources they hold, by their rules"


def _check_spark(method: str, individual: str | None) -> None:
    """Spark counts tables: a fit that reads the records in memory (:data:`privgraph.mrf.fits.FITS`'
    ``in_memory``), or ``--individual``, needs DuckDB."""
    from privgraph.mrf.fits import FITS

    if FITS[method].in_memory or individual is not None:
        in_memory = ", ".join(name for name, fit in FITS.items() if fit.in_memory)
        raise InvalidInput(f"--engine spark counts tables: {in_memory} and --individual need --engine duckdb")


#: What ``fit-mrf`` prints as each stage starts off a terminal (:mod:`privgraph.cli.progress`).
FIT_STAGES = ("counting the data, releasing the tables, fitting the model", "synthetic records", "writing the outputs")


def _left_out(est, public, data, written) -> list[str]:
    """The data's columns (the codebook's, or the header's under --infer-domain: public
    either way) that the synthetic records leave out, the --individual column apart."""
    from privgraph.data.files import file_columns

    names = public.names if public is not None else file_columns(data)
    return [n for n in names if n not in set(written) and n != est.individual]


def _units(est) -> str:
    """The number of privacy units as released: public under replace-one, a noisy estimate under add/remove.

    PSGD keeps no released count, so nothing is printed for it.
    """
    from privgraph.privacy import Neighbours

    noisy = est.marginals_
    if noisy is None:
        return ""
    if Neighbours.parse(est.neighbours) is Neighbours.REPLACE_ONE and est.ledger_.unit is None:  # a unit: rows AR
        return f" from {noisy.records:.0f} privacy units, unit={noisy.unit} (public under replace-one)"
    return f"; privacy units (unit={noisy.unit}): about {noisy.records:.1f}, a noisy estimate (add/remove)"
