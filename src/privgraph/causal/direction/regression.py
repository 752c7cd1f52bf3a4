"""Kernel ridge regression with random Fourier features: fast, and stable in a provable way.

The feature map is ``phi(v) = [cos(w_1 v), ..., cos(w_D v), sin(w_1 v), ..., sin(w_D v)] / sqrt(D)``
with frequencies ``w_j ~ N(0, 1 / lengthscale^2)`` drawn once from ``rng``, before the data
is seen (Rahimi and Recht 2007). It approximates the Gaussian kernel of that lengthscale,
and it does not depend on the data: a data-dependent basis (Nystrom landmarks, a median
heuristic) would move with the training records and void the stability bound of
:func:`stability_bound`. Because ``cos^2 + sin^2 = 1``, ``||phi(v)||^2 = 1`` exactly for
every v (kernel bound ``kappa = 1``).

The fit minimises ``(1/n) sum_i (y_i - w . phi(x_i))^2 + ridge ||w||^2`` (no intercept:
an intercept estimated from the data would need its own stability argument; the callers
centre the data with public or training-only constants). Cost: O(n D^2 + D^3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri
from privgraph.validation import InvalidInput


#: Default number of frequencies D (2 D features).
DEFAULT_FREQUENCIES = 100


@dataclass(frozen=True)
class FourierRidge:
    """A fitted random-Fourier-feature ridge regression of one variable on another.

    Attributes
    ----------
    frequencies : numpy.ndarray
        The D frequencies, drawn from ``rng`` before the data was seen.
    weights : numpy.ndarray
        The 2 D ridge weights.
    """

    frequencies: np.ndarray
    weights: np.ndarray

    def predict(self, v) -> np.ndarray:
        """Predictions at the points ``v`` (1-D).

        >>> rng = np.random.default_rng(0)
        >>> v = rng.uniform(-2, 2, 500)
        >>> model = fit_fourier_ridge(v, np.sin(2 * v), ridge=1e-4, rng=rng)
        >>> float(np.abs(model.predict(v) - np.sin(2 * v)).max()) < 0.05
        True
        """
        return fourier_features(np.asarray(v, dtype=np.float64), self.frequencies) @ self.weights


def draw_frequencies(lengthscale: float, count: int, rng: np.random.Generator) -> np.ndarray:
    """D frequencies of the Gaussian kernel ``exp(-(a - b)^2 / (2 lengthscale^2))``.

    Drawn as quasi-random normal quantiles (a stratified draw: one uniform per stratum)
    so that a small D already approximates the kernel well.

    >>> draw_frequencies(1.0, 4, np.random.default_rng(0)).shape
    (4,)
    """
    u = (np.arange(count) + rng.uniform(size=count)) / count
    return ndtri(u) / lengthscale


def fourier_features(v: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """The (n, 2 D) feature matrix; every row has Euclidean norm exactly 1.

    >>> f = fourier_features(np.array([0.3, -1.0]), np.array([0.5, 2.0, 3.0]))
    >>> np.allclose((f ** 2).sum(axis=1), 1.0)
    True
    """
    arg = np.outer(v, frequencies)
    return np.hstack([np.cos(arg), np.sin(arg)]) / math.sqrt(frequencies.size)


def fit_fourier_ridge(
    x,
    y,
    *,
    ridge: float,
    rng: np.random.Generator,
    lengthscale: float = 1.0,
    frequencies: int = DEFAULT_FREQUENCIES,
) -> FourierRidge:
    """Fit ``y ~ w . phi(x)`` by ridge regression on random Fourier features.

    Parameters
    ----------
    x, y : array_like
        1-D training inputs and targets, already on a common scale (no intercept).
    ridge : float
        The regularisation ``lambda`` of ``(1/n) sum (y - f)^2 + lambda ||w||^2``.
    rng : numpy.random.Generator
        Draws the frequencies (public randomness: no privacy proof relies on it).
    lengthscale : float
        Lengthscale of the approximated Gaussian kernel, fixed in advance.
    frequencies : int
        Number D of frequencies.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(size=2000)
    >>> model = fit_fourier_ridge(x, x ** 2 - 1, ridge=1e-3, rng=rng)
    >>> model.weights.shape
    (200,)
    """
    if not (0 < ridge < math.inf):
        raise InvalidInput(f"ridge must be positive and finite, got {ridge!r}")
    if not (0 < lengthscale < math.inf):
        raise InvalidInput(f"lengthscale must be positive and finite, got {lengthscale!r}")
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    omega = draw_frequencies(lengthscale, frequencies, rng)
    phi = fourier_features(x, omega)
    gram = phi.T @ phi  # the callers hold one BLAS thread around a whole pair (data.fit_both_directions)
    gram[np.diag_indices_from(gram)] += x.size * ridge
    return FourierRidge(omega, np.linalg.solve(gram, phi.T @ y))


def stability_bound(*, target_bound: float, ridge: float, training_rows: int) -> float:
    """Largest change of any prediction when one of ``training_rows`` records is replaced.

    ``2 B (1 + 1/sqrt(ridge)) / (ridge n)`` for targets in ``[-B, B]`` and ``kappa = 1``.

    Derivation (the uniform-stability argument of Bousquet and Elisseeff 2002, redone for
    replace-one). Let ``F_S(w) = (1/n) sum l(w; z_i) + lambda ||w||^2`` with the square
    loss ``l(w; (x, y)) = (y - w . phi(x))^2``; ``F_S`` is ``2 lambda``-strongly convex,
    so at its minimiser w, ``F_S(w') - F_S(w) >= lambda ||w' - w||^2`` for every w'.
    With S' = S with record j replaced, adding this inequality to the one for S' at its
    minimiser w' leaves only the losses of the two records j:
    ``2 lambda ||w' - w||^2 <= (1/n) [l(w'; z_j) - l(w; z_j) + l(w; z'_j) - l(w'; z'_j)]
    <= (2 L / n) ||w' - w||``, with L a Lipschitz constant of ``l(.; z)`` over the
    minimisers. ``F_S(w) <= F_S(0) <= B^2`` gives ``||w|| <= B / sqrt(lambda)``, so
    ``|w . phi(x)| <= B / sqrt(lambda)`` and ``||grad l|| = 2 |y - w . phi(x)| ||phi(x)||
    <= 2 B (1 + 1/sqrt(lambda)) = L``. Hence ``||w' - w|| <= L / (lambda n)`` and every
    prediction moves by at most ``||phi(x)|| ||w' - w|| <= L / (lambda n)``.

    >>> round(stability_bound(target_bound=2.0, ridge=0.25, training_rows=1000), 4)
    0.048
    """
    lam = ridge
    return 2.0 * target_bound * (1.0 + 1.0 / math.sqrt(lam)) / (lam * training_rows)
