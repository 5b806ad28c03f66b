"""The audit report of one answer, built from its stored trace: the question, the plan, every
step with its timing, Cypher and evidence, the sources with excerpts, why each step ran or was
skipped, the groundedness assessment and verification status, the exit reason, iterations and
cost. One frozen model, rendered as JSON or as one self-contained HTML page (inline CSS, no
external assets, every text HTML-escaped: document text is untrusted)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any, Literal

from kgrag.agent.synthesis import table_place
from kgrag.core import (
    AccessContext,
    Frozen,
    Trace,
    TraceAnswer,
    TraceCitation,
    TracePlan,
    TraceQuery,
    TraceStep,
)
from kgrag.executor.trace import read_trace
from kgrag.graph.store import GraphStore

log = logging.getLogger(__name__)

#: How much of a source's text an audit quotes.
EXCERPT_CHARS = 600

VerificationStatus = Literal["verified", "partially_verified", "unverified", "not_assessed"]

_EXIT_REASONS = {
    "satisfied": "the evidence was judged sufficient to answer",
    "max_iterations": "the refinement loop reached its iteration limit",
    "redundant_query": "the next query would have repeated an earlier one (or only its words)",
    "no_next_query": "the evaluator proposed no further query",
    "budget_exceeded": "the per-query cost budget was spent",
    "not_found": "nothing the asker may read supports an answer: the agent abstained",
}


class AuditEvidence(Frozen):
    """One item a step returned."""

    id: str
    kind: str
    rank: int | None
    score: float | None
    excerpt: str | None


class AuditStep(Frozen):
    step_id: int
    type: str
    modality: str | None
    status: str
    dependencies: tuple[int, ...]
    condition: str | None
    explanation: str | None
    reason: str
    error: str | None
    cypher: str | None
    parameters: dict[str, Any]
    cypher_parameters: tuple[dict[str, Any], ...]
    duration_ms: float | None
    result_count: int | None
    evidence: tuple[AuditEvidence, ...]
    hidden: int = 0
    """How many items this step returned that the reader cannot read now (not shown)."""


class AuditSource(Frozen):
    """A source the answer cites, with where it comes from and what it says."""

    marker: int
    node_id: str
    kind: str
    document_id: str | None = None
    title: str | None = None
    uri: str | None = None
    page: int | None = None
    start_s: float | None = None
    end_s: float | None = None
    table: int | None = None
    sheet: str | None = None
    row: int | None = None
    excerpt: str | None = None
    returned_by: tuple[int, ...] = ()
    readable: bool = True


class Verification(Frozen):
    """Groundedness and the audit's own check that every citation is evidence a step returned."""

    status: VerificationStatus
    groundedness: float | None
    verdict: str | None
    answer_mode: str | None
    citations_total: int
    citations_in_evidence: int
    unsupported_markers: tuple[int, ...]
    assessment: str


class AuditReport(Frozen):
    query_id: str
    question: str
    user: str | None
    groups: tuple[str, ...]
    asked_by: str | None = None
    """The authenticated principal that asked (``key:...``, ``jwt:...``, ``local``); when it
    impersonated, ``user``/``groups`` are whom it asked as."""
    created_at: str | None
    planner: str | None
    plan_id: str | None
    plan_source: str | None
    fallback_reason: str | None
    plan: dict[str, Any] | None
    steps: tuple[AuditStep, ...]
    sources: tuple[AuditSource, ...]
    reasoning: tuple[str, ...]
    answer: str | None
    """None when withheld: it cites a source the reader cannot read now."""
    hidden_sources: int = 0
    """How many of the answer's citations the reader cannot read now (not shown)."""
    verification: Verification
    exit_reason: str | None
    iterations: int | None
    latency_ms: float | None
    cost: float | None
    generated_at: str

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    def to_html(self) -> str:
        return render_audit_html(self)


# -- building -----------------------------------------------------------------------------------
def build_audit(store: GraphStore, query_id: str, access: AccessContext) -> AuditReport:
    """The audit report of ``query_id`` (:class:`~kgrag.errors.NotFoundError` when unknown) as
    ``access`` may read it now: steps' evidence and cited sources of documents the reader
    cannot read (any more) are left out or shown as not readable, with no excerpt, and the
    answer's text is withheld when it cites such a document (:func:`read_trace`). Who may open
    the query at all is the caller's decision."""
    data = read_trace(store, query_id, access)
    rows = store.read("trace_read_query", {"id": query_id})
    groups = tuple(rows[0].get("groups") or ()) if rows else ()
    chunk_ids = sorted(
        {c.node_id for c in data.answer.citations if c.label in ("Chunk", "Segment", None)}
    )
    chunks = store.read("chunks_by_ids", {"ids": chunk_ids, **access.params()}) if chunk_ids else []
    return assemble_audit(data, groups, chunks)


def assemble_audit(
    trace: Trace, groups: Sequence[str], chunks: Sequence[Mapping[str, Any]]
) -> AuditReport:
    """The report from a trace (from ``read_trace``), the asker's groups and the rows of the
    cited chunks the asker may read (``chunks_by_ids``)."""
    q = trace.query
    steps = tuple(_step(s) for s in trace.steps)
    answer = trace.answer
    sources = _sources(answer.citations, steps, {str(r["id"]): r for r in chunks})
    verification = _verification(answer, sources)
    plan = trace.plan
    return AuditReport(
        query_id=q.id,
        question=q.text or "",
        user=q.user,
        groups=tuple(groups),
        asked_by=q.asked_by,
        created_at=q.created_at,
        planner=q.planner,
        plan_id=plan.id,
        plan_source=plan.source,
        fallback_reason=plan.fallback_reason,
        plan=plan.plan_json,
        steps=steps,
        sources=sources,
        reasoning=_reasoning(q, plan, steps, verification),
        answer=answer.text,
        hidden_sources=answer.hidden,
        verification=verification,
        exit_reason=q.exit_reason,
        iterations=q.iterations,
        latency_ms=q.latency_ms,
        cost=q.cost,
        generated_at=datetime.now(UTC).isoformat(),
    )


def _step(s: TraceStep) -> AuditStep:
    status = s.status or "unknown"
    explanation = s.explanation
    condition = s.condition
    error = s.error
    count = s.result_count
    if status == "ok":
        why = explanation or "planned"
        held = f"; its condition `{condition}` held" if condition else ""
        reason = f"ran: {why}{held}; returned {count or 0} item(s)"
    elif status == "skipped":
        reason = f"skipped: {error or 'its condition was false'}"
    else:
        reason = f"failed: {error or 'unknown error'}"
    return AuditStep(
        step_id=s.step_id,
        type=s.type,
        modality=s.modality,
        status=status,
        dependencies=s.dependencies,
        condition=condition,
        explanation=explanation,
        reason=reason,
        error=error,
        cypher=s.cypher or None,
        parameters=dict(s.parameters),
        cypher_parameters=tuple(p for p in s.cypher_parameters if isinstance(p, dict)),
        duration_ms=s.duration_ms,
        result_count=count,
        evidence=tuple(
            AuditEvidence(id=r.id, kind=r.kind or "", rank=r.rank, score=r.score, excerpt=r.text)
            for r in s.returned
        ),
        hidden=s.hidden,
    )


def _sources(
    citations: Sequence[TraceCitation],
    steps: Sequence[AuditStep],
    rows: Mapping[str, Mapping[str, Any]],
) -> tuple[AuditSource, ...]:
    returned_by: dict[str, list[int]] = {}
    for step in steps:
        for ev in step.evidence:
            returned_by.setdefault(ev.id, []).append(step.step_id)
    out = []
    for c in citations:
        node_id = c.node_id
        label = c.label or ""
        row = rows.get(node_id)
        if label == "Image":
            kind = "image"
        elif row is not None and row.get("start_s") is not None:
            kind = "segment"
        else:
            kind = label.lower() or "chunk"
        text = (row or {}).get("text")
        out.append(
            AuditSource(
                marker=c.marker,
                node_id=node_id,
                kind=kind,
                document_id=(row or {}).get("document_id"),
                title=(row or {}).get("title"),
                uri=(row or {}).get("uri"),
                page=(row or {}).get("page"),
                start_s=(row or {}).get("start_s"),
                end_s=(row or {}).get("end_s"),
                table=(row or {}).get("table_number"),
                sheet=(row or {}).get("sheet"),
                row=(row or {}).get("table_row"),
                excerpt=_excerpt(text),
                returned_by=tuple(returned_by.get(node_id, ())),
                readable=row is not None or kind == "image",
            )
        )
    return tuple(out)


def _excerpt(text: str | None) -> str | None:
    if not text:
        return None
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def _verification(answer: TraceAnswer, sources: Sequence[AuditSource]) -> Verification:
    score = answer.groundedness
    verdict = answer.verdict
    mode = answer.mode
    in_evidence = [s for s in sources if s.returned_by]
    unsupported = tuple(s.marker for s in sources if not s.returned_by)
    status: VerificationStatus
    if not sources:
        status = "unverified"
        assessment = "the answer cites no source"
    elif unsupported:
        status = "partially_verified"
        assessment = (
            f"citation(s) {', '.join(f'[{m}]' for m in unsupported)} point at nothing a step "
            "returned"
        )
    elif score is None:
        status = "not_assessed"
        assessment = "every citation is evidence a step returned; groundedness was not scored"
        if mode == "extractive":
            assessment += " (extractive answer: its sentences are quoted from that evidence)"
    else:
        status = "verified"
        assessment = (
            f"every citation is evidence a step returned; groundedness {float(score):.2f}"
            + (f", verdict {verdict}" if verdict else "")
        )
    return Verification(
        status=status,
        groundedness=float(score) if score is not None else None,
        verdict=verdict,
        answer_mode=mode,
        citations_total=len(sources),
        citations_in_evidence=len(in_evidence),
        unsupported_markers=unsupported,
        assessment=assessment,
    )


def _reasoning(
    q: TraceQuery,
    plan: TracePlan,
    steps: Sequence[AuditStep],
    verification: Verification,
) -> tuple[str, ...]:
    lines = [f"planner: {q.planner or plan.source or 'unknown'}"]
    if plan.fallback_reason:
        lines.append(f"the planner fell back: {plan.fallback_reason}")
    lines.append(f"plan {plan.id} with {len(steps)} step(s)")
    for s in steps:
        deps = f" after step(s) {', '.join(map(str, s.dependencies))}" if s.dependencies else ""
        lines.append(f"step {s.step_id} ({s.type}{deps}) {s.reason}")
    for d in q.decisions:
        step = f"iteration {d.iteration} ({d.query}): {d.decision} by the {d.judge} judge"
        step += f", coverage {d.coverage:.0%}: {d.reason}"
        if d.next_query:
            step += f"; next query: {d.next_query}"
        lines.append(step)
    reason = q.exit_reason
    if reason:
        why = _EXIT_REASONS.get(reason, "")
        lines.append(
            f"stopped after {q.iterations or 1} iteration(s): {reason}"
            + (f" ({why})" if why else "")
        )
    lines.append(f"verification: {verification.status} — {verification.assessment}")
    return tuple(lines)


# -- HTML ---------------------------------------------------------------------------------------
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2430;
background:#f5f6f8}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #d5d9e0;padding-bottom:4px}
.meta{color:#556;font-size:13px}.meta span{margin-right:16px}
.card{background:#fff;border:1px solid #d5d9e0;border-radius:6px;padding:12px 16px;margin:8px 0}
pre{white-space:pre-wrap;word-break:break-word;background:#f0f2f5;padding:8px;border-radius:4px;
font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;margin:6px 0}
.answer{white-space:pre-wrap}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid #d5d9e0;padding:4px 8px;text-align:left;vertical-align:top;font-size:13px}
th{background:#eef0f4}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;color:#fff}
.ok,.verified{background:#2e7d32}.skipped,.not_assessed{background:#757575}
.error,.unverified{background:#c62828}.partially_verified{background:#ef6c00}
details summary{cursor:pointer;font-weight:600}
ol.reasoning li{margin:2px 0}
.excerpt{color:#333;font-size:13px;margin-top:4px}
"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return ""
    m, s = divmod(int(seconds), 60)
    return f"{m:02d}:{s:02d}"


def _where(src: AuditSource) -> str:
    if src.row is not None:
        return table_place(src.page, src.table, src.sheet, src.row)
    parts = []
    if src.page is not None:
        parts.append(f"p. {src.page}")
    if src.start_s is not None:
        parts.append(f"{_fmt_time(src.start_s)}–{_fmt_time(src.end_s)}")
    return ", ".join(parts)


def render_audit_html(report: AuditReport) -> str:
    """One self-contained HTML page; every value is escaped."""
    r = report
    v = r.verification
    h: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # nothing external may load, and no script runs
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">",
        f"<title>kgrag audit {_e(r.query_id)}</title>",
        f"<style>{_CSS}</style></head><body><main>",
        f"<h1>Audit of query {_e(r.query_id)}</h1>",
        '<div class="meta">',
        f"<span>asked {_e(r.created_at)}</span>",
        f"<span>user {_e(r.user or 'anonymous')}</span>",
        f"<span>groups {_e(', '.join(r.groups) or '—')}</span>",
        f"<span>asked by {_e(r.asked_by or '—')}</span>",
        f"<span>exit reason <b>{_e(r.exit_reason)}</b></span>",
        f"<span>iterations {_e(r.iterations)}</span>",
        f"<span>latency {_e(r.latency_ms)} ms</span>",
        f"<span>cost {_e('n/a' if r.cost is None else f'{r.cost:.6f}')}</span>",
        "</div>",
        "<h2>Question</h2>",
        f'<div class="card">{_e(r.question)}</div>',
        "<h2>Answer</h2>",
        f'<div class="card answer">{_e(r.answer)}</div>'
        if r.answer is not None or not r.hidden_sources
        else f'<div class="card">(withheld: it cites {r.hidden_sources} source(s) you cannot '
        "read now)</div>",
        "<h2>Verification</h2>",
        '<div class="card">',
        f'<span class="badge {_e(v.status)}">{_e(v.status.replace("_", " "))}</span> ',
        f"{_e(v.assessment)}<br>",
        f"groundedness: {_e('not scored' if v.groundedness is None else f'{v.groundedness:.2f}')}"
        f" · verdict: {_e(v.verdict or '—')} · answer mode: {_e(v.answer_mode or '—')}"
        f" · citations in evidence: {v.citations_in_evidence}/{v.citations_total}",
        "</div>",
        "<h2>Sources</h2>",
    ]
    if not r.sources:
        h.append('<div class="card">No sources cited.</div>')
    for s in r.sources:
        where = _where(s)
        h += [
            '<div class="card">',
            f"<b>[{s.marker}]</b> {_e(s.title or s.node_id)}"
            + (f" ({_e(where)})" if where else "")
            + f' <span class="meta">{_e(s.kind)} · {_e(s.node_id)}</span><br>',
            f'<span class="meta">{_e(s.uri or "")}</span>',
            f'<span class="meta"> · returned by step(s) '
            f"{_e(', '.join(map(str, s.returned_by)) or 'none')}</span>",
            f'<div class="excerpt">{_e(s.excerpt or ("(not readable)" if not s.readable else ""))}'
            "</div></div>",
        ]
    h += [
        "<h2>Reasoning</h2>",
        '<ol class="reasoning">',
        *(f"<li>{_e(line)}</li>" for line in r.reasoning),
        "</ol>",
        "<h2>Plan</h2>",
        f'<div class="card">plan {_e(r.plan_id)} · source {_e(r.plan_source)}'
        + (f" · fell back: {_e(r.fallback_reason)}" if r.fallback_reason else "")
        + "</div>",
        "<table><tr><th>step</th><th>type</th><th>modality</th><th>status</th>"
        "<th>after</th><th>duration</th><th>results</th><th>why</th></tr>",
    ]
    for st in r.steps:
        h.append(
            f"<tr><td>{st.step_id}</td><td>{_e(st.type)}</td><td>{_e(st.modality)}</td>"
            f'<td><span class="badge {_e(st.status)}">{_e(st.status)}</span></td>'
            f"<td>{_e(', '.join(map(str, st.dependencies)))}</td>"
            f"<td>{_e(st.duration_ms)} ms</td><td>{_e(st.result_count)}</td>"
            f"<td>{_e(st.reason)}</td></tr>"
        )
    h.append("</table><h2>Steps in detail</h2>")
    for st in r.steps:
        h += [
            f'<div class="card" id="step-{st.step_id}"><details><summary>step {st.step_id}: '
            f"{_e(st.type)} — {_e(st.status)}</summary>",
            f"<p>{_e(st.explanation or '')}</p>",
        ]
        if st.condition:
            h.append(f"<p>condition: <code>{_e(st.condition)}</code></p>")
        if st.error:
            h.append(f"<p>error/skip reason: {_e(st.error)}</p>")
        h.append(f"<div>parameters</div><pre>{_e(json.dumps(st.parameters, indent=2))}</pre>")
        if st.cypher:
            h.append(f"<div>Cypher</div><pre>{_e(st.cypher)}</pre>")
            h.append(
                "<div>Cypher parameters</div>"
                f"<pre>{_e(json.dumps(list(st.cypher_parameters), indent=2, default=str))}</pre>"
            )
        if st.evidence:
            h.append(
                "<table><tr><th>rank</th><th>kind</th><th>score</th><th>id</th>"
                "<th>excerpt</th></tr>"
            )
            for ev in st.evidence:
                score = "" if ev.score is None else f"{ev.score:.3f}"
                h.append(
                    f"<tr><td>{_e(ev.rank)}</td><td>{_e(ev.kind)}</td><td>{score}</td>"
                    f"<td>{_e(ev.id)}</td><td>{_e(ev.excerpt)}</td></tr>"
                )
            h.append("</table>")
        h.append("</details></div>")
    h += [
        f'<p class="meta">generated {_e(r.generated_at)} by kgrag</p>',
        "</main></body></html>",
    ]
    return "\n".join(h) + "\n"
