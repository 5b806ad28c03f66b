"""Plans: the typed DAG schema, its validation, step conditions, and query analysis."""

from kgrag.planner.analysis import QueryAnalysis, QueryClass, ResolvedEntity, analyse
from kgrag.planner.conditions import (
    Condition,
    ConditionEvaluationError,
    StepOutcomeLike,
    parse_condition,
)
from kgrag.planner.models import (
    AggregateStep,
    FilterStep,
    GraphQueryStep,
    LlmCallStep,
    MultiHopStep,
    Plan,
    RerankStep,
    Step,
    StepTrace,
    ToolCallStep,
    VectorSearchStep,
    plan_json_schema,
)
from kgrag.planner.params import (
    AggregateParams,
    FilterParams,
    GraphQueryParams,
    LlmCallParams,
    Modality,
    MultiHopParams,
    RerankParams,
    ToolCallParams,
    VectorSearchParams,
)
from kgrag.planner.validate import generations, validate_plan

__all__ = [
    "AggregateParams",
    "AggregateStep",
    "Condition",
    "ConditionEvaluationError",
    "FilterParams",
    "FilterStep",
    "GraphQueryParams",
    "GraphQueryStep",
    "LlmCallParams",
    "LlmCallStep",
    "Modality",
    "MultiHopParams",
    "MultiHopStep",
    "Plan",
    "QueryAnalysis",
    "QueryClass",
    "RerankParams",
    "RerankStep",
    "ResolvedEntity",
    "Step",
    "StepOutcomeLike",
    "StepTrace",
    "ToolCallParams",
    "ToolCallStep",
    "VectorSearchParams",
    "VectorSearchStep",
    "analyse",
    "generations",
    "parse_condition",
    "plan_json_schema",
    "validate_plan",
]
