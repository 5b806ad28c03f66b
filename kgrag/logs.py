"""Log records as text (the default) or as JSON, one object a line, for a log shipper.

A JSON line holds ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message`` and, when known,
the ids that lead from a line to its trace: ``request_id``, ``route``, ``method``, ``status``,
``latency_ms``, ``query_id``, ``job_id`` and ``principal`` (a credential id such as
``key:3f2a``, never a secret). They come from :func:`log_context` (the HTTP middleware and the
ingestion worker set it) or from a record's ``extra``. Request bodies, questions and document text
are never put there; the message is kgrag's own text.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Literal

LogFormat = Literal["text", "json"]

#: The fields a JSON line may carry besides time, level, logger and message.
CONTEXT_FIELDS = (
    "request_id",
    "method",
    "route",
    "status",
    "latency_ms",
    "query_id",
    "job_id",
    "principal",
)

_CONTEXT: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "kgrag_log_context", default=None
)

TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"


@contextlib.contextmanager
def log_context(**fields: Any) -> Iterator[dict[str, Any]]:
    """Put ``fields`` (of :data:`CONTEXT_FIELDS`) on every record logged inside; yields the
    context's dict, which the caller may fill in later (e.g. the principal once known)."""
    unknown = set(fields) - set(CONTEXT_FIELDS)
    if unknown:
        raise ValueError(f"unknown log context fields: {sorted(unknown)}")
    merged = {**(_CONTEXT.get() or {}), **fields}
    token = _CONTEXT.set(merged)
    try:
        yield merged
    finally:
        _CONTEXT.reset(token)


def current_context() -> dict[str, Any]:
    return dict(_CONTEXT.get() or {})


class JsonFormatter(logging.Formatter):
    """One JSON object a line (see the module's docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        context = _CONTEXT.get() or {}
        for name in CONTEXT_FIELDS:
            value = getattr(record, name, None)
            if value is None:
                value = context.get(name)
            if value is not None:
                line[name] = value
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(fmt: LogFormat, level: int = logging.INFO) -> None:
    """Send the root logger's records to stderr in ``fmt``, replacing its handlers."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
