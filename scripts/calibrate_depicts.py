"""Calibrate the DEPICTS threshold of the bundled tiny CLIP on new drawings.

Pairs: every new drawing (6 colours x 3 shapes, ``--per-class`` each, a seed the model never saw)
against entity names written the ways a text names such a thing ("Red Circle", "the red circle",
"Red Circle Marker") and against names of other things: the other colours and shapes (hard
negatives) and ordinary names, which is what most entities of a real graph are: a few fixed ones
("Ada Lovelace", "Feed Pump FP-2"...) and ``--names`` entity names that the offline extractor
finds in the MuSiQue passages (``../shared/data/musique_corpus.json`` when present). A pair
depicts when the name names the drawing's colour and shape. Prints the scores' spread and the
chosen threshold as JSON::

    OMP_NUM_THREADS=1 .venv/bin/python scripts/calibrate_depicts.py
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

CALIBRATION_SEED = 4_242_001  # differs from training (1234), evaluation (98765) and tests

NAME_FORMS = ("{C} {S}", "the {c} {s}", "{C} {S} Marker")
OTHER_NAMES = (
    "Ada Lovelace",
    "Feed Pump FP-2",
    "Pressure Valve PV-7",
    "Charles Babbage",
    "London",
    "NASA",
    "March 2010",
    "Analytical Engine",
)


CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "musique_corpus.json"


def corpus_names(
    corpus: Path, limit: int, colours: Sequence[str], shapes: Sequence[str]
) -> list[str]:
    """Up to ``limit`` distinct entity names (spread over the corpus) that name no drawing."""
    if limit <= 0 or not corpus.is_file():
        return []
    from kgrag.ingest.entities import RuleEntityExtractor

    passages = json.loads(corpus.read_text(encoding="utf-8"))
    result = RuleEntityExtractor().extract(
        [(str(i), p["text"]) for i, p in enumerate(passages[:400])]
    )
    names = sorted(
        e.name
        for e in result.entities
        if not any(c in e.id.split() for c in colours) and not any(s in e.id for s in shapes)
    )
    step = max(1, len(names) // limit)
    return names[::step][:limit]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=4)
    parser.add_argument("--min-precision", type=float, default=0.9)
    parser.add_argument("--names", type=int, default=200, help="entity names from the corpus")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()

    import torch

    from kgrag.demo.shapes import COLOURS, SHAPES, draw_shape
    from kgrag.modalities.calibration import LabelledPair, choose_threshold, depicts_scores
    from kgrag.modalities.clip import tiny_clip_embedder

    torch.set_num_threads(1)
    rng = random.Random(CALIBRATION_SEED)
    others = [*OTHER_NAMES, *corpus_names(args.corpus, args.names, COLOURS, SHAPES)]
    names: list[tuple[str, str | None, str | None]] = [(n, None, None) for n in others]
    for colour in COLOURS:
        for shape in SHAPES:
            for form in NAME_FORMS:
                name = form.format(C=colour.title(), S=shape.title(), c=colour, s=shape)
                names.append((name, colour, shape))
    with tempfile.TemporaryDirectory() as tmp:
        pairs = []
        for i in range(args.per_class):
            for colour in COLOURS:
                for shape in SHAPES:
                    path = Path(tmp) / f"{colour}-{shape}-{i}.png"
                    draw_shape(colour, shape, rng).save(path)
                    pairs += [
                        LabelledPair(image=path, name=n, depicts=(c, s) == (colour, shape))
                        for n, c, s in names
                    ]
        scored = depicts_scores(tiny_clip_embedder(), pairs)
    choice = choose_threshold(scored, args.min_precision)
    pos = sorted(s for s, y in scored if y)
    neg = sorted(s for s, y in scored if not y)

    def q(xs: list[float], f: float) -> float:
        return round(xs[min(len(xs) - 1, int(f * len(xs)))], 4)

    out = {
        "model": "kgrag-tiny-clip",
        "pairs": len(scored),
        "names": len(names),
        "depicting": {"min": q(pos, 0), "p10": q(pos, 0.1), "median": q(pos, 0.5)},
        "not_depicting": {"median": q(neg, 0.5), "p99": q(neg, 0.99), "max": q(neg, 1.0)},
        "choice": choice.model_dump(),
    }
    sys.stdout.write(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
