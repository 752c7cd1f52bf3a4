"""Typed privacy curves and sub-samplings of a charge, converted to the accountants' forms here.

A :class:`~privgraph.privacy.ledger.Charge` may carry an exact description of its privacy curve
(``curve``) and of the sub-sampling in front of it (``sampling``), which the PLD and RDP
accountants of :mod:`privgraph.privacy.composition` use for tighter totals than the charge's
own (epsilon, delta). Each is a frozen dataclass with the one method per accountant that
converts it (a ``dp_accounting`` PLD, a ``dp_accounting`` ``DpEvent``), so the accountants
dispatch on type in one place, never on strings and positions.

Curves (the mechanism *before* any sub-sampling):

* :class:`DiscreteLaplaceCurve` ``(parameter, sensitivity)``: the discrete Laplace on a grid,
  ``parameter = 1/t`` and the sensitivity in grid units (:mod:`~privgraph.privacy.mechanisms`).
* :class:`DiscreteGaussianCurve` ``(sigma, sensitivity)``: the discrete Gaussian on a grid.
* :class:`GaussianCurve` ``(noise_multiplier)``: the Gaussian at sensitivity 1.
* :class:`ZCDPCurve` ``(rho)``: a rho-zCDP mechanism.

Sub-samplings (``epsilon``/``delta`` of the charge are always the amplified values):

* :class:`PoissonSampling` ``(rate)``: each row independently (add/remove neighbours).
* :class:`WithoutReplacementSampling` ``(size, population)``: exactly ``size`` of
  ``population`` rows (replace-one neighbours).

:func:`as_curve` and :func:`as_sampling` accept the legacy tuples (``("zcdp", rho)``,
``("without_replacement", m, n)``, ...) and are the one place they are decoded; ``as_tuple()``
writes them back (what a printed charge showed before).

>>> as_curve(("zcdp", 0.5)), as_sampling(("poisson", 0.1))
(ZCDPCurve(rho=0.5), PoissonSampling(rate=0.1))
>>> as_sampling(("without_replacement", 10, 100)).as_tuple()
('without_replacement', 10, 100)
>>> as_curve(()) is None and as_sampling(None) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

from privgraph.validation import InvalidInput

#: The largest discrete Laplace sensitivity, in grid units, whose exact curve the PLD accountant
#: is given (re-exported and documented by :data:`privgraph.privacy.composition.PLD_MAX_SHIFT`).
PLD_MAX_SHIFT = 2**18


@dataclass(frozen=True)
class PoissonSampling:
    """Poisson sub-sampling at ``rate`` (each row independently; add/remove neighbours)."""

    rate: float

    @property
    def pld_rate(self) -> float:
        """The sampling probability the PLD accountant's exact curves take."""
        return self.rate

    def rdp_event(self, base):
        """``base`` (a ``dp_accounting`` event) behind this sub-sampling."""
        import dp_accounting as dpa  # lazy: keeps import privgraph.audit free of scipy

        return dpa.PoissonSampledDpEvent(self.rate, base)

    def as_tuple(self) -> tuple:
        return ("poisson", self.rate)


@dataclass(frozen=True)
class WithoutReplacementSampling:
    """Exactly ``size`` of ``population`` rows, uniformly (replace-one neighbours)."""

    size: int
    population: int

    @property
    def pld_rate(self) -> None:
        """None: the PLD accountant has no exact curve behind this sub-sampling."""
        return None

    def rdp_event(self, base):
        """``base`` (a ``dp_accounting`` event) behind this sub-sampling."""
        import dp_accounting as dpa  # lazy: keeps import privgraph.audit free of scipy

        return dpa.SampledWithoutReplacementDpEvent(self.population, self.size, base)

    def as_tuple(self) -> tuple:
        return ("without_replacement", self.size, self.population)


Sampling = PoissonSampling | WithoutReplacementSampling


@dataclass(frozen=True)
class DiscreteLaplaceCurve:
    """The discrete Laplace with ``parameter`` (1/t) at ``sensitivity`` grid units."""

    parameter: float
    sensitivity: int

    def pld(self, rate: float):
        """The PLD at sampling probability ``rate``, or None above :data:`PLD_MAX_SHIFT`."""
        if self.sensitivity > PLD_MAX_SHIFT:
            return None
        from dp_accounting.pld import privacy_loss_distribution as pl  # lazy: dp_accounting.pld imports scipy

        return pl.from_discrete_laplace_mechanism(self.parameter, sensitivity=int(self.sensitivity),
                                                  sampling_prob=rate)

    def rdp_event(self, sampling: Sampling | None):
        """None: enters RDP as randomized response at the charge's epsilon."""
        return None

    def as_tuple(self) -> tuple:
        return ("discrete_laplace", self.parameter, self.sensitivity)


@dataclass(frozen=True)
class DiscreteGaussianCurve:
    """The discrete Gaussian with ``sigma`` at ``sensitivity`` (same units)."""

    sigma: float
    sensitivity: int

    def pld(self, rate: float):
        from dp_accounting.pld import privacy_loss_distribution as pl  # lazy: dp_accounting.pld imports scipy

        return pl.from_discrete_gaussian_mechanism(self.sigma, sensitivity=int(self.sensitivity),
                                                   sampling_prob=rate)

    def rdp_event(self, sampling: Sampling | None):
        """A Gaussian event at noise multiplier ``sigma / sensitivity`` (equal Renyi divergences
        at integer orders; :mod:`~privgraph.privacy.mechanisms`), behind ``sampling``."""
        return _gaussian_event(self.sigma / self.sensitivity, sampling)

    def as_tuple(self) -> tuple:
        return ("discrete_gaussian", self.sigma, self.sensitivity)


@dataclass(frozen=True)
class GaussianCurve:
    """The Gaussian with ``noise_multiplier`` (sigma over the L2 sensitivity)."""

    noise_multiplier: float

    def pld(self, rate: float):
        from dp_accounting.pld import privacy_loss_distribution as pl  # lazy: dp_accounting.pld imports scipy

        return pl.from_gaussian_mechanism(self.noise_multiplier, sampling_prob=rate)

    def rdp_event(self, sampling: Sampling | None):
        return _gaussian_event(self.noise_multiplier, sampling)

    def as_tuple(self) -> tuple:
        return ("gaussian", self.noise_multiplier)


@dataclass(frozen=True)
class ZCDPCurve:
    """A rho-zCDP mechanism (Renyi curve ``alpha rho``)."""

    rho: float

    def pld(self, rate: float):
        """None: enters the PLD accountant as randomized response at the charge's epsilon."""
        return None

    def rdp_event(self, sampling: Sampling | None):
        """A zCDP event; None behind a sub-sampling (no amplification theorem is used)."""
        if sampling is not None:
            return None
        import dp_accounting as dpa  # lazy: keeps import privgraph.audit free of scipy

        return dpa.ZCDpEvent(self.rho)

    def as_tuple(self) -> tuple:
        return ("zcdp", self.rho)


Curve = DiscreteLaplaceCurve | DiscreteGaussianCurve | GaussianCurve | ZCDPCurve


def _gaussian_event(noise_multiplier: float, sampling: Sampling | None):
    import dp_accounting as dpa  # lazy: keeps import privgraph.audit free of scipy

    base = dpa.GaussianDpEvent(noise_multiplier)
    return base if sampling is None else sampling.rdp_event(base)


_CURVES = {"discrete_laplace": DiscreteLaplaceCurve, "discrete_gaussian": DiscreteGaussianCurve,
           "gaussian": GaussianCurve, "zcdp": ZCDPCurve}
_SAMPLINGS = {"poisson": PoissonSampling, "without_replacement": WithoutReplacementSampling}


def as_curve(value) -> Curve | None:
    """A typed curve from a typed curve, a legacy tuple, or nothing (``()``/None: None).

    >>> as_curve(("discrete_laplace", 0.5, 3))
    DiscreteLaplaceCurve(parameter=0.5, sensitivity=3)
    >>> as_curve(("laplace", 1.0))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: charge curve must be one of discrete_laplace, discrete_gaussian, gaussian, zcdp (typed, or as its tuple), got ('laplace', 1.0)
    """
    return _typed(value, _CURVES, "charge curve")


def as_sampling(value) -> Sampling | None:
    """A typed sub-sampling from a typed one, a legacy tuple, or nothing (``()``/None: None).

    >>> as_sampling(WithoutReplacementSampling(5, 50))
    WithoutReplacementSampling(size=5, population=50)
    """
    return _typed(value, _SAMPLINGS, "charge sampling")


def _typed(value, kinds: dict, name: str):
    if value is None or (isinstance(value, tuple) and not value):
        return None
    if isinstance(value, tuple(kinds.values())):
        return value
    if isinstance(value, tuple) and isinstance(value[0], str) and value[0] in kinds:
        try:
            return kinds[value[0]](*value[1:])
        except TypeError:
            pass
    raise InvalidInput(f"{name} must be one of {', '.join(kinds)} (typed, or as its tuple), got {value!r}")
