"""Writes document bundles into the graph as idempotent, batched MERGEs, and deletes documents.

There are no multi-statement transactions on the embedded engine, so a document is written under
``status: 'ingesting'`` (invisible to every read statement) and made visible by one final
statement. Replaying a half-written document rewrites the same ids; an interrupted job resumes by
running again.
"""

from __future__ import annotations

import glob
import logging
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from itertools import combinations, pairwise
from pathlib import Path
from typing import NamedTuple, TypedDict

from kgrag.graph.store import GraphStore, WriteStep
from kgrag.ingest.entities import EntityRecord, display_rank
from kgrag.ingest.records import AclChange, DocumentBundle, ImageRecord, OtherName
from kgrag.modalities.base import ImageEmbedder
from kgrag.modalities.clip import DEFAULT_DEPICTS_THRESHOLD
from kgrag.text.folding import folded
from kgrag.text.search_properties import chunk_search_properties

log = logging.getLogger(__name__)

#: Documents per write transaction: write_many splits larger batches. One Neo4j transaction holds
#: its whole state in the heap; 50 ~1,000-token documents (~54,000 RELATED pairs) overran a 1 GB
#: heap's transaction memory limit (bench/write_path.py), 10 cost the least CPU per document.
TRANSACTION_DOCUMENTS = 10


def extracted_image_name(document_id: str, n: int | str) -> str:
    """The file name of image ``n`` that ingestion extracted from a document (a PDF figure)."""
    return f"{document_id}_i{n}.png"


class GraphWriter:
    def __init__(
        self,
        store: GraphStore,
        image_embedder: ImageEmbedder | None = None,
        depicts_threshold: float = DEFAULT_DEPICTS_THRESHOLD,
        batch_size: int = 500,
        image_dir: Path | None = None,
        transaction_documents: int = TRANSACTION_DOCUMENTS,
    ) -> None:
        self.store = store
        self.transaction_documents = max(1, transaction_documents)
        self.image_dir = image_dir
        """Where ingestion saved the images it extracted from documents (``{doc}_i{n}.png``):
        a deleted or replaced document's files there are removed with it."""
        self.image_embedder = image_embedder
        self.depicts_threshold = depicts_threshold
        self.batch_size = batch_size
        self.inference: list[tuple[float, float]] = []
        """(start, end) ``perf_counter`` times of model calls made here (CLIP entity names)."""

    def write(self, bundle: DocumentBundle) -> None:
        self.write_many([bundle])

    def write_many(self, bundles: Sequence[DocumentBundle]) -> None:
        """Write a batch of documents, :data:`TRANSACTION_DOCUMENTS` at a time, each group as
        one transaction where the engine has them (Neo4j: one commit, replayed whole on a
        deadlock or other transient error): each document is begun,
        every part of the batch is written in a few ``UNWIND`` statements, then the documents
        are completed. Where there are no multi-statement transactions (FalkorDB) the same
        statements run one by one and a document is ``ingesting`` (invisible to readers) until
        the last; a killed job's leftovers go in :meth:`recover`. Shared entities are MERGEd
        first, in id order, so concurrent writers lock them in the same order."""
        step = self.transaction_documents
        for start in range(0, len(bundles), step):
            self._write_transaction(bundles[start : start + step])

    def _write_transaction(self, bundles: Sequence[DocumentBundle]) -> None:
        if not bundles:
            return
        now = datetime.now(UTC).isoformat()
        begin = WriteStep("documents_begin", [_document_row(bundle, now) for bundle in bundles])
        entities = {e.id: e for bundle in bundles for e in bundle.extraction.entities}
        complete = WriteStep(
            "documents_complete",
            [
                {"id": b.id, "chunk_count": len(b.chunks), "image_count": len(b.images)}
                for b in bundles
            ],
        )
        images = [i for bundle in bundles for i in bundle.images]
        if images or (self.image_embedder is not None and entities):
            # CLIP reads what was just written (entity names, then images), between writes
            b = self.batch_size
            self.store.write_all([begin, *self._part_steps(bundles)], batch_size=b)
            self._embed_entity_names(list(entities))
            self.store.write_all(self._image_steps(bundles), batch_size=b)
            self._link_depicts(images)
            self.store.write_all([complete], batch_size=b)
        else:
            steps = [begin, *self._part_steps(bundles), *self._image_steps(bundles), complete]
            self.store.write_all(steps, batch_size=self.batch_size)
        for bundle in bundles:
            log.info(
                "document %s complete (%d chunks, %d images, %d tables)",
                bundle.id,
                len(bundle.chunks),
                len(bundle.images),
                len(bundle.tables),
            )

    def _part_steps(self, bundles: Sequence[DocumentBundle]) -> list[WriteStep]:
        """The statements writing the batch's chunks, tables, entities, mentions and RELATED
        weights (the documents already begun), in dependency order."""
        steps = []
        for segments in (False, True):
            rows = [
                {
                    "id": c.id,
                    "document_id": bundle.id,
                    "text": c.text,
                    **_search_properties(c.text),
                    "position": c.position,
                    "page": c.page,
                    "start_s": c.start_s,
                    "end_s": c.end_s,
                    "embedding": list(c.embedding),
                    **(
                        {"language": bundle.language}
                        if segments
                        else {
                            "section": list(c.section) or None,
                            "table_id": c.table_id,
                            "table": c.table,
                            "sheet": c.sheet,
                            "table_row": c.table_row,
                        }
                    ),
                }
                for bundle in bundles
                if bundle.segments == segments
                for c in bundle.chunks
            ]
            name = "segment_upsert" if segments else "chunk_upsert"
            steps.append(WriteStep(name, rows, {"document_id": None}))
        steps.append(
            WriteStep(
                "table_upsert",
                [
                    {
                        "id": t.id,
                        "document_id": bundle.id,
                        "number": t.number,
                        "page": t.page,
                        "sheet": t.sheet,
                        "caption": t.caption,
                        "header": list(t.header),
                        "row_count": t.row_count,
                        "column_count": t.column_count,
                    }
                    for bundle in bundles
                    for t in bundle.tables
                ],
            )
        )
        steps.append(
            WriteStep(
                "table_link_rows",
                [
                    {"chunk_id": c.id, "table_id": c.table_id}
                    for bundle in bundles
                    for c in bundle.chunks
                    if c.table_id is not None
                ],
            )
        )
        next_rows = []
        for bundle in bundles:
            ordered = sorted(bundle.chunks, key=lambda c: c.position)
            next_rows += [{"a": x.id, "b": y.id} for x, y in pairwise(ordered)]
        steps.append(WriteStep("chunk_link_next", next_rows))
        # Entities are shared between jobs: rows in id order, so concurrent writers lock the same
        # entities in the same order (a deadlock is still retried). The MENTIONS and RELATED
        # that follow touch only these entities, already locked by this transaction.
        entities = {e.id: e for bundle in bundles for e in bundle.extraction.entities}
        steps.append(
            WriteStep("entity_upsert", [_entity_row(entities[k]) for k in sorted(entities)])
        )
        mentions = [
            {"chunk_id": m.chunk_id, "entity_id": m.entity_id, "count": m.count}
            for bundle in bundles
            for m in bundle.extraction.mentions
        ]
        mentions.sort(key=lambda r: (r["entity_id"], r["chunk_id"]))
        steps.append(WriteStep("mention_upsert", mentions))
        # RELATED weights grow by the new chunks' own co-mentions (each chunk counted once). A
        # relation no new chunk backs (an extractor's own pair) is recomputed over the corpus.
        increment = related_increment(bundles)
        if increment.docs:
            steps.append(
                WriteStep(
                    "related_add_chunks",
                    params={"docs": increment.docs, "pairs": increment.pairs},
                )
            )
        backed = {(p["a"], p["b"]) for p in increment.pairs}
        steps.append(
            WriteStep(
                "related_recompute",
                _related_rows(
                    pair
                    for bundle in bundles
                    for r in bundle.extraction.relations
                    if (pair := (r.source_id, r.target_id)) not in backed
                ),
            )
        )
        return steps

    def _image_steps(self, bundles: Sequence[DocumentBundle]) -> list[WriteStep]:
        """The statements writing the batch's images and their NEAR links."""
        images = [(bundle, i) for bundle in bundles for i in bundle.images]
        return [
            WriteStep(
                "image_upsert",
                [
                    {
                        "id": i.id,
                        "document_id": bundle.id,
                        "uri": i.uri,
                        "width": i.width,
                        "height": i.height,
                        "page": i.page,
                        "caption": i.caption,
                        "embedding": list(i.embedding),
                    }
                    for bundle, i in images
                ],
                {"document_id": None},
            ),
            WriteStep(
                "image_link_near",
                [{"image_id": i.id, "chunk_id": c} for _, i in images for c in i.near_chunk_ids],
            ),
        ]

    def set_acl(self, changes: Sequence[AclChange]) -> None:
        """Give complete documents their new ACL and record each change (an ``AclChange`` node
        linked to the document: who, when, old and new ACL), one statement per batch, so a
        document never has a new ACL without its record. Nothing else of the documents is
        rewritten; replaying it changes nothing; readers see the new ACL from their next
        statement."""
        rows = [
            {
                "id": c.document_id,
                "acl": list(c.new_acl),
                "change_id": c.id,
                "actor": c.actor,
                "at": c.at,
                "old_acl": list(c.old_acl),
            }
            for c in changes
        ]
        self.store.write_rows("document_set_acl", rows, batch_size=self.batch_size)
        for c in changes:
            log.info(
                "document %s: ACL changed from %s to %s by %s",
                c.document_id,
                ", ".join(c.old_acl),
                ", ".join(c.new_acl),
                c.actor or "an unnamed caller",
            )

    def add_other_names(self, names: Sequence[OtherName]) -> None:
        """Record each file skipped as a copy as another name of the complete document it copies
        (its path in ``also_uris``, once: replaying adds nothing). A copy whose kept document was
        not written (it failed) is recorded nowhere."""
        rows = [{"uri": n.kept, "sha256": n.sha256, "path": n.path} for n in names]
        if rows:
            self.store.write_rows("document_add_other_name", rows, batch_size=self.batch_size)

    def forget_other_names(self, paths: Sequence[str]) -> None:
        """Drop ``paths`` from every document's other names: each is now stored as a document of
        its own (its file changed since it was skipped as a copy)."""
        for start in range(0, len(paths), self.batch_size):
            self.store.write(
                "documents_forget_other_names", {"paths": paths[start : start + self.batch_size]}
            )

    def delete(self, document_id: str) -> None:
        """Remove a document and what only it supported (orphaned entities, stale RELATED).

        The document node goes last: until then it is marked ``deleting``, so a delete cut short
        by a kill is finished by :meth:`recover`.
        """
        s = self.store
        s.write("document_mark_deleting", {"id": document_id})
        entity_ids = [r["id"] for r in s.read("document_entities", {"id": document_id})]
        pairs = s.read("entity_pairs", {"ids": entity_ids}) if entity_ids else []
        s.write("document_delete_parts", {"id": document_id})
        if pairs:
            self._recompute_related([{"a": p["a"], "b": p["b"]} for p in pairs])
            s.write("related_prune")
        if entity_ids:
            s.write("entity_delete_orphans", {"ids": entity_ids})
        s.write("document_delete_node", {"id": document_id})
        self._remove_extracted_images(document_id)

    def _remove_extracted_images(self, document_id: str) -> None:
        """The PNG files ingestion extracted from ``document_id`` (never files it was given)."""
        if self.image_dir is None or not self.image_dir.is_dir():
            return
        for path in self.image_dir.glob(extracted_image_name(glob.escape(document_id), "*")):
            try:
                path.unlink()
            except OSError as e:  # the graph is consistent; a stray file is only disk space
                log.warning("could not remove %s of deleted document %s: %s", path, document_id, e)

    def recover(self) -> list[str]:
        """Finish what a killed job left: remove every document not ``complete`` (half written or
        half deleted), then entities nothing supports and RELATED weights no chunk backs.
        Returns the removed document ids."""
        s = self.store
        leftovers = [r["id"] for r in s.read("document_unfinished")]
        for doc_id in leftovers:
            log.warning("removing document %s left unfinished by an interrupted job", doc_id)
            self.delete(doc_id)
        if leftovers:
            s.write("entity_delete_all_orphans")
            s.write("related_recompute_all")
            s.write("related_prune")
        return leftovers

    def _recompute_related(self, pairs: list[dict[str, str]]) -> None:
        rows = _related_rows((p["a"], p["b"]) for p in pairs)
        self.store.write_rows("related_recompute", rows, batch_size=self.batch_size)

    def _embed_entity_names(self, entity_ids: list[str]) -> None:
        if self.image_embedder is None or not entity_ids:
            return
        missing = self.store.read("entity_missing_clip", {"ids": entity_ids})
        if not missing:
            return
        t0 = time.perf_counter()
        vectors = self.image_embedder.embed_texts([r["name"] for r in missing])
        self.inference.append((t0, time.perf_counter()))
        self.store.write_rows(
            "entity_set_clip",
            [
                {"id": r["id"], "name": r["name"], "embedding": v}
                for r, v in zip(missing, vectors, strict=True)
            ],
            batch_size=self.batch_size,
        )
        # images stored earlier may depict an entity named only now
        hits = self.store.read(
            "images_near_clip",
            {
                "rows": [
                    {"id": r["id"], "vector": v} for r, v in zip(missing, vectors, strict=True)
                ],
                "k": 10,
            },
        )
        self.store.write_rows(
            "image_link_depicts",
            [
                {"image_id": h["image_id"], "entity_id": h["entity_id"], "score": h["score"]}
                for h in hits
                if h["score"] >= self.depicts_threshold
            ],
            batch_size=self.batch_size,
        )

    def _link_depicts(self, images: Sequence[ImageRecord]) -> None:
        rows = []
        for image in images:
            hits = self.store.read("entity_clip_nearest", {"vector": list(image.embedding), "k": 5})
            rows += [
                {"image_id": image.id, "entity_id": h["id"], "score": h["score"]}
                for h in hits
                if h["score"] >= self.depicts_threshold
            ]
        self.store.write_rows("image_link_depicts", rows, batch_size=self.batch_size)


def _document_row(bundle: DocumentBundle, now: str) -> dict[str, object]:
    return {
        "id": bundle.id,
        "uri": bundle.uri,
        "sha256": bundle.sha256,
        "modality": bundle.modality,
        "mime": bundle.mime,
        "title": bundle.title,
        "bytes": bundle.bytes,
        "acl": list(bundle.acl),
        "tags": list(bundle.tags),
        "ingested_at": now,
        "language": bundle.language,
        "summary": bundle.summary,
        "duration_s": bundle.duration_s,
        "file_modified_at": bundle.dates.file_modified_at,
        "content_created_at": bundle.dates.content_created_at,
        "content_modified_at": bundle.dates.content_modified_at,
        "authors": list(bundle.authors),
    }


class _DocumentChunks(TypedDict):
    id: str
    chunks: list[str]


class _PairWeight(TypedDict):
    doc: str
    a: str
    b: str
    w: int


class RelatedIncrement(NamedTuple):
    """The parameters of ``related_add_chunks`` for a batch of documents."""

    docs: list[_DocumentChunks]
    """Each document's chunks that mention two entities or more (documents with none left out)."""
    pairs: list[_PairWeight]
    """Every pair ``a < b`` mentioned together in those chunks of ``doc``, and in how many."""


def related_increment(bundles: Sequence[DocumentBundle]) -> RelatedIncrement:
    """What the batch's new chunks add to RELATED, documents, chunks and pairs in id order."""
    docs: list[_DocumentChunks] = []
    pairs: list[_PairWeight] = []
    for bundle in bundles:
        mentioned: dict[str, set[str]] = {}
        for m in bundle.extraction.mentions:
            mentioned.setdefault(m.chunk_id, set()).add(m.entity_id)
        chunks = sorted(c for c, ids in mentioned.items() if len(ids) > 1)
        if not chunks:
            continue
        weights = Counter(p for c in chunks for p in combinations(sorted(mentioned[c]), 2))
        docs.append({"id": bundle.id, "chunks": chunks})
        pairs += [
            {"doc": bundle.id, "a": a, "b": b, "w": weights[(a, b)]} for a, b in sorted(weights)
        ]
    return RelatedIncrement(docs, pairs)


def _related_rows(pairs: Iterable[tuple[str, str]]) -> list[dict[str, object]]:
    """Each unordered entity pair once, grouped by its lesser id: rows ``{a, bs}`` with ``a``
    less than every ``b``, all in id order (so concurrent writers lock in the same order)."""
    partners: dict[str, set[str]] = {}
    for a, b in pairs:
        if a != b:
            partners.setdefault(min(a, b), set()).add(max(a, b))
    return [{"a": a, "bs": sorted(partners[a])} for a in sorted(partners)]


def _search_properties(text: str) -> dict[str, object]:
    """The chunk's search properties as statement parameters (``words`` is stored on FalkorDB
    only; Neo4j's statements do not read it)."""
    search = chunk_search_properties(text)
    return {"words": search.words, "text_folded": search.text_folded}


def _entity_row(entity: EntityRecord) -> dict[str, object]:
    """The entity's best display form by :func:`display_rank` (ties: alphabetically first)."""
    forms = {entity.name, *entity.aliases}
    name = min(forms, key=lambda f: (-display_rank(f), f))
    return {
        "id": entity.id,
        "name": name,
        "name_folded": folded(name),
        "name_rank": display_rank(name),
        "type": entity.type,
    }
