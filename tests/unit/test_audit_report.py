"""The audit report assembled from a stored trace's shape: reasons per step, sources, the
verification check, and an HTML page that escapes every text and loads nothing."""

from __future__ import annotations

import json
import re

from kgrag.agent.audit import AuditReport, assemble_audit
from kgrag.core import Trace

HOSTILE = '</pre><script>alert("x")</script><img src=x onerror=alert(1)>'


def _trace(*, cite: str = "d1:c0", groundedness: float | None = None) -> Trace:
    returned = [
        {"id": "d1:c0", "kind": "Chunk", "rank": 1, "score": 0.9, "text": f"Pump FP-2 {HOSTILE}"},
        {"id": "d2:c3", "kind": "Chunk", "rank": 2, "score": 0.4, "text": "other"},
    ]
    return Trace.model_validate(
        {
            "query": {
                "id": "q_1",
                "text": f"Who fixed it? {HOSTILE}",
                "user": "ada",
                "created_at": "2026-01-01T00:00:00+00:00",
                "planner": "rule",
                "exit_reason": "max_iterations",
                "iterations": 3,
                "latency_ms": 12.5,
                "cost": 0.0042,
            },
            "plan": {
                "id": "q_1:plan",
                "source": "llm",
                "fallback_reason": None,
                "json": {"plan": []},
            },
            "steps": [
                {
                    "step_id": 1,
                    "type": "vector_search",
                    "modality": "text",
                    "status": "ok",
                    "error": None,
                    "dependencies": [],
                    "condition": None,
                    "cypher": "CALL db.index.vector.queryNodes('chunk_embedding', $k, $vector)",
                    "parameters": {"query": "Who fixed it?", "k": 10},
                    "cypher_parameters": [{"vector": "<vector of 384 floats>", "k": 40}],
                    "duration_ms": 31.0,
                    "result_count": 2,
                    "explanation": "dense search",
                    "returned": returned,
                },
                {
                    "step_id": 2,
                    "type": "graph_query",
                    "modality": "text",
                    "status": "skipped",
                    "error": "condition is false: len(step_1.result) == 0",
                    "dependencies": [1],
                    "condition": "len(step_1.result) == 0",
                    "cypher": None,
                    "parameters": {"template": "chunks_fulltext"},
                    "cypher_parameters": [],
                    "duration_ms": 0.0,
                    "result_count": 0,
                    "explanation": "lexical fallback",
                    "returned": [],
                },
                {
                    "step_id": 3,
                    "type": "multi_hop",
                    "modality": "text",
                    "status": "error",
                    "error": "store went away",
                    "dependencies": [1],
                    "condition": None,
                    "cypher": None,
                    "parameters": {},
                    "cypher_parameters": [],
                    "duration_ms": 2.0,
                    "result_count": 0,
                    "explanation": "expand",
                    "returned": [],
                },
            ],
            "answer": {
                "text": f"Grace fixed it [1]. {HOSTILE}",
                "groundedness": groundedness,
                "verdict": "grounded" if groundedness is not None else None,
                "mode": "llm",
                "citations": [{"marker": 1, "node_id": cite, "label": "Chunk"}],
            },
        }
    )


CHUNK = {
    "id": "d1:c0",
    "text": "Pump FP-2 " + "x " * 600,
    "page": 4,
    "start_s": None,
    "end_s": None,
    "document_id": "d1",
    "title": f"Manual {HOSTILE}",
    "uri": "/data/manual.pdf",
    "modality": "pdf",
}


def test_steps_carry_why_they_ran_were_skipped_or_failed() -> None:
    report = assemble_audit(_trace(), ["team-a"], [CHUNK])
    reasons = {s.step_id: s.reason for s in report.steps}
    assert reasons[1].startswith("ran: dense search") and "2 item(s)" in reasons[1]
    assert reasons[2] == "skipped: condition is false: len(step_1.result) == 0"
    assert reasons[3] == "failed: store went away"
    assert report.steps[0].cypher_parameters == ({"vector": "<vector of 384 floats>", "k": 40},)
    assert [e.id for e in report.steps[0].evidence] == ["d1:c0", "d2:c3"]
    assert report.groups == ("team-a",)
    assert report.cost == 0.0042 and report.iterations == 3
    assert any("max_iterations" in line and "iteration limit" in line for line in report.reasoning)


def test_sources_come_with_document_page_and_a_bounded_excerpt() -> None:
    report = assemble_audit(_trace(), [], [CHUNK])
    (src,) = report.sources
    assert (src.marker, src.document_id, src.page, src.uri) == (1, "d1", 4, "/data/manual.pdf")
    assert src.returned_by == (1,)
    assert src.excerpt is not None and src.excerpt.startswith("Pump FP-2")
    assert len(src.excerpt) <= 600


def test_a_source_the_asker_cannot_read_is_listed_without_its_text() -> None:
    report = assemble_audit(_trace(), [], [])
    (src,) = report.sources
    assert not src.readable and src.excerpt is None and src.title is None


def test_verification_statuses() -> None:
    assert assemble_audit(_trace(), [], [CHUNK]).verification.status == "not_assessed"
    scored = assemble_audit(_trace(groundedness=0.83), [], [CHUNK]).verification
    assert scored.status == "verified" and scored.groundedness == 0.83
    assert "0.83" in scored.assessment
    stray = assemble_audit(_trace(cite="d9:c9"), [], []).verification
    assert stray.status == "partially_verified"
    assert stray.unsupported_markers == (1,)
    assert (stray.citations_total, stray.citations_in_evidence) == (1, 0)


def test_json_round_trips_through_the_frozen_model() -> None:
    report = assemble_audit(_trace(groundedness=0.5), [], [CHUNK])
    again = AuditReport.model_validate_json(report.to_json())
    assert again == report
    assert json.loads(report.to_json())["verification"]["status"] == "verified"


def test_html_escapes_every_untrusted_text_and_loads_nothing() -> None:
    page = assemble_audit(_trace(groundedness=0.5), [], [CHUNK]).to_html()
    assert "<script" not in page.lower()
    assert "<img" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", page)
    assert "default-src 'none'" in page
    for text in ("Who fixed it?", "Grace fixed it [1].", "vector_search", "chunks_fulltext"):
        assert text in page
    assert page.count('class="badge ') >= 4  # verification + one per step
