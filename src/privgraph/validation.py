"""Bad input: the one error a user's mistake raises, and the small checks that raise it.

The bottom layer: it imports nothing from privgraph, so every layer (privacy, data, stats,
the algorithms, the CLI) checks its arguments with the same functions and the same wording,
each message naming the input, what was expected and what was passed.

:class:`InvalidInput` is a ``ValueError`` (callers that catch ValueError keep working);
:class:`UnknownName` is also a ``KeyError`` (a column, clique or network not found). The
command line turns these, and only these (with the budget's refusal and a file that cannot
be opened), into a one-line message; any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import math
import numbers


class InvalidInput(ValueError):
    """A user's input is not what privgraph expects: the message names it and what was expected."""


class UnknownName(InvalidInput, KeyError):
    """A name (a column, a clique's variable, a network) that is not where it was looked for.

    >>> str(UnknownName("column 'x' not in domain ['a']"))  # unquoted, unlike a KeyError's
    "column 'x' not in domain ['a']"
    """

    __str__ = BaseException.__str__


def one_of(name: str, value, choices, *, alternatives: str = ""):
    """``value`` if it is one of ``choices``; else InvalidInput naming them (as written:
    a tuple, a list, a sorted list), ``alternatives`` said after them.

    >>> one_of("noise", "laplace", ("laplace", "gaussian"))
    'laplace'
    >>> one_of("noise", "gauss", ("laplace", "gaussian"))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: noise must be one of ('laplace', 'gaussian'), got 'gauss'
    >>> one_of("method", "x", ("a",), alternatives=" or a function")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: method must be one of ('a',) or a function, got 'x'
    """
    try:
        found = value in choices
    except TypeError:  # an unhashable value asked of a dict or set
        found = False
    if not found:
        raise InvalidInput(f"{name} must be one of {choices}{alternatives}, got {value!r}")
    return value


def positive_int(name: str, value, minimum: int = 1, *, or_none: bool = False, whole_floats: bool = False,
                 alternatives: str = ""):
    """``value`` as an int if it is an integer >= ``minimum`` (None too with ``or_none``);
    ``whole_floats`` accepts a float with an integral value (``3.0``). A bool is refused;
    ``alternatives`` (the values a caller accepts besides) is said in the message.

    >>> positive_int("rounds", 3), positive_int("max_rounds", None, or_none=True), positive_int("k", 2.0, whole_floats=True)
    (3, None, 2)
    >>> positive_int("rounds", 0)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: rounds must be an integer >= 1, got 0
    >>> positive_int("max_cond_size", -1, 0, or_none=True)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: max_cond_size must be an integer >= 0 or None, got -1
    """
    if value is None and or_none:
        return None
    integral = isinstance(value, numbers.Integral) or (
        whole_floats and isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer())
    if isinstance(value, bool) or not integral or value < minimum:
        raise InvalidInput(f"{name} must be an integer >= {minimum}{' or None' if or_none else ''}{alternatives}, "
                           f"got {value!r}")
    return int(value)


def positive_count(value, name: str = "count") -> int:
    """A parameter kind: an integer >= 1 (a whole float too), as :func:`positive_int` says it.

    >>> positive_count(3.0, "cap")
    3
    >>> positive_count(0, "--cap")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --cap must be an integer >= 1, got 0
    """
    return positive_int(name, value, whole_floats=True)


def count(value, name: str = "count") -> int:
    """A parameter kind: an integer >= 0 (a whole float too).

    >>> count(-1, "--max-cond-size")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --max-cond-size must be an integer >= 0, got -1
    """
    return positive_int(name, value, 0, whole_floats=True)


def in_range(name: str, value, low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a float if it is a real number in the interval from ``low`` to ``high``
    (each end closed unless ``low_open`` / ``high_open``); else InvalidInput naming the
    interval. A bool or a non-number is refused.

    >>> in_range("delta", 0.0, 0, 1, high_open=True)
    0.0
    >>> in_range("split", 0, 0, 1, low_open=True, high_open=True)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: split must lie in (0, 1), got 0
    """
    inside = is_real(value) and (low < value if low_open else low <= value) and \
        (value < high if high_open else value <= high)
    if not inside:
        raise InvalidInput(f"{name} must lie in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}, "
                           f"got {value!r}")
    return float(value)


def is_real(value) -> bool:
    """Whether ``value`` is a real number (not a bool).

    >>> is_real(1.5), is_real(True), is_real("1")
    (True, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


__all__ = ["InvalidInput", "UnknownName", "count", "in_range", "is_real", "one_of", "positive_count", "positive_int"]
