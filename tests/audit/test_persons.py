"""End-to-end audits with the person as the unit (privgraph.audit.persons): neighbours that
differ by one person's k rows, by k + 3 rows (truncated to k), and a person's history replaced."""

import numpy as np
import pytest

from privgraph.audit import find_cases
from privgraph.audit.persons import K, broken_person_cases, person_cases
from privgraph.privacy import SeededSampler

ALPHA = 1e-6
CASES = {c.name: c for c in person_cases()}

# Each person case's audit at its quick size (1,000 runs for the MRF cases, which are tight: 0.5-0.7
# of the claim; 100 for the others, which run the truncation and the conversion behind an add/remove
# fit that sees little, as priv_pc_rows does) is tests/audit/test_cli.py's quick audit, with each
# case's least share of its claim; running them here again at 3,000 / 300 runs cost the slow run
# about 390 s on a loaded 2-core machine.
NAMES = ("mrf_person_k", "mrf_person_more", "mrf_person_replace",
         *(f"{e}_person_{kind}" for e in ("pc", "anm", "release") for kind in ("k", "more", "replace")))


def test_every_person_case_is_registered_and_tested():
    assert sorted(CASES) == sorted(NAMES)
    assert {c.name for c in find_cases(None, group="persons")} == set(CASES)
    assert all(c.group == "persons" and not c.is_broken for c in CASES.values())
    assert {c.neighbours.value for c in CASES.values()} == {"add_remove", "replace_one"}


@pytest.mark.parametrize("estimator", ["mrf", "pc", "anm", "release"])
def test_rows_beyond_k_change_nothing(estimator):
    """The same seeded run on a person with k rows and with k + 3 identical ones: the truncation
    keeps k of them, so every released value is the same (not a statistical test)."""
    k, more = CASES[f"{estimator}_person_k"], CASES[f"{estimator}_person_more"]
    assert len(more.right) == len(k.right) + 3 and more.left.equals(k.left)
    np.testing.assert_array_equal(k.run(k.right, 3, SeededSampler(2)), more.run(more.right, 3, SeededSampler(2)))


@pytest.mark.slow
def test_a_truncation_that_keeps_every_row_is_caught():
    (case,) = broken_person_cases()
    result = case.audit(seed=0, alpha=ALPHA, runs=3_000)
    assert result.epsilon_bound > case.epsilon, result  # k + 3 rows counted where k were claimed
    assert K == 3
