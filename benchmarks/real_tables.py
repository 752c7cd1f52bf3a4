"""Real public tables for the benchmarks, installed offline, with hand-written codebooks.

    python3 -m pip install -e ".[real]"          # statsmodels, which ships the tables
    python3 benchmarks/real_tables.py fair --out fair      # writes fair/fair.csv and fair/fair.json

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
TABLES = {"fair": FAIR_CODEBOOK}


def load(name: str) -> pd.DataFrame:
    """The real table ``name`` as plain values (the codebook's levels), from statsmodels.

    Raises ValueError naming the table when it is not one of :data:`TABLES`.
    """
    if name not in TABLES:
        raise ValueError(f"real table {name!r}: expected one of {sorted(TABLES)}")
    from statsmodels.datasets import fair

    raw = fair.load_pandas().data
    frame = raw.drop(columns="affairs").assign(any_affair=(raw["affairs"] > 0).astype(int))
    return frame[list(FAIR_CODEBOOK)]


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
