"""How an ingestion job runs: its options, and the check of the globs it takes."""

from __future__ import annotations

from pathlib import Path

from pydantic import field_validator

from kgrag.core import Frozen
from kgrag.ingest.shards import Shard
from kgrag.modalities.audio import DEFAULT_MAX_MEDIA_SECONDS
from kgrag.modalities.clip import DEFAULT_DEPICTS_THRESHOLD


class IngestOptions(Frozen):
    max_file_bytes: int = 200 * 1024 * 1024
    max_media_seconds: float = DEFAULT_MAX_MEDIA_SECONDS
    chunk_overlap_tokens: int = 32
    batch_chunks: int = 256
    workers: int = 1
    writers: int = 1
    """Batches written at once on an engine with concurrent write transactions (Neo4j); the
    embedded engine takes one writer (kgrag.ingest.pipeline.ingestor._may_share says which
    batches are always written alone)."""
    image_dir: Path = Path("./kgrag-data/images")
    depicts_threshold: float = DEFAULT_DEPICTS_THRESHOLD
    ocr: bool = True
    """Read scanned PDF pages and pictures of text with Tesseract when it is installed
    (:mod:`kgrag.ingest.ocr`)."""
    include: tuple[str, ...] = ()
    """Globs (``*.md``, ``docs/**/*.pdf``: matched from the right of each file's path): when
    given, a file found in a folder or glob is ingested only if it matches one."""
    exclude: tuple[str, ...] = ()
    """Globs: a file found in a folder or glob that matches one is skipped (``excluded``)."""

    @field_validator("include", "exclude")
    @classmethod
    def _globs(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(check_glob(p) for p in patterns)

    shard: Shard | None = None
    """Take only this shard's inputs (by a stable hash of each file's resolved path), so N
    processes on N machines split one input list without coordination (kgrag.ingest.shards)."""


#: The longest ``--include`` / ``--exclude`` glob taken.
MAX_GLOB_CHARS = 1024


def check_glob(pattern: str) -> str:
    """``pattern`` if it can select files, else ValueError saying why: empty or blank, a control
    character, or longer than :data:`MAX_GLOB_CHARS`."""
    if not pattern.strip():
        raise ValueError("an empty glob selects nothing; give a pattern such as '*.md'")
    if any(ord(c) < 32 or ord(c) == 127 for c in pattern):
        raise ValueError(f"glob {pattern!r} contains a control character")
    if len(pattern) > MAX_GLOB_CHARS:
        raise ValueError(
            f"a glob is at most {MAX_GLOB_CHARS} characters; this one has {len(pattern)}"
        )
    return pattern
