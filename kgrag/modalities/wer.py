"""Word error rate: how far a transcript is from a reference, in word edits per reference word."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


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
    ``hypothesis`` (Levenshtein distance over words)."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref_word in enumerate(reference, start=1):
        current = [i] + [0] * len(hypothesis)
        for j, hyp_word in enumerate(hypothesis, start=1):
            current[j] = min(
                previous[j] + 1,  # deletion
                current[j - 1] + 1,  # insertion
                previous[j - 1] + (ref_word != hyp_word),  # substitution or match
            )
        previous = current
    return previous[-1]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word edits needed per reference word, after :func:`normalise_text` on both sides.

    Raises ``ValueError`` when the reference has no words (the rate is undefined).
    """
    ref = normalise_text(reference).split()
    hyp = normalise_text(hypothesis).split()
    if not ref:
        raise ValueError("the reference text has no words; word error rate is undefined")
    return word_edit_distance(ref, hyp) / len(ref)
