"""CLIP image and text embeddings through open_clip.

:class:`OpenClipEmbedder` implements :class:`kgrag.modalities.base.ImageEmbedder` for any open_clip
architecture and weights: a built-in name with a pretrained tag (``"ViT-B-32"``,
``"laion2b_s34b_b79k"``), or a checkpoint file, optionally with a custom model config JSON.
:func:`tiny_clip_embedder` loads the small CLIP model that ships inside kgrag
(``kgrag/assets/tiny_clip``, trained by ``scripts/train_tiny_clip.py`` on drawn coloured shapes),
which the tests and the demo use because no CLIP weights can be downloaded where kgrag is built.

torch and open_clip are imported lazily; without them a :class:`DependencyMissingError` names the
``image`` extra.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from PIL import Image

from kgrag import metrics
from kgrag.errors import ConfigError, DependencyMissingError, IngestError, ModelError

__all__ = [
    "DEFAULT_DEPICTS_THRESHOLD",
    "TINY_CLIP_MODEL",
    "OpenClipEmbedder",
    "tiny_clip_embedder",
]

log = logging.getLogger(__name__)

#: The open_clip model name of the bundled tiny CLIP (its config file is ``<name>.json``).
TINY_CLIP_MODEL = "kgrag-tiny-clip"
_TINY_CLIP_CHECKPOINT = "open_clip_model.safetensors"

#: Store score (``(1 + cos) / 2``) at or above which an image DEPICTS an entity, calibrated for
#: the bundled tiny CLIP by ``scripts/calibrate_depicts.py`` (see
#: :mod:`kgrag.modalities.calibration`): 72 new drawings against 262 entity names (the 18
#: colour-shape names in three forms, 8 fixed names, 254 names found in the MuSiQue passages),
#: 18,864 pairs; max F1 with precision >= 0.9 gave 0.9388: precision 0.944, recall 0.852.
#: Depicting pairs score 0.85-0.99 (median 0.96); others a median 0.48, but out-of-vocabulary
#: names land anywhere in the tiny model's text space (99th percentile 0.89, max 0.96), hence
#: the high bar. Another CLIP model needs its own calibration (``KGRAG_DEPICTS_THRESHOLD``).
DEFAULT_DEPICTS_THRESHOLD = 0.939
_IMAGE_READ_ERRORS = (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError)


def _import_open_clip() -> tuple[Any, Any]:
    try:
        import open_clip
        import torch
    except ImportError as e:
        raise DependencyMissingError("open_clip_torch", "image") from e
    return open_clip, torch


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class OpenClipEmbedder:
    """Images and texts into one CLIP space, with open_clip.

    Args:
        model_name: an open_clip architecture: a built-in one (``"ViT-B-32"``) or, with
            ``model_config``, a custom one.
        pretrained: a pretrained tag open_clip knows (``"laion2b_s34b_b79k"``; downloading it
            needs network access) or the path of a checkpoint file (``.safetensors``, ``.pt``,
            ``.bin``).
        model_config: a custom open_clip model config JSON (keys ``embed_dim``, ``vision_cfg``,
            ``text_cfg``), named ``<model_name>.json``; it is registered with open_clip first.
        device: the torch device to run on.
        batch_size: how many images or texts go through the model at once.

    Raises:
        DependencyMissingError: torch or open_clip is not installed.
        ConfigError: the model config file is missing, invalid, or named for another model.
        ModelError: open_clip could not build the model or load the weights.
    """

    def __init__(
        self,
        model_name: str,
        pretrained: str | Path,
        model_config: Path | None = None,
        device: str = "cpu",
        batch_size: int = 32,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"CLIP batch_size must be at least 1, got {batch_size}")
        open_clip, torch = _import_open_clip()
        self._torch = torch
        self._batch_size = batch_size
        if model_config is not None:
            _register_model_config(open_clip, model_name, Path(model_config))

        checkpoint = Path(pretrained)
        if checkpoint.is_file():
            weights = f"{_sha256(checkpoint)[:16]}"
            source = str(checkpoint)
        else:
            weights = str(pretrained)
            source = str(pretrained)
        self._model_name = f"open_clip:{model_name}@{weights}"

        try:
            self._device = torch.device(device)
            with metrics.model_load("image"):
                model, _, preprocess = open_clip.create_model_and_transforms(
                    model_name, pretrained=source, device=self._device
                )
            self._tokenizer = open_clip.get_tokenizer(model_name)
        except Exception as e:  # open_clip raises RuntimeError, ValueError, OSError, KeyError...
            raise ModelError(
                f"could not load open_clip model {model_name!r} with weights {source!r}: {e}; "
                "check the model name, that the checkpoint matches it, and that a pretrained "
                "tag can be downloaded from here"
            ) from e
        model.eval()
        self._model = model
        self._preprocess = preprocess
        config = open_clip.get_model_config(model_name)
        if config is not None and "embed_dim" in config:
            self._dimensions = int(config["embed_dim"])
        else:  # pragma: no cover - every open_clip config names its embed_dim
            self._dimensions = len(self.embed_texts(["a"])[0])
        log.info("loaded CLIP %s (%d dimensions) on %s", self._model_name, self._dimensions, device)

    @property
    def model_name(self) -> str:
        """``open_clip:<architecture>@<pretrained tag or checkpoint sha256 prefix>``."""
        return self._model_name

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed_images(self, paths: Sequence[Path]) -> list[list[float]]:
        """One unit-length vector per image file, in order.

        Raises:
            IngestError: a file cannot be read as an image (missing, truncated, not an image).
        """
        vectors: list[list[float]] = []
        for start in range(0, len(paths), self._batch_size):
            batch = paths[start : start + self._batch_size]
            pixels = self._torch.stack([self._preprocess(_load_rgb(Path(p))) for p in batch])
            vectors.extend(self._encode(self._model.encode_image, pixels))
        return vectors

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in the same space as the images.

        Texts longer than the model's context are truncated by its tokenizer.
        """
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            tokens = self._tokenizer(list(texts[start : start + self._batch_size]))
            vectors.extend(self._encode(self._model.encode_text, tokens))
        return vectors

    def _encode(self, encode: Any, batch: Any) -> list[list[float]]:
        torch = self._torch
        try:
            with torch.inference_mode():
                features = encode(batch.to(self._device)).float()
                features = torch.nn.functional.normalize(features, dim=-1)
        except RuntimeError as e:
            raise ModelError(f"CLIP model {self._model_name} failed to encode a batch: {e}") from e
        result: list[list[float]] = features.cpu().tolist()
        return result


def _register_model_config(open_clip: Any, model_name: str, path: Path) -> None:
    """Make ``model_name`` known to open_clip from ``path`` (once; a changed file re-registers)."""
    if path.stem != model_name:
        raise ConfigError(
            f"the open_clip model config {path} must be named {model_name}.json: open_clip "
            "registers a config file under its file name"
        )
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read the open_clip model config {path}: {e}") from e
    missing = [k for k in ("embed_dim", "vision_cfg", "text_cfg") if k not in config]
    if missing:
        raise ConfigError(f"the open_clip model config {path} lacks {', '.join(missing)}")
    if open_clip.get_model_config(model_name) != config:
        open_clip.add_model_config(path)


def _load_rgb(path: Path) -> Image.Image:
    """Read an image file fully and return it as RGB (transparency over white)."""
    try:
        with Image.open(path) as image:
            image.load()
            if image.mode in ("RGBA", "LA") or (image.mode == "P" and "transparency" in image.info):
                rgba = image.convert("RGBA")
                background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                return Image.alpha_composite(background, rgba).convert("RGB")
            return image.convert("RGB")
    except _IMAGE_READ_ERRORS as e:
        raise IngestError(str(path), f"cannot read the image: {e}") from e


def tiny_clip_embedder(device: str = "cpu", batch_size: int = 32) -> OpenClipEmbedder:
    """The tiny CLIP model bundled with kgrag (64-d; trained on drawn coloured shapes).

    It knows six colours and three shapes (see :mod:`kgrag.demo.shapes`) and nothing else: a test
    and demo model, not one for real photographs.
    """
    root = resources.files("kgrag").joinpath("assets", "tiny_clip")
    config = root.joinpath(f"{TINY_CLIP_MODEL}.json")
    checkpoint = root.joinpath(_TINY_CLIP_CHECKPOINT)
    if not (config.is_file() and checkpoint.is_file()):
        raise ModelError(
            "the bundled tiny CLIP model is missing from kgrag/assets/tiny_clip; "
            "recreate it with: python scripts/train_tiny_clip.py"
        )
    with resources.as_file(config) as config_path, resources.as_file(checkpoint) as ckpt_path:
        return OpenClipEmbedder(
            TINY_CLIP_MODEL,
            ckpt_path,
            model_config=config_path,
            device=device,
            batch_size=batch_size,
        )
