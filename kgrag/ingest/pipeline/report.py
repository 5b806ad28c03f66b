"""What an ingestion job reports: its summary, its skipped files and its progress."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable

from kgrag.core import Closed, Frozen
from kgrag.ingest.build import Failure
from kgrag.ingest.models import SkipKind
from kgrag.ingest.records import AclChange

log = logging.getLogger(__name__)


class Skip(Frozen):
    """A file found but not ingested, and why (``kind``; ``detail`` says it in words)."""

    path: str
    kind: SkipKind
    detail: str


class Note(Frozen):
    """A file ingested with something to know about it (``detail``): a recording in which no
    speech was recognised is stored with its metadata and no transcript."""

    path: str
    detail: str


#: The note of a recording without speech.
NO_SPEECH = "no speech was recognised in the recording: stored with its metadata, no transcript"


class IngestReport(Closed):
    """The job's summary; ``--json`` prints exactly this."""

    # Mutable defaults are per instance (pydantic copies them); ruff's RUF012 sees that only for
    # direct BaseModel subclasses, hence the noqa on each.

    ingested: int = 0
    skipped: int = 0
    """How many files were found and not ingested: each is in ``skips`` with its reason."""
    skips: list[Skip] = []  # noqa: RUF012
    failed: int = 0
    failures: list[Failure] = []  # noqa: RUF012
    notes: list[Note] = []  # noqa: RUF012
    """Files ingested (they count in ``ingested``) with something to know about them."""
    seconds: float = 0.0
    stage_seconds: dict[str, float] = {}  # noqa: RUF012
    """Time per stage: parse, chunk, transcribe, embed_text, embed_image, entities, write (on the
    writer thread, overlapping the model stages) and embed_entity_names (CLIP, inside write)."""
    inference_seconds: float = 0.0
    """Wall time during which a model call ran (text and image embedders, transcriber, CLIP
    entity names; calls overlapping on the model and writer threads count once)."""
    document_ids: list[str] = []  # noqa: RUF012
    acl_updated: list[str] = []  # noqa: RUF012
    """Unchanged documents ingested again with another ACL: only their ACL was rewritten. They
    count as ``ingested`` (and are in ``document_ids``); an unchanged file with the same ACL is
    ``skipped``."""

    def skip(self, path: str, kind: SkipKind, detail: str) -> None:
        self.skips.append(Skip(path=path, kind=kind, detail=detail))
        self.skipped = len(self.skips)

    def skipped_by_kind(self) -> dict[str, int]:
        """How many files each reason skipped, most first."""
        counts = Counter(s.kind for s in self.skips)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    acl_changes: list[AclChange] = []  # noqa: RUF012
    """Every ACL this job changed (an unchanged file with another ACL, or a changed file whose
    stored version had another ACL): document, who, when, old and new ACL; each is also
    recorded in the graph. A change the caller may not make is a failure instead."""
    recovered: list[str] = []  # noqa: RUF012
    """Documents an interrupted job had left unfinished, removed before this job ran."""
    shard: str | None = None
    """``I/N`` when this job was shard I of N (:attr:`IngestOptions.shard`), else None."""
    other_shards: int = 0
    """Inputs (files found, or refused) that belong to the other shards and were left to them."""


class ProgressEvent(Frozen):
    """``done`` of ``total`` items of one stage: files (parse), recordings (transcribe),
    images (embed_image), documents (embed_text, entities, write), passages written (passages:
    its total is an estimate that grows with the job)."""

    stage: str
    done: int
    total: int
    path: str | None = None


ProgressCallback = Callable[[ProgressEvent], None]


class WriteRate:
    """Progress of the writes: documents (``write``) and passages (``passages``, whose total is
    estimated from the passages per document so far), the rate and the time left, logged."""

    def __init__(self, total: int, progress: ProgressCallback) -> None:
        self.total = total
        self.progress = progress
        self.done = self.passages = 0
        self.started = time.perf_counter()

    def written(self, documents: int, passages: int) -> None:
        self.done += documents
        self.passages += passages
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        expected = self.passages * self.total // self.done if self.done else self.passages
        self.progress(ProgressEvent(stage="write", done=self.done, total=self.total))
        self.progress(ProgressEvent(stage="passages", done=self.passages, total=expected))
        eta = (self.total - self.done) * elapsed / self.done if self.done else float("nan")
        log.info(
            "written %d/%d documents, %d passages: %.1f passages/s, ETA %.0f s",
            self.done,
            self.total,
            self.passages,
            self.passages / elapsed,
            eta,
        )
