"""A batch of tables given as their nonempty strata gets the verdicts of ``decide``, table by table."""

import numpy as np
import pytest

from privgraph.data.rowsets import nonempty_strata
from privgraph.stats import ChiSquareTest, CITest, GTest, KendallTest, SpearmanTest

TESTS = [GTest(), GTest(degenerate="independent"), ChiSquareTest(), ChiSquareTest(degenerate="independent"),
         KendallTest(), KendallTest(degenerate="independent"), SpearmanTest(), SpearmanTest(degenerate="independent"),
         KendallTest(tie_corrected=True), KendallTest(tie_corrected=True, tie_floor=0.3),
         KendallTest(tie_corrected=True, degenerate="independent")]


def random_tables(rng, count=60):
    """Tables (3, 2, strata) from independent to strongly dependent, sparse to dense,
    including degenerate ones (x constant, strata of 1-2 rows)."""
    tables = []
    for i in range(count):
        k = int(rng.integers(1, 6))
        n = int(rng.choice([4, 12, 60, 400]))
        p = rng.dirichlet(np.full(3 * 2 * k, 0.3 if i % 3 else 3.0))
        t = rng.multinomial(n, p).reshape(3, 2, k)
        if i % 7 == 0:
            t[1:] = 0  # x takes one value: no information
        tables.append(t)
    return tables


@pytest.mark.parametrize("test", TESTS, ids=lambda t: f"{t.name}-{t.degenerate}")
def test_decide_strata_equals_decide(test):
    tables = random_tables(np.random.default_rng(0))
    strata, owner = nonempty_strata(tables)
    got = test.decide_strata(strata, owner, len(tables), 0.05)
    want = [test.decide(t, 0.05).is_independent for t in tables]
    assert got.tolist() == want
    assert CITest.decide_strata(test, strata, owner, len(tables), 0.05).tolist() == want  # the generic path
    assert 3 < sum(want) < len(want) - 3  # both verdicts occur
