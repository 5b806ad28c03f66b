"""Does the evidence suffice? A judge looks at the question and the evidence gathered so far and
decides SATISFIED, REFINE (ask again with a better query), EXPAND (follow the graph from entities
the evidence is missing) or FILTER (keep only the documents that support the question), with the
next query. Offline: coverage by the evidence of the key terms and of the resolved entities the
question names (not the resolver's looser full-text guesses).
With an LLM client: the model judges (structured output); the offline coverage is still reported.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import Field

from kgrag.core import Closed, Frozen, Hit
from kgrag.executor.duplicates import collapse
from kgrag.llm.prompts import render_prompt
from kgrag.planner.analysis import ResolvedEntity
from kgrag.text import key_terms, sentence_texts, stem, term_set, terms

if TYPE_CHECKING:
    from kgrag.llm import LLM

log = logging.getLogger(__name__)

Decision = Literal["SATISFIED", "REFINE", "EXPAND", "FILTER"]

#: Below this share of the question's key terms found in the evidence, the offline judge refines.
MIN_TERM_COVERAGE = 0.7
#: How many of the best passages the judge reads.
JUDGED_HITS = 10


def judged(evidence: Sequence[Hit]) -> list[Hit]:
    """The best :data:`JUDGED_HITS` distinct passages of ``evidence``: the copies of one passage
    (kgrag.executor.duplicates) are one passage, held by the best-ranked copy, which carries the
    others, as in search and fusion; a copy never takes the place of the next passage."""
    return collapse(evidence, JUDGED_HITS)


def _documents(hit: Hit) -> list[str]:
    """The documents holding ``hit``'s passage: its own and its copies'."""
    return [d for d in (hit.document_id, *(c.document_id for c in hit.copies)) if d]


class Judgement(Frozen):
    """A judge's decision and what to run next."""

    decision: Decision
    reason: str
    next_query: str | None = None
    coverage: float = Field(ge=0.0, le=1.0)
    judge: Literal["llm", "offline"] = "offline"
    focus_entities: tuple[str, ...] = ()
    """Entity ids the next iteration should expand from (EXPAND)."""
    document_ids: tuple[str, ...] = ()
    """Documents the next iteration keeps (FILTER)."""


class Judge(Protocol):
    def judge(
        self,
        question: str,
        entities: Sequence[ResolvedEntity],
        evidence: Sequence[Hit],
        previous_queries: Sequence[str],
    ) -> Judgement: ...


def evidence_coverage(
    question: str, entities: Sequence[ResolvedEntity], evidence: Sequence[Hit]
) -> tuple[float, list[str], list[ResolvedEntity]]:
    """(coverage in [0, 1], the question's stemmed terms missing from the evidence, the resolved
    entities whose names the evidence does not contain)."""
    wanted = terms(question)
    found = term_set(h.text or "" for h in judged(evidence))
    missing_terms = [t for t in wanted if t not in found]
    missing_entities = [e for e in entities if not set(terms(e.name)) <= found]
    term_cov = 1.0 - len(missing_terms) / len(wanted) if wanted else 1.0
    if not entities:
        return term_cov, missing_terms, missing_entities
    entity_cov = 1.0 - len(missing_entities) / len(entities)
    return (term_cov + entity_cov) / 2, missing_terms, missing_entities


def named(question: str, entities: Sequence[ResolvedEntity]) -> list[ResolvedEntity]:
    """The entities the question itself names: every term of the name is in the question. A
    looser full-text match of a common word ("country" -> a song titled "Country ...") is the
    resolver's guess; evidence that does not mention it is no sign of a gap, and expanding
    towards it searches for the wrong thing."""
    asked = set(terms(question))
    return [e for e in entities if set(terms(e.name)) <= asked]


class OfflineJudge:
    """Coverage of the question's entities and key terms by the evidence."""

    def judge(
        self,
        question: str,
        entities: Sequence[ResolvedEntity],
        evidence: Sequence[Hit],
        previous_queries: Sequence[str],
    ) -> Judgement:
        cov, missing_terms, missing_entities = evidence_coverage(
            question, named(question, entities), evidence
        )
        surfaces = _surfaces(question)
        if not evidence:
            words = key_terms(question)
            return Judgement(
                decision="REFINE",
                reason="no evidence was found; retry with the key terms only",
                next_query=" ".join(words) if words else None,
                coverage=0.0,
            )
        if missing_entities:
            names = [e.name for e in missing_entities]
            extra = [surfaces.get(t, t) for t in missing_terms if t not in term_set(names)]
            return Judgement(
                decision="EXPAND",
                reason=f"the evidence does not mention {', '.join(names)}",
                next_query=" ".join([*names, *extra]),
                coverage=cov,
                focus_entities=tuple(e.id for e in missing_entities),
            )
        if cov < MIN_TERM_COVERAGE:
            bridge = _bridge_terms(question, evidence)
            query = [surfaces.get(t, t) for t in missing_terms] + bridge
            return Judgement(
                decision="REFINE",
                reason=(
                    f"the evidence covers {cov:.0%} of the question's key terms; missing: "
                    + ", ".join(surfaces.get(t, t) for t in missing_terms)
                ),
                next_query=" ".join(query),
                coverage=cov,
            )
        supporting = _supporting_documents(question, evidence)
        passages = judged(evidence)
        noisy = [h for h in passages if not supporting & set(_documents(h))]
        if supporting and len(passages) >= 4 and len(noisy) > len(passages) / 2:
            return Judgement(
                decision="FILTER",
                reason=(
                    f"{len(noisy)} of the {len(passages)} best passages share no key term with "
                    "the question; keep the documents that do"
                ),
                next_query=question,
                coverage=cov,
                document_ids=tuple(sorted(supporting)),
            )
        return Judgement(
            decision="SATISFIED",
            reason=f"the evidence covers {cov:.0%} of the question's entities and key terms",
            coverage=cov,
        )


def _surfaces(question: str) -> dict[str, str]:
    """Stem -> the word of the question it came from."""
    out: dict[str, str] = {}
    for word in key_terms(question):
        out.setdefault(stem(word), word)
    return out


def _bridge_terms(question: str, evidence: Sequence[Hit], limit: int = 3) -> list[str]:
    """Words of the best-supported evidence sentence that the question does not have: what a
    second hop should look for (the part the meeting named, the person a record names...)."""
    wanted = set(terms(question))
    best: tuple[int, str] | None = None
    for hit in judged(evidence):
        for sentence in sentence_texts(hit.text or ""):
            overlap = len(wanted & set(terms(sentence)))
            if overlap and (best is None or overlap > best[0]):
                best = (overlap, sentence)
    if best is None:
        return []
    return [w for w in key_terms(best[1]) if stem(w) not in wanted][:limit]


def _supporting_documents(question: str, evidence: Sequence[Hit]) -> set[str]:
    """The documents of the judged passages that share a key term with the question, each
    passage's copies' documents with it (a FILTER keeps the passage in whichever file)."""
    wanted = set(terms(question))
    return {d for h in judged(evidence) if wanted & set(terms(h.text or "")) for d in _documents(h)}


class _LlmVerdict(Closed):
    decision: Decision
    reason: str
    next_query: str | None = None


_JUDGE_PROMPT = render_prompt("kgrag.agent", "judge_system")


class LlmJudge:
    """The chat model judges; the offline coverage is kept as the reported score."""

    def __init__(self, client: LLM, *, max_evidence_chars: int = 600) -> None:
        self.client = client
        self.max_evidence_chars = max_evidence_chars

    def judge(
        self,
        question: str,
        entities: Sequence[ResolvedEntity],
        evidence: Sequence[Hit],
        previous_queries: Sequence[str],
    ) -> Judgement:
        from kgrag.llm import ChatMessage

        cov, _, missing = evidence_coverage(question, entities, evidence)
        listing = "\n".join(
            f"[{i}] {(h.text or h.title or h.id)[: self.max_evidence_chars]}"
            for i, h in enumerate(judged(evidence), start=1)
        )
        user = (
            f"Question: {question}\n\nEarlier queries: {'; '.join(previous_queries) or 'none'}"
            f"\n\nEvidence:\n{listing or '(none)'}"
        )
        verdict, _ = self.client.chat_json(
            [
                ChatMessage(role="system", content=_JUDGE_PROMPT),
                ChatMessage(role="user", content=user),
            ],
            _LlmVerdict,
        )
        return Judgement(
            decision=verdict.decision,
            reason=verdict.reason,
            next_query=(verdict.next_query or None) if verdict.decision != "SATISFIED" else None,
            coverage=cov,
            judge="llm",
            focus_entities=tuple(e.id for e in missing) if verdict.decision == "EXPAND" else (),
            document_ids=(
                tuple(sorted(_supporting_documents(question, evidence)))
                if verdict.decision == "FILTER"
                else ()
            ),
        )
