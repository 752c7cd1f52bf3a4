"""``privgraph demo``: a short tour of the mechanisms and the ledger on synthetic data."""

from __future__ import annotations

from typing import Optional

import typer
from rich.console import Console

from privgraph.cli.guarantee import COMPOSITIONS


def demo(
    epsilon: float = typer.Option(2.0, help="Total privacy budget epsilon."),
    delta: float = typer.Option(1e-6, help="Total privacy budget delta."),
    rows: int = typer.Option(10_000, help="Rows of synthetic data."),
    seed: Optional[int] = typer.Option(None, help="Seed (tests/experiments only: seeded noise is NOT private)."),
    compositions: bool = COMPOSITIONS,
) -> None:
    """Release statistics of a synthetic dataset under one budget and print its guarantee."""
    from privgraph.cli.options import check_options

    check_options(epsilon=epsilon, delta=delta, rows=rows, seed=seed)
    import numpy as np

    from privgraph.cli.guarantee import print_privacy
    from privgraph.privacy import (
        Budget,
        BudgetExceeded,
        Neighbours,
        above_threshold,
        exponential_mechanism,
        gaussian_mechanism,
        histogram_l1_sensitivity,
        laplace_mechanism,
        resolve_sampler,
    )

    console = Console()
    rng = np.random.default_rng(0)  # the synthetic data is public, not a privacy secret
    ages = rng.integers(18, 90, size=rows)
    smoker = rng.random(rows) < 0.3
    sampler = resolve_sampler(seed)
    budget = Budget(epsilon, delta)
    nb = Neighbours.ADD_REMOVE
    share = budget.epsilon / 4
    counts = np.bincount(np.minimum(ages // 10, 8), minlength=9).astype(float)
    noisy_counts, _ = laplace_mechanism(counts, epsilon=share, sensitivity=histogram_l1_sensitivity(nb),
                                        neighbours=nb, sampler=sampler, budget=budget)
    smokers, _ = gaussian_mechanism(float(smoker.sum()), epsilon=share, delta=budget.delta / 2,
                                    sensitivity=1.0, neighbours=nb, sampler=sampler, budget=budget)
    decade, _ = exponential_mechanism(counts, epsilon=share, sensitivity=1.0, neighbours=nb,
                                      monotone=True, sampler=sampler, budget=budget)
    answers, _ = above_threshold(counts, threshold=rows / 8, cutoff=1, epsilon=share, sensitivity=1.0,
                                 neighbours=nb, sampler=sampler, budget=budget)
    console.print(f"noisy age-decade counts (Laplace): {np.round(noisy_counts).astype(int).tolist()}")
    console.print(f"noisy number of smokers (Gaussian): {smokers:.0f}")
    console.print(f"most common decade (exponential mechanism): {10 * decade}-{10 * decade + 9}")
    console.print(f"first decade above {rows / 8:.0f} rows (sparse vector): {10 * (len(answers) - 1) if answers[-1] else 'none'}")
    try:  # the whole budget is spent: a fifth release must be refused, before any noise is drawn
        laplace_mechanism(0.0, epsilon=share, sensitivity=1.0, neighbours=nb, sampler=sampler, budget=budget)
    except BudgetExceeded as err:
        console.print(f"a fifth release, asked for on purpose, was refused before drawing noise: {err}")
    print_privacy(console, budget.ledger, budget.composition, budget.delta, relation=nb, seeded=not sampler.is_secure,
                  compositions=compositions)
