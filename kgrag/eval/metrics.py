"""Passage recall@k as the HippoRAG papers report it (a passage is its title)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def distinct_titles(ranked: Sequence[str | None]) -> list[str]:
    """Titles in rank order, each once (several chunks of one passage count once)."""
    return list(dict.fromkeys(t for t in ranked if t))


def recall_at_k(ranked_titles: Sequence[str | None], gold: Sequence[str], k: int) -> float:
    """|gold titles among the first k distinct retrieved titles| / |gold titles|."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    top = set(distinct_titles(ranked_titles)[:k])
    return len(wanted & top) / len(wanted)


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]) of a list; 0.0 for an empty one."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else 0.0
