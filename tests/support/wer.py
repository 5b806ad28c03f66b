"""Word error rate for the transcription tests: how far a transcript is from a reference, in
word edits per reference word. jiwer aligns the words; the normalisation is ours."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import jiwer


def normalise_text(text: str) -> str:
    """Lowercase, drop punctuation, collapse whitespace.

    Apostrophes vanish inside words (``don't`` -> ``dont``); any other punctuation (hyphens, dashes,
    commas, periods) separates words (``fellow-Americans`` -> ``fellow americans``).
    """
    out: list[str] = []
    for ch in unicodedata.normalize("NFKC", text).lower():
        if ch in "'\u2019":
            continue
        out.append(ch if ch.isalnum() or ch.isspace() else " ")
    return " ".join("".join(out).split())


def word_edit_distance(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """The fewest word substitutions, insertions and deletions turning ``reference`` into
    ``hypothesis`` (Levenshtein distance over words; jiwer needs a non-empty reference)."""
    if not reference:
        return len(hypothesis)
    aligned = jiwer.process_words(" ".join(reference), " ".join(hypothesis))
    return aligned.substitutions + aligned.deletions + aligned.insertions


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word edits needed per reference word, after :func:`normalise_text` on both sides.

    Raises ``ValueError`` when the reference has no words (the rate is undefined).
    """
    ref = normalise_text(reference).split()
    hyp = normalise_text(hypothesis).split()
    if not ref:
        raise ValueError("the reference text has no words; word error rate is undefined")
    return word_edit_distance(ref, hyp) / len(ref)
