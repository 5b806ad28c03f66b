"""Request and response bodies of the HTTP API."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kgrag.agent.answer import Answer
from kgrag.ingest.pipeline import IngestReport


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class IngestRequest(_Body):
    paths: list[str] = Field(
        ..., min_length=1, description="files, folders, globs or JSONL manifests on the server"
    )
    acl: list[str] = Field(
        default_factory=list, description="principals allowed to read; public when empty"
    )


class JobView(_Body):
    """An ingestion job: queued, running, done or failed, and its report when finished."""

    id: str
    status: Literal["queued", "running", "done", "failed"]
    paths: list[str]
    acl: list[str]
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    report: IngestReport | None = None
    error: str | None = None
    attempts: int = Field(
        0,
        description="times the job ran: one more after each loss of the store (at most 3); the "
        "report is the last attempt's (documents stored by earlier attempts count as skipped)",
    )


class AskRequest(_Body):
    question: str = Field(..., min_length=1)
    session_id: str | None = Field(
        None,
        min_length=1,
        description="conversation id: a non-empty string without surrounding whitespace or "
        "control characters, at most 1,024 UTF-8 bytes (else 422)",
    )
    user: str | None = None
    groups: list[str] = Field(default_factory=list)


class ErrorBody(_Body):
    error: str
    detail: Any = None


def answer_json(answer: Answer) -> dict[str, Any]:
    """The answer as ``kgrag ask --json`` prints it."""
    return answer.to_json()
