"""The models passed between the entity stages (frozen; an LLM's JSON validates straight into
them), the :class:`EntityExtractor` Protocol, and the serialised state of a
:class:`~kgrag.ingest.entities.resolver.MentionMerger`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field, field_validator, model_validator

from kgrag.core import Frozen

EntityType = Literal["PERSON", "ORG", "PLACE", "PRODUCT", "DATE", "OTHER"]
ENTITY_TYPES: tuple[EntityType, ...] = ("PERSON", "ORG", "PLACE", "PRODUCT", "DATE", "OTHER")

_TYPE_SYNONYMS: dict[str, EntityType] = {
    "PER": "PERSON",
    "PEOPLE": "PERSON",
    "HUMAN": "PERSON",
    "ORGANIZATION": "ORG",
    "ORGANISATION": "ORG",
    "COMPANY": "ORG",
    "INSTITUTION": "ORG",
    "LOCATION": "PLACE",
    "LOC": "PLACE",
    "GPE": "PLACE",
    "FAC": "PLACE",
    "FACILITY": "PLACE",
    "CITY": "PLACE",
    "COUNTRY": "PLACE",
    "TIME": "DATE",
    "WORK_OF_ART": "OTHER",
    "EVENT": "OTHER",
    "NORP": "OTHER",
    "MISC": "OTHER",
}


def coerce_entity_type(value: Any) -> Any:
    if isinstance(value, str):
        upper = value.strip().upper().replace(" ", "_")
        if upper in ENTITY_TYPES:
            return upper
        return _TYPE_SYNONYMS.get(upper, "OTHER")
    return value


class EntityRecord(Frozen):
    """One entity: ``id`` is the normalised name, ``name`` the display form."""

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    type: EntityType = "OTHER"
    aliases: tuple[str, ...] = ()

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> Any:
        return coerce_entity_type(value)


class Mention(Frozen):
    """``(Chunk {id: chunk_id})-[:MENTIONS {count}]->(Entity {id: entity_id})``."""

    chunk_id: str = Field(min_length=1)
    entity_id: str = Field(min_length=1)
    count: int = Field(default=1, ge=1)


class Relation(Frozen):
    """An undirected co-occurrence, stored once with ``source_id < target_id``."""

    source_id: str = Field(min_length=1)
    target_id: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> Relation:
        if not self.source_id < self.target_id:
            raise ValueError(
                f"relation ({self.source_id!r}, {self.target_id!r}) must have source_id < "
                "target_id (an undirected pair is stored once, smaller id first)"
            )
        return self


class ExtractionResult(Frozen):
    """What one batch of chunks contributes to the graph. Checked for internal consistency."""

    entities: tuple[EntityRecord, ...] = ()
    mentions: tuple[Mention, ...] = ()
    relations: tuple[Relation, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> ExtractionResult:
        ids = [e.id for e in self.entities]
        known = set(ids)
        if len(known) != len(ids):
            dup = sorted(i for i, n in Counter(ids).items() if n > 1)
            raise ValueError(f"duplicate entity ids: {dup[:5]}")
        seen_m: set[tuple[str, str]] = set()
        for m in self.mentions:
            if m.entity_id not in known:
                raise ValueError(f"mention of unknown entity {m.entity_id!r}")
            if (m.chunk_id, m.entity_id) in seen_m:
                raise ValueError(f"duplicate mention ({m.chunk_id!r}, {m.entity_id!r})")
            seen_m.add((m.chunk_id, m.entity_id))
        seen_r: set[tuple[str, str]] = set()
        for r in self.relations:
            if r.source_id not in known or r.target_id not in known:
                raise ValueError(f"relation on unknown entity ({r.source_id!r}, {r.target_id!r})")
            if (r.source_id, r.target_id) in seen_r:
                raise ValueError(f"duplicate relation ({r.source_id!r}, {r.target_id!r})")
            seen_r.add((r.source_id, r.target_id))
        return self


@runtime_checkable
class EntityExtractor(Protocol):
    """Turns ``(chunk_id, text)`` pairs into entities, mentions and co-occurrence relations.

    ``document_ids`` (parallel to ``chunks``) scopes context-dependent resolution (bare surnames);
    without it the whole batch is one document. ``document_acls`` (document id -> its stored ACL)
    scopes acronym definitions (:meth:`MentionMerger.resolve_document`); a document it does not
    name is public.
    """

    def extract(
        self,
        chunks: Sequence[tuple[str, str]],
        *,
        document_ids: Sequence[str] | None = None,
        document_acls: Mapping[str, Sequence[str]] | None = None,
    ) -> ExtractionResult: ...

    def observe(self, texts: Iterable[str]) -> None:
        """Learn corpus statistics from the texts of a whole job before any :meth:`extract`.

        After it, :meth:`extract` no longer learns from its own chunks, so what one chunk yields
        does not depend on which documents came before it (an interrupted and resumed job then
        extracts exactly what an uninterrupted one does). Extractors without statistics do
        nothing.
        """
        ...


class EntityState(Frozen):
    """Serialised state of one resolved entity."""

    id: str
    surfaces: dict[str, int] = Field(default_factory=dict)
    context_surfaces: dict[str, int] = Field(default_factory=dict)
    type_votes: dict[str, int] = Field(default_factory=dict)


class MergerState(Frozen):
    """All an :class:`MentionMerger` knows; ``model_dump_json`` / ``model_validate_json``."""

    version: Literal[1] = 1
    entities: tuple[EntityState, ...] = ()
    aliases: dict[str, str] = Field(default_factory=dict)
    #: acronym -> (ACL of the defining document, entity id), for definitions in non-public
    #: documents: they resolve only in documents every reader of which may read the definition
    scoped_acronyms: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = Field(
        default_factory=dict
    )
