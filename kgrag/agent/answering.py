"""From the retrieval loop's evidence to the answer text: an LLM answer (checked, synthesised
again once with the judge's feedback, unsupported sentences removed) when a model is configured
and within budget, else an extractive one; the support test before either, and the plain
"not found" answer (:func:`abstention`) when the evidence does not answer the question."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from kgrag.agent.answer import Citation
from kgrag.agent.attachments import DEFAULT_ATTACHMENT_QUESTION
from kgrag.agent.dense import dense_scores
from kgrag.agent.groundedness import (
    RESYNTHESIS_THRESHOLD,
    GroundednessReport,
    check,
    remove_unsupported,
)
from kgrag.agent.loop import DocumentAnswer, LoopResult
from kgrag.agent.memory import Resolution
from kgrag.agent.misspellings import respelled
from kgrag.agent.quantity import asks_quantity, states_quantity
from kgrag.agent.someone import asks_who, names_someone
from kgrag.agent.support import (
    ABSTENTION,
    DenseScores,
    Support,
    assess,
    is_not_found,
    leads,
)
from kgrag.agent.synthesis import (
    answer_body,
    citation_for,
    compared_answer,
    extractive_answer,
    llm_answer,
    quoted_sentences,
    renumber,
    source_label,
)
from kgrag.core import Hit
from kgrag.executor.document_handlers import answer_text
from kgrag.llm import LLM, BudgetExceededError, LLMError
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.rule import identifiers
from kgrag.text import terms
from kgrag.text.file_names import picture_query_terms
from kgrag.text.tokens import lexical_tokens

log = logging.getLogger(__name__)

DOCUMENT_ANSWER_LIMIT = 10
"""Documents shown (and cited) in the answer of a listing or metadata search."""

#: Documents an abstention lists as closest (not answering).
CLOSEST_DOCUMENTS = 3


@dataclass(frozen=True)
class Synthesis:
    """An answer's text and citations, how it was made (``llm`` or ``extractive``) and how
    grounded it is."""

    text: str
    citations: tuple[Citation, ...]
    mode: str
    groundedness: float | None
    verdict: str
    support: Support | None = None
    closest: tuple[Citation, ...] = ()
    not_found: bool = False

    @classmethod
    def checked(
        cls,
        text: str,
        citations: Sequence[Citation],
        mode: str,
        report: GroundednessReport,
        *,
        support: Support | None = None,
        closest: tuple[Citation, ...] = (),
        not_found: bool = False,
    ) -> Synthesis:
        """A synthesis with the groundedness ``report`` of its text."""
        return cls(
            text,
            tuple(citations),
            mode,
            report.score,
            report.verdict,
            support=support,
            closest=closest,
            not_found=not_found,
        )


class Composer:
    """Writes the answer of one question from the loop's result.

    ``llm`` returns the chat model while the question's budget allows a call (``None`` without
    a model or once the budget is spent)."""

    def __init__(self, embedder: TextEmbedder, llm: Callable[[], LLM | None]) -> None:
        self.embedder = embedder
        self.llm = llm

    def compose(
        self,
        resolution: Resolution,
        result: LoopResult,
        entity_names: Sequence[str],
        modalities: frozenset[str],
        file_names: Sequence[str] = (),
    ) -> Synthesis:
        """The answer from ``result``'s evidence. What the question points at (a recording's
        segments when ``modalities`` has audio, the passages of the files ``file_names`` names)
        comes first in it, in its order, and the extractive answer starts from it."""
        if result.documents is not None:
            return _document_synthesis(resolution.question, result.documents, self.embedder)
        pointed = pointed_at(modalities, file_names, identifiers(resolution.question))
        evidence = sorted(result.text, key=lambda h: not pointed(h))  # stable
        images = result.images
        if file_names and not any(map(pointed, evidence)) and any(map(pointed, images)):
            evidence = []  # a named picture: it is the answer, not the passages nearest the words
        elif found_by_name(resolution.question, evidence, images, result.named):
            # a picture whose name says what the question asks for is the answer: not passages
            # that do not say it, nor pictures only near them
            evidence = []
            images = [h for h in images if h.id in result.depicting]
        cited = _cited_text(evidence, images)
        # a file the evidence comes from is found: its name is no longer what to look for
        asked = without_found_files(resolution.question, file_names, [*evidence, *images])
        dense = dense_scores(result.iterations)
        if self.llm() is not None and (evidence or images):
            gate = _evidence_support(
                asked,
                evidence,
                images,
                result.depicting,
                heard=result.heard,
                dense=dense,
                embedder=self.embedder,
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
            # a name the question misspells is quoted as the evidence writes it
            respelled(resolution.question, evidence),
            evidence,
            images,
            self.embedder,
            entity_names=entity_names,
            prefer=pointed,
        )
        support = _support(
            asked,
            citations,
            [*evidence, *images],
            result.depicting,
            heard=result.heard,
            dense=dense,
            embedder=self.embedder,
        )
        if support.supported and not _quotes_quantity(resolution.question, text):
            # "How much does a support contract cost?" answered by quotes stating no amount
            support = support.model_copy(update={"quantity_quoted": False, "supported": False})
        if support.supported and not _quotes_someone(resolution.question, text):
            # "Who designed the FreeType logo?" answered by quotes naming no one
            support = support.model_copy(update={"someone_quoted": False, "supported": False})
        if not support.supported:
            return abstention(evidence, "extractive", support)
        report = check(text, cited(citations), self.embedder)
        return Synthesis.checked(text, citations, "extractive", report, support=support)

    def _llm_synthesis(
        self, resolution: Resolution, evidence: Sequence[Hit], images: Sequence[Hit]
    ) -> Synthesis | None:
        """The LLM answer, checked; synthesised again (once) with the judge's feedback when
        its groundedness is below the threshold; unsupported sentences then removed."""
        client = self.llm()
        assert client is not None
        cited = _cited_text(evidence, images)
        embedder = self.embedder
        history = None
        previous = resolution.previous
        if previous is not None and resolution.method != "none":
            history = f"User: {previous.standalone}\nAssistant: {(previous.answer or '')[:600]}"
        question = resolution.question
        text, citations, _ = llm_answer(client, question, evidence, images, history=history)
        if is_not_found(text):
            return abstention(evidence, "llm")
        report = check(text, cited(citations), embedder, llm=self.llm())
        if report.score < RESYNTHESIS_THRESHOLD and self.llm() is not None:
            feedback = "these sentences are not supported by the evidence they cite: " + " | ".join(
                s.sentence for s in report.unsupported
            )
            text, citations, _ = llm_answer(
                client, question, evidence, images, feedback=feedback, history=history
            )
            if is_not_found(text):
                return abstention(evidence, "llm")
            report = check(text, cited(citations), embedder, llm=self.llm())
        if report.unsupported:
            by_id = {h.id: h for h in [*evidence, *images]}
            kept = remove_unsupported(answer_body(text), report)
            text, citations = renumber(kept, [by_id[c.node_id] for c in citations])
        if not text.strip() or not citations:
            return None
        return Synthesis.checked(text, citations, "llm", report)


def _document_synthesis(question: str, found: DocumentAnswer, embedder: TextEmbedder) -> Synthesis:
    """The answer of a document tool (listing, summary, metadata search): its own extractive
    text, citing documents; of a comparison, each side's sentences nearest ``question``."""
    if found.groups:
        by_id = {h.id: h for h in found.hits}
        sides = [(g.label, [by_id[i] for i in g.hit_ids if i in by_id]) for g in found.groups]
        text, citations = compared_answer(question, sides, embedder)
        report = check(text, _cited_text(found.hits, ())(citations), embedder)
        return Synthesis.checked(text, citations, "extractive", report)
    shown = list(found.hits[:DOCUMENT_ANSWER_LIMIT])
    body = answer_text(
        found.step_type, found.hits, limit=DOCUMENT_ANSWER_LIMIT, capped=found.capped
    )
    citations = [citation_for(n, hit) for n, hit in enumerate(shown, start=1)]
    lines = [body, "", "Sources:"] if citations else [body]
    lines += [f"[{c.marker}] {source_label(c)}" for c in citations]
    text = "\n".join(lines)
    report = check(text, {c.marker: c.excerpt or c.title or "" for c in citations}, embedder)
    return Synthesis.checked(text, citations, "extractive", report)


def found_by_name(
    question: str, evidence: Sequence[Hit], images: Sequence[Hit], named: Collection[str]
) -> bool:
    """A picture of ``images`` was found by its file name (``named``: every content word of
    the question is a word of the name) and no passage of ``evidence`` has all those words."""
    wanted = set(picture_query_terms(question))
    return (
        bool(wanted)
        and any(h.id in named for h in images)
        and not any(wanted <= set(picture_query_terms(h.text or "")) for h in evidence)
    )


def _cited_text(
    evidence: Sequence[Hit], images: Sequence[Hit]
) -> Callable[[Sequence[Citation]], dict[int, str]]:
    by_id = {c.id: c for h in [*evidence, *images] for c in h.and_copies()}

    def cited(citations: Sequence[Citation]) -> dict[int, str]:
        out: dict[int, str] = {}
        for c in citations:
            hit = by_id.get(c.node_id)
            if hit is not None and hit.text:
                out[c.marker] = hit.text
        return out

    return cited


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
    dense: DenseScores | None = None,
    embedder: TextEmbedder | None = None,
) -> Support:
    """The support test of an extractive answer over the passages it cites. An answer citing
    an image found as showing what the question asks about (``depicting``: it passed the CLIP
    depicts threshold or depicts a named entity, the image support test) is supported, and so
    is a question with no content term (an attachment alone). An image only near the evidence
    passages supports nothing the passages do not."""
    question = _asked(question)
    by_id = {c.id: c for h in hits for c in h.and_copies()}  # a quote may cite a copy
    cited = [by_id[c.node_id] for c in citations if c.node_id in by_id]
    text = [h for h in hits if h.kind != "image"]
    found = assess(
        question,
        [h for h in cited if h.kind != "image"],
        text,
        heard=heard,
        dense=dense,
        embedder=embedder,
    )
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
    dense: DenseScores | None = None,
    embedder: TextEmbedder | None = None,
) -> Support:
    """The support test of the evidence alone, before an LLM answers from it: the same rule as
    an extractive answer's (:func:`_support`), with every passage counted as citable."""
    question = _asked(question)
    text = [h for h in evidence if h.kind != "image"]
    found = assess(question, text, text, heard=heard, dense=dense, embedder=embedder)
    shown = any(h.kind == "image" and h.id in depicting for h in [*evidence, *images])
    if shown or not terms(question):
        return found.model_copy(update={"supported": True})
    return found


def _quotes_quantity(question: str, text: str) -> bool:
    """False when ``question`` asks for a quantity and no sentence the extractive answer
    ``text`` quotes states one (kgrag.agent.quantity)."""
    quoted = quoted_sentences(text)
    if not quoted or not asks_quantity(question):
        return True  # an image alone is judged by the image support test
    return any(states_quantity(s, question) for s in quoted)


def _quotes_someone(question: str, text: str) -> bool:
    """False when ``question`` asks who and no sentence the extractive answer ``text`` quotes
    names anyone or anything the question does not (kgrag.agent.someone)."""
    quoted = quoted_sentences(text)
    if not quoted or not asks_who(question):
        return True
    return any(names_someone(s, question) for s in quoted)


def abstention(evidence: Sequence[Hit], mode: str, support: Support | None = None) -> Synthesis:
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
    return Synthesis.checked(
        "\n".join(lines), [], mode, report, support=support, closest=tuple(closest), not_found=True
    )


def pointed_at(
    modalities: frozenset[str], file_names: Sequence[str], identifiers: Sequence[str] = ()
) -> Callable[[Hit], bool]:
    """Whether a hit is what the question points at: a transcript segment when it asks about
    recordings (audio among ``modalities``), a passage of a file it names, a passage headed by
    a code identifier or version it names (:func:`kgrag.planner.rule.identifiers`:
    ``asn1_der_decoding``, ``3.19`` in ``3.19.0``)."""
    audio, names, wanted = "audio" in modalities, frozenset(file_names), frozenset(identifiers)

    def pointed(hit: Hit) -> bool:
        return (
            (audio and hit.kind == "segment")
            or (bool(names) and hit.file_name in names)
            or (bool(wanted) and _holds_any(hit, wanted))
        )

    return pointed


#: An identifier heads a passage when it is among the first words of one of its leads.
HEADING_WORDS = 12


def _holds_any(hit: Hit, identifiers: frozenset[str]) -> bool:
    """Among the first :data:`HEADING_WORDS` words of its title, folder or a paragraph's first
    sentence (:func:`~kgrag.agent.support.leads`): the section the identifier heads ("Release
    3.19.0 (11 Apr 2022)", "int asn1_der_decoding (...)"), not a passage that names it in
    passing (a bug list's "execveat support (linux 3.19)"). Set a priori."""
    return any(
        not identifiers.isdisjoint(lexical_tokens(" ".join(lead.split()[:HEADING_WORDS])))
        for lead in leads(hit)
    )


def without_found_files(question: str, file_names: Sequence[str], evidence: Sequence[Hit]) -> str:
    """``question`` without the file names it names that some evidence hit comes from, for the
    support test: "what does README.md say about installing?" asks about installing, in a file
    found; the words of its name ("README") are in no passage of it."""
    found = {h.file_name for h in evidence} & {n.lower() for n in file_names}
    for name in found:
        question = re.sub(re.escape(name), " ", question, flags=re.IGNORECASE)
    return question
