"""A public wall-clock cap on a release's post-processing: it stops cleanly instead of running on.

``privgraph release --max-seconds S`` (or ``with time_cap(S): ...`` in Python) bounds the
time a run spends **after its data passes**: the clock starts when the last table the run
needs has been counted (:func:`start_clock`: the tree release counts every pair table in one
pass before its first noise, a PC release's parameters once its structure is known), and
the model fits, the tree's rounds and the sampler check it (:func:`check_time`) between
steps. Past the cap they raise :class:`TimeCapReached`; the CLI then writes nothing (its
outputs are written together, last) and says so in one line.

Privacy: what runs under the clock is of three kinds. (1) Post-processing of released
tables (the fits, the selections' predictions, the sampler) and of the public structure (the
model-size checks of :mod:`privgraph.release.model_size`: while a cap holds, every candidate
of a selection is checked before its race, so their number is public, never the true
scores'; without a cap they run in race order until one passes, the same pick for less
work, since an uncapped run's time is not an output). (2) The noise
draws of tables already counted, whose time does not read the counts. (3) What is **not**
post-processing: the selections' scores are computed from the true tables and each
exponential mechanism's race reads them, at a cost fixed by the number of candidates. So
whether the cap is reached depends on released values, public sizes and the machine, not on
a record beyond what was released, up to the floating-point time of arithmetic on true
values (not covered, as for any DP library). The time of the data passes themselves (which
grows with the number of rows, private under add/remove) is outside the clock; like any DP
library's running time, it is not covered by the guarantee. A stopped run has spent its
budget.

>>> with time_cap(None):   # no cap: the checks do nothing
...     start_clock(); check_time("a step")
>>> import time
>>> with time_cap(0.0):
...     check_time("before the clock")   # not started yet: nothing to check
...     start_clock(); time.sleep(0.01); check_time("a step")
Traceback (most recent call last):
...
privgraph.timecap.TimeCapReached: the release stopped at a step, past its time cap of 0 s (--max-seconds): nothing written
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time

from privgraph.validation import InvalidInput


class TimeCapReached(RuntimeError):
    """A run passed its public time cap (:func:`time_cap`)."""


_CAP: contextvars.ContextVar = contextvars.ContextVar("privgraph_time_cap", default=None)


@contextlib.contextmanager
def time_cap(seconds: float | None, what: str = "the release"):
    """Cap the post-processing of the runs inside (``seconds`` of wall-clock time from
    :func:`start_clock`; None: no cap). Nested caps: the innermost holds."""
    check_seconds(seconds)
    token = _CAP.set(None if seconds is None else {"seconds": float(seconds), "start": None, "what": what})
    try:
        yield
    finally:
        _CAP.reset(token)


def check_seconds(seconds: float | None) -> float | None:
    """A time cap as given: None, or a finite number of seconds >= 0.

    >>> check_seconds(-1)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --max-seconds must be a number of seconds >= 0, got -1
    """
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                or not math.isfinite(seconds) or seconds < 0):
        raise InvalidInput(f"--max-seconds must be a number of seconds >= 0, got {seconds!r}")
    return seconds


def is_capped() -> bool:
    """Whether a time cap holds here (public: the user's ``--max-seconds``).

    >>> with time_cap(10):
    ...     is_capped()
    True
    >>> is_capped()
    False
    """
    return _CAP.get() is not None


def start_clock() -> None:
    """Start the cap's clock, if there is a cap and it has not started (the data passes are done)."""
    cap = _CAP.get()
    if cap is not None and cap["start"] is None:
        cap["start"] = time.monotonic()


def check_time(where: str) -> None:
    """Raise :class:`TimeCapReached` naming ``where`` when the started clock is past the cap."""
    cap = _CAP.get()
    if cap is not None and cap["start"] is not None and time.monotonic() - cap["start"] > cap["seconds"]:
        raise TimeCapReached(f"{cap['what']} stopped at {where}, past its time cap of {cap['seconds']:g} s "
                             "(--max-seconds): nothing written")


__all__ = ["TimeCapReached", "check_seconds", "check_time", "is_capped", "start_clock", "time_cap"]
