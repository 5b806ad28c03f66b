"""Questions: ``POST /ask`` (one JSON answer), ``/ask/upload`` (with attached files) and
``/ask/stream`` (server-sent events as the answer is built)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import JSONResponse, StreamingResponse

from kgrag.agent.answer import Answer
from kgrag.agent.attachments import MAX_ATTACHMENTS
from kgrag.auth.principal import Role
from kgrag.cancel import CancelToken
from kgrag.errors import CancelledError, KgragError, StoreUnavailableError
from kgrag.server.deps import NEEDS_STORE, AppState, Caller, split_groups
from kgrag.server.errors import error_body, error_code, status_of
from kgrag.server.identity import acting_as, require
from kgrag.server.models import (
    AskRequest,
    AttachedQuestion,
    GroupList,
    Key,
    UserName,
    answer_json,
)
from kgrag.server.openapi import errors

log = logging.getLogger(__name__)

router = APIRouter(tags=["ask"], dependencies=NEEDS_STORE)

#: How often a streamed answer with no new event checks that its client is still there.
DISCONNECT_POLL_S = 0.5


def _safe_name(filename: str | None, index: int) -> str:
    """The base name of an uploaded file, reduced to safe characters (its suffix kept)."""
    base = Path(filename or "").name
    name = re.sub(r"[^A-Za-z0-9._-]", "_", base).lstrip(".")[:100]
    return name or f"attachment-{index}"


#: The headers of an answer (POST /ask and /ask/upload).
_ANSWER_HEADERS = {
    name: {"description": what, "required": True, "schema": {"type": "string"}}
    for name, what in (
        ("X-Kgrag-Query-Id", "the query id (its trace and audit)"),
        ("X-Kgrag-Iterations", "plan-run-evaluate iterations"),
        ("X-Kgrag-Exit-Reason", "why the agent stopped"),
        ("X-Kgrag-Cost", "cost of the language model calls, in US dollars"),
    )
}


def _trace_links() -> dict[str, Any]:
    """OpenAPI links from an answer to its trace and audit, read as the asker."""
    return {
        name: {
            "operationId": target,
            "parameters": {"query_id": "$response.body#/query_id", "user": "$request.body#/user"},
            "description": f"the {what} of this answer",
        }
        for name, target, what in (
            ("trace", "getTrace", "trace"),
            ("traceHtml", "getTraceHtml", "trace viewer page"),
            ("audit", "getAudit", "audit report"),
            ("auditHtml", "getAuditHtml", "audit page"),
        )
    }


#: OpenAPI links from an answer to a follow-up question in its session (asked by the asker).
_FOLLOW_UP_LINKS = {
    name: {
        "operationId": target,
        "requestBody": {
            "question": "Tell me more about that.",
            "session_id": "$response.body#/session_id",
            "user": "$request.body#/user",
            "groups": "$request.body#/groups",
        },
        "description": f"a follow-up question in the session of this answer{what}",
    }
    for name, target, what in (
        ("followUp", "ask", ""),
        ("followUpStream", "askStream", ", answered as events"),
    )
}

#: The 200 response of POST /ask and /ask/upload.
_ANSWER_200 = {
    "model": Answer,
    "description": "the answer with its citations (the body of `kgrag ask --json`)",
    "headers": _ANSWER_HEADERS,
    "links": _trace_links(),
}


#: One event of POST /ask/stream (OpenAPI 3.1: the schema of a text/event-stream describes each
#: event): its name and its data, one line of JSON.
_SSE_EVENT = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"enum": ["rewrite", "plan", "step", "evaluation", "answer", "complete", "error"]},
        "data": {"type": "string", "contentMediaType": "application/json"},
    },
}


def _answer_response(answer: Any) -> JSONResponse:
    """The answer as JSON with its response metadata (the same fields) as headers."""
    return JSONResponse(
        answer_json(answer),
        headers={
            "X-Kgrag-Query-Id": answer.query_id,
            "X-Kgrag-Iterations": str(answer.iterations),
            "X-Kgrag-Exit-Reason": answer.exit_reason,
            "X-Kgrag-Cost": f"{answer.cost:.6f}",
        },
    )


@router.post(
    "/ask",
    operation_id="ask",
    responses={
        **errors(400, 403, 409, 413, 422, 501, 502),
        200: {**_ANSWER_200, "links": {**_trace_links(), **_FOLLOW_UP_LINKS}},
    },
)
async def ask(body: AskRequest, who: Caller, state: AppState) -> JSONResponse:
    """Answer with citations; the body is what ``kgrag ask --json`` prints."""
    require(who, Role.READER)
    reader = acting_as(who, body.user, body.groups)
    # KnowledgeAgent.aask: the run works in the event loop's executor, not a request
    # thread of its own; a cancelled request stops it at its next event
    with state.drain.answer():
        answer = await state.agent.aask(
            body.question,
            session_id=body.session_id,
            user=reader.user,
            groups=reader.groups,
            asked_by=who.id,
        )
    return _answer_response(answer)


@router.post(
    "/ask/upload",
    operation_id="askUpload",
    responses={**errors(400, 403, 409, 413, 422, 501, 502), 200: _ANSWER_200},
)
def ask_upload(
    who: Caller,
    state: AppState,
    files: Annotated[
        list[UploadFile],
        File(
            min_length=1,
            max_length=MAX_ATTACHMENTS,
            description=f"images or recordings (1 to {MAX_ATTACHMENTS})",
        ),
    ],
    question: Annotated[
        AttachedQuestion, Form(description="the question; empty: the files ask")
    ] = "",
    session_id: Annotated[Key | None, Form(description="conversation id, as in POST /ask")] = None,
    user: Annotated[
        UserName | None, Form(description="ask as this user (needs the impersonate role)")
    ] = None,
    groups: Annotated[
        GroupList | None,
        Form(description="comma-separated groups to ask with (needs the impersonate role)"),
    ] = None,
) -> JSONResponse:
    """A question with attached files (multipart/form-data), answered as POST /ask is.
    The request size is limited (``KGRAG_MAX_REQUEST_BYTES``); each file is checked like
    an ingested one (size, signature) and a bad one is refused with 422 naming it."""
    require(who, Role.READER)
    reader = acting_as(who, user, split_groups(groups))
    with state.drain.answer(), tempfile.TemporaryDirectory(prefix="kgrag-upload-") as folder:
        paths = []
        for index, upload in enumerate(files):
            target = Path(folder) / str(index) / _safe_name(upload.filename, index)
            target.parent.mkdir()
            with target.open("wb") as f:
                while chunk := upload.file.read(1 << 20):
                    f.write(chunk)
            paths.append(target)
        answer = state.agent.ask(
            question,
            session_id=session_id,
            user=reader.user,
            groups=reader.groups,
            attachments=paths,
            asked_by=who.id,
        )
    return _answer_response(answer)


@router.post(
    "/ask/stream",
    operation_id="askStream",
    response_class=StreamingResponse,
    responses={
        **errors(400, 413, 422),
        200: {
            "description": "server-sent events (`event: NAME`, `data: JSON`); a failure "
            "after the first event is an `error` event, not a status",
            "content": {"text/event-stream": {"schema": _SSE_EVENT}},
        },
    },
)
async def ask_stream(
    body: AskRequest, request: Request, who: Caller, state: AppState
) -> StreamingResponse:
    """Server-sent events as the answer is built (``KnowledgeAgent.stream``): ``rewrite``
    for a resolved follow-up, then per iteration ``plan``, one ``step`` per step and
    ``evaluation``; finally ``answer`` (the body of POST /ask) and ``complete``, or
    ``error`` (with ``status``, and ``retry_after`` when the store stopped answering)."""
    require(who, Role.READER)
    reader = acting_as(who, body.user, body.groups)
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()
    agent_ = state.agent
    supervisor = state.supervisor
    store = request.state.store

    def emit(event: str, data: Any) -> None:
        loop.call_soon_threadsafe(events.put_nowait, (event, data))

    # set when the client goes away: the run stops at its next event, not only its reply
    cancel = CancelToken()

    def run() -> None:
        try:
            for event in agent_.stream(
                body.question,
                session_id=body.session_id,
                user=reader.user,
                groups=reader.groups,
                asked_by=who.id,
                cancel=cancel,
            ):
                if event.kind == "answer":
                    emit("answer", answer_json(event.answer))
                else:
                    emit(event.kind, event.model_dump(mode="json"))
        except StoreUnavailableError as e:
            log.warning("streamed ask: %s", e)
            supervisor.failed(store, e)
            busy = supervisor.unavailable()
            retry = int(busy.headers["Retry-After"])
            emit(
                "error",
                {**error_body(busy.error, busy.detail), "status": 503, "retry_after": retry},
            )
        except CancelledError as e:
            log.warning("streamed ask stopped: %s", e.reason)
        except KgragError as e:
            emit("error", {**error_body(error_code(e), str(e)), "status": status_of(e)})
        except Exception as e:
            log.exception("streamed ask failed")
            emit("error", {**error_body("internal", type(e).__name__), "status": 500})
        finally:
            loop.call_soon_threadsafe(events.put_nowait, None)

    state.drain.admit()  # in flight until the run ends (a shutdown waits for it)
    worker = loop.run_in_executor(None, run)
    worker.add_done_callback(lambda _: state.drain.done())

    async def stream() -> AsyncIterator[str]:
        try:
            while True:
                try:
                    item = await asyncio.wait_for(events.get(), DISCONNECT_POLL_S)
                except TimeoutError:
                    if await request.is_disconnected():
                        log.warning("streamed ask: the client disconnected; cancelling the run")
                        cancel.cancel("the client disconnected")
                        return
                    continue
                if item is None:
                    break
                event, data = item
                yield f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"
            await worker
        finally:  # closed early (the client went away): stop the run too
            if not worker.done() and not cancel.cancelled:
                log.warning("streamed ask: the client disconnected; cancelling the run")
                cancel.cancel("the client disconnected")

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
