"""Every HTTP request gets a request id (the client's ``X-Request-Id`` when it is a plain token,
else a new one), echoed in the response, set on every log record of the request
(:func:`kgrag.logs.log_context`), and one access log line (logger ``kgrag.access``: method, route
template, status, latency, principal, and the query id or job id the response names) when it
ends; it is counted in ``kgrag_http_requests`` and ``kgrag_http_request_seconds``. Neither the
query string nor the body is logged."""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

from kgrag import metrics
from kgrag.auth.principal import Principal
from kgrag.logs import log_context
from kgrag.server.security import HttpMiddleware, headers_of

access_log = logging.getLogger("kgrag.access")

REQUEST_ID_HEADER = "x-request-id"
#: A client's request id is kept only when it is this plain (it goes into logs and headers).
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
#: The route label of a request no route matched (404s): never the raw path, which is unbounded.
UNMATCHED = "unmatched"


def request_id_of(headers: dict[str, str]) -> str:
    """The client's request id when it is a plain token, else a new random one."""
    given = headers.get(REQUEST_ID_HEADER, "")
    return given if _REQUEST_ID.match(given) else uuid.uuid4().hex


def route_of(scope: dict[str, Any]) -> str:
    """The matched route's template (``/queries/{query_id}/trace``), else ``unmatched``."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else UNMATCHED


class RequestLogMiddleware(HttpMiddleware):
    """Request id, access log and HTTP metrics (the outermost middleware: it sees every
    response, a 401 or a 503 of the other middlewares included)."""

    async def http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        request_id = request_id_of(headers_of(scope))
        started = time.perf_counter()
        status = 500
        named: dict[str, str] = {}

        async def send_with_id(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers", []))
                for key, value in headers:
                    name = key.decode("latin-1").lower()
                    if name == "x-kgrag-query-id":
                        named["query_id"] = value.decode("latin-1")
                    elif name == "x-kgrag-job-id":
                        named["job_id"] = value.decode("latin-1")
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        with log_context(request_id=request_id, method=scope["method"]) as context:
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                route = route_of(scope)
                seconds = time.perf_counter() - started
                job_id = named.get("job_id") or scope.get("path_params", {}).get("job_id")
                who = scope.get("state", {}).get("principal")
                context.update(route=route)
                metrics.HTTP_REQUESTS.labels(
                    method=scope["method"], route=route, status=str(status)
                ).inc()
                metrics.HTTP_SECONDS.labels(route=route).observe(seconds)
                access_log.info(
                    "%s %s %d",
                    scope["method"],
                    route,
                    status,
                    extra={
                        "route": route,
                        "status": status,
                        "latency_ms": round(seconds * 1000.0, 1),
                        "query_id": named.get("query_id")
                        or scope.get("path_params", {}).get("query_id"),
                        "job_id": job_id,
                        "principal": who.id if isinstance(who, Principal) else None,
                    },
                )
