"""The commands' own numeric options, checked in one place before anything is read or spent.

An option that is an estimator's parameter is checked by the estimator's declaration
(:mod:`privgraph.cli.params`); the options of the command line alone (``--samples``,
``--rows``, ``--seed``, ...; ``demo``'s and ``audit``'s budget) are passed to
:func:`check_options`, which applies their kind of :data:`KINDS`. Both use the same kinds
(:func:`~privgraph.validation.positive_count`, :func:`~privgraph.privacy.neighbours.check_share`,
...) with the same wording, naming the flag: ``--cap must be an integer >= 1, got 0``.
:func:`check_sample_memory` refuses a ``--samples`` the machine cannot hold before numpy tries
to allocate it.
"""

from __future__ import annotations

import os

from privgraph.cli.params import flag
from privgraph.privacy.neighbours import check_delta, check_epsilon, check_share
from privgraph.validation import InvalidInput, count, positive_count

#: The kind of each option of the command line alone, by its parameter name.
KINDS = {
    "samples": positive_count, "rows": positive_count, "synthetic": positive_count,
    "seed": count, "data_seed": count,
    "effect": check_share, "cell": check_share, "alpha": check_share, "delta": check_delta, "epsilon": check_epsilon,
}


def check_options(**values) -> None:
    """Check each given option by its kind (:data:`KINDS`); ``None`` (not given) is skipped.

    >>> check_options(rows=5000, effect=None, epsilon=1.0, delta=0.0)
    >>> check_options(rows=0)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --rows must be an integer >= 1, got 0
    >>> check_options(data_seed=-1)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --data-seed must be an integer >= 0, got -1
    """
    for name, value in values.items():
        if value is not None:
            KINDS[name](value, flag(name))


#: Bytes a command allocates per sampled value (a row's codes, its DataFrame's codes and the
#: writer's or the engine's copies) and per row (the sampler's uniforms, parent indices and
#: their temporaries), measured as peak RSS at 1e6 and 4e6 rows (asia, hepar2), rounded up:
#: ``sample`` 2.9-4.3 bytes a value, ``discover --network`` 11.
BYTES_PER_VALUE = {"sample": 4, "discover": 12}
BYTES_PER_ROW = 40


def check_sample_memory(samples: int, columns: int, command: str, available: int | None = None) -> None:
    """Refuse ``--samples`` whose rows would not fit in the memory this machine has available.

    >>> check_sample_memory(10_000, 8, "sample", available=10**9)
    >>> check_sample_memory(10**12, 8, "sample", available=10**10)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --samples 1000000000000 needs about 7.2e+13 bytes (8 columns x 4 + 40 bytes a row), more than the 1e+10 bytes available: give at most 138888888 rows
    """
    per_row = columns * BYTES_PER_VALUE[command] + BYTES_PER_ROW
    available = available_memory() if available is None else available
    if available is not None and samples * per_row > available:
        raise InvalidInput(f"--samples {samples} needs about {samples * per_row:.2g} bytes ({columns} columns x "
                           f"{BYTES_PER_VALUE[command]} + {BYTES_PER_ROW} bytes a row), more than the "
                           f"{available:.2g} bytes available: give at most {available // per_row} rows")


def available_memory() -> int | None:
    """Bytes of memory available now: MemAvailable of /proc/meminfo, else the free pages
    (``os.sysconf``), else None (unknown: nothing is refused)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
