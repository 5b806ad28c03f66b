"""The parameters of each step type, and the typed values they are made of (step ids,
identifiers, modalities, node kinds). The steps that carry them, and the plan, are in
:mod:`kgrag.planner.models`."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, ConfigDict, Field, JsonValue, model_validator

from kgrag.core import Frozen
from kgrag.ingest.roff import ROFF_MIME

__all__ = [
    "DOCUMENT_STEP_TYPES",
    "FORMAT_MIMES",
    "STEP_TYPES",
    "AggregateParams",
    "AudioTranscriptionParams",
    "CompareParams",
    "DemoteParams",
    "DocumentAuthorsParams",
    "DocumentDatesParams",
    "DocumentFormat",
    "DocumentModality",
    "DocumentStepType",
    "DocumentSummaryParams",
    "DocumentTypesParams",
    "FilterParams",
    "GraphQueryParams",
    "HopRelationship",
    "ImageEmbeddingParams",
    "ListDocumentsParams",
    "LlmCallParams",
    "MetadataSearchParams",
    "Modality",
    "MultiHopParams",
    "NodeKind",
    "RerankParams",
    "StepId",
    "StepIds",
    "StepParams",
    "StepType",
    "ToolCallParams",
    "VectorSearchParams",
]

Modality = Literal["text", "image", "audio"]
NodeKind = Literal["chunk", "segment", "image", "entity", "document"]
HopRelationship = Literal["MENTIONS", "RELATED", "NEXT"]
"""What a ``multi_hop`` may walk: chunk-entity mentions, entity co-mentions, reading order.
(Images are reached by their own steps: ``image_embedding`` search and ``entity_images``.)"""
"""Relationship types a ``multi_hop`` step may traverse (an allow-list: types are written into
Cypher, where they cannot be parameters)."""
DocumentStepType = Literal[
    "list_documents",
    "document_summary",
    "metadata_search",
    "compare",
    "document_types",
    "document_dates",
    "document_authors",
]
"""The document tools: steps that read documents (their metadata, summaries, types, dates) and
whose result answers a question about the documents themselves (:mod:`kgrag.agent.loop`)."""
StepType = Literal[
    "vector_search",
    "graph_query",
    "multi_hop",
    "filter",
    "rerank",
    "aggregate",
    "llm_call",
    "tool_call",
    DocumentStepType,
    "audio_transcription",
    "image_embedding",
    "demote",
]
STEP_TYPES = frozenset(get_args(StepType))
DOCUMENT_STEP_TYPES: tuple[DocumentStepType, ...] = get_args(DocumentStepType)
"""The document tools, in :data:`StepType`'s order."""

StepId = Annotated[int, Field(ge=1)]
_IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"
_SNAKE_NAME = r"^[a-z][a-z0-9_]*$"
Identifier = Annotated[str, Field(pattern=_IDENTIFIER, max_length=64)]
ParamValue = str | int | float | bool | None | list[str] | list[int] | list[float]
DocumentModality = Literal["text", "pdf", "image", "audio"]
"""A document's type as stored on ``Document.modality``."""
DocumentFormat = Literal[
    "man", "csv", "spreadsheet", "html", "markdown", "json", "yaml", "xml", "toml"
]
"""A text document's format, as stored on ``Document.mime`` (:data:`FORMAT_MIMES`): a man page
is text read from roff; a CSV file a table of comma- or tab-separated values; a spreadsheet one
of those or a workbook; an HTML page; a Markdown file; a JSON, YAML, XML or TOML data file."""
_CSV_MIMES = ("text/csv", "text/tab-separated-values")
FORMAT_MIMES: dict[DocumentFormat, tuple[str, ...]] = {
    "man": (ROFF_MIME,),
    "csv": _CSV_MIMES,
    "spreadsheet": (
        *_CSV_MIMES,
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.oasis.opendocument.spreadsheet",
        "application/vnd.ms-excel",
    ),
    "html": ("text/html",),
    "markdown": ("text/markdown",),
    **{name: (f"application/{name}",) for name in ("json", "yaml", "xml", "toml")},
}
"""The stored MIME types of each :data:`DocumentFormat` (the parser sets roff's on what it
recognises by content, whatever the file's name: :mod:`kgrag.ingest.roff`; the others follow
the file's extension: :mod:`kgrag.ingest.sources`, the data formats'
:data:`~kgrag.ingest.sources.DATA_TEXT_TYPES`)."""
_DATE = r"^\d{4}(?:-\d{2}(?:-\d{2})?)?$"
Term = Annotated[str, Field(min_length=1, max_length=100)]


def _unique(ids: tuple[int, ...]) -> tuple[int, ...]:
    """Drop repeated ids, keeping the first occurrence (order is kept)."""
    return tuple(dict.fromkeys(ids))


StepIds = Annotated[tuple[StepId, ...], AfterValidator(_unique)]
"""Step ids; a repeated id is dropped (harmless, and common in LLM output)."""


class StepParams(Frozen):
    """The parameters of a step; each step type has its own. Its docstring and its fields'
    are the JSON Schema's descriptions, which the LLM planner's prompt lists
    (:mod:`kgrag.planner.step_catalog`)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    def reads(self) -> frozenset[int]:
        """Step ids whose results these parameters read."""
        return frozenset()


class VectorSearchParams(StepParams):
    """Nearest neighbours in one vector index, for a query text or for an earlier step's top
    result (``query_from``: the text of that step's best-ranked result is the query)."""

    query: str | None = Field(default=None, min_length=1)
    query_from: StepId | None = None
    index: Literal["chunk_embedding", "image_embedding", "entity_clip"] = "chunk_embedding"
    """chunk_embedding: text passages and transcript segments; image_embedding: images, through
    the CLIP text encoder (give the step modality "image"); entity_clip: entities, by the CLIP
    text vector of their names."""
    k: int = Field(default=10, ge=1, le=200)

    @model_validator(mode="after")
    def _one_query(self) -> VectorSearchParams:
        if (self.query is None) == (self.query_from is None):
            raise ValueError("give exactly one of 'query' and 'query_from'")
        return self

    def reads(self) -> frozenset[int]:
        return frozenset() if self.query_from is None else frozenset({self.query_from})


class GraphQueryParams(StepParams):
    """A named Cypher template from ``cypher/`` with its parameters. ``inputs`` maps a template
    parameter to a step whose result node ids are passed as a list."""

    template: str = Field(pattern=_SNAKE_NAME, max_length=100)
    """One of the Cypher templates listed below (no other Cypher can run)."""
    params: dict[Identifier, ParamValue] = Field(default_factory=dict)
    """Values of the template's parameters."""
    inputs: dict[Identifier, StepId] = Field(default_factory=dict)
    k: int = Field(default=20, ge=1, le=1000)

    @model_validator(mode="after")
    def _no_overlap(self) -> GraphQueryParams:
        both = sorted(set(self.params) & set(self.inputs))
        if both:
            raise ValueError(f"parameter(s) {', '.join(both)} given both in 'params' and 'inputs'")
        return self

    def reads(self) -> frozenset[int]:
        return frozenset(self.inputs.values())


class MultiHopParams(StepParams):
    """Expand from the result nodes of ``seeds_from`` over ``relationships`` for up to ``hops``
    hops and rank what is reached (personalised PageRank with ``damping``)."""

    seeds_from: StepIds = Field(min_length=1)
    hops: int = Field(default=2, ge=1, le=3)
    relationships: tuple[HopRelationship, ...] = Field(
        default=("MENTIONS", "RELATED"), min_length=1
    )
    """MENTIONS: chunk-entity; RELATED: entity-entity; NEXT: the neighbouring chunks in reading
    order."""
    k: int = Field(default=10, ge=1, le=200)
    damping: float = Field(default=0.85, gt=0.0, lt=1.0)
    max_nodes: int = Field(default=2000, ge=1, le=100_000)

    def reads(self) -> frozenset[int]:
        return frozenset(self.seeds_from)


#: A file name's length at most (most file systems' limit) and how many a step may name.
MAX_FILE_NAME_CHARS = 255
MAX_FILE_NAMES = 20


class FilterParams(StepParams):
    """Keep the results of ``source`` that pass every given test, at most ``k`` of them."""

    source: StepId
    min_score: float | None = None
    kinds: tuple[NodeKind, ...] | None = Field(default=None, min_length=1)
    modality: Modality | None = None
    document_ids: tuple[str, ...] | None = Field(default=None, min_length=1)
    file_names: (
        tuple[Annotated[str, Field(min_length=1, max_length=MAX_FILE_NAME_CHARS)], ...] | None
    ) = Field(default=None, min_length=1, max_length=MAX_FILE_NAMES)
    """Keep the hits of documents whose file name (the URI's last part, any case) is one of
    these ("jfk.flac")."""
    k: int | None = Field(default=None, ge=1, le=1000)

    def reads(self) -> frozenset[int]:
        return frozenset({self.source})


class RerankParams(StepParams):
    """Re-score the union of ``sources`` against ``query`` and keep the best ``k``."""

    sources: StepIds = Field(min_length=1)
    query: str = Field(min_length=1)
    k: int = Field(default=10, ge=1, le=200)
    method: Literal["embedding", "lexical"] = "embedding"
    """embedding: by the query's vector; lexical: by the query's words."""
    rules: str | None = Field(default=None, pattern=_SNAKE_NAME, max_length=64)
    """A rule set of the metadata-aware rerank rule file (``Settings.rerank_rules``): the score
    is then combined with the hits' document metadata (authority, recency, source priority)."""

    def reads(self) -> frozenset[int]:
        return frozenset(self.sources)


class AggregateParams(StepParams):
    """Fuse the rankings of ``sources`` (reciprocal rank fusion by default) into one."""

    sources: StepIds = Field(min_length=1)
    k: int = Field(default=10, ge=1, le=200)
    method: Literal["rrf", "max", "sum"] = "rrf"
    rrf_k: int = Field(default=60, ge=1)
    min_share: float | None = Field(default=None, gt=0.0, le=1.0)
    """Keep only hits whose fused score is at least this share of the best one (with ``rrf``
    and 0.5: when the best hit was found by two sources, hits only one found are dropped)."""
    weights: tuple[Annotated[float, Field(ge=0.0, le=10.0)], ...] | None = None
    """One weight per source (``rrf`` and ``sum``): how much its ranking counts; all 1 when
    not given."""

    @model_validator(mode="after")
    def _one_weight_per_source(self) -> AggregateParams:
        if self.weights is not None and len(self.weights) != len(self.sources):
            raise ValueError(f"{len(self.weights)} weights given for {len(self.sources)} sources")
        return self

    def reads(self) -> frozenset[int]:
        return frozenset(self.sources)


class LlmCallParams(StepParams):
    """Ask the LLM ``prompt`` with the results of ``sources`` as context."""

    prompt: str = Field(min_length=1)
    sources: StepIds = ()
    max_tokens: int = Field(default=512, ge=1, le=32_768)

    def reads(self) -> frozenset[int]:
        return frozenset(self.sources)


class ToolCallParams(StepParams):
    """Call a registered tool with ``arguments``; ``inputs`` maps an argument to a step whose
    result node ids are passed as a list."""

    tool: str = Field(pattern=_SNAKE_NAME, max_length=100)
    """One of the tools listed below."""
    arguments: dict[Identifier, JsonValue] = Field(default_factory=dict)
    inputs: dict[Identifier, StepId] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _no_overlap(self) -> ToolCallParams:
        both = sorted(set(self.arguments) & set(self.inputs))
        if both:
            raise ValueError(
                f"argument(s) {', '.join(both)} given both in 'arguments' and 'inputs'"
            )
        return self

    def reads(self) -> frozenset[int]:
        return frozenset(self.inputs.values())


class ListDocumentsParams(StepParams):
    """Readable documents about ``about`` (terms, lowercased) or mentioning ``entity_ids``,
    matched on document metadata only: title, tags, summary, names of mentioned entities."""

    about: tuple[Term, ...] = Field(min_length=1, max_length=20)
    entity_ids: tuple[Term, ...] = ()
    k: int = Field(default=20, ge=1, le=200)


class DocumentSummaryParams(StepParams):
    """The stored summary of the readable document that ``target`` (a title or a description)
    names best."""

    target: str = Field(min_length=1, max_length=300)
    k: int = Field(default=1, ge=1, le=10)


class MetadataSearchParams(StepParams):
    """Readable documents by metadata: types, tags (every one given), a date range on the
    document's date (a ``date:YYYY-MM-DD`` tag, else when it was ingested); ``about`` optionally
    narrows to documents whose metadata matches those terms."""

    modalities: tuple[DocumentModality, ...] | None = Field(default=None, min_length=1)
    formats: tuple[DocumentFormat, ...] | None = Field(default=None, min_length=1)
    """Text formats (``man``: man pages, ``csv``, ``spreadsheet``, ``html``, ``markdown``,
    ``json``, ``yaml``, ``xml``, ``toml``), matched on the stored MIME type."""
    tags: tuple[Term, ...] | None = Field(default=None, min_length=1)
    authors: tuple[Term, ...] | None = Field(default=None, min_length=1)
    """Names of authors ("Ken Thompson", "Maria"): a document one of whose stored authors holds
    every word of one of them (case-insensitive) matches; a document with no stored author
    never does."""
    date_from: str | None = Field(default=None, pattern=_DATE)
    """YYYY, YYYY-MM or YYYY-MM-DD; inclusive."""
    date_to: str | None = Field(default=None, pattern=_DATE)
    """YYYY, YYYY-MM or YYYY-MM-DD; inclusive, at its own precision: ``2023`` ends with the last
    day of 2023."""
    about: tuple[Term, ...] = ()
    k: int = Field(default=50, ge=1, le=500)

    @model_validator(mode="after")
    def _some_filter(self) -> MetadataSearchParams:
        if not (
            self.modalities
            or self.formats
            or self.tags
            or self.authors
            or self.date_from
            or self.date_to
            or self.about
        ):
            raise ValueError(
                "give at least one of modalities, formats, tags, authors, date_from, date_to, about"
            )
        return self


class DocumentTypesParams(StepParams):
    """How many readable documents there are of each type (``Document.modality``) and, within a
    type, of each stored MIME type: a breakdown of the collection, no listing."""

    k: int = Field(default=50, ge=1, le=500)
    """Types (modality and MIME type pairs) at most, the most common first."""


class DocumentDatesParams(StepParams):
    """The stored dates of the readable document that ``target`` (a title or a description)
    names best: its date (a ``date:YYYY-MM-DD`` tag from the ingestion manifest), the creation
    and modification dates of its own metadata (PDF, Office), its file's modification time and
    when it was ingested."""

    target: str = Field(min_length=1, max_length=300)
    k: int = Field(default=1, ge=1, le=10)


class DocumentAuthorsParams(StepParams):
    """Who wrote the readable document that ``target`` (a title or a description) names best,
    as its own metadata says (a PDF's /Author, an Office or OpenDocument file's creator, an
    HTML page's author meta tag, a message's sender); "no author is stored" when it names none,
    never a guess from its content."""

    target: str = Field(min_length=1, max_length=300)
    k: int = Field(default=1, ge=1, le=10)


class CompareParams(StepParams):
    """Two to four entities or documents side by side: for each side the readable passages of
    the documents it names and those that mention it, nearest ``query`` first."""

    sides: tuple[Annotated[str, Field(min_length=1, max_length=200)], ...] = Field(
        min_length=2, max_length=4
    )
    entity_ids: tuple[Term, ...] = ()
    """Entity ids the sides were resolved to (optional; names are matched too)."""
    k: int = Field(default=3, ge=1, le=20)
    """Passages per side."""
    query: str | None = Field(default=None, max_length=2000)
    """What each side's passages are ranked by (the question); the sides' names when absent."""


# ----------------------------------------------------- attachment parameters (query time)


class AudioTranscriptionParams(StepParams):
    """Transcribe the question's attached recording number ``attachment`` (0-based) with Whisper;
    the result is one hit whose text is the transcript (``vector_search.query_from`` reads it)."""

    attachment: int = Field(default=0, ge=0, le=15)


class ImageEmbeddingParams(StepParams):
    """Embed the question's attached image number ``attachment`` (0-based) with CLIP and return
    the ``k`` most similar stored images (query by example, image to image)."""

    attachment: int = Field(default=0, ge=0, le=15)
    k: int = Field(default=5, ge=1, le=100)


class DemoteParams(StepParams):
    """De-prioritise, never remove: the results of ``source`` from ``document_ids`` (sources
    already cited earlier in the session) have their score multiplied by ``factor``, then the
    list is re-sorted. ``named_again`` lists cited documents the question names again (kept)."""

    source: StepId
    document_ids: tuple[str, ...] = ()
    factor: float = Field(default=0.5, gt=0.0, le=1.0)
    named_again: tuple[str, ...] = ()

    def reads(self) -> frozenset[int]:
        return frozenset({self.source})
