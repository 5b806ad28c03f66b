"""What a question asks for: the noun phrase of its question word ("Under which *licenses* is
kmod released?", "What are the *ownership rules* in Rust?", "How much *memory* does bunzip2
need?"), as stemmed terms, its head (the last word: "licenses", "rules") last.

The extractive answer (:mod:`kgrag.agent.synthesis`) starts from a sentence that holds what is
asked for: every passage of kmod's README names kmod, only its "License:" line names a license.
"""

from __future__ import annotations

import re

from kgrag.text import terms
from kgrag.text.stemming import stem
from kgrag.text.stopwords import AUXILIARY_VERBS
from kgrag.text.tokens import key_terms

__all__ = ["asked_for", "names_phrase"]

#: The words that end the asked-for noun phrase: a verb of the question ("which licenses *is*
#: kmod released"), a preposition ("the ownership rules *in* Rust").
#: "shall" is left out as it always was (a behaviour of its own, untested).
_AUXILIARIES = AUXILIARY_VERBS - {"shall"}
_END = _AUXILIARIES | frozenset(
    {
        "of",
        "in",
        "for",
        "on",
        "at",
        "from",
        "by",
        "with",
        "about",
        "to",
        "into",
        "near",
        "after",
        "before",
        "than",
        "as",
        "according",
        "that",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "when",
        "what",
        "how",
        "between",
        "among",
        "per",
    }
)
_ARTICLES = frozenset({"the", "a", "an"})
#: "What is the *name* of the waterfall": the noun after "of" is what is asked for.
_LIGHT = frozenset({"name", "names", "kind", "kinds", "type", "types", "sort", "sorts"})
#: "What *year* did ...": the answer's type, not words a sentence answering holds.
_TYPE_ONLY = frozenset(
    {"year", "years", "date", "dates", "day", "days", "month", "months", "century", "time"}
)
_START = re.compile(
    r"^\s*(?:(?:in|on|at|under|from|to|for|by|with|of|about|into|through)\s+)?"
    r"(?:(?P<copular>(?:which|what|whose|who)\s+(?:is|are|was|were)\s+(?:(?:the|a|an)\s+|[\w-]+'s\s+))"
    r"|(?P<direct>(?:which|what|whose|how\s+many|how\s+much)\s+))",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\w'-]+")
#: A longer phrase is no noun phrase but a clause. Set a priori.
MAX_PHRASE_WORDS = 4
#: After "which" with no verb "to be", the noun phrase is at most this many words before the
#: question's verb ("which hash functions does", "which company acquired Avahi"). Set a priori.
MAX_DIRECT_WORDS = 2


def asked_for(question: str) -> tuple[str, ...]:
    """The stemmed terms of what ``question`` asks for, in order, its head last; empty when it
    names none (a yes/no question, "What is kmod?", "How do I ...", "What year did ...")."""
    m = _START.match(question)
    if m is None:
        return ()
    words = _WORD.findall(question[m.end() :].lower())
    return _phrase(words, copular=m.group("copular") is not None)


def _phrase(words: list[str], *, copular: bool) -> tuple[str, ...]:
    if not words or words[0] in _END or words[0] in _ARTICLES:
        return ()
    n = 0
    while n < len(words) and words[n] not in _END and words[n] not in _ARTICLES:
        n += 1
    phrase = words[:n]
    if phrase[-1] in _LIGHT and n < len(words) and words[n] == "of":
        rest = words[n + 1 :]
        return _phrase(rest[1:] if rest[:1] and rest[0] in _ARTICLES else rest, copular=copular)
    if not copular and not (n <= MAX_DIRECT_WORDS and n < len(words) and words[n] in _AUXILIARIES):
        # "which company acquired Avahi": the noun, then the verb; but "what changed in ...",
        # "what caused the ...", "what happens when ...": the question word's own verb
        if phrase[0].endswith("ed") or (n == 1 and n < len(words) and words[n] in _END):
            return ()
        verb = _verb_at(phrase, before_article=n < len(words) and words[n] in _ARTICLES)
        phrase = phrase[:verb] if verb <= MAX_DIRECT_WORDS else phrase[:1]
    elif copular and n < len(words) and words[n] in _ARTICLES:
        return ()  # "what is the X an instance of": no noun phrase before "of"
    if phrase[-1] in _TYPE_ONLY or len(phrase) > MAX_PHRASE_WORDS:
        return ()
    return tuple(terms(" ".join(phrase)))


def _verb_at(phrase: list[str], *, before_article: bool) -> int:
    """Where the question's verb is in ``phrase``, the words after "which" up to an article or
    an end word, with no tagger: its last word when an article follows it (a verb and its
    object: "which environment variable(s) *change(s)* the ..."); else the first word after
    the first ending in "-ed" ("which company *acquired* Avahi") or in a third person's "-s"
    after a word without a plural's ("which environment variable *overrides* LANG", not "hash
    *functions*" nor "process"); else 1 (the noun phrase is one noun)."""
    if before_article and len(phrase) > 1:
        return len(phrase) - 1
    for i in range(1, len(phrase)):
        word, before = phrase[i], phrase[i - 1]
        if word.endswith("ed") or (_third_person(word) and not _third_person(before)):
            return i
    return 1


def _third_person(word: str) -> bool:
    """Ends as a verb's third person singular, or a plural, does ("changes", "files"; not
    "process", "access")."""
    return word.endswith("s") and not word.endswith("ss")


def names_phrase(sentence: str, phrase: tuple[str, ...]) -> bool:
    """Whether ``sentence`` holds the terms of ``phrase`` next to each other and in order
    ("Ownership Rules", "the ownership rules" for ("ownership", "rul"); not "the rules of the
    ownership system")."""
    if not phrase:
        return False
    words = [stem(w) for w in key_terms(sentence)]
    n = len(phrase)
    return any(tuple(words[i : i + n]) == phrase for i in range(len(words) - n + 1))
