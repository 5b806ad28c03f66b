"""Decoding through ffmpeg: the ``ffprobe``/``ffmpeg`` binaries (argument lists, never a shell,
with a time limit) yield 16 kHz mono float32 samples. Reads any container ffmpeg reads: .wav .flac
.mp3 .m4a .ogg, and the audio track of .mp4 .mkv .webm. An input that cannot give audio
(unreadable, truncated, zero-length, a video without an audio track) raises :class:`IngestError`
naming the file."""

from __future__ import annotations

import json
import logging
import math
import os
import select
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kgrag.cancel import CancelToken
from kgrag.cancel import check as check_cancel
from kgrag.errors import (
    IngestError,
    KgragError,
    MediaTooLongError,
)

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


class FfmpegMissingError(KgragError):
    """The ffmpeg/ffprobe binaries are not installed."""

    exit_code = 3

    def __init__(self, binary: str) -> None:
        super().__init__(
            f"the {binary!r} program was not found on PATH; audio and video need ffmpeg: "
            "install it (Debian/Ubuntu: apt-get install ffmpeg; scripts/setup.sh does this)"
        )
        self.binary = binary


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
