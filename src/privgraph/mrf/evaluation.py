"""How good is a learned model: exact KL(true || learned) and held-out log-likelihood.

``KL(p || q) = E_p[sum_C theta^p_C] - A_p - E_p[sum_C theta^q_C] + A_q``. The expectations
need ``p``'s marginals on the cliques of both models: by enumeration of the joint for small
domains, otherwise through one junction tree built over the union of both clique lists.
"""

from __future__ import annotations

import numpy as np

from privgraph.mrf.inference import infer, infer_potentials, log_joint
from privgraph.mrf.model import MarkovRandomField
from privgraph.validation import InvalidInput

#: Largest joint table (cells) that KL enumerates instead of using a junction tree.
MAX_ENUMERATED_CELLS = 1 << 20


def kl_divergence(true: MarkovRandomField, learned: MarkovRandomField) -> float:
    """Exact ``KL(true || learned)`` in nats (the two models must share a domain).

    Examples
    --------
    >>> from privgraph.data.domain import Domain
    >>> d = Domain.of(a=2, b=2)
    >>> p = MarkovRandomField.of(d, ["a,b"], [np.log([[0.5, 0.5], [0.5, 0.5]])])
    >>> q = MarkovRandomField.of(d, ["a"], [np.log([0.25, 0.75])])
    >>> bool(abs(kl_divergence(p, q) - (0.5 * np.log(2) + 0.5 * np.log(2 / 3))) < 1e-12)
    True
    """
    if true.domain != learned.domain:
        raise InvalidInput(
            f"models have different domains: {true.domain.as_dict()} and {learned.domain.as_dict()}"
        )
    if true.domain.cells() <= MAX_ENUMERATED_CELLS:
        lp, lq = log_joint(true), log_joint(learned)
        p = np.exp(lp)
        return float(np.sum(np.where(p > 0, p * (lp - lq), 0.0)))
    cliques = true.cliques + learned.cliques
    zeros = [np.zeros(f.values.shape) for f in learned.factors]
    joint = infer_potentials(true.domain, cliques, list(true.potentials) + zeros, max_cells=1 << 62)
    k = len(true.factors)
    e_p = sum(float(np.sum(m * t)) for m, t in zip(joint.marginals[:k], true.potentials))
    e_q = sum(float(np.sum(m * t)) for m, t in zip(joint.marginals[k:], learned.potentials))
    return e_p - joint.log_partition - e_q + infer(learned, max_cells=1 << 62).log_partition


def log_likelihood(model: MarkovRandomField, codes: np.ndarray) -> float:
    """Mean log-probability per record of integer-coded records (columns in domain order).

    This is the held-out log-likelihood ``E_q[log p(x)]`` of the text, ``q`` the empirical
    distribution of ``codes``.

    >>> from privgraph.data.domain import Domain
    >>> m = MarkovRandomField.of(Domain.of(a=2, b=2), ["a,b"])
    >>> bool(abs(log_likelihood(m, np.array([[0, 1], [1, 1]])) + np.log(4)) < 1e-12)
    True
    """
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[1] != len(model.domain.names):
        raise InvalidInput(
            f"codes must have shape (n, {len(model.domain.names)}) for columns "
            f"{list(model.domain.names)}, got {codes.shape}"
        )
    return float(np.mean(model.log_unnormalised(codes))) - infer(model, max_cells=1 << 62).log_partition


