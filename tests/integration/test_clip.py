"""The bundled tiny CLIP model, loaded through OpenClipEmbedder, on drawings it has never seen."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
torch = pytest.importorskip("torch", reason="the image extra (torch) is not installed")
pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")

from kgrag.demo.shapes import COLOURS, SHAPES, caption, draw_shape  # noqa: E402
from kgrag.errors import IngestError  # noqa: E402
from kgrag.modalities.base import ImageEmbedder  # noqa: E402
from kgrag.modalities.clip import TINY_CLIP_MODEL, OpenClipEmbedder, tiny_clip_embedder  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HELD_OUT_SEED = 20_260_101  # differs from the training (1234) and evaluation (98765) seeds
PER_CLASS = 3


@pytest.fixture(scope="module")
def clip() -> OpenClipEmbedder:
    torch.set_num_threads(1)
    return tiny_clip_embedder()


@pytest.fixture(scope="module")
def drawings(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Path]]:
    """PER_CLASS new drawings of every colour x shape, as PNG files: (caption, path)."""
    folder = tmp_path_factory.mktemp("shapes")
    rng = random.Random(HELD_OUT_SEED)
    items = []
    for i in range(PER_CLASS):
        for colour in COLOURS:
            for shape in SHAPES:
                path = folder / f"{colour}-{shape}-{i}.png"
                draw_shape(colour, shape, rng).save(path)
                items.append((caption(colour, shape), path))
    return items


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_text_to_image_retrieval_ranks_a_matching_drawing_first(
    clip: OpenClipEmbedder, drawings: list[tuple[str, Path]]
) -> None:
    image_vectors = clip.embed_images([path for _, path in drawings])
    captions = [caption(c, s) for c in COLOURS for s in SHAPES]
    text_vectors = clip.embed_texts(captions)

    hits = 0
    misses = []
    for text, query in zip(captions, text_vectors, strict=True):
        scores = [_dot(query, v) for v in image_vectors]
        best = max(range(len(scores)), key=scores.__getitem__)
        if drawings[best][0] == text:
            hits += 1
        else:
            misses.append(f"{text!r} -> {drawings[best][1].name}")
    rate = hits / len(captions)
    print(f"text->image top-1: {hits}/{len(captions)} = {rate:.3f}")
    assert rate >= 0.9, f"top-1 retrieval {rate:.2f} < 0.90; misses: {misses}"

    # And the other direction, zero-shot classification of every drawing.
    correct = 0
    for (text, _), vector in zip(drawings, image_vectors, strict=True):
        scores = [_dot(vector, t) for t in text_vectors]
        correct += captions[max(range(len(scores)), key=scores.__getitem__)] == text
    accuracy = correct / len(drawings)
    print(f"zero-shot image->caption accuracy: {correct}/{len(drawings)} = {accuracy:.3f}")
    assert accuracy >= 0.9


def test_vectors_are_unit_length_with_the_declared_dimensions(
    clip: OpenClipEmbedder, drawings: list[tuple[str, Path]]
) -> None:
    assert isinstance(clip, ImageEmbedder)
    assert clip.dimensions == 64
    images = clip.embed_images([path for _, path in drawings[:5]])
    texts = clip.embed_texts(["a red circle", "a blue triangle", "something it never saw"])
    assert len(images) == 5 and len(texts) == 3
    for vector in images + texts:
        assert len(vector) == clip.dimensions
        assert math.isclose(math.sqrt(_dot(vector, vector)), 1.0, abs_tol=1e-4)
    assert clip.embed_images([]) == [] and clip.embed_texts([]) == []


def test_batching_does_not_change_the_vectors(
    clip: OpenClipEmbedder, drawings: list[tuple[str, Path]]
) -> None:
    paths = [path for _, path in drawings[:7]]
    small_batches = tiny_clip_embedder(batch_size=3)
    for a, b in zip(clip.embed_images(paths), small_batches.embed_images(paths), strict=True):
        assert _dot(a, b) == pytest.approx(1.0, abs=1e-5)


def test_model_name_identifies_architecture_and_checkpoint(clip: OpenClipEmbedder) -> None:
    prefix = f"open_clip:{TINY_CLIP_MODEL}@"
    assert clip.model_name.startswith(prefix)
    digest = clip.model_name.removeprefix(prefix)
    assert len(digest) == 16 and int(digest, 16) >= 0


def test_a_truncated_png_raises_ingest_error_naming_the_file(
    clip: OpenClipEmbedder, drawings: list[tuple[str, Path]], tmp_path: Path
) -> None:
    whole = drawings[0][1].read_bytes()
    broken = tmp_path / "broken.png"
    broken.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(IngestError) as info:
        clip.embed_images([drawings[1][1], broken])
    assert info.value.path == str(broken)
    assert "broken.png" in str(info.value)

    not_an_image = tmp_path / "notes.png"
    not_an_image.write_text("this is not a picture", encoding="utf-8")
    with pytest.raises(IngestError, match=r"notes\.png"):
        clip.embed_images([not_an_image])


@pytest.mark.slow
def test_training_script_runs_and_its_checkpoint_loads(tmp_path: Path) -> None:
    out = tmp_path / "tiny"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    args = [sys.executable, str(REPO / "scripts" / "train_tiny_clip.py"), "--out", str(out)]
    args += ["--steps", "3", "--batch-size", "16", "--pool-per-class", "2"]
    args += ["--eval-per-class", "1", "--threads", "1"]
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads((out / "training.json").read_text(encoding="utf-8"))
    assert report["steps"] == 3 and 0.0 <= report["zero_shot_accuracy"] <= 1.0

    embedder = OpenClipEmbedder(
        TINY_CLIP_MODEL,
        out / "open_clip_model.safetensors",
        model_config=out / f"{TINY_CLIP_MODEL}.json",
    )
    assert embedder.dimensions == 64
    # A different checkpoint is a different embedding space, and the name says so.
    assert embedder.model_name != tiny_clip_embedder().model_name
