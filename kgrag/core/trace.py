"""The stored story of one answer, as the store gives it back: the query (with the judge's
decision per iteration), the plan, every step with its Cypher and what it returned, and the
answer with its citations. Read by :func:`kgrag.executor.trace.read_trace` (as a given reader
may see it now); shown by ``kgrag trace``, the trace viewer and the audit report; sent as JSON
(:meth:`Trace.to_json`) by ``kgrag trace --json``, ``GET /trace/{query_id}`` and MCP."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from kgrag.core.frozen import Frozen

__all__ = [
    "Decision",
    "ReturnedItem",
    "Trace",
    "TraceAnswer",
    "TraceCitation",
    "TracePlan",
    "TraceQuery",
    "TraceStep",
]


class Decision(Frozen):
    """What the evaluate/refine loop decided after one iteration, and what it searched next."""

    iteration: int
    query: str
    """The query this iteration searched with (the question, then the judge's next queries)."""
    decision: Literal["SATISFIED", "REFINE", "EXPAND", "FILTER"]
    reason: str
    next_query: str | None = None
    coverage: float
    judge: Literal["llm", "offline"] = "offline"


class TraceQuery(Frozen):
    id: str
    text: str | None = None
    user: str | None = None
    asked_by: str | None = None
    created_at: str | None = None
    planner: str | None = None
    exit_reason: str | None = None
    iterations: int | None = None
    latency_ms: float | None = None
    cost: float | None = None
    query_class: str | None = None
    intent: str | None = None
    decisions: tuple[Decision, ...] = ()


class TracePlan(Frozen):
    model_config = ConfigDict(populate_by_name=True)

    id: str | None = None
    source: str | None = None
    fallback_reason: str | None = None
    plan_json: dict[str, Any] | None = Field(default=None, alias="json")
    """The plan as it ran (``Plan.to_json``, decoded; hidden ids scrubbed)."""


class ReturnedItem(Frozen):
    """One node a step returned (its text cut to 200 characters)."""

    id: str
    kind: str | None = None
    rank: int | None = None
    score: float | None = None
    text: str | None = None
    section: tuple[str, ...] = ()
    """A chunk's section as the step saw it: its heading path, outermost first (``RETURNED.section``
    in the graph); left out of the JSON when empty (outside any section, or a trace written
    before traces kept it)."""
    factors: dict[str, Any] | None = None
    """A reranked hit's factor contributions (retrieval, authority, recency, source, why)."""

    @model_serializer(mode="wrap")
    def _without_absent_factors(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("factors") is None:
            data.pop("factors", None)
        if not data.get("section"):
            data.pop("section", None)
        return data


class TraceStep(Frozen):
    step_id: int
    type: str
    modality: str | None = None
    status: str
    error: str | None = None
    dependencies: tuple[int, ...] = ()
    condition: str | None = None
    cypher: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    cypher_parameters: list[Any] = Field(default_factory=list)
    duration_ms: float | None = None
    result_count: int | None = None
    hidden: int = 0
    """How many returned items the reader may not see (left out of ``returned``)."""
    explanation: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    returned: tuple[ReturnedItem, ...] = ()


class TraceCitation(Frozen):
    marker: int
    node_id: str
    label: str | None = None
    section: tuple[str, ...] = ()
    """A cited chunk's heading path (``CITES.section`` in the graph); empty outside any section."""


class TraceAnswer(Frozen):
    text: str | None = None
    """None when the answer cites a document the reader may not read (``hidden`` > 0)."""
    groundedness: float | None = None
    verdict: str | None = None
    mode: str | None = None
    citations: tuple[TraceCitation, ...] = ()
    hidden: int = 0


class Trace(Frozen):
    query: TraceQuery
    plan: TracePlan
    steps: tuple[TraceStep, ...] = ()
    answer: TraceAnswer

    def to_json(self) -> dict[str, Any]:
        """The JSON shape (``kgrag trace --json``, the HTTP API): plain dicts and lists."""
        return self.model_dump(mode="json", by_alias=True)
