"""A LangChain retriever over kgrag (``pip install 'kgrag[langchain]'``: langchain-core only).

    from kgrag.integrations.langchain import KgragRetriever

    retriever = KgragRetriever(agent=agent, user="ann", groups=("maintenance",), k=5)
    docs = retriever.invoke("Who maintains the Pressure Valve PV-7?")
    docs[0].metadata["source"], docs[0].metadata["page"], docs[0].metadata["query_id"]

Each :class:`~langchain_core.documents.Document` is one piece of kgrag's evidence
(:meth:`KnowledgeAgent.search <kgrag.agent.agent.KnowledgeAgent.search>`): a passage, a
recording segment, an image or a document, read through the ACL of ``user`` and ``groups``, with
its citation metadata (:func:`kgrag.integrations._evidence.hit_metadata`: document, source file,
page, start/end seconds, image, score, and the query id whose trace records the search).
``ainvoke`` runs on :meth:`~kgrag.agent.agent.KnowledgeAgent.asearch`."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.evidence import Evidence
from kgrag.errors import DependencyMissingError
from kgrag.integrations._evidence import hit_metadata, hit_text

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as e:  # pragma: no cover (the extra is installed wherever tests run)
    raise DependencyMissingError("langchain-core", "langchain") from e

__all__ = ["KgragRetriever"]


class KgragRetriever(BaseRetriever):
    """kgrag's evidence for a query as LangChain documents, best first."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent: KnowledgeAgent
    user: str | None = None
    """Whose documents may be read (ACL ``user:NAME``); public documents only when None."""
    groups: tuple[str, ...] = ()
    """The user's groups (ACL ``group:NAME``)."""
    k: int = Field(default=10, ge=1, le=100)
    """At most this many documents."""

    def _documents(self, evidence: Evidence) -> list[Document]:
        return [
            Document(page_content=hit_text(h), metadata=hit_metadata(h, evidence, rank), id=h.id)
            for rank, h in enumerate(evidence.hits, 1)
        ]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **_: Any
    ) -> list[Document]:
        evidence = self.agent.search(query, user=self.user, groups=self.groups, limit=self.k)
        return self._documents(evidence)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **_: Any
    ) -> list[Document]:
        evidence = await self.agent.asearch(query, user=self.user, groups=self.groups, limit=self.k)
        return self._documents(evidence)
