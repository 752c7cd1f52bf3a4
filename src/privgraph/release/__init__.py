"""One release: a causal graph, its parameters and synthetic rows under one budget; a planner.

Sits above :mod:`privgraph.causal` and :mod:`privgraph.mrf` and only joins them (see
docs/release.md)::

    from privgraph.release import PrivateRelease, plan_release, family_cliques
"""

from privgraph.release.cliques import DEFAULT_CAP, family_cliques
from privgraph.release.estimator import PrivateRelease
from privgraph.release.planner import DEFAULT_SPLIT, ReleasePlan, StagePlan, plan_release, recommend_split

__all__ = ["DEFAULT_CAP", "DEFAULT_SPLIT", "PrivateRelease", "ReleasePlan", "StagePlan", "family_cliques",
           "plan_release", "recommend_split"]
