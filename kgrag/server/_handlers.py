"""Every error as JSON (:func:`install_error_handlers`): a :class:`KgragError` with its status
(:mod:`kgrag.server.errors`), an :class:`ApiError` as raised, a store that stopped answering as
503 with Retry-After (and its recovery started), an invalid request as 422, and anything
unexpected as 500 without its details (they go to the log)."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kgrag.errors import KgragError, StoreUnavailableError
from kgrag.server.errors import ApiError, error_body, error_code, status_of
from kgrag.server.state import server_state_of

log = logging.getLogger(__name__)


def api_error_response(exc: ApiError) -> JSONResponse:
    """An :class:`ApiError` as its JSON response, with its headers."""
    return JSONResponse(
        error_body(exc.error, exc.detail), status_code=exc.status, headers=exc.headers
    )


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
