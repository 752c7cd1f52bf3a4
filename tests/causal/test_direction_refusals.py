"""No data-dependent refusal in PrivateANM (issue 11, finding 3).

Each pair below is two neighbouring datasets (one of 200 records replaced) that sat on a
boundary of a check that read the data: the "tied everywhere" refusal (the most common
value filling a quarter of the rows: 49 ties passed, 50 raised), the constant-column
refusal, and the NaN refusal. A refusal that flips on one record is output "error" with
probability 1 on one side and 0 on the other. Both sides must now give a decision.
"""

import numpy as np
import pytest

from privgraph.causal.direction import DIRECTIONS, PrivateANM
from privgraph.causal.direction.data import to_common_scale, validate_pair

N = 200
BOUNDS = ((-3.0, 3.0), (-3.0, 3.0))
SETTINGS = [("kendall", "test", None), ("spearman", "test", None), ("hsic", "test", None), ("iqr", "test", None),
            ("hsic", "train+test", BOUNDS)] + [(s, "record", BOUNDS) for s in ("kendall", "spearman", "hsic", "iqr")]
#: Epsilon of each decision: 2 lets every score decide on 100 test rows (min_test_rows: Spearman needs 70).
EPSILON = 2.0


def _pair():
    rng = np.random.default_rng(5)
    x = rng.normal(size=N)
    return x, np.tanh(x) + 0.3 * rng.normal(size=N)


def _neighbours():
    x, y = _pair()
    tied = x.copy()
    tied[:49] = 0.5  # 49 of 200 rows hold the most common value
    more = tied.copy()
    more[49] = 0.5  # 50: on the old refusal's side
    yield "ties 49 vs 50", (tied, y), (more, y)
    constant = np.full(N, 2.0)
    changed = constant.copy()
    changed[0] = -1.0
    yield "constant vs one changed", (x, constant), (x, changed)
    missing = x.copy()
    missing[7] = np.nan
    yield "NaN vs finite", (x, y), (missing, y)
    infinite = y.copy()
    infinite[3] = -np.inf
    yield "inf vs finite", (x, y), (x, infinite)


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0]}-{s[1]}")
@pytest.mark.parametrize("case", list(_neighbours()), ids=lambda c: c[0])
def test_neighbours_on_an_old_boundary_behave_alike(case, setting):
    _, d, d_prime = case
    score, privacy, bounds = setting
    for data in (d, d_prime):
        model = PrivateANM(epsilon=EPSILON, score=score, privacy=privacy, bounds=bounds, random_state=3).fit(
            *data, infer_domain=bounds is None)
        assert model.direction_ in DIRECTIONS + ("undecided",)
        assert model.ledger_.total().epsilon == pytest.approx(EPSILON)


def test_non_finite_values_go_to_the_centre_of_the_common_scale():
    # bounds: the image of their midpoint; no bounds: the training part's mean (of its finite values)
    v = np.array([np.nan, np.inf, -np.inf, 1.0])
    assert to_common_scale(v, np.array([]), (0.0, 2.0)).tolist() == [0.0, 0.0, 0.0, 0.0]
    assert to_common_scale(v, np.array([1.0, 3.0, np.nan]), None).tolist() == [0.0, 0.0, 0.0, -1.0]
    # a constant (or empty) training part: scale 1, centre its mean (or 0)
    assert to_common_scale(np.array([2.0, 5.0]), np.array([2.0, 2.0]), None).tolist() == [0.0, 3.0]
    assert to_common_scale(np.array([2.0, 5.0]), np.array([np.nan]), None).tolist() == [2.0, 5.0]


def test_rows_are_counted_before_any_value_is_looked_at():
    # n is public under replace-one: rows with missing values count towards min_rows
    x, y = _pair()
    x[:150] = np.nan
    assert validate_pair(x, y)[0].size == N
    assert validate_pair(x[:20], y[:20])[0].size == 20  # all missing: still 20 records
    with pytest.raises(ValueError, match="need at least 20 rows"):
        validate_pair(x[:19], y[:19])


def test_plain_sequences_are_read_per_record():
    x, y = validate_pair([1.0, None, "a", 4], [True, 2, 3.5, float("inf")], min_rows=4)
    assert np.isnan(x[1:3]).all() and x[[0, 3]].tolist() == [1.0, 4.0]
    assert y[:3].tolist() == [1.0, 2.0, 3.5] and np.isinf(y[3])
