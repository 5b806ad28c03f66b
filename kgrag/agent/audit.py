"""The audit report of one answer, built from its stored trace: the question, the plan, every
step with its timing, Cypher and evidence, the sources with excerpts, why each step ran or was
skipped, the groundedness assessment and verification status, the exit reason, iterations,
cost, and the answer's flag (who flagged it, when and why) when it is flagged. One frozen model,
rendered as JSON or as one self-contained HTML page (the jinja2 template ``templates/audit.html``
with its CSS inline, no external assets, autoescape: every value HTML-escaped, since document
text is untrusted)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from html import escape
from typing import Any, Literal

from jinja2 import Environment, PackageLoader, StrictUndefined, Template

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


class AuditFlag(Frozen):
    """The flag set on an answer (``kgrag flag``, ``POST /queries/{id}/flag``): while it is set,
    trace retention keeps the trace and this audit."""

    flagged_at: str
    """When it was flagged (ISO 8601, UTC)."""
    flagged_by: str | None = None
    """Who flagged it: the credential id (``key:...``, ``jwt:...``, ``local``) or ``operator``
    (the command line)."""
    reason: str | None = None
    """Why, as the flagger wrote it."""


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
    flag: AuditFlag | None = None
    """The answer's flag: who flagged it, when and why; None when it is not flagged."""
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
    row = rows[0] if rows else {}
    groups = tuple(row.get("groups") or ())
    flag = None
    if row.get("flagged_at") is not None:
        flag = AuditFlag(
            flagged_at=row["flagged_at"],
            flagged_by=row.get("flagged_by"),
            reason=row.get("flag_reason"),
        )
    chunk_ids = sorted(
        {c.node_id for c in data.answer.citations if c.label in ("Chunk", "Segment", None)}
    )
    chunks = store.read("chunks_by_ids", {"ids": chunk_ids, **access.params()}) if chunk_ids else []
    return assemble_audit(data, groups, chunks, flag)


def assemble_audit(
    trace: Trace,
    groups: Sequence[str],
    chunks: Sequence[Mapping[str, Any]],
    flag: AuditFlag | None = None,
) -> AuditReport:
    """The report from a trace (from ``read_trace``), the asker's groups, the rows of the
    cited chunks the asker may read (``chunks_by_ids``) and the answer's flag, if any."""
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
        flag=flag,
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
class _Escaped:
    """A value as HTML text, escaped as :func:`html.escape` does (``None`` is empty)."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __html__(self) -> str:
        return escape("" if self.value is None else str(self.value), quote=True)


def _escaped(value: object) -> object:
    """Jinja's finalize: every ``{{ value }}`` of the page goes out escaped (autoescape)."""
    return value if hasattr(value, "__html__") else _Escaped(value)


@cache
def _page() -> Template:
    env = Environment(
        loader=PackageLoader("kgrag.agent", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_escaped,
    )
    env.filters["comma"] = lambda items: ", ".join(map(str, items))
    env.filters["pretty_json"] = lambda value: json.dumps(value, indent=2, default=str)
    return env.get_template("audit.html")


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
    """One self-contained HTML page (``templates/audit.html``, its CSS inline); every value
    is escaped."""
    return _page().render(r=report, v=report.verification, place=_where)
