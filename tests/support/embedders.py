"""The real text model seen through a wrapper: one that cannot embed (a broken install) and
one that counts the texts it is given."""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.errors import ModelError
from kgrag.modalities.base import TextEmbedder

__all__ = ["CountingEmbedder", "UnavailableEmbedder"]


class _Wrapped:
    """``inner``'s name, dimensions and tokenizer, and its embeddings."""

    def __init__(self, inner: TextEmbedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        self.max_tokens = inner.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.inner.embed(texts)


class UnavailableEmbedder(_Wrapped):
    """A text model that cannot embed: every vector search fails (what the rule plan meets
    when the search finds nothing or the model is broken)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ModelError("the text model is unavailable")


class CountingEmbedder(_Wrapped):
    """The real text model, recording every text it is given in ``given``."""

    def __init__(self, inner: TextEmbedder) -> None:
        super().__init__(inner)
        self.given: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.given.extend(texts)
        return self.inner.embed(texts)
