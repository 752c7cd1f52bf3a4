"""The one contract every privgraph estimator shares (PrivPC, PrivateANM, PrivateMRF, PrivateRelease).

* **Parameters** are the constructor's keywords, keyword-only and led by the privacy ones
  (``__init__(self, *, epsilon, delta, neighbours, random_state, ...)``), stored verbatim
  (never rewritten), and read from its signature: ``get_params`` /
  ``set_params``, a repr and ``sklearn.base.clone`` behave as scikit-learn's do, without
  importing it.
* **Fitted or not**: fitted attributes end in ``_``; before ``fit`` they raise
  :class:`NotFittedError`, which is both a ValueError and an AttributeError (as
  scikit-learn's is), and ``sklearn.utils.validation.check_is_fitted`` works.
* **Privacy**: ``neighbours`` names the relation of the guarantee; ``fit(..., budget=)``
  lets several fits share one :class:`~privgraph.privacy.Budget`; ``privacy_plan(domain,
  n_rows)``, the same signature on every estimator, returns a
  :class:`~privgraph.privacy.PrivacyPlan` (the relation, the composition and the charges;
  ``plan.epsilon(delta)``, ``plan.check(budget)``) from public facts only, before any data is
  read, and equal to the ledger ``fit`` then charges (``plan == est.fit(X).ledger_``;
  ``n_rows`` is a public guess under add/remove, None where the plan needs no n).
* **Checked once**: ``fit`` and ``privacy_plan`` (and any method of ``CHECKED_METHODS``) first
  run :meth:`PrivateEstimator.check_params`: every declared parameter by its declaration's
  check (its kind, of :mod:`privgraph.validation`, one message a kind), then the estimator's
  rules across parameters (``_check_rules``), before any data is read; once per estimator
  object in a call (a fit's own plan, the add/remove form's clone planned then fitted: each
  checked once). The estimator's code does not check a
  declared parameter again, nor does the command line (``tests/test_checks_once.py``).
* **Declarations**: ``PARAMS``, one :class:`Param` per constructor parameter (its one-line
  help, its default, its closed set of choices, its kind of check), kept in
  :mod:`privgraph.declarations`, which imports no numerical stack: the command line builds its
  options from them (``privgraph.cli.params``) without importing the estimator, so a flag's
  default, choices and help are the estimator's, and ``privgraph COMMAND --help`` stays fast.
* **Randomness**: ``random_state=None`` draws noise from the SecureSampler; an integer, a
  numpy Generator or a SeededSampler makes it reproducible and therefore NOT private, and
  every fit says so with a :class:`UserWarning`.

The one ``fit`` shape: ``fit(X, *, domain=None, infer_domain=False, budget=None)``, the data
the only positional argument (a pair estimator's two columns), everything else keyword-only
(``domain``: a public :class:`~privgraph.data.Domain`, a codebook path or dict; ``budget``: an
outside Budget); an estimator adds keywords of its own after these:

* ``PrivPC.fit(X, y=None, *, names=None, domain=None, infer_domain=False, budget=None, on_level=None)``:
  X a DataFrame, a 2-D array with ``names``, a CSV/Parquet path or a count engine (``y`` is
  ignored, as in scikit-learn's unsupervised estimators).
* ``PrivateMRF.fit(X, *, domain=None, infer_domain=False, budget=None)``: X a DataFrame,
  a CSV/Parquet path, a count engine, or integer codes with a Domain.
* ``PrivateRelease.fit(X, *, domain=None, infer_domain=False, budget=None)``: X a DataFrame,
  a CSV/Parquet path or a count engine.
* ``PrivateANM.fit(x, y, *, domain=None, infer_domain=False, budget=None)``: the pair
  estimator takes its two columns (arrays or Series); ``privacy_plan(domain, n_rows)`` takes
  the pair's domain or None.

**Methods inside an estimator** are objects, not strings branched on: PrivPC's skeleton
methods are :data:`privgraph.causal.methods.METHODS` (each with ``relations``,
``composition``, ``plan`` and ``run``), which its ``fit`` and ``privacy_plan`` and the
release's planner all read; PrivateMRF's fits are :data:`privgraph.mrf.fits.FITS` (a fit
registered there is a ``--method`` choice too: :mod:`privgraph.registry`). **Add/remove**: any estimator with this contract (a replace-one
``fit`` and ``privacy_plan``) gets its add/remove form from
:class:`privgraph.privacy.add_remove.AddRemove` (the size released, the data resized secretly
to the public size it gives, the replace-one fit on it, its ledger relabelled). **The person
as the unit**: any estimator with this contract and a ``max_rows_per_person`` parameter gets
its per-person form from :func:`privgraph.privacy.person.fit_by_person` (the rows truncated to
at most k per person of the codebook's ``"id"`` column, the add/remove fit run at the row
target, its ledger carrying the unit).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Callable

from privgraph.privacy.neighbours import Neighbours, check_delta, check_epsilon
from privgraph.validation import InvalidInput, one_of

#: Message of the warning a fit with seeded noise gives.
SEEDED_WARNING = "random_state seeds the noise: reproducible and NOT private (tests and experiments only)"


@dataclass(frozen=True)
class Param:
    """The declaration of one constructor parameter, beside its estimator's ``__init__``.

    ``help`` is one user-facing line (the command line's option help); ``default`` the
    constructor's default (its signature repeats it; a test holds the two equal); ``choices``
    the closed set of values where there is one (the names of the registry that holds them: a
    test holds the two equal); ``kind`` a check ``kind(value, name) -> value`` that raises
    InvalidInput naming ``name`` (as :func:`~privgraph.privacy.neighbours.check_epsilon` does).

    >>> Param("noise", "Noise of the tables.", choices=("laplace", "gaussian")).check("gauss", "--noise")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --noise must be one of ('laplace', 'gaussian'), got 'gauss'
    """

    name: str
    help: str
    choices: tuple = ()
    kind: Callable | None = None
    default: object = inspect.Parameter.empty

    def check(self, value, name: str | None = None):
        """``value`` checked by ``kind``, else against ``choices``; the message names ``name``
        (default: the parameter's). None passes where the default is None (not given)."""
        name = name or self.name
        if value is None and self.default is None:  # "not given": the estimator's own default
            return None
        if self.kind is not None:
            return self.kind(value, name)
        return one_of(name, value, self.choices) if self.choices else value


#: ``random_state``'s help, the same on every estimator.
RANDOM_STATE_HELP = "Seed the noise (tests and experiments only: seeded noise is NOT private); None: secure noise."


def privacy_params(epsilon: str, delta: str, neighbours: str, *, default_delta: float | None,
                   default_neighbours: str, random_state: str = RANDOM_STATE_HELP) -> tuple[Param, ...]:
    """The declarations of the four privacy parameters every estimator leads with, by their helps
    and the defaults that differ between estimators (epsilon's is 1.0 and random_state's None on
    every one).

    >>> [(p.name, p.choices, p.default) for p in privacy_params("e", "d", "n", default_delta=1e-6,
    ...                                                         default_neighbours="replace_one")][2]
    ('neighbours', ('add_remove', 'replace_one'), 'replace_one')
    """
    return (Param("epsilon", epsilon, kind=check_epsilon, default=1.0),
            Param("delta", delta, kind=check_delta, default=default_delta),
            Param("neighbours", neighbours, choices=tuple(m.value for m in Neighbours), kind=Neighbours.parse,
                  default=default_neighbours),
            Param("random_state", random_state, default=None))


class NotFittedError(ValueError, AttributeError):
    """An estimator's fitted attribute was read before ``fit``."""


class PrivateEstimator:
    """Base class: parameters from the signature, clone/repr, fitted checks, seeded warning.

    Subclasses define ``__init__`` with keyword-only parameters stored as attributes of the
    same names (``epsilon``, ``delta``, ``neighbours`` and ``random_state`` first), ``fit``
    and ``privacy_plan(domain, n_rows)``.

    Examples
    --------
    >>> class Toy(PrivateEstimator):
    ...     def __init__(self, *, epsilon=1.0, random_state=None):
    ...         self.epsilon, self.random_state = epsilon, random_state
    >>> Toy(epsilon=2.0)
    Toy(epsilon=2.0)
    >>> Toy().set_params(epsilon=0.5).get_params()
    {'epsilon': 0.5, 'random_state': None}
    >>> Toy().ledger_
    Traceback (most recent call last):
    ...
    privgraph.estimator.NotFittedError: Toy is not fitted yet: call fit first (no attribute 'ledger_')
    """

    #: One :class:`Param` per constructor parameter, from :mod:`privgraph.declarations` (a test
    #: holds the names and defaults equal to the signature's).
    PARAMS: tuple[Param, ...] = ()
    #: The methods that read the parameters from outside: each runs :meth:`check_params` first.
    CHECKED_METHODS: tuple[str, ...] = ("fit", "privacy_plan")

    def __init_subclass__(cls, **kwargs):
        """Each method of :attr:`CHECKED_METHODS` (``fit``, ``privacy_plan``) a subclass defines
        runs :meth:`check_params` first (:func:`_checked_first`), as scikit-learn's
        ``_fit_context`` runs its ``_parameter_constraints``."""
        super().__init_subclass__(**kwargs)
        for name in cls.CHECKED_METHODS:
            if callable(method := cls.__dict__.get(name)) and not getattr(method, "checks_params", False):
                setattr(cls, name, _checked_first(method))

    def check_params(self) -> None:
        """Check every declared parameter once, by its declaration (:meth:`Param.check`, the
        message naming the parameter), then the rules across parameters (:meth:`_check_rules`).
        Reads the parameters only: ``fit`` and ``privacy_plan`` call it before any data is read
        or any plan is made, and the command line before it opens a file.

        >>> class Toy(PrivateEstimator):
        ...     PARAMS = (Param("epsilon", "Total privacy budget epsilon.", kind=check_epsilon, default=1.0),)
        ...     def __init__(self, *, epsilon=1.0):
        ...         self.epsilon = epsilon
        ...     def fit(self, X):
        ...         return self
        >>> Toy(epsilon=0).fit(None)
        Traceback (most recent call last):
        ...
        privgraph.validation.InvalidInput: epsilon must be positive and finite, got 0
        """
        for param in self.PARAMS:
            param.check(getattr(self, param.name))
        self._check_rules()

    def _check_rules(self) -> None:
        """The rules across parameters (each parameter is already checked by its declaration);
        a subclass's refusals of combinations (none here). Reads the parameters only."""

    @classmethod
    def declared_params(cls) -> dict[str, Param]:
        """The declarations of :attr:`PARAMS` by name.

        >>> class Toy(PrivateEstimator):
        ...     PARAMS = (Param("epsilon", "Total privacy budget epsilon.", kind=check_epsilon, default=1.0),)
        ...     def __init__(self, *, epsilon=1.0):
        ...         self.epsilon = epsilon
        >>> Toy.declared_params()["epsilon"].default
        1.0
        """
        return {p.name: p for p in cls.PARAMS}

    @classmethod
    def _param_names(cls) -> list[str]:
        init = cls.__init__
        if init is object.__init__:
            return []
        params = inspect.signature(init).parameters.values()
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            raise TypeError(f"{cls.__name__}.__init__ must name its parameters (no *args or **kwargs)")
        return sorted(p.name for p in params if p.name != "self")

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters, as given."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters by name; an unknown name is a ValueError."""
        valid = self._param_names()
        if unknown := sorted(set(params) - set(valid)):
            raise InvalidInput(f"invalid parameters {unknown} for {type(self).__name__}; valid: {valid}")
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        shown = [f"{k}={v!r}" for k, v in self.get_params().items() if not _same(v, defaults.get(k, inspect._empty))]
        return f"{type(self).__name__}({', '.join(shown)})"

    def __getattr__(self, name: str):
        # only reached when normal lookup fails: a fitted attribute asked for too early
        if name.endswith("_") and not name.startswith("__"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit first (no attribute {name!r})")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __sklearn_is_fitted__(self) -> bool:
        return "ledger_" in vars(self)

    def __sklearn_tags__(self):
        # lazy: sklearn is optional; called by scikit-learn only, which is then already imported
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False), non_deterministic=True)

    def noise_sampler(self):
        """The sampler of ``random_state``, warning when it is seeded (not private)."""
        from privgraph.privacy.samplers import resolve_sampler  # lazy: numpy, not for the declarations

        sampler = resolve_sampler(self.random_state)
        if not sampler.is_secure:
            warnings.warn(SEEDED_WARNING, UserWarning, stacklevel=_caller_level())
        return sampler


def _caller_level() -> int:
    """The ``stacklevel`` of a warning that points at the first frame outside privgraph (the
    user's line that called ``fit``), however deep inside the package it is raised (the checked
    wrappers and stages add frames)."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1  # the caller of this function: the warning's own frame
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


#: The estimators checked in the outermost checked call now running (by id, each held so that
#: its id is not reused meanwhile); None outside any.
_CHECKED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("privgraph_checked", default=None)


def _checked_first(method):
    """``method`` (an estimator's ``fit`` or ``privacy_plan``) running
    :meth:`~PrivateEstimator.check_params` first, once per estimator object and outermost call:
    a call nested in a checked call (a fit calling its own plan or predictions, a subclass's fit
    calling its parent's, the add/remove form planning and then fitting its replace-one clone)
    checks an object already checked in it nothing again; an object the call makes (that
    clone) is checked once, at its first call."""

    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        done = _CHECKED.get()
        token = _CHECKED.set({}) if done is None else None
        done = _CHECKED.get()
        try:
            if id(self) not in done:
                self.check_params()
                done[id(self)] = self
            return method(self, *args, **kwargs)
        finally:
            if token is not None:
                _CHECKED.reset(token)

    checked.checks_params = True
    return checked


def _same(value, default) -> bool:
    if default is inspect._empty:
        return False
    try:
        return bool(value is default or value == default) and type(value) is type(default)
    except (TypeError, ValueError):  # e.g. arrays
        return False


__all__ = ["NotFittedError", "Param", "PrivateEstimator", "RANDOM_STATE_HELP", "SEEDED_WARNING", "privacy_params"]
