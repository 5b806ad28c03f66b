"""Word sets written as whitespace-separated words (the form every word list here uses)."""

from __future__ import annotations

__all__ = ["word_set"]


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` as a set."""
    return frozenset(text.split())
