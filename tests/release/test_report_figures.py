"""Issue 45, item 5 (plots): marginals.png names its panels by their columns, its axes by the
columns' names and its ticks by level names (bins' labels for a binned column, long names
shortened, many levels thinned), with a legend for each series; budget.png labels its rows as
the report's budget table does and keeps every text inside the figure."""

import warnings

import numpy as np
import pandas as pd
import pytest
from matplotlib.text import Text

from privgraph.data.bins import make_bins
from privgraph.data.domain import Domain, Kind
from privgraph.release import PrivateRelease
from privgraph.release.figures import (
    LABEL_CHARS, MAX_CELLS, MAX_TICKS, SERIES, budget_figure, marginals_figure, shorten,
)
from privgraph.release.report import budget_rows, marginal_checks

LEVELS = {"smoking": ("never smoked", "former smoker", "current smoker"),
          "region": ("North", "South", "East", "West of the Pennines region")}
AGE_BINS = ("[18, 36)", "[36, 54)", "[54, 72)", "[72, 90]")


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    n = 2_000
    smoking = rng.choice(LEVELS["smoking"], n, p=[0.5, 0.3, 0.2])
    region = np.where(smoking == "current smoker", rng.choice(LEVELS["region"][:2], n), rng.choice(LEVELS["region"], n))
    frame = pd.DataFrame({"smoking": smoking, "region": region, "age": np.clip(rng.normal(50, 15, n), 18, 90)})
    domain = Domain(("smoking", "region", "age"), (3, 4, 4), (Kind.CATEGORICAL, Kind.CATEGORICAL, Kind.CONTINUOUS),
                    (LEVELS["smoking"], LEVELS["region"], ()), bins=(None, None, make_bins((18.0, 90.0), 4)))
    return frame, domain


def fitted(table, structure):
    frame, domain = table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # random_state: seeded noise, a test
        rel = PrivateRelease(epsilon=4.0, structure=structure, random_state=0).fit(frame, domain=domain)
        return rel, rel.sample()


def drawn(fig):
    fig.canvas.draw()
    return fig


def texts_outside(fig) -> list[str]:
    """Every visible, non-empty text of ``fig`` whose drawn extent leaves the figure."""
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    undrawn = {id(label) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)  # ticks beyond the view
               for tick in axis.get_major_ticks() + axis.get_minor_ticks()
               if not min(axis.get_view_interval()) <= tick.get_loc() <= max(axis.get_view_interval())
               for label in (tick.label1, tick.label2)}
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip() or id(t) in undrawn:
            continue
        e = t.get_window_extent(renderer)
        if e.x0 < box.x0 - 0.5 or e.y0 < box.y0 - 0.5 or e.x1 > box.x1 + 0.5 or e.y1 > box.y1 + 0.5:
            out.append(t.get_text())
    return out


def names(labels) -> list[str]:
    return [t.get_text() for t in labels]


@pytest.mark.parametrize("structure", ["tree", "priv-pc"])
def test_marginal_panels_name_their_columns_axes_and_levels(table, structure):
    rel, synthetic = fitted(table, structure)
    checks = marginal_checks(rel, synthetic)
    fig = drawn(marginals_figure(checks))
    assert len(fig.axes) == len(checks) >= 1
    levels = LEVELS | {"age": AGE_BINS}  # the binned column's codes are named by its bins
    for ax, check in zip(fig.axes, checks):
        columns = check["clique"]
        assert ax.get_title().startswith(" × ".join(columns) + ": TVD ")
        assert ax.get_xlabel().startswith(" / ".join(columns)) and ax.get_ylabel() == "share of rows"
        ticks = [label.split(" / ") for label in names(ax.get_xticklabels())]
        assert ticks and all(len(t) == len(columns) for t in ticks)
        for axis, name in enumerate(columns):
            assert {t[axis] for t in ticks} <= {shorten(v) for v in levels[name]}
        if check["released"].size <= MAX_TICKS:  # every cell named: every level of every column shows
            for axis, name in enumerate(columns):
                assert {t[axis] for t in ticks} == {shorten(v) for v in levels[name]}
    legend = fig.axes[0].get_legend()
    assert legend is not None and names(legend.get_texts()) == list(SERIES)
    assert not texts_outside(fig)


def test_tree_release_names_levels_and_bins_in_full(table):
    rel, synthetic = fitted(table, "tree")
    ticks = " ".join(names(drawn(marginals_figure(marginal_checks(rel, synthetic))).axes[0].get_xticklabels()))
    assert "never smoked" in ticks and "[18, 36)" in ticks and "[72, 90]" in ticks


def test_many_long_levels_are_shortened_and_thinned():
    long = tuple(f"level number {i} with a long name" for i in range(60))
    shares = np.full(60, 1 / 60)
    check = {"clique": ("country",), "labels": (long,), "released": shares, "synthetic": shares, "tvd": 0.0}
    ax = drawn(marginals_figure([check])).axes[0]
    ticks = names(ax.get_xticklabels())
    assert 1 < len(ticks) <= MAX_TICKS
    assert all(len(t) <= LABEL_CHARS and t.endswith("…") for t in ticks)
    every = -(-MAX_CELLS // MAX_TICKS)  # the 48 cells drawn, one in 3 named
    assert ticks[0] == shorten(long[0]) and ticks[1] == shorten(long[every])
    assert f"first {MAX_CELLS} of 60 cells" in ax.get_title() and f"one cell in {every} named" in ax.get_xlabel()
    assert not texts_outside(ax.figure)


def test_budget_rows_are_labelled_as_the_report_labels_them_and_every_text_fits(table):
    rel, _ = fitted(table, "tree")
    rows = budget_rows(rel)
    fig = drawn(budget_figure(rows))
    ax = fig.axes[0]
    labels = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])  # top to bottom
    assert [t.get_text().replace("\n", " ") for t in labels] == [f"{stage}: {what}" for stage, what, _ in rows]
    assert "epsilon" in ax.get_xlabel() and "Budget" in ax.get_title()
    assert not texts_outside(fig)


def test_the_inside_check_catches_a_text_cut_off(table):
    rel, _ = fitted(table, "tree")
    fig = budget_figure(budget_rows(rel))
    fig.text(0.98, 0.5, "a label running off the right edge")
    assert texts_outside(drawn(fig)) == ["a label running off the right edge"]
