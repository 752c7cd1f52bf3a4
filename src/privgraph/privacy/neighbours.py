"""Neighbouring relations, count sensitivities, and the checks every mechanism shares.

Differential privacy compares a mechanism's output distributions on *neighbouring*
datasets. privgraph names the relation on every mechanism and never defaults it:

* ``ADD_REMOVE``: D' is D with one record added or removed. The number of records n is
  itself private.
* ``REPLACE_ONE``: D' is D with one record replaced by another. n is public.

An (epsilon, delta) guarantee under ADD_REMOVE implies (2 epsilon, ...) under REPLACE_ONE
(a replacement is a removal then an addition), so the two are not interchangeable: a
sensitivity must be derived for the relation it is used with.
"""

from __future__ import annotations

import enum
import math

from privgraph.validation import InvalidInput
# the scalar checks live in privgraph.validation (one per kind); re-exported here, where callers import them
from privgraph.validation import check_delta, check_epsilon, check_rate, check_sensitivity, check_share  # noqa: F401


class Neighbours(enum.Enum):
    """The neighbouring relation a guarantee holds under.

    Examples
    --------
    >>> Neighbours.parse("add_remove")
    <Neighbours.ADD_REMOVE: 'add_remove'>
    >>> Neighbours.REPLACE_ONE.value
    'replace_one'
    """

    ADD_REMOVE = "add_remove"
    REPLACE_ONE = "replace_one"

    @classmethod
    def parse(cls, value: "Neighbours | str", name: str = "neighbours") -> "Neighbours":
        """Accept a member or its name/value (case-insensitive); reject anything else (the
        message names ``name``)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip().lower().replace("-", "_").replace("/", "_")
            for member in cls:
                if key in (member.value, member.name.lower()):
                    return member
        raise InvalidInput(f"{name} must be one of {[m.value for m in cls]}, got {value!r}")


def histogram_l1_sensitivity(neighbours: Neighbours) -> int:
    """L1 sensitivity of one histogram (a contingency table) of record counts.

    Derivation: each record adds 1 to exactly one cell. Adding or removing a record
    changes one cell by 1 (L1 = 1); replacing a record moves one count from one cell
    to another (L1 = 2, or 0 if both fall in the same cell).

    Examples
    --------
    >>> histogram_l1_sensitivity(Neighbours.ADD_REMOVE)
    1
    >>> histogram_l1_sensitivity(Neighbours.REPLACE_ONE)
    2
    """
    return {Neighbours.ADD_REMOVE: 1, Neighbours.REPLACE_ONE: 2}[Neighbours.parse(neighbours)]


def histogram_l2_sensitivity(neighbours: Neighbours) -> float:
    """L2 sensitivity of one histogram: 1 under add/remove, sqrt(2) under replace-one.

    Same derivation as :func:`histogram_l1_sensitivity`, with the Euclidean norm of the
    change vector (one +-1, or a +1 and a -1).

    >>> histogram_l2_sensitivity(Neighbours.REPLACE_ONE) == math.sqrt(2)
    True
    """
    return {Neighbours.ADD_REMOVE: 1.0, Neighbours.REPLACE_ONE: math.sqrt(2.0)}[
        Neighbours.parse(neighbours)
    ]


# The checks every mechanism shares (epsilon, delta, a sensitivity, a rate, a share) live in
# privgraph.validation, one per kind; re-exported here, where mechanisms and tests import them.
