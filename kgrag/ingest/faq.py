"""The questions of a list of questions and answers (a FAQ), each a section of its own.

zlib's FAQ is forty numbered questions, each a paragraph followed by its answer; packed into
chunks by size alone, the answer to "11. Can zlib handle .zip archives?" ("Not by itself, no.")
shared a chunk with parts of other questions and answers, and a passage holding several was
cited for another question's answer. A page whose format marks no headings and that holds at
least :data:`MIN_QUESTIONS` question paragraphs, one in :data:`MAX_CHARS_PER_QUESTION`
characters at least, is read as a FAQ: each question is a heading
(level 1), so its chunks carry it as their section (and their vectors are computed with it,
:func:`kgrag.ingest.sections.context_text`), and each question starts a chunk
(:func:`kgrag.ingest.chunking.chunk_text` packs each question with its answer on its own).

A question paragraph is at most :data:`MAX_QUESTION_WORDS` words, starts as a question does
(an interrogative or an auxiliary verb first, after its number), ends with a question mark, and
the paragraph after it (its answer) does not: a changelog's "Add font-file hash?" is none.
When most questions are numbered ("11. Can zlib ...?"), the numbered paragraphs that go on with
the numbers are questions too, with or without a question mark ("4. compress() returns
Z_BUF_ERROR."), and a question mark alone does not make one (a numbered list in an answer
starts again at 1). The constants are set a priori (a question is a sentence, an answer about a
page at most); over this machine's /usr/share/doc the pages read as FAQs are then the FAQs of
zlib, xz, procps, openipmi, lsof and glibc's README.Debian, and no changelog (six changelogs
asking three questions each in two million characters were, before the characters per
question were bounded).
"""

from __future__ import annotations

import re

from kgrag.ingest.sections import Heading
from kgrag.text.stopwords import AUXILIARY_VERBS
from kgrag.text.words import word_set

__all__ = ["MAX_CHARS_PER_QUESTION", "MAX_QUESTION_WORDS", "MIN_QUESTIONS", "faq_headings"]

#: Question paragraphs a page needs to be read as a FAQ.
MIN_QUESTIONS = 3
#: The longest question, in words (a longer paragraph ending in "?" is prose).
MAX_QUESTION_WORDS = 40
#: The page's characters per question at most: a FAQ is mostly its questions and their short
#: answers (zlib's: 376 characters a question), about a printed page each at most; a changelog
#: whose commit messages ask three questions in two million characters is none.
MAX_CHARS_PER_QUESTION = 3000

_PARAGRAPH = re.compile(r"\S(?:.*\S)?(?:\n[ \t]*\S.*)*")
_NUMBERED = re.compile(r"(?:Q\s*)?(\d{1,3})[.):]\s+\S")
#: What may come before a question's first word: its number ("11.", "1.2.", "2.1)"), "Q:",
#: a Markdown heading's marks.
_PREFIX = re.compile(r"^(?:#+\s*)?(?:Q\s*\d*\s*[.:)]\s*)?(?:\d{1,3}(?:\.\d{1,3})*[.):]?\s+)?")
#: The words a question starts with: the interrogatives and the auxiliary verbs.
_ASKING = AUXILIARY_VERBS | word_set(
    """what which who whom whose why where when how isn't aren't doesn't don't can't won't
    wouldn't shouldn't"""
)


def faq_headings(text: str) -> tuple[Heading, ...]:
    """The questions of ``text`` as level-1 headings when it reads as a FAQ, else none."""
    paragraphs = [(m.start(), m.group().rstrip()) for m in _PARAGRAPH.finditer(text)]
    asked = [
        i
        for i, (_, para) in enumerate(paragraphs)
        if _short(para)
        and para.endswith("?")
        and _asks(para)
        and i + 1 < len(paragraphs)
        and not paragraphs[i + 1][1].endswith("?")
    ]
    if len(asked) < MIN_QUESTIONS or len(text) > MAX_CHARS_PER_QUESTION * len(asked):
        return ()
    numbered = [i for i in asked if _NUMBERED.match(paragraphs[i][1])]
    if 2 * len(numbered) > len(asked):
        asked = _numbered_questions(paragraphs, numbered[0])
        if len(asked) < MIN_QUESTIONS:
            return ()
    return tuple(
        Heading(start=paragraphs[i][0], level=1, text=" ".join(paragraphs[i][1].split()))
        for i in asked
    )


def _asks(paragraph: str) -> bool:
    """Whether ``paragraph`` starts as a question does, after its number or "Q:" ("11. Can
    zlib ...", "Q: What do ..."): an interrogative or an auxiliary verb first. A changelog's
    "Add font-file hash?" or "Bugfix: how about ...?" is no FAQ's question."""
    words = _PREFIX.sub("", paragraph).split(maxsplit=1)
    return bool(words) and words[0].lower().strip("\"'*#") in _ASKING


def _short(paragraph: str) -> bool:
    return len(paragraph.split()) <= MAX_QUESTION_WORDS


def _numbered_questions(paragraphs: list[tuple[int, str]], first: int) -> list[int]:
    """From the first numbered question on, the short paragraphs whose number follows the
    question before's."""
    out: list[int] = []
    expected: int | None = None
    for i in range(first, len(paragraphs)):
        number = _NUMBERED.match(paragraphs[i][1])
        if number is None or not _short(paragraphs[i][1]):
            continue
        n = int(number.group(1))
        if expected is None or n == expected:
            out.append(i)
            expected = n + 1
    return out
