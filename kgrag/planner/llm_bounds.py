"""Tighter bounds for plans written by an LLM than the plan model's own (which rule plans and
the operator's Python API may use): a model-written plan is untrusted input that can ask for
large answers and wide graph walks. Each step over a bound is clamped to it and its trace says
so; the full-text query of a ``chunks_fulltext`` graph query is rewritten by
:func:`kgrag.planner.rule.fulltext_query`, the one function rule plans use, so no Lucene or
RediSearch operator the model wrote reaches the index."""

from __future__ import annotations

from typing import Any

from kgrag.planner.models import (
    GraphQueryStep,
    LlmCallStep,
    MultiHopStep,
    Plan,
    Step,
)
from kgrag.planner.rule import fulltext_query

__all__ = [
    "FULLTEXT_TEMPLATE",
    "LLM_PLAN_MAX_HOPS",
    "LLM_PLAN_MAX_NODES",
    "LLM_PLAN_MAX_TOKENS",
    "bound_llm_plan",
]

#: ``llm_call`` max_tokens in an LLM plan (the model allows 32,768): a step's answer over its
#: evidence; the agent's own answer is not a plan step.
LLM_PLAN_MAX_TOKENS = 1024
#: ``multi_hop`` hops in an LLM plan (the model allows 3; the rule plan walks 2).
LLM_PLAN_MAX_HOPS = 2
#: ``multi_hop`` max_nodes in an LLM plan (the model allows 100,000; the default is 2,000).
LLM_PLAN_MAX_NODES = 5000
#: The graph_query template whose ``query`` parameter is a full-text query.
FULLTEXT_TEMPLATE = "chunks_fulltext"


def _bounded(step: Step) -> tuple[dict[str, Any], list[str]]:
    """The parameter updates that bring ``step`` within the bounds, and why."""
    p: Any = step.parameters
    updates: dict[str, Any] = {}
    notes: list[str] = []
    if isinstance(step, LlmCallStep) and p.max_tokens > LLM_PLAN_MAX_TOKENS:
        updates["max_tokens"] = LLM_PLAN_MAX_TOKENS
        notes.append(f"max_tokens {p.max_tokens} clamped to {LLM_PLAN_MAX_TOKENS}")
    if isinstance(step, MultiHopStep):
        if p.hops > LLM_PLAN_MAX_HOPS:
            updates["hops"] = LLM_PLAN_MAX_HOPS
            notes.append(f"hops {p.hops} clamped to {LLM_PLAN_MAX_HOPS}")
        if p.max_nodes > LLM_PLAN_MAX_NODES:
            updates["max_nodes"] = LLM_PLAN_MAX_NODES
            notes.append(f"max_nodes {p.max_nodes} clamped to {LLM_PLAN_MAX_NODES}")
    if isinstance(step, GraphQueryStep) and p.template == FULLTEXT_TEMPLATE and "query" in p.params:
        raw = p.params["query"]
        safe = fulltext_query(raw if isinstance(raw, str) else str(raw))
        if safe != raw:
            updates["params"] = {**p.params, "query": safe}
            notes.append(f"full-text query {str(raw)[:80]!r} rewritten as {safe!r}")
    return updates, notes


def bound_llm_plan(plan: Plan) -> Plan:
    """``plan`` (written by an LLM, already validated) with every step within the LLM bounds;
    a changed step's trace explanation ends with what was changed and why."""
    steps = []
    for step in plan.plan:
        updates, notes = _bounded(step)
        if updates:
            why = f"{step.trace.explanation} [LLM plan bounds: {'; '.join(notes)}]".strip()
            step = step.model_copy(
                update={
                    "parameters": step.parameters.model_copy(update=updates),
                    "trace": step.trace.model_copy(update={"explanation": why}),
                }
            )
        steps.append(step)
    return plan.model_copy(update={"plan": tuple(steps)})
