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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import Field

from kgrag.config import writable_folder
from kgrag.core import Frozen
from kgrag.errors import EmptyInputError, IngestError, KgragError
from kgrag.ingest.chunking import chunk_text
from kgrag.ingest.models import ParsedDocument
from kgrag.ingest.records import ChunkRecord, ImageRecord, document_id
from kgrag.ingest.sections import context_text
from kgrag.ingest.table_rows import table_chunks
from kgrag.ingest.unexpected import failure_reason, must_stop
from kgrag.ingest.writer import extracted_image_name
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber


class Failure(Frozen):
    """A file that could not be ingested, and why."""

    path: str
    reason: str
    empty: bool = Field(default=False, exclude=True)
    """The file held nothing to ingest: the job reports it as an ``empty`` skip, not a failure
    (a recording without speech is no such file: it is stored with no segment)."""


class Embedded(NamedTuple):
    """A document whose chunks (or segments) and images carry their vectors."""

    doc: ParsedDocument
    id: str
    chunks: tuple[ChunkRecord, ...]
    images: tuple[ImageRecord, ...]
    language: str | None
    duration_s: float | None
    """A recording's length in seconds (``None`` for other documents)."""


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


@dataclass
class Work:
    """One batch of documents on its way through the model stages of :class:`Builder` (pickled
    between the Ray pools): what each stage made so far, and the documents that failed."""

    docs: list[ParsedDocument]
    ids: list[str]
    out: BuildOutput
    pieces: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Document id -> its chunk (or segment) fields, without embeddings."""
    languages: dict[str, str | None] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)
    """Document id -> a recording's length in seconds."""
    chunks: dict[str, tuple[ChunkRecord, ...]] = field(default_factory=dict)
    images: dict[str, tuple[ImageRecord, ...]] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)

    def items(self) -> Iterator[tuple[ParsedDocument, str]]:
        """(document, id) of the documents not failed, in batch order."""
        return ((d, i) for d, i in zip(self.docs, self.ids, strict=True) if i not in self.failed)

    def pending(self, kind: str) -> list[tuple[ParsedDocument, str]]:
        """The documents a first stage has still to read: ``audio`` recordings, or ``text``
        (every other modality)."""
        return [
            (d, i)
            for d, i in self.items()
            if (d.source.modality == "audio") == (kind == "audio") and i not in self.pieces
        ]

    @property
    def has_audio(self) -> bool:
        return any(d.source.modality == "audio" for d in self.docs)

    @property
    def has_images(self) -> bool:
        return any(d.images for d in self.docs)

    def fail(self, doc: ParsedDocument, reason: str, *, empty: bool = False) -> None:
        did = document_id(str(doc.source.path), doc.sha256)
        self.failed.add(did)
        self.out.failures.append(Failure(path=str(doc.source.path), reason=reason, empty=empty))

    def fail_unexpected(self, doc: ParsedDocument, doing: str, e: Exception) -> None:
        """``doc`` fails with ``e``, which no stage meant (:mod:`kgrag.ingest.unexpected`):
        "the chunker failed (IndexError: ...)"; what must stop the job is raised again."""
        if must_stop(e):
            raise e
        self.fail(doc, failure_reason(doing, e, str(doc.source.path)))

    def output(self) -> BuildOutput:
        """The batch's embedded documents, in batch order, and its failures."""
        for doc, did in self.items():
            if did in self.chunks:
                chunks, images = self.chunks[did], self.images.get(did, ())
                self.out.embedded.append(
                    Embedded(doc, did, chunks, images, self.languages[did], self.durations.get(did))
                )
        return self.out


def start_work(docs: Sequence[ParsedDocument]) -> Work:
    """A batch at the start of the model stages."""
    out = BuildOutput([], [], defaultdict(float), [], defaultdict(int))
    ids = [document_id(str(d.source.path), d.sha256) for d in docs]
    return Work(list(docs), ids, out)


#: (stage, items done, path) after each model call; the serial job turns it into progress.
AdvanceCallback = Callable[[str, int, str | None], None]


class Builder:
    """Chunks, transcribes and embeds batches of parsed documents with one set of models."""

    def __init__(
        self,
        text_embedder: TextEmbedder | None,
        *,
        image_embedder: Callable[[], ImageEmbedder] | None = None,
        transcriber: Callable[[], Transcriber] | None = None,
        overlap_tokens: int = 32,
        image_dir: Path = Path("./kgrag-data/images"),
        on_advance: AdvanceCallback | None = None,
    ) -> None:
        self._text_embedder = text_embedder
        self._image_factory = image_embedder
        self._transcriber_factory = transcriber
        self._image: ImageEmbedder | None = None
        self._transcriber: Transcriber | None = None
        self.overlap_tokens = overlap_tokens
        self.image_dir = image_dir
        self.on_advance = on_advance or (lambda _s, _n, _p: None)

    @property
    def text_embedder(self) -> TextEmbedder:
        """The text model (a Builder for Whisper or CLIP alone has none)."""
        if self._text_embedder is None:
            raise KgragError("chunks need a text embedder; none is configured")
        return self._text_embedder

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
        ``failures`` with its reason; the text model failing fails the batch's documents.

        The stages below run in this order here; the Ray job runs each on its own pool
        (:mod:`kgrag.ingest.ray_job`) on the same :class:`Work`, so both give the same output."""
        work = start_work(docs)
        for stage in (self.transcribe, self.chunk, self.embed_text, self.embed_images):
            stage(work)
        return work.output()

    def transcribe(self, work: Work) -> None:
        """Stage 1 (Whisper): the segments of the batch's recordings."""
        for doc, did in work.pending("audio"):
            try:
                heard = self._segments(did, doc, work.out)
                work.pieces[did], work.languages[did], work.durations[did] = heard
            except KgragError as e:
                work.fail(doc, reason_of(e), empty=isinstance(e, EmptyInputError))
            except Exception as e:
                work.fail_unexpected(doc, "the speech model failed on this recording", e)

    def chunk(self, work: Work) -> None:
        """Stage 2 (the text model's tokenizer): the chunks of every other document."""
        for doc, did in work.pending("text"):
            try:
                work.pieces[did], work.languages[did] = self._chunks(did, doc, work.out), None
            except KgragError as e:
                work.fail(doc, reason_of(e))
            except Exception as e:
                work.fail_unexpected(doc, "could not be split into passages", e)

    def embed_text(self, work: Work) -> None:
        """Stage 3 (the text model): every chunk and segment of the batch in one call. When the
        model fails on the batch with an error nobody meant (not a :class:`KgragError`: one
        document's text may be what breaks it), each document is embedded alone and only those
        it fails on fail."""
        ready = [(doc, did) for doc, did in work.items() if did in work.pieces]
        try:
            self._embed_texts(work, ready)
        except Exception as e:  # the model failed: this batch's documents fail, others go on
            if must_stop(e):
                raise
            if isinstance(e, KgragError) or len(ready) == 1:
                doing = "the text model failed on this document's batch"
                reason = (
                    f"{doing}: {reason_of(e)}"
                    if isinstance(e, KgragError)
                    else failure_reason(doing, e, f"a batch of {len(ready)} documents")
                )
                for doc, _ in ready:
                    work.fail(doc, reason)
                return
            for one in ready:
                try:
                    self._embed_texts(work, [one])
                except Exception as e:
                    if isinstance(e, KgragError) and not must_stop(e):
                        work.fail(one[0], f"the text model failed on this document: {reason_of(e)}")
                    else:
                        work.fail_unexpected(one[0], "its passages could not be embedded", e)

    def _embed_texts(self, work: Work, ready: list[tuple[ParsedDocument, str]]) -> None:
        """The vectors of ``ready``'s chunks and segments, in one call of the text model."""
        emb = self.text_embedder
        texts = [
            context_text(doc.title, c.get("section", ()), c["text"], emb.count_tokens)
            for doc, did in ready
            for c in work.pieces[did]
        ]
        t0 = time.perf_counter()
        vectors = emb.embed(texts) if texts else []
        _model_time(work.out, "embed_text", t0)
        self._advance(work.out, "embed_text", len(ready))
        it = iter(vectors)
        for _, did in ready:
            work.chunks[did] = tuple(
                ChunkRecord(**c, embedding=tuple(next(it))) for c in work.pieces[did]
            )

    def embed_images(self, work: Work) -> None:
        """Stage 4 (CLIP): the images of every embedded document."""
        for doc, did in work.items():
            if did not in work.chunks:
                continue
            try:
                work.images[did] = self._images(did, doc, work.chunks[did], work.out)
            except KgragError as e:
                work.fail(doc, reason_of(e))
            except Exception as e:
                work.fail_unexpected(doc, "its images could not be embedded", e)

    def _advance(self, out: BuildOutput, stage: str, n: int, path: str | None = None) -> None:
        out.counts[stage] += n
        self.on_advance(stage, n, path)

    def _chunks(self, did: str, doc: ParsedDocument, out: BuildOutput) -> list[dict[str, Any]]:
        """The text's chunks, then one chunk per table row (:mod:`kgrag.ingest.table_rows`)."""
        t0 = time.perf_counter()
        emb = self.text_embedder
        pieces = chunk_text(doc.pages, emb.count_tokens, emb.max_tokens - 2, self.overlap_tokens)
        rows: list[dict[str, Any]] = [
            {
                "id": f"{did}:c{p.position}",
                "text": p.text,
                "position": p.position,
                "page": p.page,
                "section": p.section,
            }
            for p in pieces
        ]
        rows += table_chunks(did, doc.tables, len(rows), emb.count_tokens, emb.max_tokens - 2)
        out.timing["chunk"] += time.perf_counter() - t0
        return rows

    def _segments(
        self, did: str, doc: ParsedDocument, out: BuildOutput
    ) -> tuple[list[dict[str, Any]], str | None, float]:
        t0 = time.perf_counter()
        try:
            transcript = self.transcriber().transcribe(doc.source.path)
        finally:
            _model_time(out, "transcribe", t0)
            self._advance(out, "transcribe", 1, str(doc.source.path))
        # a recording without speech (a tone, music, silence) is stored all the same, with no
        # segment: a listing of the folder's recordings names it, content search finds nothing
        segments = [s for s in transcript.segments if s.text.strip()]
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
        # the language Whisper guesses from no speech is no language of the recording
        return rows, transcript.language if rows else None, round(transcript.duration_s, 2)

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
                # <KGRAG_DATA_DIR>/images: a ConfigError naming it fails this document alone
                folder = writable_folder(self.image_dir, "KGRAG_DATA_DIR")
                target = folder / extracted_image_name(did, n)
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
