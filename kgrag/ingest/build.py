"""The model stages of ingestion: chunk or transcribe, then embed the text and the images of a
batch of parsed documents.

The serial job (:class:`kgrag.ingest.pipeline.Ingestor`) and the Ray job
(:mod:`kgrag.ingest.ray_job`, one :class:`Builder` per actor) run this same code on the same
batches, so both give the same chunks and vectors. A :class:`Builder` loads each model once, when
first needed; every call of :meth:`Builder.build` returns what it did and how long it took, so
the caller (in this process or across a Ray boundary) accounts for it.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from kgrag.errors import IngestError, KgragError
from kgrag.ingest.chunking import chunk_text
from kgrag.ingest.models import ParsedDocument
from kgrag.ingest.records import ChunkRecord, ImageRecord, document_id
from kgrag.ingest.table_rows import table_chunks
from kgrag.ingest.writer import extracted_image_name
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber


class Failure(BaseModel):
    """A file that could not be ingested, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    reason: str


class Embedded(NamedTuple):
    """A document whose chunks (or segments) and images carry their vectors."""

    doc: ParsedDocument
    id: str
    chunks: tuple[ChunkRecord, ...]
    images: tuple[ImageRecord, ...]
    language: str | None


class BuildOutput(NamedTuple):
    """What one :meth:`Builder.build` call made of a batch."""

    embedded: list[Embedded]
    failures: list[Failure]
    timing: dict[str, float]
    """Seconds per stage: chunk, transcribe, embed_text, embed_image."""
    intervals: list[tuple[float, float]]
    """(start, end) ``time.perf_counter`` of each model call (system-wide monotonic clock)."""
    counts: dict[str, int]
    """Items done per progress stage: transcribe (recordings), embed_image (images),
    embed_text (documents)."""


#: (stage, items done, path) after each model call; the serial job turns it into progress.
AdvanceCallback = Callable[[str, int, str | None], None]


class Builder:
    """Chunks, transcribes and embeds batches of parsed documents with one set of models."""

    def __init__(
        self,
        text_embedder: TextEmbedder,
        *,
        image_embedder: Callable[[], ImageEmbedder] | None = None,
        transcriber: Callable[[], Transcriber] | None = None,
        overlap_tokens: int = 32,
        image_dir: Path = Path("./kgrag-data/images"),
        on_advance: AdvanceCallback | None = None,
    ) -> None:
        self.text_embedder = text_embedder
        self._image_factory = image_embedder
        self._transcriber_factory = transcriber
        self._image: ImageEmbedder | None = None
        self._transcriber: Transcriber | None = None
        self.overlap_tokens = overlap_tokens
        self.image_dir = image_dir
        self.on_advance = on_advance or (lambda _s, _n, _p: None)

    @property
    def has_image_embedder(self) -> bool:
        return self._image_factory is not None

    def image_embedder(self) -> ImageEmbedder:
        """CLIP, loaded on first use."""
        if self._image is None:
            if self._image_factory is None:
                raise KgragError("images need an image embedder; none is configured")
            self._image = self._image_factory()
        return self._image

    def transcriber(self) -> Transcriber:
        """The speech model, loaded on first use."""
        if self._transcriber is None:
            if self._transcriber_factory is None:
                raise KgragError("audio needs a transcriber; none is configured")
            self._transcriber = self._transcriber_factory()
        return self._transcriber

    def build(self, docs: Sequence[ParsedDocument]) -> BuildOutput:
        """Chunk (or transcribe) and embed a batch of documents. A document that fails is in
        ``failures`` with its reason; the text model failing fails the batch's documents."""
        out = BuildOutput([], [], defaultdict(float), [], defaultdict(int))
        pieces: dict[str, list[dict[str, Any]]] = {}  # doc id -> chunk fields without embeddings
        languages: dict[str, str | None] = {}
        for doc in docs:
            did = document_id(str(doc.source.path), doc.sha256)
            try:
                if doc.source.modality == "audio":
                    pieces[did], languages[did] = self._segments(did, doc, out)
                else:
                    pieces[did], languages[did] = self._chunks(did, doc, out), None
            except KgragError as e:
                out.failures.append(Failure(path=str(doc.source.path), reason=reason_of(e)))
        texts = [c["text"] for did in pieces for c in pieces[did]]
        t0 = time.perf_counter()
        try:
            vectors = self.text_embedder.embed(texts) if texts else []
        except KgragError as e:  # the model failed: this batch's documents fail, others go on
            reason = f"the text model failed on this document's batch: {reason_of(e)}"
            out.failures.extend(
                Failure(path=str(d.source.path), reason=reason)
                for d in docs
                if document_id(str(d.source.path), d.sha256) in pieces
            )
            return out
        _model_time(out, "embed_text", t0)
        self._advance(out, "embed_text", len(pieces))
        it = iter(vectors)
        for doc in docs:
            did = document_id(str(doc.source.path), doc.sha256)
            if did not in pieces:
                continue
            chunks = tuple(ChunkRecord(**c, embedding=tuple(next(it))) for c in pieces[did])
            try:
                images = self._images(did, doc, chunks, out)
            except KgragError as e:
                out.failures.append(Failure(path=str(doc.source.path), reason=reason_of(e)))
                continue
            out.embedded.append(Embedded(doc, did, chunks, images, languages[did]))
        return out

    def _advance(self, out: BuildOutput, stage: str, n: int, path: str | None = None) -> None:
        out.counts[stage] += n
        self.on_advance(stage, n, path)

    def _chunks(self, did: str, doc: ParsedDocument, out: BuildOutput) -> list[dict[str, Any]]:
        """The text's chunks, then one chunk per table row (:mod:`kgrag.ingest.table_rows`)."""
        t0 = time.perf_counter()
        emb = self.text_embedder
        pieces = chunk_text(doc.pages, emb.count_tokens, emb.max_tokens - 2, self.overlap_tokens)
        rows: list[dict[str, Any]] = [
            {"id": f"{did}:c{p.position}", "text": p.text, "position": p.position, "page": p.page}
            for p in pieces
        ]
        rows += table_chunks(did, doc.tables, len(rows), emb.count_tokens, emb.max_tokens - 2)
        out.timing["chunk"] += time.perf_counter() - t0
        return rows

    def _segments(
        self, did: str, doc: ParsedDocument, out: BuildOutput
    ) -> tuple[list[dict[str, Any]], str | None]:
        t0 = time.perf_counter()
        try:
            transcript = self.transcriber().transcribe(doc.source.path)
        finally:
            _model_time(out, "transcribe", t0)
            self._advance(out, "transcribe", 1, str(doc.source.path))
        segments = [s for s in transcript.segments if s.text.strip()]
        if not segments:
            raise IngestError(str(doc.source.path), "no speech was recognised in the recording")
        rows = [
            {
                "id": f"{did}:s{n}",
                "text": s.text.strip(),
                "position": n,
                "start_s": round(s.start_s, 2),
                "end_s": round(s.end_s, 2),
            }
            for n, s in enumerate(segments)
        ]
        return rows, transcript.language

    def _images(
        self,
        did: str,
        doc: ParsedDocument,
        chunks: tuple[ChunkRecord, ...],
        out: BuildOutput,
    ) -> tuple[ImageRecord, ...]:
        if not doc.images:
            return ()
        t0 = time.perf_counter()
        paths: list[Path] = []
        for n, image in enumerate(doc.images):
            if image.path is not None:
                paths.append(image.path)
            else:
                target = self.image_dir / extracted_image_name(did, n)
                target.parent.mkdir(parents=True, exist_ok=True)
                _save_png(image.data or b"", target, doc.source.path)
                paths.append(target.resolve())
        try:
            vectors = self.image_embedder().embed_images(paths)
        finally:
            _model_time(out, "embed_image", t0)
            self._advance(out, "embed_image", len(doc.images), str(doc.source.path))
        records = []
        for n, (image, path, vector) in enumerate(zip(doc.images, paths, vectors, strict=True)):
            if doc.source.modality == "image":  # a picture of text: its OCR chunks are near it
                near = tuple(c.id for c in chunks)
            else:
                near = tuple(
                    c.id for c in chunks if image.page is not None and c.page == image.page
                )
            records.append(
                ImageRecord(
                    id=f"{did}:i{n}",
                    uri=str(path),
                    width=image.width,
                    height=image.height,
                    page=image.page,
                    caption=image.caption,
                    embedding=tuple(vector),
                    near_chunk_ids=near,
                )
            )
        return tuple(records)


def _model_time(out: BuildOutput, stage: str, started: float) -> None:
    ended = time.perf_counter()
    out.timing[stage] += ended - started
    out.intervals.append((started, ended))


def reason_of(e: KgragError) -> str:
    """What to tell the user about a file that failed with ``e``."""
    return e.reason if isinstance(e, IngestError) else str(e)


def _save_png(data: bytes, target: Path, source: Path) -> None:
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.convert("RGB").save(target, format="PNG")
    except (UnidentifiedImageError, OSError) as e:
        raise IngestError(str(source), f"an embedded image could not be decoded: {e}") from e
