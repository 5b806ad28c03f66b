"""OpenTelemetry spans (kgrag.ops.otel), on each engine, with the real SDK and its in-memory
exporter: an agent subscribed as ``otel_spans`` does ingests the demo corpus's texts and answers
real questions; the spans it leaves are one ``kgrag.ask`` per answer with a child
``kgrag.step`` per step that ran, whose ids are those of the Query and Step nodes of that
answer's trace in the graph, and one ``kgrag.ingest`` span per ingestion job with its counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kgrag.agent.agent import KnowledgeAgent
from kgrag.demo.corpus import make_corpus
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from kgrag.ops.otel import subscribe
from tests.support.engines import Engine

STEPS = """
MATCH (q:Query {id: $id})-[:PLANNED]->(p:Plan)-[:HAS_STEP]->(s:Step)
RETURN p.id AS plan_id, s.id AS id, s.step_id AS step_id, s.type AS type, s.status AS status
"""


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    """The process's tracer provider (an SDK one, set here unless a test set it before) with
    an in-memory exporter added."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    found = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(found))
    return found


@pytest.fixture(scope="module")
def traced(
    module_engine: Engine, exporter: InMemorySpanExporter, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[KnowledgeAgent, list[ReadableSpan]]]:
    folder = tmp_path_factory.mktemp("otel")
    exporter.clear()
    # subscribed as KnowledgeAgent.open does with otel_spans (the text model loaded once a run)
    with module_engine.fresh() as store:
        agent = KnowledgeAgent(store, default_text_embedder())
        subscribe(agent)
        # the demo's texts (its images, PDF and recording would only add model loads here)
        paths = [str(p) for p in make_corpus(folder / "corpus") if p.suffix in {".md", ".txt"}]
        report = agent.ingest(paths)
        assert report.failed == 0, report.failures
        ingest_spans = [s for s in exporter.get_finished_spans() if s.name == "kgrag.ingest"]
        yield agent, ingest_spans


def _steps(store: GraphStore, query_id: str) -> list[dict[str, object]]:
    return store.read_freeform(STEPS, {"id": query_id})


@pytest.mark.parametrize(
    "question",
    [
        "Who maintains the part that the meeting agreed to replace?",
        "What happened to the Feed Pump FP-2 on 3 March?",
    ],
)
def test_an_answer_gives_a_span_tree_with_the_ids_of_its_trace(
    traced: tuple[KnowledgeAgent, list[ReadableSpan]],
    exporter: InMemorySpanExporter,
    question: str,
) -> None:
    agent, _ = traced
    exporter.clear()
    answer = agent.ask(question)
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.name == "kgrag.ask"]
    assert len(roots) == 1
    root = roots[0]
    assert root.parent is None
    assert root.attributes is not None
    assert root.attributes["kgrag.query_id"] == answer.query_id
    assert root.attributes["kgrag.answer_id"] == f"{answer.query_id}:answer"
    assert root.attributes["kgrag.exit_reason"] == answer.exit_reason
    assert root.attributes["kgrag.iterations"] == answer.iterations

    nodes = _steps(agent.store, answer.query_id)
    assert nodes, "the answer left no Step nodes"
    assert root.attributes["kgrag.plan_id"] == nodes[0]["plan_id"]
    children = [s for s in spans if s.parent is not None]
    assert len(children) == len(spans) - 1
    assert all(s.name.startswith("kgrag.step ") for s in children)
    assert all(s.context.trace_id == root.context.trace_id for s in children)
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in children)
    # every step that ran is a span carrying its Step node's id, type and status; a step the
    # trace records as not reached never ran, so it has no span
    ran = {str(n["id"]): n for n in nodes if n["status"] != "skipped"}
    by_node = {}
    for s in children:
        assert s.attributes is not None
        assert s.attributes["kgrag.query_id"] == answer.query_id
        by_node[str(s.attributes["kgrag.step.node_id"])] = s
    assert set(ran) <= set(by_node)
    assert set(by_node) <= {str(n["id"]) for n in nodes}
    for node_id, s in by_node.items():
        node = next(n for n in nodes if n["id"] == node_id)
        assert s.attributes is not None
        assert s.attributes["kgrag.step.step_id"] == node["step_id"]
        assert s.attributes["kgrag.step.type"] == node["type"]
        assert s.attributes["kgrag.step.status"] == node["status"]
        assert s.name == f"kgrag.step {node['type']}"
        assert root.start_time is not None and root.end_time is not None
        assert s.start_time is not None and s.end_time is not None
        assert root.start_time <= s.start_time <= s.end_time <= root.end_time


def test_an_ingestion_job_gives_a_span_with_its_counts(
    traced: tuple[KnowledgeAgent, list[ReadableSpan]], tmp_path: Path
) -> None:
    agent, spans = traced
    assert len(spans) == 1
    first = spans[0].attributes
    assert first is not None
    ingested = agent.store.read("document_list", {"principals": [], "admin": True})
    assert first["kgrag.ingest.ingested"] == len(ingested) > 0
    assert first["kgrag.ingest.failed"] == 0
    assert spans[0].parent is None


def test_a_job_with_a_bad_file_is_an_error_span(
    traced: tuple[KnowledgeAgent, list[ReadableSpan]],
    exporter: InMemorySpanExporter,
    tmp_path: Path,
) -> None:
    agent, _ = traced
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog")  # a truncated PDF
    exporter.clear()
    report = agent.ingest([str(bad)])
    assert report.failed == 1
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "kgrag.ingest"]
    assert span.attributes is not None
    assert span.attributes["kgrag.ingest.failed"] == 1
    assert span.status.status_code == trace.StatusCode.ERROR
