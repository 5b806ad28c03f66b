"""Offline entity extraction, name normalisation and de-duplication.

No model is needed: :class:`RuleEntityExtractor` finds names with rules and the batch's own word
statistics, :class:`MentionMerger` merges the mentions into entities across a document and across
the corpus, and the result is a frozen :class:`ExtractionResult` that the graph writer turns into
``Entity`` nodes, ``(Chunk)-[:MENTIONS {count}]->(Entity)`` and
``(Entity)-[:RELATED {weight}]-(Entity)``. An LLM extractor can fill the same models from JSON
(``ExtractionResult.model_validate_json``); entity types are accepted case-insensitively and common
synonyms (``LOCATION``, ``GPE``, ``ORGANIZATION`` ...) are mapped onto :data:`ENTITY_TYPES`.

Candidates (what counts as a name)
    * maximal runs of capitalised tokens, with inner connectors (``of``, ``de``, ``van``, ``the``,
      ``&`` ...; at most two in a row and only when a capitalised token follows), initials and
      honorific abbreviations (``John F. Kennedy``, ``Dr. Ada Lovelace``, ``St. Louis``) and a
      short trailing number (``Boeing 747``); a possessive ``'s`` ends a run;
    * acronyms (``NASA``, ``U.S.``), camel-case names (``iPhone``) and part numbers mixing letters
      and digits (``X-200``, ``PX-7``);
    * title-case text in double quotes (``"Gone with the Wind"``);
    * dates with a month name (``1 March 2010``, ``March 1, 2010``, ``March 2010``).
    Sentence-initial words are names only when they are not stop words and the corpus seen so far
    does not use them mostly in lower case (``However``, ``The``, ``In 1990``, ``Born in ...`` give
    nothing). Lower-case terms are never candidates: precision first.

Types are cheap hints (honorifics, first names, corporate and place cue words, ``in X``, digits,
month names), voted over all mentions; they never take part in identity.

Identity is :func:`normalise_name`. De-duplication beyond it (:class:`MentionMerger`):
    * acronym definitions ``World Health Organization (WHO)`` / ``WHO (World Health
      Organization)`` make the acronym an alias of the long form: for the whole corpus when the
      defining document is public, otherwise only in documents whose every reader may read it;
    * inside one document, a bare surname (``Lovelace``, ``Mr. Lovelace``) resolves to the one
      person-shaped full name of the document that ends with it; if two such people share it the
      mention resolves to nothing (it is dropped); with none it stays an entity of its own;
    * inside one document, a bare part code (``FP-2``) resolves to the one name of the document
      that ends with it (``Feed Pump FP-2``); with two such names it stays an entity of its own;
    * nothing else is merged: ``Paris`` and ``Paris Hilton`` stay distinct, and surnames and
      part codes never match across documents.

RELATED weight is the number of chunks (of the batch) in which both entities are mentioned: an
integer-valued, deterministic, additive count that matches what the writer recomputes from the
graph; pairs are stored once with ``source_id < target_id``.

Modules: :mod:`.models` (the models and the extractor Protocol), :mod:`.wordlists`,
:mod:`.names` (normalisation), :mod:`.resolver` (de-duplication), :mod:`.tokens` (the
tokeniser), :mod:`.extractor` (the rule extractor).
"""

from kgrag.ingest.entities.extractor import RuleEntityExtractor, split_by_document
from kgrag.ingest.entities.models import (
    ENTITY_TYPES,
    EntityExtractor,
    EntityRecord,
    EntityState,
    EntityType,
    ExtractionResult,
    Mention,
    MergerState,
    Relation,
)
from kgrag.ingest.entities.names import normalise_name
from kgrag.ingest.entities.resolver import MentionMerger, display_rank

__all__ = [
    "ENTITY_TYPES",
    "EntityExtractor",
    "EntityRecord",
    "EntityState",
    "EntityType",
    "ExtractionResult",
    "Mention",
    "MentionMerger",
    "MergerState",
    "Relation",
    "RuleEntityExtractor",
    "display_rank",
    "normalise_name",
    "split_by_document",
]
