"""The plan schema: the JSON shape of DESIGN.md, every step type, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from kgrag.errors import PlanError
from kgrag.planner.models import (
    MAX_PLAN_STEPS,
    AggregateStep,
    FilterStep,
    GraphQueryStep,
    LlmCallStep,
    MultiHopStep,
    Plan,
    RerankStep,
    StepTrace,
    ToolCallStep,
    VectorSearchStep,
    plan_json_schema,
)
from kgrag.planner.params import VectorSearchParams

ROOT = Path(__file__).resolve().parents[2]

# The example of DESIGN.md, "Plans", with parameters filled in.
DESIGN_EXAMPLE = """
{"plan": [{"step_id": 1, "type": "vector_search", "modality": "text",
           "parameters": {"query": "who maintains the X-200 pump", "k": 10},
           "dependencies": [], "condition": null,
           "trace": {"source": "rule-based", "explanation": "dense search over chunks"}}],
 "traceability": true}
"""


def full_plan() -> dict[str, Any]:
    """One step of every type, wired into a DAG."""
    return {
        "plan": [
            {"step_id": 1, "type": "vector_search", "parameters": {"query": "pump"}},
            {
                "step_id": 2,
                "type": "graph_query",
                "parameters": {
                    "template": "entity_chunks",
                    "params": {"entity_ids": ["x-200"], "limit": 5, "strict": True, "w": 0.5},
                    "inputs": {"chunk_ids": 1},
                },
                "dependencies": [1],
            },
            {
                "step_id": 3,
                "type": "multi_hop",
                "parameters": {"seeds_from": [1, 2], "hops": 3, "relationships": ["RELATED"]},
                "dependencies": [1, 2],
                "condition": "len(step_2.result) > 0",
            },
            {
                "step_id": 4,
                "type": "filter",
                "modality": "image",
                "parameters": {
                    "source": 3,
                    "min_score": 0.2,
                    "kinds": ["image", "chunk"],
                    "modality": "image",
                    "document_ids": ["doc:1"],
                    "k": 3,
                },
                "dependencies": [3],
            },
            {
                "step_id": 5,
                "type": "rerank",
                "parameters": {"sources": [3, 4], "query": "pump", "method": "lexical"},
                "dependencies": [3, 4],
            },
            {
                "step_id": 6,
                "type": "aggregate",
                "parameters": {"sources": [1, 5], "method": "max", "rrf_k": 10},
                "dependencies": [1, 5],
            },
            {
                "step_id": 7,
                "type": "llm_call",
                "parameters": {"prompt": "Answer.", "sources": [6], "max_tokens": 64},
                "dependencies": [6],
            },
            {
                "step_id": 8,
                "type": "tool_call",
                "parameters": {
                    "tool": "unit_convert",
                    "arguments": {"value": 3, "units": ["bar", "psi"], "opts": {"round": True}},
                    "inputs": {"nodes": 6},
                },
                "dependencies": [6],
                "condition": "step_6.status == 'ok'",
            },
        ],
        "traceability": False,
    }


def test_the_design_example_parses() -> None:
    plan = Plan.parse(DESIGN_EXAMPLE)
    step = plan.plan[0]
    assert isinstance(step, VectorSearchStep)
    assert step.step_id == 1
    assert step.modality == "text"
    assert step.parameters.query == "who maintains the X-200 pump"
    assert step.parameters.k == 10
    assert step.parameters.index == "chunk_embedding"
    assert step.dependencies == ()
    assert step.condition is None
    assert step.trace == StepTrace(source="rule-based", explanation="dense search over chunks")
    assert plan.traceability is True


def test_every_step_type_parses_into_its_class() -> None:
    plan = Plan.parse(full_plan())
    kinds = [type(s) for s in plan.plan]
    assert kinds == [
        VectorSearchStep,
        GraphQueryStep,
        MultiHopStep,
        FilterStep,
        RerankStep,
        AggregateStep,
        LlmCallStep,
        ToolCallStep,
    ]
    graph_query = plan.step(2)
    assert isinstance(graph_query, GraphQueryStep)
    params = graph_query.parameters.params
    assert params == {"entity_ids": ["x-200"], "limit": 5, "strict": True, "w": 0.5}
    assert type(params["strict"]) is bool and type(params["limit"]) is int
    assert plan.traceability is False
    assert plan.step_ids == (1, 2, 3, 4, 5, 6, 7, 8)


def test_defaults() -> None:
    plan = Plan.parse(
        {
            "plan": [
                {"step_id": 1, "type": "vector_search", "parameters": {"query": "q"}},
                {"step_id": 2, "type": "multi_hop", "parameters": {"seeds_from": [1]}},
            ]
        }
    )
    first, second = plan.plan
    assert first.trace == StepTrace(source="rule-based", explanation="")
    assert (first.modality, first.dependencies, first.condition) == ("text", (), None)
    assert isinstance(second, MultiHopStep)
    hop = second.parameters
    assert (hop.hops, hop.relationships, hop.k, hop.damping, hop.max_nodes) == (
        2,
        ("MENTIONS", "RELATED"),
        10,
        0.85,
        2000,
    )
    assert plan.traceability is True


def test_json_round_trip_is_lossless() -> None:
    plan = Plan.parse(full_plan())
    again = Plan.parse(plan.to_json())
    assert again == plan
    assert json.loads(plan.to_json(indent=2)) == json.loads(plan.to_json())
    # Text, bytes and mappings are all accepted.
    assert Plan.parse(plan.to_json().encode()) == plan
    assert Plan.parse(json.loads(plan.to_json())) == plan


def test_reads_collects_parameters_and_condition() -> None:
    plan = Plan.parse(full_plan())
    assert plan.step(1).reads() == frozenset()
    assert plan.step(2).reads() == {1}
    assert plan.step(3).reads() == {1, 2}
    assert plan.step(4).reads() == {3}
    assert plan.step(5).reads() == {3, 4}
    assert plan.step(6).reads() == {1, 5}
    assert plan.step(7).reads() == {6}
    assert plan.step(8).reads() == {6}
    only_condition = Plan.parse(
        {
            "plan": [
                {
                    "step_id": 9,
                    "type": "vector_search",
                    "parameters": {"query_from": 4},
                    "condition": "step_7.count == 0 or step_8.status == 'ok'",
                }
            ]
        }
    )
    assert only_condition.step(9).reads() == {4, 7, 8}


def test_models_are_frozen() -> None:
    plan = Plan.parse(full_plan())
    with pytest.raises(ValidationError):
        plan.traceability = True  # type: ignore[misc]
    with pytest.raises(ValidationError):
        plan.plan[0].step_id = 5  # type: ignore[misc]


def test_repeated_ids_in_lists_are_dropped_in_order() -> None:
    plan = Plan.parse(
        {
            "plan": [
                {
                    "step_id": 3,
                    "type": "aggregate",
                    "parameters": {"sources": [2, 1, 2]},
                    "dependencies": [2, 1, 2, 1],
                }
            ]
        }
    )
    step = plan.step(3)
    assert isinstance(step, AggregateStep)
    assert step.parameters.sources == (2, 1)
    assert step.dependencies == (2, 1)


def test_blank_condition_means_none_and_condition_is_normalised() -> None:
    plan = Plan.parse(
        {
            "plan": [
                {"step_id": 1, "type": "vector_search", "parameters": {"query": "q"}},
                {
                    "step_id": 2,
                    "type": "vector_search",
                    "parameters": {"query": "q"},
                    "condition": "   ",
                },
                {
                    "step_id": 3,
                    "type": "vector_search",
                    "parameters": {"query": "q"},
                    "condition": "  step_1.count == 0 ",
                    "dependencies": [1],
                },
            ]
        }
    )
    assert plan.step(2).condition is None
    assert plan.step(3).condition == "step_1.count == 0"


def test_step_lookup() -> None:
    plan = Plan.parse(full_plan())
    assert plan.step(5).type == "rerank"
    with pytest.raises(PlanError) as info:
        plan.step(42)
    assert info.value.step_id == 42


def _step(**overrides: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"step_id": 4, "type": "vector_search", "parameters": {"query": "q"}}
    step.update(overrides)
    return step


def _error(document: Any) -> PlanError:
    with pytest.raises(PlanError) as info:
        Plan.parse(document)
    return info.value


@pytest.mark.parametrize(
    ("step", "fragments"),
    [
        (_step(parameters={"query": "q", "k": 500}), ["parameters.k", "less than or equal to 200"]),
        (_step(parameters={"query": "q", "k": 0}), ["parameters.k", "greater than or equal to 1"]),
        (_step(parameters={}), ["exactly one of 'query' and 'query_from'"]),
        (_step(parameters={"query": "q", "query_from": 1}), ["exactly one of"]),
        (_step(parameters={"query": ""}), ["parameters.query"]),
        (_step(parameters={"query": "q", "index": "people"}), ["parameters.index"]),
        (_step(parameters={"query": "q", "top_k": 3}), ["parameters.top_k", "Extra inputs"]),
        (_step(colour="red"), ["colour", "Extra inputs"]),
        (_step(modality="video"), ["modality"]),
        (_step(dependencies=[0]), ["dependencies.0"]),
        (_step(condition="step_1.result.__class__"), ["condition", "'__class__' is not allowed"]),
        (_step(type="sql"), ["unknown step type 'sql' (not run)", "document_dates"]),
        (
            _step(type="graph_query", parameters={"template": "DROP ALL"}),
            ["graph_query", "parameters.template", "pattern"],
        ),
        (
            _step(
                type="graph_query",
                parameters={"template": "t", "params": {"ids": 1}, "inputs": {"ids": 1}},
            ),
            ["given both in 'params' and 'inputs'"],
        ),
        (
            _step(type="graph_query", parameters={"template": "t", "params": {"a b": 1}}),
            ["parameters.params.a b"],
        ),
        (
            _step(type="graph_query", parameters={"template": "t", "params": {"x": {"y": 1}}}),
            ["parameters.params.x"],
        ),
        (
            _step(type="multi_hop", parameters={"seeds_from": [1], "hops": 4}),
            ["multi_hop", "parameters.hops", "less than or equal to 3"],
        ),
        (_step(type="multi_hop", parameters={"seeds_from": []}), ["parameters.seeds_from"]),
        (
            _step(type="multi_hop", parameters={"seeds_from": [1], "damping": 1.0}),
            ["parameters.damping"],
        ),
        (
            _step(type="multi_hop", parameters={"seeds_from": [1], "relationships": ["HAS_STEP"]}),
            ["parameters.relationships.0"],
        ),
        (_step(type="filter", parameters={"source": 1, "kinds": ["table"]}), ["kinds.0"]),
        (_step(type="filter", parameters={"source": 1, "kinds": []}), ["parameters.kinds"]),
        (_step(type="rerank", parameters={"sources": [1]}), ["parameters.query", "Field required"]),
        (_step(type="aggregate", parameters={"sources": [1], "method": "avg"}), ["method"]),
        (_step(type="llm_call", parameters={"prompt": ""}), ["parameters.prompt"]),
        (
            _step(type="tool_call", parameters={"tool": "rm -rf", "arguments": {}}),
            ["parameters.tool", "pattern"],
        ),
        (
            _step(
                type="tool_call",
                parameters={"tool": "t", "arguments": {"a": 1}, "inputs": {"a": 1}},
            ),
            ["given both in 'arguments' and 'inputs'"],
        ),
    ],
)
def test_errors_name_the_step_and_the_field(step: dict[str, Any], fragments: list[str]) -> None:
    first = {"step_id": 1, "type": "vector_search", "parameters": {"query": "fine"}}
    error = _error({"plan": [first, step]})
    assert error.step_id == 4
    message = str(error)
    assert message.startswith("invalid plan: step 4: plan[1] (step_id 4")
    for fragment in fragments:
        assert fragment in message, message


def test_several_errors_are_all_reported() -> None:
    error = _error(
        {
            "plan": [
                _step(step_id=1, parameters={"query": "q", "k": 999}),
                _step(step_id=2, type="multi_hop", parameters={"seeds_from": [1], "hops": 9}),
            ]
        }
    )
    assert error.step_id == 1
    assert "2 problems" in str(error)
    assert "plan[0] (step_id 1, vector_search): parameters.k" in str(error)
    assert "plan[1] (step_id 2, multi_hop): parameters.hops" in str(error)


def test_a_step_without_an_integer_id_is_still_located() -> None:
    error = _error({"plan": [_step(step_id="one")]})
    assert error.step_id is None
    assert "plan[0]" in str(error) and "step_id" in str(error)


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ("{not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
        ("[1, 2]", "must be a JSON object, not list"),
        ({"plan": []}, "at least 1 item"),
        ({}, "plan: Field required"),
        ({"plan": [_step()], "extra": 1}, "extra: Extra inputs are not permitted"),
        ({"plan": [_step()], "traceability": "maybe"}, "traceability"),
        ({"plan": "steps"}, "plan"),
    ],
)
def test_document_level_errors(document: Any, fragment: str) -> None:
    error = _error(document)
    assert fragment in str(error)


def test_plan_size_limit() -> None:
    steps = [_step(step_id=i) for i in range(1, MAX_PLAN_STEPS + 2)]
    error = _error({"plan": steps})
    assert f"at most {MAX_PLAN_STEPS} items" in str(error)
    assert len(Plan.parse({"plan": steps[:MAX_PLAN_STEPS]}).plan) == MAX_PLAN_STEPS


def test_vector_search_params_directly() -> None:
    assert VectorSearchParams(query_from=3).reads() == {3}
    with pytest.raises(ValidationError):
        VectorSearchParams()


def test_json_schema_describes_the_union_and_is_exported() -> None:
    schema = plan_json_schema()
    assert schema["title"] == "Plan"
    assert schema["$schema"].endswith("2020-12/schema")
    step_union = schema["properties"]["plan"]["items"]
    assert step_union["discriminator"]["propertyName"] == "type"
    assert set(step_union["discriminator"]["mapping"]) == {
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
        "document_types",
        "document_dates",
        "document_authors",
        "audio_transcription",
        "image_embedding",
        "demote",
    }
    assert schema["properties"]["plan"]["maxItems"] == MAX_PLAN_STEPS
    assert schema["$defs"]["VectorSearchStep"]["additionalProperties"] is False
    exported = ROOT / "docs" / "plan.schema.json"
    assert exported.is_file(), "docs/plan.schema.json is missing: run scripts/export_plan_schema.py"
    assert json.loads(exported.read_text(encoding="utf-8")) == schema, (
        "docs/plan.schema.json is stale: run scripts/export_plan_schema.py"
    )


def test_the_document_step_types_are_one_group_of_the_step_types() -> None:
    """The document tools are named once (params.DocumentStepType, part of StepType): they are
    the steps the document handlers run, and the agent answers from them (agent.loop)."""
    from kgrag.agent import loop
    from kgrag.executor.document_handlers import DOCUMENT_HANDLERS
    from kgrag.planner.params import DOCUMENT_STEP_TYPES, STEP_TYPES

    assert set(DOCUMENT_STEP_TYPES) <= STEP_TYPES
    handled = {get_args(r.step.model_fields["type"].annotation)[0] for r in DOCUMENT_HANDLERS}
    assert handled == set(DOCUMENT_STEP_TYPES)
    assert not hasattr(loop, "DOCUMENT_STEPS")  # no second list
