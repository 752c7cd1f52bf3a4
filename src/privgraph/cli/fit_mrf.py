"""``privgraph fit-mrf``: a private Markov random field over given cliques, and synthetic data.

``privgraph fit-mrf data.csv --cliques "a,b;b,c" --epsilon 1 --out model.json
--synthetic 1000 synthetic.csv``. The model (structure, log-potentials, ledger) and the
synthetic records are post-processing of the noisy release; both are written atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Tuple

import pandas as pd
import typer
from rich.console import Console

from privgraph.cli.ledger_table import print_ledger
from privgraph.data.files import check_path, file_format
from privgraph.outputs import write_atomically


def read_table(path: Path) -> pd.DataFrame:
    """A CSV or Parquet file as a DataFrame (the file is checked first)."""
    path = check_path(path)
    return pd.read_parquet(path) if file_format(path) == "parquet" else pd.read_csv(path)


def fit_mrf(
    data: Path = typer.Argument(..., help="CSV or Parquet file of discrete columns."),
    cliques: str = typer.Option(..., help='Cliques as "a,b;b,c" (columns within a clique by commas).'),
    epsilon: float = typer.Option(..., help="Total privacy budget epsilon."),
    method: str = typer.Option("cgm-em", help="cgm-em | naive-mle | psgd."),
    neighbours: str = typer.Option("add_remove", help="add_remove | replace_one."),
    noise: str = typer.Option("laplace", help="laplace | gaussian (needs --delta)."),
    delta: Optional[float] = typer.Option(None, help="delta, for Gaussian noise and PSGD."),
    individual: Optional[str] = typer.Option(None, help="Column naming the individual (the privacy unit)."),
    out: Optional[Path] = typer.Option(None, help="Write the model as JSON here."),
    synthetic: Optional[Tuple[int, Path]] = typer.Option(None, help="N PATH: write N synthetic records as CSV."),
    seed: Optional[int] = typer.Option(None, help="Seed (tests/experiments only: seeded noise is NOT private)."),
) -> None:
    """Fit a differentially private MRF to DATA and print its privacy ledger."""
    from privgraph.mrf import PrivateMRF

    console = Console()
    frame = read_table(data)
    for path in [p for p in (out, synthetic[1] if synthetic else None) if p is not None]:
        if not path.parent.is_dir():
            raise FileNotFoundError(f"output directory {str(path.parent)!r} does not exist")
    if synthetic and synthetic[0] < 1:
        raise ValueError(f"--synthetic needs a positive number of records, got {synthetic[0]}")
    if seed is not None:
        console.print("[yellow]seeded sampler: reproducible noise, NOT private (experiments only)[/]")
    est = PrivateMRF(epsilon=epsilon, cliques=cliques, method=method, neighbours=neighbours, noise=noise,
                     delta=delta, individual=individual, random_state=seed).fit(frame)
    console.print(f"fitted {method} over cliques {[list(c) for c in est.model_.cliques]} "
                  f"from {len(frame)} rows")
    if out is not None:
        write_atomically(out, lambda tmp: Path(tmp).write_text(est.to_json()))
        console.print(f"model written to {out}")
    if synthetic:
        n, path = synthetic
        records = est.sample(n)
        write_atomically(path, lambda tmp: records.to_csv(tmp, index=False))
        console.print(f"{n} synthetic records written to {path}")
    print_ledger(est.ledger_, delta or 1e-6)
