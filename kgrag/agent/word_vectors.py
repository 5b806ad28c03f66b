"""Single words' embeddings, kept between questions.

The names-alone gate (:mod:`kgrag.agent.relation`) embeds the words a question asks with and the
words of the evidence sentences holding its name, one word each: up to ~130 words a question, and
the same words (a corpus's recurring vocabulary, a question's wording asked again) come back from
question to question. Each word is embedded once per text model and kept, least recently used
first out, up to :data:`CACHED_WORDS` words (384 floats each: about 30 MB at the bound).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from kgrag.modalities.base import TextEmbedder

__all__ = ["CACHED_WORDS", "word_vectors"]

#: Words kept (over all text models) before the least recently used one is dropped.
CACHED_WORDS = 20_000

_kept: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_lock = threading.Lock()


def word_vectors(words: Sequence[str], embedder: TextEmbedder) -> np.ndarray:
    """The embeddings of ``words`` (one row each, in order) by ``embedder``; only the words not
    embedded by that model before are given to it."""
    model = embedder.model_name
    found: dict[str, np.ndarray] = {}
    with _lock:
        for word in dict.fromkeys(words):
            vector = _kept.get((model, word))
            if vector is not None:
                _kept.move_to_end((model, word))
                found[word] = vector
    missing = [w for w in dict.fromkeys(words) if w not in found]
    if missing:
        embedded = np.asarray(embedder.embed(missing), dtype=np.float32)
        with _lock:
            for word, vector in zip(missing, embedded, strict=True):
                found[word] = vector
                _kept[(model, word)] = vector
                _kept.move_to_end((model, word))
            while len(_kept) > CACHED_WORDS:
                _kept.popitem(last=False)
    if not words:
        return np.zeros((0, embedder.dimensions), dtype=np.float32)
    return np.stack([found[w] for w in words])
