"""What ``/openapi.json`` says besides the routes themselves: every status an operation can answer
with its error body and headers, the bearer credential (an API key or a JWT; declared only when
authentication is configured), and the links
between operations (a job to poll, the trace of an answer) that clients and fuzzers follow.

The statuses each route declares are listed next to the route in :mod:`kgrag.server.routes` with
:func:`errors`; what every route shares (the token, the concurrency bound, an unexpected
error, the Host and cross-site checks) is added here by :func:`document`, so no route can
forget it."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from kgrag.server.models import ErrorBody
from kgrag.server.security import OPEN_PATHS

#: Name of the bearer credential's security scheme.
BEARER = "bearerAuth"

_SECONDS = {"type": "string", "pattern": "^[0-9]+$"}
RETRY_AFTER = {
    "Retry-After": {
        "description": "seconds to wait before sending the request again",
        "required": True,
        "schema": _SECONDS,
    }
}

#: What each error status means on this API (the ``error`` codes it carries).
ERRORS: dict[int, str] = {
    400: "`invalid_host` (the Host header is not one this server answers for), or the body "
    "could not be read (`bad_request`: not UTF-8 JSON, a broken multipart form)",
    401: "`unauthorized`: no credential, or an unknown, revoked or expired API key, or a JWT "
    "that does not verify",
    403: "refused: `forbidden` (the credential lacks the role), `impersonation_refused` "
    "(`user`/`groups` named without the impersonate role), `cross_site_request`, "
    "`ingest_disabled`, `path_outside_roots` or `query_refused`",
    404: "`not_found`: no such id, or not readable by this user",
    409: "`embedding_space_mismatch`: the store was built with another embedding model",
    413: "`request_too_large`: the body is over `KGRAG_MAX_REQUEST_BYTES`",
    422: "`invalid_request` (the body or a parameter does not match this schema), "
    "`invalid_key`, `plan`, `ingest` (a file that cannot be read: named in `detail`)",
    429: "`ingest_queue_full`: too many ingestion jobs wait to run",
    500: "`internal` or `store`: an unexpected error (the cause is in the server log)",
    501: "`dependency_missing`: an optional extra is not installed",
    502: "`model`: the language model or a model service failed",
    503: "`server_busy` (too many requests at once), `store_unavailable` (the store is being "
    "reopened), `store_error`, or `shutting_down` (the server drains after SIGTERM: no new "
    "questions or jobs)",
}
_HEADERS: dict[int, dict[str, Any]] = {
    401: {
        "WWW-Authenticate": {
            "description": "`Bearer`",
            "required": True,
            "schema": {"type": "string"},
        }
    },
    429: RETRY_AFTER,
    503: RETRY_AFTER,
}


def error(status: int) -> dict[str, Any]:
    """The response object of one error status (an :class:`ErrorBody`, and its headers)."""
    out: dict[str, Any] = {"model": ErrorBody, "description": ERRORS[status]}
    if status in _HEADERS:
        out["headers"] = _HEADERS[status]
    return out


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """Part of a route's ``responses=``: the error statuses it can answer besides those every
    route shares (added by :func:`document`)."""
    return {s: error(s) for s in statuses}


def _error_object(status: int, schema_ref: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": ERRORS[status],
        "content": {"application/json": {"schema": schema_ref}},
    }
    if status in _HEADERS:
        out["headers"] = _HEADERS[status]
    return out


def document(app: FastAPI, *, authenticated: bool) -> None:
    """Make ``app.openapi()`` add what every operation shares: 400 ``invalid_host``, 500;
    outside :data:`~kgrag.server.security.OPEN_PATHS` 403 and 503 ``server_busy`` and, with
    authentication configured, 401 and the bearer security scheme."""

    generate = app.openapi  # FastAPI's own, which caches its result in app.openapi_schema

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()
        ref = {"$ref": "#/components/schemas/ErrorBody"}
        components = schema.setdefault("components", {})
        if authenticated:
            components.setdefault("securitySchemes", {})[BEARER] = {
                "type": "http",
                "scheme": "bearer",
                "description": "an API key (`kgrag auth add-key`) or a JWT from the "
                "configured issuer",
            }
        for path, item in schema.get("paths", {}).items():
            for operation in item.values():
                answers = operation.setdefault("responses", {})
                for status, answer in answers.items():
                    # every error is JSON, also on a route whose success is an HTML page
                    if int(status) >= 400:
                        answer["content"] = {"application/json": {"schema": ref}}
                answers.setdefault("400", _error_object(400, ref))
                answers.setdefault("500", _error_object(500, ref))
                if path not in OPEN_PATHS:  # no credential nor concurrency bound there
                    answers.setdefault("403", _error_object(403, ref))
                    answers.setdefault("503", _error_object(503, ref))
                    if authenticated:
                        answers.setdefault("401", _error_object(401, ref))
                        operation["security"] = [{BEARER: []}]
                operation["responses"] = dict(sorted(answers.items()))
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
