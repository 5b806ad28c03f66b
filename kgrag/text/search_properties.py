"""A chunk's search properties: what the full-text indexes read beside its text, computed once
here for ingestion (kgrag.ingest.writer, the Neo4j bulk import) and for the migrations that
write them for chunks stored before (``0010_fulltext_words``, ``0011_folded_text``;
kgrag.graph.migrations).

- ``words``: the text with line breaks as spaces. RediSearch (FalkorDB's full-text index) does
  not split words at a line break ("tools\\nsponge" is one token), so FalkorDB indexes these
  instead of the text; Lucene (Neo4j) splits there and indexes the text, so only FalkorDB
  stores them.
- ``text_folded``: the text without accents (:func:`kgrag.text.folding.fold`), its line breaks as
  spaces too (FalkorDB's one full-text index reads both fields), or None when folding changes
  nothing: ASCII text stores no copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgrag.text.folding import folded

__all__ = ["ChunkSearchProperties", "chunk_search_properties"]


@dataclass(frozen=True, slots=True)
class ChunkSearchProperties:
    """The properties stored beside a chunk's text for its full-text search."""

    words: str
    text_folded: str | None


def _spaced(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def chunk_search_properties(text: str) -> ChunkSearchProperties:
    """``text``'s search properties (see the module's description)."""
    out = folded(text)
    return ChunkSearchProperties(
        words=_spaced(text), text_folded=None if out is None else _spaced(out)
    )
