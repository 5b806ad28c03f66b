"""A bounded, thread-safe memo of text embeddings for the question path.

Answering a question embeds the same texts again and again: the question in every iteration of
the retrieval loop, each evidence sentence when the extractive answer is chosen, and once more
when groundedness checks the chosen sentences against their sources. Evidence sentences also recur
across questions about the same documents. The memo keeps the most recently used vectors (an LRU
bounded by entry count) and sends only the texts it has not seen to the wrapped embedder, in one
batch, in their original order.

Ingestion does not use it: each text is embedded once there, and memoising a whole corpus would
only hold memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from kgrag.modalities.base import TextEmbedder

DEFAULT_MAX_ENTRIES = 20_000
"""About 30 MB of 384-d float vectors as Python lists."""


class CachedTextEmbedder:
    """A :class:`TextEmbedder` that remembers the vectors of the last ``max_entries`` texts."""

    def __init__(self, inner: TextEmbedder, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.inner = inner
        self.max_entries = max_entries
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        found: dict[str, list[float]] = {}
        with self._lock:
            for text in texts:
                vector = self._vectors.get(text)
                if vector is not None:
                    self._vectors.move_to_end(text)
                    found[text] = vector
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = self.inner.embed(missing)
            found.update(zip(missing, fresh, strict=True))
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    self._vectors[text] = vector
                    self._vectors.move_to_end(text)
                while len(self._vectors) > self.max_entries:
                    self._vectors.popitem(last=False)
        with self._lock:
            self.hits += len(texts) - len(missing)
            self.misses += len(missing)
        return [found[t] for t in texts]
