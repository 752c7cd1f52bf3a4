"""CGM-EM: expectation-maximisation over the true counts hidden behind the noisy tables.

The text (Bernstein et al. 2017; its Algorithms 1 and 2 are lost from our copy) treats the
true clique counts ``n`` as latent and maximises the marginal likelihood ``p(y; theta)`` of
the noisy tables ``y``. Rebuilt here from its description, Sun et al. (2015) and Sheldon
et al. (2013):

E-step (approximate MAP, Algorithm 1: non-linear belief propagation)
    ``n_t = argmax_{n in N * M} <theta_t, n> + H(n) + log p(y | n)``, with ``H`` the
    entropy of the counts (exact on a junction tree, Bethe with loopy BP) and ``M`` the
    marginal polytope. NLBP linearises ``log p(y | n)`` at the current counts, which turns
    the problem into ordinary BP with potentials ``theta_t + g``,
    ``g = d log p(y | n) / dn`` (``sign(y - n) / b`` for Laplace noise of scale ``b``,
    ``(y - n) / sigma^2`` for Gaussian), and iterates. Its fixed points ``g*`` are exactly
    the minimisers of the convex dual ``N A(theta_t + g) - <g, y>`` over ``|g| <= 1/b``
    (Laplace; ``+ sigma^2 |g|^2 / 2`` and no box for Gaussian), whose gradient
    ``N mu(theta_t + g) - y`` is one BP call. :func:`dual_e_step` (the default) finds that
    fixed point with L-BFGS-B on the dual, one BP call per evaluation;
    :func:`nlbp_e_step` runs NLBP's own damped fixed-point iteration (running mean of the
    linearisations). Measured on the text's third-order chain, the damped iteration
    oscillates under Laplace's non-smooth likelihood (coupled cliques overshoot) and EM
    stalls far from the data, so it is kept for comparison only.
M-step (Algorithm 2)
    ``theta_{t+1} = MLE(n_t)``. Because ``n_t / N`` *are* the marginals of the model with
    potentials ``theta_t + g``, that model matches them and is the MLE: the M-step is
    ``theta_{t+1} = theta_t + g`` exactly (for loopy BP, the Bethe-approximate MLE), so no
    inner optimiser is needed. ``theta_0 = 0`` (the uniform model).
Coarsened tables (a linear measurement ``y = Q n + noise`` of a clique's counts summed into
bins, ``NoisyMarginals.bins``; Private-PGM's query matrices, McKenna et al. 2019)
    ``g`` lives on the tables' cells and enters the potentials as ``Q^T g`` (each code takes
    its bin's ``g``): the dual is ``N A(theta + Q^T g) - <g, y>`` with gradient
    ``N Q mu(theta + Q^T g) - y``, and the M-step ``theta + Q^T g*`` (its marginals are the
    E-step's counts, so it is still their MLE). The potential stays over the clique's codes.
Over-relaxation (Salakhutdinov and Roweis 2003, adaptive over-relaxed bound optimisation)
    Under Laplace noise a plain EM step moves each log-potential by at most ``1/b``
    (``b = |C| / epsilon``), so at small epsilon EM needs thousands of iterations. The
    M-step therefore moves ``theta + eta g*`` with ``eta`` doubling (up to 64) while the
    approximate log marginal likelihood ``L(theta) = min_g [N A(theta + g) - <g, y>] -
    N A(theta)`` (the E-step's dual optimum, free) keeps rising; when it falls, EM goes
    back to the last accepted point, takes the plain step and resets ``eta = 1``. A step
    whose evaluation fails numerically (a ``FloatingPointError`` or a non-finite value) is
    rejected the same way; if even a plain step fails, EM stops at the last point it could
    evaluate. Post-processing after the release therefore never raises on the noise drawn.

Stopping rule (it acts as regularisation: each step moves a log-potential by at most
``1/b`` under Laplace noise, and running to convergence fits the noise, the L1 projection
of ``y`` onto the polytope). The discrepancy principle: stop as soon as the model's
expected tables are as close to ``y`` as the noise itself would put the true tables,
``sum |y - N mu(theta)| / b <= discrepancy * D`` for Laplace (``E|Lap(b)| = b``, ``D``
cells in all) or ``sum (y - N mu)^2 / sigma^2 <= discrepancy * D`` for Gaussian (each
table by its own scale when they differ), and under Gaussian noise each table ``g`` of ``D_g``
cells within its own noise's tail, ``sum_g (y - N mu)^2 / sigma_g^2 <= discrepancy * D_g +
EACH_TABLE_SDS * sqrt(2 D_g)`` (a table's misfit at the truth is chi-square with ``D_g``
degrees of freedom: a fit outside its 3-sd tail has not fitted that table, whatever the sum
says; a fit with ``focus``, an adaptive round's warm-started refit, holds the new table to
``discrepancy * D_g`` instead, as measured); or when
that residual has stalled (no relative gain of ``STALL_GAIN`` in ``STALL_ITER``
iterations); or after ``max_iter`` iterations. ``discrepancy`` was settled on separate seeds
(``benchmarks/bench_mrf.py --calibrate``), never on the reported runs.
"""

from __future__ import annotations

import collections
import math

import numpy as np

import scipy
from scipy.optimize import Bounds, minimize

try:
    from scipy.optimize import _lbfgsb
except ImportError:  # pragma: no cover - scipy moved it
    _lbfgsb = None

import privgraph.heartbeat as heartbeat
import privgraph.caches as caches
from privgraph.threads import single_threaded_blas
from privgraph.timecap import check_time
from privgraph.mrf.inference import flat_inference
from privgraph.mrf.junction import junction_tree
from privgraph.mrf.junction_calibration import PLAN_CACHES
from privgraph.mrf.model import MarkovRandomField
from privgraph.mrf.noisy_tables import NoisyMarginals
from privgraph.validation import InvalidInput

#: Default discrepancy factor of the stopping rule (settled on calibration seeds: Laplace noise, and
#: again under Gaussian noise, ``benchmarks/bench_mrf.py calibrate --noise gaussian``, which chose 1.0
#: among 0.5-3; benchmarks/results/mrf_calibration_gaussian.csv). Read when :func:`cgm_em` runs.
DISCREPANCY = 1.0
#: Under Gaussian noise EM also waits until each table's own misfit is within this many standard
#: deviations of what its noise alone gives (:func:`_each_table_limits`); None: the tables together only.
#: Without it a small table (a pair in bins, 66 cells, beside 20,000 cells of wide tables) could be left
#: far from its measurement when the sum was already at the noise level: gss at epsilon 0.3 released
#: year x relactiv (a question asked in 9 of 32 waves) with over 700 answers in each of 2000 and 2002, which asked nobody.
#: Measured on tuning seeds 100-102 (benchmarks/results/release_each_table.jsonl): docs/benchmarks/release.md.
EACH_TABLE_SDS = 3.0
#: Default cap on EM iterations.
MAX_ITER = 2000
#: EM also stops once the residual has not improved by STALL_GAIN (relative) for
#: STALL_ITER iterations (it has reached the noise floor it can reach).
STALL_ITER, STALL_GAIN = 20, 1e-3
#: L-BFGS-B iterations of one E-step at most (each warm-started from the previous E-step's
#: solution, so EM carries an unfinished one on). 100 until 2026-11-30; 50 leaves the fits
#: of docs/mrf.md's six models within 2e-3 in KL and held-out log-likelihood (inside their
#: run-to-run spread, some better) and the release's TVD figures unchanged at four decimals
#: (fair, child, alarm, asia), and halves the time of the E-steps that hit the cap
#: (alarm's merged cliques, hepar2): docs/mrf.md, "Scaling to wide models".
E_STEP_ITER = 50
#: Largest over-relaxation factor of the M-step.
MAX_OVERRELAX = 64.0


def cgm_em(
    noisy: NoisyMarginals,
    *,
    discrepancy: float | None = None,
    max_iter: int = MAX_ITER,
    e_step=None,
    overrelax: bool = True,
    max_cells: int | None = None,
    start=None,
    focus: int | None = None,
) -> MarkovRandomField:
    """Fit a model to noisy clique tables by CGM-EM (see the module docstring).

    ``discrepancy``: the stopping rule's factor; None: :data:`DISCREPANCY` as it is when the fit
    runs (a benchmark's ablation may set it).
    ``e_step`` is :func:`dual_e_step` (default) or :func:`nlbp_e_step`; ``overrelax``
    enables the adaptive over-relaxed M-step (module docstring). ``start``: the groups'
    log-potentials to start from (a warm start, e.g. an earlier fit's with zeros for new
    tables); None: the uniform model, ``theta_0 = 0``. ``focus``: a group whose own residual
    must also fall to ``discrepancy`` times its cells before EM stops (not stalled): a table
    just added to a warm start, which the residual of all the tables together would let EM
    ignore (AIM's rounds, :mod:`privgraph.release.adaptive`).

    Examples
    --------
    >>> from privgraph.data.domain import Domain
    >>> from privgraph.mrf.noisy_tables import release_tables
    >>> from privgraph.privacy import Neighbours, SeededSampler
    >>> d = Domain.of(a=2, b=2, c=2)
    >>> counts = [np.array([[400.0, 100], [100, 400]]), np.array([[450.0, 50], [50, 450]])]
    >>> noisy, ledger = release_tables(counts, domain=d, cliques=["a,b", "b,c"], epsilon=1.0,
    ...     neighbours=Neighbours.ADD_REMOVE, sampler=SeededSampler(0))
    >>> model = cgm_em(noisy)
    >>> model.cliques
    (('a', 'b'), ('b', 'c'))
    """
    discrepancy = DISCREPANCY if discrepancy is None else discrepancy
    if not discrepancy >= 0:
        raise InvalidInput(f"discrepancy must be >= 0, got {discrepancy!r}")
    e_step = dual_e_step if e_step is None else e_step
    target = _target(noisy, discrepancy, focus)
    shapes = noisy.potential_shapes()
    theta = [np.zeros(shape) for shape in shapes] if start is None else [
        np.array(t, dtype=np.float64).reshape(shape) for t, shape in zip(start, shapes, strict=True)]
    with single_threaded_blas():
        theta = _iterate(noisy, theta, e_step, target, max_iter, overrelax, max_cells)
    return MarkovRandomField.of(noisy.domain, noisy.cliques, [theta[g] for g in noisy.ties])


def _target(noisy: NoisyMarginals, discrepancy: float, focus: int | None):
    """``at_target(misfits)``: the stopping rule's test on the tables' misfits (:func:`_misfits`
    of the expected tables; :func:`cgm_em`)."""
    whole = discrepancy * _noise_level(noisy)
    if focus is None:
        each = _each_table_limits(noisy, discrepancy)
        return lambda misfits: sum(misfits) <= whole and _each_within(misfits, each)
    alone = discrepancy * noisy.tables[focus].size  # a round's refit: the new table's own rule instead
    return lambda misfits: sum(misfits) <= whole and misfits[focus] <= alone


def _each_table_limits(noisy: NoisyMarginals, discrepancy: float) -> list[float] | None:
    """Under Gaussian noise, each table's own bound of the stopping rule: its misfit (a sum of ``D_g``
    squared standard normals for the true table, mean ``D_g``, sd ``sqrt(2 D_g)``) at most
    ``discrepancy * D_g + EACH_TABLE_SDS * sqrt(2 D_g)`` (module docstring); None under Laplace noise or
    with :data:`EACH_TABLE_SDS` None (the tables together only).

    >>> from privgraph.data.domain import Domain
    >>> noisy = NoisyMarginals(Domain.of(a=2, b=2), (("a",), ("a", "b")), (0, 1),
    ...                        (np.ones(2), np.ones((2, 2))), "gaussian", 1.0, 4.0)
    >>> [round(x, 2) for x in _each_table_limits(noisy, 1.0)]
    [8.0, 12.49]
    """
    if noisy.noise != "gaussian" or EACH_TABLE_SDS is None:
        return None
    return [discrepancy * t.size + EACH_TABLE_SDS * math.sqrt(2 * t.size) for t in noisy.tables]


def _each_within(misfits: list[float], limits: list[float] | None) -> bool:
    """Whether every table's misfit is within its bound (:func:`_each_table_limits`; True without bounds)."""
    return limits is None or all(m <= limit for m, limit in zip(misfits, limits))


def _iterate(noisy, theta, e_step, at_target, max_iter: int, overrelax: bool, max_cells: int):
    """The EM loop of :func:`cgm_em` (module docstring): the potentials it stops at."""
    step, eta, accepted, stall, good = None, 1.0, None, _Stall(), theta
    for k in range(max_iter):
        check_time("the model fit (CGM-EM)")
        heartbeat.at("the model fit (CGM-EM): " + heartbeat.of(k + 1, max_iter, "iteration", at_most=True))
        stops = lambda n: at_target(m := _misfits(noisy, n)) or stall.peek(sum(m))  # noqa: E731
        trial = _evaluate(noisy, theta, step, e_step, max_cells, None if accepted is None else accepted[2], stops)
        if trial is None and accepted is None:
            theta = good  # even the plain step failed numerically: stop at the last good point
            break
        if trial is None or (accepted is not None and trial[2] is not None and trial[2] < accepted[2]):
            # the over-relaxed step lowered the likelihood (or over/underflowed): take the plain step
            theta, step, eta, accepted = _add(noisy, accepted[0], accepted[1], 1.0), accepted[1], 1.0, None
            continue
        n, new_step, value = trial
        good = theta
        if at_target(m := _misfits(noisy, n)) or stall.is_stalled(sum(m)):
            break
        accepted, step = (theta, new_step, value), new_step
        theta = _add(noisy, theta, new_step, eta)
        eta = min(2.0 * eta, MAX_OVERRELAX) if overrelax and value is not None else 1.0
    return theta


def _evaluate(noisy: NoisyMarginals, theta, start, e_step, max_cells: int, accepted=None, stops=None):
    """``(expected tables, E-step, approximate log-likelihood or None)`` at ``theta``, or None
    when a floating-point failure makes any of them unusable (the caller rejects the step).

    ``accepted`` is the value of the last accepted point (None after a plain step) and
    ``stops(n)`` whether EM stops at ``theta`` once it accepts it. The E-step then ends as
    soon as what :func:`_iterate` does with it is settled (:func:`_settled`): its value
    falls below ``accepted`` (the step is rejected and the E-step discarded), or EM stops
    here whatever the E-step's optimum (it is accepted and the E-step unused). Every
    other E-step runs to its end, so the fit is the one of full E-steps."""
    try:
        n, log_z = _expected_and_log_z(noisy, theta, max_cells)
        offset = noisy.records * log_z
        settled = _settled(offset, accepted, stops is not None and stops(n))
        more = {} if settled is None else {"settled": settled}
        new_step, dual = e_step(noisy, theta, start=start, max_cells=max_cells, **more)
    except FloatingPointError:
        return None
    value = None if dual is None else dual - offset
    finite = all(np.isfinite(t).all() for t in list(n) + list(new_step))
    return (n, new_step, value) if finite and (value is None or np.isfinite(value)) else None


class _Stall:
    """True once the residual has not improved by STALL_GAIN for STALL_ITER iterations."""

    def __init__(self):
        self.best, self.since = np.inf, 0

    def peek(self, residual: float) -> bool:
        """What :meth:`is_stalled` would answer, without counting the residual."""
        return not residual < self.best * (1 - STALL_GAIN) and self.since + 1 >= STALL_ITER

    def is_stalled(self, residual: float) -> bool:
        if residual < self.best * (1 - STALL_GAIN):
            self.best, self.since = residual, 0
        else:
            self.since += 1
        return self.since >= STALL_ITER


def _settled(offset: float, accepted, final: bool):
    """The test that ends an E-step early (:func:`_evaluate`), or None when none can.

    ``settled(upper, lower)`` gets the dual objective at an iterate of the E-step (an upper
    bound of the E-step's value: L-BFGS-B only descends) and a function returning a lower
    bound of its optimum (convexity: :func:`dual_e_step`). EM's value is ``dual -
    offset``, computed as :func:`_evaluate` computes it, and rounding is monotone, so a
    bound settles the comparison with ``accepted`` exactly as the E-step's own value would."""
    if accepted is None and not final:
        return None

    def settled(upper: float, lower) -> bool:
        if accepted is None:  # a plain step: accepted whatever its value, and EM stops here
            return True
        return upper - offset < accepted or (final and lower() - offset >= accepted)

    return settled


def _add(noisy: NoisyMarginals, theta, step, eta: float) -> list[np.ndarray]:
    """``theta + eta step``, the step (over the tables' cells) spread to the potentials'."""
    sizes, shapes = _layout(theta)
    flat = np.concatenate([t.ravel() for t in theta])
    return _unflatten(flat + eta * noisy.to_potentials(np.concatenate([s.ravel() for s in step])), sizes, shapes)


def _expected_and_log_z(noisy: NoisyMarginals, theta, max_cells: int):
    """``N`` times each group's table under ``theta`` (summed into its bins when coarsened)
    and the log-partition function."""
    run = _inference(noisy.domain, noisy.cliques, noisy.ties, max_cells)
    sums, log_z = run(np.concatenate([t.ravel() for t in theta]))
    return _unflatten(noisy.to_tables(_means(noisy, sums)), *_layout(noisy.tables)), log_z


#: The most junction-tree cells the structures kept by :func:`_inference` may hold together
#: (each keeps its calibration plan and parameter map, about 300 bytes per cell measured with
#: tracemalloc: 4e5 cells, about 120 MB); the newest is always kept, so a large structure is
#: built once per fit and dropped before the next is built.
INFERENCE_CACHE_CELLS = 400_000
_RUNS: collections.OrderedDict = collections.OrderedDict()
#: The name :data:`_RUNS` is registered under (:mod:`privgraph.caches`).
INFERENCE_CACHE = f"{__name__}.inference"
caches.register(INFERENCE_CACHE, f"{INFERENCE_CACHE_CELLS:,} junction-tree cells (the newest structure always kept)",
                _RUNS.clear, _RUNS)


def clear_inference_cache() -> None:
    """Drop every structure :func:`_inference` keeps, and the calibration plans behind them (a
    caller done fitting: the release, before it samples and after each adaptive round)."""
    caches.clear_caches(INFERENCE_CACHE, *PLAN_CACHES)


def _inference(domain, cliques, ties, max_cells: int):
    """:func:`~privgraph.mrf.inference.flat_inference` of a release's structure, built once
    and reused by every E-step and EM iteration of every fit on that structure (least
    recently used structures dropped beyond :data:`INFERENCE_CACHE_CELLS` cells together:
    the tree release fits a new structure each round, and each may be near its cap)."""
    key = (domain, cliques, ties, max_cells)
    if key in _RUNS:
        _RUNS.move_to_end(key)
        return _RUNS[key][0]
    cells = junction_tree(domain, tuple(tuple(c) for c in cliques)).cells
    while _RUNS and sum(held for _, held in _RUNS.values()) + cells > INFERENCE_CACHE_CELLS:
        _RUNS.popitem(last=False)  # dropped before the new one is built: the two never coexist past the cap
    run = flat_inference(domain, cliques, ties, max_cells=max_cells)
    _RUNS[key] = (run, cells)
    return run


def _layout(theta) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    return np.cumsum([0] + [t.size for t in theta]), [t.shape for t in theta]


def _means(noisy: NoisyMarginals, sums: np.ndarray) -> np.ndarray:
    """``N`` times the mean marginal of each group (flat, over the potentials' cells), from the
    summed marginals."""
    m = np.repeat(np.asarray(noisy.group_sizes, dtype=np.float64), [math.prod(s) for s in noisy.potential_shapes()])
    return noisy.records * sums / m


def dual_e_step(
    noisy: NoisyMarginals, theta, *, start=None, max_cells: int | None = None, max_iter: int = E_STEP_ITER,
    settled=None,
):
    """NLBP's fixed point ``g*`` via the MAP problem's dual (module docstring).

    ``min_g N A(theta + g) - <g, m y>`` (``+ (m sigma)^2 |g|^2 / 2`` for Gaussian noise)
    over ``|g| <= 1/(m b)`` (Laplace), by L-BFGS-B with BP marginals as gradients; ``m``
    is the number of cliques sharing a group's table (1 without ties), whose table holds
    per-unit averages. Returns ``g*`` per group (the E-step's tables are
    ``expected_tables(noisy, theta + g*)``) and the dual optimum, which minus
    ``N A(theta)`` is the approximate log marginal likelihood ``log p(y; theta)`` that EM
    ascends. ``start`` (the previous ``g*``) warm-starts the solver, which stops after
    ``max_iter`` L-BFGS-B iterations (:data:`E_STEP_ITER`) if it has not converged. It leaves BLAS's
    threads alone: :func:`cgm_em` holds ``single_threaded_blas`` around all its E-steps.
    ``settled(upper, lower)``, if given, is asked at the start and after each iteration
    with the objective there (an upper bound of the optimum found) and a function giving a
    lower bound of the optimum (Laplace noise: ``f(g) - <grad, g> - sum |grad| / (m b)``,
    the convex objective's linearisation at ``g`` minimised over the box; ``-inf`` for
    Gaussian noise); once it answers True the E-step stops there (:func:`cgm_em` asks
    whether its accept/stop decision is already settled).

    >>> from privgraph.data.domain import Domain
    >>> from privgraph.mrf.noisy_tables import release_tables
    >>> from privgraph.privacy import SeededSampler
    >>> noisy, _ = release_tables([np.array([[300.0, 100], [100, 500]])], domain=Domain.of(a=2, b=2),
    ...     cliques=["a,b"], epsilon=1.0, neighbours="add_remove", sampler=SeededSampler(0))
    >>> step, value = dual_e_step(noisy, [np.zeros((2, 2))])
    >>> bool(np.abs(step[0]).max() <= 1 / noisy.scale + 1e-12)
    True
    """
    sizes, shapes = _layout(noisy.tables)  # g lives on the tables' cells (coarsened: fewer than theta's)
    mult = np.repeat(np.asarray(noisy.group_sizes, dtype=np.float64), [t.size for t in noisy.tables])
    my = mult * np.concatenate([t.ravel() for t in noisy.tables])
    base = np.concatenate([t.ravel() for t in theta])
    run = _inference(noisy.domain, noisy.cliques, noisy.ties, max_cells)
    cell_scales = noisy.cell_scales()
    curvature = (mult * cell_scales) ** 2 if noisy.noise == "gaussian" else None
    records = float(noisy.records)

    def f(flat):
        try:
            sums, log_z = run(base + noisy.to_potentials(flat))
        except FloatingPointError:  # a line-search step far too long: reject it
            return np.inf, np.zeros_like(flat)
        value = records * log_z - float(flat @ my)
        grad = noisy.to_tables(np.multiply(sums, records, out=sums))
        grad -= my
        if curvature is not None:
            value += 0.5 * float(curvature @ flat**2)
            grad += curvature * flat
        if not (math.isfinite(value) and math.isfinite(np.add.reduce(grad))):  # the sum: one pass
            return np.inf, np.zeros_like(flat)
        return value, grad

    box = 1.0 / (mult * cell_scales) if noisy.noise == "laplace" else np.full(len(mult), np.inf)
    x0 = np.zeros(sizes[-1]) if start is None else np.concatenate([s.ravel() for s in start])
    x0 = np.clip(x0, -box, box)
    def stop(x, value, grad):
        lower = lambda: value - float(grad @ x) - float(box @ np.abs(grad))  # noqa: E731
        return settled(value, lower if noisy.noise == "laplace" else lambda: -math.inf)
    x, value = lbfgsb(f, x0, -box, box, max_iter=max_iter, tol=1e-12, stop=None if settled is None else stop)
    return _unflatten(x, sizes, shapes), value


def lbfgsb(fun, x0: np.ndarray, lower: np.ndarray, upper: np.ndarray, *, max_iter: int, tol: float, stop=None):
    """``(x, f(x))``: scipy's L-BFGS-B from ``x0`` in the box ``[lower, upper]``, as
    ``minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=Bounds(lower, upper),
    options={"maxiter": max_iter, "gtol": tol, "ftol": tol})`` returns them.
    ``stop(x, f(x), gradient)``, if given, is called at ``x0`` and after each iteration;
    when it returns True, ``lbfgsb`` returns that iterate (with ``minimize``, the fallback
    of an older scipy, it is never called: the run goes to its end).

    The E-steps of a fit run thousands of L-BFGS-B iterations on hundreds to 10^5
    parameters, where ``minimize``'s per-call set-up (a Python loop over the bounds) and
    per-evaluation wrappers cost as much as the evaluations. This drives scipy's own
    L-BFGS-B routine (``scipy.optimize._lbfgsb.setulb``, scipy >= 1.15) with the loop of
    ``minimize``, so the iterates are the same; with another scipy it calls ``minimize``.

    >>> x, value = lbfgsb(lambda x: (float(x @ x), 2 * x), np.array([3.0, -1.0]), np.array([1.0, -2.0]),
    ...                   np.array([5.0, 2.0]), max_iter=100, tol=1e-12)
    >>> x.round(6).tolist(), round(value, 6)
    ([1.0, 0.0], 1.0)
    """
    core = _setulb()
    if core is None:
        res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=Bounds(lower, upper),
                       options={"maxiter": max_iter, "gtol": tol, "ftol": tol})
        return res.x, float(res.fun)
    n, m = x0.size, _LBFGSB_MEMORY
    low, high = np.isfinite(lower), np.isfinite(upper)
    kind = np.where(low, np.where(high, 2, 1), np.where(high, 3, 0)).astype(np.int32)
    x = np.clip(x0, lower, upper).astype(np.float64)
    value, grad = np.array(0.0), np.zeros(n)
    work, iwork = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m), np.zeros(3 * n, dtype=np.int32)
    task, ln_task, lsave = np.zeros(2, np.int32), np.zeros(2, np.int32), np.zeros(4, np.int32)
    isave, dsave = np.zeros(44, np.int32), np.zeros(29)
    factr, iterations, evaluations = tol / np.finfo(float).eps, 0, 0
    low_b, high_b = np.where(low, lower, 0.0), np.where(high, upper, 0.0)
    while True:
        core(m, x, low_b, high_b, kind, value, grad, factr, tol, work, iwork, task, lsave, isave, dsave,
             _LBFGSB_MAXLS, ln_task)
        if task[0] == 3:  # FG: evaluate at x
            value, grad = fun(x.copy())
            value, grad, evaluations = float(value), np.asarray(grad, dtype=np.float64), evaluations + 1
            if evaluations == 1 and stop is not None and stop(x, value, grad):  # x0
                return x, value
        elif task[0] == 1:  # NEW_X: an iteration is done
            if stop is not None and stop(x, value, grad):
                return x, value
            iterations += 1
            if iterations >= max_iter:
                task[0], task[1] = 5, 504
            elif evaluations > _LBFGSB_MAXFUN:
                task[0], task[1] = 5, 502
        else:
            return x, float(value)


#: ``minimize``'s L-BFGS-B defaults: memory, line-search steps and evaluations.
_LBFGSB_MEMORY, _LBFGSB_MAXLS, _LBFGSB_MAXFUN = 10, 20, 15000


@caches.lru(1)
def _setulb():
    """scipy's L-BFGS-B routine when its calling convention is the one :func:`lbfgsb`
    follows (scipy 1.15 to 1.17, the versions it was checked against: a private routine may
    change in any release), else None (then :func:`lbfgsb` calls ``minimize``)."""
    if _lbfgsb is None:  # pragma: no cover - scipy moved it
        return None
    major, minor = (int(v) for v in scipy.__version__.split(".")[:2])
    return _lbfgsb.setulb if (1, 15) <= (major, minor) <= (1, 17) and hasattr(_lbfgsb, "setulb") else None


def _unflatten(flat, sizes, shapes) -> list[np.ndarray]:
    return [flat[a:b].reshape(s) for a, b, s in zip(sizes[:-1], sizes[1:], shapes)]


def nlbp_e_step(
    noisy: NoisyMarginals, theta, *, start=None, max_cells: int | None = None, max_iter: int = 10,
    settled=None,
):
    """NLBP's damped fixed-point iteration: ``g`` is the running mean of the gradients
    ``d log p(y | n) / dn`` at ``n = N mu(theta + g)`` (comparison only; see module doc).
    It has no value for EM to compare, so ``settled`` (:func:`dual_e_step`) is not asked."""
    step = [np.zeros(t.shape) for t in noisy.tables]
    for j in range(max_iter):
        grad = _loglik_gradient(noisy, expected_tables(noisy, _add(noisy, theta, step, 1.0), max_cells))
        step = [s + (g - s) / (j + 1) for s, g in zip(step, grad)]
    return step, None


def expected_tables(noisy: NoisyMarginals, theta, max_cells: int | None = None) -> list[np.ndarray]:
    """``N`` times the model's marginal of each group (mean over tied cliques).

    >>> from privgraph.data.domain import Domain
    >>> from privgraph.mrf.noisy_tables import release_tables
    >>> from privgraph.privacy import SeededSampler
    >>> noisy, _ = release_tables([np.array([10.0, 30.0])], domain=Domain.of(a=2), cliques=["a"],
    ...     epsilon=1.0, neighbours="replace_one", sampler=SeededSampler(0), records=40)
    >>> expected_tables(noisy, [np.zeros(2)])[0].tolist()
    [20.0, 20.0]"""
    return _expected_and_log_z(noisy, theta, max_cells)[0]


def _loglik_gradient(noisy: NoisyMarginals, n) -> list[np.ndarray]:
    """``d log p(y | n) / dn`` per group, ``n`` the groups' summed (not mean) counts."""
    m, scales = noisy.group_sizes, noisy.group_scales
    if noisy.noise == "laplace":
        return [np.sign(y - e) / (k * b) for y, e, k, b in zip(noisy.tables, n, m, scales)]
    return [(y - e) / (k * s**2) for y, e, k, s in zip(noisy.tables, n, m, scales)]


def _misfits(noisy: NoisyMarginals, n) -> list[float]:
    """Each table's misfit to its expected table in ``n`` in units of its own noise (:func:`_misfit`),
    computed once for a test of the stopping rule; their sum is the residual it compares with
    :func:`_noise_level`."""
    return [_misfit(noisy, g, m) for g, m in enumerate(n)]


def _misfit(noisy: NoisyMarginals, g: int, m: np.ndarray) -> float:
    """Group ``g``'s misfit to its expected table ``m``: ``sum |y - m| / b`` (Laplace) or
    ``sum (y - m)^2 / sigma^2`` (Gaussian), by the group's own scale."""
    power = 1 if noisy.noise == "laplace" else 2
    return float((np.abs(noisy.tables[g] - m) ** power).sum() / noisy.group_scales[g] ** power)


def _noise_level(noisy: NoisyMarginals) -> float:
    """Expected residual of the true tables in those units: ``D``, the cells in all
    (``E|Lap(b)| = b``, ``E N(0, sigma^2)^2 = sigma^2``)."""
    return float(sum(t.size for t in noisy.tables))
