"""``kgrag ask`` and the operator's views of an answer: ``kgrag trace`` and ``kgrag audit``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.tree import Tree

from kgrag.cli.common import (
    JsonOpt,
    QuietOpt,
    StoreOpt,
    emit,
    err,
    open_agent,
    open_store,
    out,
    state,
)
from kgrag.core import OPERATOR


def ask(
    question: Annotated[str, typer.Argument(help="the question ('' with --attach: the file asks)")],
    session: Annotated[str | None, typer.Option("--session", help="conversation id")] = None,
    user: Annotated[str | None, typer.Option("--user", help="who asks (for document ACLs)")] = None,
    groups: Annotated[
        str, typer.Option("--groups", help="comma-separated groups of the user")
    ] = "",
    attach: Annotated[
        list[Path] | None,
        typer.Option("--attach", help="an image or recording the question is about (repeatable)"),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="also print iterations, exit reason, cost")
    ] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,  # read through _state (set by its callback)
) -> None:
    """Answer a question with citations; the plan and steps stream as they run."""
    group_list = [g.strip() for g in groups.split(",") if g.strip()]
    show = not (as_json or state["quiet"])

    def on_plan(plan: Any) -> None:
        if show:
            err.print(f"[bold]plan[/bold] ({len(plan.plan)} steps)")

    def on_step(step: Any, outcome: Any) -> None:
        if show:
            colour = {"ok": "green", "skipped": "yellow"}.get(outcome.status, "red")
            err.print(
                f"  step {step.step_id} {escape(f'{step.type:<13}')} "
                f"[{colour}]{escape(outcome.status)}[/{colour}] "
                f"{outcome.count} hits {outcome.duration_ms:.0f} ms"
                + (f"  ({escape(str(outcome.error))})" if outcome.error else "")
            )

    with open_agent(store) as agent:
        answer = agent.ask(
            question,
            session_id=session,
            user=user,
            groups=group_list,
            attachments=attach or (),
            on_plan=on_plan,
            on_step=on_step,
        )
    if as_json:
        emit(answer.to_json())
        return
    out.print(answer.answer, markup=False, highlight=False)
    qid = escape(answer.query_id)
    out.print(f"\n[dim]query {qid} · kgrag trace {qid}[/dim]")
    if verbose:
        out.print(
            f"iterations {answer.iterations} · exit reason {answer.exit_reason} · "
            f"cost ${answer.cost:.6f} · {answer.latency_ms:.0f} ms",
            markup=False,
            highlight=False,
        )


#: The argument ``trace`` and ``audit`` take: the query id an answer printed.
QueryIdArg = Annotated[str, typer.Argument(help="the query id an answer printed")]


def _write_page(html: Path, page: str) -> None:
    """Write the HTML page of ``trace --html``/``audit --html`` and say so (unless quiet)."""
    html.write_text(page, encoding="utf-8")
    if not state["quiet"]:
        err.print(f"wrote {html}", markup=False)


def trace(
    query_id: QueryIdArg,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="write the trace viewer page to FILE")
    ] = None,
) -> None:
    """Show the reasoning of one answer: plan, steps, their Cypher and evidence."""
    from kgrag.executor.trace import read_trace

    with open_store(store) as st:  # the operator, who holds the store itself, reads everything
        data = read_trace(st, query_id, OPERATOR)
    if html is not None:
        from kgrag.viewer import render_trace_html

        _write_page(html, render_trace_html(data))
    if as_json:
        emit(data.to_json())
        return
    if html is not None:
        return
    q = data.query
    tree = Tree(
        "[bold]Query[/bold] " + escape(f"{q.id}: {q.text} ({q.latency_ms} ms, {q.exit_reason})")
    )
    plan = tree.add("[bold]Plan[/bold] " + escape(f"{data.plan.id} ({data.plan.source})"))
    for st_ in data.steps:
        node = plan.add(
            escape(
                f"step {st_.step_id} {st_.type} [{st_.status}] "
                f"deps={list(st_.dependencies)} {st_.result_count} hits "
                f"{st_.duration_ms} ms" + (f" — {st_.error}" if st_.error else "")
            )
        )
        for r in st_.returned[:5]:
            node.add(escape(f"#{r.rank} {r.kind} {r.id} score={r.score:.3f}"))
    tree.add(f"[bold]Answer[/bold] cites {len(data.answer.citations)} sources")
    out.print(tree)


def audit(
    query_id: QueryIdArg,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="write the audit report page to FILE")
    ] = None,
) -> None:
    """Audit one answer: plan, timed steps, sources, reasoning, groundedness, cost."""
    from kgrag.agent.audit import build_audit

    with open_store(store) as st:  # the operator, who holds the store itself, reads everything
        report = build_audit(st, query_id, OPERATOR)
    if html is not None:
        _write_page(html, report.to_html())
    if as_json:
        sys.stdout.write(report.to_json() + "\n")
    elif html is None:
        v = report.verification
        out.print(f"Query {report.query_id}: {report.question}", markup=False)
        out.print(
            f"exit {report.exit_reason} after {report.iterations} iteration(s), cost {report.cost}",
            markup=False,
        )
        if report.flag is not None:
            f = report.flag
            out.print(
                f"flagged {f.flagged_at} by {f.flagged_by or '?'}: "
                f"{f.reason or '(no reason given)'}",
                markup=False,
            )
        out.print(f"verification: {v.status} — {v.assessment}", markup=False)
        for line in report.reasoning:
            out.print(f"  {line}", markup=False)
        for src in report.sources:
            out.print(f"  [{src.marker}] {src.title or src.node_id} {src.uri or ''}", markup=False)
