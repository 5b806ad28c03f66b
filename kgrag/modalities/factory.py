"""Builds model providers from Settings. The only place that maps configuration to providers."""

from __future__ import annotations

from pathlib import Path

from kgrag.config import Settings
from kgrag.errors import ConfigError
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber


def text_embedder(settings: Settings) -> TextEmbedder:
    if settings.text_embedder == "openai":
        from kgrag.modalities.text import OpenAIEmbedder

        return OpenAIEmbedder(
            model=settings.text_model or "text-embedding-3-small",
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
        )
    from kgrag.modalities.text import SentenceTransformerEmbedder, default_text_embedder

    if settings.text_model:
        path = Path(settings.text_model)
        return SentenceTransformerEmbedder(path if path.exists() else settings.text_model)
    return default_text_embedder()


def image_embedder(settings: Settings) -> ImageEmbedder:
    from kgrag.modalities.clip import OpenClipEmbedder, tiny_clip_embedder

    if settings.image_model == "kgrag-tiny-clip":
        return tiny_clip_embedder()
    if not settings.image_pretrained:
        raise ConfigError(
            f"image model {settings.image_model!r} needs KGRAG_IMAGE_PRETRAINED (an open_clip "
            "pretrained tag or a checkpoint path)"
        )
    return OpenClipEmbedder(settings.image_model, settings.image_pretrained)


def transcriber(settings: Settings) -> Transcriber:
    from kgrag.modalities.audio import auto_transcriber

    return auto_transcriber(
        settings.transcriber, settings.whisper_model, max_media_seconds=settings.max_media_seconds
    )
