"""Offline synthesis: an extractive answer made of the best-supported sentences of the evidence,
each with its numbered citation, and saying plainly that it is extractive."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from kgrag.agent.answer import Citation
from kgrag.executor.hits import Hit
from kgrag.ingest.chunking import split_sentences
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.rule import key_terms


def source_label(hit: Hit) -> str:
    """ "(Source: file, p. 4)" / "(Source: file, 00:12–00:19)"."""
    name = hit.title or (hit.uri.rsplit("/", 1)[-1] if hit.uri else hit.id)
    if hit.start_s is not None and hit.end_s is not None:
        return f"(Source: {name}, {_clock(hit.start_s)}–{_clock(hit.end_s)})"
    if hit.page is not None:
        return f"(Source: {name}, p. {hit.page})"
    return f"(Source: {name})"


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 60:02d}:{s % 60:02d}"


def citation_for(marker: int, hit: Hit) -> Citation:
    return Citation(
        marker=marker,
        document_id=hit.document_id,
        title=hit.title,
        uri=hit.uri,
        page=hit.page,
        start_s=hit.start_s,
        end_s=hit.end_s,
        node_id=hit.id,
        kind=hit.kind,
        image_uri=hit.image_uri,
        excerpt=(hit.text or "")[:300] or None,
    )


def extractive_answer(
    question: str,
    evidence: Sequence[Hit],
    images: Sequence[Hit],
    embedder: TextEmbedder,
    *,
    max_sentences: int = 3,
) -> tuple[str, list[Citation]]:
    """Pick the sentences of the evidence that best answer the question."""
    candidates: list[tuple[str, Hit, int]] = []
    for rank, hit in enumerate(evidence):
        text = hit.text or ""
        for start, end in split_sentences(text):
            sentence = re.sub(r"\s+", " ", text[start:end]).strip()
            if len(sentence) >= 12:
                candidates.append((sentence, hit, rank))
    citations: list[Citation] = []
    lines: list[str] = []
    if candidates:
        vectors = np.asarray(embedder.embed([question] + [c[0] for c in candidates]))
        semantic = vectors[1:] @ vectors[0]
        terms = set(key_terms(question))
        lexical = np.asarray(
            [len(terms & set(key_terms(c[0]))) / (1 + len(terms)) for c in candidates]
        )
        prior = np.asarray([1.0 / (1 + c[2]) for c in candidates])
        score = semantic + 0.5 * lexical + 0.1 * prior
        chosen: list[int] = []
        for i in np.argsort(-score, kind="stable"):
            if len(chosen) >= max_sentences:
                break
            if any(candidates[j][0] == candidates[i][0] for j in chosen):
                continue
            chosen.append(int(i))
        markers: dict[str, int] = {}
        for i in sorted(chosen, key=lambda j: -score[j]):
            sentence, hit, _ = candidates[i]
            if hit.id not in markers:
                markers[hit.id] = len(markers) + 1
                citations.append(citation_for(markers[hit.id], hit))
            lines.append(f"- {sentence} [{markers[hit.id]}] {source_label(hit)}")
    for image in images[:2]:
        marker = len(citations) + 1
        citations.append(citation_for(marker, image))
        caption = image.text or image.title or "image"
        lines.append(f"- ![{caption}]({image.image_uri}) [{marker}] {source_label(image)}")
    if not lines:
        return ("I found no evidence you are allowed to read that answers this question.", [])
    header = (
        "Extractive answer (no LLM configured; these are the best-supported sentences "
        "of the evidence, quoted):"
    )
    return header + "\n" + "\n".join(lines), citations
