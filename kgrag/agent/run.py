"""One question, end to end: conversation memory, the retrieval loop, synthesis
(:mod:`~kgrag.agent.answering`) and the typed events of each stage, which the trace
(:class:`~kgrag.agent._trace_recorder.TraceRecorder`) and the caller subscribe to.
:class:`QuestionRun` is what ``KnowledgeAgent.ask`` and ``KnowledgeAgent.stream`` drive."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kgrag.agent._trace_recorder import QueryFacts, TraceRecorder
from kgrag.agent.anchors import anchored
from kgrag.agent.answer import Answer, Citation, Decision
from kgrag.agent.answering import Composer, Synthesis
from kgrag.agent.attachments import has_own_terms
from kgrag.agent.entities import GraphEntityLookup
from kgrag.agent.evaluate import Judge, LlmJudge, OfflineJudge
from kgrag.agent.events import AnswerEvent, CompleteEvent, RewriteEvent, StepEvent
from kgrag.agent.limits import QueryLimits
from kgrag.agent.loop import LoopResult, RetrievalLoop
from kgrag.agent.memory import Resolution, SessionMemory, citation_hit, reformat_answer
from kgrag.agent.planning import AgentPlanner, Demotion
from kgrag.core import AccessContext, Hit
from kgrag.executor.attachments import Attachment, AttachmentInputs
from kgrag.executor.base import ExecutionEnv, StepOutcome
from kgrag.executor.metadata_rerank import RuleBook
from kgrag.executor.scheduler import Executor
from kgrag.graph.store import GraphStore
from kgrag.llm import LLM, CostMeter
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber
from kgrag.modalities.clip import DEFAULT_DEPICTS_THRESHOLD
from kgrag.planner.analysis import QueryAnalysis, analyse, resolve_mentions
from kgrag.planner.intent import intent_classifier_for
from kgrag.planner.models import Plan, Step
from kgrag.tools import ToolContext, ToolRegistry

log = logging.getLogger(__name__)

Emit = Callable[[object], None]
StepCallback = Callable[[Step, StepOutcome], None]


@dataclass(frozen=True)
class AgentConfig:
    """What a question run needs from the agent."""

    store: GraphStore
    text_embedder: TextEmbedder
    image_embedder: Callable[[], ImageEmbedder] | None
    llm: LLM | None
    limits: QueryLimits
    tools: ToolRegistry
    transcriber: Callable[[], Transcriber] | None = None
    """Whisper for recordings attached to a question (loaded on first use)."""
    discussed_factor: float = 0.5
    """Score factor of sources already cited earlier in the session (1.0: no demotion)."""
    rerank_rules: RuleBook | None = None
    """Metadata-aware rerank rule sets a ``rerank`` step may name (Settings.rerank_rules)."""
    depicts_threshold: float = DEFAULT_DEPICTS_THRESHOLD
    """CLIP similarity at which an image shows a text (calibrated for the image model): image
    search hits below it are not taken as pictures of what the question says."""
    name_seeds: bool = False
    """Whether bridge retrieval takes name seeds (Settings.name_seeds)."""


@dataclass(frozen=True)
class Finished:
    """How a run ended: its answer's synthesis and how the loop reached it."""

    synthesis: Synthesis
    resolution: Resolution
    planner: str
    exit_reason: str
    iterations: int = 0
    decisions: tuple[Decision, ...] = ()


class QuestionRun:
    def __init__(
        self,
        config: AgentConfig,
        question: str,
        *,
        session_id: str | None,
        access: AccessContext,
        emit: Emit,
        on_step: StepCallback | None = None,
        attachments: Sequence[Attachment] = (),
        asked_by: str | None = None,
    ) -> None:
        self.config = config
        self.question = question
        self.attachments = tuple(attachments)
        self.session_id = session_id
        self.access = access
        self.asked_by = asked_by
        self.on_step = on_step
        self.query_id = "q_" + uuid.uuid4().hex[:16]
        self.meter = CostMeter(config.limits.llm_budget_usd, config.limits.llm_max_tokens)
        self.llm = config.llm.with_meter(self.meter) if config.llm is not None else None
        self.resolver = GraphEntityLookup(config.store, access)
        self.recorder = TraceRecorder(
            config.store,
            self.resolver,
            question=question,
            access=access,
            session_id=session_id,
            asked_by=asked_by,
        )
        self._subscribers: tuple[Emit, ...] = (self.recorder, emit)
        self.started = time.perf_counter()
        self.evidence: tuple[Hit, ...] = ()
        """The evidence the answer was built from, best first (``KnowledgeAgent.search``): the
        fused text and image hits of every iteration, a document tool's documents, or the
        sources an earlier answer cited (a reformat request). Set once the run has retrieved."""

    def emit(self, event: object) -> None:
        """Publish ``event`` to the run's subscribers: the trace first, then the caller."""
        for subscriber in self._subscribers:
            subscriber(event)

    # -------------------------------------------------------------------------------- run
    def run(self) -> Answer:
        memory = SessionMemory(self.config.store, self.access, llm=self.llm)
        self._memory = memory
        resolution = Resolution(original=self.question, question=self.question)
        turn = 0
        if self.session_id is not None:
            resolution = memory.resolve(
                self.question,
                memory.history(self.session_id),
                names_entity=lambda q: bool(resolve_mentions(q, self.resolver)),
            )
            turn = memory.next_turn(self.session_id)
            if resolution.question != self.question or resolution.reformat:
                self.emit(
                    RewriteEvent(
                        query_id=self.query_id,
                        original=self.question,
                        rewritten=resolution.question,
                        reformat=resolution.reformat is not None,
                        method=resolution.method,
                    )
                )
        if self.attachments:  # a question about new files is never a reformat request
            resolution = resolution.model_copy(update={"reformat": None})
        if resolution.reformat is not None and resolution.previous is not None:
            citations = memory.previous_citations(resolution.previous)
            if citations is not None:
                return self._reformat(resolution, citations, turn)
        return self._retrieve_and_answer(resolution, turn)

    def _reformat(self, resolution: Resolution, citations: list[Citation], turn: int) -> Answer:
        assert resolution.previous is not None and resolution.reformat is not None
        text, cited, _ = reformat_answer(
            resolution.previous, citations, resolution.reformat, llm=self._llm_if_budget()
        )
        mode = "llm" if self.meter.calls else "extractive"
        self.evidence = tuple({c.node_id: citation_hit(c) for c in cited}.values())
        self.recorder.note_facts(QueryFacts.of(resolution, turn))
        synthesis = Synthesis(text, tuple(cited), mode, None, "reformatted")
        return self._finish(Finished(synthesis, resolution, "memory", "satisfied"))

    def _retrieve_and_answer(self, resolution: Resolution, turn: int) -> Answer:
        cfg = self.config
        analysis = analyse(
            resolution.question, self.resolver, intent_classifier_for(cfg.text_embedder)
        )
        planner = AgentPlanner(
            self.llm,
            tools={t.name: t.description for t in cfg.tools.available(llm=self.llm is not None)},
            images=cfg.image_embedder is not None,
            attachments=self.attachments,
            demotion=self._demotion(analysis),
            rerank_rules=cfg.rerank_rules.default if cfg.rerank_rules else None,
            max_steps=cfg.limits.max_plan_steps,
            image_min_score=cfg.depicts_threshold,
        )
        judge: Judge = LlmJudge(self.llm) if self.llm is not None else OfflineJudge()
        loop = RetrievalLoop(
            planner,
            self._execute,
            judge,
            resolve=lambda q: resolve_mentions(q, self.resolver),
            budget_exceeded=lambda: self.meter.exceeded,
            max_iterations=self._max_iterations(analysis.text),
            max_steps=cfg.limits.max_plan_steps,
        )
        result = loop.run(self.query_id, analysis, self.emit)
        # a passage naming what the question names, when no evidence passage does
        result.text = anchored(
            result.question or resolution.question, result.text, result.iterations
        )
        self.evidence = (
            result.documents.hits
            if result.documents is not None
            else (*result.text, *result.images)
        )
        names = [e.name for e in analysis.entity_mentions]
        modalities = analysis.modalities
        if result.question and result.question != resolution.question:
            # what attached recordings said is part of the question from here on
            resolution = resolution.model_copy(update={"question": result.question})
            modalities = modalities - {"audio"}
        synthesis = Composer(cfg.text_embedder, self._llm_if_budget).compose(
            resolution, result, names, modalities, analysis.file_names
        )
        exit_reason = result.exit_reason
        if self.meter.exceeded and exit_reason != "satisfied":
            exit_reason = "budget_exceeded"
        if synthesis.not_found and exit_reason != "budget_exceeded":
            # an abstention says not_found; a question its budget stopped says that instead
            exit_reason = "not_found"
        self.recorder.note_facts(
            QueryFacts.of(
                resolution,
                turn,
                query_class=str(analysis.query_class),
                intent=analysis.intent.describe() if analysis.intent else None,
                entity_ids=tuple(e.id for e in analysis.entity_mentions),
                entity_names=tuple(names),
            )
        )
        return self._finish(
            Finished(
                synthesis,
                resolution,
                result.iterations[0].planned.source if result.iterations else "rule",
                exit_reason,
                len(result.iterations),
                tuple(_decisions(result)),
            )
        )

    # --------------------------------------------------------------------------- stages
    def _execute(self, plan: Plan, iteration: int) -> dict[int, StepOutcome]:
        cfg = self.config
        tools = cfg.tools.bind(ToolContext(store=cfg.store, access=self.access, llm=self.llm))
        env = ExecutionEnv(
            store=cfg.store,
            text_embedder=cfg.text_embedder,
            access=self.access,
            image_embedder=cfg.image_embedder,
            tools=tools,
            llm=self._llm_call if self.llm is not None else None,
            rerank_rules=cfg.rerank_rules,
            name_seeds=cfg.name_seeds,
            attachments=AttachmentInputs(self.attachments, cfg.transcriber)
            if self.attachments
            else None,
        )

        def on_step(step: Step, outcome: StepOutcome) -> None:
            self.emit(
                StepEvent(
                    query_id=self.query_id,
                    iteration=iteration,
                    step_id=step.step_id,
                    type=step.type,
                    modality=step.modality,
                    status=outcome.status,
                    count=outcome.count,
                    duration_ms=outcome.duration_ms,
                    error=outcome.error,
                    top=tuple(outcome.result[:5]),
                )
            )
            if self.on_step is not None:
                self.on_step(step, outcome)

        outcomes = Executor(env, step_timeout_s=cfg.limits.step_timeout_s).run(
            plan, on_step=on_step
        )
        self.recorder.note_outcomes(iteration, outcomes)
        return outcomes

    def _max_iterations(self, question: str) -> int:
        """One iteration when the question is only an image: no words to refine a search with
        (a recording's transcript is such words, so audio questions may refine)."""
        if (
            self.attachments
            and all(a.modality == "image" for a in self.attachments)
            and not has_own_terms(question)
        ):
            return 1
        return self.config.limits.max_iterations

    def _demotion(self, analysis: QueryAnalysis) -> Demotion | None:
        """Sources cited earlier in the session, less those the question names again."""
        if self.session_id is None or self.config.discussed_factor >= 1.0:
            return None
        discussed = self._memory.discussed(self.session_id)
        if not discussed:
            return None
        entity_ids = [e.id for e in analysis.entity_mentions]
        named = [d.document_id for d in discussed if d.named_in(analysis.text, entity_ids)]
        return Demotion(
            document_ids=tuple(d.document_id for d in discussed if d.document_id not in named),
            named_again=tuple(named),
            factor=self.config.discussed_factor,
        )

    def _llm_call(self, prompt: str, evidence: Sequence[Hit], max_tokens: int) -> str:
        from kgrag.llm import ChatMessage

        assert self.llm is not None
        context = "\n".join(f"- {(h.text or '')[:800]}" for h in evidence[:10])
        content = f"{prompt}\n\nContext:\n{context}" if context else prompt
        return self.llm.chat(
            [ChatMessage(role="user", content=content)], max_tokens=max_tokens
        ).text

    def _llm_if_budget(self) -> LLM | None:
        return self.llm if self.llm is not None and not self.meter.exceeded else None

    def _latency(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 1)

    def _finish(self, done: Finished) -> Answer:
        found = done.synthesis
        answer = Answer(
            query_id=self.query_id,
            answer=found.text,
            citations=found.citations,
            exit_reason=done.exit_reason,
            iterations=done.iterations,
            mode="llm" if found.mode == "llm" else "extractive",
            cost=round(self.meter.spent_usd, 8),
            latency_ms=self._latency(),
            session_id=self.session_id,
            groundedness=found.groundedness,
            verdict=found.verdict,
            resolved_question=done.resolution.question,
            planner=done.planner,
            decisions=done.decisions,
            closest=found.closest,
            support=found.support,
        )
        self.emit(AnswerEvent(query_id=self.query_id, answer=answer))
        self.emit(
            CompleteEvent(
                query_id=self.query_id,
                exit_reason=done.exit_reason,
                iterations=done.iterations,
                cost=answer.cost,
                # the whole run: the trace, written on the answer event, included
                latency_ms=self._latency(),
            )
        )
        return answer


def _decisions(result: LoopResult) -> list[Decision]:
    """The judge's decision of each judged iteration, in order."""
    return [
        Decision(
            iteration=it.number,
            query=it.query,
            decision=it.judgement.decision,
            reason=it.judgement.reason,
            next_query=it.judgement.next_query,
            coverage=round(it.judgement.coverage, 4),
            judge=it.judgement.judge,
        )
        for it in result.iterations
        if it.judgement is not None
    ]
