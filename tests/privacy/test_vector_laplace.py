"""The Laplace mechanism on vectors: the charged shift covers the rounded L1 move.

Rounding a vector to the grid can move every coordinate that differs between neighbours
by one extra grid unit (issue 11, finding 1). These tests measure the move of the
mechanism's *own* rounded vectors, from two releases that share their noise (same seed),
and the grid it actually used, so they do not trust the calibration code they check.
"""

import math

import numpy as np
import pytest

from privgraph.privacy import Neighbours, SeededSampler, laplace_mechanism, laplace_scale
from privgraph.privacy.calibration import grid_for, grid_shift
from privgraph.privacy.mechanisms import laplace_calibration
from privgraph.privacy.samplers import PURE_DP_SLACK

AR = Neighbours.ADD_REMOVE
EPS = 1.0


def _release(x, sensitivity, seed=0):
    return laplace_mechanism(np.asarray(x, dtype=np.float64), epsilon=EPS, sensitivity=sensitivity,
                             neighbours=AR, sampler=SeededSampler(seed))


def _grid_used(dimension: int, sensitivity: float) -> float:
    """The mechanism's grid, read off its outputs: the smallest 2**j that moves an output.

    With a shared seed the noise is the same, so the outputs differ by exactly
    ``g * round(h / g)``: ``h`` for ``h >= g`` and 0 for ``h = g/2`` (half to even).
    """
    base = _release(np.zeros(dimension), sensitivity).value
    for j in range(8, -80, -1):
        x = np.zeros(dimension)
        x[0] = 2.0**j
        if _release(x, sensitivity).value[0] == base[0]:
            return 2.0 ** (j + 1)
    raise AssertionError("no grid found")


def _mrf_pair():
    """Fractional tables as in an MRF release where an individual with K records weighs 1/K.

    One individual with 8,193 records (one per cell), and its neighbour adds an individual
    with 4,095 records in distinct cells: the true L1 move is exactly 1.
    """
    x = np.full(8193, 1 / 8193)
    y = x.copy()
    y[:4095] += 1 / 4095
    return x, y, 1.0


def _adversarial_pair(dimension=1000, sensitivity=1.0):
    """Each coordinate moves by D/d from just below half a grid unit (the worst case)."""
    g = _grid_used(dimension, sensitivity)
    frac = (sensitivity / dimension / g) % 1.0
    x = np.full(dimension, (0.5 - frac / 2 if frac else 0.49) * g)
    return x, x + sensitivity / dimension, sensitivity


@pytest.mark.parametrize("pair", [_mrf_pair, _adversarial_pair], ids=["mrf_4095_8193", "adversarial"])
def test_charged_shift_covers_the_rounded_move(pair):
    x, y, sensitivity = pair()
    assert np.abs(y - x).sum() <= sensitivity * (1 + 1e-12)
    g = _grid_used(x.size, sensitivity)
    rel_x, rel_y = _release(x, sensitivity), _release(y, sensitivity)
    move = np.abs((rel_y.value - rel_x.value) / g).sum()  # rounded L1 move in grid units
    _, parameter, shift = rel_x.ledger.charges[0].curve.as_tuple()
    assert move <= shift
    # Exact privacy loss of the product of discrete Laplaces: sup over outputs of the log
    # ratio is parameter * (L1 move in units), attained where every coordinate lies
    # beyond both centres. It must not exceed the charged epsilon less the sampler slack.
    assert parameter * move <= EPS - PURE_DP_SLACK + 1e-12
    assert rel_x.ledger.total().epsilon == EPS


def test_the_measured_mrf_pair_needs_the_dimension_term():
    # On the scalar calibration (grid 2**-12, shift 4097) this pair moves 8190 units:
    # a privacy loss of 2 epsilon. The charged shift must now cover it.
    x, y, _ = _mrf_pair()
    g = grid_for(1.0)
    assert np.abs(np.round(y / g) - np.round(x / g)).sum() > grid_shift(1.0, g)
    shift = _release(x, 1.0).ledger.charges[0].curve.sensitivity
    g = _grid_used(x.size, 1.0)
    assert np.abs(np.round(y / g) - np.round(x / g)).sum() <= shift


def test_scalar_calibration_is_unchanged():
    for sensitivity in (1.0, 3.0, 0.01):
        scale, grid, curve = laplace_calibration(EPS, sensitivity, 1)
        assert grid == grid_for(sensitivity)
        assert curve.sensitivity == math.floor(sensitivity / grid) + 1


@pytest.mark.parametrize("dimension", [1, 7, 1000, 2**19, 2**19 + 1, 10**7])
def test_overhead_and_scale_prediction(dimension):
    scale, grid, curve = laplace_calibration(EPS, 1.0, dimension)
    assert curve.sensitivity == math.floor(1.0 / grid) + dimension
    overhead = curve.sensitivity * grid  # (floor(D/g) + d) / (D/g) at D = 1
    assert overhead <= 1 + (2.0**-12 if dimension <= 2**19 else dimension * 2.0**-31)
    assert laplace_scale(EPS, 1.0, dimension=dimension) == scale
    assert scale == pytest.approx(1.0 / (EPS - PURE_DP_SLACK) * overhead, rel=1e-12)


def test_large_counts_in_many_cells_are_not_clamped():
    # 2**20 + 1 cells: the grid is at its finest (2**-31 at D = 1), where 2**61 units
    # still hold 2**30 > 1e9. Noise of scale ~1: 60 scales is a 1e-20 tail per cell.
    x = np.zeros(2**20 + 1)
    x[0], x[1] = 1e9, -1e9
    out = _release(x, 1.0, seed=4).value
    assert abs(out[0] - 1e9) <= 60 and abs(out[1] + 1e9) <= 60


def test_bad_dimension_is_named():
    with pytest.raises(ValueError, match="dimension must be an integer >= 1, got 0"):
        laplace_scale(1.0, 1.0, dimension=0)
