"""KgragError -> HTTP status, and every error as JSON ``{"error": ..., "detail": ...}``."""

from __future__ import annotations

import logging
import re
from typing import Any

from kgrag import errors as e

log = logging.getLogger(__name__)

#: Most specific first: the first class an error is an instance of decides its status.
STATUS: tuple[tuple[type[e.KgragError], int], ...] = (
    (e.NotFoundError, 404),
    (e.PlanError, 422),
    (e.IngestError, 422),
    (e.InvalidKeyError, 422),
    (e.InvalidTextError, 422),
    (e.QueryRefusedError, 403),
    (e.EmbeddingSpaceMismatchError, 409),
    (e.StoreUnavailableError, 503),
    (e.DependencyMissingError, 501),
    (e.ModelError, 502),
    (e.KgragError, 500),
)


class ApiError(Exception):
    """An error the API itself raises (refused path, bad token, server busy, ...); ``headers``
    go into the response (``Retry-After`` of a 503 or 429)."""

    def __init__(
        self, status: int, error: str, detail: Any, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(f"{error}: {detail}")
        self.status = status
        self.error = error
        self.detail = detail
        self.headers = dict(headers or {})


def error_code(exc: BaseException) -> str:
    """``NotFoundError`` -> ``not_found``."""
    name = type(exc).__name__.removesuffix("Error") or "error"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def status_of(exc: e.KgragError) -> int:
    for cls, status in STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def error_body(error: str, detail: Any) -> dict[str, Any]:
    return {"error": error, "detail": detail}
