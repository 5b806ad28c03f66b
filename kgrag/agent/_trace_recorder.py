"""The trace of one question in the graph, written by a subscriber of the run's events.

:class:`TraceRecorder` is the first subscriber of a :class:`~kgrag.agent.run.QuestionRun`'s
events: it keeps each iteration's plan (``plan``) and why it was searched (the ``evaluation``
before it), and on ``answer`` writes the Query, the merged Plan with its Steps, the Answer with
its citations and the query's context, in one go. A question stopped before its answer leaves
no ``Query`` node; the caller's subscribers see the ``answer`` only after its trace is written.
What no public event carries (the full step outcomes with their Cypher, the query's analysis)
the run notes on the recorder directly."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kgrag.agent._text import strip_citations
from kgrag.agent.answer import Answer
from kgrag.agent.entities import GraphEntityLookup
from kgrag.agent.events import AnswerEvent, EvaluationEvent, PlanEvent
from kgrag.agent.groundedness import claim_sentences
from kgrag.agent.memory import Resolution, citation_hit
from kgrag.agent.planning import merge_iterations
from kgrag.core import AccessContext
from kgrag.executor.base import StepOutcome
from kgrag.executor.trace import TraceWriter
from kgrag.graph.store import GraphStore
from kgrag.planner.analysis import named_spans


@dataclass(frozen=True)
class QueryFacts:
    """What the run learnt of the question that no event carries."""

    turn: int
    reuses: str | None = None
    """The query whose answer a reformat request reuses."""
    query_class: str | None = None
    intent: str | None = None
    entity_ids: tuple[str, ...] = ()
    entity_names: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        resolution: Resolution,
        turn: int,
        *,
        query_class: str | None = None,
        intent: str | None = None,
        entity_ids: tuple[str, ...] = (),
        entity_names: tuple[str, ...] = (),
    ) -> QueryFacts:
        reuses = (
            resolution.previous.query_id if resolution.reformat and resolution.previous else None
        )
        return cls(turn, reuses, query_class, intent, entity_ids, entity_names)


@dataclass
class _Iteration:
    event: PlanEvent
    why: str
    outcomes: Mapping[int, StepOutcome]


class TraceRecorder:
    """Subscribes to one run's events (call it with each) and writes its trace on ``answer``."""

    def __init__(
        self,
        store: GraphStore,
        resolver: GraphEntityLookup,
        *,
        question: str,
        access: AccessContext,
        session_id: str | None,
        asked_by: str | None,
    ) -> None:
        self.store = store
        self.resolver = resolver
        self.question = question
        self.access = access
        self.session_id = session_id
        self.asked_by = asked_by
        self.facts = QueryFacts(turn=0)
        self._iterations: list[_Iteration] = []
        self._why = "the question"

    # ------------------------------------------------------------------------ notes
    def note_facts(self, facts: QueryFacts) -> None:
        self.facts = facts

    def note_outcomes(self, iteration: int, outcomes: Mapping[int, StepOutcome]) -> None:
        """The outcomes of an iteration's steps (skipped ones included), as executed."""
        for it in self._iterations:
            if it.event.iteration == iteration:
                it.outcomes = outcomes

    # ----------------------------------------------------------------------- events
    def __call__(self, event: object) -> None:
        if isinstance(event, PlanEvent):
            self._iterations.append(_Iteration(event, self._why, {}))
        elif isinstance(event, EvaluationEvent):
            self._why = f"{event.decision.lower()}: {event.reason}"
        elif isinstance(event, AnswerEvent):
            self._write(event.answer)

    # ------------------------------------------------------------------------ write
    def _write(self, answer: Answer) -> None:
        trace = TraceWriter(self.store)
        facts = self.facts
        trace.write_query(
            answer.query_id,
            self.question,
            user=self.access.user,
            groups=self.access.groups,
            asked_by=self.asked_by,
            planner=answer.planner,
            session_id=self.session_id,
            turn=facts.turn,
            exit_reason=answer.exit_reason,
            iterations=answer.iterations,
            latency_ms=answer.latency_ms,
            cost=answer.cost,
            query_class=facts.query_class,
            intent=facts.intent,
            decisions=answer.decisions,
        )
        if self._iterations:
            plan, outcomes = merge_iterations(
                [
                    (
                        it.event.plan,
                        it.outcomes,
                        f"iteration {it.event.iteration} ({it.why}; query: {it.event.query})",
                    )
                    for it in self._iterations
                ]
            )
            first = self._iterations[0].event
            trace.write_plan(
                answer.query_id,
                f"{answer.query_id}:plan",
                plan,
                outcomes,
                source=first.source,
                fallback_reason=first.fallback_reason,
            )
        trace.write_answer(
            answer.query_id,
            f"{answer.query_id}:answer",
            answer.answer,
            [(c.marker, citation_hit(c)) for c in answer.citations],
            groundedness=answer.groundedness,
            verdict=answer.verdict or "",
            mode=answer.mode,
        )
        self.store.write(
            "query_set_context",
            {
                "id": answer.query_id,
                "resolved_text": answer.resolved_question,
                "entity_ids": list(facts.entity_ids),
                "entity_names": list(facts.entity_names),
                "groundedness": answer.groundedness,
                "answer_entities": self._answer_entities(answer.answer),
                "reuses": facts.reuses,
            },
        )

    def _answer_entities(self, text: str, limit: int = 3) -> list[str]:
        """Names of readable entities the answer's sentences name (for later follow-ups)."""
        claims = " ".join(strip_citations(c) for c in claim_sentences(text))
        if not claims:
            return []
        spans = named_spans(claims)
        return [e.name for e in self.resolver.resolve(spans)][:limit] if spans else []
