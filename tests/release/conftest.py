"""Shared by the release's tests: seeded noise warns (quietened here) and a sample of asia."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from privgraph.datasets import load_network, sample_frame


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.fixture
def asia():
    """``asia(n=20_000, seed=0) -> (network, labelled frame)``."""

    def sample(n: int = 20_000, seed: int = 0):
        net = load_network("asia")
        return net, sample_frame(net, n, np.random.default_rng(seed), labels=True)

    return sample
