"""A light stemmer for matching words, not for showing them.

Kept hand-written rather than Snowball's English stemmer (``snowballstemmer``): Snowball groups
3,059 of the 18,168 key terms of the MuSiQue corpus differently (a quarter of its term
occurrences: "city"/"cities", "nation"/"national", "first"/"firstly" meet there, not here), and
the answer-support features and the support model fitted on them (:mod:`kgrag.agent.support`)
were measured with this one. Measured on the 50 MuSiQue dev questions: passage recall the same,
but 13 of 50 extractive answers differ (19 -> 21 correct, 2 -> 1 abstained), so a switch is a
behaviour change that needs the support model refitted, not a refactoring."""

from __future__ import annotations

from kgrag.text.spelling import american

__all__ = ["stem"]

_SUFFIXES = ("ings", "ing", "edly", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """A crude, deterministic stem: strip one common inflectional suffix, keep 3+ letters (so
    "maintains", "maintained" and "maintain" meet), after folding a British spelling to the
    American one (:func:`~kgrag.text.spelling.american`: "licence" and "license" meet)."""
    w = word.lower().strip("'")
    if w.endswith("'s"):
        w = w[:-2]
    if not w.isalpha():
        return w
    w = american(w)
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w
