"""A LlamaIndex retriever over kgrag (``pip install 'kgrag[llamaindex]'``: llama-index-core
only).

    from kgrag.integrations.llamaindex import KgragRetriever

    retriever = KgragRetriever(agent, user="ann", groups=("maintenance",), limit=5)
    nodes = retriever.retrieve("Who maintains the Pressure Valve PV-7?")
    nodes[0].score, nodes[0].node.metadata["source"], nodes[0].node.metadata["query_id"]

Each :class:`~llama_index.core.schema.NodeWithScore` holds one piece of kgrag's evidence
(:meth:`KnowledgeAgent.search <kgrag.agent.agent.KnowledgeAgent.search>`) as a ``TextNode``
(an ``ImageNode`` with ``image_path`` for an image), read through the ACL of ``user`` and
``groups``, with its citation metadata (:func:`kgrag.integrations._evidence.hit_metadata`).
``aretrieve`` runs on :meth:`~kgrag.agent.agent.KnowledgeAgent.asearch`. The metadata is kept
out of the text an embedding model or LLM sees (``excluded_*_metadata_keys``) except the title
and source."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.evidence import Evidence
from kgrag.errors import DependencyMissingError
from kgrag.integrations._evidence import hit_metadata, hit_text

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import ImageNode, NodeWithScore, QueryBundle, TextNode
except ImportError as e:  # pragma: no cover (the extra is installed wherever tests run)
    raise DependencyMissingError("llama-index-core", "llamaindex") from e

__all__ = ["KgragRetriever"]

#: Metadata an LLM reading the node's content also sees (the rest is for the application).
_SHOWN = ("title", "source", "page", "start_s", "end_s")


class KgragRetriever(BaseRetriever):
    """kgrag's evidence for a query as LlamaIndex nodes, best first."""

    def __init__(
        self,
        agent: KnowledgeAgent,
        *,
        user: str | None = None,
        groups: Sequence[str] = (),
        limit: int = 10,
        **kwargs: Any,
    ) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        super().__init__(**kwargs)
        self.agent = agent
        self.user = user
        self.groups = tuple(groups)
        self.limit = limit

    def _nodes(self, evidence: Evidence) -> list[NodeWithScore]:
        out = []
        for rank, hit in enumerate(evidence.hits, 1):
            metadata = hit_metadata(hit, evidence, rank)
            hidden = [k for k in metadata if k not in _SHOWN]
            fields: dict[str, Any] = {
                "id_": hit.id,
                "text": hit_text(hit),
                "metadata": metadata,
                "excluded_embed_metadata_keys": hidden,
                "excluded_llm_metadata_keys": hidden,
            }
            node = (
                ImageNode(image_path=hit.image_uri, **fields)
                if hit.kind == "image" and hit.image_uri
                else TextNode(**fields)
            )
            out.append(NodeWithScore(node=node, score=hit.score))
        return out

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        evidence = self.agent.search(
            query_bundle.query_str, user=self.user, groups=self.groups, limit=self.limit
        )
        return self._nodes(evidence)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        evidence = await self.agent.asearch(
            query_bundle.query_str, user=self.user, groups=self.groups, limit=self.limit
        )
        return self._nodes(evidence)
