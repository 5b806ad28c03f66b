"""The HTTP API over the same library calls as the CLI: one KnowledgeAgent per process,
ingestion as background jobs on one writer thread (a bounded queue), questions answered
concurrently (a bounded number at once). A store that stops answering is reopened by the server
itself (:mod:`kgrag.server.recovery`); meanwhile requests get 503 with Retry-After.

Who asks is who the request authenticated as (:mod:`kgrag.server.identity`: an API key or a JWT;
without authentication configured, the local principal on a loopback-only server). Only a
principal with the ``impersonate`` role may name ``user``/``groups``; the question then records
who really asked (``asked_by``)."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, FastAPI, File, Form, Query, Request, UploadFile
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.exceptions import HTTPException as StarletteHTTPException

from kgrag import __version__, metrics
from kgrag.agent.answer import Answer
from kgrag.agent.attachments import MAX_ATTACHMENTS
from kgrag.agent.audit import AuditReport
from kgrag.auth.authenticator import Authenticator
from kgrag.auth.principal import Principal, Role
from kgrag.auth.readers import check_query_reader
from kgrag.cancel import CancelToken
from kgrag.config import Settings
from kgrag.errors import CancelledError, KgragError, NotFoundError, StoreUnavailableError
from kgrag.executor.trace import read_trace
from kgrag.ingest.pipeline import IngestReport
from kgrag.server.browser import BrowserGuardMiddleware, allowed_hosts
from kgrag.server.errors import ApiError, error_body, error_code, status_of
from kgrag.server.identity import AuthMiddleware, acting_as, principal, require
from kgrag.server.jobs import IngestJobs
from kgrag.server.models import (
    GROUPS_PATTERN,
    KEY_MAX_CHARS,
    KEY_PATTERN,
    TEXT_PATTERN,
    AskRequest,
    ErasureReport,
    Health,
    IngestRequest,
    JobView,
    Liveness,
    answer_json,
)
from kgrag.server.observability import RequestLogMiddleware
from kgrag.server.openapi import document, errors
from kgrag.server.recovery import StoreSupervisor, probe_store
from kgrag.server.security import ConcurrencyLimitMiddleware, GuardMiddleware, confine_paths

if TYPE_CHECKING:
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.graph.store import GraphStore

log = logging.getLogger(__name__)

#: The principal a request authenticated as (a route parameter).
Caller = Annotated[Principal, Depends(principal)]

#: Pages the API serves may load nothing from elsewhere.
_HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


#: How long an ingestion job waits for a store that is being reopened before it fails.
STORE_WAIT_S = 120.0
#: How often a streamed answer with no new event checks that its client is still there.
DISCONNECT_POLL_S = 0.5
#: The longest wait between two attempts to get the store back: reopening an embedded store
#: starts a server (backed off further), probing a remote one that reconnects by itself is a
#: cheap read (so it is seen back within seconds of answering again).
REOPEN_MAX_BACKOFF_S = 30.0
PROBE_MAX_BACKOFF_S = 5.0


def _job_failure(error: KgragError, attempts: int) -> str:
    if isinstance(error, StoreUnavailableError):
        return (
            f"the graph store stopped answering and was not back in time ({attempts} "
            "attempt(s)); submit the job again once GET /healthz answers: writes are idempotent "
            "and documents an interrupted job left unfinished are rewritten"
        )
    return str(error)


class _Runtime:
    """What the app holds while it runs."""

    def __init__(
        self,
        settings: Settings,
        agent: KnowledgeAgent,
        supervisor: StoreSupervisor,
        *,
        max_queued_jobs: int,
        store_wait_s: float = STORE_WAIT_S,
    ) -> None:
        self.settings = settings
        self.agent = agent
        self.supervisor = supervisor
        self.store_wait_s = store_wait_s
        self._job_store: GraphStore | None = None  # the store the running job uses
        self.jobs = IngestJobs(
            self._ingest,
            max_queued=max_queued_jobs,
            retry=self._retry_job,
            failure_message=_job_failure,
        )

    def _ingest(self, paths: Sequence[str], acl: Sequence[str], by: Principal) -> IngestReport:
        # checked again right before reading: the files may have changed since the request
        confine_paths(paths, acl, self.settings.ingest_roots)
        if not self.supervisor.wait_ready(self.store_wait_s):
            raise StoreUnavailableError("the graph store is being reopened")
        self._job_store = self.agent.store
        # a re-ingest may change a document's ACL only for an admin (issue 14, decision 3)
        return self.agent.ingest(paths, acl, actor=by.id, may_change_acl=by.can(Role.ADMIN))

    def _retry_job(self, error: KgragError) -> bool:
        """A job that lost the store runs again once the store answers again."""
        if not isinstance(error, StoreUnavailableError):
            return False
        self.supervisor.failed(self._job_store, error)
        return self.supervisor.wait_ready(self.store_wait_s)


def _reopen_store(settings: Settings, agent: KnowledgeAgent) -> GraphStore:
    """A new store for the agent's settings, its text embedding space checked as at opening."""
    from kgrag.graph import open_settings_store
    from kgrag.graph.spaces import EmbeddingSpace, ensure_space

    store = open_settings_store(settings)
    try:
        ensure_space(store, EmbeddingSpace.of("text", agent.text_embedder))
    except Exception:
        store.close()
        raise
    return store


def _groups(raw: str | None) -> list[str]:
    return [g.strip() for g in (raw or "").split(",") if g.strip()]


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


def create_app(
    settings: Settings | None = None,
    agent: KnowledgeAgent | None = None,
    *,
    max_concurrent_requests: int | None = None,
    max_queued_jobs: int | None = None,
    reopen_store: Callable[[], GraphStore] | None = None,
    host: str | None = None,
) -> FastAPI:
    """The FastAPI app. Without ``agent`` one is opened from ``settings`` at startup and closed
    at shutdown; a given agent stays open (its owner closes it).

    ``max_concurrent_requests`` (default: Settings ``max_concurrent_requests``) bounds the
    requests handled at once, ``max_queued_jobs`` (Settings ``max_queued_jobs``) the ingestion
    jobs waiting to run. A store that stops
    answering is reopened with ``reopen_store``; by default an agent the app opened gets a new
    store from ``settings``, and a given agent's store is only waited for (probed) again.

    Requests authenticate as ``settings`` configures (API keys, JWTs); with neither, every
    request is the local principal (:func:`kgrag.server.serve` then binds loopback only).
    ``host`` is the address the server is bound to: a ``Host`` header may name it, a loopback
    name or one of ``allowed_hosts``."""
    s = settings or Settings()
    authenticator = Authenticator.from_settings(s)
    runtime: dict[str, _Runtime] = {}
    concurrent = max_concurrent_requests or s.max_concurrent_requests
    queued = max_queued_jobs or s.max_queued_jobs

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        from kgrag.agent.agent import KnowledgeAgent

        own = agent is None
        opened: KnowledgeAgent = (
            agent if agent is not None else await asyncio.to_thread(KnowledgeAgent.open, s)
        )
        reopen = reopen_store
        # An embedded store whose server died is reopened (a new server replays its file); a
        # Neo4j store is only probed until it answers: its driver reconnects by itself, and
        # closing it would break the running job's and requests' statements in mid-flight.
        if reopen is None and own and not opened.store.reconnects:
            reopen = functools.partial(_reopen_store, s, opened)
        # a store that is only probed (a cheap read) is probed often: it is back in seconds
        backoff = PROBE_MAX_BACKOFF_S if reopen is None else REOPEN_MAX_BACKOFF_S
        supervisor = StoreSupervisor(opened, reopen, max_backoff_s=backoff)
        runtime["rt"] = _Runtime(s, opened, supervisor, max_queued_jobs=queued)
        log.info("kgrag API ready on store %s", opened.store.uri)
        if authenticator is None:
            log.warning(
                "no authentication configured (KGRAG_API_KEYS_FILE, KGRAG_JWT_*): every "
                "request acts as the local principal, with every role; loopback only"
            )
        try:
            yield
        finally:
            await asyncio.to_thread(runtime["rt"].jobs.close)
            await asyncio.to_thread(supervisor.stop)
            if own:
                opened.close()

    app = FastAPI(
        title="kgrag",
        version=__version__,
        description="A graph-database-backed multimodal knowledge agent: ingest, ask with "
        "citations, and open the trace and audit of every answer. Every error is JSON "
        "(`ErrorBody`); a method a path does not have is 405 with `Allow`.",
        lifespan=lifespan,
    )
    document(app, authenticated=authenticator is not None)
    # the last added runs first: Host and cross-site checks, who is asking, the size limit,
    # then the concurrency bound
    app.add_middleware(ConcurrencyLimitMiddleware, limit=concurrent)
    app.add_middleware(GuardMiddleware, max_bytes=s.max_request_bytes)
    app.add_middleware(AuthMiddleware, authenticator=authenticator)
    app.add_middleware(
        BrowserGuardMiddleware,
        hosts=allowed_hosts(host, s.allowed_hosts),
        authenticated=authenticator is not None,
    )
    app.add_middleware(RequestLogMiddleware)  # outermost: request id and access log of all

    def rt() -> _Runtime:
        return runtime["rt"]

    async def store_ready(request: Request) -> None:
        """503 with Retry-After at once while the store is being reopened; otherwise remember
        the store this request starts with (a failure of an older store reopens nothing)."""
        request.state.store = rt().supervisor.check()

    NeedsStore = [Depends(store_ready)]

    # -- errors ---------------------------------------------------------------------------------
    @app.exception_handler(KgragError)
    async def _kgrag_error(_: Request, exc: KgragError) -> JSONResponse:
        return JSONResponse(error_body(error_code(exc), str(exc)), status_code=status_of(exc))

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(
            error_body(exc.error, exc.detail), status_code=exc.status, headers=exc.headers
        )

    @app.exception_handler(StoreUnavailableError)
    async def _store_unavailable(request: Request, exc: StoreUnavailableError) -> JSONResponse:
        # the cause (paths, socket) goes to the log; the client learns when to retry
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        supervisor = rt().supervisor
        supervisor.failed(getattr(request.state, "store", None), exc)
        return await _api_error(request, supervisor.unavailable())

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        detail = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")}
            for e in exc.errors()
        ]
        return JSONResponse(error_body("invalid_request", detail), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {
            400: "bad_request",
            404: "not_found",
            405: "method_not_allowed",
            413: "request_too_large",
        }.get(exc.status_code, "http_error")
        # the headers of the exception stay: Allow of a 405 (RFC 9110), ...
        return JSONResponse(
            error_body(code, exc.detail), status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return JSONResponse(
            error_body("internal", f"{type(exc).__name__}; see the server log"), status_code=500
        )

    # -- routes ---------------------------------------------------------------------------------
    @app.get(
        "/healthz",
        tags=["service"],
        operation_id="healthz",
        response_model=Health,
        responses=errors(503),
    )
    def healthz() -> Health:
        """Readiness: the store answers a cheap read. 503 ``store_unavailable`` with
        Retry-After when it does not (the server is then reopening it by itself)."""
        supervisor = rt().supervisor
        store = supervisor.check()
        try:
            probe_store(store)
        except StoreUnavailableError as e:
            log.warning("GET /healthz: %s", e)
            supervisor.failed(store, e)
            raise supervisor.unavailable() from e
        except Exception as e:
            log.warning("GET /healthz: the store failed a read: %s", e)
            raise ApiError(
                503,
                "store_error",
                f"the graph store failed a read ({type(e).__name__}); see the server log",
                headers={"Retry-After": "5"},
            ) from e
        return Health(
            status="ok",
            version=__version__,
            store_reopens=supervisor.reopens,
            store_failures=supervisor.failures,
        )

    @app.get("/livez", tags=["service"], operation_id="livez", response_model=Liveness)
    def livez() -> Liveness:
        """Liveness: the process answers HTTP (it touches nothing else; restart it when this
        fails)."""
        return Liveness(status="alive", version=__version__)

    @app.get(
        "/readyz",
        tags=["service"],
        operation_id="readyz",
        response_model=Health,
        responses=errors(503),
    )
    def readyz() -> Health:
        """Readiness: the store answers a cheap read (as ``/healthz``); 503 while it does not,
        so that a load balancer sends the requests elsewhere meanwhile."""
        return healthz()

    @app.get(
        "/metrics",
        tags=["service"],
        operation_id="metrics",
        response_class=PlainTextResponse,
        responses={
            **errors(403),
            200: {
                "description": "the Prometheus text format",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            },
        },
    )
    def metrics_page(who: Caller) -> Response:
        """This process's metrics in the Prometheus text format (docs/operations.md lists
        them). Needs the ``metrics`` role (an admin has it)."""
        require(who, Role.METRICS)
        metrics.JOB_QUEUE_DEPTH.set(rt().jobs.waiting)
        return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE_LATEST)

    @app.post(
        "/ingest",
        status_code=202,
        response_model=JobView,
        tags=["ingest"],
        operation_id="ingest",
        responses={
            **errors(400, 403, 413, 422, 429),
            202: {
                "description": "the job, queued",
                "links": {
                    "job": {
                        "operationId": "getJob",
                        "parameters": {"job_id": "$response.body#/id"},
                        "description": "poll the job until it is done or failed",
                    }
                },
            },
        },
    )
    def ingest(body: IngestRequest, who: Caller, response: Response) -> JobView:
        """Queue files, folders, globs or manifests on the server's disk (inside the ingest
        roots) for ingestion; returns the job to poll at ``GET /jobs/{id}``. Needs the
        ``writer`` role; a re-ingest that changes a document's ACL needs ``admin`` (that
        file fails in the job's report otherwise)."""
        require(who, Role.WRITER)
        paths = confine_paths(body.paths, body.acl, s.ingest_roots)
        job = rt().jobs.submit(paths, body.acl, who)
        response.headers["X-Kgrag-Job-Id"] = job.id  # the access log names the job
        return job

    @app.get(
        "/jobs/{job_id}",
        response_model=JobView,
        tags=["ingest"],
        operation_id="getJob",
        responses=errors(404, 422),
    )
    def job(
        who: Caller,
        job_id: str = PathParam(pattern=TEXT_PATTERN, description="the id POST /ingest gave"),
    ) -> JobView:
        """A job, to the principal that submitted it or an admin (404 to anyone else)."""
        found = rt().jobs.get(job_id)
        if found is not None and not (who.can(Role.ADMIN) or rt().jobs.owner(job_id) == who.id):
            found = None
        if found is None:
            raise NotFoundError(f"no ingest job {job_id!r} (jobs are forgotten at restart)")
        return found

    @app.post(
        "/ask",
        tags=["ask"],
        dependencies=NeedsStore,
        operation_id="ask",
        responses={
            **errors(400, 403, 409, 413, 422, 501, 502),
            200: {**_ANSWER_200, "links": {**_trace_links(), **_FOLLOW_UP_LINKS}},
        },
    )
    async def ask(body: AskRequest, who: Caller) -> JSONResponse:
        """Answer with citations; the body is what ``kgrag ask --json`` prints."""
        require(who, Role.READER)
        reader = acting_as(who, body.user, body.groups)
        # KnowledgeAgent.aask: the run works in the event loop's executor, not a request
        # thread of its own; a cancelled request stops it at its next event
        answer = await rt().agent.aask(
            body.question,
            session_id=body.session_id,
            user=reader.user,
            groups=reader.groups,
            asked_by=who.id,
        )
        return _answer_response(answer)

    @app.post(
        "/ask/upload",
        tags=["ask"],
        dependencies=NeedsStore,
        operation_id="askUpload",
        responses={**errors(400, 403, 409, 413, 422, 501, 502), 200: _ANSWER_200},
    )
    def ask_upload(
        who: Caller,
        files: Annotated[
            list[UploadFile],
            File(
                min_length=1,
                max_length=MAX_ATTACHMENTS,
                description=f"images or recordings (1 to {MAX_ATTACHMENTS})",
            ),
        ],
        question: Annotated[
            str, Form(pattern=TEXT_PATTERN, description="the question; empty: the files ask")
        ] = "",
        session_id: Annotated[
            str | None,
            Form(
                pattern=KEY_PATTERN,
                max_length=KEY_MAX_CHARS,
                description="conversation id, as in POST /ask",
            ),
        ] = None,
        user: Annotated[
            str | None,
            Form(
                pattern=KEY_PATTERN,
                max_length=KEY_MAX_CHARS,
                description="ask as this user (needs the impersonate role)",
            ),
        ] = None,
        groups: Annotated[
            str | None,
            Form(
                pattern=GROUPS_PATTERN,
                description="comma-separated groups to ask with (needs the impersonate role)",
            ),
        ] = None,
    ) -> JSONResponse:
        """A question with attached files (multipart/form-data), answered as POST /ask is.
        The request size is limited (``KGRAG_MAX_REQUEST_BYTES``); each file is checked like
        an ingested one (size, signature) and a bad one is refused with 422 naming it."""
        require(who, Role.READER)
        reader = acting_as(who, user, _groups(groups))
        with tempfile.TemporaryDirectory(prefix="kgrag-upload-") as folder:
            paths = []
            for index, upload in enumerate(files):
                target = Path(folder) / str(index) / _safe_name(upload.filename, index)
                target.parent.mkdir()
                with target.open("wb") as f:
                    while chunk := upload.file.read(1 << 20):
                        f.write(chunk)
                paths.append(target)
            answer = rt().agent.ask(
                question,
                session_id=session_id,
                user=reader.user,
                groups=reader.groups,
                attachments=paths,
                asked_by=who.id,
            )
        return _answer_response(answer)

    @app.post(
        "/ask/stream",
        tags=["ask"],
        dependencies=NeedsStore,
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
    async def ask_stream(body: AskRequest, request: Request, who: Caller) -> StreamingResponse:
        """Server-sent events as the answer is built (``KnowledgeAgent.stream``): ``rewrite``
        for a resolved follow-up, then per iteration ``plan``, one ``step`` per step and
        ``evaluation``; finally ``answer`` (the body of POST /ask) and ``complete``, or
        ``error`` (with ``status``, and ``retry_after`` when the store stopped answering)."""
        require(who, Role.READER)
        reader = acting_as(who, body.user, body.groups)
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()
        agent_ = rt().agent
        supervisor = rt().supervisor
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

        worker = loop.run_in_executor(None, run)

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

    ReaderUser = Query(
        None,
        pattern=KEY_PATTERN,
        max_length=KEY_MAX_CHARS,
        description="read as this user (needs the impersonate role)",
    )
    ReaderGroups = Query(
        None,
        pattern=GROUPS_PATTERN,
        description="comma-separated groups to read with (needs the impersonate role)",
    )
    QueryId = PathParam(pattern=TEXT_PATTERN, description="the query id of an answer")
    QUERY_ERRORS = errors(403, 404, 422)

    def opened_query(
        query_id: str, who: Principal, user: str | None, groups: str | None
    ) -> Principal:
        """Who reads query ``query_id``: its asker (the same user, holding every group the
        question was asked with) or an admin; 404 to anyone else, as for an unknown id."""
        require(who, Role.READER)
        reader = acting_as(who, user, _groups(groups))
        check_query_reader(rt().agent.store, query_id, reader)
        return reader

    def readable_trace(
        query_id: str, who: Principal, user: str | None, groups: str | None
    ) -> dict[str, Any]:
        reader = opened_query(query_id, who, user, groups)
        return read_trace(rt().agent.store, query_id, reader.access())

    def readable_audit(
        query_id: str, who: Principal, user: str | None, groups: str | None
    ) -> AuditReport:
        from kgrag.agent.audit import build_audit

        reader = opened_query(query_id, who, user, groups)
        return build_audit(rt().agent.store, query_id, reader.access())

    @app.get(
        "/queries/{query_id}/trace",
        tags=["queries"],
        dependencies=NeedsStore,
        operation_id="getTrace",
        responses=QUERY_ERRORS,
    )
    def trace(
        who: Caller,
        query_id: str = QueryId,
        user: str | None = ReaderUser,
        groups: str | None = ReaderGroups,
    ) -> dict[str, Any]:
        """The reasoning of one answer (``kgrag trace --json``)."""
        return readable_trace(query_id, who, user, groups)

    @app.get(
        "/queries/{query_id}/trace.html",
        response_class=HTMLResponse,
        tags=["queries"],
        dependencies=NeedsStore,
        operation_id="getTraceHtml",
        responses=QUERY_ERRORS,
    )
    def trace_html(
        who: Caller,
        query_id: str = QueryId,
        user: str | None = ReaderUser,
        groups: str | None = ReaderGroups,
    ) -> HTMLResponse:
        """The trace viewer page (``kgrag trace --html``)."""
        from kgrag.viewer import render_trace_html

        page = render_trace_html(readable_trace(query_id, who, user, groups))
        return HTMLResponse(page, headers={"Content-Security-Policy": _HTML_CSP})

    @app.get(
        "/queries/{query_id}/audit",
        tags=["queries"],
        dependencies=NeedsStore,
        operation_id="getAudit",
        responses={**QUERY_ERRORS, 200: {"model": AuditReport, "description": "the audit"}},
    )
    def audit(
        who: Caller,
        query_id: str = QueryId,
        user: str | None = ReaderUser,
        groups: str | None = ReaderGroups,
    ) -> JSONResponse:
        """The audit report (``kgrag audit --json``); ``asked_by`` names who really asked."""
        return JSONResponse(readable_audit(query_id, who, user, groups).model_dump(mode="json"))

    @app.get(
        "/queries/{query_id}/audit.html",
        response_class=HTMLResponse,
        tags=["queries"],
        dependencies=NeedsStore,
        operation_id="getAuditHtml",
        responses=QUERY_ERRORS,
    )
    def audit_html(
        who: Caller,
        query_id: str = QueryId,
        user: str | None = ReaderUser,
        groups: str | None = ReaderGroups,
    ) -> HTMLResponse:
        """The audit report as one self-contained page (``kgrag audit --html``)."""
        page = readable_audit(query_id, who, user, groups).to_html()
        return HTMLResponse(page, headers={"Content-Security-Policy": _HTML_CSP})

    @app.delete(
        "/documents/{document_id}",
        status_code=204,
        tags=["ingest"],
        dependencies=NeedsStore,
        operation_id="deleteDocument",
        responses={**errors(403, 404, 422), 204: {"description": "deleted"}},
    )
    def delete_document(
        who: Caller,
        document_id: Annotated[
            str, PathParam(pattern=TEXT_PATTERN, description="a document id (`kgrag db documents`)")
        ],
    ) -> Response:
        """Remove a document and what only it supported (``kgrag delete``). Needs ``admin``."""
        require(who, Role.ADMIN)
        rt().agent.delete(document_id)
        return Response(status_code=204)

    @app.delete(
        "/users/{user}/questions",
        tags=["queries"],
        dependencies=NeedsStore,
        operation_id="forgetUser",
        response_model=ErasureReport,
        responses=errors(403, 422),
    )
    def forget_user(
        who: Caller,
        user: Annotated[
            str,
            PathParam(pattern=KEY_PATTERN, max_length=KEY_MAX_CHARS, description="a user name"),
        ],
    ) -> ErasureReport:
        """Erase a user's questions: their traces, answers and audits, and the sessions left
        without a question (``kgrag forget --user``). Other users' questions stay. Needs
        ``admin``."""
        from kgrag.retention import forget_user as forget

        require(who, Role.ADMIN)
        report = forget(rt().agent.store, user)
        log.warning("%s erased the questions of a user: %d questions", who.id, report.queries)
        return ErasureReport(queries=report.queries, nodes=report.nodes, sessions=report.sessions)

    return app
