"""The batch ingestion job: inputs -> parsed documents -> chunks / segments / images -> embeddings
and entities -> graph writes.

Model inference runs on the calling thread in batches that span documents; graph writes run on a
writer thread, so a batch is written while the next one is embedded. Documents are identified by
content hash: an unchanged file is skipped, a changed one replaces its previous version.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kgrag.errors import IngestError, KgragError
from kgrag.graph.store import GraphStore
from kgrag.ingest.chunking import chunk_text
from kgrag.ingest.entities import EntityExtractor
from kgrag.ingest.models import ParsedDocument, ParsedPage, SourceItem
from kgrag.ingest.parsers import parse
from kgrag.ingest.records import (
    ChunkRecord,
    DocumentBundle,
    ImageRecord,
    document_id,
    stored_acl,
)
from kgrag.ingest.sources import expand_inputs
from kgrag.ingest.writer import GraphWriter
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber

log = logging.getLogger(__name__)


class Failure(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    reason: str


class IngestReport(BaseModel):
    """The job's summary; ``--json`` prints exactly this."""

    model_config = ConfigDict(extra="forbid")

    ingested: int = 0
    skipped: int = 0
    failed: int = 0
    failures: list[Failure] = []
    seconds: float = 0.0
    stage_seconds: dict[str, float] = {}
    document_ids: list[str] = []


class ProgressEvent(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    stage: str  # parse | embed | write
    done: int
    total: int
    path: str | None = None


ProgressCallback = Callable[[ProgressEvent], None]


class IngestOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    max_file_bytes: int = 200 * 1024 * 1024
    chunk_overlap_tokens: int = 32
    batch_chunks: int = 256
    workers: int = 1
    image_dir: Path = Path("./kgrag-data/images")
    depicts_threshold: float = 0.6


class Ingestor:
    """Runs ingestion jobs against one store with one set of models."""

    def __init__(
        self,
        store: GraphStore,
        text_embedder: TextEmbedder,
        extractor: EntityExtractor,
        *,
        image_embedder: Callable[[], ImageEmbedder] | None = None,
        transcriber: Callable[[], Transcriber] | None = None,
        options: IngestOptions | None = None,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.store = store
        self.text_embedder = text_embedder
        self.extractor = extractor
        self._image_factory = image_embedder
        self._transcriber_factory = transcriber
        self._image: ImageEmbedder | None = None
        self._transcriber: Transcriber | None = None
        self.options = options or IngestOptions()
        self.progress = progress or (lambda _e: None)
        self._timing: dict[str, float] = defaultdict(float)

    # -- public -------------------------------------------------------------------------------
    def ingest_paths(self, paths: Sequence[str], acl: Sequence[str] = ()) -> IngestReport:
        """Ingest files, folders, globs and JSONL manifests."""
        started = time.perf_counter()
        report = IngestReport()
        expanded = expand_inputs(paths, acl)
        for rejected in expanded.rejected:
            if rejected.explicit:
                report.failures.append(Failure(path=rejected.path, reason=rejected.reason))
            else:
                report.skipped += 1
        parsed = self._parse_all(expanded.items, report)
        self._ingest_parsed(parsed, report)
        report.failed = len(report.failures)
        report.seconds = round(time.perf_counter() - started, 3)
        report.stage_seconds = {k: round(v, 3) for k, v in self._timing.items()}
        return report

    def ingest_documents(self, documents: Sequence[ParsedDocument]) -> IngestReport:
        """Ingest documents parsed elsewhere (for example a benchmark corpus)."""
        started = time.perf_counter()
        report = IngestReport()
        self._ingest_parsed(list(documents), report)
        report.failed = len(report.failures)
        report.seconds = round(time.perf_counter() - started, 3)
        report.stage_seconds = {k: round(v, 3) for k, v in self._timing.items()}
        return report

    def delete(self, document_id: str) -> None:
        GraphWriter(self.store).delete(document_id)

    # -- stages -------------------------------------------------------------------------------
    def _parse_all(self, items: Sequence[SourceItem], report: IngestReport) -> list[ParsedDocument]:
        t0 = time.perf_counter()
        out: list[ParsedDocument] = []

        def one(item: SourceItem) -> ParsedDocument | Failure:
            try:
                return parse(item, self.options.max_file_bytes)
            except IngestError as e:
                return Failure(path=e.path, reason=e.reason)

        with ThreadPoolExecutor(max_workers=max(1, self.options.workers)) as pool:
            for n, result in enumerate(pool.map(one, items), start=1):
                if isinstance(result, Failure):
                    report.failures.append(result)
                else:
                    out.append(result)
                self.progress(ProgressEvent(stage="parse", done=n, total=len(items)))
        self._timing["parse"] += time.perf_counter() - t0
        return out

    def _ingest_parsed(self, documents: list[ParsedDocument], report: IngestReport) -> None:
        todo: list[ParsedDocument] = []
        replaced: dict[str, list[str]] = {}
        for doc in documents:
            uri = str(doc.source.path)
            existing = self.store.read("document_find_by_uri", {"uri": uri})
            new_id = document_id(uri, doc.sha256)
            if any(r["id"] == new_id and r["status"] == "complete" for r in existing):
                report.skipped += 1
                continue
            replaced[new_id] = [r["id"] for r in existing if r["id"] != new_id]
            todo.append(doc)
        image_embedder: ImageEmbedder | None = None
        if self._needs_images(todo):
            try:
                image_embedder = self._image_embedder()
            except KgragError as e:  # each document with images then fails with this reason
                log.warning("no image embedder: %s", e)
        writer = GraphWriter(
            self.store,
            image_embedder=image_embedder,
            depicts_threshold=self.options.depicts_threshold,
        )
        total = len(todo)
        done = 0
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgrag-writer") as pool:
            pending: Future[list[str]] | None = None
            for batch in self._batches(todo):
                bundles, failures = self._build(batch)
                report.failures.extend(failures)
                if pending is not None:
                    done += self._collect(pending, report)
                    self.progress(ProgressEvent(stage="write", done=done, total=total))
                pending = pool.submit(self._write, writer, bundles, replaced)
            if pending is not None:
                done += self._collect(pending, report)
                self.progress(ProgressEvent(stage="write", done=done, total=total))

    def _collect(self, pending: Future[list[str]], report: IngestReport) -> int:
        ids = pending.result()
        report.document_ids.extend(ids)
        report.ingested += len(ids)
        return len(ids)

    def _write(
        self, writer: GraphWriter, bundles: list[DocumentBundle], replaced: dict[str, list[str]]
    ) -> list[str]:
        t0 = time.perf_counter()
        written = []
        for bundle in bundles:
            writer.write(bundle)
            for old in replaced.get(bundle.id, []):
                writer.delete(old)
            written.append(bundle.id)
        self._timing["write"] += time.perf_counter() - t0
        return written

    def _batches(self, docs: Sequence[ParsedDocument]) -> Iterable[list[ParsedDocument]]:
        batch: list[ParsedDocument] = []
        size = 0
        for doc in docs:
            batch.append(doc)
            size += max(1, sum(len(p.text) for p in doc.pages) // 1000)
            if size >= self.options.batch_chunks:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch

    def _build(self, docs: list[ParsedDocument]) -> tuple[list[DocumentBundle], list[Failure]]:
        """Chunk, transcribe, embed and extract entities for a batch of documents."""
        failures: list[Failure] = []
        pieces: dict[str, list[dict]] = {}  # doc id -> chunk dicts without embeddings
        languages: dict[str, str | None] = {}
        for doc in docs:
            did = document_id(str(doc.source.path), doc.sha256)
            try:
                if doc.source.modality == "audio":
                    pieces[did], languages[did] = self._segments(did, doc)
                else:
                    pieces[did], languages[did] = self._chunks(did, doc.pages), None
            except KgragError as e:
                failures.append(Failure(path=str(doc.source.path), reason=_reason(e)))
        texts = [c["text"] for did in pieces for c in pieces[did]]
        t0 = time.perf_counter()
        vectors = self.text_embedder.embed(texts) if texts else []
        self._timing["embed_text"] += time.perf_counter() - t0
        it = iter(vectors)
        bundles = []
        for doc in docs:
            did = document_id(str(doc.source.path), doc.sha256)
            if did not in pieces:
                continue
            chunks = tuple(ChunkRecord(**c, embedding=tuple(next(it))) for c in pieces[did])
            try:
                images = self._images(did, doc, chunks)
            except KgragError as e:
                failures.append(Failure(path=str(doc.source.path), reason=_reason(e)))
                continue
            t0 = time.perf_counter()
            extraction = self.extractor.extract([(c.id, c.text) for c in chunks])
            self._timing["entities"] += time.perf_counter() - t0
            bundles.append(
                DocumentBundle(
                    id=did,
                    uri=str(doc.source.path),
                    sha256=doc.sha256,
                    modality=doc.source.modality,
                    mime=doc.source.mime,
                    title=doc.title,
                    bytes=doc.bytes,
                    acl=stored_acl(doc.source.acl),
                    tags=doc.source.tags,
                    language=languages[did],
                    segments=doc.source.modality == "audio",
                    summary=_extractive_summary(chunks),
                    chunks=chunks,
                    images=images,
                    extraction=extraction,
                )
            )
        return bundles, failures

    def _chunks(self, did: str, pages: Sequence[ParsedPage]) -> list[dict]:
        t0 = time.perf_counter()
        emb = self.text_embedder
        pieces = chunk_text(
            pages, emb.count_tokens, emb.max_tokens - 2, self.options.chunk_overlap_tokens
        )
        self._timing["chunk"] += time.perf_counter() - t0
        return [
            {"id": f"{did}:c{p.position}", "text": p.text, "position": p.position, "page": p.page}
            for p in pieces
        ]

    def _segments(self, did: str, doc: ParsedDocument) -> tuple[list[dict], str | None]:
        t0 = time.perf_counter()
        transcript = self._transcriber_model().transcribe(doc.source.path)
        self._timing["transcribe"] += time.perf_counter() - t0
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
        self, did: str, doc: ParsedDocument, chunks: tuple[ChunkRecord, ...]
    ) -> tuple[ImageRecord, ...]:
        if not doc.images:
            return ()
        t0 = time.perf_counter()
        paths: list[Path] = []
        for n, image in enumerate(doc.images):
            if image.path is not None:
                paths.append(image.path)
            else:
                target = self.options.image_dir / f"{did}_i{n}.png"
                target.parent.mkdir(parents=True, exist_ok=True)
                _save_png(image.data or b"", target, doc.source.path)
                paths.append(target.resolve())
        vectors = self._image_embedder().embed_images(paths)
        self._timing["embed_image"] += time.perf_counter() - t0
        records = []
        for n, (image, path, vector) in enumerate(zip(doc.images, paths, vectors, strict=True)):
            near = tuple(c.id for c in chunks if image.page is not None and c.page == image.page)
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

    # -- lazily loaded models ----------------------------------------------------------------
    def _needs_images(self, docs: Sequence[ParsedDocument]) -> bool:
        return self._image_factory is not None and any(d.images for d in docs)

    def _image_embedder(self) -> ImageEmbedder:
        if self._image is None:
            if self._image_factory is None:
                raise KgragError("images need an image embedder; none is configured")
            self._image = self._image_factory()
        return self._image

    def _transcriber_model(self) -> Transcriber:
        if self._transcriber is None:
            if self._transcriber_factory is None:
                raise KgragError("audio needs a transcriber; none is configured")
            self._transcriber = self._transcriber_factory()
        return self._transcriber


def _reason(e: KgragError) -> str:
    return e.reason if isinstance(e, IngestError) else str(e)


def _save_png(data: bytes, target: Path, source: Path) -> None:
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.convert("RGB").save(target, format="PNG")
    except (UnidentifiedImageError, OSError) as e:
        raise IngestError(str(source), f"an embedded image could not be decoded: {e}") from e


def _extractive_summary(chunks: Sequence[ChunkRecord], limit: int = 400) -> str | None:
    """The opening of the document (offline summary); an LLM summary replaces it when configured."""
    if not chunks:
        return None
    text = " ".join(c.text for c in sorted(chunks, key=lambda c: c.position)[:2])
    return text if len(text) <= limit else text[: text.rfind(" ", 0, limit)] + " …"
