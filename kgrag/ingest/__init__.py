"""Ingestion: sources -> parsed items -> chunks/segments/images -> entities -> batched graph writes.

Stages pass frozen pydantic models (:mod:`kgrag.ingest.models`):

- :func:`kgrag.ingest.sources.expand_inputs` turns files, folders, globs and JSONL manifests into
  :class:`~kgrag.ingest.models.SourceItem` values (and rejections with a reason);
- :func:`kgrag.ingest.parsers.parse` reads one item into a
  :class:`~kgrag.ingest.models.ParsedDocument` (pages of text, embedded images, its sha256);
- :func:`kgrag.ingest.chunking.chunk_text` cuts pages into sentence-aligned
  :class:`~kgrag.ingest.models.TextChunk` values sized in the embedder's tokens.
"""
