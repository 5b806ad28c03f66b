"""KnowledgeAgent: the object a user talks to. Ingestion and questions on one store."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from kgrag.agent.answer import Answer
from kgrag.agent.synthesis import extractive_answer
from kgrag.config import Settings
from kgrag.errors import NotFoundError
from kgrag.executor.handlers import ExecutionEnv, StepOutcome
from kgrag.executor.hits import AccessContext, Hit
from kgrag.executor.scheduler import Executor
from kgrag.executor.trace import TraceWriter
from kgrag.graph import open_store
from kgrag.graph.spaces import EmbeddingSpace, ensure_space
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import RuleEntityExtractor, normalise_name
from kgrag.ingest.pipeline import IngestOptions, Ingestor, IngestReport, ProgressCallback
from kgrag.modalities import factory
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber
from kgrag.planner.analysis import ResolvedEntity, analyse
from kgrag.planner.models import Plan, Step
from kgrag.planner.rule import rule_plan

log = logging.getLogger(__name__)

StepCallback = Callable[[Step, StepOutcome], None]


class KnowledgeAgent:
    """Ingest documents, images and recordings; answer questions with citations and a trace."""

    def __init__(
        self,
        store: GraphStore,
        text_embedder: TextEmbedder,
        *,
        image_embedder: Callable[[], ImageEmbedder] | None = None,
        transcriber: Callable[[], Transcriber] | None = None,
        ingest_options: IngestOptions | None = None,
    ) -> None:
        self.store = store
        self.text_embedder = text_embedder
        self._image_factory = image_embedder
        self._transcriber_factory = transcriber
        self.ingest_options = ingest_options or IngestOptions()
        ensure_space(
            store,
            EmbeddingSpace(
                name="text", model=text_embedder.model_name, dimensions=text_embedder.dimensions
            ),
        )
        self._image: ImageEmbedder | None = None

    @classmethod
    def open(cls, settings: Settings | None = None) -> KnowledgeAgent:
        """Open the store and models named by ``settings`` (default: embedded, local models)."""
        s = settings or Settings()
        store = open_store(
            s.store,
            graph_name=s.graph_name,
            neo4j_user=s.neo4j_user,
            neo4j_password=s.neo4j_password.get_secret_value(),
            fsync=s.fsync,
        )
        try:
            return cls(
                store,
                factory.text_embedder(s),
                image_embedder=cache(lambda: factory.image_embedder(s)),
                transcriber=cache(lambda: factory.transcriber(s)),
                ingest_options=IngestOptions(
                    max_file_bytes=s.max_file_bytes,
                    chunk_overlap_tokens=s.chunk_overlap_tokens,
                    workers=s.workers,
                    image_dir=s.data_dir / "images",
                ),
            )
        except Exception:
            store.close()
            raise

    # -- ingestion ----------------------------------------------------------------------------
    def ingestor(self, progress: ProgressCallback | None = None) -> Ingestor:
        return Ingestor(
            self.store,
            self.text_embedder,
            RuleEntityExtractor(),
            image_embedder=self._image_embedder if self._image_factory else None,
            transcriber=self._transcriber_factory,
            options=self.ingest_options,
            progress=progress,
        )

    def ingest(
        self,
        paths: Sequence[str],
        acl: Sequence[str] = (),
        progress: ProgressCallback | None = None,
    ) -> IngestReport:
        return self.ingestor(progress).ingest_paths(paths, acl)

    def delete(self, document_id: str) -> None:
        if not any(
            r["id"] == document_id
            for r in self.store.read("document_list", {"principals": [], "admin": True})
        ):
            raise NotFoundError(f"no document with id {document_id!r}; see `kgrag db stats`")
        self.ingestor().delete(document_id)

    def _image_embedder(self) -> ImageEmbedder:
        if self._image is None:
            assert self._image_factory is not None
            embedder = self._image_factory()
            ensure_space(
                self.store,
                EmbeddingSpace(
                    name="image", model=embedder.model_name, dimensions=embedder.dimensions
                ),
            )
            self._image = embedder
        return self._image

    # -- questions ----------------------------------------------------------------------------
    def resolve_entities(self, surfaces: Sequence[str]) -> list[ResolvedEntity]:
        """Resolve mentions against the graph: exact normalised names first, then the entity
        full-text index (accepted only when every word of the mention is in the name)."""
        ids = sorted({normalise_name(s) for s in surfaces if normalise_name(s)})
        found = {r["id"]: r for r in self.store.read("entity_by_ids", {"ids": ids})} if ids else {}
        out = [
            ResolvedEntity(id=i, name=r["name"], score=1.0, surface=r["name"])
            for i, r in found.items()
        ]
        for surface in surfaces:
            words = re.findall(r"[A-Za-z0-9]+", surface)
            if not words or normalise_name(surface) in found or len(words) > 4:
                continue
            for r in self.store.read("fulltext_entities", {"query": " ".join(words), "k": 3}):
                name_words = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", r["name"] or "")}
                if r["id"] not in found and {w.lower() for w in words} <= name_words:
                    found[r["id"]] = r
                    out.append(
                        ResolvedEntity(id=r["id"], name=r["name"], score=0.8, surface=surface)
                    )
                    break
        return out

    def plan(self, question: str) -> tuple[Plan, Any]:
        analysis = analyse(question, self.resolve_entities)
        entity_ids = [e.id for e in analysis.entity_mentions]
        plan = rule_plan(
            question,
            entity_ids=entity_ids,
            want_images="image" in analysis.modalities and self._image_factory is not None,
        )
        return plan, analysis

    def ask(
        self,
        question: str,
        session_id: str | None = None,
        user: str | None = None,
        groups: Sequence[str] = (),
        *,
        on_plan: Callable[[Plan], None] | None = None,
        on_step: StepCallback | None = None,
    ) -> Answer:
        started = time.perf_counter()
        access = AccessContext(user=user, groups=tuple(groups))
        query_id = "q_" + uuid.uuid4().hex[:16]
        plan, analysis = self.plan(question)
        if on_plan is not None:
            on_plan(plan)
        env = ExecutionEnv(
            store=self.store,
            text_embedder=self.text_embedder,
            access=access,
            image_embedder=self._image_embedder if self._image_factory else None,
        )
        outcomes = Executor(env).run(plan, on_step=on_step)
        text_hits, image_hits = _final_evidence(plan, outcomes)
        answer_text, citations = extractive_answer(
            question, text_hits, image_hits, self.text_embedder
        )
        latency_ms = round((time.perf_counter() - started) * 1000, 1)
        trace = TraceWriter(self.store)
        trace.write_query(
            query_id,
            question,
            user=user,
            groups=groups,
            planner="rule",
            session_id=session_id,
            exit_reason="satisfied",
            iterations=1,
            latency_ms=latency_ms,
            query_class=str(analysis.query_class),
        )
        trace.write_plan(query_id, f"{query_id}:plan", plan, outcomes, source="rule")
        by_id = {h.id: h for h in [*text_hits, *image_hits]}
        trace.write_answer(
            query_id,
            f"{query_id}:answer",
            answer_text,
            [(c.marker, by_id[c.node_id]) for c in citations if c.node_id in by_id],
            groundedness=None,
            verdict="extractive",
            mode="extractive",
        )
        return Answer(
            query_id=query_id,
            answer=answer_text,
            citations=tuple(citations),
            exit_reason="satisfied",
            iterations=1,
            mode="extractive",
            latency_ms=latency_ms,
            session_id=session_id,
        )

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> KnowledgeAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _final_evidence(plan: Plan, outcomes: dict[int, StepOutcome]) -> tuple[list[Hit], list[Hit]]:
    """The last successful text step's hits and the last successful image step's hits."""
    text: list[Hit] = []
    images: list[Hit] = []
    for step in plan.plan:
        out = outcomes.get(step.step_id)
        if out is None or out.status != "ok":
            continue
        if step.modality == "image":
            images = [h for h in out.result if h.kind == "image"]
        elif step.type in ("aggregate", "rerank", "filter", "vector_search", "multi_hop"):
            text = [h for h in out.result if h.kind in ("chunk", "segment")]
    return text, images
