"""The trace and the audit of an answer, as JSON or as a page, to its asker or an admin; the
flag that keeps them through trace retention."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, JSONResponse

from kgrag.agent.audit import AuditReport
from kgrag.auth.principal import Principal, Role
from kgrag.auth.readers import check_query_reader
from kgrag.core import Trace
from kgrag.executor.trace import read_trace
from kgrag.server.deps import NEEDS_STORE, AppState, Caller, split_groups
from kgrag.server.identity import acting_as, require
from kgrag.server.models import FlagRequest, FlagView, GroupList, Text, UserName
from kgrag.server.openapi import errors
from kgrag.server.state import ServerState

log = logging.getLogger(__name__)

router = APIRouter(tags=["queries"], dependencies=NEEDS_STORE)

#: Pages the API serves may load nothing from elsewhere.
HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

ReaderUser = Annotated[
    UserName | None, Query(description="read as this user (needs the impersonate role)")
]
ReaderGroups = Annotated[
    GroupList | None,
    Query(description="comma-separated groups to read with (needs the impersonate role)"),
]
QueryId = Annotated[Text, PathParam(description="the query id of an answer")]
QUERY_ERRORS = errors(403, 404, 422)


def opened_query(
    state: ServerState, query_id: str, who: Principal, user: str | None, groups: str | None
) -> Principal:
    """Who reads query ``query_id``: its asker (the same user, holding every group the
    question was asked with) or an admin; 404 to anyone else, as for an unknown id."""
    require(who, Role.READER)
    reader = acting_as(who, user, split_groups(groups))
    check_query_reader(state.agent.store, query_id, reader)
    return reader


def readable_trace(
    state: ServerState, query_id: str, who: Principal, user: str | None, groups: str | None
) -> Trace:
    reader = opened_query(state, query_id, who, user, groups)
    return read_trace(state.agent.store, query_id, reader.access())


def readable_audit(
    state: ServerState, query_id: str, who: Principal, user: str | None, groups: str | None
) -> AuditReport:
    from kgrag.agent.audit import build_audit

    reader = opened_query(state, query_id, who, user, groups)
    return build_audit(state.agent.store, query_id, reader.access())


@router.get("/queries/{query_id}/trace", operation_id="getTrace", responses=QUERY_ERRORS)
def trace(
    who: Caller,
    state: AppState,
    query_id: QueryId,
    user: ReaderUser = None,
    groups: ReaderGroups = None,
) -> dict[str, Any]:
    """The reasoning of one answer (``kgrag trace --json``)."""
    return readable_trace(state, query_id, who, user, groups).to_json()


@router.get(
    "/queries/{query_id}/trace.html",
    response_class=HTMLResponse,
    operation_id="getTraceHtml",
    responses=QUERY_ERRORS,
)
def trace_html(
    who: Caller,
    state: AppState,
    query_id: QueryId,
    user: ReaderUser = None,
    groups: ReaderGroups = None,
) -> HTMLResponse:
    """The trace viewer page (``kgrag trace --html``)."""
    from kgrag.viewer import render_trace_html

    page = render_trace_html(readable_trace(state, query_id, who, user, groups))
    return HTMLResponse(page, headers={"Content-Security-Policy": HTML_CSP})


@router.get(
    "/queries/{query_id}/audit",
    operation_id="getAudit",
    responses={**QUERY_ERRORS, 200: {"model": AuditReport, "description": "the audit"}},
)
def audit(
    who: Caller,
    state: AppState,
    query_id: QueryId,
    user: ReaderUser = None,
    groups: ReaderGroups = None,
) -> JSONResponse:
    """The audit report (``kgrag audit --json``); ``asked_by`` names who really asked."""
    report = readable_audit(state, query_id, who, user, groups)
    return JSONResponse(report.model_dump(mode="json"))


@router.get(
    "/queries/{query_id}/audit.html",
    response_class=HTMLResponse,
    operation_id="getAuditHtml",
    responses=QUERY_ERRORS,
)
def audit_html(
    who: Caller,
    state: AppState,
    query_id: QueryId,
    user: ReaderUser = None,
    groups: ReaderGroups = None,
) -> HTMLResponse:
    """The audit report as one self-contained page (``kgrag audit --html``)."""
    page = readable_audit(state, query_id, who, user, groups).to_html()
    return HTMLResponse(page, headers={"Content-Security-Policy": HTML_CSP})


@router.post(
    "/queries/{query_id}/flag",
    operation_id="flagAnswer",
    response_model=FlagView,
    responses=errors(400, 403, 404, 413, 422),
)
def flag(
    who: Caller,
    state: AppState,
    query_id: QueryId,
    body: FlagRequest | None = None,
    user: ReaderUser = None,
    groups: ReaderGroups = None,
) -> FlagView:
    """Flag an answer (``kgrag flag``): trace retention keeps its trace and audit until an admin
    clears the flag. Its asker or an admin may flag it; flagging again replaces the reason."""
    from kgrag.retention import flag_query

    opened_query(state, query_id, who, user, groups)
    reason = body.reason if body is not None else None
    report = flag_query(state.agent.store, query_id, by=who.id, reason=reason)
    log.info("%s flagged an answer", who.id, extra={"query_id": query_id})
    return FlagView(**report.model_dump())


@router.delete(
    "/queries/{query_id}/flag",
    operation_id="unflagAnswer",
    response_model=FlagView,
    responses=QUERY_ERRORS,
)
def unflag(who: Caller, state: AppState, query_id: QueryId) -> FlagView:
    """Clear the flag of an answer (``kgrag flag --clear``); prunes remove its trace again once
    it is old enough. Needs ``admin``."""
    from kgrag.retention import unflag_query

    require(who, Role.ADMIN)
    opened_query(state, query_id, who, None, None)
    report = unflag_query(state.agent.store, query_id)
    log.info("%s cleared the flag of an answer", who.id, extra={"query_id": query_id})
    return FlagView(**report.model_dump())
