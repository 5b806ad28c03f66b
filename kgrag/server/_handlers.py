"""Every error as JSON (:func:`install_error_handlers`): a :class:`KgragError` with its status
(:mod:`kgrag.server.errors`), an :class:`ApiError` as raised, a store that stopped answering as
503 with Retry-After (and its recovery started), an invalid request as 422, and anything
unexpected as 500 without its details (they go to the log)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match, Route

from kgrag.errors import KgragError, StoreUnavailableError
from kgrag.server.errors import ApiError, error_body, error_code, status_of
from kgrag.server.state import server_state_of

log = logging.getLogger(__name__)


def api_error_response(exc: ApiError) -> JSONResponse:
    """An :class:`ApiError` as its JSON response, with its headers."""
    return JSONResponse(
        error_body(exc.error, exc.detail), status_code=exc.status, headers=exc.headers
    )


def _plain_routes(routes: Iterable[BaseRoute]) -> Iterator[Route]:
    """The routes of an app, those of its included routers too (FastAPI 0.165 keeps an included
    router as one entry, older versions copy its routes into the app)."""
    for route in routes:
        if isinstance(route, Route):
            yield route
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _plain_routes(inner.routes)


def allowed_methods(request: Request) -> str:
    """The ``Allow`` value of a 405: the methods of every route of this path. Starlette names only
    those of the first route that matches the path, so a path served by two routes (POST and
    DELETE ``/queries/{id}/flag``) would answer ``Allow: POST`` alone."""
    methods: set[str] = set()
    for route in _plain_routes(request.app.router.routes):
        if route.methods and route.matches(request.scope)[0] is not Match.NONE:
            methods |= route.methods
    return ", ".join(sorted(methods))


def install_error_handlers(app: FastAPI) -> None:
    """Register the error handlers on ``app``."""

    @app.exception_handler(KgragError)
    async def _kgrag_error(_: Request, exc: KgragError) -> JSONResponse:
        return JSONResponse(error_body(error_code(exc), str(exc)), status_code=status_of(exc))

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return api_error_response(exc)

    @app.exception_handler(StoreUnavailableError)
    async def _store_unavailable(request: Request, exc: StoreUnavailableError) -> JSONResponse:
        # the cause (paths, socket) goes to the log; the client learns when to retry
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        supervisor = server_state_of(request.app.state).supervisor
        supervisor.failed(getattr(request.state, "store", None), exc)
        return api_error_response(supervisor.unavailable())

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        detail = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")}
            for e in exc.errors()
        ]
        return JSONResponse(error_body("invalid_request", detail), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {
            400: "bad_request",
            404: "not_found",
            405: "method_not_allowed",
            413: "request_too_large",
        }.get(exc.status_code, "http_error")
        # the headers of the exception stay; Allow of a 405 names every method of the path
        # (RFC 9110)
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = allowed_methods(request)
        return JSONResponse(
            error_body(code, exc.detail), status_code=exc.status_code, headers=headers
        )

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return JSONResponse(
            error_body("internal", f"{type(exc).__name__}; see the server log"), status_code=500
        )
