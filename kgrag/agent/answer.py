"""What a question gets back."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Citation(BaseModel):
    """A source an answer cites: file, page, time span for audio, image uri."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    marker: int
    document_id: str | None
    title: str | None
    uri: str | None
    page: int | None = None
    start_s: float | None = None
    end_s: float | None = None
    node_id: str
    kind: Literal["chunk", "segment", "image", "entity", "document"]
    image_uri: str | None = None
    excerpt: str | None = None


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    query_id: str
    answer: str
    citations: tuple[Citation, ...]
    exit_reason: str
    iterations: int
    mode: Literal["extractive", "llm"]
    cost: float = 0.0
    latency_ms: float = 0.0
    session_id: str | None = None
