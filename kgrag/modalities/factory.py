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

    backend = _text_backend(settings)
    if backend == "onnx":
        from kgrag.modalities.text_onnx import onnx_text_embedder

        return onnx_text_embedder(onnx_model_path(settings), setting="KGRAG_MODEL_CACHE")
    if settings.text_model:
        path = Path(settings.text_model)
        return SentenceTransformerEmbedder(path if path.exists() else settings.text_model)
    return default_text_embedder()


def onnx_model_path(settings: Settings) -> Path:
    """Where the all-MiniLM-L6-v2 ONNX file is, or is built: ``<data_dir>/models`` when it holds
    the file, else the model cache (``settings.model_cache``, default ``~/.cache/kgrag/models``)."""
    from kgrag.modalities.text_onnx import ONNX_FILE_NAME, default_model_cache

    local = settings.data_dir / "models" / ONNX_FILE_NAME
    if local.is_file():
        return local
    return (settings.model_cache or default_model_cache()) / ONNX_FILE_NAME


def _text_backend(settings: Settings) -> str:
    """``torch`` or ``onnx`` for the local text model (``auto`` resolved)."""
    backend = settings.text_backend
    if backend == "onnx" and settings.text_model:
        raise ConfigError(
            "KGRAG_TEXT_BACKEND=onnx runs only the bundled all-MiniLM-L6-v2; unset "
            f"KGRAG_TEXT_MODEL ({settings.text_model!r}) or set KGRAG_TEXT_BACKEND=torch"
        )
    if backend != "auto":
        return backend
    if settings.text_model:
        return "torch"
    from kgrag.modalities.text_onnx import onnx_available

    return "onnx" if onnx_available(onnx_model_path(settings)) else "torch"


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
