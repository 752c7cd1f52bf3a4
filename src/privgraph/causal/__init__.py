"""Causal discovery: the PC family (Priv-PC and its baselines) and causal direction.

The PC family lives in :mod:`privgraph.causal.skeleton` (one stable-PC driver),
:mod:`privgraph.causal.deciders` (non-private and private deciders),
:mod:`privgraph.causal.em_pc` (EM-PC's own loop), :mod:`privgraph.causal.methods` (the skeleton
methods as objects, in the one registry ``METHODS``) and :mod:`privgraph.causal.estimators`
(:class:`PrivPC`). Causal direction (another module of this package) is imported from its
own module, not from here.
"""

from privgraph.causal.deciders import (
    BudgetTooSmall,
    LaplacePerTest,
    NonPrivate,
    SieveExamineDecider,
    SparseVectorPC,
    SubsampledGaussian,
)
from privgraph.causal.em_pc import em_pc_skeleton
from privgraph.causal.estimators import PrivPC
from privgraph.causal.margins import BlockVotes, RankMargin, make_margin
from privgraph.causal.skeleton import Skeleton, stable_pc_skeleton
from privgraph.data.tables import Tables

__all__ = [
    "BlockVotes",
    "BudgetTooSmall",
    "LaplacePerTest",
    "NonPrivate",
    "PrivPC",
    "RankMargin",
    "SieveExamineDecider",
    "Skeleton",
    "SparseVectorPC",
    "SubsampledGaussian",
    "Tables",
    "em_pc_skeleton",
    "make_margin",
    "stable_pc_skeleton",
]
