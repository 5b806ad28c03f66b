"""SECURITY.md's bounds on plans, each at its edge: the documented maximum is accepted and one
more is refused with an error naming the field. (The step count, DAG and read rules are tested in
tests/unit/test_plan_models.py and test_plan_validate.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from kgrag.errors import PlanError
from kgrag.planner.models import Plan

SEED = {"step_id": 1, "type": "vector_search", "parameters": {"query": "q"}}


def _plan(type_: str, parameters: dict[str, Any]) -> dict[str, Any]:
    step = {"step_id": 2, "type": type_, "parameters": parameters, "dependencies": [1]}
    return {"plan": [SEED, step]}


#: (step type, parameters at the documented bound, the same one over it, the field named)
BOUNDS: dict[str, tuple[str, dict[str, Any], dict[str, Any], str]] = {
    "vector_search k": ("vector_search", {"query": "q", "k": 200}, {"query": "q", "k": 201}, "k"),
    "graph_query k": (
        "graph_query",
        {"template": "chunks_fulltext", "k": 1000},
        {"template": "chunks_fulltext", "k": 1001},
        "k",
    ),
    "template name": ("graph_query", {"template": "t" * 100}, {"template": "t" * 101}, "template"),
    "parameter name": (
        "graph_query",
        {"template": "t", "params": {"p" * 64: 1}},
        {"template": "t", "params": {"p" * 65: 1}},
        "params",
    ),
    "hops": ("multi_hop", {"seeds_from": [1], "hops": 3}, {"seeds_from": [1], "hops": 4}, "hops"),
    "max_nodes": (
        "multi_hop",
        {"seeds_from": [1], "max_nodes": 100_000},
        {"seeds_from": [1], "max_nodes": 100_001},
        "max_nodes",
    ),
    "max_tokens": (
        "llm_call",
        {"prompt": "p", "max_tokens": 32_768},
        {"prompt": "p", "max_tokens": 32_769},
        "max_tokens",
    ),
}


@pytest.mark.parametrize("case", sorted(BOUNDS))
def test_a_plan_parameter_over_its_documented_bound_is_refused(case: str) -> None:
    type_, at_bound, over, field = BOUNDS[case]
    assert len(Plan.parse(_plan(type_, at_bound)).plan) == 2
    with pytest.raises(PlanError) as info:
        Plan.parse(_plan(type_, over))
    assert f"parameters.{field}" in str(info.value), str(info.value)
