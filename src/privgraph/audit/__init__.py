"""Built-in privacy audits: statistical lower bounds on the epsilon of a mechanism.

Public names::

    from privgraph.audit import (audit, AuditResult, Event, threshold_events, value_events,
        low_bit_events, orthant_events, given_events, clopper_pearson, epsilon_lower_bound,
        AuditCase, correct_cases, all_cases, find_cases)

The end-to-end cases (whole estimators) are in :mod:`privgraph.audit.estimators`.

An audit shows that a mechanism leaks *at least* the epsilon it reports (with probability
1 - alpha); it never proves that a mechanism is private. The planted bugs it must catch
are in :mod:`privgraph.audit.broken` (not imported here; never use them for data).
"""

from privgraph.audit.auditor import (
    AuditResult,
    Event,
    audit,
    clopper_pearson,
    epsilon_lower_bound,
    given_events,
    low_bit_events,
    orthant_events,
    threshold_events,
    value_events,
)
from privgraph.audit.cases import AuditCase, all_cases, correct_cases, find_cases

__all__ = [
    "AuditCase",
    "AuditResult",
    "Event",
    "all_cases",
    "audit",
    "clopper_pearson",
    "correct_cases",
    "epsilon_lower_bound",
    "find_cases",
    "given_events",
    "low_bit_events",
    "orthant_events",
    "threshold_events",
    "value_events",
]
