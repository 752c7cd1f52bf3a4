"""Issue 44 item 3: the smallest effect a run's tests can detect, predicted from public facts,
said before spending and after a run whose tests had no power (privgraph.causal.power)."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privgraph.causal import PrivPC
from privgraph.causal.power import NoPowerWarning
from privgraph.cli import app
from privgraph.data import Domain, Kind
from privgraph.data.codebook import write_codebook
from privgraph.datasets import load_network

ASIA = load_network("asia").domain
ALARM = load_network("alarm").domain  # 37 columns: method="auto" is tables-pc


def continuous(d: int, bound: float = 0.5) -> Domain:
    return Domain(tuple(f"c{i}" for i in range(d)), (0,) * d, (Kind.CONTINUOUS,) * d,
                  bounds=((-bound, bound),) * d)


@pytest.mark.parametrize("kw,domain", [(dict(ci_test="fisher-z"), continuous(8)), (dict(ci_test="rank"), continuous(8)),
                                       (dict(method="gauss-pc"), ASIA), (dict(), ASIA),
                                       (dict(method="tables-pc"), ASIA), (dict(), ALARM)])
def test_the_prediction_falls_with_rows_and_epsilon(kw, domain):
    rows, epsilons = (30_000, 100_000, 300_000), (1.0, 2.0, 4.0)
    by_rows = [PrivPC(epsilon=2.0, **kw).detectable(domain, n).smallest for n in rows]
    by_eps = [PrivPC(epsilon=e, **kw).detectable(domain, 100_000).smallest for e in epsilons]
    assert by_rows == sorted(by_rows, reverse=True) and by_rows[0] > by_rows[-1], by_rows
    assert by_eps == sorted(by_eps, reverse=True) and by_eps[0] > by_eps[-1], by_eps


def _detection_rate(make_frame, domain, ci_test, epsilon, rho, reps, seed):
    """How often the level-0 test of the private release finds the pair's edge (the fit's own
    release and decider, without the fit's other work)."""
    from privgraph.causal.fisher_pc import FisherZDecider, release_covariance
    from privgraph.causal.rank_pc import rank_correlation
    from privgraph.data.moments import moment_sums
    from privgraph.privacy import SeededSampler

    hits = 0
    for r in range(reps):
        frame, sampler = make_frame(rho, np.random.default_rng((seed, r))), SeededSampler(seed * 100_000 + r)
        if ci_test == "fisher-z":
            moments = moment_sums(frame, domain, invalid="recode", norm=math.sqrt(2) / 4)
            cov = release_covariance(moments, domain.names, epsilon=epsilon, delta=1e-6, neighbours="replace_one",
                                     sampler=sampler).value
        else:
            cov = rank_correlation(frame, domain, epsilon=epsilon, delta=1e-6, sampler=sampler, budget=None,
                                   private=True)[0]
        hits += not FisherZDecider(cov, 0.05)("c0", "c1", ())
    return hits / reps


def _uniform_pair(rho, rng, n=3000):
    """Uniform marginals over the bounds exactly (the prediction's spread), correlation rho:
    y is x with probability rho, else an independent uniform."""
    x = rng.uniform(-0.5, 0.5, n)
    y = np.where(rng.uniform(size=n) < rho, x, rng.uniform(-0.5, 0.5, n))
    return pd.DataFrame({"c0": x, "c1": y})


def _gaussian_pair(rho, rng, n=3000):
    x = rng.normal(size=n)
    return pd.DataFrame({"c0": x, "c1": rho * x + math.sqrt(1 - rho * rho) * rng.normal(size=n)})


@pytest.mark.parametrize("ci_test,make_frame,epsilon", [("fisher-z", _uniform_pair, 0.3), ("rank", _gaussian_pair, 0.3)])
def test_the_prediction_matches_a_simulation(ci_test, make_frame, epsilon):
    """At twice the predicted smallest correlation the level-0 test finds the edge most of the
    time (about 0.97 at first order), at half of it rarely (about 0.16). Hoeffding at 1e-6 over
    ``reps`` runs bounds the rates' deviation by ``tol``; the limits leave room for the
    first-order prediction's error besides."""
    domain = continuous(2)
    smallest = PrivPC(ci_test=ci_test, epsilon=epsilon).detectable(domain, 3000).smallest
    assert 0.05 < smallest < 0.4, smallest  # the noise matters at this setting
    reps = 200
    tol = math.sqrt(math.log(2 / 1e-6) / (2 * reps))
    assert _detection_rate(make_frame, domain, ci_test, epsilon, min(2 * smallest, 0.95), reps, 1) >= 0.9 - tol
    assert _detection_rate(make_frame, domain, ci_test, epsilon, smallest / 2, reps, 2) <= 0.3 + tol


def _sachs_like(tmp_path):
    """11 continuous columns concentrated near 200 against public bounds [0, 10000] (Sachs' flow
    cytometry, 2,000 rows), and a neighbour: its first row replaced by one at the top."""
    rng = np.random.default_rng(0)
    names = [f"c{i}" for i in range(11)]
    z = rng.normal(size=(2000, 1))
    frame = pd.DataFrame(np.clip(200 + 60 * (0.6 * z + 0.8 * rng.normal(size=(2000, 11))), 0, 10_000), columns=names)
    frame.to_csv(tmp_path / "a.csv", index=False)
    frame.iloc[0] = 9000.0
    frame.to_csv(tmp_path / "b.csv", index=False)
    write_codebook(Domain(tuple(names), (0,) * 11, (Kind.CONTINUOUS,) * 11, bounds=((0.0, 10_000.0),) * 11),
                   tmp_path / "c.json")
    return tmp_path


def _power_lines(output: str) -> list[str]:
    text = " ".join(output.split())  # rich wraps lines
    return [part for part in text.split("power: ")[1:]]


@pytest.mark.parametrize("epsilon,said", [(1.0, "if your columns spread over less than"),
                                          (0.2, "cannot detect a correlation below")])
def test_plan_and_discover_say_it_before_spending_from_public_facts(tmp_path, epsilon, said):
    """Sachs-like: plan says it, discover says it before its output, identically for two
    neighbouring files (it reads n, d, bounds and epsilon only); at epsilon 0.2 the run is
    uninformative by the uniform prediction itself, and its summary and JSON say so."""
    path = _sachs_like(tmp_path)
    runner = CliRunner()
    plan = runner.invoke(app, ["plan", "--domain", str(path / "c.json"), "--rows", "2000", "--epsilon", str(epsilon),
                               "--neighbours", "replace_one", "--discover", "--ci-test", "fisher-z"])
    assert plan.exit_code == 0, plan.output
    assert said in " ".join(plan.output.split())
    outputs = []
    for name in ("a", "b"):
        out = path / f"{name}.json"
        result = runner.invoke(app, ["discover", str(path / f"{name}.csv"), "--domain", str(path / "c.json"),
                                     "--epsilon", str(epsilon), "--ci-test", "fisher-z", "--out", str(out)])
        assert result.exit_code == 0, result.output
        lines = _power_lines(result.output)
        assert lines and said in lines[0]
        outputs.append((lines[0].split(" CPDAG")[0], json.loads(out.read_text())["privacy"]["power"]))
    assert outputs[0] == outputs[1]
    informative = outputs[0][1]["informative"]
    assert informative is (epsilon == 1.0)
    if not informative:
        assert "The tests had no power" in " ".join(result.output.split())


def test_a_well_powered_run_says_nothing_before_spending():
    """asia, 100,000 rows, epsilon 1: no warning in plan or in the fit."""
    runner = CliRunner()
    from privgraph.data.codebook import write_codebook as write
    import tempfile
    from pathlib import Path

    codebook = Path(tempfile.mkdtemp()) / "asia.json"
    write(ASIA, codebook)
    plan = runner.invoke(app, ["plan", "--domain", str(codebook), "--rows", "100000", "--epsilon", "1",
                               "--neighbours", "replace_one", "--discover"])
    assert plan.exit_code == 0, plan.output
    assert "detects a Kendall's tau" in " ".join(plan.output.split()) and "uninformative" not in plan.output
    from privgraph.datasets import sample_frame

    net = load_network("asia")
    X = sample_frame(net, 100_000, np.random.default_rng(0), labels=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoPowerWarning)
        warnings.filterwarnings("ignore", message="random_state seeds")
        est = PrivPC(epsilon=1.0, random_state=0).fit(X, domain=net.domain)
    assert est.is_informative_ and est.detectable_.smallest < 0.05


def test_an_uninformative_fit_warns_before_the_release_and_says_so_after():
    """The warning is raised before any noise is drawn (the sampler has drawn nothing yet), and
    the fitted attributes say the graph is uninformative."""
    frame = _uniform_pair(0.0, np.random.default_rng(0), n=500)
    with pytest.warns(NoPowerWarning, match="cannot detect"):
        est = PrivPC(ci_test="rank", epsilon=0.05, random_state=0).fit(frame, domain=continuous(2))
    assert est.is_informative_ is False and est.detectable_.smallest > 0.3


def test_tables_pc_prediction_matches_a_simulation():
    """Tables-PC's level 0 (alarm's domain at 3,000 rows, epsilon 1: sigma from the plan): a 2x2
    table with uniform margins and Cramér's V twice the predicted smallest is found most of the
    time, at half of it rarely, by the test the method runs (noisy_independent). Hoeffding at
    1e-6 over the repetitions bounds the rates' deviation by ``tol``."""
    from privgraph.causal.methods import METHODS, PublicShape, Search
    from privgraph.causal.table_pc import noisy_independent

    n, epsilon = 3000, 1.0
    search = Search(epsilon=epsilon, delta=1e-6, alpha=0.05, max_cond_size=2)
    sigma = METHODS["tables-pc"].table_noise(PublicShape(ALARM, n), search)
    smallest = PrivPC(epsilon=epsilon).detectable(ALARM, n).smallest
    assert 0.2 < smallest < 1, smallest  # the noise matters here: 3,000 rows against sigma in the hundreds
    rng, reps = np.random.default_rng(7), 400
    tol = math.sqrt(math.log(2 / 1e-6) / (2 * reps))

    def rate(v: float) -> float:
        p = np.array([1 + v, 1 - v, 1 - v, 1 + v]) / 4  # uniform margins, phi = v
        hits = sum(not noisy_independent(rng.multinomial(n, p).reshape(2, 2) + rng.normal(0, sigma, (2, 2)),
                                         sigma, 0.05) for _ in range(reps))
        return hits / reps

    assert rate(min(2 * smallest, 1.0)) >= 0.9 - tol
    assert rate(smallest / 2) <= 0.3 + tol


def test_tables_pc_warns_when_uninformative_and_not_otherwise():
    """The default on a wide table (tables-pc): alarm at 1e5 rows and epsilon 1 detects a small
    phi (no warning); at 1e4 rows and epsilon 0.1 no phi at all (the warning, before spending)."""
    good = PrivPC(epsilon=1.0).detectable(ALARM, 100_000)
    assert good.test == "chi-square (released tables)" and good.is_informative and good.smallest < 0.05
    assert good.warning() is None and "detects a phi" in good.line()
    bad = PrivPC(epsilon=0.1).detectable(ALARM, 10_000)
    assert not bad.is_informative and "more epsilon or more rows" in bad.warning()
