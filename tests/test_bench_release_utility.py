"""benchmarks/bench_release_utility.py's helpers: the held-out split and the downstream scorer."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
utility_bench = pytest.importorskip("bench_release_utility")


def frame(n: int = 200, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, n)
    y = (rng.random(n) < np.array([0.1, 0.5, 0.9])[x]).astype(int)
    return pd.DataFrame({"x": x.astype(str), "z": rng.integers(0, 2, n).astype(str), "y": y.astype(str)})


def test_split_is_deterministic_stratified_and_leaves_the_input_alone():
    f = frame()
    before = f.copy()
    train, test = utility_bench.split(f, "y")
    again_train, again_test = utility_bench.split(f, "y")
    pd.testing.assert_frame_equal(train, again_train)
    pd.testing.assert_frame_equal(test, again_test)
    pd.testing.assert_frame_equal(f, before)
    assert len(train) + len(test) == len(f)
    for level, count in f["y"].value_counts().items():  # each level's share held back, rounded
        assert (test["y"] == level).sum() == round(0.2 * count)
    other_train, _ = utility_bench.split(f, "y", seed=1)
    assert not other_train.equals(train)


def test_split_names_a_missing_target():
    with pytest.raises(ValueError, match="target 'w'"):
        utility_bench.split(frame(), "w")


def test_utility_scores_a_real_signal_above_chance_and_noise_near_it():
    pytest.importorskip("sklearn")
    train, test = utility_bench.split(frame(2000), "y")
    real = utility_bench.utility(train, test, "y", "1", "0")
    # P(y=1 | x) is 0.1, 0.5, 0.9 by x, a third each: the Bayes AUC is about 0.84
    assert real["auc"] > 0.75 and real["n_test"] == len(test)
    shuffled = train.assign(y=train["y"].sample(frac=1, random_state=0).to_numpy())
    noise = utility_bench.utility(shuffled, test, "y", "1", "0")
    assert abs(noise["auc"] - 0.5) < 0.1  # 400 test rows: an AUC's sd under the null is about 0.03


def test_utility_of_one_class_has_no_auc():
    pytest.importorskip("sklearn")
    f = frame()
    u = utility_bench.utility(f.assign(y="1"), f, "y", "1", "0")
    assert u["auc"] is None and u["accuracy"] == pytest.approx((f["y"] == "1").mean())
