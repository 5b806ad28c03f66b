"""The sides a comparison question names: the parameters of the ``compare`` tool.

The intent classifier says that a question compares (kgrag/planner/intent.py); this module only
extracts what it compares, from the grammatical frames comparisons take in English: "compare A
and B", "A vs B", "how do A and B differ?", "how is A different from B?", "what distinguishes A
from B?", "is A bigger than B?", "which is faster, A or B?", "A or B for a server?", "contrast A
with B", "put A and B side by side", "what changed between A and B?". Two ellipses are filled
from the other side: "the 2022 and 2023 budgets" compares the 2022 budgets and the 2023 budgets,
"the old pump and the new one" the old pump and the new pump.

"Compare notes with the team" is an idiom, not a comparison: it names no sides.

A question whose sides are not named ("compare the two offers", "which of the vendors is
cheaper?") gets none, and the planner searches passages for it as for a content question.
"""

from __future__ import annotations

import re

from kgrag.text.words import word_set

__all__ = ["compared_sides"]

_A = r"(?P<a>[^,;:?]+?)"
_B = r"(?P<b>[^,;:?]+?)"
_END = r"(?=\s*(?:[,;:?!.]|$))"
#: The frames, most specific first; each names its two sides ``a`` and ``b``.
_FRAMES = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"\b(?:differences?|similarit(?:y|ies)|distinctions?|contrasts?|changed?|common ground)"
        rf"\s+between\s+{_A}\s+and\s+{_B}{_END}",
        rf"\bhow\s+(?:does|do|did|is|are|was|were)\s+{_A}\s+(?:differ|different|compare[sd]?"
        rf"|stack\s+up|measure\s+up|contrast)\s+(?:from|to|with|against)\s+{_B}{_END}",
        rf"\bhow\s+(?:do|did|does|are|were|would)\s+{_A}\s+and\s+{_B}\s+(?:compare|differ"
        rf"|different|alike|similar|stack\s+up)\b",
        rf"\bin\s+what\s+ways?\s+(?:are|is|do|does)\s+{_A}\s+and\s+{_B}\s+(?:alike|different"
        rf"|similar|differ)\b",
        rf"\bwhat\s+do\s+{_A}\s+and\s+{_B}\s+have\s+in\s+common\b",
        rf"\bwhat\s+(?:distinguishes|separates|differentiates|sets)\s+{_A}\s+(?:apart\s+)?from"
        rf"\s+{_B}{_END}",
        rf"\b(?:does|do|did)\s+{_A}\s+differ(?:\s+(?:much|greatly|a\s+lot|at\s+all))?\s+from"
        rf"\s+{_B}{_END}",
        rf"\b{_A}\s+differs?\s+from\s+{_B}{_END}",
        rf"\bis\s+{_A}\s+(?:(?:more|less)\s+\w+|better|worse|\w+er)\s+than\s+{_B}{_END}",
        rf"\bcompare\s+{_A}\s+(?:and|with|to|against|vs\.?|versus)\s+{_B}{_END}",
        rf"\bside[- ]by[- ]side(?:\s+of)?\s*:?\s+{_A}\s+(?:and|with|vs\.?|versus)\s+{_B}{_END}",
        rf"\b(?:contrast|weigh|juxtapose|set|put|pit|line\s+up)\s+(?:the\s+)?(?:pros\s+and\s+cons\s+of"
        rf"\s+)?{_A}\s+(?:with|and|against"
        rf"|beside|next\s+to|alongside|vs\.?|versus)\s+{_B}{_END}",
        rf"\b{_A}\s+(?:compared|contrasted)\s+(?:to|with)\s+{_B}{_END}",
        rf"{_A}\s+(?:vs\.?|versus)\s+{_B}{_END}",
        # "which is cheaper, A or B?", "which vendor offers the better warranty, Acme or Globex?";
        # not "which is the default, A or B?" (a choice with nothing compared)
        rf"^\s*which\b[^,]*?\b(?:more|less|better|worse|best|worst|most|least|\w{{2,}}er|\w{{2,}}est)\b"
        rf"[^,]*,\s*{_A}\s+or\s+{_B}\s*[?.!]*\s*$",
        # "ext3 or ext4, which should I pick?", "Debian or Fedora for a server?"
        rf"^\s*{_A}\s+or\s+{_B}\s*(?:,|\bfor\b|\bwhich\b|\?|$)",
    )
)
#: What may follow the second side without being part of it: "for a server", "according to
#: the docs", "for me", "side by side", "and why".
_TRAILING = re.compile(
    r"\s+(?:for\s+(?:me|us|a|an|the|my|our)\b.*|for\s+\w+$|according\s+to\b.*|in\s+terms\s+of\b.*"
    r"|regarding\b.*|(?:in|during|since|before|after)\s+\d{4}\b.*|when\s+it\s+comes\s+to\b.*"
    r"|and\s+why\b.*|please\b.*|side[- ]by[- ]side\b.*|(?:at|on|in|about)\s+\D.*"
    r"|in\s+(?:the|this|these|those|your|my|our)\s+(?:docs?|documents?|files?|manuals?)\b.*)$",
    re.IGNORECASE,
)
_LEADING = re.compile(
    r"^(?:(?:please|could\s+you|can\s+you|would\s+you|(?:tell|show|explain\s+to|describe\s+to|explain"
    r"|describe)\s+(?:me\s+|us\s+)?how|the\s+pros\s+and\s+cons\s+of|pros\s+and\s+cons\s+of)\s+)*",
    re.IGNORECASE,
)
_DETERMINER = re.compile(
    r"^(?:what\s+is\s+the|what's\s+the|the|a|an|both|either|my|our|your|their)\s+",
    re.IGNORECASE,
)
#: Sides that name no one thing: "the two offers", "both", "them".
_UNNAMED = re.compile(
    r"^(?:(?:two|three|both|these|those|the\s+two|all)\b.*|it|they|them|one|other|others|each"
    r"|the\s+other)$",
    re.IGNORECASE,
)
#: Modifiers that a coordinated side may carry alone, its noun given once for both ("the old and
#: the new schedules", "the draft and the final report").
_MODIFIERS = word_set(
    """old new older newer oldest newest first second third last previous next current draft
    final original revised updated early earlier late later spring summer autumn fall winter
    left right upper lower big small large basic premium standard free paid internal external
    red blue green black white"""
)


#: Longer questions are not read for sides (the frames' lazy sides would cost time quadratic in
#: the length: 4 s at 14,000 characters); they are planned as content questions.
MAX_CHARS = 1_000

#: "Compare notes": an idiom that compares nothing.
_IDIOM = re.compile(r"\bcompar(?:e|ed|ing)\s+notes\b", re.IGNORECASE)


def compared_sides(question: str) -> tuple[str, ...]:
    """The two sides ``question`` compares, as written (determiners dropped, the elided noun
    filled in), or ``()`` when it names none."""
    if len(question) > MAX_CHARS:
        return ()
    text = _LEADING.sub("", question.strip())
    if _IDIOM.search(text):
        return ()
    for frame in _FRAMES:
        match = frame.search(text)
        if match is None:
            continue
        a, b = _side(match.group("a")), _side(_TRAILING.sub("", match.group("b")))
        if not a or not b or _UNNAMED.match(a) or _UNNAMED.match(b):
            continue
        return _filled(a, b)
    return ()


def _side(side: str) -> str:
    side = _LEADING.sub("", side.strip(" ?.!,\"'"))
    side = _DETERMINER.sub("", side)
    return side.strip(" ?.!,\"'")


def _filled(a: str, b: str) -> tuple[str, str]:
    """The sides with an elided noun restored: "2022" and "2023 budgets" -> "2022 budgets";
    "old pump" and "new one" -> "new pump"."""
    a_words, b_words = a.split(), b.split()
    if b_words[-1].lower() in ("one", "ones") and len(b_words) >= 2 and len(a_words) >= 2:
        b = " ".join([*b_words[:-1], *a_words[1:]])
    elif (
        len(a_words) == 1 and len(b_words) >= 2 and _modifies(a_words[0]) and _modifies(b_words[0])
    ):
        a = " ".join([a_words[0], *b_words[1:]])
    return a, b


def _modifies(word: str) -> bool:
    return any(c.isdigit() for c in word) or word.lower() in _MODIFIERS
