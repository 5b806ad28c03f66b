"""Writes the reasoning of an answer into the graph: Query, Plan, one Step per plan step (with
its exact Cypher and parameters, vectors elided), DEPENDS_ON, RETURNED {rank, score, and for a
chunk its section: the heading path} to the evidence, Answer and CITES {marker, section}.
Written for every run, skipped and failed steps included."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from kgrag.core import AccessContext, Decision, Hit, Trace
from kgrag.executor.base import StepOutcome
from kgrag.graph.store import GraphStore
from kgrag.planner.models import Plan

_RETURNED = {
    "chunk": "trace_returned_chunks",
    "segment": "trace_returned_chunks",
    "image": "trace_returned_images",
    "entity": "trace_returned_entities",
    "document": "trace_returned_documents",
}


def elide_vectors(value: Any) -> Any:
    """Replace long float lists (embeddings) by a short marker, recursively."""
    if isinstance(value, list) and len(value) > 8 and all(isinstance(v, float) for v in value):
        return f"<vector of {len(value)} floats>"
    if isinstance(value, dict):
        return {k: elide_vectors(v) for k, v in value.items()}
    if isinstance(value, list):
        return [elide_vectors(v) for v in value]
    return value


class TraceWriter:
    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def write_query(
        self,
        query_id: str,
        text: str,
        *,
        user: str | None,
        groups: Sequence[str],
        planner: str,
        asked_by: str | None = None,
        session_id: str | None = None,
        turn: int = 0,
        exit_reason: str | None = None,
        iterations: int = 1,
        latency_ms: float | None = None,
        cost: float = 0.0,
        query_class: str | None = None,
        intent: str | None = None,
        decisions: Sequence[Decision] = (),
    ) -> None:
        """``decisions``: the judge's decision per iteration, stored as the list of decision
        names (``q.decisions``, for Cypher) and in full as JSON (``q.decisions_json``).
        ``asked_by``: the authenticated principal that asked (as ``user`` when it impersonates)."""
        self.store.write(
            "trace_query",
            {
                "id": query_id,
                "text": text,
                "user": user,
                "groups": list(groups),
                "asked_by": asked_by,
                "created_at": datetime.now(UTC).isoformat(),
                "planner": planner,
                "session_id": session_id,
                "turn": turn,
                "exit_reason": exit_reason,
                "iterations": iterations,
                "latency_ms": latency_ms,
                "cost": cost,
                "query_class": query_class,
                "intent": intent,
                "decisions": [d.decision for d in decisions],
                "decisions_json": json.dumps([d.model_dump() for d in decisions]),
            },
        )

    def write_plan(
        self,
        query_id: str,
        plan_id: str,
        plan: Plan,
        outcomes: Mapping[int, StepOutcome],
        *,
        source: str,
        fallback_reason: str | None = None,
    ) -> None:
        s = self.store
        s.write(
            "trace_plan",
            {
                "query_id": query_id,
                "id": plan_id,
                "source": source,
                "json": plan.to_json(),
                "fallback_reason": fallback_reason,
            },
        )
        rows = []
        for step in plan.plan:
            out = outcomes.get(step.step_id, StepOutcome(status="skipped", error="not reached"))
            statements = [
                {"cypher": text, "parameters": elide_vectors(params)}
                for text, params in out.statements
            ]
            rows.append(
                {
                    "id": f"{plan_id}:{step.step_id}",
                    "step_id": step.step_id,
                    "type": step.type,
                    "modality": step.modality,
                    "parameters": json.dumps(step.parameters.model_dump(mode="json")),
                    "condition": step.condition,
                    "cypher": "\n;\n".join(st["cypher"] for st in statements) or None,
                    "cypher_parameters": json.dumps([st["parameters"] for st in statements]),
                    "status": out.status,
                    "error": out.error,
                    "duration_ms": out.duration_ms,
                    "result_count": out.count,
                    "explanation": step.trace.explanation,
                    "dependencies": list(step.dependencies),
                    "details": json.dumps(out.details) if out.details else None,
                }
            )
        s.write_rows("trace_steps", rows, params={"plan_id": plan_id, "query_id": query_id})
        s.write_rows(
            "trace_step_dependencies",
            [
                {"a": f"{plan_id}:{step.step_id}", "b": f"{plan_id}:{d}"}
                for step in plan.plan
                for d in step.dependencies
            ],
        )
        by_statement: dict[str, list[dict[str, Any]]] = {}
        for sid, out in outcomes.items():
            for rank, hit in enumerate(out.result, start=1):
                name = _RETURNED.get(hit.kind)
                if name:
                    row = {
                        "step": f"{plan_id}:{sid}",
                        "id": hit.id,
                        "rank": rank,
                        "score": hit.score,
                    }
                    if name == "trace_returned_chunks":
                        row["section"] = _section(hit)
                    by_statement.setdefault(name, []).append(row)
        for name, batch in by_statement.items():
            s.write_rows(name, batch)

    def write_answer(
        self,
        query_id: str,
        answer_id: str,
        text: str,
        citations: Sequence[tuple[int, Hit]],
        *,
        groundedness: float | None,
        verdict: str,
        mode: str,
    ) -> None:
        self.store.write(
            "trace_answer",
            {
                "query_id": query_id,
                "id": answer_id,
                "text": text,
                "groundedness": groundedness,
                "verdict": verdict,
                "mode": mode,
            },
        )
        chunks = [
            {"id": h.id, "marker": m, "section": _section(h)}
            for m, h in citations
            if h.kind in ("chunk", "segment")
        ]
        images = [{"id": h.id, "marker": m} for m, h in citations if h.kind == "image"]
        self.store.write_rows("trace_cites_chunks", chunks, params={"answer_id": answer_id})
        self.store.write_rows("trace_cites_images", images, params={"answer_id": answer_id})
        documents = [{"id": h.id, "marker": m} for m, h in citations if h.kind == "document"]
        self.store.write_rows("trace_cites_documents", documents, params={"answer_id": answer_id})


def _section(hit: Hit) -> list[str] | None:
    """The heading path a chunk's evidence is stored with (null outside any section)."""
    return list(hit.section) or None


class TraceVisibility:
    """What of a stored trace a reader may see *now*: evidence of documents they can read at
    this moment (a document whose ACL was narrowed after the question is hidden from its old
    traces), entities a readable chunk mentions. Readability is decided by the graph, with the
    reader's principals as parameters, like every other read."""

    def __init__(
        self, store: GraphStore, access: AccessContext, items: Sequence[Mapping[str, Any]]
    ) -> None:
        docs = sorted({str(x["document_id"]) for x in items if x.get("document_id")})
        entities = sorted({str(x["id"]) for x in items if x.get("kind") == "Entity"})
        params = access.params()
        self.documents = (
            {r["id"] for r in store.read("documents_readable", {"ids": docs, **params})}
            if docs
            else set()
        )
        self.entities = (
            {r["id"] for r in store.read("entity_readable", {"ids": entities, **params})}
            if entities
            else set()
        )
        self.hidden = {str(x["id"]) for x in items if not self.visible(x)} | (
            set(docs) - self.documents
        )

    def visible(self, item: Mapping[str, Any]) -> bool:
        """``item``: a returned or cited node (``id``, ``kind``, ``document_id``)."""
        if item.get("kind") == "Entity":
            return item["id"] in self.entities
        return item.get("document_id") in self.documents

    def scrub(self, value: Any) -> Any:
        """``value`` (step parameters, details) without what is hidden: a dict naming a hidden
        node (``id`` / ``document_id``) is dropped from its list, a hidden id becomes
        ``"[hidden]"``."""
        if isinstance(value, str):
            return "[hidden]" if value in self.hidden else value
        if isinstance(value, list):
            return [self.scrub(v) for v in value if not self._names_hidden(v)]
        if isinstance(value, dict):
            return {k: self.scrub(v) for k, v in value.items()}
        return value

    def _names_hidden(self, value: Any) -> bool:
        return isinstance(value, dict) and any(
            isinstance(value.get(k), str) and value[k] in self.hidden for k in ("id", "document_id")
        )


def read_trace(store: GraphStore, query_id: str, access: AccessContext) -> Trace:
    """One answer's whole story (``Trace.to_json`` is what ``kgrag trace --json`` prints), as
    ``access`` may read it now: evidence, excerpts and citations of documents the reader cannot
    read (any more) are left out, each step and the answer say how many (``hidden``), and the
    answer's text is withheld when it cites such a document. Who may open the query at all is
    the caller's decision (the server: its asker or an admin)."""
    from kgrag.errors import NotFoundError

    rows = store.read("trace_read_query", {"id": query_id})
    if not rows:
        raise NotFoundError(f"no query with id {query_id!r} in {store.uri}")
    q = rows[0]
    step_rows = store.read("trace_read_steps", {"id": query_id})
    for r in step_rows:
        r["returned"] = [x for x in r["returned"] if x.get("id") is not None]
    cited = [
        {**c, "id": c["node_id"], "kind": c["label"]}
        for c in store.read("trace_read_citations", {"id": query_id})
    ]
    seen = TraceVisibility(store, access, [x for r in step_rows for x in r["returned"]] + cited)
    steps = []
    for r in step_rows:
        returned = [x for x in r["returned"] if seen.visible(x)]
        details = seen.scrub(json.loads(r["details"])) if r.get("details") else {}
        factors = {h["id"]: h for h in details.get("rerank", {}).get("hits", [])}
        steps.append(
            {
                "step_id": r["step_id"],
                "type": r["type"],
                "modality": r["modality"],
                "status": r["status"],
                "error": r["error"],
                "dependencies": r["dependencies"] or [],
                "condition": r["condition"],
                "cypher": r["cypher"],
                "parameters": seen.scrub(json.loads(r["parameters"] or "{}")),
                "cypher_parameters": seen.scrub(json.loads(r["cypher_parameters"] or "[]")),
                "duration_ms": r["duration_ms"],
                "result_count": r["result_count"],
                "hidden": len(r["returned"]) - len(returned),
                "explanation": r["explanation"],
                "details": details,
                "returned": [
                    {
                        "id": x["id"],
                        "kind": x["kind"],
                        "rank": x["rank"],
                        "score": x["score"],
                        "text": (x.get("text") or "")[:200] or None,
                        "section": x.get("section") or (),
                        **({"factors": _factors(factors[x["id"]])} if x["id"] in factors else {}),
                    }
                    for x in sorted(returned, key=lambda x: x["rank"] or 0)
                ],
            }
        )
    citations = [
        {
            "marker": c["marker"],
            "node_id": c["node_id"],
            "label": c["label"],
            "section": c.get("section") or (),
        }
        for c in cited
        if seen.visible(c)
    ]
    withheld = len(cited) - len(citations)
    return Trace.model_validate(
        {
            "query": {
                k: q[k]
                for k in (
                    "id",
                    "text",
                    "user",
                    "asked_by",
                    "created_at",
                    "planner",
                    "exit_reason",
                    "iterations",
                    "latency_ms",
                    "cost",
                    "query_class",
                    "intent",
                )
            }
            | {"decisions": json.loads(q["decisions_json"] or "[]")},
            "plan": {
                "id": q["plan_id"],
                "source": q["plan_source"],
                "fallback_reason": q["fallback_reason"],
                "json": seen.scrub(json.loads(q["plan_json"])) if q["plan_json"] else None,
            },
            "steps": steps,
            "answer": {
                "text": None if withheld else q["answer"],
                "groundedness": q["groundedness"],
                "verdict": q["verdict"],
                "mode": q["answer_mode"],
                "citations": citations,
                "hidden": withheld,
            },
        }
    )


def _factors(scored: dict[str, Any]) -> dict[str, Any]:
    """One reranked hit's factor contributions (what the rerank rules added, and why)."""
    keys = ("retrieval", "authority", "recency", "source", "score", "why")
    return {k: scored[k] for k in keys if k in scored}
