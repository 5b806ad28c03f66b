"""Regenerate kgrag/planner/intents/model.npz from kgrag/planner/intents/train.jsonl.

Deterministic (zero-initialised full-batch gradient descent over all-MiniLM-L6-v2 embeddings);
a few seconds on a CPU. Run after editing train.jsonl:

    PYTHONPATH=. python scripts/train_intents.py
"""

from __future__ import annotations

from kgrag.planner.intent import MODEL_FILE, _bundled_embedder, data_path, train_model


def main() -> None:
    model = train_model(_bundled_embedder().embed)
    path = data_path(MODEL_FILE)
    model.save(path)
    print(f"wrote {path}: threshold {model.threshold}, training set {model.data_sha256[:12]}")


if __name__ == "__main__":
    main()
