"""One question, end to end: conversation memory, the retrieval loop, synthesis, groundedness,
the trace in the graph, and the typed events of each stage. :class:`QuestionRun` is what
``KnowledgeAgent.ask`` and ``KnowledgeAgent.stream`` drive."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from kgrag.agent.answer import Answer, Citation, Decision
from kgrag.agent.attachments import DEFAULT_ATTACHMENT_QUESTION, has_own_terms
from kgrag.agent.entities import EntityResolver
from kgrag.agent.evaluate import Judge, LlmJudge, OfflineJudge
from kgrag.agent.events import AnswerEvent, CompleteEvent, RewriteEvent, StepEvent
from kgrag.agent.groundedness import (
    RESYNTHESIS_THRESHOLD,
    GroundednessReport,
    check,
    claim_sentences,
    remove_unsupported,
)
from kgrag.agent.limits import QueryLimits
from kgrag.agent.loop import DocumentAnswer, LoopResult, RetrievalLoop
from kgrag.agent.memory import Resolution, SessionMemory, citation_hit, reformat_answer
from kgrag.agent.planning import AgentPlanner, Demotion, merge_iterations
from kgrag.agent.support import ABSTENTION, Support, assess, is_not_found
from kgrag.agent.synthesis import (
    answer_body,
    citation_for,
    extractive_answer,
    llm_answer,
    renumber,
    source_label,
)
from kgrag.agent.text import strip_citations, terms
from kgrag.core import AccessContext, Hit
from kgrag.executor.attachments import Attachment, AttachmentInputs
from kgrag.executor.base import ExecutionEnv, StepOutcome
from kgrag.executor.document_handlers import answer_text
from kgrag.executor.metadata_rerank import RuleBook
from kgrag.executor.scheduler import Executor
from kgrag.executor.trace import TraceWriter
from kgrag.graph.store import GraphStore
from kgrag.llm import BudgetExceededError, CostMeter, LLMClient, LLMError
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber
from kgrag.modalities.clip import DEFAULT_DEPICTS_THRESHOLD
from kgrag.planner.analysis import QueryAnalysis, analyse, named_spans, resolve_mentions
from kgrag.planner.intent import intent_classifier_for
from kgrag.planner.models import Plan, Step
from kgrag.tools import ToolContext, ToolRegistry

log = logging.getLogger(__name__)

DOCUMENT_ANSWER_LIMIT = 10
"""Documents shown (and cited) in the answer of a listing or metadata search."""

Emit = Callable[[object], None]
StepCallback = Callable[[Step, StepOutcome], None]


@dataclass(frozen=True)
class AgentConfig:
    """What a question run needs from the agent."""

    store: GraphStore
    text_embedder: TextEmbedder
    image_embedder: Callable[[], ImageEmbedder] | None
    llm: LLMClient | None
    limits: QueryLimits
    tools: ToolRegistry
    transcriber: Callable[[], Transcriber] | None = None
    """Whisper for recordings attached to a question (loaded on first use)."""
    discussed_factor: float = 0.5
    """Score factor of sources already cited earlier in the session (1.0: no demotion)."""
    rerank_rules: RuleBook | None = None
    depicts_threshold: float = DEFAULT_DEPICTS_THRESHOLD
    """CLIP similarity at which an image shows a text (calibrated for the image model): image
    search hits below it are not taken as pictures of what the question says."""
    """Metadata-aware rerank rule sets a ``rerank`` step may name (Settings.rerank_rules)."""


@dataclass
class _Synthesis:
    text: str
    citations: list[Citation]
    mode: str
    report: GroundednessReport
    support: Support | None = None
    closest: tuple[Citation, ...] = ()
    not_found: bool = False


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
        self.emit = emit
        self.on_step = on_step
        self.query_id = "q_" + uuid.uuid4().hex[:16]
        self.meter = CostMeter(config.limits.llm_budget_usd, config.limits.llm_max_tokens)
        self.llm = config.llm.with_meter(self.meter) if config.llm is not None else None
        self.resolver = EntityResolver(config.store, access)
        self.started = time.perf_counter()
        self.evidence: tuple[Hit, ...] = ()
        """The evidence the answer was built from, best first (``KnowledgeAgent.search``): the
        fused text and image hits of every iteration, a document tool's documents, or the
        sources an earlier answer cited (a reformat request). Set once the run has retrieved."""

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
        trace = TraceWriter(self.config.store)
        self._write_query(trace, resolution, turn, "memory", "satisfied", 0)
        hits = {c.node_id: citation_hit(c) for c in cited}
        self.evidence = tuple(hits.values())
        trace.write_answer(
            self.query_id,
            f"{self.query_id}:answer",
            text,
            [(c.marker, hits[c.node_id]) for c in cited],
            groundedness=None,
            verdict="reformatted",
            mode=mode,
        )
        self._write_context(resolution, [], [], None, text)
        return self._finish(
            text, cited, mode, "satisfied", 0, None, "reformatted", resolution, "memory"
        )

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
        synthesis = self._synthesise(resolution, result, names, modalities)
        exit_reason = result.exit_reason
        if self.meter.exceeded and exit_reason != "satisfied":
            exit_reason = "budget_exceeded"
        if synthesis.not_found and exit_reason != "budget_exceeded":
            # an abstention says not_found; a question its budget stopped says that instead
            exit_reason = "not_found"
        planner_source = result.iterations[0].planned.source if result.iterations else "rule"
        decisions = _decisions(result)
        trace = TraceWriter(cfg.store)
        self._write_query(
            trace,
            resolution,
            turn,
            planner_source,
            exit_reason,
            len(result.iterations),
            query_class=str(analysis.query_class),
            intent=analysis.intent.describe() if analysis.intent else None,
            decisions=decisions,
        )
        plan, outcomes = merge_iterations(
            [
                (
                    it.planned.plan,
                    it.outcomes,
                    f"iteration {it.number} ({it.why}; query: {it.query})",
                )
                for it in result.iterations
            ]
        )
        first = result.iterations[0].planned
        trace.write_plan(
            self.query_id,
            f"{self.query_id}:plan",
            plan,
            outcomes,
            source=first.source,
            fallback_reason=first.fallback_reason,
        )
        documents = list(result.documents.hits) if result.documents else []
        by_id = {h.id: h for h in [*result.text, *result.images, *documents]}
        trace.write_answer(
            self.query_id,
            f"{self.query_id}:answer",
            synthesis.text,
            [(c.marker, by_id[c.node_id]) for c in synthesis.citations if c.node_id in by_id],
            groundedness=synthesis.report.score,
            verdict=synthesis.report.verdict,
            mode=synthesis.mode,
        )
        self._write_context(
            resolution,
            [e.id for e in analysis.entity_mentions],
            names,
            synthesis.report.score,
            synthesis.text,
        )
        return self._finish(
            synthesis.text,
            synthesis.citations,
            synthesis.mode,
            exit_reason,
            len(result.iterations),
            synthesis.report.score,
            synthesis.report.verdict,
            resolution,
            planner_source,
            decisions,
            closest=synthesis.closest,
            support=synthesis.support,
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

        return Executor(env, step_timeout_s=cfg.limits.step_timeout_s).run(plan, on_step=on_step)

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

    def _llm_if_budget(self) -> LLMClient | None:
        return self.llm if self.llm is not None and not self.meter.exceeded else None

    def _synthesise(
        self,
        resolution: Resolution,
        result: LoopResult,
        entity_names: Sequence[str],
        modalities: frozenset[str],
    ) -> _Synthesis:
        cfg = self.config
        if result.documents is not None:
            return _document_synthesis(result.documents, cfg.text_embedder)
        evidence, images = result.text, result.images
        cited = _cited_text(evidence, images)
        if self._llm_if_budget() is not None and (evidence or images):
            gate = _evidence_support(
                resolution.question, evidence, images, result.depicting, heard=result.heard
            )
            if not gate.supported:
                # the offline support test holds with an LLM too: evidence that lacks what the
                # question asks about is not handed to the model to answer from
                log.info("the evidence does not support an answer; abstaining before the LLM")
                return abstention(evidence, "extractive", gate)
            try:
                found = self._llm_synthesis(resolution, evidence, images)
            except BudgetExceededError:
                log.info("LLM budget exceeded before synthesis; answering extractively")
            except LLMError as e:
                log.warning("LLM synthesis failed, answering extractively: %s", e)
            else:
                if found is not None:
                    return found
                log.warning("the LLM answer had no supported, cited sentence; answering offline")
        text, citations = extractive_answer(
            resolution.question,
            evidence,
            images,
            cfg.text_embedder,
            entity_names=entity_names,
            prefer_kinds=("segment",) if "audio" in modalities else (),
        )
        support = _support(
            resolution.question,
            citations,
            [*evidence, *images],
            result.depicting,
            heard=result.heard,
        )
        if not support.supported:
            return abstention(evidence, "extractive", support)
        report = check(text, cited(citations), cfg.text_embedder)
        return _Synthesis(text, citations, "extractive", report, support=support)

    def _llm_synthesis(
        self, resolution: Resolution, evidence: Sequence[Hit], images: Sequence[Hit]
    ) -> _Synthesis | None:
        """The LLM answer, checked; synthesised again (once) with the judge's feedback when
        its groundedness is below the threshold; unsupported sentences then removed."""
        client = self._llm_if_budget()
        assert client is not None
        cited = _cited_text(evidence, images)
        embedder = self.config.text_embedder
        history = None
        previous = resolution.previous
        if previous is not None and resolution.method != "none":
            history = f"User: {previous.standalone}\nAssistant: {(previous.answer or '')[:600]}"
        question = resolution.question
        text, citations, _ = llm_answer(client, question, evidence, images, history=history)
        if is_not_found(text):
            return abstention(evidence, "llm")
        report = check(text, cited(citations), embedder, llm=self._llm_if_budget())
        if report.score < RESYNTHESIS_THRESHOLD and self._llm_if_budget() is not None:
            feedback = "these sentences are not supported by the evidence they cite: " + " | ".join(
                s.sentence for s in report.unsupported
            )
            text, citations, _ = llm_answer(
                client, question, evidence, images, feedback=feedback, history=history
            )
            if is_not_found(text):
                return abstention(evidence, "llm")
            report = check(text, cited(citations), embedder, llm=self._llm_if_budget())
        if report.unsupported:
            by_id = {h.id: h for h in [*evidence, *images]}
            kept = remove_unsupported(answer_body(text), report)
            text, citations = renumber(kept, [by_id[c.node_id] for c in citations])
        if not text.strip() or not citations:
            return None
        return _Synthesis(text, citations, "llm", report)

    # ----------------------------------------------------------------------------- trace
    def _write_query(
        self,
        trace: TraceWriter,
        resolution: Resolution,
        turn: int,
        planner: str,
        exit_reason: str,
        iterations: int,
        query_class: str | None = None,
        intent: str | None = None,
        decisions: Sequence[Decision] = (),
    ) -> None:
        trace.write_query(
            self.query_id,
            self.question,
            user=self.access.user,
            groups=self.access.groups,
            asked_by=self.asked_by,
            planner=planner,
            session_id=self.session_id,
            turn=turn,
            exit_reason=exit_reason,
            iterations=iterations,
            latency_ms=self._latency(),
            cost=round(self.meter.spent_usd, 8),
            query_class=query_class,
            intent=intent,
            decisions=decisions,
        )

    def _write_context(
        self,
        resolution: Resolution,
        entity_ids: Sequence[str],
        entity_names: Sequence[str],
        groundedness: float | None,
        answer_text: str,
    ) -> None:
        self.config.store.write(
            "query_set_context",
            {
                "id": self.query_id,
                "resolved_text": resolution.question,
                "entity_ids": list(entity_ids),
                "entity_names": list(entity_names),
                "groundedness": groundedness,
                "answer_entities": self._answer_entities(answer_text),
                "reuses": (
                    resolution.previous.query_id
                    if resolution.reformat and resolution.previous
                    else None
                ),
            },
        )

    def _answer_entities(self, text: str, limit: int = 3) -> list[str]:
        """Names of readable entities the answer's sentences name (for later follow-ups)."""
        claims = " ".join(strip_citations(c) for c in claim_sentences(text))
        if not claims:
            return []
        spans = named_spans(claims)
        return [e.name for e in self.resolver.resolve(spans)][:limit] if spans else []

    def _latency(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 1)

    def _finish(
        self,
        text: str,
        citations: Sequence[Citation],
        mode: str,
        exit_reason: str,
        iterations: int,
        groundedness: float | None,
        verdict: str,
        resolution: Resolution,
        planner: str,
        decisions: Sequence[Decision] = (),
        *,
        closest: Sequence[Citation] = (),
        support: Support | None = None,
    ) -> Answer:
        answer = Answer(
            query_id=self.query_id,
            answer=text,
            citations=tuple(citations),
            exit_reason=exit_reason,
            iterations=iterations,
            mode="llm" if mode == "llm" else "extractive",
            cost=round(self.meter.spent_usd, 8),
            latency_ms=self._latency(),
            session_id=self.session_id,
            groundedness=groundedness,
            verdict=verdict,
            resolved_question=resolution.question,
            planner=planner,
            decisions=tuple(decisions),
            closest=tuple(closest),
            support=support,
        )
        self.emit(AnswerEvent(query_id=self.query_id, answer=answer))
        self.emit(
            CompleteEvent(
                query_id=self.query_id,
                exit_reason=exit_reason,
                iterations=iterations,
                cost=answer.cost,
                latency_ms=answer.latency_ms,
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


def _document_synthesis(found: DocumentAnswer, embedder: TextEmbedder) -> _Synthesis:
    """The answer of a document tool (listing, summary, metadata search, comparison): its own
    extractive text, citing documents (chunks, for a comparison's evidence)."""
    shown = list(found.hits[:DOCUMENT_ANSWER_LIMIT])
    body = answer_text(found.step_type, found.hits, limit=DOCUMENT_ANSWER_LIMIT)
    citations = [citation_for(n, hit) for n, hit in enumerate(shown, start=1)]
    lines = [body, "", "Sources:"] if citations else [body]
    lines += [f"[{c.marker}] {source_label(c)}" for c in citations]
    text = "\n".join(lines)
    report = check(text, {c.marker: c.excerpt or c.title or "" for c in citations}, embedder)
    return _Synthesis(text, citations, "extractive", report)


def _cited_text(
    evidence: Sequence[Hit], images: Sequence[Hit]
) -> Callable[[Sequence[Citation]], dict[int, str]]:
    by_id = {h.id: h for h in [*evidence, *images]}

    def cited(citations: Sequence[Citation]) -> dict[int, str]:
        out: dict[int, str] = {}
        for c in citations:
            hit = by_id.get(c.node_id)
            if hit is not None and hit.text:
                out[c.marker] = hit.text
        return out

    return cited


#: Documents an abstention lists as closest (not answering).
CLOSEST_DOCUMENTS = 3


def _asked(question: str) -> str:
    """What the asker asked: without the question the agent itself supplies when only files
    were given (its words are not the asker's, and no passage need contain them)."""
    return " ".join(question.replace(DEFAULT_ATTACHMENT_QUESTION, " ").split())


def _support(
    question: str,
    citations: Sequence[Citation],
    hits: Sequence[Hit],
    depicting: Collection[str] = (),
    *,
    heard: bool = False,
) -> Support:
    """The support test of an extractive answer over the passages it cites. An answer citing
    an image found as showing what the question asks about (``depicting``: it passed the CLIP
    depicts threshold or depicts a named entity, the image support test) is supported, and so
    is a question with no content term (an attachment alone). An image only near the evidence
    passages supports nothing the passages do not."""
    question = _asked(question)
    by_id = {h.id: h for h in hits}
    cited = [by_id[c.node_id] for c in citations if c.node_id in by_id]
    text = [h for h in hits if h.kind != "image"]
    found = assess(question, [h for h in cited if h.kind != "image"], text, heard=heard)
    if any(h.kind == "image" and h.id in depicting for h in cited) or (
        cited and not terms(question)
    ):
        return found.model_copy(update={"supported": True})
    return found


def _evidence_support(
    question: str,
    evidence: Sequence[Hit],
    images: Sequence[Hit],
    depicting: Collection[str] = (),
    *,
    heard: bool = False,
) -> Support:
    """The support test of the evidence alone, before an LLM answers from it: the same rule as
    an extractive answer's (:func:`_support`), with every passage counted as citable."""
    question = _asked(question)
    text = [h for h in evidence if h.kind != "image"]
    found = assess(question, text, text, heard=heard)
    shown = any(h.kind == "image" and h.id in depicting for h in [*evidence, *images])
    if shown or not terms(question):
        return found.model_copy(update={"supported": True})
    return found


def abstention(evidence: Sequence[Hit], mode: str, support: Support | None = None) -> _Synthesis:
    """The plain "not found" answer: no citation, the closest documents listed apart."""
    closest: list[Citation] = []
    seen: set[str] = set()
    for hit in evidence:
        key = hit.document_id or hit.id
        label = hit.title or hit.uri or key  # two passages of one title read as one document
        if key in seen or label in seen:
            continue
        seen.update((key, label))
        closest.append(citation_for(len(closest) + 1, hit))
        if len(closest) == CLOSEST_DOCUMENTS:
            break
    lines = [ABSTENTION]
    if closest:
        lines += ["", "Closest, not answering:"]
        lines += [f"- {source_label(c).removeprefix('(Source: ').rstrip(')')}" for c in closest]
    report = GroundednessReport(score=1.0, verdict="no_claims", sentences=())
    return _Synthesis(
        "\n".join(lines), [], mode, report, support=support, closest=tuple(closest), not_found=True
    )
