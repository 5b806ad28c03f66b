"""What :class:`~kgrag.agent.agent.KnowledgeAgent` is built from, and the one way to build
those from :class:`~kgrag.config.Settings` (:func:`agent_parts`, used by
``KnowledgeAgent.open``).

Models that are slow to load (the image embedder, Whisper) and the entity extractor are given as
:class:`Provider`\\ s: called the first time they are needed, so a question-only process never
loads them and a misconfiguration is reported when the part is used."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Protocol, TypeVar

from kgrag.agent.limits import QueryLimits
from kgrag.config import Settings
from kgrag.errors import ConfigError
from kgrag.executor.metadata_rerank import RuleBook, load_rule_book
from kgrag.ingest.entities import EntityExtractor
from kgrag.ingest.formats import libreoffice
from kgrag.ingest.pipeline import IngestOptions
from kgrag.llm import LLM, CostMeter, LLMClient, price_table
from kgrag.modalities import factory
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber

__all__ = ["AgentParts", "Provider", "agent_parts", "llm_client"]

T_co = TypeVar("T_co", covariant=True)


class Provider(Protocol[T_co]):
    """Gives the part when called (loading it the first time, e.g. ``functools.cache``)."""

    def __call__(self) -> T_co: ...


@dataclass(frozen=True)
class AgentParts:
    """The keyword arguments of ``KnowledgeAgent(store, text_embedder, ...)`` from settings."""

    text_embedder: TextEmbedder
    image_embedder: Provider[ImageEmbedder]
    transcriber: Provider[Transcriber]
    entity_extractor: Provider[EntityExtractor]
    ingest_options: IngestOptions
    llm: LLM | None
    limits: QueryLimits
    discussed_factor: float
    rerank_rules: RuleBook | None = field(default=None)
    name_seeds: bool = False


def agent_parts(s: Settings) -> AgentParts:
    """The models, the LLM (when ``llm_model`` is set) and the limits ``s`` names."""
    text_embedder = factory.text_embedder(s)
    llm = llm_client(s)
    libreoffice.allow(s.libreoffice != "off")
    return AgentParts(
        text_embedder=text_embedder,
        image_embedder=cache(lambda: factory.image_embedder(s)),
        transcriber=cache(lambda: factory.transcriber(s)),
        entity_extractor=lambda: entity_extractor(s.entity_extractor, llm),
        ingest_options=IngestOptions(
            max_file_bytes=s.max_file_bytes,
            max_media_seconds=s.max_media_seconds,
            chunk_overlap_tokens=s.chunk_overlap_tokens,
            workers=s.workers,
            writers=s.writers,
            image_dir=s.data_dir / "images",
            depicts_threshold=s.depicts_threshold,
            batch_chunks=s.batch_size,
        ),
        llm=llm,
        limits=QueryLimits.from_settings(s),
        discussed_factor=s.discussed_source_factor,
        rerank_rules=_rule_book(s),
        name_seeds=s.name_seeds,
    )


def llm_client(settings: Settings, meter: CostMeter | None = None) -> LLMClient | None:
    """A client for ``settings.llm_model``, or ``None`` when no LLM is configured.

    Without ``meter`` a new one is made with ``settings.llm_budget_usd``."""
    if not settings.llm_model:
        return None
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
    return LLMClient(
        settings.llm_model,
        base_url=settings.openai_base_url,
        api_key=key,
        prices=price_table(settings.llm_prices),
        meter=meter
        if meter is not None
        else CostMeter(settings.llm_budget_usd, settings.llm_max_tokens_per_query),
        timeout_s=settings.llm_timeout_s,
    )


def entity_extractor(kind: str, llm: LLM | None) -> EntityExtractor:
    """The extractor ``Settings.entity_extractor`` names: ``rule`` (offline) or ``llm``."""
    from kgrag.ingest.entities import RuleEntityExtractor

    if kind == "llm":
        from kgrag.ingest.llm_entities import LlmEntityExtractor

        if llm is None:
            raise ConfigError(
                "entity_extractor is 'llm' but no chat model is configured; set "
                "KGRAG_LLM_MODEL (and KGRAG_OPENAI_BASE_URL, KGRAG_OPENAI_API_KEY) "
                "or use 'rule'"
            )
        return LlmEntityExtractor(llm)
    return RuleEntityExtractor()


def _rule_book(s: Settings) -> RuleBook | None:
    if s.rerank_rules is None:
        if s.rerank_ruleset is not None:
            raise ConfigError(
                f"rerank_ruleset is {s.rerank_ruleset!r} but no rule file is configured; set "
                "KGRAG_RERANK_RULES to the TOML file that defines it (docs/reranking.md)"
            )
        return None
    return load_rule_book(s.rerank_rules, default=s.rerank_ruleset)
