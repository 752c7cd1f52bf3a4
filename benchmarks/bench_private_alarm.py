"""Priv-PC against Gauss-PC on alarm at 1e6 rows, epsilon 1 (issue 13's accuracy goal).

    python3 benchmarks/bench_private_alarm.py          # about 1 CPU-minute

1e6 rows forward-sampled from alarm (rng 0); Kendall's test (``ci_test="auto"``), delta
1e-6; skeleton F1 against the network and CPU seconds per fit, noise seeds 0 and 1 (seeded
noise: an experiment, not a private release).
"""

import time
import warnings

import numpy as np

from privgraph.causal import PrivPC
from privgraph.data import NumpyEngine
from privgraph.datasets import load_network, sample


def main() -> None:
    warnings.simplefilter("ignore")  # the seeded-noise warning, once per fit
    net = load_network("alarm")
    codes = sample(net, 1_000_000, np.random.default_rng(0))
    truth = {frozenset(e) for e in net.edges}
    for method in ("priv-pc", "gauss-pc"):
        for seed in (0, 1):
            t0 = time.process_time()
            est = PrivPC(epsilon=1.0, delta=1e-6, method=method, random_state=seed).fit(NumpyEngine(net.domain, codes))
            found = {frozenset(e) for e in est.skeleton_.edges}
            f1 = 2 * len(truth & found) / (len(truth) + len(found))
            print(f"{method} seed {seed}: F1 {f1:.3f}, {time.process_time() - t0:.1f} CPU s", flush=True)


if __name__ == "__main__":
    main()
