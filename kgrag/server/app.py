"""The HTTP API over the same library calls as the CLI: one KnowledgeAgent per process,
ingestion as background jobs on one writer thread (a bounded queue), questions answered
concurrently (a bounded number at once). A store that stops answering is reopened by the server
itself (:mod:`kgrag.server.recovery`); meanwhile requests get 503 with Retry-After.

Who asks is who the request authenticated as (:mod:`kgrag.server.identity`: an API key or a JWT;
without authentication configured, the local principal on a loopback-only server). Only a
principal with the ``impersonate`` role may name ``user``/``groups``; the question then records
who really asked (``asked_by``).

The routes are one :class:`~fastapi.APIRouter` per area (:mod:`kgrag.server.routes`); what the
app holds while it runs is a typed :class:`~kgrag.server.state.ServerState` on ``app.state``."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI

from kgrag import __version__
from kgrag.auth.authenticator import Authenticator
from kgrag.config import Settings
from kgrag.server._handlers import install_error_handlers
from kgrag.server.browser import BrowserGuardMiddleware, allowed_hosts
from kgrag.server.identity import AuthMiddleware
from kgrag.server.observability import RequestLogMiddleware
from kgrag.server.openapi import document
from kgrag.server.recovery import StoreSupervisor
from kgrag.server.routes import ask, documents, ingest, queries, service, users
from kgrag.server.security import ConcurrencyLimitMiddleware, GuardMiddleware
from kgrag.server.state import ServerState

if TYPE_CHECKING:
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.graph.store import GraphStore

log = logging.getLogger(__name__)

#: The longest wait between two attempts to get the store back: reopening an embedded store
#: starts a server (backed off further), probing a remote one that reconnects by itself is a
#: cheap read (so it is seen back within seconds of answering again).
REOPEN_MAX_BACKOFF_S = 30.0
PROBE_MAX_BACKOFF_S = 5.0


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
    concurrent = max_concurrent_requests or s.max_concurrent_requests
    queued = max_queued_jobs or s.max_queued_jobs

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
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
        state = ServerState(s, opened, supervisor, max_queued_jobs=queued)
        app.state.server = state
        state.start_retention()
        log.info("kgrag API ready on store %s", opened.store.uri)
        if authenticator is None:
            log.warning(
                "no authentication configured (KGRAG_API_KEYS_FILE, KGRAG_JWT_*): every "
                "request acts as the local principal, with every role; loopback only"
            )
        try:
            yield
        finally:
            if state.retention is not None:
                await asyncio.to_thread(state.retention.stop)
            await asyncio.to_thread(state.jobs.close)
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
    install_error_handlers(app)
    # in this order: the order of the paths in /openapi.json
    for area in (service, ingest, ask, queries, documents, users):
        app.include_router(area.router)
    return app
