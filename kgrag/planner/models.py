"""The plan schema: a typed DAG of steps, as pydantic models with a discriminated union on ``type``.

A plan is JSON of this shape (DESIGN.md, "Plans")::

    {"plan": [{"step_id": 1, "type": "vector_search", "modality": "text",
               "parameters": {"query": "pump maintenance", "k": 10},
               "dependencies": [], "condition": null,
               "trace": {"source": "rule-based", "explanation": "find passages"}}],
     "traceability": true}

These models check each step on its own (types, ranges, the condition's syntax). Whether the steps
form a valid DAG (unique ids, no cycles, a step reads only what it depends on, templates and tools
exist) is checked by :func:`kgrag.planner.validate.validate_plan`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    field_validator,
    model_validator,
)

from kgrag.errors import PlanError
from kgrag.planner.conditions import parse_condition

__all__ = [
    "MAX_PLAN_STEPS",
    "AggregateParams",
    "AggregateStep",
    "AudioTranscriptionParams",
    "AudioTranscriptionStep",
    "CompareParams",
    "CompareStep",
    "DemoteParams",
    "DemoteStep",
    "DocumentModality",
    "DocumentSummaryParams",
    "DocumentSummaryStep",
    "FilterParams",
    "FilterStep",
    "GraphQueryParams",
    "GraphQueryStep",
    "HopRelationship",
    "ImageEmbeddingParams",
    "ImageEmbeddingStep",
    "ListDocumentsParams",
    "ListDocumentsStep",
    "LlmCallParams",
    "LlmCallStep",
    "MetadataSearchParams",
    "MetadataSearchStep",
    "Modality",
    "MultiHopParams",
    "MultiHopStep",
    "NodeKind",
    "Plan",
    "RerankParams",
    "RerankStep",
    "Step",
    "StepTrace",
    "StepType",
    "ToolCallParams",
    "ToolCallStep",
    "VectorSearchParams",
    "VectorSearchStep",
    "plan_json_schema",
]

MAX_PLAN_STEPS = 32
"""The most steps any plan may have (validate_plan may be given a lower limit)."""

Modality = Literal["text", "image", "audio"]
NodeKind = Literal["chunk", "segment", "image", "entity", "document"]
HopRelationship = Literal["MENTIONS", "RELATED", "NEXT"]
"""What a ``multi_hop`` may walk: chunk-entity mentions, entity co-mentions, reading order.
(Images are reached by their own steps: ``image_embedding`` search and ``entity_images``.)"""
"""Relationship types a ``multi_hop`` step may traverse (an allow-list: types are written into
Cypher, where they cannot be parameters)."""
StepType = Literal[
    "vector_search",
    "graph_query",
    "multi_hop",
    "filter",
    "rerank",
    "aggregate",
    "llm_call",
    "tool_call",
    "list_documents",
    "document_summary",
    "metadata_search",
    "compare",
    "audio_transcription",
    "image_embedding",
    "demote",
]
_STEP_TYPES = frozenset(get_args(StepType))

StepId = Annotated[int, Field(ge=1)]
_IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"
_SNAKE_NAME = r"^[a-z][a-z0-9_]*$"
Identifier = Annotated[str, Field(pattern=_IDENTIFIER, max_length=64)]
ParamValue = str | int | float | bool | None | list[str] | list[int] | list[float]
DocumentModality = Literal["text", "pdf", "image", "audio"]
"""A document's type as stored on ``Document.modality``."""
_DATE = r"^\d{4}(?:-\d{2}(?:-\d{2})?)?$"
Term = Annotated[str, Field(min_length=1, max_length=100)]


def _unique(ids: tuple[int, ...]) -> tuple[int, ...]:
    """Drop repeated ids, keeping the first occurrence (order is kept)."""
    return tuple(dict.fromkeys(ids))


StepIds = Annotated[tuple[StepId, ...], AfterValidator(_unique)]
"""Step ids; a repeated id is dropped (harmless, and common in LLM output)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StepTrace(_Frozen):
    """Where a step came from and why it is in the plan (shown in traces)."""

    source: str = "rule-based"
    explanation: str = ""


# --------------------------------------------------------------------------- parameters


class _Params(_Frozen):
    def reads(self) -> frozenset[int]:
        """Step ids whose results these parameters read."""
        return frozenset()


class VectorSearchParams(_Params):
    """Nearest neighbours in one vector index, for a query text or for an earlier step's top
    result (``query_from``: the text of that step's best-ranked result is the query)."""

    query: str | None = Field(default=None, min_length=1)
    query_from: StepId | None = None
    index: Literal["chunk_embedding", "image_embedding", "entity_clip"] = "chunk_embedding"
    k: int = Field(default=10, ge=1, le=200)

    @model_validator(mode="after")
    def _one_query(self) -> VectorSearchParams:
        if (self.query is None) == (self.query_from is None):
            raise ValueError("give exactly one of 'query' and 'query_from'")
        return self

    def reads(self) -> frozenset[int]:
        return frozenset() if self.query_from is None else frozenset({self.query_from})


class GraphQueryParams(_Params):
    """A named Cypher template from ``cypher/`` with its parameters. ``inputs`` maps a template
    parameter to a step whose result node ids are passed as a list."""

    template: str = Field(pattern=_SNAKE_NAME, max_length=100)
    params: dict[Identifier, ParamValue] = Field(default_factory=dict)
    inputs: dict[Identifier, StepId] = Field(default_factory=dict)
    k: int = Field(default=20, ge=1, le=1000)

    @model_validator(mode="after")
    def _no_overlap(self) -> GraphQueryParams:
        both = sorted(set(self.params) & set(self.inputs))
        if both:
            raise ValueError(f"parameter(s) {', '.join(both)} given both in 'params' and 'inputs'")
        return self

    def reads(self) -> frozenset[int]:
        return frozenset(self.inputs.values())


class MultiHopParams(_Params):
    """Expand from the result nodes of ``seeds_from`` over ``relationships`` for up to ``hops``
    hops and rank what is reached (personalised PageRank with ``damping``)."""

    seeds_from: StepIds = Field(min_length=1)
    hops: int = Field(default=2, ge=1, le=3)
    relationships: tuple[HopRelationship, ...] = Field(
        default=("MENTIONS", "RELATED"), min_length=1
    )
    k: int = Field(default=10, ge=1, le=200)
    damping: float = Field(default=0.85, gt=0.0, lt=1.0)
    max_nodes: int = Field(default=2000, ge=1, le=100_000)

    def reads(self) -> frozenset[int]:
        return frozenset(self.seeds_from)


class FilterParams(_Params):
    """Keep the results of ``source`` that pass every given test, at most ``k`` of them."""

    source: StepId
    min_score: float | None = None
    kinds: tuple[NodeKind, ...] | None = Field(default=None, min_length=1)
    modality: Modality | None = None
    document_ids: tuple[str, ...] | None = Field(default=None, min_length=1)
    k: int | None = Field(default=None, ge=1, le=1000)

    def reads(self) -> frozenset[int]:
        return frozenset({self.source})


class RerankParams(_Params):
    """Re-score the union of ``sources`` against ``query`` and keep the best ``k``."""

    sources: StepIds = Field(min_length=1)
    query: str = Field(min_length=1)
    k: int = Field(default=10, ge=1, le=200)
    method: Literal["embedding", "lexical"] = "embedding"
    rules: str | None = Field(default=None, pattern=_SNAKE_NAME, max_length=64)
    """A rule set of the metadata-aware rerank rule file (``Settings.rerank_rules``): the score
    is then combined with the hits' document metadata (authority, recency, source priority)."""

    def reads(self) -> frozenset[int]:
        return frozenset(self.sources)


class AggregateParams(_Params):
    """Fuse the rankings of ``sources`` (reciprocal rank fusion by default) into one."""

    sources: StepIds = Field(min_length=1)
    k: int = Field(default=10, ge=1, le=200)
    method: Literal["rrf", "max", "sum"] = "rrf"
    rrf_k: int = Field(default=60, ge=1)
    min_share: float | None = Field(default=None, gt=0.0, le=1.0)
    """Keep only hits whose fused score is at least this share of the best one (with ``rrf``
    and 0.5: when the best hit was found by two sources, hits only one found are dropped)."""
    weights: tuple[Annotated[float, Field(ge=0.0, le=10.0)], ...] | None = None
    """One weight per source (``rrf`` and ``sum``): how much its ranking counts; all 1 when
    not given."""

    @model_validator(mode="after")
    def _one_weight_per_source(self) -> AggregateParams:
        if self.weights is not None and len(self.weights) != len(self.sources):
            raise ValueError(f"{len(self.weights)} weights given for {len(self.sources)} sources")
        return self

    def reads(self) -> frozenset[int]:
        return frozenset(self.sources)


class LlmCallParams(_Params):
    """Ask the LLM ``prompt`` with the results of ``sources`` as context."""

    prompt: str = Field(min_length=1)
    sources: StepIds = ()
    max_tokens: int = Field(default=512, ge=1, le=32_768)

    def reads(self) -> frozenset[int]:
        return frozenset(self.sources)


class ToolCallParams(_Params):
    """Call a registered tool with ``arguments``; ``inputs`` maps an argument to a step whose
    result node ids are passed as a list."""

    tool: str = Field(pattern=_SNAKE_NAME, max_length=100)
    arguments: dict[Identifier, JsonValue] = Field(default_factory=dict)
    inputs: dict[Identifier, StepId] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _no_overlap(self) -> ToolCallParams:
        both = sorted(set(self.arguments) & set(self.inputs))
        if both:
            raise ValueError(
                f"argument(s) {', '.join(both)} given both in 'arguments' and 'inputs'"
            )
        return self

    def reads(self) -> frozenset[int]:
        return frozenset(self.inputs.values())


class ListDocumentsParams(_Params):
    """Readable documents about ``about`` (terms, lowercased) or mentioning ``entity_ids``,
    matched on document metadata only: title, tags, summary, names of mentioned entities."""

    about: tuple[Term, ...] = Field(min_length=1, max_length=20)
    entity_ids: tuple[Term, ...] = ()
    k: int = Field(default=20, ge=1, le=200)


class DocumentSummaryParams(_Params):
    """The stored summary of the readable document that ``target`` (a title or a description)
    names best."""

    target: str = Field(min_length=1, max_length=300)
    k: int = Field(default=1, ge=1, le=10)


class MetadataSearchParams(_Params):
    """Readable documents by metadata: types, tags (every one given), a date range on the
    document's date (a ``date:YYYY-MM-DD`` tag, else when it was ingested); ``about`` optionally
    narrows to documents whose metadata matches those terms."""

    modalities: tuple[DocumentModality, ...] | None = Field(default=None, min_length=1)
    tags: tuple[Term, ...] | None = Field(default=None, min_length=1)
    date_from: str | None = Field(default=None, pattern=_DATE)
    date_to: str | None = Field(default=None, pattern=_DATE)
    """Inclusive, at its own precision: ``2023`` ends with the last day of 2023."""
    about: tuple[Term, ...] = ()
    k: int = Field(default=50, ge=1, le=500)

    @model_validator(mode="after")
    def _some_filter(self) -> MetadataSearchParams:
        if not (self.modalities or self.tags or self.date_from or self.date_to or self.about):
            raise ValueError("give at least one of modalities, tags, date_from, date_to, about")
        return self


class CompareParams(_Params):
    """Two to four entities or documents side by side: for each side its entity profile (the
    readable passages that mention it most) or, for a document, its summary."""

    sides: tuple[Annotated[str, Field(min_length=1, max_length=200)], ...] = Field(
        min_length=2, max_length=4
    )
    entity_ids: tuple[Term, ...] = ()
    """Entity ids the sides were resolved to (optional; names are matched too)."""
    k: int = Field(default=3, ge=1, le=20)
    """Passages per side."""


# ----------------------------------------------------- attachment parameters (query time)


class AudioTranscriptionParams(_Params):
    """Transcribe the question's attached recording number ``attachment`` (0-based) with Whisper;
    the result is one hit whose text is the transcript (``vector_search.query_from`` reads it)."""

    attachment: int = Field(default=0, ge=0, le=15)


class ImageEmbeddingParams(_Params):
    """Embed the question's attached image number ``attachment`` (0-based) with CLIP and return
    the ``k`` most similar stored images (query by example, image to image)."""

    attachment: int = Field(default=0, ge=0, le=15)
    k: int = Field(default=5, ge=1, le=100)


class DemoteParams(_Params):
    """De-prioritise, never remove: the results of ``source`` from ``document_ids`` (sources
    already cited earlier in the session) have their score multiplied by ``factor``, then the
    list is re-sorted. ``named_again`` lists cited documents the question names again (kept)."""

    source: StepId
    document_ids: tuple[str, ...] = ()
    factor: float = Field(default=0.5, gt=0.0, le=1.0)
    named_again: tuple[str, ...] = ()

    def reads(self) -> frozenset[int]:
        return frozenset({self.source})


# --------------------------------------------------------------------------- steps


class _StepBase(_Frozen):
    step_id: StepId
    type: StepType
    modality: Modality = "text"
    dependencies: StepIds = ()
    condition: str | None = Field(default=None, max_length=500)
    trace: StepTrace = StepTrace()
    parameters: _Params

    @field_validator("condition")
    @classmethod
    def _check_condition(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            return parse_condition(value).text
        except PlanError as e:
            raise ValueError(e.reason) from None

    def reads(self) -> frozenset[int]:
        """Every step id this step reads: from its parameters and from its condition."""
        reads = self.parameters.reads()
        if self.condition is not None:
            reads |= parse_condition(self.condition).names()
        return reads


class VectorSearchStep(_StepBase):
    type: Literal["vector_search"]
    parameters: VectorSearchParams


class GraphQueryStep(_StepBase):
    type: Literal["graph_query"]
    parameters: GraphQueryParams


class MultiHopStep(_StepBase):
    type: Literal["multi_hop"]
    parameters: MultiHopParams


class FilterStep(_StepBase):
    type: Literal["filter"]
    parameters: FilterParams


class RerankStep(_StepBase):
    type: Literal["rerank"]
    parameters: RerankParams


class AggregateStep(_StepBase):
    type: Literal["aggregate"]
    parameters: AggregateParams


class LlmCallStep(_StepBase):
    type: Literal["llm_call"]
    parameters: LlmCallParams


class ToolCallStep(_StepBase):
    type: Literal["tool_call"]
    parameters: ToolCallParams


class ListDocumentsStep(_StepBase):
    type: Literal["list_documents"]
    parameters: ListDocumentsParams


class DocumentSummaryStep(_StepBase):
    type: Literal["document_summary"]
    parameters: DocumentSummaryParams


class MetadataSearchStep(_StepBase):
    type: Literal["metadata_search"]
    parameters: MetadataSearchParams


class CompareStep(_StepBase):
    type: Literal["compare"]
    parameters: CompareParams


class AudioTranscriptionStep(_StepBase):
    type: Literal["audio_transcription"]
    parameters: AudioTranscriptionParams


class ImageEmbeddingStep(_StepBase):
    type: Literal["image_embedding"]
    parameters: ImageEmbeddingParams


class DemoteStep(_StepBase):
    type: Literal["demote"]
    parameters: DemoteParams


Step = Annotated[
    VectorSearchStep
    | GraphQueryStep
    | MultiHopStep
    | FilterStep
    | RerankStep
    | AggregateStep
    | LlmCallStep
    | ToolCallStep
    | ListDocumentsStep
    | DocumentSummaryStep
    | MetadataSearchStep
    | CompareStep
    | AudioTranscriptionStep
    | ImageEmbeddingStep
    | DemoteStep,
    Field(discriminator="type"),
]


# --------------------------------------------------------------------------- plan


class Plan(_Frozen):
    """A plan: steps (a DAG through ``dependencies``) and whether to trace them in the graph."""

    plan: tuple[Step, ...] = Field(min_length=1, max_length=MAX_PLAN_STEPS)
    traceability: bool = True

    @classmethod
    def parse(cls, data: str | bytes | Mapping[str, Any]) -> Plan:
        """Build a plan from JSON text or a decoded mapping.

        Raises :class:`~kgrag.errors.PlanError` naming the step (position and ``step_id``) and the
        field at fault, e.g. ``invalid plan: step 2: plan[1] (multi_hop): parameters.hops: Input
        should be less than or equal to 3``.
        """
        if isinstance(data, str | bytes):
            try:
                decoded = json.loads(data)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise PlanError(f"the plan is not valid JSON: {e}") from None
        else:
            decoded = data
        if not isinstance(decoded, Mapping):
            raise PlanError(f"a plan must be a JSON object, not {type(decoded).__name__}")
        try:
            return cls.model_validate(dict(decoded))
        except ValidationError as e:
            raise _plan_error(e, decoded) from None

    def step(self, step_id: int) -> Step:
        """The step with this id; :class:`~kgrag.errors.PlanError` when there is none."""
        for step in self.plan:
            if step.step_id == step_id:
                return step
        raise PlanError(f"the plan has no step {step_id}", step_id)

    @property
    def step_ids(self) -> tuple[int, ...]:
        """The step ids, in plan order."""
        return tuple(step.step_id for step in self.plan)

    def to_json(self, *, indent: int | None = None) -> str:
        """The plan as JSON text, in the shape :meth:`parse` reads."""
        return self.model_dump_json(indent=indent)


def plan_json_schema() -> dict[str, Any]:
    """The JSON Schema of a plan (what ``docs/plan.schema.json`` holds; usable for structured
    output from an LLM)."""
    schema = Plan.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema.setdefault("title", "Plan")
    return schema


def _plan_error(error: ValidationError, raw: Mapping[str, Any]) -> PlanError:
    """Turn pydantic's report into one PlanError naming step, field and reason."""
    details = _condense(error.errors(include_url=False))
    messages = [_describe_error(d, raw) for d in details]
    first_step = _step_id_at(details[0]["loc"], raw) if details else None
    reason = messages[0] if messages else str(error)
    if len(messages) > 1:
        shown = "; ".join(messages[:5])
        more = f" (and {len(messages) - 5} more)" if len(messages) > 5 else ""
        reason = f"{len(messages)} problems: {shown}{more}"
    return PlanError(reason, first_step)


_UNION_MEMBER = re.compile(r"^(?:str|int|float|bool|none|list\[.*\]|dict\[.*\])$")


def _condense(details: list[Any]) -> list[Any]:
    """Drop pydantic's noise: a container reported "too short" because its items failed, and
    one error per member of a union (reported once, as matching none of the allowed types)."""
    locs = [tuple(d["loc"]) for d in details]
    kept: list[Any] = []
    unions: dict[tuple[Any, ...], list[str]] = {}
    for detail, loc in zip(details, locs, strict=True):
        if detail["type"] == "too_short" and any(
            len(other) > len(loc) and other[: len(loc)] == loc for other in locs
        ):
            continue
        if loc and isinstance(loc[-1], str) and _UNION_MEMBER.match(loc[-1]):
            parent = loc[:-1]
            if parent not in unions:
                unions[parent] = []
                kept.append({**detail, "loc": parent, "type": "union", "msg": ""})
            unions[parent].append(loc[-1])
            continue
        kept.append(detail)
    for detail in kept:
        if detail["type"] == "union":
            allowed = ", ".join(unions[tuple(detail["loc"])])
            detail["msg"] = f"Input should be one of these types: {allowed}"
    return kept


def _describe_error(detail: Any, raw: Mapping[str, Any]) -> str:
    loc: tuple[int | str, ...] = tuple(detail["loc"])
    msg = str(detail["msg"])
    if detail["type"] == "value_error":
        msg = msg.removeprefix("Value error, ")
    if len(loc) >= 2 and loc[0] == "plan" and isinstance(loc[1], int):
        index = loc[1]
        rest = list(loc[2:])
        where = f"plan[{index}]"
        step_id = _step_id_at(loc, raw)
        kind: str | None = None
        if rest and isinstance(rest[0], str) and rest[0] in _STEP_TYPES:
            kind = str(rest.pop(0))
        label = ", ".join(
            part
            for part in (f"step_id {step_id}" if step_id is not None else "", kind or "")
            if part
        )
        if label:
            where += f" ({label})"
        field = ".".join(str(part) for part in rest)
        return f"{where}: {field}: {msg}" if field else f"{where}: {msg}"
    field = ".".join(str(p) for p in loc)
    return f"{field}: {msg}" if field else msg


def _step_id_at(loc: tuple[int | str, ...], raw: Mapping[str, Any]) -> int | None:
    if len(loc) < 2 or loc[0] != "plan" or not isinstance(loc[1], int):
        return None
    steps = raw.get("plan")
    if not isinstance(steps, list | tuple) or not 0 <= loc[1] < len(steps):
        return None
    step = steps[loc[1]]
    if not isinstance(step, Mapping):
        return None
    step_id = step.get("step_id")
    return step_id if isinstance(step_id, int) and not isinstance(step_id, bool) else None
