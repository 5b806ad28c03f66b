"""Tokenising, one function per purpose: a question's key terms (:func:`key_terms`, and stemmed
:func:`terms`), the query analysis's tokens (:func:`tokenise_question`), the terms a document
tool matches (:func:`document_terms`), and BM25's tokens (:func:`lexical_tokens`). Each keeps its
own word pattern and stop words (:mod:`kgrag.text.stopwords`): what they find differs on
purpose."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kgrag.text.abbreviations import QUESTION_ABBREVIATIONS
from kgrag.text.spelling import american
from kgrag.text.stemming import stem
from kgrag.text.stopwords import DOCUMENT_QUERY_STOP_WORDS, FUNCTION_WORDS, QUESTION_STOP_WORDS
from kgrag.text.versions import is_version, shorter_versions, without_v
from kgrag.text.words import word_set

__all__ = [
    "QuestionToken",
    "content_words",
    "document_terms",
    "is_content_word",
    "key_terms",
    "lexical_tokens",
    "normalise_question",
    "question_sentence_starts",
    "term_set",
    "terms",
    "tokenise_question",
]

_KEY_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")


def key_terms(question: str) -> list[str]:
    """The lowercased words of ``question`` of 3+ characters that are no question stop words."""
    return [
        w
        for w in _KEY_WORD.findall(question.lower())
        if w not in QUESTION_STOP_WORDS and len(w) > 2
    ]


def terms(text: str) -> list[str]:
    """Stemmed content terms in order, repeats dropped."""
    return list(dict.fromkeys(stem(t) for t in key_terms(text)))


def term_set(texts: Iterable[str]) -> set[str]:
    """The stemmed content terms of all ``texts``."""
    out: set[str] = set()
    for text in texts:
        out.update(terms(text))
    return out


_LEXICAL_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[_.'-][A-Za-z0-9]+)*")
_PART = re.compile(r"[A-Za-z0-9]+")


def lexical_tokens(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` for BM25 (:mod:`kgrag.executor.lexical`); a compound
    identifier (``asn1_der_decoding``, ``x-200``, ``libfoo.so``) is one token followed by its
    parts, and a version of three or more numbers also by its shorter versions (``3.19.0``:
    ``3.19``), so a question about "3.19" finds the release written "3.19.0" and not "3.18.0";
    a version written with its "v" (``v2.39.5``) also as written without (``2.39.5``, ``2.39``).
    A word in British spelling is its American one (:func:`~kgrag.text.spelling.american`:
    ``licence`` is ``license``), on the question's side and the text's alike."""
    out: list[str] = []
    for match in _LEXICAL_TOKEN.finditer(text.lower()):
        word = american(match.group(0))
        out.append(word)
        parts = _PART.findall(word)
        if len(parts) > 1:
            out.extend(american(p) for p in parts)
        if is_version(word):
            version = without_v(word)
            if version != word:  # "v2.39.5": the version as it is written without v
                out.append(version)
            out.extend(shorter_versions(version))
    return out


_DOCUMENT_TERM = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


def document_terms(text: str) -> tuple[str, ...]:
    """Lowercased content words of ``text``, a plural ``s`` dropped (``pumps`` -> ``pump``), so
    that a term matches inside titles, tags, summaries and entity names; question order kept."""
    out: list[str] = []
    for word in _DOCUMENT_TERM.findall(text.lower()):
        if word in DOCUMENT_QUERY_STOP_WORDS or len(word) < 2:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return tuple(dict.fromkeys(out))


# ----------------------------------------------------------------- the query analysis's tokens

_QUESTION_WORD = re.compile(r"\w+(?:[-'.]\w+)*")
_CONTRACTIONS = word_set("what who where when why how that it there here let he she which")


@dataclass(frozen=True)
class QuestionToken:
    """A word of a question, its offsets in the normalised question, and whether a possessive
    ``'s`` (or ``s'``) followed it (the ``'s`` is not part of the token)."""

    text: str
    start: int
    end: int
    possessive: bool

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def capitalised(self) -> bool:
        first = self.text[0]
        return first.isupper() or (
            any(c.isdigit() for c in self.text) and any(c.isalpha() for c in self.text)
        )


def normalise_question(question: str) -> str:
    """Typographic quotes to ASCII, whitespace collapsed."""
    text = question.replace("\u2019", "'").replace("\u2018", "'")
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("``", '"').replace("''", '"')
    return " ".join(text.split())


def tokenise_question(text: str) -> list[QuestionToken]:
    """The words of a normalised question (:func:`normalise_question`), possessives marked."""
    tokens: list[QuestionToken] = []
    for match in _QUESTION_WORD.finditer(text):
        word, start, end = match.group(0), match.start(), match.end()
        possessive = False
        if word.lower().endswith("'s") and len(word) > 2:
            base = word[:-2]
            if base.lower() not in _CONTRACTIONS:
                possessive = True
            word, end = base, end - 2
        elif (
            word.endswith("s")
            and text[end : end + 1] == "'"
            and not text[end + 1 : end + 2].isalpha()
        ):
            possessive = True
        word = word.rstrip(".")
        if word:
            tokens.append(QuestionToken(word, start, start + len(word), possessive))
    return tokens


def question_sentence_starts(text: str, tokens: Sequence[QuestionToken]) -> set[int]:
    """Indexes of the tokens that begin a sentence of the question."""
    starts = {0} if tokens else set()
    for i in range(1, len(tokens)):
        gap = text[tokens[i - 1].end : tokens[i].start]
        if any(c in gap for c in "?!") or (
            "." in gap and tokens[i - 1].lower.rstrip(".") not in QUESTION_ABBREVIATIONS
        ):
            starts.add(i)
    return starts


def is_content_word(token: QuestionToken) -> bool:
    """Whether ``token`` names the question's topic: no function word, not a lone letter."""
    return token.lower not in FUNCTION_WORDS and not (
        len(token.text) == 1 and not token.text.isdigit()
    )


def content_words(tokens: Sequence[QuestionToken]) -> tuple[str, ...]:
    """The lowercased content words of a question, in order, repeats dropped."""
    return tuple(dict.fromkeys(t.lower for t in tokens if is_content_word(t)))
