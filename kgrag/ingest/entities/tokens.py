"""The entity extractor's tokeniser: words, punctuation and newlines, each word marked
capitalised or not and sentence-initial or not."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from kgrag.ingest.entities.wordlists import LOWER_CODE_RE, UNIT_RE
from kgrag.text.abbreviations import NAME_ABBREVIATIONS

_TOKEN_RE = re.compile(
    r"(?P<nl>\n)"
    r"|(?P<dotted>(?:[^\W\d_]\.){2,})"
    r"|(?P<word>\w+(?:[-\u2010\u2011'\u2019&+]\w+)*)"
    r"|(?P<punct>[^\w\s])"
)
_TERMINATORS = {".", "!", "?"}
_TRANSPARENT = {'"', "\u201c", "\u201d", "'", "\u2018", "\u2019", "(", "[", "{"}

WORD, PUNCT, NL = 0, 1, 2


@dataclass(slots=True)
class Tokens:
    text: str
    toks: list[str]
    starts: list[int]
    ends: list[int]
    kinds: list[int]
    caps: list[bool]
    initial: list[bool]


@functools.lru_cache(maxsize=1 << 17)
def is_cap(tok: str) -> bool:
    c0 = tok[0]
    if c0.isupper():
        return True
    if c0.isdigit():
        return any(c.isalpha() for c in tok) and not UNIT_RE.match(tok)
    if c0.isalpha():
        return any(c.isupper() for c in tok[1:]) or bool(LOWER_CODE_RE.match(tok))
    return False


def tokenise(text: str) -> Tokens:
    toks: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    kinds: list[int] = []
    for m in _TOKEN_RE.finditer(text):
        group = m.lastgroup
        toks.append(m.group())
        starts.append(m.start())
        ends.append(m.end())
        kinds.append(NL if group == "nl" else PUNCT if group == "punct" else WORD)
    caps = [k == WORD and is_cap(t) for t, k in zip(toks, kinds, strict=True)]
    initial = [False] * len(toks)
    at_start = True
    for i, (tok, kind) in enumerate(zip(toks, kinds, strict=True)):
        if kind == NL:
            at_start = True
        elif kind == PUNCT:
            if tok in _TERMINATORS:
                prev = toks[i - 1] if i and kinds[i - 1] == WORD else ""
                abbrev = tok == "." and (
                    prev.lower() in NAME_ABBREVIATIONS or (len(prev) == 1 and prev.isupper())
                )
                at_start = not abbrev
            elif tok not in _TRANSPARENT:
                at_start = False
        else:
            initial[i] = at_start
            at_start = False
    return Tokens(text, toks, starts, ends, kinds, caps, initial)
