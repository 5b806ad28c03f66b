"""Conversation memory, persisted in the graph as ``(Session)-[:HAS_TURN {n}]->(Query)``.

A follow-up ("tell me more about that", "what does it build?") is rewritten into a standalone
question with the session's history: by the LLM when one is configured, offline by putting the
previous turn's entities in place of the pronoun. A reformat request ("give me that as a list")
reuses the previous answer and its citations without new retrieval, when every citation is still
readable by the caller. Every memory read is filtered: only the caller's own turns, and cited
nodes only when the caller may read their document.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from kgrag.agent._text import strip_citations
from kgrag.agent.answer import Citation
from kgrag.agent.groundedness import claim_sentences
from kgrag.agent.synthesis import image_markdown, renumber, sources_block
from kgrag.core import AccessContext, Closed, Frozen, Hit
from kgrag.graph.store import GraphStore
from kgrag.llm.prompts import render_prompt

if TYPE_CHECKING:
    from kgrag.llm import LLM

log = logging.getLogger(__name__)

Format = Literal["list", "table", "short", "paragraph"]

_FORMATS: tuple[tuple[re.Pattern[str], Format], ...] = (
    (re.compile(r"\b(?:list|bullet(?:s| points?)?|enumerat\w*)\b"), "list"),
    (re.compile(r"\btable\b"), "table"),
    (re.compile(r"\b(?:short(?:er)?|brief(?:ly)?|one sentence|tl;?dr|summar\w+)\b"), "short"),
    (re.compile(r"\b(?:paragraph|prose)\b"), "paragraph"),
)
_REFORMAT = re.compile(
    r"^(?:please\s+|can you\s+|could you\s+)?(?:give|show|put|format|make|write|turn|rewrite|"
    r"present|list|summari[sz]e|shorten|say)\s+(?:me\s+|us\s+)?(?:that|this|it|them|those|"
    r"the (?:answer|above|same)|your answer)\b|^(?:as|in)\s+(?:a\s+)?(?:list|table|bullets?|"
    r"one sentence)\b|^(?:shorter|briefly|in short)\b"
)
_ANAPHOR = re.compile(
    r"\b(?:it|its|they|them|their|he|she|him|his|her)\b|"
    r"\b(?:that|this|those|these)\b(?=\s*(?:[?.!,;]|$|as\b|one\b|again\b))",
    re.I,
)
_MORE = re.compile(
    r"^(?:tell me more|more about|what else|and what about|what about|go on)\b", re.I
)
_POSSESSIVE = {"its", "their", "his", "her"}


class Turn(Frozen):
    """One earlier question of the session, as stored."""

    n: int
    query_id: str
    text: str
    resolved_text: str | None = None
    entity_ids: tuple[str, ...] = ()
    entity_names: tuple[str, ...] = ()
    answer_entities: tuple[str, ...] = ()
    """Names of the entities the answer's sentences name (carried when the question named none)."""
    answer: str | None = None
    mode: str | None = None

    @property
    def standalone(self) -> str:
        return self.resolved_text or self.text


class Resolution(Frozen):
    """How a question was understood with the history."""

    original: str
    question: str
    """The standalone question to plan (the original when it needs no history)."""
    reformat: Format | None = None
    """Set when the question only asks to reformat the previous answer."""
    method: Literal["llm", "carry_entities", "none"] = "none"
    previous: Turn | None = None


class DiscussedSource(Frozen):
    """A document an earlier answer of the session cited, and what names it."""

    document_id: str
    title: str | None = None
    uri: str | None = None
    entity_ids: tuple[str, ...] = ()
    """Entities the cited passages mention."""

    def named_in(self, question: str, entity_ids: Sequence[str]) -> bool:
        """Whether ``question`` names this source again: its title or file name, or an entity
        its cited passages mention (``entity_ids``: the ids of those the question names)."""
        q = " ".join(re.findall(r"[a-z0-9]+", question.lower()))
        names = [self.title or ""]
        if self.uri:
            stem = self.uri.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            names.append(stem)
        for name in names:
            words = " ".join(re.findall(r"[a-z0-9]+", name.lower()))
            if len(words) >= 4 and re.search(rf"\b{re.escape(words)}\b", q):
                return True
        # an entity named by the question, or a name of several words inside a longer one found
        # in the source ("feed pump fp2" in "march the feed pump fp2": rule extraction keeps
        # such spans)
        return any(
            e == mine or (" " in e and re.search(rf"\b{re.escape(e)}\b", mine))
            for e in entity_ids
            for mine in self.entity_ids
        )


class SessionMemory:
    def __init__(
        self,
        store: GraphStore,
        access: AccessContext,
        *,
        llm: LLM | None = None,
        history_turns: int = 3,
    ) -> None:
        self.store = store
        self.access = access
        self.llm = llm
        self.history_turns = history_turns

    def history(self, session_id: str) -> list[Turn]:
        """The caller's earlier turns of this session, newest first."""
        rows = self.store.read(
            "session_turns", {**self._asker(session_id), "k": self.history_turns}
        )
        return [
            Turn(
                n=int(r["n"]),
                query_id=r["query_id"],
                text=r["text"] or "",
                resolved_text=r["resolved_text"],
                entity_ids=tuple(r["entity_ids"] or ()),
                entity_names=tuple(r["entity_names"] or ()),
                answer_entities=tuple(r["answer_entities"] or ()),
                answer=r["answer"],
                mode=r["mode"],
            )
            for r in rows
        ]

    def _asker(self, session_id: str) -> dict[str, Any]:
        """The parameters that pick the caller's own turns: the same user and groups."""
        return {
            "session_id": session_id,
            "user": self.access.user,
            "groups": sorted(set(self.access.groups)),
        }

    def next_turn(self, session_id: str) -> int:
        rows = self.store.read("session_last_turn", {"session_id": session_id})
        return int(rows[0]["n"] or 0) + 1 if rows else 1

    def resolve(
        self,
        question: str,
        history: Sequence[Turn],
        *,
        names_entity: Callable[[str], bool] = lambda q: False,
    ) -> Resolution:
        """The standalone question (and whether it is a reformat request). ``names_entity``
        tells whether a question names an entity of its own (then a pronoun in it refers
        to that entity, not to the conversation)."""
        if not history:
            return Resolution(original=question, question=question)
        previous = history[0]
        reformat = reformat_kind(question)
        if reformat is not None and previous.answer:
            return Resolution(
                original=question,
                question=previous.standalone,
                reformat=reformat,
                method="none",
                previous=previous,
            )
        if not is_follow_up(question) or (
            not _MORE.search(question.strip()) and names_entity(question)
        ):
            return Resolution(original=question, question=question, previous=previous)
        if self.llm is not None:
            rewritten = self._llm_rewrite(question, history)
            if rewritten:
                return Resolution(
                    original=question, question=rewritten, method="llm", previous=previous
                )
        return Resolution(
            original=question,
            question=carry_entities(question, previous),
            method="carry_entities",
            previous=previous,
        )

    def previous_citations(self, turn: Turn) -> list[Citation] | None:
        """The citations of an earlier answer, or ``None`` when one is no longer readable."""
        rows = self.store.read(
            "session_turn_citations", {"query_id": turn.query_id, **self.access.params()}
        )
        if any(not r["readable"] for r in rows):
            return None
        return [
            Citation(
                marker=int(r["marker"]),
                document_id=r["document_id"],
                title=r["title"],
                uri=r["uri"],
                page=r["page"],
                start_s=r["start_s"],
                end_s=r["end_s"],
                table=r["table_number"],
                sheet=r["sheet"],
                row=r["table_row"],
                node_id=r["id"],
                kind="image"
                if r["is_image"]
                else ("segment" if r["start_s"] is not None else "chunk"),
                image_uri=r["image_uri"] if r["is_image"] else None,
                excerpt=(r["text"] or "")[:300] or None,
            )
            for r in rows
        ]

    def discussed(self, session_id: str, turns: int = 10) -> list[DiscussedSource]:
        """The documents the caller's earlier answers in this session cited (the last
        ``turns`` turns), readable by the caller now, most recently cited first."""
        rows = self.store.read("session_turns", {**self._asker(session_id), "k": turns})
        found: dict[str, DiscussedSource] = {}
        chunks: dict[str, list[str]] = {}
        for turn in rows:
            cited = self.store.read(
                "session_turn_citations", {"query_id": turn["query_id"], **self.access.params()}
            )
            for r in cited:
                if not r["readable"] or not r["document_id"]:
                    continue
                doc = r["document_id"]
                found.setdefault(
                    doc, DiscussedSource(document_id=doc, title=r["title"], uri=r["uri"])
                )
                if not r["is_image"]:
                    chunks.setdefault(doc, []).append(r["id"])
        ids = [c for cs in chunks.values() for c in cs]
        if ids:
            entities: dict[str, set[str]] = {}
            owner = {c: doc for doc, cs in chunks.items() for c in cs}
            for r in self.store.read(
                "expand_entities_of_chunks", {"ids": ids, **self.access.params()}
            ):
                entities.setdefault(owner[r["source"]], set()).add(r["target"])
            found = {
                doc: d.model_copy(update={"entity_ids": tuple(sorted(entities.get(doc, ())))})
                for doc, d in found.items()
            }
        return list(found.values())

    def _llm_rewrite(self, question: str, history: Sequence[Turn]) -> str | None:
        from kgrag.llm import BudgetExceededError, ChatMessage, LLMError

        turns = "\n".join(
            f"User: {t.standalone}\nAssistant: {(t.answer or '')[:600]}" for t in reversed(history)
        )
        prompt = render_prompt("kgrag.agent", "rewrite_followup", turns=turns, question=question)
        try:
            value, _ = self.llm.chat_json(  # type: ignore[union-attr]
                [ChatMessage(role="user", content=prompt)], _Rewrite
            )
        except BudgetExceededError:
            return None
        except LLMError as e:
            log.warning("the LLM rewrite of a follow-up failed, carrying entities: %s", e)
            return None
        return value.standalone_question.strip() or None


class _Rewrite(Closed):
    standalone_question: str


def reformat_kind(question: str) -> Format | None:
    """The format a reformat request asks for, or ``None`` when it asks something new."""
    q = question.lower().strip()
    if not _REFORMAT.search(q):
        return None
    for pattern, kind in _FORMATS:
        if pattern.search(q):
            return kind
    return None


def is_follow_up(question: str) -> bool:
    """Whether a question leans on the conversation (a pronoun, or "tell me more")."""
    return bool(_MORE.search(question.strip()) or _ANAPHOR.search(question))


def carry_entities(question: str, previous: Turn) -> str:
    """Offline rewrite: the previous turn's entities in place of the first pronoun ("what does
    it build?" -> "what does Feed Pump FP-2 build?"); without entities, its key terms."""
    subject = " and ".join(previous.entity_names[:2] or previous.answer_entities[:2])
    if not subject:
        return f"{question.rstrip()} (follow-up to: {previous.standalone})"
    match = _ANAPHOR.search(question)
    if match is None:
        return f"{question.rstrip(' ?.!')} about {subject}?"
    word = match.group(0).lower()
    replacement = f"{subject}'s" if word in _POSSESSIVE else subject
    return question[: match.start()] + replacement + question[match.end() :]


def reformat_answer(
    previous: Turn,
    citations: Sequence[Citation],
    kind: Format,
    *,
    llm: LLM | None = None,
) -> tuple[str, list[Citation], float]:
    """The previous answer in another format, same citations; returns (text, citations, cost)."""
    if llm is not None:
        from kgrag.llm import ChatMessage, LLMError

        numbered = [citation_hit(c) for c in sorted(citations, key=lambda c: c.marker)]
        body = (previous.answer or "").split("\nSources:\n", 1)[0]
        prompt = render_prompt(
            "kgrag.agent", "reformat_answer", format=_DESCRIBE[kind], answer=body
        )
        try:
            result = llm.chat([ChatMessage(role="user", content=prompt)])
        except LLMError as e:
            log.warning("the LLM reformat failed, reformatting offline: %s", e)
        else:
            text, cited = renumber(result.text, numbered)
            return text, cited, result.usage.cost_usd
    claims = [strip_citations_keep_markers(s) for s in claim_sentences(previous.answer or "")]
    images = [image_markdown(c, c.marker) for c in citations if c.kind == "image"]
    if kind == "list":
        body = "\n".join(f"- {c}" for c in claims)
    elif kind == "table":
        rows = [f"| {strip_citations(c)} | {' '.join(_markers(c))} |" for c in claims]
        body = "\n".join(["| Statement | Sources |", "| --- | --- |", *rows])
    elif kind == "short":
        body = claims[0] if claims else ""
    else:
        body = " ".join(claims)
    header = (
        "Reformatted from the previous answer (extractive, no new retrieval):"
        if previous.mode != "llm"
        else "Reformatted from the previous answer (no new retrieval):"
    )
    used = (
        list(citations)
        if kind != "short"
        else [c for c in citations if f"[{c.marker}]" in _markers(body) or c.kind == "image"]
    )
    parts = [header, body, "\n".join(images), sources_block(used)]
    return "\n\n".join(p for p in parts if p), list(used), 0.0


_DESCRIBE: dict[Format, str] = {
    "list": "a bulleted Markdown list",
    "table": "a Markdown table",
    "short": "one short sentence",
    "paragraph": "one paragraph of prose",
}


def strip_citations_keep_markers(sentence: str) -> str:
    return re.sub(r"\s*\(Source:[^)]*\)", "", sentence).strip()


def _markers(text: str) -> list[str]:
    return [f"[{m}]" for m in re.findall(r"\[(\d+)\]", text)] if text else []


def citation_hit(c: Citation) -> Hit:
    """The evidence a citation names, as a hit (to cite it again)."""
    return Hit(
        id=c.node_id,
        kind=c.kind,
        score=1.0,
        text=c.excerpt,
        document_id=c.document_id,
        title=c.title,
        uri=c.uri,
        image_uri=c.image_uri,
        page=c.page,
        start_s=c.start_s,
        end_s=c.end_s,
        table=c.table,
        sheet=c.sheet,
        row=c.row,
        section=c.section,
    )
