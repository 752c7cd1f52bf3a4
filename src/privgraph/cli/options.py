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
from privgraph.validation import InvalidInput, check_delta, check_epsilon, check_share, choice, count, positive_count

#: ``release --sampling``'s choices: the names of :data:`privgraph.mrf.sampling.SAMPLE_METHODS`
#: (written out: this module imports no numerical stack; ``tests/test_checks_once.py`` holds them equal).
SAMPLING = ("sample", "round")

#: The kind of each option of the command line alone, by its parameter name.
KINDS = {
    "samples": positive_count, "rows": positive_count, "synthetic": positive_count,
    "seed": count, "data_seed": count,
    "effect": check_share, "cell": check_share, "alpha": check_share, "delta": check_delta, "epsilon": check_epsilon,
    "sampling": choice(SAMPLING),
}


#: The largest ``--epsilon`` a command takes. The accountants work with e^epsilon (the odds
#: ratio a neighbour may move), which a double holds only up to epsilon = 709.78:
#: ``dp_accounting``'s privacy-loss distribution of a pure charge and advanced composition
#: overflow above it. A public constant: nothing about the data.
MAX_EPSILON = 700.0
#: Above this ``--epsilon`` a command says, in one line, that the budget protects nothing.
WARN_EPSILON = 10.0
#: The smallest positive ``--delta``: the accountants take log(1/delta), and 1/delta
#: overflows a double below about 5.6e-309 (zero is pure DP and is always accepted).
MIN_DELTA = 1e-300


def check_budget(epsilon: float | None, delta: float | None, *, warn=None) -> None:
    """Refuse a budget the accountants cannot compose, naming the flag; warn (one line on
    stderr, or through ``warn``) above :data:`WARN_EPSILON`. ``None``: not given. Public:
    reads the flags only.

    >>> check_budget(1.0, 1e-6)
    >>> check_budget(20.0, None, warn=print)
    privgraph: warning: --epsilon 20 protects nothing in practice: above 10 one person's records may change the odds of any output by more than e^10 (about 22,000 times)
    >>> check_budget(1e9, 1e-6)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --epsilon 1e+09 is above 700, the largest the accountants can compose (they work with e^epsilon, which overflows a double above epsilon 709.78): give --epsilon at most 700
    >>> check_budget(1.0, 1e-320)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --delta 9.99989e-321 is below 1e-300, the smallest positive delta the accountants can compose (they take log(1/delta)): give --delta 0 (pure DP) or at least 1e-300
    """
    if epsilon is not None and epsilon > MAX_EPSILON:
        raise InvalidInput(f"--epsilon {epsilon:g} is above {MAX_EPSILON:g}, the largest the accountants can compose "
                           f"(they work with e^epsilon, which overflows a double above epsilon 709.78): give --epsilon "
                           f"at most {MAX_EPSILON:g}")
    if delta is not None and 0 < delta < MIN_DELTA:
        raise InvalidInput(f"--delta {delta:g} is below {MIN_DELTA:g}, the smallest positive delta the accountants can "
                           f"compose (they take log(1/delta)): give --delta 0 (pure DP) or at least {MIN_DELTA:g}")
    if epsilon is not None and epsilon > WARN_EPSILON:
        import sys

        line = (f"privgraph: warning: --epsilon {epsilon:g} protects nothing in practice: above {WARN_EPSILON:g} one "
                f"person's records may change the odds of any output by more than e^{WARN_EPSILON:g} (about 22,000 times)")
        (warn or (lambda text: print(text, file=sys.stderr)))(line)


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
#: ``release --rows`` and ``fit-mrf --synthetic``: the synthetic rows drawn from the model,
#: their labelled DataFrame and the writer's copy, measured the same way at 2e6 rows of 3
#: columns (about 120 and 77 bytes a row), rounded up.
BYTES_PER_VALUE = {"sample": 4, "discover": 12, "release": 32, "fit-mrf": 16}
BYTES_PER_ROW = 40


def check_sample_memory(samples: int, columns: int, command: str, available: int | None = None, *,
                        flag: str = "--samples") -> None:
    """Refuse ``--samples`` (or the number of synthetic rows, ``flag``) whose rows would not fit
    in the memory this machine has available: the column count is public (the codebook, or
    the file's header), so the refusal reads nothing of the data.

    >>> check_sample_memory(10_000, 8, "sample", available=10**9)
    >>> check_sample_memory(10**12, 8, "sample", available=10**10)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --samples 1000000000000 needs about 7.2e+13 bytes (8 columns x 4 + 40 bytes a row), more than the 1e+10 bytes available: give at most 138888888 rows
    """
    per_row = columns * BYTES_PER_VALUE[command] + BYTES_PER_ROW
    available = available_memory() if available is None else available
    if available is not None and samples * per_row > available:
        raise InvalidInput(f"{flag} {samples} needs about {samples * per_row:.2g} bytes ({columns} columns x "
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
