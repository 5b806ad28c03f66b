"""The types every layer shares, and nothing else: the model bases (:class:`Frozen`,
:class:`Closed`), who is asking (:class:`AccessContext`), what a step returned (:class:`Hit`),
the stored story of an answer (:class:`Trace`) and text given as input (:data:`UnicodeText`).

This package imports nothing of kgrag but :mod:`kgrag.errors` (tests/unit/test_import_graph.py
holds it to that), so the store, the executor, the agent, the CLI and the server can all use it
without tying themselves to each other.
"""

from kgrag.core.access import (
    GROUP,
    OPERATOR,
    PUBLIC,
    USER,
    AccessContext,
    group_principal,
    user_principal,
)
from kgrag.core.frozen import Closed, Frozen
from kgrag.core.hits import Hit, HitKind
from kgrag.core.text import UnicodeText, check_text, unicode_problem
from kgrag.core.trace import (
    Decision,
    ReturnedItem,
    Trace,
    TraceAnswer,
    TraceCitation,
    TracePlan,
    TraceQuery,
    TraceStep,
)

__all__ = [
    "GROUP",
    "OPERATOR",
    "PUBLIC",
    "USER",
    "AccessContext",
    "Closed",
    "Decision",
    "Frozen",
    "Hit",
    "HitKind",
    "ReturnedItem",
    "Trace",
    "TraceAnswer",
    "TraceCitation",
    "TracePlan",
    "TraceQuery",
    "TraceStep",
    "UnicodeText",
    "check_text",
    "group_principal",
    "unicode_problem",
    "user_principal",
]
