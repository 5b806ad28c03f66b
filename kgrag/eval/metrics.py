"""Passage recall@k as the HippoRAG papers report it (a passage is its title)."""

from __future__ import annotations

from collections.abc import Sequence


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
    """Linear-interpolated percentile (q in [0, 100]) of a non-empty list."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
