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


real_bench = pytest.importorskip("bench_release_real")


def test_peak_reads_the_high_water_mark_and_falls_back_to_ru_maxrss(tmp_path):
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nVmPeak:\t  9000 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1024 kB\n")
    assert real_bench.peak_mib(str(status)) == (2.0, "VmHWM")
    peak, how = real_bench.peak_mib(str(tmp_path / "absent"))
    assert how == "ru_maxrss" and peak > 0


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's")
def test_a_child_reports_its_own_peak_not_its_parents():
    import resource
    import subprocess

    ballast = bytearray(400 * 2**20)  # the parent's peak above 400 MiB, the pages touched
    ballast[::4096] = b"\1" * len(ballast[::4096])
    del ballast
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert parent > 400
    code = real_bench.script("import json, resource\nprint(json.dumps([*peak_mib(), "
                             "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import json

    peak, how, inherited = json.loads(out.stdout)
    # a bare interpreter's high-water mark is tens of MiB; ru_maxrss carries the parent's 400 through exec
    assert how == "VmHWM" and peak < 200 and inherited > 400


def test_synthetic_levels_written_as_floats_are_the_tables_levels():
    synth = pd.DataFrame({"age": ["22.0", "17.5", "22"], "y": ["1", "0", "1.0"], "extra": ["a", "b", "c"]})
    before = synth.copy()
    out = real_bench.as_levels(synth, ["age", "y"])
    assert out.to_dict("list") == {"age": ["22", "17.5", "22"], "y": ["1", "0", "1"]}
    pd.testing.assert_frame_equal(synth, before)
    # the classifier then sees the test rows' "22" as a level it was trained on
    train = pd.DataFrame({"age": ["22.0", "30.0"] * 50, "y": ["1", "0"] * 50})
    test = pd.DataFrame({"age": ["22", "30"] * 10, "y": ["1", "0"] * 10})
    assert utility_bench.utility(train, test, "y", "1", "0")["auc"] == 0.5  # "22.0" unseen in the test rows
    assert utility_bench.utility(real_bench.as_levels(train, ["age", "y"]), test, "y", "1", "0")["auc"] == 1.0
