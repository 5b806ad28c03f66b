"""What a search returns: the evidence for a question without an answer
(``KnowledgeAgent.search``; the MCP ``search`` tool and the LangChain and LlamaIndex retrievers
are built on it)."""

from __future__ import annotations

from kgrag.core import Frozen, Hit


class Evidence(Frozen):
    """The ranked evidence the agent's retrieval loop found for ``question``, read through the
    asker's ACL: text passages, recording segments (``start_s``/``end_s``) and table rows
    first (fused over the loop's iterations), then images (``image_uri``); or the documents a
    document tool found. Each with its document, page and score.
    ``query_id`` opens the trace that records the search (``kgrag trace``);
    ``exit_reason`` is why the loop stopped (``not_found`` when nothing supports an answer:
    the hits are then the closest found, which do not answer the question)."""

    query_id: str
    question: str
    exit_reason: str
    hits: tuple[Hit, ...]

    @property
    def abstained(self) -> bool:
        """Whether the agent found nothing that supports an answer."""
        return self.exit_reason == "not_found"
