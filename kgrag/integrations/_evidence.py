"""kgrag's evidence as the flat metadata the LangChain and LlamaIndex retrievers put on each
document or node: where it comes from (document, file, page, start/end seconds, image, table
row), how it ranked, and the query id whose trace records the search."""

from __future__ import annotations

from typing import Any

from kgrag.agent.evidence import Evidence
from kgrag.core import Hit


def hit_text(hit: Hit) -> str:
    """The text a framework gets as the content: the passage, or for an image or a document
    without text its title."""
    return hit.text or hit.title or hit.uri or hit.id


def hit_metadata(hit: Hit, evidence: Evidence, rank: int) -> dict[str, Any]:
    """Plain JSON values only (frameworks copy, serialise and filter on them)."""
    return {
        "query_id": evidence.query_id,
        "rank": rank,
        "score": hit.score,
        "kind": hit.kind,
        "node_id": hit.id,
        "document_id": hit.document_id,
        "title": hit.title,
        "source": hit.uri,
        "page": hit.page,
        "start_s": hit.start_s,
        "end_s": hit.end_s,
        "image_uri": hit.image_uri,
        "table": hit.table,
        "sheet": hit.sheet,
        "row": hit.row,
        "abstained": evidence.abstained,
    }
