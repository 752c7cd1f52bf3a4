"""AIM's adaptive rounds after the tree, within one zCDP budget fixed in advance (a filter).

After the tree's tables (:mod:`privgraph.release.tree`), each round, as AIM (McKenna, Mullins,
Sheldon, Miklau 2022, Algorithm 2):

1. **select**: every pair, and every triple of the workload
   (:func:`~privgraph.release.model_size.workload_triples`: small triples from the codebook's
   sizes, as AIM's 3-way workload), is scored by how badly the model fitted to the tables
   released so far
   (post-processing) answers it, less the noise its own measurement would add,
   ``q_ij = || C_ij - n P_model(i, j) ||_1 - sqrt(2/pi) sigma_t cells_ij``; one pair is chosen by
   the exponential mechanism at ``epsilon_t`` among the pairs that keep the model's junction
   tree within the public cap (:func:`~privgraph.release.model_size.fits`). Sensitivity: that of
   :func:`~privgraph.release.pair_scores.pair_score_sensitivity` (the prediction and the penalty are
   the same on both neighbours; the penalty is a public constant per pair; a triple's table
   moves by one cell as a pair's does, so its score has the same sensitivity);
2. **measure**: its count table with the discrete Gaussian at ``rho_t``
   (:func:`~privgraph.privacy.zcdp.zcdp_gaussian_vector`: one table, L2 sensitivity 1 under
   add/remove, ``sqrt 2`` under replace-one). A pair measured again is combined with its
   earlier measurements by inverse variance (post-processing);
3. **refit** the model (CGM-EM, warm-started from the last fit; post-processing; see
   :data:`ROUND_FOCUS`), and
   **anneal**: when the refitted model moved the measured pair's table by less than the
   noise of that measurement (``|| n (P_after - P_before) ||_1 <= sqrt(2/pi) sigma_t cells``),
   the next rounds spend four times the rho (sigma halves, epsilon doubles).

**Wide ordered columns in bins** (:func:`candidates`). Beside every pair at full resolution, a
round may measure a pair whose wide ordered column (ages, years, schooling) is summed into about
equal-mass bins of consecutive codes, the bins read from the released one-way tables
(post-processing). Such a table has far fewer cells, so its noise penalty is small enough for
the rounds to measure how a 73-level age goes with a 22-level schooling, where the full table's
noise would outweigh its error. Its score, sensitivity and measurement are those of a pair's:
one record moves one cell of the binned table as it moves one of the full one. The model keeps
the pair's clique over its codes and CGM-EM takes the binned table as a linear measurement
(:mod:`privgraph.mrf.cgm`), so within a bin the model follows the columns' other tables.

**Budget.** The stage has a total ``rho`` fixed before any data is read (a share of the
release's). Round ``t`` costs ``rho_t = Delta^2 / (2 sigma_t^2) + epsilon_t^2 / 8`` (the Gaussian
measurement, and the exponential mechanism as ``epsilon^2/8``-zCDP, a bounded-range mechanism:
Cesar and Rogers 2021), 90% and 10% of it as AIM; the first rounds are priced as
``rounds`` equal ones. When what is left is less than two rounds at the current price, the last
round spends exactly what is left. The rhos are chosen from earlier outputs only, and
their sum is ``rho`` whatever the data: a zCDP *filter*. Each round is ``rho_t``-zCDP given the
past, so at every Renyi order ``alpha`` the rounds are ``alpha rho_t``-RDP given the past with
``sum_t alpha rho_t = alpha rho``, and Feldman and Zrnic (2021, Theorem 3.1: a Renyi filter)
give ``(alpha, alpha rho)``-RDP at every order: the stage is ``rho``-zCDP, one charge of
``rho`` in the ledger, reserved before the first round (AIM's own argument, its Theorem 1).

**Rounds.** The number of rounds depends on the released tables (annealing) and is at most
about ``rounds`` (each round costs at least ``rho / rounds``) and at most :data:`MAX_ROUNDS`
(public): that round spends all that is left, as a last round does. It changes the time,
never the privacy. A round in which no pair fits the cap measures nothing and its rho is left
unused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import privgraph.heartbeat as heartbeat
from privgraph.data import Domain
from privgraph.mrf.cgm import cgm_em, clear_inference_cache, expected_tables
from privgraph.mrf.noisy_tables import NoisyMarginals, coarsen, estimate_records
from privgraph.privacy import Charge, Neighbours, NoiseSampler, exponential_mechanism
from privgraph.privacy.neighbours import histogram_l2_sensitivity
from privgraph.privacy.zcdp import zcdp_charge, zcdp_gaussian_scale, zcdp_gaussian_vector
from privgraph.release.model_size import fits
from privgraph.release.pair_scores import ABS_NORMAL, model_pair_tables, pair_score_sensitivity, proportions
from privgraph.timecap import check_time

#: AIM's split of a round's rho: this share measures, the rest selects.
MEASURE_SHARE = 0.9

#: Whether each round's refit also fits the new pair's own table to its noise
#: (``cgm_em(focus=...)``) when the rounds offer no table in bins (with bins it always does:
#: :func:`adaptive_rounds`). Off: the warm start already meets the stopping rule of all the
#: tables together, so EM often stops at once, the model does not move, and the round
#: anneals. Measured on the six real tables at epsilon 0.3, 1 and 3, three seeds
#: (benchmarks/results/release_real_tables_focus.jsonl against release_real_tables.jsonl):
#: gss better at 1 and 3 (2-way 0.0187 -> 0.0170, 0.0137 -> 0.0119), anes at 3, mpls, fair,
#: child and alarm worse (anes 3-way 0.116 -> 0.132), the mean change over the 18 cells under
#: 1%, at 2 to 5 times the CPU (cces16 at 3: 90 s, MST's 95). So it stays off where no table in
#: bins is offered; the choice is the product's, not the data's (public). Where the rounds offer
#: tables in bins they refit focused: measured with bins on the benchmark's seeds
#: (benchmarks/results/release_real_tables.jsonl against release_real_tables_unfocused_bins.jsonl),
#: focus lowered gss's TVD at every epsilon and anes's at 0.3 and 1 (a binned table has few
#: cells, so the residual of all the tables together hardly notices it and an unfocused refit
#: left it unfitted).
ROUND_FOCUS = False

#: The most rounds the stage runs; the last spends all that is left (public, as AIM's 16 d
#: rounds are). Without annealing (much signal: epsilon 10 on 1e6 rows of a 30-column table)
#: the rounds ran to AIM's 16 d, 480 refits of a model of up to 200,000 cells (over 30 CPU
#: minutes, a trial); the real tables of the benchmark ran at most 55 rounds at seed 0 and drew
#: the same rows as before the cap (benchmarks/results/release_real_rounds.jsonl; 63 rounds at
#: seed 2 of cces16 at epsilon 3, a trial).
MAX_ROUNDS = 64

#: An ordered column with more codes than this is also offered to the rounds in at most
#: :data:`COARSE_BINS` bins, paired with every other column whose pair has at most
#: :data:`COARSE_MAX_CLIQUE` cells (the model's clique stays the pair's codes, so a wider one
#: would fill the junction tree's cap). Settled on gss at epsilon 1, tuning seeds 100 to 104
#: (not the benchmark's; benchmarks/results/release_bins_ablation.jsonl, 2-way / 3-way TVD
#: means): these values 0.0162 / 0.0443; no bins 0.0186 / 0.0493; bins on every pair
#: 0.0168 / 0.0464; pairs up to 600 cells 0.0161 / 0.0443; 4 bins 0.0169 / 0.0452; 12 bins
#: 0.0165 / 0.0444. On anes at epsilon 1, whose wide pairs (thermometers, ages) have up to
#: 9,108 cells, bins on every pair are worse too: 0.0670 / 0.1503 against 0.0646 / 0.1421 over
#: seeds 100-101 (benchmarks/results/release_tuning_after_bins.jsonl).
COARSE_ABOVE = 12
COARSE_BINS = 8
COARSE_MAX_CLIQUE = 1000


@dataclass(frozen=True)
class AdaptivePlan:
    """The adaptive stage's public plan: its total ``rho`` (zCDP), the ``rounds`` its first
    price assumes, and the relation. ``charge(delta)`` is its one ledger entry."""

    rho: float
    rounds: int
    neighbours: Neighbours

    def charge(self, delta: float) -> Charge:
        """The stage's one charge: ``rho``-zCDP whatever the rounds (module docstring).

        >>> AdaptivePlan(0.01, 32, Neighbours.ADD_REMOVE).charge(1e-9).curve
        ZCDPCurve(rho=0.01)
        """
        return zcdp_charge("adaptive rounds (zCDP filter)", self.rho, delta, self.neighbours,
                           sensitivity=histogram_l2_sensitivity(self.neighbours),
                           note=f"AIM's rounds after the tree: rho {self.rho:.6g} in all, first priced as "
                                f"{self.rounds} rounds")


@dataclass(frozen=True)
class AdaptiveRounds:
    """What the adaptive stage did (released facts, for the report): the tables measured in
    order, pairs and triples (:func:`~privgraph.release.model_size.workload_triples`; one
    measured again appears again; the field keeps its name ``pairs``), the rounds run, how many
    annealed, and the rho they spent together."""

    pairs: tuple[tuple[str, ...], ...]
    rounds: int
    annealed: int
    spent: float = 0.0  # the rounds' rhos added up: the stage's rho (the filter spends it all)
    #: each measured pair's bins (per column None or each code's bin; :func:`candidates`), None at full resolution
    bins: tuple = ()
    #: the model of the last round's refit, fitted to the tables the stage returns (post-processing): the
    #: fits after the rounds start from it (:mod:`privgraph.release.tree`) instead of refitting from nothing
    model: object = field(default=None, compare=False, repr=False)


def round_price(rho: float, rounds: int) -> tuple[float, float]:
    """(measurement rho, selection epsilon) of one round priced at ``rho / rounds``.

    >>> m, e = round_price(0.1, 10)
    >>> round(m, 4), round(e**2 / 8, 4)
    (0.009, 0.001)
    """
    each = rho / rounds
    return MEASURE_SHARE * each, math.sqrt(8 * (1 - MEASURE_SHARE) * each)


def adaptive_rounds(tables: NoisyMarginals, counted: dict, plan: AdaptivePlan, *, delta: float,
                    sampler: NoiseSampler, rng: np.random.Generator, tree_cap: int,
                    records: float | None, ordered=()) -> tuple[NoisyMarginals, "AdaptiveRounds"]:
    """The adaptive stage on the tree's ``tables`` (one-way and pair tables, Gaussian), the true
    pair ``counted`` tables (over the same codes) and its ``plan``: (every table released so
    far, joined for the fit; what the rounds did, :class:`AdaptiveRounds`). ``records``: the public
    n under replace-one, None under add/remove (estimated from the tables). ``ordered``: the
    columns whose codes follow an order (public; :func:`candidates`). The caller
    reserved ``plan.charge(delta)`` before this runs; no charge is made here."""
    domain = tables.domain
    measured = _Measured(tables, records)
    pairs = list(counted)
    offered = candidates(domain, pairs, _one_way_proportions(tables), ordered)
    focused = ROUND_FOCUS or any(b is not None for _, b in offered)  # public: the domain and released tables
    true = [coarsen(counted[p], b) for p, b in offered]  # the counts each candidate would measure
    score_sensitivity = pair_score_sensitivity(plan.neighbours)
    l2 = histogram_l2_sensitivity(plan.neighbours)
    left = plan.rho
    rho_m, eps = round_price(plan.rho, plan.rounds)
    model = cgm_em(measured.noisy(), max_cells=tree_cap)
    chosen: list[tuple[str, str]] = []
    round_no = annealed = 0
    spent = 0.0
    while left > 0:
        round_no += 1
        check_time(f"the adaptive round {round_no}")
        heartbeat.at(heartbeat.of(round_no, MAX_ROUNDS, "the adaptive round", at_most=True))
        if left < 2 * (rho_m + eps**2 / 8) or round_no >= MAX_ROUNDS:  # the last round spends what is left
            last = left * (1 - 1e-12)  # less rounding's 1e-12
            rho_m, eps = MEASURE_SHARE * last, math.sqrt(8 * (1 - MEASURE_SHARE) * last)
            left = 0.0
        else:
            left -= rho_m + eps**2 / 8
        spent += rho_m + eps**2 / 8
        fine = model_pair_tables(model, pairs, rng, tree_cap=tree_cap)
        predicted = [coarsen(fine[p], b) for p, b in offered]
        n = measured.records()
        sigma = [zcdp_gaussian_scale(rho_m, l2, t.size)[0] for t in true]
        scores = np.array([np.abs(t - n * q).sum() - ABS_NORMAL * s * t.size
                           for t, q, s in zip(true, predicted, sigma)])
        cliques = measured.cliques()
        pick, _ = exponential_mechanism(scores, epsilon=eps, sensitivity=score_sensitivity, neighbours=plan.neighbours,
                                        sampler=sampler, admissible=lambda i: _fits(domain, cliques, offered[i][0], tree_cap))
        if pick is None:
            continue
        key = offered[pick]
        noisy, _ = zcdp_gaussian_vector(true[pick], rho=rho_m, delta=delta, sensitivity=l2,
                                        neighbours=plan.neighbours, sampler=sampler)
        measured.add(key, noisy.reshape(true[pick].shape), sigma[pick])
        chosen.append(key)
        noisy_now = measured.noisy()
        group = measured.group(key)
        clear_inference_cache()  # a new structure each round: the last one's inference is not needed again
        focus = {"focus": group} if focused else {}
        model = cgm_em(noisy_now, max_cells=tree_cap, start=measured.start(model), **focus)
        # the refitted model's table of the candidate, N times (the fit's own cached inference structure)
        after = expected_tables(noisy_now, list(model.potentials), tree_cap)[group]
        if np.abs(after - noisy_now.records * predicted[pick]).sum() <= ABS_NORMAL * sigma[pick] * after.size:
            rho_m, eps = 4 * rho_m, 2 * eps  # annealing: sigma halves
            annealed += 1
    return measured.noisy(), AdaptiveRounds(tuple(p for p, _ in chosen), round_no, annealed, spent,
                                            tuple(b for _, b in chosen), model)


def candidates(domain: Domain, pairs, one_way: dict, ordered) -> list[tuple[tuple[str, str], tuple | None]]:
    """What a round may measure: every pair (and triple) at full resolution (bins None) and, where a pair
    of at most :data:`COARSE_MAX_CLIQUE` cells has an ``ordered`` column of more than
    :data:`COARSE_ABOVE` codes, the same pair with such columns in bins (:func:`mass_bins`;
    the other column kept, None). A coarsened table has
    fewer cells, so less noise in all, and the rounds can measure how a wide column (ages,
    years) goes with another where its full table is too noisy to pay. The bins come from
    the released one-way ``proportions`` (post-processing) and the public domain
    (``ordered``: the original codebook's ordered columns, whose merged rare levels are one
    code after the rest, :mod:`privgraph.release.levels`).

    >>> d = Domain.of(a=20, b=2)
    >>> [(p, b if b is None else tuple(len(set(c)) if c else None for c in b))
    ...  for p, b in candidates(d, [("a", "b")], {"a": np.full(20, 0.05), "b": np.full(2, 0.5)}, {"a"})]
    [(('a', 'b'), None), (('a', 'b'), (8, None))]
    """
    wide = {v: mass_bins(one_way[v], COARSE_BINS) for v in domain.names
            if domain.size_of(v) > COARSE_ABOVE and v in ordered}
    out = []
    for pair in pairs:
        out.append((pair, None))
        if len(pair) == 2 and any(v in wide for v in pair) and domain.cells(pair) <= COARSE_MAX_CLIQUE:
            out.append((pair, tuple(wide.get(v) for v in pair)))
    return out


def mass_bins(proportions: np.ndarray, k: int) -> tuple[int, ...]:
    """Each code's bin among at most ``k`` runs of consecutive codes of about equal mass:
    a code goes to the bin of its mass's midpoint on the cumulative scale (bins numbered
    from 0 without gaps).

    >>> mass_bins(np.full(8, 1 / 8), 4)
    (0, 0, 1, 1, 2, 2, 3, 3)
    >>> mass_bins(np.array([0.7, 0.1, 0.1, 0.1]), 3)
    (0, 1, 1, 1)
    """
    p = np.asarray(proportions, dtype=float)
    middle = np.cumsum(p) - p / 2
    raw = np.minimum((middle * k).astype(int), k - 1)
    return tuple(int(b) for b in np.unique(raw, return_inverse=True)[1])


def _one_way_proportions(tables: NoisyMarginals) -> dict:
    """Each column's released one-way table as proportions (post-processing)."""
    return {c[0]: proportions(tables.tables[g]) for c, g in zip(tables.cliques, tables.ties) if len(c) == 1}


def _fits(domain: Domain, cliques, pair, tree_cap: int) -> bool:
    """A measured pair is always admissible (the model already holds it); a new one if the
    junction tree stays within the cap (public)."""
    return pair in cliques or fits(domain, cliques, pair, tree_cap)


class _Measured:
    """The tables released so far, one per (clique, bins) (measured again: its tables
    combined by inverse variance, post-processing), and their noise scales."""

    def __init__(self, tables: NoisyMarginals, records: float | None):
        self.domain, self.public_records, self.unit = tables.domain, records, tables.unit
        self.tables: dict = {}  # keys only ever appended: a key measured again keeps its place
        for clique, g in zip(tables.cliques, tables.ties):  # a clique released twice: combined
            self.add((clique, tables.group_bins(g)), np.asarray(tables.tables[g], dtype=float), tables.group_scales[g])

    def add(self, key, table: np.ndarray, sigma: float) -> None:
        if key in self.tables:
            old, s = self.tables[key]
            w_old, w_new = 1 / s**2, 1 / sigma**2
            table, sigma = (w_old * old + w_new * table) / (w_old + w_new), (w_old + w_new) ** -0.5
        self.tables[key] = (table, sigma)

    def group(self, key) -> int:
        return list(self.tables).index(key)

    def cliques(self) -> list:
        """The model's cliques (a clique measured fine and coarsened: once)."""
        return list(dict.fromkeys(c for c, _ in self.tables))

    def records(self) -> float:
        if self.public_records is not None:
            return float(self.public_records)
        return estimate_records([t for t, _ in self.tables.values()], [s for _, s in self.tables.values()])

    def noisy(self) -> NoisyMarginals:
        """Every table so far, for a fit (its groups in :attr:`tables`' order)."""
        cliques = tuple(c for c, _ in self.tables)
        bins = tuple(b for _, b in self.tables)
        scales = tuple(float(s) for _, s in self.tables.values())
        return NoisyMarginals(self.domain, cliques, tuple(range(len(cliques))),
                              tuple(t for t, _ in self.tables.values()), "gaussian", max(scales), self.records(),
                              self.unit, scales if len(set(scales)) > 1 else None,
                              None if all(b is None for b in bins) else bins)

    def start(self, model) -> list[np.ndarray]:
        """The last fit's log-potentials for the groups it had, zeros for a new one (keys are
        only appended, so its groups are the first ``len(model.potentials)`` keys)."""
        held = dict(zip(self.tables, model.potentials))
        return [held.get(k, np.zeros(self.domain.project(k[0]).shape)) for k in self.tables]


__all__ = ["COARSE_ABOVE", "COARSE_BINS", "MAX_ROUNDS", "MEASURE_SHARE", "AdaptivePlan", "AdaptiveRounds", "adaptive_rounds",
           "candidates", "mass_bins", "round_price"]
