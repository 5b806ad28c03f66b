"""OpenTelemetry spans of answers and ingestion jobs (``pip install 'kgrag[otel]'``, switched on
by ``KGRAG_OTEL_SPANS=true``; nothing imports ``opentelemetry`` otherwise).

:class:`Spans` subscribes to the typed events of a question (:mod:`kgrag.agent.events`): when
its ``complete`` event arrives, it writes one ``kgrag.ask`` span for the answer and a child
``kgrag.step`` span for each step that ran, with the ids of the trace nodes the answer left in
the graph (``kgrag.query_id`` is the Query node's id; ``kgrag.step.node_id`` the Step node's, the
same ``q_...:plan:N`` as :class:`~kgrag.executor.trace.TraceWriter` writes, steps of later
iterations numbered after the earlier ones'), so that a span leads to the trace of that answer
(``kgrag trace ID``). Spans are written once the answer is done, with the start and end times
measured by the run (the answer's latency, each step's duration). An ingestion job gives a
``kgrag.ingest`` span with its counts. Spans go to the process's tracer provider: configure
the OpenTelemetry SDK and an exporter there (``opentelemetry-instrument``, or
``trace.set_tracer_provider``); without one the API drops them.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgrag.agent.events import CompleteEvent, PlanEvent, StepEvent
from kgrag.errors import DependencyMissingError
from kgrag.planner.models import MAX_PLAN_STEPS

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.ingest.pipeline import IngestReport

#: Instrumentation scope of kgrag's spans.
SCOPE = "kgrag"
#: Questions whose events are held at once (a question that failed never completes: the oldest
#: is dropped past this).
MAX_OPEN_QUESTIONS = 1000


@dataclass
class _Question:
    """The events of one question so far."""

    steps_before: int = 0
    """Steps of the earlier iterations' plans: the offset of this iteration's step ids."""
    offsets: dict[int, int] = field(default_factory=dict)
    positions: dict[tuple[int, int], int] = field(default_factory=dict)
    """(iteration, step id) -> the step's place in the merged plan (the trace keeps the first
    MAX_PLAN_STEPS)."""
    steps: list[tuple[StepEvent, int, bool, int]] = field(default_factory=list)
    """Each step event with its step id in the merged plan, whether the trace has its node, and
    its end (ns)."""


class Spans:
    """The span writer; :meth:`on_event` takes a question's events, :meth:`on_ingest` the report
    of an ingestion job. Thread-safe: questions run in many threads at once."""

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        try:
            from opentelemetry import trace
        except ImportError as e:
            raise DependencyMissingError("opentelemetry-api", "otel") from e
        self._trace = trace
        self._tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        self._open: OrderedDict[str, _Question] = OrderedDict()
        self._lock = threading.Lock()

    # -------------------------------------------------------------------------- questions
    def on_event(self, event: object) -> None:
        if isinstance(event, PlanEvent):
            with self._lock:
                q = self._question(event.query_id)
                q.offsets[event.iteration] = q.steps_before
                for n, step in enumerate(event.plan.plan):
                    q.positions[(event.iteration, step.step_id)] = q.steps_before + n
                q.steps_before += len(event.plan.plan)
        elif isinstance(event, StepEvent):
            with self._lock:
                q = self._question(event.query_id)
                merged = event.step_id + q.offsets.get(event.iteration, 0)
                place = q.positions.get((event.iteration, event.step_id), MAX_PLAN_STEPS)
                q.steps.append((event, merged, place < MAX_PLAN_STEPS, time.time_ns()))
        elif isinstance(event, CompleteEvent):
            with self._lock:
                done = self._open.pop(event.query_id, _Question())
            self._write_answer(event, done, time.time_ns())

    def _question(self, query_id: str) -> _Question:
        q = self._open.get(query_id)
        if q is None:
            q = self._open[query_id] = _Question()
            while len(self._open) > MAX_OPEN_QUESTIONS:
                self._open.popitem(last=False)
        return q

    def _write_answer(self, event: CompleteEvent, q: _Question, end: int) -> None:
        qid = event.query_id
        attributes: dict[str, Any] = {
            "kgrag.query_id": qid,
            "kgrag.answer_id": f"{qid}:answer",
            "kgrag.exit_reason": event.exit_reason,
            "kgrag.iterations": event.iterations,
            "kgrag.cost_usd": event.cost,
        }
        if q.offsets:  # a reformatted answer has no plan
            attributes["kgrag.plan_id"] = f"{qid}:plan"
        # The answer's latency ends when the answer is built; the trace writer (another
        # subscriber) may still be writing when this event arrives, so the root starts no later
        # than its first step.
        starts = [step_end - _ns(step.duration_ms) for step, _, _, step_end in q.steps]
        start = min([end - _ns(event.latency_ms), *starts])
        root = self._tracer.start_span("kgrag.ask", start_time=start, attributes=attributes)
        context = self._trace.set_span_in_context(root)
        for step, merged, traced, step_end in q.steps:
            step_attributes: dict[str, Any] = {
                "kgrag.query_id": qid,
                "kgrag.step.step_id": merged,
                "kgrag.step.iteration": step.iteration,
                "kgrag.step.type": step.type,
                "kgrag.step.modality": step.modality,
                "kgrag.step.status": step.status,
                "kgrag.step.result_count": step.count,
            }
            if traced:
                step_attributes["kgrag.step.node_id"] = f"{qid}:plan:{merged}"
            span = self._tracer.start_span(
                f"kgrag.step {step.type}",
                context=context,
                start_time=step_end - _ns(step.duration_ms),
                attributes=step_attributes,
            )
            if step.status == "failed":
                span.set_status(self._trace.StatusCode.ERROR, step.error or "failed")
            span.end(end_time=step_end)
        root.end(end_time=end)

    # -------------------------------------------------------------------------- ingestion
    def on_ingest(self, report: IngestReport) -> None:
        """One ``kgrag.ingest`` span for a finished ingestion job."""
        end = time.time_ns()
        attributes: dict[str, Any] = {
            "kgrag.ingest.ingested": report.ingested,
            "kgrag.ingest.skipped": report.skipped,
            "kgrag.ingest.failed": report.failed,
            "kgrag.ingest.recovered": len(report.recovered),
            "kgrag.ingest.documents": len(report.document_ids),
        }
        if report.shard is not None:
            attributes["kgrag.ingest.shard"] = report.shard
        for stage, seconds in report.stage_seconds.items():
            attributes[f"kgrag.ingest.stage_seconds.{stage}"] = seconds
        span = self._tracer.start_span(
            "kgrag.ingest", start_time=end - _ns(report.seconds * 1000), attributes=attributes
        )
        if report.failed:
            span.set_status(self._trace.StatusCode.ERROR, f"{report.failed} files failed")
        span.end(end_time=end)


def subscribe(agent: KnowledgeAgent, tracer_provider: TracerProvider | None = None) -> Spans:
    """Have ``agent``'s questions and ingestion jobs write spans (what ``otel_spans`` does)."""
    spans = Spans(tracer_provider)
    agent.event_subscribers.append(spans.on_event)
    agent.ingest_subscribers.append(spans.on_ingest)
    return spans


def _ns(ms: float) -> int:
    return int(max(ms, 0.0) * 1_000_000)
