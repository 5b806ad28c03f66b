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
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    ValidationError,
    field_validator,
)

from kgrag.core import Frozen
from kgrag.errors import PlanError
from kgrag.planner.conditions import parse_condition
from kgrag.planner.errors import plan_error
from kgrag.planner.params import (
    AggregateParams,
    AudioTranscriptionParams,
    CompareParams,
    DemoteParams,
    DocumentAuthorsParams,
    DocumentDatesParams,
    DocumentSummaryParams,
    DocumentTypesParams,
    FilterParams,
    GraphQueryParams,
    ImageEmbeddingParams,
    ListDocumentsParams,
    LlmCallParams,
    MetadataSearchParams,
    Modality,
    MultiHopParams,
    RerankParams,
    StepId,
    StepIds,
    StepParams,
    StepType,
    ToolCallParams,
    VectorSearchParams,
)

__all__ = [
    "MAX_PLAN_STEPS",
    "AggregateStep",
    "AudioTranscriptionStep",
    "CompareStep",
    "DemoteStep",
    "DocumentAuthorsStep",
    "DocumentDatesStep",
    "DocumentSummaryStep",
    "DocumentTypesStep",
    "FilterStep",
    "GraphQueryStep",
    "ImageEmbeddingStep",
    "ListDocumentsStep",
    "LlmCallStep",
    "MetadataSearchStep",
    "MultiHopStep",
    "Plan",
    "RerankStep",
    "Step",
    "StepBase",
    "StepTrace",
    "ToolCallStep",
    "VectorSearchStep",
    "plan_json_schema",
]

MAX_PLAN_STEPS = 32
"""The most steps any plan may have (validate_plan may be given a lower limit)."""


class StepTrace(Frozen):
    """Where a step came from and why it is in the plan (shown in traces)."""

    source: str = "rule-based"
    explanation: str = ""


# --------------------------------------------------------------------------- steps


class StepBase(Frozen):
    """What every step has; each step type narrows ``type`` and ``parameters``."""

    step_id: StepId
    type: StepType
    modality: Modality = "text"
    dependencies: StepIds = ()
    condition: str | None = Field(default=None, max_length=500)
    trace: StepTrace = StepTrace()
    parameters: StepParams

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


class VectorSearchStep(StepBase):
    type: Literal["vector_search"]
    parameters: VectorSearchParams


class GraphQueryStep(StepBase):
    type: Literal["graph_query"]
    parameters: GraphQueryParams


class MultiHopStep(StepBase):
    type: Literal["multi_hop"]
    parameters: MultiHopParams


class FilterStep(StepBase):
    type: Literal["filter"]
    parameters: FilterParams


class RerankStep(StepBase):
    type: Literal["rerank"]
    parameters: RerankParams


class AggregateStep(StepBase):
    type: Literal["aggregate"]
    parameters: AggregateParams


class LlmCallStep(StepBase):
    type: Literal["llm_call"]
    parameters: LlmCallParams


class ToolCallStep(StepBase):
    type: Literal["tool_call"]
    parameters: ToolCallParams


class ListDocumentsStep(StepBase):
    type: Literal["list_documents"]
    parameters: ListDocumentsParams


class DocumentSummaryStep(StepBase):
    type: Literal["document_summary"]
    parameters: DocumentSummaryParams


class MetadataSearchStep(StepBase):
    type: Literal["metadata_search"]
    parameters: MetadataSearchParams


class CompareStep(StepBase):
    type: Literal["compare"]
    parameters: CompareParams


class DocumentTypesStep(StepBase):
    type: Literal["document_types"]
    parameters: DocumentTypesParams


class DocumentDatesStep(StepBase):
    type: Literal["document_dates"]
    parameters: DocumentDatesParams


class DocumentAuthorsStep(StepBase):
    type: Literal["document_authors"]
    parameters: DocumentAuthorsParams


class AudioTranscriptionStep(StepBase):
    type: Literal["audio_transcription"]
    parameters: AudioTranscriptionParams


class ImageEmbeddingStep(StepBase):
    type: Literal["image_embedding"]
    parameters: ImageEmbeddingParams


class DemoteStep(StepBase):
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
    | DocumentTypesStep
    | DocumentDatesStep
    | DocumentAuthorsStep
    | AudioTranscriptionStep
    | ImageEmbeddingStep
    | DemoteStep,
    Field(discriminator="type"),
]


# --------------------------------------------------------------------------- plan


class Plan(Frozen):
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
            raise plan_error(e, decoded) from None

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
