"""One front door (issue 48, item 3): every estimator's ``fit`` and the discover, release
and fit-mrf commands open their data exactly once through :func:`~privgraph.data.open_private`, and a
codebook or the data's dtypes are resolved to a domain at most once per fit
(:func:`~privgraph.data.resolve_domain` given anything but a resolved
:class:`~privgraph.data.Domain`).

The counting wrappers replace the names in the estimators' modules and the front door's own,
so a second opening or a second resolution anywhere on a fit's path is counted.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privgraph.causal.estimators as pc_module
import privgraph.data
import privgraph.data.frontdoor as frontdoor
import privgraph.mrf.estimator as mrf_module
import privgraph.release.estimator as release_module
from privgraph.causal import PrivPC
from privgraph.data import CountEngine, Domain, Kind, PrivateData, open_private, write_codebook
from privgraph.datasets import load_network, sample_frame
from privgraph.mrf import PrivateMRF
from privgraph.release import PrivateRelease
from privgraph.validation import InvalidInput

OPENERS = (pc_module, mrf_module, release_module)


@pytest.fixture
def counted(monkeypatch):
    """``calls``: the data each open_private call was given, and the domains resolved."""
    calls = {"open": [], "resolve": []}
    real_open, real_resolve = frontdoor.open_private, frontdoor.resolve_domain

    def open_counted(X, *args, **kwargs):
        calls["open"].append(X)
        return real_open(X, *args, **kwargs)

    def resolve_counted(X, domain=None, **kwargs):
        if not isinstance(domain, Domain):  # a resolved Domain is returned as it is: nothing resolved
            calls["resolve"].append(domain)
        return real_resolve(X, domain, **kwargs)

    for module in OPENERS:
        monkeypatch.setattr(module, "open_private", open_counted)
        if hasattr(module, "resolve_domain"):
            monkeypatch.setattr(module, "resolve_domain", resolve_counted)
    monkeypatch.setattr(frontdoor, "open_private", open_counted)
    monkeypatch.setattr(frontdoor, "resolve_domain", resolve_counted)
    monkeypatch.setattr(privgraph.data, "resolve_domain", resolve_counted)  # the commands' codebook
    return calls


@pytest.fixture(scope="module")
def asia(tmp_path_factory):
    """(frame of Categorical columns, its CSV path, its codebook path): 2000 rows of asia."""
    net = load_network("asia")
    frame = sample_frame(net, 2000, np.random.default_rng(0), labels=True)
    folder = tmp_path_factory.mktemp("asia")
    path, book = folder / "asia.csv", folder / "asia.json"
    frame.astype(str).to_csv(path, index=False)
    write_codebook(net.domain, book)
    return frame, path, book


CASES = {
    "pc": lambda: PrivPC(epsilon=10.0, max_cond_size=1, random_state=0),
    "pc-g-test": lambda: PrivPC(epsilon=10.0, max_cond_size=1, ci_test="g-test", random_state=0),
    "pc-add-remove": lambda: PrivPC(epsilon=10.0, max_cond_size=1, neighbours="add_remove", random_state=0),
    "mrf": lambda: PrivateMRF(epsilon=1.0, cliques="asia,tub;smoke,lung", random_state=0),
    "mrf-psgd": lambda: PrivateMRF(epsilon=1.0, cliques="asia,tub;smoke,lung", method="psgd", delta=1e-6,
                                         random_state=0),
    "release": lambda: PrivateRelease(epsilon=1.0, random_state=0),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("given", ["frame", "csv"])
def test_each_fit_opens_its_data_once(counted, asia, case, given):
    frame, path, book = asia
    X, domain = (frame, None) if given == "frame" else (path, str(book))
    CASES[case]().fit(X, domain=domain)
    assert [x is X for x in counted["open"]].count(True) == 1, counted["open"]
    assert all(isinstance(x, PrivateData) or x is X or not isinstance(x, (str, pd.DataFrame))
               for x in counted["open"])  # an inner fit (add/remove) gets the resized engine, nothing re-opened
    assert len(counted["resolve"]) <= 1, counted["resolve"]


def test_mrf_integer_codes_and_individual_go_through_the_front_door(counted):
    d = Domain.of(a=2, b=2)
    codes = np.array([[0, 1], [1, 1], [5, 0]] * 20)
    PrivateMRF(epsilon=1.0, cliques="a,b", random_state=0).fit(codes, domain=d)
    frame = pd.DataFrame({"a": pd.Categorical(["0", "1"] * 30, categories=["0", "1"]),
                          "b": pd.Categorical(["1", "1"] * 30, categories=["0", "1"]), "pid": range(60)})
    PrivateMRF(epsilon=1.0, cliques="a,b", individual="pid", random_state=0).fit(frame)
    assert [type(x).__name__ for x in counted["open"]] == ["ndarray", "DataFrame"]
    assert counted["resolve"] == [None]  # the frame's dtypes once; the Domain given is not re-resolved


def test_a_handle_resolves_once_and_counts_by_its_relation():
    frame = pd.DataFrame({"a": pd.Categorical(["x", None, "y"], categories=["x", "y"])})
    ar, ro = open_private(frame, neighbours="add_remove"), open_private(frame, neighbours="replace_one")
    assert (ar.invalid, ro.invalid, ar.under("replace_one").invalid) == ("drop", "recode", "recode")
    assert ar.engine().counts([]) == 2 and ro.engine().counts([]) == 3
    again = open_private(ar, neighbours="replace_one")  # a handle passed on: its relation's policy, nothing re-read
    assert again.domain is ar.domain and again.source is ar.source and again.invalid == "recode"
    assert ar.public and ar.dialect == ar.domain.dialect


def test_integer_codes_need_a_domain():
    with pytest.raises(InvalidInput, match="integer-coded data needs its domain"):
        open_private(np.zeros((2, 2), dtype=int), None, neighbours="replace_one", codes=True)
    with pytest.raises(InvalidInput, match="carries its own domain"):
        engine = open_private(pd.DataFrame({"a": pd.Categorical(["x"])}), neighbours="replace_one").engine()
        open_private(engine, Domain.of(a=1), neighbours="replace_one")


def test_a_continuous_column_is_left_to_the_records_fits():
    d = Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS,) * 2, bounds=((0.0, 1.0), (0.0, 1.0)))
    data = open_private(pd.DataFrame({"x": [0.1, 0.2], "y": [0.3, 0.4]}), d, neighbours="replace_one")
    assert data.domain is d  # nothing counted until an engine is asked for


@pytest.mark.parametrize("command", [
    ["discover", "--epsilon", "4", "--seed", "0", "--out", "{tmp}/g.json"],
    ["release", "--epsilon", "2", "--seed", "0", "--out", "{tmp}/release"],
    ["fit-mrf", "--epsilon", "2", "--cliques", "asia,tub;smoke,lung", "--seed", "0", "--out", "{tmp}/m.json"],
    ["fit-mrf", "--epsilon", "2", "--delta", "1e-6", "--method", "psgd", "--cliques", "asia,tub", "--seed", "0"],
])
def test_each_command_opens_its_file_once_by_the_codebooks_dialect(counted, asia, tmp_path, monkeypatch, command):
    from typer.testing import CliRunner

    from privgraph.cli import app

    _, path, book = asia
    opened = []
    real = frontdoor.open_file
    monkeypatch.setattr(frontdoor, "open_file", lambda *a, **k: opened.append(a) or real(*a, **k))
    args = [command[0], str(path), "--domain", str(book)] + [a.format(tmp=tmp_path) for a in command[1:]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    # the file once (the command's), then the fit's pass of the handle and any inner fit's engine
    assert isinstance(counted["open"][0], Path) and isinstance(counted["open"][1], PrivateData)
    assert all(isinstance(x, CountEngine) for x in counted["open"][2:])
    assert len(opened) == 1 and opened[0][2] is not None  # the dialect read from the handle's domain
    assert [str(b) for b in counted["resolve"]] == [str(book)]  # the codebook, once, before the fit
