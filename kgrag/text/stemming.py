"""A light stemmer for matching words, not for showing them."""

from __future__ import annotations

__all__ = ["stem"]

_SUFFIXES = ("ings", "ing", "edly", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """A crude, deterministic stem: strip one common inflectional suffix, keep 3+ letters (so
    "maintains", "maintained" and "maintain" meet)."""
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
