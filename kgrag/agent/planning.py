"""Planning for the agent: the first iteration plans the question (LLM planner when a client is
configured, rule planner otherwise or as its fallback); refinements plan the judge's next query;
FILTER plans re-run the question and keep the supporting documents. All iterations of one question
are merged into one plan for the trace (step ids offset, explanations saying which iteration)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from pydantic import Field

from kgrag.agent.attachments import attachment_plan
from kgrag.agent.evaluate import Judgement
from kgrag.core import Frozen
from kgrag.executor.attachments import Attachment
from kgrag.executor.base import StepOutcome
from kgrag.executor.fusion import RRF_K
from kgrag.executor.lexical import LEXICAL_TEMPLATE
from kgrag.executor.picture_names import NAMED_IMAGES_TEMPLATE
from kgrag.ingest.sources import FILE_TYPES
from kgrag.modalities.clip import DEFAULT_DEPICTS_THRESHOLD
from kgrag.planner.analysis import QueryAnalysis
from kgrag.planner.document_plans import document_plan
from kgrag.planner.llm import PlanResult, plan_question
from kgrag.planner.models import MAX_PLAN_STEPS, Plan
from kgrag.planner.rule import NAMED_PICTURE_WEIGHT, lexical_params, lexical_weight, rule_plan
from kgrag.text.file_names import picture_query_terms

if TYPE_CHECKING:
    from kgrag.llm import LLM

_STEP_REF = re.compile(r"\bstep_(\d+)\b")

#: Step types whose hits are text evidence a ``demote`` step may re-score.
_TEXT_STEPS = ("aggregate", "rerank", "filter", "vector_search", "multi_hop", "graph_query")


def wants_images(analysis: QueryAnalysis) -> bool:
    """The question asks for pictures, or names an image file ("what does deps.png show?")."""
    return "image" in analysis.modalities or any(
        FILE_TYPES.get(PurePath(name).suffix, ("text",))[0] == "image"
        for name in analysis.file_names
    )


class Demotion(Frozen):
    """Sources already cited in the session, to de-prioritise by ``factor`` in every plan."""

    document_ids: tuple[str, ...]
    named_again: tuple[str, ...] = ()
    factor: float = Field(default=0.5, gt=0.0, le=1.0)


class AgentPlanner:
    """Makes the plan of each iteration."""

    def __init__(
        self,
        client: LLM | None,
        *,
        tools: Mapping[str, str] | None = None,
        images: bool = False,
        attachments: Sequence[Attachment] = (),
        demotion: Demotion | None = None,
        rerank_rules: str | None = None,
        max_steps: int = MAX_PLAN_STEPS,
        image_min_score: float = DEFAULT_DEPICTS_THRESHOLD,
    ) -> None:
        self.client = client
        self.tools = dict(tools or {})
        self.images = images
        self.attachments = tuple(attachments)
        self.demotion = demotion
        self.rerank_rules = rerank_rules
        """The metadata rule set every plan's text evidence is reranked with (Settings
        ``rerank_ruleset``); ``None``: no metadata reranking unless a plan asks for it."""
        self.max_steps = max_steps
        self.image_min_score = image_min_score

    def first(self, analysis: QueryAnalysis, entity_ids: Sequence[str]) -> PlanResult:
        return self._finished(self._first(analysis, entity_ids), analysis.text)

    def refine(self, question: str, judgement: Judgement, entity_ids: Sequence[str]) -> PlanResult:
        """The plan for the judge's next query (rule-based: predictable, and costs nothing)."""
        return self._finished(self._refine(question, judgement, entity_ids), question)

    def _finished(self, planned: PlanResult, question: str) -> PlanResult:
        """Metadata reranking first (the domain's order), then the session's demotion."""
        plan = planned.plan
        if planned.source == "llm":
            plan = with_picture_names(with_lexical(plan, question), question)
        if self.rerank_rules is not None:
            plan = with_rerank(plan, self.rerank_rules, question)
        if self.demotion is not None:
            plan = with_demotion(plan, self.demotion)
        return planned if plan is planned.plan else planned.model_copy(update={"plan": plan})

    def _first(self, analysis: QueryAnalysis, entity_ids: Sequence[str]) -> PlanResult:
        if self.attachments:
            return PlanResult(plan=attachment_plan(analysis.text, self.attachments), source="rule")
        # listing, summary, metadata and comparison questions are answered from documents
        documents = document_plan(analysis.text, analysis)
        if documents is not None:
            return PlanResult(plan=documents, source="rule")
        return self._content(analysis, entity_ids)

    def content(self, analysis: QueryAnalysis, entity_ids: Sequence[str]) -> PlanResult:
        """The plan that searches passages (and pictures, recordings) for ``analysis``, as for a
        content question: for a document question whose tool found no readable document."""
        return self._finished(self._content(analysis, entity_ids), analysis.text)

    def _content(self, analysis: QueryAnalysis, entity_ids: Sequence[str]) -> PlanResult:
        want_images = self.images and wants_images(analysis)

        def rule() -> Plan:
            return rule_plan(
                analysis.text,
                entity_ids=entity_ids,
                want_images=want_images,
                want_recordings=analysis.asks_about_recordings,
                file_names=analysis.file_names,
                image_min_score=self.image_min_score,
            )

        indexes = ["chunk_embedding", "entity_clip", "image_embedding"]
        return plan_question(
            analysis.text,
            analysis,
            self.client,
            rule_fallback=rule,
            tools=self.tools,
            indexes=indexes if self.images else indexes[:1],
            max_steps=self.max_steps,
        )

    def _refine(self, question: str, judgement: Judgement, entity_ids: Sequence[str]) -> PlanResult:
        if judgement.decision == "FILTER" and judgement.document_ids:
            return PlanResult(plan=filter_plan(question, judgement.document_ids), source="rule")
        query = judgement.next_query or question
        ids = list(dict.fromkeys([*judgement.focus_entities, *entity_ids]))
        return PlanResult(plan=rule_plan(query, entity_ids=ids), source="rule")


def filter_plan(question: str, document_ids: Sequence[str], k: int = 20) -> Plan:
    why = f"keep only the {len(document_ids)} document(s) that support the question"
    return Plan.parse(
        {
            "plan": [
                {
                    "step_id": 1,
                    "type": "vector_search",
                    "parameters": {"query": question, "index": "chunk_embedding", "k": k},
                    "trace": {"source": "rule-based", "explanation": "dense search again"},
                },
                {
                    "step_id": 2,
                    "type": "filter",
                    "parameters": {"source": 1, "document_ids": list(document_ids)},
                    "dependencies": [1],
                    "trace": {"source": "rule-based", "explanation": why},
                },
            ]
        }
    )


class _FusedQuery(Frozen):
    """A ``graph_query`` step to add to a plan and fuse with one of its evidence steps."""

    modality: str
    template: str
    params: dict[str, Any]
    k: int
    weight: float
    search_explanation: str
    fusion_explanation: str


def _with_fused_query(raw: dict[str, Any], evidence_step: int, query: _FusedQuery) -> Plan:
    """The plan ``raw`` with ``query``'s ``graph_query`` step and an ``aggregate`` step fusing it
    with ``evidence_step`` by weighted reciprocal rank (weights 1 and ``query.weight``)."""
    steps: list[dict[str, Any]] = raw["plan"]
    step = max(s["step_id"] for s in steps) + 1
    sources = [evidence_step, step]
    steps += [
        {
            "step_id": step,
            "type": "graph_query",
            "modality": query.modality,
            "parameters": {"template": query.template, "params": query.params, "k": query.k},
            "trace": {"source": "rule-based", "explanation": query.search_explanation},
        },
        {
            "step_id": step + 1,
            "type": "aggregate",
            "modality": query.modality,
            "parameters": {
                "sources": sources,
                "k": query.k,
                "method": "rrf",
                "rrf_k": RRF_K,
                "weights": [1.0, query.weight],
            },
            "dependencies": sources,
            "condition": " or ".join(f"step_{s}.status == 'ok'" for s in sources),
            "trace": {"source": "rule-based", "explanation": query.fusion_explanation},
        },
    ]
    return Plan.parse({"plan": steps, "traceability": raw["traceability"]})


def with_lexical(plan: Plan, question: str, k: int = 10) -> Plan:
    """``plan`` (an LLM's) with the lexical stage the rule plan has: when it searches the text
    chunks by vector and has no full-text step, a ``chunks_fulltext`` step for ``question`` is
    added and fused with its last text evidence step by weighted reciprocal rank (the rule
    plan's weights), so identifiers and rare names an embedding blurs are found in every
    content plan."""
    raw = json.loads(plan.to_json())
    steps: list[dict[str, Any]] = raw["plan"]
    searches_text = any(
        s["type"] == "vector_search" and s["parameters"].get("index") == "chunk_embedding"
        for s in steps
    )
    has_lexical = any(
        s["type"] == "graph_query" and s["parameters"].get("template") == LEXICAL_TEMPLATE
        for s in steps
    )
    text = [s["step_id"] for s in steps if s["type"] in _TEXT_STEPS and s["modality"] != "image"]
    if not searches_text or has_lexical or not text or len(steps) + 2 > MAX_PLAN_STEPS:
        return plan
    weight = lexical_weight(question)
    lexical = _FusedQuery(
        modality="text",
        template=LEXICAL_TEMPLATE,
        params=lexical_params(question),
        k=k,
        weight=weight,
        search_explanation="lexical search: the full-text index's candidates ranked by BM25",
        fusion_explanation="reciprocal-rank fusion of the plan's evidence and the lexical "
        f"ranking (lexical weight {weight}, as in the rule plan)",
    )
    return _with_fused_query(raw, text[-1], lexical)


def with_picture_names(plan: Plan, question: str, k: int = 3) -> Plan:
    """``plan`` (an LLM's) with the rule plan's name match of pictures: when it has image
    evidence steps and no ``named_images`` step, and the question names something
    (:func:`~kgrag.text.file_names.picture_query_terms`), the pictures whose file names have
    every one of its words are fused with its last image step (weight
    :data:`~kgrag.planner.rule.NAMED_PICTURE_WEIGHT`, as in the rule plan)."""
    raw = json.loads(plan.to_json())
    steps: list[dict[str, Any]] = raw["plan"]
    images = [
        s["step_id"]
        for s in steps
        if s["modality"] == "image" or s["parameters"].get("index") == "image_embedding"
    ]
    named = any(s["parameters"].get("template") == NAMED_IMAGES_TEMPLATE for s in steps)
    wanted = list(picture_query_terms(question))
    if not images or named or not wanted or len(steps) + 2 > MAX_PLAN_STEPS:
        return plan
    by_name = _FusedQuery(
        modality="image",
        template=NAMED_IMAGES_TEMPLATE,
        params={"terms": wanted},
        k=k,
        weight=NAMED_PICTURE_WEIGHT,
        search_explanation="the pictures whose file names have every content word of the "
        "question: a lexical match, never a similarity",
        fusion_explanation="the plan's image evidence fused with the pictures found by "
        f"name (weight {NAMED_PICTURE_WEIGHT}, as in the rule plan)",
    )
    return _with_fused_query(raw, images[-1], by_name)


def with_rerank(plan: Plan, rules: str, question: str, k: int = 10) -> Plan:
    """``plan`` with a metadata-aware ``rerank`` step (rule set ``rules``) after its last text
    evidence step, unless the plan already reranks with rules or has no text evidence step."""
    raw = json.loads(plan.to_json())
    steps: list[dict[str, Any]] = raw["plan"]
    if len(steps) >= MAX_PLAN_STEPS or any(
        s["type"] == "rerank" and s["parameters"].get("rules") for s in steps
    ):
        return plan
    text = [s["step_id"] for s in steps if s["type"] in _TEXT_STEPS and s["modality"] != "image"]
    if not text:
        return plan
    steps.append(
        {
            "step_id": max(s["step_id"] for s in steps) + 1,
            "type": "rerank",
            "modality": "text",
            "parameters": {"sources": [text[-1]], "query": question, "k": k, "rules": rules},
            "dependencies": [text[-1]],
            "trace": {
                "source": "rerank-rules",
                "explanation": f"order the evidence by relevance and document metadata "
                f"(rule set {rules!r}: authority, recency, source priority)",
            },
        }
    )
    return Plan.parse({"plan": steps, "traceability": raw["traceability"]})


def with_demotion(plan: Plan, demotion: Demotion) -> Plan:
    """``plan`` with a ``demote`` step after its last text and its last image evidence step:
    hits from the discussed documents are scored down by the factor (not removed)."""
    raw = json.loads(plan.to_json())
    steps: list[dict[str, Any]] = raw["plan"]
    next_id = max(s["step_id"] for s in steps) + 1
    last: dict[str, int] = {}
    for s in steps:
        if s["type"] in _TEXT_STEPS:
            last["image" if s["modality"] == "image" else "text"] = s["step_id"]
    for modality, source in last.items():
        if len(steps) >= MAX_PLAN_STEPS:
            break
        why = (
            f"de-prioritise {len(demotion.document_ids)} source(s) already cited in this "
            f"session (score x {demotion.factor})"
        )
        if demotion.named_again:
            why += f"; {len(demotion.named_again)} named again by the question are kept"
        steps.append(
            {
                "step_id": next_id,
                "type": "demote",
                "modality": modality,
                "parameters": {
                    "source": source,
                    "document_ids": list(demotion.document_ids),
                    "factor": demotion.factor,
                    "named_again": list(demotion.named_again),
                },
                "dependencies": [source],
                "trace": {"source": "session-memory", "explanation": why},
            }
        )
        next_id += 1
    return Plan.parse({"plan": steps, "traceability": raw["traceability"]})


def offset_steps(plan: Plan, offset: int, label: str) -> list[dict[str, Any]]:
    """The steps of ``plan`` as JSON with every step id (ids, dependencies, step references in
    parameters and conditions) moved by ``offset``; explanations prefixed with ``label``."""
    move: Callable[[int], int] = lambda i: i + offset  # noqa: E731
    out = []
    for raw in json.loads(plan.to_json())["plan"]:
        raw["step_id"] = move(raw["step_id"])
        raw["dependencies"] = [move(d) for d in raw["dependencies"]]
        p = raw["parameters"]
        for key in ("source", "query_from"):
            if isinstance(p.get(key), int):
                p[key] = move(p[key])
        for key in ("sources", "seeds_from"):
            if isinstance(p.get(key), list):
                p[key] = [move(s) for s in p[key]]
        if isinstance(p.get("inputs"), dict):
            p["inputs"] = {k: move(v) for k, v in p["inputs"].items()}
        if raw.get("condition"):
            raw["condition"] = _STEP_REF.sub(
                lambda m: f"step_{move(int(m.group(1)))}", raw["condition"]
            )
        trace = raw.setdefault("trace", {})
        trace["explanation"] = f"{label}: {trace.get('explanation') or ''}".rstrip(": ")
        out.append(raw)
    return out


def merge_iterations(
    iterations: Sequence[tuple[Plan, Mapping[int, StepOutcome], str]],
) -> tuple[Plan, dict[int, StepOutcome]]:
    """One plan (and its outcomes) holding the steps of every iteration, for the trace."""
    steps: list[dict[str, Any]] = []
    outcomes: dict[int, StepOutcome] = {}
    for plan, outs, label in iterations:
        offset = len(steps)
        steps.extend(offset_steps(plan, offset, label))
        outcomes.update({sid + offset: o for sid, o in outs.items()})
    return Plan.parse({"plan": steps[:MAX_PLAN_STEPS], "traceability": True}), outcomes
