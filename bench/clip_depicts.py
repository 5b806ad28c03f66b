"""The bundled tiny CLIP: zero-shot accuracy on held-out drawings and the DEPICTS calibration.

Zero-shot: the drawings ``scripts/train_tiny_clip.py`` held out (25 per class of 6 colours x 3
shapes, its ``--eval-seed`` 98765, drawn in the same order), embedded by kgrag's own embedder
(:func:`kgrag.modalities.clip.tiny_clip_embedder`, the path ingestion takes), each classified as
the caption ("a red circle") with the highest cosine. DEPICTS: ``scripts/calibrate_depicts.py``
(new drawings against entity names, the threshold with the best F1 at precision >= 0.9), run as it
is, beside the threshold kgrag ships (:data:`kgrag.modalities.clip.DEFAULT_DEPICTS_THRESHOLD`).
Writes ``bench/results/clip_depicts.json``::

    OMP_NUM_THREADS=1 .venv/bin/python bench/clip_depicts.py
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import ROOT, write_result

os.environ.setdefault("OMP_NUM_THREADS", "1")

#: scripts/train_tiny_clip.py's held-out drawings: its --eval-seed and --eval-per-class.
EVAL_SEED = 98765
EVAL_PER_CLASS = 25


def zero_shot() -> dict[str, Any]:
    import numpy as np

    from kgrag.demo.shapes import COLOURS, SHAPES, caption, draw_shape
    from kgrag.modalities.clip import tiny_clip_embedder

    classes = [(c, s) for c in COLOURS for s in SHAPES]
    rng = random.Random(EVAL_SEED)  # noqa: S311 - drawings, not secrets
    embedder = tiny_clip_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        paths, labels = [], []
        for i in range(EVAL_PER_CLASS):
            for label, (colour, shape) in enumerate(classes):
                path = Path(tmp) / f"{i}-{label}.png"
                draw_shape(colour, shape, rng).save(path)
                paths.append(path)
                labels.append(label)
        images = np.asarray(embedder.embed_images(paths))
    texts = np.asarray(embedder.embed_texts([caption(c, s) for c, s in classes]))
    predicted = (images @ texts.T).argmax(axis=1)
    correct = int((predicted == np.asarray(labels)).sum())
    return {
        "drawings": len(labels),
        "classes": len(classes),
        "correct": correct,
        "accuracy": round(correct / len(labels), 4),
    }


def calibration() -> dict[str, Any]:
    found = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "calibrate_depicts.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(found.stdout)
    return result


def main() -> int:
    from kgrag.modalities.clip import DEFAULT_DEPICTS_THRESHOLD

    write_result(
        "clip_depicts",
        {
            "zero_shot": zero_shot(),
            "depicts_calibration": calibration(),
            "shipped_threshold": DEFAULT_DEPICTS_THRESHOLD,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
