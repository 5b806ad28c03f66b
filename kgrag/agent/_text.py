"""Citation helpers of the agent's answers: the ``[n]`` markers of a sentence, and a sentence
without its markers and source labels. The text utilities (terms, stems, sentences) live in
:mod:`kgrag.text`."""

from __future__ import annotations

import re

_MARKER = re.compile(r"\s*\[(\d+)\]")
_SOURCE = re.compile(r"\s*\(Source:[^)]*\)")


def markers_in(sentence: str) -> list[int]:
    """The citation markers ``[n]`` of a sentence, in order."""
    return [int(m) for m in _MARKER.findall(sentence)]


def strip_citations(sentence: str) -> str:
    """The sentence without ``[n]`` markers and ``(Source: ...)`` labels."""
    return _SOURCE.sub("", _MARKER.sub("", sentence)).strip()
