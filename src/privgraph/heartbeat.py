"""Where a long loop is, for the command line's heartbeat: a public position, never a data value.

A long loop (PC's levels, the tree's selections, AIM's rounds, a model fit's iterations, the
sampler's chunks, the outputs being written, a batch of direction pairs) says where it is with
:func:`at`; off a terminal the heartbeat of :mod:`privgraph.cli.progress` prints the last
position beside the stage and its elapsed time, so a log shows what is left ("the adaptive
round 4 of at most 64"). A position names a step and counts of public or released things
only: the public domain's sizes, a plan's caps, the number of edges a released graph still
has, a round's number. It never counts rows or reads a value of the data (under add/remove
the number of rows is private). Nothing is printed here, and a position costs one assignment,
so a loop may set one per step.

>>> at("level 2: edge 3 of 40")
>>> position()
'level 2: edge 3 of 40'
>>> at(None); position() is None
True
>>> of(3, 40, "edge")
'edge 3 of 40'
"""

from __future__ import annotations

_POSITION: list = [None]  # one slot read by the heartbeat's thread (a str assignment is atomic)


def at(where: str | None) -> None:
    """Set the current position of the long work (None: none)."""
    _POSITION[0] = where


def position() -> str | None:
    """The last position set by :func:`at` (None when none is set)."""
    return _POSITION[0]


def of(done: int, total: int, what: str, *, at_most: bool = False) -> str:
    """``"<what> <done> of <total>"`` (``"of at most"`` when ``total`` is a cap), with thousands
    separated.

    >>> of(340, 1200, "test"), of(4, 64, "round", at_most=True)
    ('test 340 of 1,200', 'round 4 of at most 64')
    """
    return f"{what} {done:,} of {'at most ' if at_most else ''}{total:,}"


__all__ = ["at", "of", "position"]
