"""What a question gets back."""

from __future__ import annotations

from typing import Any, Literal

from kgrag.agent.support import Support
from kgrag.core import Decision, Frozen

__all__ = ["Answer", "Citation", "Decision", "ExitReason", "Support"]


class Citation(Frozen):
    """A source an answer cites: file, page, time span for audio, image uri, table and row."""

    marker: int
    document_id: str | None
    title: str | None
    uri: str | None
    page: int | None = None
    start_s: float | None = None
    end_s: float | None = None
    table: int | None = None
    """For a table row: the table's number in its document (1-based)."""
    sheet: str | None = None
    """For a spreadsheet row: the sheet's name."""
    row: int | None = None
    """For a table row: the row's number in its table, the header being row 1."""
    node_id: str
    kind: Literal["chunk", "segment", "image", "entity", "document"]
    image_uri: str | None = None
    excerpt: str | None = None
    section: tuple[str, ...] = ()
    """For a chunk: the headings of the section it is in, outermost first ("Memcheck: a memory
    error detector", "4.5. Details of Memcheck's checking machinery"); empty when unknown."""
    authors: tuple[str, ...] = ()
    """For a document a document tool cites: who its own metadata says wrote it; empty when no
    author is stored (or the citation is of a passage)."""


ExitReason = Literal[
    "satisfied",
    "max_iterations",
    "redundant_query",
    "no_next_query",
    "budget_exceeded",
    "not_found",
]


class Answer(Frozen):
    """The answer text with its numbered citations, and how it was reached: the query id to
    open its trace, why the evaluate/refine loop stopped, how many iterations it ran, what the
    LLM calls cost (USD), and the groundedness of its sentences."""

    query_id: str
    answer: str
    citations: tuple[Citation, ...]
    exit_reason: str
    iterations: int
    mode: Literal["extractive", "llm"]
    cost: float = 0.0
    latency_ms: float = 0.0
    session_id: str | None = None
    groundedness: float | None = None
    verdict: str | None = None
    resolved_question: str | None = None
    planner: str = "rule"
    decisions: tuple[Decision, ...] = ()
    """The judge's decision after each iteration (none for answers from document tools or a
    reformatted earlier answer); also on the ``Query`` node as ``decisions``."""
    closest: tuple[Citation, ...] = ()
    """When the agent abstains (exit reason ``not_found``): the closest documents it found,
    which do not answer the question; never citations."""
    support: Support | None = None
    """The support test of an extractive answer from retrieved evidence (kgrag.agent.support)."""

    def to_json(self) -> dict[str, Any]:
        """The answer as ``kgrag ask --json`` prints it and ``POST /ask`` returns it: every
        field, citations without their excerpt."""
        body = self.model_dump(mode="json", exclude={"citations", "closest"})
        body["citations"] = [c.model_dump(mode="json", exclude={"excerpt"}) for c in self.citations]
        body["closest"] = [c.model_dump(mode="json", exclude={"excerpt"}) for c in self.closest]
        return body
