"""Ingestion: sources -> parsed items -> chunks/segments/images -> entities -> batched graph writes.

Stages pass frozen pydantic models (:mod:`kgrag.ingest.models`):

- :func:`kgrag.ingest.sources.expand_inputs` turns files, folders, globs and JSONL manifests into
  :class:`~kgrag.ingest.models.SourceItem` values (and rejections with a reason);
- :func:`kgrag.ingest.containers.expand.parse_all` reads one item into its
  :class:`~kgrag.ingest.models.ParsedDocument` values: one for a file
  (:func:`kgrag.ingest.parsers.parse`: pages of text, embedded images, its sha256), the
  container's own and one per member for an archive or e-mail (``archive!member``);
- :func:`kgrag.ingest.chunking.chunk_text` cuts pages into sentence-aligned
  :class:`~kgrag.ingest.models.TextChunk` values sized in the embedder's tokens.
"""

#: Nothing to import from here directly: the public names are in :mod:`kgrag`.
__all__: list[str] = []
