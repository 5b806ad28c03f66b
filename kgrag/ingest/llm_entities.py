"""The LLM entity extractor: an OpenAI-compatible chat model names the entities of a document's
chunks through structured output; everything after that is the offline extractor's.

The model only proposes mentions (surface form, type, and the chunk it occurs in, plus acronym
definitions). Resolution and de-duplication (:class:`~kgrag.ingest.entities.MentionMerger`),
``MENTIONS`` counts and ``RELATED`` weights are computed exactly as for the rule extractor, so the
two extractors produce the same kind of graph and ids that agree across documents.

The model's answer is untrusted: every surface must occur in the chunk it is attributed to (case
insensitive), or it is dropped; a chunk index out of range is dropped; at most
:data:`MAX_MENTIONS_PER_CHUNK` per chunk. When the call fails (HTTP error, invalid JSON, budget
spent), the document's mentions come from the rules instead and a warning is logged, so one bad
answer never fails an ingestion job.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, get_args

from pydantic import Field

from kgrag.core import Closed
from kgrag.errors import KgragError
from kgrag.ingest.entities import EntityType, MentionMerger, RuleEntityExtractor
from kgrag.llm.prompts import render_prompt

if TYPE_CHECKING:
    from kgrag.ingest.entities.tokens import Tokens
    from kgrag.llm import LLM

log = logging.getLogger(__name__)

MAX_MENTIONS_PER_CHUNK = 40
MAX_CHUNK_CHARS = 4000
"""Longer chunks are cut for the prompt (the chunker keeps them below the embedder's limit)."""

_SYSTEM = render_prompt("kgrag.ingest", "entities_system")


class LlmMention(Closed):
    chunk: int = Field(description="the number of the chunk the mention is in")
    surface: str = Field(description="the entity exactly as written in the chunk")
    type: str = Field(default="OTHER", description="PERSON, ORG, PLACE, PRODUCT, DATE or OTHER")


class LlmAcronym(Closed):
    short: str
    long: str


class LlmExtraction(Closed):
    """The structured output the model is asked for."""

    mentions: list[LlmMention] = Field(default_factory=list)
    acronyms: list[LlmAcronym] = Field(default_factory=list)


class LlmEntityExtractor(RuleEntityExtractor):
    """Entities proposed by a chat model, resolved like the offline extractor's."""

    def __init__(
        self,
        client: LLM,
        resolver: MentionMerger | None = None,
        *,
        max_run_tokens: int = 10,
    ) -> None:
        super().__init__(resolver, max_run_tokens=max_run_tokens)
        self.client = client
        self.fallbacks = 0
        """Documents whose mentions came from the rules because the model's call failed."""

    def _document_mentions(
        self, texts: Sequence[str], tokenised: Sequence[Tokens]
    ) -> tuple[list[tuple[str, EntityType]], list[int], list[tuple[str, str]]]:
        try:
            answer = self._ask(texts)
        except KgragError as e:
            self.fallbacks += 1
            log.warning("LLM entity extraction failed, using the rules for this document: %s", e)
            return super()._document_mentions(texts, tokenised)
        return checked_mentions(answer, texts)

    def _ask(self, texts: Sequence[str]) -> LlmExtraction:
        from kgrag.llm import ChatMessage

        listing = "\n\n".join(
            f"[chunk {i}]\n{text[:MAX_CHUNK_CHARS]}" for i, text in enumerate(texts)
        )
        extraction, _ = self.client.chat_json(
            [
                ChatMessage(role="system", content=_SYSTEM),
                ChatMessage(role="user", content=listing),
            ],
            LlmExtraction,
            schema_name="entities",
        )
        return extraction


_TYPES: frozenset[str] = frozenset(get_args(EntityType))


def _entity_type(value: str) -> EntityType:
    upper = value.strip().upper()
    return upper if upper in _TYPES else "OTHER"  # type: ignore[return-value]


def checked_mentions(
    answer: LlmExtraction, texts: Sequence[str]
) -> tuple[list[tuple[str, EntityType]], list[int], list[tuple[str, str]]]:
    """The model's mentions that really occur in the chunk they are attributed to (each as many
    times as it occurs there), capped per chunk; acronyms whose both forms occur in the document.
    """
    lowered = [t.lower() for t in texts]
    surfaces: list[tuple[str, EntityType]] = []
    owners: list[int] = []
    per_chunk = [0] * len(texts)
    seen: set[tuple[int, str]] = set()
    for m in answer.mentions:
        surface = " ".join(m.surface.split())
        key = (m.chunk, surface.lower())
        if not surface or not 0 <= m.chunk < len(texts) or key in seen:
            continue
        occurrences = lowered[m.chunk].count(surface.lower())
        if occurrences == 0:
            log.debug("dropped a mention the chunk does not contain")
            continue
        seen.add(key)
        for _ in range(occurrences):
            if per_chunk[m.chunk] >= MAX_MENTIONS_PER_CHUNK:
                break
            per_chunk[m.chunk] += 1
            surfaces.append((surface, _entity_type(m.type)))
            owners.append(m.chunk)
    document = "\n".join(lowered)
    acronyms = [
        (a.short.strip(), a.long.strip())
        for a in answer.acronyms
        if a.short.strip()
        and a.long.strip()
        and a.short.strip().lower() in document
        and a.long.strip().lower() in document
    ]
    return surfaces, owners, acronyms
