"""Per-document summaries, computed at ingestion and stored on the ``Document`` (``summary``).

Offline (the default) a summary is extractive: a short document is its lead sentences; a longer
one is its most *central* sentences, in document order, where a sentence's centrality is the
cosine similarity of its text embedding (MiniLM by default) to the mean embedding of the
document's sentences (the degree centrality of the sentence-similarity graph, up to a constant).
Audio documents are summarised from their transcript the same way; an image document by its
caption. With an LLM configured, the LLM writes the summary from the opening of the text and the
extractive one is the fallback when the call fails. Summaries are bounded (``max_chars``).

The listing and summary tools (``list_documents``, ``document_summary``) read these summaries.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kgrag.ingest.records import ChunkRecord, ImageRecord
from kgrag.llm.prompts import render_prompt
from kgrag.modalities.base import TextEmbedder
from kgrag.text.contents import without_contents_lines
from kgrag.text.sentences import simple_sentences

if TYPE_CHECKING:
    from kgrag.llm import LLM

__all__ = ["Summariser", "extractive_summary", "silent_recording_summary"]

log = logging.getLogger(__name__)

MAX_CHARS = 500
"""Longest summary kept, in characters (cut at a word boundary, marked with an ellipsis)."""
SUMMARY_SENTENCES = 3
"""At most this many sentences make a summary."""
LEAD_SENTENCES = 6
"""A document of at most this many sentences is summarised by its lead (no embedding)."""
MAX_EMBEDDED_SENTENCES = 96
"""Centrality is computed over at most this many sentences, spread evenly over the document."""
MAX_SENTENCE_CHARS = 300
"""Longer sentences are no candidates in a long document (and are cut to this to be embedded)."""
MIN_SENTENCE_WORDS = 6
"""Shorter sentences (headings, captions) are no candidates in a long document that has others."""
LLM_INPUT_CHARS = 6000
_SPACE = re.compile(r"\s+")


def _bounded(text: str, max_chars: int) -> str:
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= max_chars:
        return text
    cut = text.rfind(" ", 0, max_chars - 1)
    return text[: cut if cut > 0 else max_chars - 1].rstrip(" ,;:") + " …"


def silent_recording_summary(duration_s: float) -> str:
    """The summary of a recording in which no speech was recognised (a tone, music, silence):
    what a listing says of it, since it has no transcript to summarise."""
    whole = round(duration_s)
    length = f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"
    return f"Recording of {length}: no speech was recognised."


def extractive_summary(
    sentences: Sequence[str], embedder: TextEmbedder | None, max_chars: int = MAX_CHARS
) -> str | None:
    """The lead sentences of a short text, else its most central sentences in document order,
    at most ``max_chars`` characters. Deterministic for a given embedder."""
    sentences = [s for s in sentences if len(s) > 1]
    if not sentences:
        return None
    short = len(sentences) <= LEAD_SENTENCES
    if not short:  # run-on "sentences" (tables, code, lists) make no summary
        sentences = [s for s in sentences if len(s) <= MAX_SENTENCE_CHARS] or sentences
        # nor do headings ("Grant of Copyright License."), which a long text repeats
        sentences = [s for s in sentences if len(s.split()) >= MIN_SENTENCE_WORDS] or sentences
    if short or embedder is None:
        return _take_in_order(sentences, range(len(sentences)), max_chars)
    # spread the embedded sample evenly over a long document (a book's first pages are no summary)
    step = max(1, -(-len(sentences) // MAX_EMBEDDED_SENTENCES))
    sample = list(range(0, len(sentences), step))[:MAX_EMBEDDED_SENTENCES]
    texts = [sentences[i][:MAX_SENTENCE_CHARS] for i in sample]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0.0, 1.0, norms)
    centroid = vectors.mean(axis=0)
    centrality = vectors @ centroid
    order = sorted(range(len(sample)), key=lambda j: (-float(centrality[j]), j))
    return _take_in_order(sentences, [sample[j] for j in order], max_chars)


def _take_in_order(sentences: Sequence[str], ranked: Sequence[int] | range, max_chars: int) -> str:
    """At most :data:`SUMMARY_SENTENCES` sentences by rank while they fit in ``max_chars`` (the
    first always, bounded), shown in document order."""
    chosen: list[int] = []
    seen: set[str] = set()
    used = 0
    for i in ranked:
        size = len(sentences[i]) + (1 if chosen else 0)
        key = " ".join(sentences[i].lower().split())
        if key in seen or (chosen and used + size > max_chars):
            continue
        seen.add(key)
        chosen.append(i)
        used += size
        if used >= max_chars or len(chosen) == SUMMARY_SENTENCES:
            break
    return _bounded(" ".join(sentences[i] for i in sorted(chosen)), max_chars)


class Summariser:
    """Makes the summary of one document at ingestion (see the module docstring)."""

    def __init__(
        self,
        embedder: TextEmbedder | None,
        llm: LLM | None = None,
        *,
        max_chars: int = MAX_CHARS,
    ) -> None:
        self.embedder = embedder
        self.llm = llm
        self.max_chars = max_chars

    def summarise(
        self,
        title: str,
        modality: str,
        chunks: Sequence[ChunkRecord],
        images: Sequence[ImageRecord] = (),
    ) -> str | None:
        """The document's summary, or ``None`` when it has nothing to summarise."""
        # a manual's contents and index pages name every topic in a few lines: the most central
        # "sentences" of any long document that has them, and no summary of it
        text = " ".join(
            without_contents_lines(c.text) for c in sorted(chunks, key=lambda c: c.position)
        )
        if not text.strip():
            return self._images_only(title, images)
        if self.llm is not None:
            summary = self._llm_summary(title, modality, text)
            if summary:
                return summary
        summary = extractive_summary(simple_sentences(text), self.embedder, self.max_chars)
        if summary and modality == "audio":
            return _bounded(f"Recording: {summary}", self.max_chars)
        return summary

    def _images_only(self, title: str, images: Sequence[ImageRecord]) -> str | None:
        captions = list(dict.fromkeys(i.caption.strip() for i in images if i.caption))
        if captions:
            return _bounded("Image: " + "; ".join(captions), self.max_chars)
        if images:
            first = images[0]
            return f"Image {title} ({first.width}x{first.height} px)."
        return None

    def _llm_summary(self, title: str, modality: str, text: str) -> str | None:
        from kgrag.llm import ChatMessage, LLMError

        assert self.llm is not None
        kind = "recording transcript" if modality == "audio" else "document"
        messages = [
            ChatMessage(
                role="system",
                content=render_prompt(
                    "kgrag.ingest", "summary_system", kind=kind, max_chars=self.max_chars
                ),
            ),
            ChatMessage(role="user", content=f"Title: {title}\n\n{text[:LLM_INPUT_CHARS]}"),
        ]
        try:
            result = self.llm.chat(messages, max_tokens=200)
        except LLMError as e:
            log.warning("LLM summary failed (%s); using the extractive summary", e)
            return None
        summary = result.text.strip()
        return _bounded(summary, self.max_chars) if summary else None
