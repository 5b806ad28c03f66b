"""Plan validation: the DAG checks, with the real Cypher template corpus."""

from __future__ import annotations

from typing import Any

import networkx as nx
import pytest

from kgrag.errors import PlanError
from kgrag.graph import cypher
from kgrag.planner.models import Plan, VectorSearchStep
from kgrag.planner.validate import generations, validate_plan

TOOLS = {"unit_convert"}


def template_exists(name: str) -> bool:
    return cypher.exists(f"templates/{name}")


def check(plan: Plan, **kwargs: Any) -> nx.DiGraph:
    return validate_plan(
        plan, template_exists=template_exists, tool_exists=TOOLS.__contains__, **kwargs
    )


def vs(step_id: int, deps: list[int] | None = None, **extra: Any) -> dict[str, Any]:
    step: dict[str, Any] = {
        "step_id": step_id,
        "type": "vector_search",
        "parameters": {"query": f"q{step_id}"},
        "dependencies": deps or [],
    }
    step.update(extra)
    return step


def agg(step_id: int, sources: list[int], deps: list[int] | None = None) -> dict[str, Any]:
    return {
        "step_id": step_id,
        "type": "aggregate",
        "parameters": {"sources": sources},
        "dependencies": sources if deps is None else deps,
    }


def plan_of(*steps: dict[str, Any]) -> Plan:
    return Plan.parse({"plan": list(steps)})


def error_of(plan: Plan, **kwargs: Any) -> PlanError:
    with pytest.raises(PlanError) as info:
        check(plan, **kwargs)
    return info.value


def test_a_valid_dag_gives_its_graph_and_generations() -> None:
    plan = plan_of(
        vs(1),
        {
            "step_id": 2,
            "type": "graph_query",
            "parameters": {"template": "entity_chunks", "params": {"entity_ids": ["x-200"]}},
        },
        {
            "step_id": 3,
            "type": "multi_hop",
            "parameters": {"seeds_from": [1, 2]},
            "dependencies": [1, 2],
        },
        vs(4, condition="len(step_1.result) == 0", deps=[1]),
        agg(5, [1, 3, 4]),
        {
            "step_id": 6,
            "type": "tool_call",
            "parameters": {"tool": "unit_convert", "inputs": {"nodes": 5}},
            "dependencies": [5],
        },
    )
    graph = check(plan)
    assert isinstance(graph, nx.DiGraph)
    assert set(graph.nodes) == {1, 2, 3, 4, 5, 6}
    assert set(graph.edges) == {(1, 3), (2, 3), (1, 4), (1, 5), (3, 5), (4, 5), (5, 6)}
    assert graph.nodes[4]["step"] == plan.step(4)
    assert generations(graph) == [[1, 2], [3, 4], [5], [6]]


def test_generations_sort_ids_and_ignore_plan_order() -> None:
    plan = plan_of(vs(9), vs(3), agg(7, [9, 3]), vs(1))
    assert generations(check(plan)) == [[1, 3, 9], [7]]


def test_an_ordering_only_dependency_is_allowed() -> None:
    # Step 2 waits for step 1 without reading it.
    graph = check(plan_of(vs(1), vs(2, deps=[1])))
    assert generations(graph) == [[1], [2]]


def test_duplicate_step_ids() -> None:
    error = error_of(plan_of(vs(1), vs(2), vs(1)))
    assert error.step_id == 1
    assert "step id 1 is used by 2 steps (plan positions 0, 2)" in str(error)


def test_dependency_on_a_missing_step() -> None:
    error = error_of(plan_of(vs(1), vs(2, deps=[1, 7])))
    assert error.step_id == 2
    assert "depends on step 7, which is not in the plan" in str(error)


def test_self_dependency() -> None:
    error = error_of(plan_of(vs(1), vs(2, deps=[2])))
    assert error.step_id == 2
    assert "depends on itself" in str(error)


def test_cycle_is_named_with_its_path() -> None:
    plan = plan_of(vs(1), agg(2, [1, 4]), agg(3, [2]), agg(4, [3]))
    error = error_of(plan)
    assert error.step_id == 2
    assert "the dependencies form a cycle: 2 -> 3 -> 4 -> 2" in str(error)


def test_two_step_cycle() -> None:
    error = error_of(plan_of(vs(5, deps=[6]), vs(6, deps=[5])))
    assert error.step_id == 5
    assert "cycle: 5 -> 6 -> 5" in str(error)


def test_reading_a_step_that_is_not_a_dependency() -> None:
    error = error_of(plan_of(vs(1), vs(2), agg(3, [1, 2], deps=[1])))
    assert error.step_id == 3
    assert "reads step 2 (in its parameters) but does not depend on it" in str(error)
    assert "add 2 to its dependencies" in str(error)


def test_a_transitive_dependency_is_not_enough() -> None:
    # 3 depends on 2 which depends on 1, but 3 reads 1 directly.
    plan = plan_of(vs(1), agg(2, [1]), agg(3, [1, 2], deps=[2]))
    error = error_of(plan)
    assert error.step_id == 3
    assert "reads step 1" in str(error)


def test_reading_through_the_condition_needs_a_dependency_too() -> None:
    error = error_of(plan_of(vs(1), vs(2, condition="step_1.count == 0")))
    assert error.step_id == 2
    assert "reads step 1 (in its condition) but does not depend on it" in str(error)


def test_reading_a_missing_step() -> None:
    plan = plan_of(vs(1), {"step_id": 2, "type": "filter", "parameters": {"source": 8}})
    error = error_of(plan)
    assert error.step_id == 2
    assert "reads step 8 (in its parameters), which is not in the plan" in str(error)


def test_reading_its_own_result() -> None:
    plan = plan_of({"step_id": 1, "type": "vector_search", "parameters": {"query_from": 1}})
    error = error_of(plan)
    assert "reads its own result" in str(error)


def test_unknown_template() -> None:
    plan = plan_of({"step_id": 1, "type": "graph_query", "parameters": {"template": "drop_all"}})
    error = error_of(plan)
    assert error.step_id == 1
    assert "unknown Cypher template 'drop_all'" in str(error)


def test_every_real_template_is_accepted() -> None:
    names = [n.removeprefix("templates/") for n in cypher.names("templates")]
    assert names, "the corpus has no templates"
    steps = [
        {"step_id": i, "type": "graph_query", "parameters": {"template": name}}
        for i, name in enumerate(names, start=1)
    ]
    assert generations(check(plan_of(*steps))) == [list(range(1, len(names) + 1))]


def test_unknown_tool() -> None:
    plan = plan_of({"step_id": 3, "type": "tool_call", "parameters": {"tool": "shell"}})
    error = error_of(plan)
    assert error.step_id == 3
    assert "unknown tool 'shell'" in str(error)


def test_too_many_steps() -> None:
    plan = plan_of(vs(1), vs(2), vs(3), vs(4))
    error = error_of(plan, max_steps=3)
    assert error.step_id is None
    assert "the plan has 4 steps; at most 3 are allowed" in str(error)
    assert generations(check(plan, max_steps=4)) == [[1, 2, 3, 4]]


def test_a_condition_outside_the_whitelist_is_refused_even_if_the_model_was_bypassed() -> None:
    good = plan_of(vs(1), vs(2, deps=[1]))
    sneaky = VectorSearchStep.model_construct(
        **{**dict(good.step(2)), "condition": "step_1.result.__class__"}
    )
    plan = Plan.model_construct(plan=(good.step(1), sneaky), traceability=True)
    error = error_of(plan)
    assert error.step_id == 2
    assert "attribute '__class__' is not allowed" in str(error)
