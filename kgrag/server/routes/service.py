"""The service routes: liveness, readiness and the Prometheus metrics."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse, Response

from kgrag import __version__, metrics
from kgrag.auth.principal import Role
from kgrag.errors import StoreUnavailableError
from kgrag.server.deps import AppState, Caller
from kgrag.server.errors import ApiError
from kgrag.server.identity import require
from kgrag.server.models import Health, Liveness
from kgrag.server.openapi import errors
from kgrag.server.recovery import probe_store
from kgrag.server.state import ServerState

log = logging.getLogger(__name__)

router = APIRouter(tags=["service"])


def _health(state: ServerState) -> Health:
    state.drain.check()  # shutting down: not ready for new work
    supervisor = state.supervisor
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


@router.get("/healthz", operation_id="healthz", response_model=Health, responses=errors(503))
def healthz(state: AppState) -> Health:
    """Readiness: the store answers a cheap read. 503 ``store_unavailable`` with
    Retry-After when it does not (the server is then reopening it by itself), 503
    ``shutting_down`` once the server drains (SIGTERM)."""
    return _health(state)


@router.get("/livez", operation_id="livez", response_model=Liveness)
def livez() -> Liveness:
    """Liveness: the process answers HTTP (it touches nothing else; restart it when this
    fails)."""
    return Liveness(status="alive", version=__version__)


@router.get("/readyz", operation_id="readyz", response_model=Health, responses=errors(503))
def readyz(state: AppState) -> Health:
    """Readiness: the store answers a cheap read (as ``/healthz``); 503 while it does not or
    while the server drains, so that a load balancer sends the requests elsewhere."""
    return _health(state)


@router.get(
    "/metrics",
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
def metrics_page(who: Caller, state: AppState) -> Response:
    """This process's metrics in the Prometheus text format (docs/operations.md lists
    them). Needs the ``metrics`` role (an admin has it)."""
    require(who, Role.METRICS)
    metrics.JOB_QUEUE_DEPTH.set(state.jobs.waiting)
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE_LATEST)
