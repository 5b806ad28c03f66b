"""The batch ingestion job: inputs -> parsed documents -> chunks / segments / images -> embeddings
and entities -> graph writes.

Model inference (:mod:`kgrag.ingest.build`) runs on the calling thread in batches that span
documents, or on a :class:`Runner` (Ray: :mod:`kgrag.ingest.ray_job`) on the same batches; graph
writes run on one writer thread, so a batch is written while the next one is embedded.
Documents are identified by content hash: an unchanged file is skipped (or, ingested with
another ACL, only gets that ACL), a changed one replaces its previous version.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any, Protocol

from kgrag import metrics
from kgrag.acl import parse_acl, stored_acl
from kgrag.errors import KgragError
from kgrag.graph.store import GraphStore
from kgrag.ingest.build import Builder, BuildOutput, Embedded, Failure, reason_of
from kgrag.ingest.containers.expand import parse_all
from kgrag.ingest.containers.links import ContainerLinks
from kgrag.ingest.entities import EntityExtractor, ExtractionResult, split_by_document
from kgrag.ingest.models import ParsedDocument, ParsedInputs, SourceItem
from kgrag.ingest.pipeline.acl_changes import AclPolicy, acl_change, acl_refused
from kgrag.ingest.pipeline.options import IngestOptions
from kgrag.ingest.pipeline.report import (
    NO_SPEECH,
    IngestReport,
    Note,
    ProgressCallback,
    ProgressEvent,
    WriteRate,
)
from kgrag.ingest.records import AclChange, DocumentBundle, OtherName, document_id
from kgrag.ingest.sources import expand_inputs
from kgrag.ingest.summaries import Summariser, silent_recording_summary
from kgrag.ingest.table_rows import table_records
from kgrag.ingest.unexpected import failure_reason, must_stop
from kgrag.ingest.writer import GraphWriter
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber

log = logging.getLogger(__name__)


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
        summariser: Summariser | None = None,
        runner: Runner | None = None,
    ) -> None:
        self.store = store
        self.text_embedder = text_embedder
        self.extractor = extractor
        self.options = options or IngestOptions()
        self.builder = Builder(
            text_embedder,
            image_embedder=image_embedder,
            transcriber=transcriber,
            overlap_tokens=self.options.chunk_overlap_tokens,
            image_dir=self.options.image_dir,
            on_advance=lambda stage, n, path: self._advance(stage, n, path),
        )
        self.runner = runner
        """Where parsing and the model stages run: None in this process (threads for parsing),
        or a :class:`Runner` (kgrag.ingest.ray_job.RayRunner: Ray Data tasks and actor pools).
        Everything else (what to skip, ACLs, entities, summaries, writes) is the same."""
        self.progress = progress or (lambda _e: None)
        self.summariser = summariser or Summariser(text_embedder)  # with an LLM: Summariser(e, llm)
        self._timing: dict[str, float] = defaultdict(float)
        self._totals: dict[str, int] = {}
        self._intervals: list[tuple[float, float]] = []  # (start, end) of each model call
        self._done: dict[str, int] = defaultdict(int)
        self._writers_used: list[GraphWriter] = []
        self.bundle_sink: list[DocumentBundle] | None = None
        """When set, the documents' bundles are kept here instead of written (a bulk import,
        :mod:`kgrag.ingest.bulk_job`); the job then changes no stored ACL and replaces nothing."""
        self._lock = threading.Lock()  # the extractor, timings and progress, between writers

    # -- public -------------------------------------------------------------------------------
    def ingest_paths(
        self,
        paths: Sequence[str],
        acl: Sequence[str] = (),
        *,
        actor: str | None = None,
        may_change_acl: bool = True,
    ) -> IngestReport:
        """Ingest files, folders, globs and JSONL manifests, readable by ``acl`` (namespaced
        principals, kgrag.acl; public when empty). An invalid entry raises
        :class:`~kgrag.errors.InvalidAclError` before anything is read or written.

        ``actor`` (who asks) is recorded with every ACL change. With ``may_change_acl=False``
        a file whose stored document has another ACL fails (named in ``failures``) and nothing
        of that document changes."""
        acl = parse_acl(acl)
        policy = AclPolicy(actor=actor, may_change_acl=may_change_acl)
        started = time.perf_counter()
        self._timing, self._intervals = defaultdict(float), []
        # leftovers of killed jobs are cleaned only when no other job is writing
        with self.store.ingest_job(self._writer().recover) as recovered:
            report = IngestReport(recovered=recovered)
            expanded = expand_inputs(paths, acl)
            items, refused = list(expanded.items), list(expanded.rejected)
            shard = self.options.shard
            if shard is not None:
                report.shard = str(shard)
                items = [i for i in expanded.items if shard.owns(str(i.path))]
                refused = [r for r in expanded.rejected if shard.owns(r.path)]
                report.other_shards = len(expanded.items) + len(expanded.rejected)
                report.other_shards -= len(items) + len(refused)
            for rejected in refused:
                if rejected.explicit:
                    report.failures.append(Failure(path=rejected.path, reason=rejected.reason))
                else:
                    report.skip(rejected.path, rejected.kind, rejected.reason)
            items = self._selected(items, report)
            parsed = self._parse_all(items, report)
            self._ingest_parsed(parsed, report, policy)
        return self._finish(report, started)

    def _selected(self, items: list[SourceItem], report: IngestReport) -> list[SourceItem]:
        """The items ``--include``/``--exclude`` keep; the others are skipped, naming the glob."""
        include, exclude = self.options.include, self.options.exclude
        if not include and not exclude:
            return items
        kept = []
        for item in items:
            path = PurePath(item.path)
            hit = next((g for g in exclude if path.match(g)), None)
            if hit is not None:
                report.skip(str(item.path), "excluded", f"matches --exclude {hit!r}")
            elif include and not any(path.match(g) for g in include):
                report.skip(str(item.path), "not_included", "matches no --include glob")
            else:
                kept.append(item)
        return kept

    def ingest_documents(
        self,
        documents: Sequence[ParsedDocument],
        *,
        actor: str | None = None,
        may_change_acl: bool = True,
    ) -> IngestReport:
        """Ingest documents parsed elsewhere (for example a benchmark corpus); ``actor`` and
        ``may_change_acl`` as for :meth:`ingest_paths`."""
        policy = AclPolicy(actor=actor, may_change_acl=may_change_acl)
        started = time.perf_counter()
        self._timing, self._intervals = defaultdict(float), []
        with self.store.ingest_job(self._writer().recover) as recovered:
            report = IngestReport(recovered=recovered)
            mine = list(documents)
            shard = self.options.shard
            if shard is not None:
                report.shard = str(shard)
                mine = [d for d in documents if shard.owns(str(d.source.path))]
                report.other_shards = len(documents) - len(mine)
            self._ingest_parsed(mine, report, policy)
        return self._finish(report, started)

    def _finish(self, report: IngestReport, started: float) -> IngestReport:
        report.failed = len(report.failures)
        report.seconds = round(time.perf_counter() - started, 3)
        report.stage_seconds = {k: round(v, 3) for k, v in self._timing.items()}
        report.inference_seconds = round(union_seconds(self._intervals), 3)
        metrics.observe_ingest(report)
        log.info(
            "%singested %d, skipped %d, failed %d in %.1f s (%s)",
            f"shard {report.shard} ({report.other_shards} inputs left to other shards): "
            if report.shard
            else "",
            report.ingested,
            report.skipped,
            report.failed,
            report.seconds,
            ", ".join(f"{k} {v:.1f} s" for k, v in report.stage_seconds.items()),
        )
        return report

    def delete(self, document_id: str) -> None:
        """Remove a document and what only it supported; an archive's or a message's members
        (documents ``CONTAINED_IN`` or ``ATTACHED_TO`` it, at any depth) go with it."""
        writer = self._writer()
        for row in self.store.read("document_members", {"id": document_id}):
            writer.delete(row["id"])
        writer.delete(document_id)

    def _writer(self, image_embedder: ImageEmbedder | None = None) -> GraphWriter:
        writer = GraphWriter(
            self.store,
            image_embedder,
            depicts_threshold=self.options.depicts_threshold,
            image_dir=self.options.image_dir,
        )
        self._writers_used.append(writer)
        return writer

    @property
    def writers(self) -> int:
        """Concurrent writers of this job: ``options.writers`` on an engine with concurrent
        write transactions (Neo4j), else one."""
        return max(1, self.options.writers) if self.store.concurrent_writes else 1

    # -- stages -------------------------------------------------------------------------------
    def _parse_all(self, items: Sequence[SourceItem], report: IngestReport) -> list[ParsedDocument]:
        """Every item's documents (an archive or a message: its own and its members'); what
        cannot be read is a failure, what holds nothing (or nothing kgrag reads) a skip."""
        t0 = time.perf_counter()
        out: list[ParsedDocument] = []
        with ThreadPoolExecutor(max_workers=max(1, self.options.workers)) as pool:
            results: Iterable[ParsedInputs] = (
                pool.map(lambda item: parse_item(item, self.options), items)
                if self.runner is None
                else self.runner.parse(items, self.options)
            )
            for n, result in enumerate(results, start=1):
                for refused in result.refused:
                    if refused.explicit:
                        report.failures.append(Failure(path=refused.path, reason=refused.reason))
                    else:
                        report.skip(refused.path, refused.kind, refused.reason)
                out.extend(result.documents)
                self.progress(ProgressEvent(stage="parse", done=n, total=len(items)))
        self._timing["parse"] += time.perf_counter() - t0
        return out

    def _ingest_parsed(
        self, documents: list[ParsedDocument], report: IngestReport, policy: AclPolicy
    ) -> None:
        todo: list[ParsedDocument] = []
        replaced: dict[str, list[str]] = {}
        stale: list[str] = []
        new_acls: list[AclChange] = []  # unchanged documents given another ACL
        changes: dict[str, AclChange] = {}  # changed documents replacing one of another ACL
        at = datetime.now(UTC).isoformat()
        stored: dict[str, list[dict[str, Any]]] = defaultdict(list)
        uris = list(dict.fromkeys(str(d.source.path) for d in documents))
        for start in range(0, len(uris), 1000):  # one round trip per 1,000 files
            for row in self.store.read(
                "documents_find_by_uris", {"uris": uris[start : start + 1000]}
            ):
                stored[row["uri"]].append(row)
        # a stored file this job replaces with other content holds its old content no more: a
        # file with that old content is no copy of it (skipped, it would be stored nowhere)
        versions = ((str(d.source.path), d.sha256) for d in documents)
        replacing = {
            uri
            for uri, sha in versions
            if stored.get(uri) and document_id(uri, sha) not in _ids(stored[uri])
        }
        originals = self._stored_contents(documents, replacing)
        other_names: list[OtherName] = []  # paths skipped as duplicates: other names of the kept
        for doc in documents:
            uri = str(doc.source.path)
            existing = stored.get(uri, [])
            new_id = document_id(uri, doc.sha256)
            if not existing:  # a new path: is its content already ingested elsewhere?
                key = (doc.sha256, frozenset(stored_acl(doc.source.acl)))
                original = originals.get(key)
                if original is not None and original != uri:
                    detail = f"same content and ACL as {original}, already ingested"
                    report.skip(uri, "duplicate", detail)
                    other_names.append(OtherName(kept=original, sha256=doc.sha256, path=uri))
                    continue
                originals[key] = uri
            others = [r["id"] for r in existing if r["id"] != new_id]
            same = [r for r in existing if r["id"] == new_id and r["status"] == "complete"]
            # the stored version (this one, or the one a changed file replaces) and its ACL
            previous = same or [r for r in existing if r["status"] == "complete"]
            change = acl_change(doc, new_id, previous, policy, at)
            if change is not None and not policy.may_change_acl:
                reason = acl_refused(change.old_acl, change.new_acl)
                report.failures.append(Failure(path=uri, reason=reason))
                continue  # nothing of this document changes
            if same:
                stale += others  # an earlier version a killed job had not yet removed
                if change is not None:
                    new_acls.append(change)  # only the ACL changes: nothing is re-embedded
                else:
                    report.skip(uri, "unchanged", "already ingested: same content and same ACL")
                continue
            if change is not None:
                changes[new_id] = change
            replaced[new_id] = others
            todo.append(doc)
        self._writers_used = []
        writer = self._writer()
        containers = ContainerLinks(self.store, writer.delete)
        if new_acls:
            writer.set_acl(new_acls)
            ids = [c.document_id for c in new_acls]
            report.acl_updated.extend(ids)
            report.acl_changes.extend(new_acls)
            report.document_ids.extend(ids)
            report.ingested += len(ids)
        for old in stale:
            writer.delete(old)
        # a file stored as its own document now (changed since it was a copy) is no other name
        writer.forget_other_names([str(d.source.path) for d in todo])
        if not todo:
            containers.link(documents)
            writer.add_other_names(other_names)
            return
        # Word statistics from the whole job first: what a chunk yields then does not depend on
        # the documents before it (a resumed job extracts what an uninterrupted one does).
        self.extractor.observe(p.text for d in documents for p in d.pages)
        if self.builder.has_image_embedder:
            try:  # entity names need CLIP vectors even in a job without images (DEPICTS later)
                writer.image_embedder = self.builder.image_embedder()
            except KgragError as e:  # documents with images then fail with this reason
                log.warning("no image embedder: %s", e)
        self._totals = {
            "transcribe": sum(1 for d in todo if d.source.modality == "audio"),
            "embed_image": sum(len(d.images) for d in todo),
            "embed_text": len(todo),
            "entities": len(todo),
        }
        self._done = defaultdict(int)
        total = len(todo)
        rate = WriteRate(total, self.progress)
        writers = self.writers
        with ThreadPoolExecutor(max_workers=writers, thread_name_prefix="kgrag-writer") as pool:
            pending: deque[tuple[Future[tuple[list[str], list[Failure]]], int]] = deque()
            alone = False  # the batch in flight must be written with no other
            silent: dict[str, str] = {}  # document id -> path of a recording without speech
            for built in self._built(list(self._batches(todo))):
                for failure in built.failures:
                    if failure.empty:
                        report.skip(failure.path, "empty", failure.reason)
                    else:
                        report.failures.append(failure)
                silent.update(
                    (e.id, str(e.doc.source.path))
                    for e in built.embedded
                    if e.duration_s is not None and not e.chunks
                )
                shared = writers > 1 and _may_share(built.embedded, replaced, changes)
                # entities, summaries and the writes of this batch overlap the next batch's
                # models; with several writers, up to that many batches are written at once
                while pending and (alone or not shared or len(pending) >= writers):
                    done, chunks = pending.popleft()
                    rate.written(self._collect(done, report, changes, silent), chunks)
                alone = not shared
                chunks = sum(len(e.chunks) for e in built.embedded)
                future = pool.submit(
                    self._finish_and_write,
                    writer if writers == 1 else self._writer(writer.image_embedder),
                    built.embedded,
                    replaced,
                    changes,
                )
                pending.append((future, chunks))
            while pending:
                done, chunks = pending.popleft()
                rate.written(self._collect(done, report, changes, silent), chunks)
        inference = [i for w in self._writers_used for i in w.inference]
        self._timing["embed_entity_names"] += sum(b - a for a, b in inference)
        self._intervals += inference
        written = set(report.document_ids)
        changed = [
            str(d.source.path)
            for d in todo
            if d.container and document_id(str(d.source.path), d.sha256) in written
        ]
        containers.remove_gone(changed, {str(d.source.path) for d in documents})
        containers.link(documents)
        writer.add_other_names(other_names)  # after the kept copies of this job are written

    def _stored_contents(
        self, documents: Sequence[ParsedDocument], replacing: Collection[str]
    ) -> dict[tuple[str, frozenset[str]], str]:
        """(sha256, ACL) -> URI of a complete stored document with that content and ACL, but
        for the URIs in ``replacing`` (files this job stores with other content)."""
        found: dict[tuple[str, frozenset[str]], str] = {}
        hashes = list(dict.fromkeys(d.sha256 for d in documents))
        for start in range(0, len(hashes), 1000):
            for row in self.store.read(
                "documents_find_by_sha256", {"hashes": hashes[start : start + 1000]}
            ):
                if row["uri"] in replacing:
                    continue
                key = (row["sha256"], frozenset(row.get("acl") or ()))
                found.setdefault(key, row["uri"])
        return found

    def _built(self, batches: list[list[ParsedDocument]]) -> Iterator[BuildOutput]:
        """Each batch through the model stages, in order: here, or on the runner."""
        for out in (
            map(self.builder.build, batches) if self.runner is None else self.runner.build(batches)
        ):
            for stage, seconds in out.timing.items():
                self._timing[stage] += seconds
            self._intervals += out.intervals
            if self.runner is not None:  # here the builder reports each model call itself
                for stage, n in out.counts.items():
                    self._advance(stage, n)
            yield out

    def _advance(self, stage: str, n: int = 1, path: str | None = None) -> None:
        self._done[stage] += n
        self.progress(
            ProgressEvent(stage=stage, done=self._done[stage], total=self._totals[stage], path=path)
        )

    def _collect(
        self,
        pending: Future[tuple[list[str], list[Failure]]],
        report: IngestReport,
        changes: Mapping[str, AclChange],
        silent: Mapping[str, str],
    ) -> int:
        ids, failures = pending.result()
        report.failures.extend(failures)
        report.notes.extend(Note(path=silent[i], detail=NO_SPEECH) for i in ids if i in silent)
        report.document_ids.extend(ids)
        report.acl_changes.extend(changes[i] for i in ids if i in changes)
        report.ingested += len(ids)
        return len(ids)

    def _finish_and_write(
        self,
        writer: GraphWriter,
        embedded: list[Embedded],
        replaced: dict[str, list[str]],
        changes: Mapping[str, AclChange],
    ) -> tuple[list[str], list[Failure]]:
        with self._lock:  # the extractor may keep state; one batch at a time
            bundles, failures = self._bundles(embedded)
        return self._write(writer, bundles, replaced, changes), failures

    def _write(
        self,
        writer: GraphWriter,
        bundles: list[DocumentBundle],
        replaced: dict[str, list[str]],
        changes: Mapping[str, AclChange],
    ) -> list[str]:
        t0 = time.perf_counter()
        if self.bundle_sink is not None:
            if any(b.id in changes or replaced.get(b.id) for b in bundles):
                raise KgragError("a bulk import adds documents only; this job replaces some")
            with self._lock:
                self.bundle_sink.extend(bundles)
            return [b.id for b in bundles]
        writer.write_many(bundles)
        metrics.INGEST_PASSAGES.inc(sum(len(b.chunks) for b in bundles))
        # recorded before the version of the other ACL goes
        writer.set_acl([changes[b.id] for b in bundles if b.id in changes])
        written = []
        for bundle in bundles:
            for old in replaced.get(bundle.id, []):
                writer.delete(old)
            written.append(bundle.id)
        with self._lock:
            self._timing["write"] += time.perf_counter() - t0
        return written

    def _batches(self, docs: Sequence[ParsedDocument]) -> Iterable[list[ParsedDocument]]:
        batch: list[ParsedDocument] = []
        size = 0
        for doc in docs:
            batch.append(doc)
            size += max(1, sum(len(p.text) for p in doc.pages) // 1000)
            size += sum(len(t.rows) for t in doc.tables)
            if size >= self.options.batch_chunks:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch

    def _bundles(self, built: list[Embedded]) -> tuple[list[DocumentBundle], list[Failure]]:
        """Entities and summaries of embedded documents, and their bundles for the writer."""
        failures: list[Failure] = []
        gone: set[str] = set()  # ids of the documents whose entities could not be extracted
        t0 = time.perf_counter()
        try:
            per_doc = self._entities(built)
        except Exception as e:  # one document's text broke the extractor: find which
            if must_stop(e):
                raise
            log.warning("entity extraction failed on a batch (%s); one document at a time", e)
            per_doc = {}
            for one in built:
                try:
                    per_doc |= self._entities([one])
                except Exception as e:
                    if must_stop(e):
                        raise
                    failures.append(_failed(one, "its entities could not be extracted", e))
                    gone.add(one.id)
        self._timing["entities"] += time.perf_counter() - t0
        self._advance("entities", len(built))
        bundles = []
        for doc, did, chunks, images, language, duration_s in built:
            if did in gone:
                continue
            try:  # the summary may embed sentences: a model failure fails this document only
                summary = (
                    silent_recording_summary(duration_s)
                    if duration_s is not None and not chunks
                    else self.summariser.summarise(doc.title, doc.source.modality, chunks, images)
                )
            except Exception as e:
                if must_stop(e):
                    raise
                failures.append(_failed(doc, "it could not be summarised", e))
                continue
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
                    language=language,
                    duration_s=duration_s,
                    dates=doc.dates,
                    authors=doc.authors,
                    segments=doc.source.modality == "audio",
                    summary=summary,
                    chunks=chunks,
                    images=images,
                    tables=table_records(did, doc.tables),
                    extraction=per_doc.get(did, ExtractionResult()),
                )
            )
        return bundles, failures

    def _entities(self, built: Sequence[Embedded]) -> dict[str, ExtractionResult]:
        """Document id -> the entities of its chunks."""
        pairs = [(c.id, c.text, e.id) for e in built for c in e.chunks]
        extraction = self.extractor.extract(
            [(cid, text) for cid, text, _ in pairs],
            document_ids=[did for _, _, did in pairs],
            document_acls={e.id: stored_acl(e.doc.source.acl) for e in built},
        )
        return split_by_document(extraction, {cid: did for cid, _, did in pairs})


def _failed(built: Embedded | ParsedDocument, doing: str, e: Exception) -> Failure:
    """The failure of a document a later stage broke on with ``e`` (a kgrag error says its
    own reason; another is one nobody meant, :mod:`kgrag.ingest.unexpected`)."""
    doc = built.doc if isinstance(built, Embedded) else built
    path = str(doc.source.path)
    reason = reason_of(e) if isinstance(e, KgragError) else failure_reason(doing, e, path)
    return Failure(path=path, reason=reason)


def _may_share(
    embedded: Sequence[Embedded],
    replaced: Mapping[str, Sequence[str]],
    changes: Mapping[str, AclChange],
) -> bool:
    """Whether a batch may be written beside others: only new documents without images. Images
    are linked to the entities stored before them (and entities to the images), which a
    concurrent transaction would not see yet; replacing a document deletes entities another
    batch may be adding to; ACL changes are recorded in job order. Those batches are written
    alone. Concurrent batches MERGE their shared entities in id order, so they lock them in the
    same order, and a deadlock or lost MERGE race replays the whole transaction (its statements
    are idempotent): nothing is duplicated."""
    return all(not e.images and not replaced.get(e.id) and e.id not in changes for e in embedded)


def parse_item(item: SourceItem, options: IngestOptions) -> ParsedInputs:
    """``item``'s documents (a container's members too) and what was refused, each named with
    its reason (the same on every runner)."""
    return parse_all(
        item,
        options.max_file_bytes,
        ocr_enabled=options.ocr,
        max_media_seconds=options.max_media_seconds,
    )


class Runner(Protocol):
    """Runs parsing and the model stages somewhere else (a Ray cluster), in order."""

    def parse(self, items: Sequence[SourceItem], options: IngestOptions) -> Iterator[ParsedInputs]:
        """:func:`parse_item` of each item, in the items' order."""
        ...

    def build(self, batches: Sequence[Sequence[ParsedDocument]]) -> Iterator[BuildOutput]:
        """:meth:`Builder.build` of each batch, in the batches' order."""
        ...


def union_seconds(intervals: Sequence[tuple[float, float]]) -> float:
    """Length of the union of time intervals (model calls on two threads may overlap)."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def _ids(rows: Iterable[Mapping[str, Any]]) -> set[str]:
    return {str(r["id"]) for r in rows}
