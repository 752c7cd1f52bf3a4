"""``privgraph sample``: rows forward-sampled from a bundled network, written to CSV or Parquet.

``privgraph sample --network asia --samples 10000 asia.csv --domain-out asia.json`` writes
10,000 rows (the BIF's level names) and the network's public domain codebook, ready for
``privgraph discover asia.csv --domain asia.json``. The rows are synthetic and public.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console


def sample(
    out: Path = typer.Argument(..., help="Where to write the rows (.csv or .parquet)."),
    network: str = typer.Option(..., help="A bundled network (asia, cancer, earthquake, survey, sachs, child, insurance, alarm, hepar2)."),
    samples: int = typer.Option(10_000, help="Number of rows."),
    seed: int = typer.Option(0, help="Seed of the sampler (public synthetic data, no privacy involved)."),
    domain_out: Optional[Path] = typer.Option(None, "--domain-out", help="Also write the network's domain codebook here (.json)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace outputs that exist already (default: refuse them, before anything is read or spent)."),
) -> None:
    """Write rows sampled from a bundled network (and its domain codebook)."""
    from privgraph.cli.options import check_options, check_sample_memory
    from privgraph.outputs import check_outputs, write_all

    check_options(samples=samples, seed=seed)
    check_outputs({"OUT": (out, (".csv", ".parquet")), "--domain-out": (domain_out, (".json",))}, overwrite=overwrite)
    import json

    import numpy as np

    from privgraph.data import domain_to_codebook
    from privgraph.datasets import load_network, sample_frame

    net = load_network(network)
    check_sample_memory(samples, len(net.domain.names), "sample")
    frame = sample_frame(net, samples, np.random.default_rng(seed), labels=True)
    writers = {out: (lambda tmp: frame.to_parquet(tmp)) if out.suffix.lower() == ".parquet"
               else (lambda tmp: frame.to_csv(tmp, index=False))}
    if domain_out is not None:
        text = json.dumps(domain_to_codebook(net.domain), indent=2) + "\n"
        writers[domain_out] = lambda tmp: Path(tmp).write_text(text)
    write_all(writers)
    Console().print(f"wrote {samples} rows of {network} to {out}" + (f" and its domain to {domain_out}" if domain_out else ""))
