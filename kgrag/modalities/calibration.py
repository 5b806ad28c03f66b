"""Calibration of the ``DEPICTS`` threshold: when is an image-to-entity-name CLIP score a link?

The graph writer links an image to an entity when the score of the entity name's CLIP text vector
against the image vector, as the store reports it (``vector_entity_clip``: a similarity
``(1 + cos) / 2`` in [0, 1] on both engines), is at least the threshold. :func:`depicts_scores`
scores labelled (image, name) pairs with a real CLIP model; :func:`choose_threshold` picks the
threshold from them. ``scripts/calibrate_depicts.py`` runs both on new drawings with the bundled
tiny CLIP; its result is :data:`kgrag.modalities.clip.DEFAULT_DEPICTS_THRESHOLD`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

from kgrag.core import Frozen
from kgrag.modalities.base import ImageEmbedder


class LabelledPair(Frozen):
    """One (image, entity name) pair and whether the image depicts what the name names."""

    image: Path
    name: str
    depicts: bool


class ThresholdChoice(Frozen):
    """The chosen threshold and how it does on the pairs it was chosen from."""

    threshold: float
    precision: float
    recall: float
    f1: float
    positives: int
    negatives: int
    rule: str


def store_score(cosine: float) -> float:
    """The score the store reports for a cosine similarity (``vector_entity_clip``)."""
    return (1.0 + cosine) / 2.0


def depicts_scores(
    embedder: ImageEmbedder, pairs: Sequence[LabelledPair]
) -> list[tuple[float, bool]]:
    """``(store score, depicts)`` for each pair, scored with ``embedder`` (images and names are
    embedded once each)."""
    images = sorted({p.image for p in pairs})
    names = sorted({p.name for p in pairs})
    image_vec = dict(zip(images, embedder.embed_images(images), strict=True))
    name_vec = dict(zip(names, embedder.embed_texts(names), strict=True))
    out = []
    for p in pairs:
        cos = sum(a * b for a, b in zip(image_vec[p.image], name_vec[p.name], strict=True))
        out.append((store_score(cos), p.depicts))
    return out


def choose_threshold(
    scored: Sequence[tuple[float, bool]], min_precision: float = 0.9
) -> ThresholdChoice:
    """The threshold with the best F1 among those whose precision is at least ``min_precision``
    (the best-F1 threshold if none reaches it). Candidates are midpoints between consecutive
    distinct scores, so the choice does not sit on a training point."""
    positives = sum(1 for _, y in scored if y)
    negatives = len(scored) - positives
    if positives == 0 or negatives == 0:
        raise ValueError("calibration needs both depicting and non-depicting pairs")
    values = sorted({s for s, _ in scored})
    candidates = [(a + b) / 2 for a, b in pairwise(values)] or values
    best: tuple[tuple[bool, float, float], ThresholdChoice] | None = None
    for t in candidates:
        tp = sum(1 for s, y in scored if y and s >= t)
        fp = sum(1 for s, y in scored if not y and s >= t)
        if tp == 0:
            continue
        precision = tp / (tp + fp)
        recall = tp / positives
        f1 = 2 * precision * recall / (precision + recall)
        key = (precision >= min_precision, f1, -t)
        choice = ThresholdChoice(
            threshold=round(t, 4),
            precision=round(precision, 4),
            recall=round(recall, 4),
            f1=round(f1, 4),
            positives=positives,
            negatives=negatives,
            rule=f"max F1 subject to precision >= {min_precision}",
        )
        if best is None or key > best[0]:
            best = (key, choice)
    if best is None:
        raise ValueError("no threshold keeps any depicting pair")
    return best[1]
