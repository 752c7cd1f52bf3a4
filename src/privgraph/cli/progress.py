"""Stage lines and a heartbeat on stderr when it is not a terminal (a log, a batch job).

Every long command names its stages in order. Off a terminal each stage prints one plain line
as it starts (``privgraph: stage 2/3: synthetic rows``) and, while it runs, a heartbeat at
least every :data:`HEARTBEAT_SECONDS` from a background timer thread that stops with the
stage, with the long loop's position (:mod:`privgraph.heartbeat`) when it has one: what is
done and what is left (``privgraph: still in stage 1/3 (the structure and the model's
tables): the adaptive round 4 of at most 64, 1m30s elapsed``). On a terminal nothing is
printed here: the command's rich display shows the same. A line names the stage, a public
position and the time only, never anything read from the data. The heartbeat's period may be
set by the environment variable ``PRIVGRAPH_HEARTBEAT_SECONDS`` (tests lower it).

**Timing.** A stage's line is printed unconditionally, as the stage starts (:data:`QUIET_SECONDS`
is 0): were it printed only when the stage outlasted a quiet time, its presence would say
whether that stage took longer than the quiet time, and under add/remove a stage's duration
may grow with the private number of rows. Printed always, the stage lines are the same for
every input that reaches the stage. The heartbeats are not: their number is the stage's
duration divided by the period, which is what anyone who sees the process run (or the log's
timestamps) learns anyway; running time is outside the guarantee, as for every DP library
(:mod:`privgraph.timecap`), and a heartbeat adds nothing to it. The positions are public or
released counts (:mod:`privgraph.heartbeat`).

>>> import io
>>> log = io.StringIO()
>>> with stages(("counting", "writing"), stream=log) as stage:
...     stage("counting")
...     stage("writing")
>>> print(log.getvalue(), end="")
privgraph: stage 1/2: counting
privgraph: stage 2/2: writing
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Callable, Iterator, Sequence

import privgraph.heartbeat as heartbeat

#: The gap, in seconds, between two lines during a stage (tests lower it; the environment
#: variable ``PRIVGRAPH_HEARTBEAT_SECONDS`` overrides it): 20, so that a loaded machine's delay
#: of the timer thread still keeps every gap under the 30 s that issue 45 promises.
HEARTBEAT_SECONDS = 20.0
#: A stage's line waits this long (seconds; 0, the default: at once, in the caller's thread,
#: unconditionally: see "Timing" above). The tests' fixture raises it to silence the lines.
QUIET_SECONDS = 0.0


def elapsed_text(seconds: float) -> str:
    """``seconds`` as ``1h02m03s``, ``1m30s`` or ``12s``.

    >>> elapsed_text(90.4), elapsed_text(7), elapsed_text(3723)
    ('1m30s', '7s', '1h02m03s')
    """
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


@contextlib.contextmanager
def stages(names: Sequence[str], *, stream=None, clock: Callable[[], float] = time.monotonic,
           interval: float | None = None, quiet: float | None = None) -> Iterator[Callable[[str], None]]:
    """Yields ``stage(name)``, called as each of ``names`` starts; the last stage ends with
    the block. ``interval``: the heartbeat's period (None: :func:`heartbeat_seconds`, read
    at entry); ``quiet``: how long a stage runs before its line (None: :data:`QUIET_SECONDS`);
    ``clock``: the elapsed time's source. Prints nothing when ``stream`` (stderr) is a
    terminal."""
    stream = sys.stderr if stream is None else stream
    shown = not _is_terminal(stream)
    period = heartbeat_seconds() if interval is None else interval
    wait = QUIET_SECONDS if quiet is None else quiet
    lock, current = threading.Lock(), {"stop": None, "thread": None}

    def write(line: str) -> None:
        with lock:
            print(f"privgraph: {line}", file=stream, flush=True)

    def end() -> None:
        if current["stop"] is not None:
            current["stop"].set()
            current["thread"].join()
            current["stop"] = current["thread"] = None

    def stage(name: str) -> None:
        if not shown:
            return
        end()
        heartbeat.at(None)  # a new stage: the last one's position is gone
        where = f"stage {names.index(name) + 1}/{len(names)}"
        if wait <= 0:
            write(f"{where}: {name}")
        stop, start = threading.Event(), clock()

        def beat() -> None:
            if wait > 0:
                if stop.wait(wait):
                    return
                write(f"{where}: {name}")
            while not stop.wait(period):
                at = heartbeat.position()
                write(f"still in {where} ({name}){'' if at is None else ': ' + at}, "
                      f"{elapsed_text(clock() - start)} elapsed")

        current["stop"], current["thread"] = stop, threading.Thread(target=beat, daemon=True,
                                                                    name="privgraph-heartbeat")
        current["thread"].start()

    try:
        yield stage
    finally:
        end()
        heartbeat.at(None)


def heartbeat_seconds() -> float:
    """The heartbeat's period: ``PRIVGRAPH_HEARTBEAT_SECONDS`` when set to a positive number,
    else :data:`HEARTBEAT_SECONDS`.

    >>> import os
    >>> os.environ["PRIVGRAPH_HEARTBEAT_SECONDS"] = "0.5"; heartbeat_seconds()
    0.5
    >>> os.environ["PRIVGRAPH_HEARTBEAT_SECONDS"] = "soon"; heartbeat_seconds() == HEARTBEAT_SECONDS
    True
    >>> del os.environ["PRIVGRAPH_HEARTBEAT_SECONDS"]
    """
    try:
        seconds = float(os.environ.get("PRIVGRAPH_HEARTBEAT_SECONDS", ""))
    except ValueError:
        return HEARTBEAT_SECONDS
    return seconds if 0 < seconds < float("inf") else HEARTBEAT_SECONDS


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
