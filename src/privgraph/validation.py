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


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    """Return epsilon as a float if it is positive and finite, else raise InvalidInput.

    >>> check_epsilon(0.5)
    0.5
    >>> check_epsilon(0)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: epsilon must be positive and finite, got 0
    """
    return positive_finite(epsilon, name)


def positive_finite(value, name: str = "value") -> float:
    """A parameter kind: a real number > 0 and finite (epsilon, a ridge, a lengthscale).

    >>> positive_finite(float("inf"), "ridge")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: ridge must be positive and finite, got inf
    """
    if not is_real(value) or not (0 < value < math.inf):
        raise InvalidInput(f"{name} must be positive and finite, got {value!r}")
    return float(value)


def check_delta(delta: float, name: str = "delta") -> float:
    """Return delta as a float if it lies in [0, 1), else raise InvalidInput.

    >>> check_delta(1)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: delta must lie in [0, 1), got 1
    """
    return in_range(name, delta, 0, 1, high_open=True)


def check_sensitivity(sensitivity: float, name: str = "sensitivity") -> float:
    """Return the sensitivity as a float if it is non-negative and finite.

    >>> check_sensitivity(-1)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: sensitivity must be non-negative and finite, got -1
    """
    if not is_real(sensitivity) or not (0 <= sensitivity < math.inf):
        raise InvalidInput(f"{name} must be non-negative and finite, got {sensitivity!r}")
    return float(sensitivity)


def check_rate(rate: float, name: str = "rate") -> float:
    """Return a sampling rate as a float if it lies in (0, 1].

    >>> check_rate(1.5, "sampling rate")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: sampling rate must lie in (0, 1], got 1.5
    """
    return in_range(name, rate, 0, 1, low_open=True)


def check_share(share: float, name: str = "share") -> float:
    """Return a share or probability as a float if it lies strictly between 0 and 1.

    >>> check_share(0, "split")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: split must lie in (0, 1), got 0
    """
    return in_range(name, share, 0, 1, low_open=True, high_open=True)


def positive_number(value, name: str = "value") -> float:
    """A parameter kind: a real number > 0 (``math.inf`` too: no bound).

    >>> positive_number(float("inf"), "record_norm")
    inf
    >>> positive_number(0, "record_norm")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: record_norm must be a positive number (inf: no bound), got 0
    """
    if not is_real(value) or not value > 0:
        raise InvalidInput(f"{name} must be a positive number (inf: no bound), got {value!r}")
    return float(value)


def function_or_none(value, name: str = "value"):
    """A parameter kind: a function (a hook the caller gives from Python) or None.

    >>> function_or_none(None, "orientation") is None
    True
    >>> function_or_none("meek", "orientation")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: orientation must be a function or None, got 'meek'
    """
    if value is not None and not callable(value):
        raise InvalidInput(f"{name} must be a function or None, got {value!r}")
    return value


def count_or_auto(value, name: str = "value"):
    """A parameter kind: ``"auto"``, None or an integer >= 1 (a whole float too), as
    :func:`positive_int` says it.

    >>> count_or_auto("auto", "max_rounds"), count_or_auto(3.0, "max_rounds")
    ('auto', 3)
    >>> count_or_auto(2.5, "max_rounds")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: max_rounds must be an integer >= 1 or None or 'auto', got 2.5
    """
    if value == "auto" and isinstance(value, str):
        return value
    return positive_int(name, value, or_none=True, whole_floats=True, alternatives=" or 'auto'")


def choice(choices, *, auto: bool = False, function: bool = False):
    """A parameter kind: one of ``choices`` (as :func:`one_of` says it); with ``auto`` the
    message says ``'auto' or one of`` the others (sorted); with ``function`` a function is
    accepted too (a custom method given from Python).

    >>> choice(("auto", "g", "kendall"), auto=True)("pearson", "ci_test")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: ci_test must be 'auto' or one of ['g', 'kendall'], got 'pearson'
    >>> choice(("cgm-em",), function=True)(len, "method") is len
    True
    """
    def check(value, name: str = "value"):
        if function and callable(value):
            return value
        if auto and isinstance(value, str) and value not in choices:
            raise InvalidInput(f"{name} must be 'auto' or one of {sorted(c for c in choices if c != 'auto')}, "
                               f"got {value!r}")
        return one_of(name, value, choices, alternatives=" or a function" if function else "")

    return check


def is_real(value) -> bool:
    """Whether ``value`` is a real number (not a bool).

    >>> is_real(1.5), is_real(True), is_real("1")
    (True, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


__all__ = ["InvalidInput", "UnknownName", "check_delta", "check_epsilon", "check_rate", "check_sensitivity", "check_share",
           "choice", "count", "count_or_auto", "function_or_none", "in_range", "is_real", "one_of", "positive_count",
           "positive_finite", "positive_int", "positive_number"]
