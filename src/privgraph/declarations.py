"""Every estimator's parameter declarations: one :class:`~privgraph.estimator.Param` per
constructor parameter, with its help, its default, its choices and its kind of check.

Each estimator's ``PARAMS`` is the tuple of this module of its name (``PrivPC.PARAMS is
PRIVPC``), and the command line builds its options from the same tuples
(:mod:`privgraph.cli.params`). This module imports no numerical stack, so that ``privgraph
COMMAND --help`` and the options' checks run before numpy, scipy or pandas is imported.

A declaration names its choices (the names of the registry that implements them, such as
:data:`privgraph.causal.methods.METHODS`) and its default (the one the constructor's signature
repeats) by value: ``tests/test_declarations.py`` holds each equal to the registry's names and
to the signature.

>>> [p.name for p in PRIVPC][:4]
['epsilon', 'delta', 'neighbours', 'random_state']
>>> {p.name: p.default for p in RELEASE}["neighbours"]
'add_remove'
"""

from __future__ import annotations

from privgraph.estimator import Param, privacy_params
from privgraph.registry import Names
from privgraph.validation import (InvalidInput, check_share, choice, count, count_or_auto, function_or_none,
                                  positive_count, positive_finite, positive_number)


def check_abstain(abstain_below, name: str = "abstain_below") -> float:
    """The public abstention threshold, in [0.5, 1) (0.5: never abstain); the message names ``name``.

    >>> check_abstain(0.6)
    0.6
    >>> check_abstain(1.0)
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: abstain_below must be in [0.5, 1), got 1.0
    """
    if not isinstance(abstain_below, (int, float)) or not (0.5 <= abstain_below < 1):
        raise InvalidInput(f"{name} must be in [0.5, 1), got {abstain_below!r}")
    return float(abstain_below)


#: ``ci_test``'s choices: "auto" and the names of :data:`privgraph.causal.estimators.CI_TESTS`, fisher-z and rank.
CI_TEST_CHOICES = ("auto", "kendall", "kendall-ties", "spearman", "g", "g-test", "chi-square", "chisq", "fisher-z", "rank")


#: ``structure``'s choices: "auto" (the planner's choice) and the names of the release's structures, which
#: :data:`privgraph.release.stage.STRUCTURES` registers, and any structure registered there later
#: (:mod:`privgraph.registry`: ``release --structure`` then accepts it).
RELEASE_STRUCTURES = Names("auto", "gauss-pc", "priv-pc", "tree")


#: The contribution bound, the same declaration on every estimator (``--max-rows-per-person``):
#: with the codebook's ``"id"`` the person is the privacy unit (:mod:`privgraph.privacy.person`).
MAX_ROWS_PER_PERSON = Param(
    "max_rows_per_person", "The most rows one person may contribute (public; needs the codebook's \"id\", the "
    "person column): each person keeps at most this many rows, chosen at random, and the guarantee is per person.",
    kind=positive_count, default=None)


#: :class:`privgraph.causal.PrivPC`'s parameters (``discover``'s options, ``plan --discover``'s ``--ci-test``).
PRIVPC = (
    *privacy_params(
        epsilon="Total privacy budget epsilon (the whole run).",
        delta="Total privacy budget delta.",
        neighbours="replace_one: one row changed, the number of rows public; add_remove: one row added or "
                   "removed, the number of rows released first with 1% of epsilon and the tests run on a secret "
                   "subset of that size.",
        default_delta=1e-6, default_neighbours="replace_one"),
    Param("alpha", "Level of each independence test.", kind=check_share, default=0.05),
    Param("ci_test", "auto: rank when every column is continuous (fisher-z with --orient direction), kendall "
                     "when every column is ordinal or "
                     "binary, else g; kendall-ties: Kendall corrected for ties (categorical columns with rare "
                     "levels); fisher-z: continuous columns with codebook bounds, one private covariance and PC "
                     "on it for free; rank: continuous (no bounds needed) and ordinal columns, one private "
                     "release of Kendall's tau and PC on its Gaussian-copula correlation for free.",
          choices=CI_TEST_CHOICES, kind=choice(CI_TEST_CHOICES, auto=True), default="auto"),
    Param("max_cond_size", "Largest conditioning set (default: min(d-2, log2(n)-5)).", kind=count, default=None),
    Param("method", "The PC variant: gauss-pc for wide tables; pc is not private.",
          choices=("auto", "priv-pc", "svt-pc", "em-pc", "laplace-pc", "sg-pc", "gauss-pc", "tables-pc", "pc"),
          default="auto"),
    Param("max_rounds", "Cap of rounds/tests reserved in advance (default per method).", kind=positive_count,
          default=None),
    Param("forbidden", "Background knowledge: pairs of columns never joined (never tested).", default=()),
    Param("required", "Background knowledge: pairs of columns always joined (kept untested).", default=()),
    Param("orient", "cpdag: colliders and Meek's rules; direction: then private direction tests on the "
                    "undirected edges.", choices=("cpdag", "direction"), default="cpdag"),
    Param("orient_share", "With --orient direction: the share of epsilon for the direction tests.",
          kind=check_share, default=0.2),
    Param("degenerate", "What a test with no information (every stratum degenerate) decides: dependent keeps the "
                        "edge, independent is causal-learn's convention.", choices=("dependent", "independent"),
          default="dependent"),
    Param("record_norm", "With --ci-test fisher-z: the L2 norm each record's scaled vector is shrunk to "
                         "(default: a quarter of the box's, sqrt(d)/4).", kind=positive_number, default=None),
    MAX_ROWS_PER_PERSON,
)

#: :class:`privgraph.release.PrivateRelease`'s parameters (``release``'s and ``plan``'s options).
RELEASE = (
    *privacy_params(
        epsilon="Total privacy budget epsilon of the whole release.",
        delta="delta (Priv-PC's composition; the tree's Gaussian tables under zCDP; 0: pure DP).",
        neighbours="add_remove: one row added or removed, the number of rows private: gauss-pc and priv-pc "
                   "first release it with 1% of rho when delta > 0 (epsilon sqrt(0.02 rho) alone: 2.2% of epsilon "
                   "at epsilon 1, delta 1e-6), 1% of epsilon at delta 0, as --structure auto does at delta 0 "
                   "(it chooses from it); the PC structures then run on a secret subset of that size, the tree on "
                   "all rows; --structure tree, and auto at delta > 0 (the tree), release none. replace_one: one "
                   "row changed, the number of rows public.",
        default_delta=1e-6, default_neighbours="add_remove"),
    Param("split", "Structure's share of epsilon for Priv-PC (default: the planner's recommendation).",
          kind=check_share, default=None),
    Param("cap", "Largest number of cells of one model table (public).", kind=positive_count, default=5_000),
    Param("alpha", "Level of Priv-PC's tests.", kind=check_share, default=0.05),
    Param("max_rounds", "Priv-PC's cap of rounds, or auto (its default if the budget affords it, else the "
                        "largest cap the planner finds affordable).", kind=count_or_auto, default="auto"),
    Param("method", "The model's fit from the released tables (from Python also a function).",
          choices=("cgm-em", "naive-mle"), kind=choice(("cgm-em", "naive-mle"), function=True), default="cgm-em"),
    Param("orientation", "A hook orientation(cpdag, engine, budget) -> cpdag for a private orientation step (from "
                         "Python); None: colliders and Meek's rules only.", kind=function_or_none, default=None),
    Param("tree_cap", "Public model-size cap: the most cells the model's junction tree may hold, so that the "
                      "model is fitted and sampled exactly (at least the domain's one-way cells).",
          kind=positive_count, default=200_000),
    Param("structure", "Stage 1; auto: at delta > 0 the private spanning tree with AIM's adaptive rounds "
                       "(pairs and small triples) where its tables fit the memory cap; at delta 0 Priv-PC where "
                       "the planner finds it affordable, else the tree.",
          choices=RELEASE_STRUCTURES, default="auto"),
    MAX_ROWS_PER_PERSON,
)

#: The names of :class:`privgraph.mrf.PrivateMRF`'s fits: the built-in ones, which
#: :data:`privgraph.mrf.fits.FITS` registers, and any fit registered there later
#: (:mod:`privgraph.registry`: ``fit-mrf --method`` then accepts it).
MRF_FITS = Names("cgm-em", "naive-mle", "psgd")

#: :class:`privgraph.mrf.PrivateMRF`'s parameters (``fit-mrf``'s options).
MRF = (
    *privacy_params(
        epsilon="Total privacy budget epsilon.",
        delta="delta, for Gaussian noise and PSGD.",
        neighbours="add_remove: the number of units private, estimated from the noisy tables; replace_one: "
                   "one unit changed, the number public.",
        default_delta=None, default_neighbours="add_remove"),
    Param("cliques", 'Cliques as "a,b;b,c" (columns within a clique by commas).', default=None),
    Param("method", "The model's fit (from Python also a function of the released tables).",
          choices=MRF_FITS, kind=choice(MRF_FITS, function=True), default="cgm-em"),
    Param("noise", "The tables' noise: laplace (pure DP) or gaussian (needs delta).", choices=("laplace", "gaussian"),
          default="laplace"),
    Param("individual", "Column naming the individual (the privacy unit).", default=None),
    Param("ties", "Tied potentials: a group label per clique (the table methods only).", default=None),
    Param("null", "The individual column's null code (the table methods only).", default=None),
    Param("invalid", "Missing/out-of-domain values: drop (default under add_remove) or recode (to the first "
                     "level, default under replace_one).", choices=("drop", "recode"), default=None),
    Param("options", "Extra keywords for the method (e.g. {'discrepancy': 1.5} for cgm-em).", default=None),
    MAX_ROWS_PER_PERSON,
)

#: The names of :class:`privgraph.causal.direction.PrivateANM`'s scores: the built-in ones, which
#: :data:`privgraph.causal.direction.scores.SCORES` registers, and any score registered there later
#: (:mod:`privgraph.registry`: ``direction --score`` then accepts it).
DIRECTION_SCORES = Names("spearman", "kendall", "hsic", "iqr", "reci")

#: :class:`privgraph.causal.direction.PrivateANM`'s parameters (``direction``'s options).
ANM = (
    *privacy_params(
        epsilon="Privacy budget epsilon per pair.",
        delta="Delta per pair (the iqr score only).",
        neighbours="replace_one: one record changed, n public (the split and the scores' sensitivities use it); "
                   "add_remove: one record added or removed, the number of records released first with 1% of "
                   "epsilon and the tests run on a secret subset of that size.",
        default_delta=1e-6, default_neighbours="replace_one"),
    Param("score", "The dependence score; reci: regression errors, with an agreement probability (the most "
                   "accurate on the real pairs); hsic: the only one under privacy train+test.",
          choices=DIRECTION_SCORES, default="reci"),
    Param("privacy", "record: every record protected; test: test records only (NOT private for the training "
                     "part); train+test: every record, hsic only, needs ~1e7 rows.",
          choices=("record", "test", "train+test"), default="record"),
    Param("bounds", "Public clipping bounds ((x_low, x_high), (y_low, y_high)), instead of a domain.", default=None),
    Param("test_fraction", "Share of the rows in the test part (public).", kind=check_share, default=0.5),
    Param("ridge", "The Fourier ridge of the 'test' and 'train+test' modes (default per mode).", kind=positive_finite,
          default=None),
    Param("lengthscale", "The Fourier features' lengthscale of the 'test' and 'train+test' modes.",
          kind=positive_finite, default=1.0),
    Param("bins", "Grid of the 'record' mode's training table (default: from the training size and epsilon).",
          kind=positive_count, default=None),
    Param("abstain_below", "Answer 'undecided' when P(noise-free agrees) (reci) or P(causal, SIM) (kendall) is below "
                           "this public threshold in [0.5, 1); 0.5 never abstains.", kind=check_abstain, default=0.6),
    MAX_ROWS_PER_PERSON,
)

__all__ = ["ANM", "DIRECTION_SCORES", "MAX_ROWS_PER_PERSON", "MRF", "MRF_FITS", "PRIVPC", "RELEASE", "RELEASE_STRUCTURES",
           "check_abstain"]
