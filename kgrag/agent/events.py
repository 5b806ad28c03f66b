"""Typed events of one question, in the order they happen: ``rewrite`` (a follow-up resolved
with the session's history), then per iteration ``plan``, one ``step`` per plan step and
``evaluation``; finally ``answer`` and ``complete``. ``KnowledgeAgent.stream`` yields them; the
HTTP server sends them as server-sent events (``event.model_dump_json()``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from kgrag.agent.answer import Answer
from kgrag.core import Frozen, Hit
from kgrag.planner.models import Plan


class _Event(Frozen):
    query_id: str


class RewriteEvent(_Event):
    """A follow-up question was rewritten into a standalone one (or is a reformat request)."""

    kind: Literal["rewrite"] = "rewrite"
    original: str
    rewritten: str
    reformat: bool
    method: Literal["llm", "carry_entities", "none"]


class PlanEvent(_Event):
    kind: Literal["plan"] = "plan"
    iteration: int
    query: str
    source: str
    plan: Plan
    fallback_reason: str | None = None


class StepEvent(_Event):
    """One step finished (or was skipped); ``step_id`` is the id inside this iteration's plan."""

    kind: Literal["step"] = "step"
    iteration: int
    step_id: int
    type: str
    modality: str
    status: str
    count: int
    duration_ms: float
    error: str | None = None
    top: tuple[Hit, ...] = ()


class EvaluationEvent(_Event):
    kind: Literal["evaluation"] = "evaluation"
    iteration: int
    decision: Literal["SATISFIED", "REFINE", "EXPAND", "FILTER"]
    reason: str
    next_query: str | None = None
    coverage: float
    judge: Literal["llm", "offline"]


class AnswerEvent(_Event):
    kind: Literal["answer"] = "answer"
    answer: Answer


class CompleteEvent(_Event):
    kind: Literal["complete"] = "complete"
    exit_reason: str
    iterations: int
    cost: float
    latency_ms: float


AgentEvent = Annotated[
    RewriteEvent | PlanEvent | StepEvent | EvaluationEvent | AnswerEvent | CompleteEvent,
    Field(discriminator="kind"),
]
