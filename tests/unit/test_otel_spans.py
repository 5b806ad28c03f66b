"""The spans of a question of two iterations (kgrag.ops.otel, real OpenTelemetry SDK): the step
spans of the second iteration carry the ids the trace gives those steps in its merged plan
(:func:`kgrag.agent.planning.merge_iterations`), and a failed step is an error span."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from kgrag.agent.events import CompleteEvent, PlanEvent, StepEvent
from kgrag.agent.planning import merge_iterations
from kgrag.ops.otel import Spans
from kgrag.planner.models import Plan

SEARCH = {"type": "vector_search", "parameters": {"query": "pump"}}


def _plan(n: int) -> Plan:
    return Plan.parse({"plan": [{"step_id": i, **SEARCH} for i in range(1, n + 1)]})


def test_steps_of_a_later_iteration_carry_their_ids_in_the_merged_trace_plan() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spans = Spans(provider)
    qid = "q_0123456789abcdef"
    plans = {1: _plan(2), 2: _plan(3)}
    for iteration, plan in plans.items():
        spans.on_event(
            PlanEvent(query_id=qid, iteration=iteration, query="q", source="rule", plan=plan)
        )
        for step in plan.plan:
            failed = iteration == 2 and step.step_id == 3
            spans.on_event(
                StepEvent(
                    query_id=qid,
                    iteration=iteration,
                    step_id=step.step_id,
                    type=step.type,
                    modality=step.modality,
                    status="failed" if failed else "ok",
                    count=0 if failed else 4,
                    duration_ms=2.0,
                    error="timed out" if failed else None,
                )
            )
    spans.on_event(
        CompleteEvent(
            query_id=qid, exit_reason="max_iterations", iterations=2, cost=0.0, latency_ms=50.0
        )
    )

    merged, _ = merge_iterations([(p, {}, f"iteration {i}") for i, p in plans.items()])
    expected = [f"{qid}:plan:{s.step_id}" for s in merged.plan]
    finished = exporter.get_finished_spans()
    steps = [s for s in finished if s.name.startswith("kgrag.step ")]
    assert [s.attributes["kgrag.step.node_id"] for s in steps if s.attributes] == expected
    assert expected[-1] == f"{qid}:plan:5"
    (root,) = [s for s in finished if s.name == "kgrag.ask"]
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in steps)
    assert [s.status.status_code for s in steps].count(StatusCode.ERROR) == 1
    assert steps[-1].status.status_code == StatusCode.ERROR
    assert steps[-1].status.description == "timed out"
