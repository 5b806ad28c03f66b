"""What guards the HTTP API besides who is asking (:mod:`kgrag.server.identity`) and browsers
(:mod:`kgrag.server.browser`): a request body size limit (an ASGI middleware, before any body is
read), a bound on the requests handled at once, and the ingest roots that confine POST
/ingest."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException as StarletteHTTPException

from kgrag.ingest.sources import expand_inputs
from kgrag.server.errors import ApiError, error_body

#: Paths anyone may GET without a credential (health probes and the API description).
OPEN_PATHS = frozenset(
    {"/healthz", "/livez", "/readyz", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}
)


class _TooLarge(StarletteHTTPException):
    """Raised from ``receive``: FastAPI passes HTTP exceptions of body parsing through."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(413, _too_large(size, limit)["detail"])
        self.size = size


class HttpMiddleware:
    """An ASGI middleware of HTTP requests (:meth:`http`); anything else (lifespan) passes."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        raise NotImplementedError


def headers_of(scope: dict[str, Any]) -> dict[str, str]:
    """A request's headers by lower-case name."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


class GuardMiddleware(HttpMiddleware):
    """413 when a body exceeds ``max_bytes`` (declared or counted as it streams)."""

    def __init__(self, app: Any, *, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = headers_of(scope)
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await reply(send, 413, _too_large(int(declared), self.max_bytes))
            return
        seen = 0
        started = False

        async def limited_receive() -> dict[str, Any]:
            nonlocal seen
            message: dict[str, Any] = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge(seen, self.max_bytes)
            return message

        async def tracking_send(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await reply(send, 413, _too_large(seen, self.max_bytes))


class ConcurrencyLimitMiddleware(HttpMiddleware):
    """At most ``limit`` requests in progress at once (a streamed answer counts until its last
    event); one more is answered 503 ``server_busy`` with ``Retry-After`` at once, never queued.
    The open paths (``/healthz``, the schema) are not counted."""

    def __init__(self, app: Any, *, limit: int, retry_after_s: int = 1) -> None:
        if limit < 1:
            raise ValueError("the concurrency limit must be at least 1")
        super().__init__(app)
        self.limit = limit
        self.retry_after_s = retry_after_s
        self.active = 0  # touched only on the event loop: no lock needed

    async def http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        if self.active >= self.limit:
            await reply(
                send,
                503,
                error_body(
                    "server_busy",
                    f"this server already handles {self.limit} requests, the most it takes at "
                    f"once; retry after {self.retry_after_s} s",
                ),
                extra=[(b"retry-after", str(self.retry_after_s).encode())],
            )
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1


def _too_large(size: int, limit: int) -> dict[str, Any]:
    return error_body(
        "request_too_large",
        f"the request body has at least {size} bytes; this server accepts at most {limit} "
        "(KGRAG_MAX_REQUEST_BYTES). Send paths on the server's disk to POST /ingest, not files.",
    )


async def reply(
    send: Any, status: int, body: dict[str, Any], extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


def confine_paths(paths: Sequence[str], acl: Sequence[str], roots: Sequence[Path]) -> list[str]:
    """The absolute paths to ingest, or :class:`ApiError` 403 when any input, or any file it
    expands to (folders, globs, manifests, symlinks followed), lies outside the ingest roots.
    Relative paths are taken relative to the first root."""
    if not roots:
        raise ApiError(
            403,
            "ingest_disabled",
            "this server has no ingest roots: start it with `kgrag serve --ingest-root DIR` "
            "(or KGRAG_INGEST_ROOTS='[\"/dir\"]') to allow POST /ingest under DIR",
        )
    resolved_roots = [r.expanduser().resolve() for r in roots]
    out = []
    for raw in paths:
        if "\x00" in raw:
            raise ApiError(400, "invalid_path", "a path contains a NUL byte")
        candidate = Path(raw)
        if not candidate.is_absolute():
            candidate = resolved_roots[0] / candidate
        lexical = Path(os.path.normpath(candidate))
        real = candidate.resolve()
        if not (_inside(lexical, resolved_roots) and _inside(real, resolved_roots)):
            raise ApiError(403, "path_outside_roots", f"{raw!r} is outside the ingest roots")
        out.append(str(lexical))
    expanded = expand_inputs(out, acl, root=resolved_roots[0])
    for item in expanded.items:
        if not _inside(item.path, resolved_roots):
            raise ApiError(
                403,
                "path_outside_roots",
                f"{str(item.path)!r} (reached through the inputs) is outside the ingest roots",
            )
    return out
