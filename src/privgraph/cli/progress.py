"""Stage lines and a heartbeat on stderr when it is not a terminal (a log, a batch job).

Every long command names its stages in order. Off a terminal each stage that is still running
after :data:`QUIET_SECONDS` prints one plain line (``privgraph: stage 2/3: synthetic rows``),
so a run that ends at once (a bad input's one-line error) prints nothing more, and while it
runs a heartbeat
at least every :data:`HEARTBEAT_SECONDS` (``privgraph: still in stage 2/3 (synthetic rows),
1m30s elapsed``) from a background timer thread that stops with the stage. On a terminal
nothing is printed here: the command's rich display shows the same. A line names the stage
and the time only, never anything read from the data.

>>> import io
>>> log = io.StringIO()
>>> with stages(("counting", "writing"), stream=log, quiet=0) as stage:
...     stage("counting")
...     stage("writing")
>>> print(log.getvalue(), end="")
privgraph: stage 1/2: counting
privgraph: stage 2/2: writing
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Callable, Iterator, Sequence

#: The longest gap, in seconds, between two lines during a stage (tests lower it).
HEARTBEAT_SECONDS = 30.0
#: A stage's line waits this long (seconds), so a stage that ends at once prints nothing (0: at
#: once, in the caller's thread).
QUIET_SECONDS = 2.0


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
    the block. ``interval``: the heartbeat's period (None: :data:`HEARTBEAT_SECONDS`, read
    at entry); ``quiet``: how long a stage runs before its line (None: :data:`QUIET_SECONDS`);
    ``clock``: the elapsed time's source. Prints nothing when ``stream`` (stderr) is a
    terminal."""
    stream = sys.stderr if stream is None else stream
    shown = not _is_terminal(stream)
    period = HEARTBEAT_SECONDS if interval is None else interval
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
                write(f"still in {where} ({name}), {elapsed_text(clock() - start)} elapsed")

        current["stop"], current["thread"] = stop, threading.Thread(target=beat, daemon=True,
                                                                    name="privgraph-heartbeat")
        current["thread"].start()

    try:
        yield stage
    finally:
        end()


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
