"""The "no data-dependent refusal" audit: every command behaves alike on neighbouring files."""

import pytest

from privgraph.cli.refusals import RefusalCase, _discover, _replaced, refusal_cases, run_case


@pytest.mark.parametrize("case", refusal_cases(), ids=lambda c: c.name)
def test_every_command_behaves_alike_on_both_neighbours(case):
    result = run_case(case)
    assert result.same, f"{case.name}: {result.left} vs {result.right}"


def test_the_audit_catches_a_data_dependent_refusal():
    """--infer-domain reads the levels from the data: one record makes a column constant and
    the run refuses. The audit must see the difference (so it is not a test that cannot fail)."""
    case = RefusalCase("planted", "discover", "replace-one", "inferred domain", _replaced("c", "x"),
                       lambda data, out: [a for a in _discover()(data, out) if a != "--domain" and
                                          not a.endswith("domain.json")] + ["--infer-domain"])
    result = run_case(case)
    assert not result.same and "exit 0" in result.left and "one value only" in result.right
