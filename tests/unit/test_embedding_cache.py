"""The question-path embedding memo: same vectors as the wrapped embedder, fewer calls, bounded."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kgrag.modalities.cache import CachedTextEmbedder


class CountingEmbedder:
    """A deterministic embedder at the protocol boundary that records what it was asked."""

    model_name = "counting"
    dimensions = 2
    max_tokens = 128

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(len(t)), float(sum(map(ord, t)) % 97)] for t in texts]


def test_vectors_equal_the_inner_embedders_and_only_new_texts_are_embedded() -> None:
    inner = CountingEmbedder()
    cached = CachedTextEmbedder(inner)
    first = cached.embed(["a", "bb", "a"])
    assert first == CountingEmbedder().embed(["a", "bb", "a"])
    assert inner.calls == [["a", "bb"]]  # duplicates inside one batch embedded once
    second = cached.embed(["bb", "ccc", "a"])
    assert second == CountingEmbedder().embed(["bb", "ccc", "a"])
    assert inner.calls[-1] == ["ccc"]
    assert (cached.hits, cached.misses) == (3, 3)


def test_the_memo_is_bounded_and_forgets_the_least_recently_used() -> None:
    inner = CountingEmbedder()
    cached = CachedTextEmbedder(inner, max_entries=2)
    cached.embed(["x", "y"])
    cached.embed(["x"])  # x is now the most recent
    cached.embed(["z"])  # evicts y
    inner.calls.clear()
    cached.embed(["x", "y", "z"])
    assert inner.calls == [["y"]]


def test_a_memo_of_no_entries_is_refused() -> None:
    with pytest.raises(ValueError, match="max_entries"):
        CachedTextEmbedder(CountingEmbedder(), max_entries=0)
