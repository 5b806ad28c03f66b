"""The LLM planner: an OpenAI-compatible chat model writes the plan, as structured output in the
same JSON Schema the rule planner's plans follow.

The prompt gives the model every step type with its parameters (generated from the plan
model: :mod:`kgrag.planner.step_catalog`), the plan's JSON Schema, the Cypher templates it may
name (with their parameters), the tools it may call, the query analysis and, as a baseline, the
plan the rule planner would run. The answer is parsed with :meth:`Plan.parse` and checked with
:func:`~kgrag.planner.validate.validate_plan` (acyclic, dependencies exist, templates and tools
exist). Anything wrong (HTTP failure, budget spent, bad JSON, a schema violation, a cycle, an
unknown template or a label outside the allow-list) falls back to the rule planner, and
:class:`PlanResult` says why, for the trace.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import cache
from typing import Any, Literal

from kgrag.core import Frozen
from kgrag.errors import KgragError, PlanError
from kgrag.graph import cypher
from kgrag.llm import LLM, ChatMessage, Usage
from kgrag.llm.prompts import render_prompt
from kgrag.planner.analysis import QueryAnalysis
from kgrag.planner.llm_bounds import bound_llm_plan
from kgrag.planner.models import MAX_PLAN_STEPS, Plan, VectorSearchStep, plan_json_schema
from kgrag.planner.params import DOCUMENT_STEP_TYPES
from kgrag.planner.step_catalog import describe_step_types
from kgrag.planner.validate import validate_plan

__all__ = [
    "PlanResult",
    "TemplateInfo",
    "available_templates",
    "llm_plan",
    "plan_messages",
    "plan_question",
]

logger = logging.getLogger(__name__)

#: Template parameters the executor fills itself (never the planner's to set).
_EXECUTOR_PARAMS = frozenset({"k", "admin", "principals"})
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_MAX_REASON = 500


class TemplateInfo(Frozen):
    """A Cypher template a ``graph_query`` step may name."""

    name: str
    description: str
    parameters: tuple[str, ...]


class PlanResult(Frozen):
    """The plan to run, who made it, and why the LLM's plan was not used (when it was not)."""

    plan: Plan
    source: Literal["llm", "rule"]
    fallback_reason: str | None = None
    usage: Usage | None = None
    """Tokens and cost of the planning call (``None`` when no call was answered)."""


@cache
def available_templates() -> tuple[TemplateInfo, ...]:
    """The ``cypher/templates`` statements: name, the description in their leading comment, and
    the parameters a plan may set."""
    out = []
    root = cypher.corpus_root() / "templates"
    for full in cypher.names("templates"):
        name = full.removeprefix("templates/")
        raw = (root / f"{name}.cypher").read_text(encoding="utf-8")
        comment = " ".join(
            line.strip().removeprefix("//").strip()
            for line in raw.splitlines()
            if line.strip().startswith("//")
        )
        description = comment.removeprefix("graph_query template:").strip()
        params = sorted(set(_PARAM.findall(cypher.load(full))) - _EXECUTOR_PARAMS)
        out.append(TemplateInfo(name=name, description=description, parameters=tuple(params)))
    return tuple(out)


def _analysis_json(analysis: QueryAnalysis) -> dict[str, Any]:
    return {
        "query_class": str(analysis.query_class),
        "complexity": analysis.complexity,
        "wanted_modalities": sorted(analysis.modalities),
        "entities": [
            {"id": e.id, "name": e.name, "matched": e.surface, "score": e.score}
            for e in analysis.entity_mentions
        ],
        "key_terms": list(analysis.key_terms),
        "cues": list(analysis.cues),
    }


def plan_messages(
    question: str,
    analysis: QueryAnalysis,
    *,
    templates: Sequence[TemplateInfo],
    tools: Mapping[str, str],
    baseline: Plan | None = None,
    indexes: Collection[str] | None = None,
    max_steps: int = MAX_PLAN_STEPS,
) -> list[ChatMessage]:
    """The system and user messages asking for a plan."""
    template_lines = "\n".join(
        f"- {t.name}({', '.join(t.parameters)}): {t.description}" for t in templates
    )
    tool_lines = "\n".join(f"- {name}: {desc}" for name, desc in sorted(tools.items()))
    system = render_prompt(
        "kgrag.planner",
        "plan_system",
        step_types=describe_step_types(),
        document_steps=", ".join(DOCUMENT_STEP_TYPES),
        templates=template_lines or "- (none)",
        tools=tool_lines or "- (none: do not use tool_call)",
        indexes=(
            f"Vector indexes available: {', '.join(sorted(indexes)) or 'none'}.\n\n"
            if indexes is not None
            else ""
        ),
        max_steps=max_steps,
        schema=json.dumps(plan_json_schema(), separators=(",", ":")),
    )
    user_parts = [
        f"Question: {json.dumps(question)}",
        f"Query analysis: {json.dumps(_analysis_json(analysis))}",
    ]
    if baseline is not None:
        user_parts.append(
            "The offline rule planner would run this plan; return it, or a better one:\n"
            + baseline.to_json()
        )
    return [
        ChatMessage(role="system", content=system),
        ChatMessage(role="user", content="\n\n".join(user_parts)),
    ]


def llm_plan(
    question: str,
    analysis: QueryAnalysis,
    client: LLM,
    *,
    rule_fallback: Callable[[], Plan],
    tools: Mapping[str, str] | None = None,
    templates: Sequence[TemplateInfo] | None = None,
    indexes: Collection[str] | None = None,
    include_baseline: bool = True,
    max_steps: int = MAX_PLAN_STEPS,
    max_tokens: int | None = 2000,
) -> PlanResult:
    """Ask ``client`` for a plan; fall back to ``rule_fallback()`` when its plan is unusable.

    ``tools`` maps the tool names a plan may call to a description; ``indexes`` lists the vector
    indexes that can be searched (e.g. without ``image_embedding`` when no image model is
    configured; every index when ``None``). Never raises for a failure of the LLM or of its
    plan: the reason is in :attr:`PlanResult.fallback_reason` (and logged). A failing
    ``rule_fallback`` still raises.
    """
    tool_descriptions = dict(tools or {})
    template_list = tuple(templates) if templates is not None else available_templates()
    baseline: Plan | None = None
    if include_baseline:
        baseline = rule_fallback()
    messages = plan_messages(
        question,
        analysis,
        templates=template_list,
        tools=tool_descriptions,
        baseline=baseline,
        indexes=indexes,
        max_steps=max_steps,
    )
    known_templates = {t.name for t in template_list}
    usage: Usage | None = None
    try:
        result = client.chat(
            messages, json_schema=plan_json_schema(), schema_name="plan", max_tokens=max_tokens
        )
        usage = result.usage
        plan = Plan.parse(result.text)
        validate_plan(
            plan,
            template_exists=lambda name: (
                name in known_templates and cypher.exists(f"templates/{name}")
            ),
            tool_exists=lambda name: name in tool_descriptions,
            max_steps=max_steps,
        )
        if indexes is not None:
            _check_indexes(plan, indexes)
    except PlanError as e:
        return _fallback(f"the LLM plan is invalid: {e}", rule_fallback, baseline, usage)
    except KgragError as e:  # LLMError, BudgetExceededError, DependencyMissingError...
        return _fallback(f"the LLM planner failed: {e}", rule_fallback, baseline, usage)
    logger.info("LLM plan accepted: %d steps", len(plan.plan))
    return PlanResult(plan=bound_llm_plan(_mark_llm(plan)), source="llm", usage=usage)


def plan_question(
    question: str,
    analysis: QueryAnalysis,
    client: LLM | None,
    *,
    rule_fallback: Callable[[], Plan],
    tools: Mapping[str, str] | None = None,
    indexes: Collection[str] | None = None,
    max_steps: int = MAX_PLAN_STEPS,
) -> PlanResult:
    """The LLM planner when a client is configured, else the rule planner."""
    if client is None:
        return PlanResult(plan=rule_fallback(), source="rule")
    return llm_plan(
        question,
        analysis,
        client,
        rule_fallback=rule_fallback,
        tools=tools,
        indexes=indexes,
        max_steps=max_steps,
    )


def _check_indexes(plan: Plan, indexes: Collection[str]) -> None:
    for step in plan.plan:
        if isinstance(step, VectorSearchStep) and step.parameters.index not in indexes:
            raise PlanError(
                f"vector index {step.parameters.index!r} is not available here "
                f"(available: {', '.join(sorted(indexes)) or 'none'})",
                step.step_id,
            )


def _fallback(
    reason: str,
    rule_fallback: Callable[[], Plan],
    baseline: Plan | None,
    usage: Usage | None,
) -> PlanResult:
    if len(reason) > _MAX_REASON:
        reason = reason[: _MAX_REASON - 3] + "..."
    logger.warning("falling back to the rule planner: %s", reason)
    plan = baseline if baseline is not None else rule_fallback()
    return PlanResult(plan=plan, source="rule", fallback_reason=reason, usage=usage)


def _mark_llm(plan: Plan) -> Plan:
    """Every step's trace says it came from the LLM planner (whatever the model wrote)."""
    steps = [
        step.model_copy(update={"trace": step.trace.model_copy(update={"source": "llm"})})
        for step in plan.plan
    ]
    return plan.model_copy(update={"plan": tuple(steps)})
