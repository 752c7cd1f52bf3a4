"""Add/remove guarantees for replace-one mechanisms: release the size, then resize the data to it.

Priv-PC's and Gauss-PC's margins are calibrated with the number of rows public
(replace-one neighbours). Under add/remove neighbours n is private. The reduction used
here turns any replace-one mechanism ``M`` into an add/remove one:

1. **Release the size**: ``n_hat = n + Laplace(1 / epsilon_n)`` (a count; sensitivity 1
   under add/remove), charged to the ledger (:func:`release_size`).
2. **A public size** ``m = max(minimum, floor(n_hat - t))``, with ``t`` the noise's upper
   tail at :data:`TAIL` (post-processing, :func:`public_size`): so ``m <= n`` but for
   probability ``TAIL``.
3. **Resize the data to exactly m rows**: m rows drawn uniformly without replacement
   when ``n >= m``; all n rows and ``m - n`` copies of one fixed public row otherwise
   (:func:`privgraph.data.subset.resize_engine`; the secret draw comes from the
   mechanism's sampler).
4. **Run M** on the resized data with ``m`` public.

**Theorem.** If ``M`` is (epsilon, delta)-DP, rho-zCDP, or more generally f-DP for a
symmetric convex trade-off function f, under replace-one neighbours on datasets of m
rows, for every m, then ``D -> M(resize(D, m))`` satisfies the same guarantee under
add/remove neighbours, for every fixed m.

*Proof.* Let ``D' = D + r``, ``|D| = n``. If ``n + 1 <= m``, the two resized datasets
differ by one replaced row (a copy of the public row in one, ``r`` in the other). If
``n >= m``: a uniform m-subset of D is ``S + u`` with S a uniform (m-1)-subset and u
uniform on ``D - S``. A uniform m-subset of D' contains r with probability
``gamma = m / (n + 1)``, and given that it is ``S + r`` with the same law of S. So
``P_D' = (1 - gamma) P_D + gamma Q`` with ``Q = E_{S,u} M(S + r)`` and
``P_D = E_{S,u} M(S + u)``: Q and P_D are mixtures, with the same weights, of pairs of
replace-one neighbours ``(S + r, S + u)``. Mixtures with equal weights of f-DP pairs are
f-DP (reveal the mixture's index: by convexity of f, the joint pair is f-DP (Jensen); then
forget it: post-processing), so ``(Q, P_D)`` is f-DP, and so is
``(P_D', P_D) = ((1 - gamma) P_D + gamma Q, (1 - gamma) P_D + gamma P_D)``. For Renyi
divergences the same two steps use their joint quasi-convexity (van Erven and
Harremoes 2014, Theorem 13): ``D_alpha(P_D' || P_D) <= D_alpha(Q || P_D) <= max over the
pairs``, and the reverse direction likewise. This is the coupling argument of Balle,
Barthe and Gaboardi (NeurIPS 2018) for sampling without replacement, here with the
outer relation add/remove and the inner one replace-one. Steps 1 to 4 then compose
adaptively: the size's charge plus M's (M's guarantee holds for every m).

**The ledger.** M's charges are recorded under add/remove (:func:`as_add_remove`) with
their own (epsilon, delta) and curves, which the accountants compose without reference to
the relation; a charge that described a replace-one sub-sample (``sampling``) keeps its
amplified (epsilon, delta) and loses the curve, which only held under replace-one. The
composition of M's charges bounds M under replace-one, hence (Theorem) M after the resize
under add/remove, and composing the relabelled charges with the rest of the ledger is
that bound composed with the rest.

**The cost.** :data:`SIZE_SHARE` of the budget goes to the size (1%: of epsilon under
pure or optimal composition, of rho under zCDP); with epsilon = 1, delta = 1e-6 the size's
Laplace scale is about 45 rows and the margin ``t`` about 590: at 1e5 rows the tests run
on 99.4% of them.
"""

from __future__ import annotations

import math
from dataclasses import replace

from privgraph.privacy.budget import Budget
from privgraph.privacy.composition import RDP, as_accountant
from privgraph.privacy.ledger import Ledger
from privgraph.privacy.mechanisms import laplace_charge, laplace_mechanism, laplace_scale
from privgraph.privacy.neighbours import Neighbours, check_delta, check_epsilon
from privgraph.privacy.samplers import NoiseSampler
from privgraph.privacy.zcdp import rdp_epsilon, total_rho
from privgraph.validation import InvalidInput, positive_int

AR = Neighbours.ADD_REMOVE

#: The size's share of the budget (of epsilon, or of rho under zCDP).
SIZE_SHARE = 0.01
#: Probability that the public size exceeds the true one (the data is then padded).
TAIL = 1e-6
#: The note on every charge of a replace-one mechanism run on the resized data.
RESIZED = "replace-one on the data resized to the released size (privgraph.privacy.resize)"


def size_epsilons(epsilon: float, delta: float, composition, share: float = SIZE_SHARE) -> tuple[float, float]:
    """``(size, rest)``: the size's pure epsilon and the epsilon left for the mechanism.

    ``composition`` the RDP accountant (zCDP plans; an accountant or its name): the size is an ``epsilon_n``-DP Laplace release,
    which is ``epsilon_n^2 / 2``-zCDP (Bun and Steinke 2016, Proposition 1.4), so
    ``epsilon_n = sqrt(2 share rho)`` and the rest is the epsilon whose rho is
    ``(1 - share) rho`` (rho: :func:`~privgraph.privacy.zcdp.total_rho` of the budget).
    Otherwise (pure, optimal or basic composition): ``share * epsilon`` and
    ``(1 - share) * epsilon``, which compose to at most epsilon under basic composition,
    so under the tighter ones too.

    >>> size_epsilons(1.0, 1e-6, "optimal")
    (0.01, 0.99)
    >>> s, r = size_epsilons(1.0, 1e-6, "rdp")
    >>> 0.015 < s < 0.025 and 0.98 < r < 1.0
    True
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if not 0 < share < 1:
        raise InvalidInput(f"the size's share must lie strictly between 0 and 1, got {share!r}")
    if as_accountant(composition) != RDP:
        return share * epsilon, (1 - share) * epsilon

    rho = total_rho(epsilon, delta)
    return math.sqrt(2 * share * rho), rdp_epsilon((1 - share) * rho, delta)


def size_charge(epsilon: float):
    """The size's charge (Laplace, sensitivity 1 under add/remove), for plans and checks.

    >>> size_charge(0.01).neighbours.value, size_charge(0.01).sensitivity
    ('add_remove', 1.0)
    """
    return laplace_charge(epsilon, 1.0, AR)


def release_size(engine, *, epsilon: float, sampler: NoiseSampler, budget: Budget | None = None
                 ) -> tuple[float, float, Ledger]:
    """``(n_hat, scale, ledger)``: the number of rows of ``engine`` with Laplace noise of
    ``scale``, epsilon-DP under add/remove (the count's sensitivity is 1: one row added or
    removed moves it by one); charged to ``budget`` before the noise is drawn.

    >>> import numpy as np
    >>> from privgraph.data import Domain, NumpyEngine
    >>> from privgraph.privacy import SeededSampler
    >>> e = NumpyEngine(Domain.of(a=2), np.zeros((1000, 1), dtype=int))
    >>> n_hat, scale, ledger = release_size(e, epsilon=0.5, sampler=SeededSampler(0))
    >>> abs(n_hat - 1000) < 40, round(scale, 2), ledger.total().epsilon
    (True, 2.0, 0.5)
    """
    released = laplace_mechanism(float(engine.counts([])), epsilon=epsilon, sensitivity=1.0, neighbours=AR,
                                 sampler=sampler, budget=budget)
    return float(released.value), laplace_scale(epsilon, 1.0), released.ledger


def whole_epsilon(rest: float, delta: float, composition, share: float = SIZE_SHARE) -> float:
    """The smallest budget whose :func:`size_epsilons` leave at least ``rest`` for the
    mechanism (public parameters only), to two significant digits rounded up.

    >>> whole_epsilon(0.99, 1e-6, "optimal")
    1.0
    >>> size_epsilons(whole_epsilon(5.0, 1e-6, "rdp"), 1e-6, "rdp")[1] >= 5.0
    True
    """
    lo, hi = rest, 2 * rest
    while size_epsilons(hi, delta, composition, share)[1] < rest:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if size_epsilons(mid, delta, composition, share)[1] < rest else (lo, mid)
    return round_up(hi)


def round_up(x: float) -> float:
    """``x`` rounded up to two significant digits (a budget that is then enough).

    >>> round_up(0.002491), round_up(120.0)
    (0.0025, 120.0)
    """
    unit = 10.0 ** (math.floor(math.log10(x)) - 1)
    return round(math.ceil(x / unit - 1e-9) * unit, 12)


def release_public_size(engine, *, epsilon: float, sampler: NoiseSampler, budget: Budget | None,
                        minimum: int = 1) -> tuple[int, float, Ledger]:
    """``(m, n_hat, ledger)``: steps 1 and 2, the size released (:func:`release_size`) and
    the public size m it gives (:func:`public_size`).

    >>> import numpy as np
    >>> from privgraph.data import Domain, NumpyEngine
    >>> from privgraph.privacy import SeededSampler
    >>> m, n_hat, _ = release_public_size(NumpyEngine(Domain.of(a=2), np.zeros((5000, 1), dtype=int)),
    ...                                   epsilon=1.0, sampler=SeededSampler(0), budget=None)
    >>> m == public_size(n_hat, laplace_scale(1.0, 1.0)) and m < 5000
    True
    """
    n_hat, scale, ledger = release_size(engine, epsilon=epsilon, sampler=sampler, budget=budget)
    return public_size(n_hat, scale, minimum), n_hat, ledger


def public_size(n_hat: float, scale: float, minimum: int = 1) -> int:
    """The size m the data is resized to: ``n_hat`` less the Laplace noise's upper tail at
    :data:`TAIL` (``scale * ln(1 / (2 TAIL))``), at least ``minimum`` (post-processing).

    >>> public_size(100_000.4, 45.0)
    99409
    >>> public_size(-30.0, 45.0, minimum=8)
    8
    """
    minimum = positive_int("minimum", minimum)
    return max(minimum, math.floor(n_hat - scale * math.log(1 / (2 * TAIL))))


def as_add_remove(ledger: Ledger, note: str) -> Ledger:
    """``ledger``'s charges under add/remove: the charges of a replace-one mechanism run on
    data resized to a public size (see the module docstring). A sub-sampled charge keeps its
    amplified (epsilon, delta) and drops the curve and the sampling, which held only under
    replace-one.

    >>> from privgraph.privacy import Charge
    >>> from privgraph.privacy.events import DiscreteLaplaceCurve, WithoutReplacementSampling
    >>> c = Charge("sieve", 0.1, 0.0, Neighbours.REPLACE_ONE, curve=DiscreteLaplaceCurve(2.0, 1),
    ...            sampling=WithoutReplacementSampling(10, 100))
    >>> r = as_add_remove(Ledger.of(c), "resized").charges[0]
    >>> r.neighbours.value, r.epsilon, r.curve, r.sampling
    ('add_remove', 0.1, None, None)
    """
    def relabelled(c):
        kept = {} if c.sampling is None else {"curve": None, "sampling": None, "slack": 0.0}
        return replace(c, neighbours=AR, note=f"{c.note}; {note}" if c.note else note, **kept)

    return Ledger(tuple(relabelled(c) for c in ledger.charges), ledger.caveats)


__all__ = ["RESIZED", "SIZE_SHARE", "TAIL", "as_add_remove", "public_size", "release_public_size", "release_size",
           "size_charge", "size_epsilons"]
