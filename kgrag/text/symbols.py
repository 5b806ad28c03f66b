"""Symbols a question asks about: "What does the ? operator do?", "what does `=>` mean?".

A symbol is no word to either full-text engine (their analyzers drop punctuation, and ``?`` or
``*`` in a query is syntax) nor to BM25's tokens (:func:`kgrag.text.tokens.lexical_tokens`),
and an embedding barely sees it: the question "What does the ? operator do in Rust?" searched
for ``operator | rust`` and ranked the operators table's rows alike. So a run of one to three
punctuation characters that the question quotes (in backticks or quotes) or calls an operator
(or symbol, sign, sigil, token) is kept as a term of its own (:func:`question_symbols`); the
lexical stage counts where a text writes it standing alone (:func:`symbol_count`: ``Operator:
?;``, ``the ? operator``, not the ``?`` that ends a question or ``expr?``).
"""

from __future__ import annotations

import re

__all__ = ["is_symbol", "question_symbols", "symbol_count"]

_RUN = r"[^\w\s]{1,3}"
_CALLS = r"(?:operators?|symbols?|signs?|sigils?|tokens?)"
_QUOTED = re.compile(rf"`({_RUN})`|\"({_RUN})\"|(?<!\w)'({_RUN})'(?!\w)")
_BEFORE = re.compile(rf"(?:^|(?<=\s))({_RUN})\s+{_CALLS}\b", re.IGNORECASE)
_AFTER = re.compile(rf"\b{_CALLS}\s+({_RUN})(?=\s|$)", re.IGNORECASE)
_SYMBOL = re.compile(_RUN)
#: Around a symbol standing alone: space, a quote or bracket, the text's edge; after it also a
#: separator (a table row's "Operator: ?; Example: ...").
_OPEN = "\\s\"'`([{"
_CLOSE = "\\s\"'`)\\]};,:"


def is_symbol(text: str) -> bool:
    """Whether ``text`` is a run of one to three punctuation characters (no letter, digit or
    space)."""
    return _SYMBOL.fullmatch(text) is not None


def question_symbols(question: str) -> tuple[str, ...]:
    """The symbols ``question`` quotes or calls an operator, symbol, sign, sigil or token, in
    order, repeats dropped: "What does the ? operator do in Rust?" -> ``("?",)``."""
    found: list[tuple[int, str]] = []
    for pattern in (_QUOTED, _BEFORE, _AFTER):
        for m in pattern.finditer(question):
            group = next(g for g in range(1, (m.lastindex or 1) + 1) if m.group(g))
            found.append((m.start(group), m.group(group)))
    return tuple(dict.fromkeys(s for _, s in sorted(found)))


def symbol_count(text: str, symbol: str) -> int:
    """How often ``text`` writes ``symbol`` standing alone (between spaces, quotes, brackets or
    a separator), not inside a longer run of punctuation nor stuck to a word."""
    pattern = rf"(?:^|(?<=[{_OPEN}])){re.escape(symbol)}(?=[{_CLOSE}]|$)"
    return len(re.findall(pattern, text))
