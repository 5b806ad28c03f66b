"""Small text helpers shared by evaluation, synthesis and groundedness: content terms with a
light suffix-stripping stemmer (so "maintains", "maintained" and "maintain" meet), sentences."""

from __future__ import annotations

import re
from collections.abc import Iterable

from kgrag.ingest.chunking import split_sentences
from kgrag.planner.rule import key_terms

_SUFFIXES = ("ings", "ing", "edly", "ed", "es", "s", "e")
_MARKER = re.compile(r"\s*\[(\d+)\]")
_SOURCE = re.compile(r"\s*\(Source:[^)]*\)")


def stem(word: str) -> str:
    """A crude, deterministic stem: strip one common inflectional suffix, keep 3+ letters."""
    w = word.lower().strip("'")
    if w.endswith("'s"):
        w = w[:-2]
    if not w.isalpha():
        return w
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w


def terms(text: str) -> list[str]:
    """Stemmed content terms in order, repeats dropped."""
    return list(dict.fromkeys(stem(t) for t in key_terms(text)))


def term_set(texts: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for text in texts:
        out.update(terms(text))
    return out


def sentences(text: str, *, min_chars: int = 12) -> list[str]:
    """The sentences of ``text`` with whitespace collapsed, short fragments dropped."""
    out = []
    for start, end in split_sentences(text):
        sentence = re.sub(r"\s+", " ", text[start:end]).strip()
        if len(sentence) >= min_chars:
            out.append(sentence)
    return out


def markers_in(sentence: str) -> list[int]:
    """The citation markers ``[n]`` of a sentence, in order."""
    return [int(m) for m in _MARKER.findall(sentence)]


def strip_citations(sentence: str) -> str:
    """The sentence without ``[n]`` markers and ``(Source: ...)`` labels."""
    return _SOURCE.sub("", _MARKER.sub("", sentence)).strip()
