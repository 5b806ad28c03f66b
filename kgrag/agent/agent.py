"""KnowledgeAgent: the object a user talks to. Ingestion and questions on one store.

``ask`` answers one question (optionally as a turn of a session, as a user with groups) and
returns an :class:`~kgrag.agent.answer.Answer`; ``stream`` yields the typed events of the same
run as they happen (see :mod:`kgrag.agent.events`); ``search`` returns the evidence without the
answer (:class:`~kgrag.agent.evidence.Evidence`). ``aask``, ``astream``, ``asearch`` and
``aingest`` are the same for asyncio code (:mod:`kgrag.agent.aio`: cancelling the awaiting task
stops the run). The work is done by small modules:
:mod:`~kgrag.agent.memory` (follow-ups), :mod:`~kgrag.agent.loop` (plan, execute, evaluate,
refine), :mod:`~kgrag.agent.synthesis`, :mod:`~kgrag.agent.groundedness`, driven by
:class:`~kgrag.agent.run.QuestionRun`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from kgrag import metrics
from kgrag.agent import aio
from kgrag.agent._request import QuestionRequest
from kgrag.agent.answer import Answer
from kgrag.agent.attachments import DEFAULT_ATTACHMENT_QUESTION, check_attachments
from kgrag.agent.entities import GraphEntityLookup
from kgrag.agent.events import AgentEvent, PlanEvent, StepEvent
from kgrag.agent.evidence import Evidence
from kgrag.agent.limits import QueryLimits
from kgrag.agent.planning import wants_images
from kgrag.agent.providers import Provider, agent_parts
from kgrag.agent.run import AgentConfig, QuestionRun, StepCallback
from kgrag.cancel import CancelToken
from kgrag.cancel import check as check_cancel
from kgrag.config import Settings
from kgrag.core import AccessContext, check_text
from kgrag.core.text import check_question, has_words
from kgrag.errors import ConfigError, NotFoundError
from kgrag.executor.metadata_rerank import RuleBook
from kgrag.graph import open_settings_store
from kgrag.graph.keys import check_key
from kgrag.graph.spaces import EmbeddingSpace, ensure_space
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import EntityExtractor, RuleEntityExtractor
from kgrag.ingest.pipeline import (
    IngestOptions,
    Ingestor,
    IngestReport,
    ProgressCallback,
    Runner,
)
from kgrag.ingest.summaries import Summariser
from kgrag.llm import LLM
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber
from kgrag.modalities.cache import CachedTextEmbedder
from kgrag.planner.analysis import QueryAnalysis, ResolvedEntity, analyse
from kgrag.planner.intent import intent_classifier_for
from kgrag.planner.models import Plan
from kgrag.planner.rule import rule_plan
from kgrag.tools import ToolRegistry, default_registry

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_ATTACHMENT_QUESTION",
    "KnowledgeAgent",
    "Provider",
    "QuestionRequest",
    "StepCallback",
]


class KnowledgeAgent:
    """Ingest documents, images and recordings; answer questions with citations and a trace."""

    def __init__(
        self,
        store: GraphStore,
        text_embedder: TextEmbedder,
        *,
        image_embedder: Provider[ImageEmbedder] | None = None,
        transcriber: Provider[Transcriber] | None = None,
        entity_extractor: Provider[EntityExtractor] = RuleEntityExtractor,
        llm: LLM | None = None,
        ingest_options: IngestOptions | None = None,
        limits: QueryLimits | None = None,
        tools: ToolRegistry | None = None,
        discussed_factor: float = 0.5,
        rerank_rules: RuleBook | None = None,
        name_seeds: bool = False,
    ) -> None:
        """The agent on ``store`` with its models. The image embedder, the transcriber and the
        entity extractor are :class:`~kgrag.agent.providers.Provider`\\ s, called when first
        needed; ``llm`` is any :class:`~kgrag.llm.LLM` (none: offline planning, judging and
        answers). :meth:`open` builds all of them from :class:`~kgrag.config.Settings`."""
        self.store = store
        self.text_embedder = text_embedder
        # questions embed the same texts (the question, evidence sentences) many times
        self._query_embedder = CachedTextEmbedder(text_embedder)
        self._image_factory = image_embedder
        self._transcriber_factory = transcriber
        self._entity_extractor = entity_extractor
        self.ingest_options = ingest_options or IngestOptions()
        self.llm = llm
        self.limits = limits or QueryLimits()
        self.tools = tools if tools is not None else default_registry()
        if not 0.0 < discussed_factor <= 1.0:
            raise ValueError("discussed_factor must be in (0, 1]")
        self.discussed_factor = discussed_factor
        self.rerank_rules = rerank_rules
        self.name_seeds = name_seeds
        """Whether bridge retrieval takes name seeds (``Settings.name_seeds``)."""
        ensure_space(store, EmbeddingSpace.of("text", text_embedder))
        self._image: ImageEmbedder | None = None
        self._image_lock = threading.Lock()
        self.settings: Settings | None = None
        """The settings :meth:`open` read (a Ray job's actors load the models they name)."""
        self.event_subscribers: list[Callable[[object], None]] = []
        """Called with every event of every question (:mod:`kgrag.agent.events`)."""
        self.ingest_subscribers: list[Callable[[IngestReport], None]] = []
        """Called with the report of every ingestion job :meth:`ingest` ran."""

    @classmethod
    def open(cls, settings: Settings | None = None) -> KnowledgeAgent:
        """The agent ``settings`` describe (default: the environment's): its store, models,
        LLM (when configured) and limits (:func:`~kgrag.agent.providers.agent_parts`). The one
        way to build an agent from settings."""
        s = settings or Settings()
        store = open_settings_store(s)
        try:
            parts = agent_parts(s)
            agent = cls(
                store,
                parts.text_embedder,
                image_embedder=parts.image_embedder,
                transcriber=parts.transcriber,
                entity_extractor=parts.entity_extractor,
                llm=parts.llm,
                ingest_options=parts.ingest_options,
                limits=parts.limits,
                discussed_factor=parts.discussed_factor,
                rerank_rules=parts.rerank_rules,
                name_seeds=parts.name_seeds,
            )
            agent.settings = s
            if s.otel_spans:
                from kgrag.ops.otel import subscribe

                subscribe(agent)
            return agent
        except Exception:
            store.close()
            raise

    # -- ingestion ----------------------------------------------------------------------------
    def ingestor(
        self, progress: ProgressCallback | None = None, *, ray: str | bool | None = None
    ) -> Ingestor:
        """An ingestor on this agent's store and models; with ``ray`` (see :meth:`ingest`) its
        parsing and model stages run on Ray."""
        return Ingestor(
            self.store,
            self.text_embedder,
            self._entity_extractor(),
            image_embedder=self._image_embedder if self._image_factory else None,
            transcriber=self._transcriber_factory,
            options=self.ingest_options,
            progress=progress,
            summariser=Summariser(self.text_embedder, self.llm),
            runner=self._ray_runner(ray),
        )

    def _ray_runner(self, ray: str | bool | None) -> Runner | None:
        if ray is None or ray is False:
            return None
        from kgrag.ingest.ray_job import Models, RayRunner

        if self.settings is None:
            raise ConfigError(
                "a Ray job loads its models from settings in every actor: open the agent with "
                "KnowledgeAgent.open(settings)"
            )
        address = ray if isinstance(ray, str) else None
        return RayRunner(Models.from_settings(self.settings), self.ingest_options, address=address)

    def ingest(
        self,
        paths: Sequence[str],
        acl: Sequence[str] = (),
        progress: ProgressCallback | None = None,
        *,
        actor: str | None = None,
        may_change_acl: bool = True,
        ray: str | bool | None = None,
    ) -> IngestReport:
        """Ingest files, folders, globs and JSONL manifests readable by ``acl`` (``user:NAME``,
        ``group:NAME`` or ``*``; public when empty; a bare name raises InvalidAclError).
        ``actor`` is who asks, recorded with every ACL change (``report.acl_changes`` and an
        ``AclChange`` node per change); with ``may_change_acl=False`` a file whose stored
        document has another ACL fails, naming the file and the reason, and nothing of it
        changes.

        ``ray=True`` parses and runs the models on Ray (``pip install 'kgrag[ray]'``): the cluster
        of ``RAY_ADDRESS``, or a local Ray sized to this machine; ``ray="ADDRESS"`` joins that
        cluster (:mod:`kgrag.ingest.ray_job`). The graph is the one the serial job makes."""
        report = self.ingestor(progress, ray=ray).ingest_paths(
            paths, acl, actor=actor, may_change_acl=may_change_acl
        )
        for subscriber in self.ingest_subscribers:
            subscriber(report)
        return report

    async def aingest(
        self,
        paths: Sequence[str],
        acl: Sequence[str] = (),
        progress: ProgressCallback | None = None,
        *,
        actor: str | None = None,
        may_change_acl: bool = True,
    ) -> IngestReport:
        """:meth:`ingest` in a worker thread (``progress`` is called from that thread).
        Ingestion has no cancellation point: a cancelled ``aingest`` waits for the running
        ingestion to finish (every document it wrote is complete) before it is cancelled."""
        return await aio.run_cancellable(
            lambda: self.ingest(paths, acl, progress, actor=actor, may_change_acl=may_change_acl),
            CancelToken(),
        )

    def delete(self, document_id: str) -> None:
        if not any(
            r["id"] == document_id
            for r in self.store.read("document_list", {"principals": [], "admin": True})
        ):
            raise NotFoundError(
                f"no document with id {document_id!r}; `kgrag db documents` lists them"
            )
        self.ingestor().delete(document_id)

    def _image_embedder(self) -> ImageEmbedder:
        with self._image_lock:
            if self._image is None:
                assert self._image_factory is not None
                embedder = self._image_factory()
                ensure_space(self.store, EmbeddingSpace.of("image", embedder))
                self._image = embedder
            return self._image

    # -- questions ----------------------------------------------------------------------------
    def resolve_entities(
        self, surfaces: Sequence[str], access: AccessContext | None = None
    ) -> list[ResolvedEntity]:
        """Resolve mentions against the graph, keeping entities ``access`` may read about
        (default: public documents only)."""
        return GraphEntityLookup(self.store, access or AccessContext()).resolve(surfaces)

    def plan(
        self, question: str, access: AccessContext | None = None
    ) -> tuple[Plan, QueryAnalysis]:
        """The rule plan of a question (the offline default) and its analysis."""
        analysis = analyse(
            question,
            GraphEntityLookup(self.store, access or AccessContext()),
            intent_classifier_for(self._query_embedder),
        )
        plan = rule_plan(
            question,
            entity_ids=[e.id for e in analysis.entity_mentions],
            want_images=wants_images(analysis) and self._image_factory is not None,
            want_recordings=analysis.asks_about_recordings,
            file_names=analysis.file_names,
            image_min_score=self.ingest_options.depicts_threshold,
        )
        return plan, analysis

    def ask(
        self,
        question: str,
        session_id: str | None = None,
        user: str | None = None,
        groups: Sequence[str] = (),
        *,
        admin: bool = False,
        asked_by: str | None = None,
        attachments: Sequence[Path] = (),
        on_plan: Callable[[Plan], None] | None = None,
        on_step: StepCallback | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
    ) -> Answer:
        """Answer ``question`` with citations; every read is filtered by ``user``/``groups``.

        ``attachments`` are image or audio files the question is about (an empty question then
        asks what they say or show): they are checked like ingested files (size limit,
        signature; :class:`~kgrag.agent.attachments.AttachmentError` names a bad one), then
        transcribed (Whisper) or embedded (CLIP) by the plan's steps at query time.
        ``on_plan`` is called with each iteration's plan, ``on_step`` after each step,
        ``on_event`` with every typed event (as :meth:`stream` yields them). ``asked_by``
        (the authenticated principal that asked, when it asks as another ``user``) is stored
        on the Query node and shown by the audit."""

        def emit(event: object) -> None:
            if on_plan is not None and isinstance(event, PlanEvent):
                on_plan(event.plan)
            if on_event is not None:
                on_event(event)  # type: ignore[arg-type]

        request = QuestionRequest(
            question, session_id, user, tuple(groups), admin, asked_by, tuple(attachments)
        )
        return _measured(self._run(request, emit, on_step))

    def stream(
        self,
        question: str,
        session_id: str | None = None,
        user: str | None = None,
        groups: Sequence[str] = (),
        *,
        admin: bool = False,
        asked_by: str | None = None,
        attachments: Sequence[Path] = (),
        cancel: CancelToken | None = None,
    ) -> Iterator[AgentEvent]:
        """The events of answering ``question`` as they happen: ``rewrite`` (follow-ups),
        ``plan``, ``step``..., ``evaluation`` per iteration, then ``answer`` and ``complete``.
        An error of the run is raised from the iterator after the events before it;
        ``attachments`` and ``asked_by`` as for :meth:`ask` (a bad file is raised before any
        event). Once ``cancel`` is set (e.g. the client reading the events went away) the run
        stops at its next event (after a step, a planner or judge call): no further step or
        LLM call is made, and :class:`~kgrag.errors.CancelledError` is raised."""
        events: queue.Queue[Any] = queue.Queue()

        def emit(event: object) -> None:
            events.put(event)
            check_cancel(cancel)

        request = QuestionRequest(
            question, session_id, user, tuple(groups), admin, asked_by, tuple(attachments)
        )
        run = self._run(request, emit)
        done = object()

        def work() -> None:
            try:
                _measured(run)
            except BaseException as e:  # handed to the consumer, raised there
                events.put(e)
            finally:
                events.put(done)

        worker = threading.Thread(target=work, name="kgrag-ask", daemon=True)
        worker.start()
        while True:
            item = events.get()
            if item is done:
                break
            if isinstance(item, BaseException):
                worker.join()
                raise item
            yield item
        worker.join()

    async def aask(
        self,
        question: str,
        session_id: str | None = None,
        user: str | None = None,
        groups: Sequence[str] = (),
        *,
        admin: bool = False,
        asked_by: str | None = None,
        attachments: Sequence[Path] = (),
        on_event: Callable[[AgentEvent], None] | None = None,
    ) -> Answer:
        """:meth:`ask` for asyncio code. The run works in a worker thread (``on_event`` is called
        there); cancelling the awaiting task stops it at its next event (no further step or LLM
        call) and returns once it has stopped: its trace is then either absent (stopped before
        the answer was written) or complete."""
        cancel = CancelToken()

        def emit(event: object) -> None:
            if on_event is not None:
                on_event(event)  # type: ignore[arg-type]
            cancel.check()

        request = QuestionRequest(
            question, session_id, user, tuple(groups), admin, asked_by, tuple(attachments)
        )

        def work() -> Answer:
            return _measured(self._run(request, emit))

        return await aio.run_cancellable(work, cancel)

    async def astream(
        self,
        question: str,
        session_id: str | None = None,
        user: str | None = None,
        groups: Sequence[str] = (),
        *,
        admin: bool = False,
        asked_by: str | None = None,
        attachments: Sequence[Path] = (),
        cancel: CancelToken | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """The events of :meth:`stream` as an async iterator (``async for event in
        agent.astream(...)``). Closing it early (``aclose``, a cancelled consuming task) or
        setting ``cancel`` stops the run at its next event; an error of the run is raised after
        the events before it."""
        token = CancelToken(cancel)

        request = QuestionRequest(
            question, session_id, user, tuple(groups), admin, asked_by, tuple(attachments)
        )

        def start(emit: Callable[[object], None]) -> Callable[[], Answer]:
            run = self._run(request, emit)
            return lambda: _measured(run)

        async for event in aio.stream_events(start, token):
            yield event

    def search(
        self,
        question: str,
        session_id: str | None = None,
        user: str | None = None,
        groups: Sequence[str] = (),
        *,
        admin: bool = False,
        asked_by: str | None = None,
        attachments: Sequence[Path] = (),
        limit: int = 10,
    ) -> Evidence:
        """The evidence for ``question`` without its answer: the same run as :meth:`ask` (the
        same plans, ACL filter and stored trace; ``query_id`` opens it), returning the ranked
        hits it retrieved, at most ``limit``, instead of the answer built from them."""
        request = QuestionRequest(
            question, session_id, user, tuple(groups), admin, asked_by, tuple(attachments)
        )
        return self._search(request, limit, lambda _: None)

    async def asearch(
        self,
        question: str,
        session_id: str | None = None,
        user: str | None = None,
        groups: Sequence[str] = (),
        *,
        admin: bool = False,
        asked_by: str | None = None,
        attachments: Sequence[Path] = (),
        limit: int = 10,
    ) -> Evidence:
        """:meth:`search` for asyncio code, cancelled as :meth:`aask` is."""
        cancel = CancelToken()
        request = QuestionRequest(
            question, session_id, user, tuple(groups), admin, asked_by, tuple(attachments)
        )
        return await aio.run_cancellable(
            lambda: self._search(request, limit, lambda _: cancel.check()), cancel
        )

    def _search(
        self, request: QuestionRequest, limit: int, emit: Callable[[object], None]
    ) -> Evidence:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        run = self._run(request, emit)
        answer = run.run()
        return Evidence(
            query_id=answer.query_id,
            question=answer.resolved_question or run.question,
            exit_reason=answer.exit_reason,
            hits=run.evidence[:limit],
        )

    def _run(
        self,
        request: QuestionRequest,
        emit: Callable[[object], None],
        on_step: StepCallback | None = None,
    ) -> QuestionRun:
        # text that is not Unicode (a lone surrogate) or holds a control character (a NUL no
        # store can hold) is refused before any model or query; whether it has words, below
        check_question(request.question, words=False)
        if request.user is not None:
            check_text("user name", request.user)
        for group in request.groups:
            check_text("group name", group)
        if request.session_id is not None:
            # it becomes a Session node's id: refused here, not by a crash
            check_key("session id", request.session_id)
        checked = check_attachments(
            request.attachments,
            self.ingest_options.max_file_bytes,
            max_media_seconds=self.ingest_options.max_media_seconds,
        )
        question = request.question
        if checked and not has_words(question):
            question = DEFAULT_ATTACHMENT_QUESTION
        # "", "   " or "???" asks nothing: refused, not answered with the nearest sentence
        check_question(question)
        config = AgentConfig(
            store=self.store,
            text_embedder=self._query_embedder,
            image_embedder=self._image_embedder if self._image_factory else None,
            llm=self.llm,
            limits=self.limits,
            tools=self.tools,
            transcriber=self._transcriber_factory,
            discussed_factor=self.discussed_factor,
            rerank_rules=self.rerank_rules,
            name_seeds=self.name_seeds,
            depicts_threshold=self.ingest_options.depicts_threshold,
        )

        def emit_measured(event: object) -> None:
            if isinstance(event, StepEvent):
                metrics.observe_step(event.type, event.status, event.duration_ms)
            for subscriber in self.event_subscribers:
                subscriber(event)
            emit(event)

        return QuestionRun(
            config,
            question,
            session_id=request.session_id,
            access=request.access,
            asked_by=request.asked_by,
            emit=emit_measured,
            on_step=on_step,
            attachments=checked,
        )

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> KnowledgeAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _measured(run: QuestionRun) -> Answer:
    """Run a question, counting its answer (or its failure) in :mod:`kgrag.metrics`."""
    started = time.perf_counter()
    try:
        answer = run.run()
    except Exception as e:
        metrics.observe_ask_failure(e)
        raise
    metrics.observe_answer(answer, time.perf_counter() - started)
    return answer
