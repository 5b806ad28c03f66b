"""The names a question asks about: its capitalised words, numbers and identifiers
(:func:`question_names`), its name phrases (:func:`name_phrases`, :func:`name_parts`), and the
stemmed, accent-free words they are matched against (:func:`words`). Shared by the support test
(kgrag.agent.support), the name anchors (kgrag.agent.anchors) and the evidence chains
(kgrag.agent.chains)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from kgrag.core import Hit
from kgrag.text import key_terms, stem
from kgrag.text.folding import fold
from kgrag.text.versions import V_PREFIX

_NAME = re.compile(r"\b(?:[A-Z][\w'-]*|[\w-]*\d[\w-]*|\w+_\w+)")


PHRASE = re.compile(
    r"\b[A-Z0-9][\w'.-]*(?:,?\s+(?:(?:of|the|de|la|le|von|van|der|du|del|and|&)\s+)*[A-Z0-9][\w'.-]*)*"
)
_WORD = re.compile(r"\w+")
#: The words :data:`PHRASE` joins a name's parts with ("Journal of Psychotherapy Integration").
JOINING = frozenset({"of", "the", "de", "la", "le", "von", "van", "der", "du", "del", "and"})
_POSSESSIVE = re.compile(r"'s\b")


def question_names(question: str) -> set[str]:
    """Stemmed names of the question: capitalised words (not only the first word), numbers,
    identifiers; words the key-term filter drops (question words, stop words) are not names."""
    question = fold(question)
    keys = {stem(w) for w in key_terms(question)}
    words = [m.group(0) for m in _NAME.finditer(question)]
    first = question.split(maxsplit=1)[0] if question.split() else ""
    named = [w for w in words if w != first or not w[:1].isupper()]
    return {stem(t) for w in named for t in key_terms(w)} & keys


def raw_words(text: str) -> list[str]:
    return _WORD.findall(V_PREFIX.sub("", _POSSESSIVE.sub("", fold(text))))


def words(text: str) -> list[str]:
    """The stemmed words of ``text`` in order (accents and possessive ``'s`` dropped)."""
    return [stem(w) for w in raw_words(text)]


def content_word(word: str) -> bool:
    return bool(key_terms(word)) or word.isdigit()


def name_phrases(question: str) -> list[tuple[str, ...]]:
    """The question's names as phrases: runs of capitalised words or numbers (joined by "of",
    "the", "de"...), stemmed, without a leading question or stop word ("Which", "The") and
    without runs made only of such words."""
    return list(dict.fromkeys(tuple(stem(w) for w in raw) for raw in written_phrases(question)))


def written_phrases(question: str) -> list[tuple[str, ...]]:
    """The words of each name phrase of ``question`` as written (accents folded, not stemmed),
    in the order of :func:`name_phrases`; repeats kept."""
    out: list[tuple[str, ...]] = []
    for match in PHRASE.finditer(fold(question)):
        raw = raw_words(match.group(0))
        while raw and not content_word(raw[0]):
            raw = raw[1:]
        if raw:
            out.append(tuple(raw))
    return out


def holds(sequence: Sequence[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(sequence[i : i + n]) == phrase for i in range(len(sequence) - n + 1))


def phrase_in(phrase: tuple[str, ...], hit: Hit) -> bool:
    """Does ``hit`` (its title or its text) hold ``phrase`` as consecutive words?"""
    return holds(words(hit.title or ""), phrase) or holds(words(hit.text or ""), phrase)


def name_parts(question: str) -> list[tuple[tuple[str, ...], ...]]:
    """Each name phrase of ``question`` (:func:`name_phrases`) as its parts: the runs of words
    between its joining words ("Salary 2023 of Zebulon Quartermaine" -> "Salary 2023",
    "Zebulon Quartermaine"), stemmed; a table row or a heading may hold them apart. Numbers
    are parts of their own ("Valgrind 3.19" -> "Valgrind", "3 19"; "Salary", "2023"): a version
    or a year is written apart from its name as often as beside it ("Release 3.19.0" under a
    Valgrind heading, "2023" as a column of a salary table), and "3.19" is held in "3.19.0"."""
    out: list[tuple[tuple[str, ...], ...]] = []
    for match in PHRASE.finditer(fold(question)):
        parts: list[tuple[str, ...]] = []
        current: list[str] = []
        for word in [*raw_words(match.group(0)), "of"]:
            if word.lower() in JOINING:
                parts.extend(_number_runs(current))
                current = []
            elif current or content_word(word):
                current.append(word)
        if parts:
            out.append(tuple(parts))
    return list(dict.fromkeys(out))


def _number_runs(words: Sequence[str]) -> list[tuple[str, ...]]:
    """``words`` (one part of a name phrase) cut into its runs of numbers and of other words,
    stemmed."""
    runs: list[tuple[str, ...]] = []
    for _, run in itertools.groupby(words, key=str.isdigit):
        runs.append(tuple(stem(w) for w in run))
    return runs
