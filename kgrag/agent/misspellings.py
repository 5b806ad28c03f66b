"""A question's misspelt names, written as the evidence writes them.

Users misspell names ("What is the Margaraviate of ...?" for the Margraviate of Austria), and the
support test (kgrag.agent.support) then finds one of the question's names in no passage, though
the passage that answers is right there. :func:`respelled` rewrites a capitalised word of the
question that no evidence passage holds, when exactly one word of the evidence is one edit away
from it (a letter added, dropped, changed, or two neighbours swapped) and long enough that one
edit rarely turns a name into another name (:data:`MIN_LETTERS`; "Hansen" and "Hanson" are two
families, so six letters are too few). Nothing else of the question changes, and the evidence is
the only dictionary: no corpus statistics, no word list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kgrag.core import Hit
from kgrag.text.folding import fold

__all__ = ["MIN_LETTERS", "one_edit_apart", "respelled"]

#: The fewest letters of a name that may be respelt. Set a priori (no dev question chose it):
#: below it, one edit turns common surnames into each other ("Hansen" / "Hanson",
#: "Nielsen" / "Nielson").
MIN_LETTERS = 8

_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
_WORD = re.compile(r"[a-z]+")


def one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one edit: a letter inserted, deleted or substituted,
    or two adjacent letters transposed (``a != b``)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def _vocabulary(hits: Iterable[Hit]) -> set[str]:
    out: set[str] = set()
    for hit in hits:
        out.update(_WORD.findall(fold(f"{hit.title or ''} {hit.text or ''}").lower()))
    return out


def respelled(question: str, evidence: Sequence[Hit]) -> str:
    """``question`` with each capitalised word of at least :data:`MIN_LETTERS` letters that the
    evidence does not hold written as the one evidence word one edit away from it (same first
    letter), if there is exactly one; the question unchanged otherwise."""
    candidates = [
        m
        for m in _CAPITALISED.finditer(question)
        if len(m.group(0)) >= MIN_LETTERS and m.start() > 0
    ]
    if not candidates:
        return question
    vocabulary = _vocabulary(evidence)
    out = question
    for m in reversed(candidates):
        word = fold(m.group(0)).lower()
        if word in vocabulary:
            continue
        near = [
            w
            for w in vocabulary
            if len(w) >= MIN_LETTERS - 1 and w[0] == word[0] and one_edit_apart(word, w)
        ]
        if len(near) == 1:
            out = out[: m.start()] + near[0].capitalize() + out[m.end() :]
    return out
