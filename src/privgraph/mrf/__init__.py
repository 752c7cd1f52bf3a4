"""Private undirected graphical models (Markov random fields) from noisy clique marginals.

See ``docs/mrf.md`` for what each estimator guarantees. Public names::

    from privgraph.mrf import (PrivateMRF, MarkovRandomField, Factor, infer, sample_model,
        fit_mle, release_tables, NoisyMarginals, cgm_em, naive_mle, psgd,
        nonprivate_mle, random_estimator, kl_divergence, log_likelihood,
        third_order_chain, erdos_renyi, individual_tables, time_homogeneous_chain)
"""

from privgraph.mrf.baselines import naive_mle, nonprivate_mle, random_estimator
from privgraph.mrf.cgm import cgm_em
from privgraph.mrf.estimator import PrivateMRF
from privgraph.mrf.evaluation import kl_divergence, log_likelihood
from privgraph.mrf.factor import Factor
from privgraph.mrf.fit import fit_mle
from privgraph.mrf.individuals import individual_tables, time_homogeneous_chain
from privgraph.mrf.inference import Beliefs, infer
from privgraph.mrf.model import MarkovRandomField, parse_cliques
from privgraph.mrf.psgd import psgd
from privgraph.mrf.noisy_tables import NoisyMarginals, release_tables
from privgraph.mrf.sampling import gibbs_sample, sample_model
from privgraph.mrf.synthetic import erdos_renyi, third_order_chain

__all__ = [
    "Beliefs",
    "Factor",
    "MarkovRandomField",
    "NoisyMarginals",
    "PrivateMRF",
    "cgm_em",
    "erdos_renyi",
    "fit_mle",
    "gibbs_sample",
    "individual_tables",
    "infer",
    "kl_divergence",
    "log_likelihood",
    "naive_mle",
    "nonprivate_mle",
    "parse_cliques",
    "psgd",
    "random_estimator",
    "release_tables",
    "sample_model",
    "third_order_chain",
    "time_homogeneous_chain",
]
