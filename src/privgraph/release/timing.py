"""The planner's time estimate: the CPU seconds of ``release``, from public facts only.

The estimate reads the codebook (the columns and their numbers of levels), the method's
public caps and epsilon, never the data: no row, no file size. The number of rows is private
under add/remove, so the estimate is a fixed part plus a part per million rows
(:class:`TimeEstimate`); ``privgraph plan`` multiplies it out at its ``--rows`` (a public
guess). It is a coarse fit, within a factor of about 3 on the files below, for the default
duckdb engine (spark is slower, up to 10 times at 1e8 rows in spark_scale.jsonl); it says how
long to expect, it bounds nothing.

**release** (``benchmarks/results/release_real_tables.jsonl``: CPU s of a release of six real
tables at epsilon 0.3, 1, 3; ``release_high_epsilon.jsonl``: gss at 10 and 30). The model fits
and the adaptive rounds dominate on tables of up to 65,000 rows; their cost grows with the
tables the rounds predict, ``cells = sum over pairs of min(k_i k_j, 300)`` (a wide pair's table
is offered in bins) plus a tenth of the same over the rounds' triples
(:func:`~privgraph.release.model_size.workload_positions`; they are predicted, rarely fitted),
and with epsilon (more signal, more rounds, longer refits) as ``min(epsilon, 3) ** 0.7`` times ``epsilon / 3`` above 3 (the
rounds stop annealing: at most 64, each refit longer against less noise; 30 the largest
measured): ``fixed = 0.00216 s x cells x that``. Tuned on gss, cces16 and anes (the median of
three seeds over the estimate: 0.71 to 1.70); reported on the others: mpls 0.76-1.14, fair
0.27-0.48 and census_shape 0.19-0.49 (a sparse synthetic network) overestimated.
The data pass is ``0.0015 s x pairs`` per million rows, from
``benchmarks/results/spark_scale.jsonl`` (duckdb, 30 columns: 588-734 CPU s at 1e9 rows,
166-207 s at 1e8, 25 s at 1e7, where the fit says 690, 103 and 44 s).

``discover`` has no estimate: its methods' times differ by two orders of magnitude
(tables-pc's fit on alarm, 37 columns and 1e5 rows: 4-5 CPU-s in tables_pc.jsonl; Priv-PC
on the 30 columns of spark_scale.jsonl: minutes) and no committed file calibrates each method, so it prints none
rather than a misleading one.

A release also pays a base of about ``RELEASE_BASE`` seconds whatever its size (the process's
start, the figures and the outputs; read off one small release by hand, asia's 5,000 rows, not a committed file;
the ratios above were fitted before it was added, which moves each estimate by 3 s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


#: CPU seconds per cell of the rounds' pair and triple tables at epsilon 1 (release_real_tables.jsonl).
RELEASE_PER_CELL = 0.00216
#: A triple's cell costs this share of a pair's (its table is predicted each round, rarely fitted).
TRIPLE_WEIGHT = 0.1
#: A table counts at most this many cells (a wide pair's is offered in bins).
CELLS_PER_PAIR = 300
#: Above this epsilon the rounds stop annealing and the cost grows as epsilon (release_high_epsilon.jsonl).
EPSILON_KNEE = 3.0
#: Epsilon's effect stops growing here (the largest epsilon measured).
EPSILON_TOP = 30.0
#: CPU seconds per pair of columns per million rows of the data pass (spark_scale.jsonl).
RELEASE_PER_PAIR_MILLION = 0.0015
#: CPU seconds of any release: the process's start, the figures and the outputs (module docstring).
RELEASE_BASE = 3.0


@dataclass(frozen=True)
class TimeEstimate:
    """CPU seconds: ``fixed`` plus ``per_million`` for each million rows; ``facts``: what it read."""

    fixed: float
    per_million: float
    facts: str

    def at(self, rows: int) -> float:
        """The CPU seconds at ``rows`` rows (a public number, or a public guess)."""
        return self.fixed + self.per_million * rows / 1e6

    def line(self, rows: Optional[int] = None, *, private: bool = True) -> str:
        """The estimate in words; ``rows`` None: per million rows, the number of rows being
        private (``private``, add/remove) or not yet counted (replace-one).

        >>> TimeEstimate(40.0, 2.5, "14 columns, 2-100 levels").line()
        "the planner's estimate: about 40 CPU-s plus 2.5 per million rows (from public facts: 14 columns, 2-100 levels; the data's size is private)"
        >>> TimeEstimate(40.0, 2.5, "14 columns").line(rows=2_000_000)
        "the planner's estimate: about 45 CPU-s at 2,000,000 rows (from public facts: 14 columns)"
        """
        if rows is None:
            size = "the data's size is private" if private else "the rows are not counted yet"
            return (f"the planner's estimate: about {_seconds(self.fixed)} CPU-s plus {_seconds(self.per_million)} "
                    f"per million rows (from public facts: {self.facts}; {size})")
        return f"the planner's estimate: about {_seconds(self.at(rows))} CPU-s at {rows:,} rows (from public facts: {self.facts})"


def _seconds(s: float) -> str:
    """Two significant figures: ``40``, ``2.5``, ``0.012``."""
    return f"{float(f'{s:.2g}'):g}"


def _facts(sizes) -> str:
    """``14 columns, 2-100 levels`` (a continuous column without bins has size 0: no levels)."""
    counted = [k for k in sizes if k > 0]
    levels = f", {min(counted)}-{max(counted)} levels" if counted else ""
    return f"{len(sizes)} columns{levels}"


def release_time(sizes, epsilon: float) -> TimeEstimate:
    """The CPU seconds of a release of a table whose columns have ``sizes`` levels (the
    codebook's, bins counted) at ``epsilon`` (module docstring: the fit and its files).

    >>> e = release_time([2, 3, 10], epsilon=1.0)   # cells 6 + 20 + 30 and a tenth of the triple's 60: 62, 3 pairs
    >>> round(e.fixed, 4), round(e.per_million, 4)
    (3.1339, 0.0045)
    >>> round(release_time([2, 3, 10], epsilon=30.0).fixed - 3, 4) == round(10 * (release_time([2, 3, 10], epsilon=3.0).fixed - 3), 4)
    True
    >>> release_time([2, 3, 10], epsilon=300.0).fixed == release_time([2, 3, 10], epsilon=30.0).fixed
    True
    """
    from privgraph.release.model_size import workload_positions  # lazy: numpy, not at --help's import

    sizes = [int(k) for k in sizes]
    d = len(sizes)
    cells = sum(min(a * b, CELLS_PER_PAIR) for i, a in enumerate(sizes) for b in sizes[i + 1:])
    cells += TRIPLE_WEIGHT * sum(min(sizes[i] * sizes[j] * sizes[k], CELLS_PER_PAIR)
                                 for i, j, k in workload_positions(sizes))
    top = min(epsilon, EPSILON_TOP)
    fixed = RELEASE_BASE + RELEASE_PER_CELL * cells * min(top, EPSILON_KNEE) ** 0.7 * max(top / EPSILON_KNEE, 1.0)
    return TimeEstimate(fixed, RELEASE_PER_PAIR_MILLION * d * (d - 1) / 2, _facts(sizes))
