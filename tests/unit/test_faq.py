"""A FAQ's questions are its sections and each starts a chunk (kgrag/ingest/faq.py), on the real
zlib FAQ as Debian installs it (/usr/share/doc/zlib1g-dev/FAQ.gz), as plain text and as the
paragraphs an office document gives (each line a paragraph). The tenth real folder's "Can zlib
handle .zip archives?" quoted other questions' answers: the answer ("Not by itself, no.") shared
a chunk with parts of other questions and answers."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from kgrag.ingest.chunking import chunk_text
from kgrag.ingest.faq import faq_headings
from kgrag.ingest.models import ParsedPage

FAQ = Path("/usr/share/doc/zlib1g-dev/FAQ.gz")
README = Path("/usr/share/doc/zlib1g-dev/README.gz")
CHANGELOG = Path("/usr/share/doc/libharfbuzz0b/changelog.gz")
XZ_FAQ = Path("/usr/share/doc/xz-utils/faq.txt.gz")
ZIP_QUESTION = "11. Can zlib handle .zip archives?"

pytestmark = pytest.mark.skipif(not FAQ.exists(), reason="zlib1g-dev's FAQ is not installed")


def _words(text: str) -> int:
    return len(text.split())


def _text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8")


@pytest.mark.parametrize("paragraph_per_line", [False, True])
def test_each_question_of_the_faq_is_a_section_that_starts_a_chunk(
    paragraph_per_line: bool,
) -> None:
    text = _text(FAQ)
    if paragraph_per_line:  # as LibreOffice's conversion reads: every line a paragraph
        text = "\n\n".join(line.strip() for line in text.splitlines() if line.strip())
    questions = [h.text for h in faq_headings(text)]
    numbers = [int(q.split(".", 1)[0]) for q in questions]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 40, questions
    assert "4. compress() returns Z_BUF_ERROR." in questions  # numbered on, without a "?"
    chunks = chunk_text([ParsedPage(text=text)], _words, 200, 20)
    (answer,) = [c for c in chunks if "Not by itself, no." in c.text]
    assert answer.section == (ZIP_QUESTION,)
    assert answer.text.startswith("11. Can zlib handle .zip archives?")
    for chunk in chunks:  # no chunk holds two questions
        held = [q for q in questions if q in " ".join(chunk.text.split())]
        assert len(held) <= 1, (chunk.position, held)


def test_a_text_without_questions_and_answers_is_no_faq() -> None:
    assert faq_headings(_text(README)) == ()
    # a changelog whose commit messages ask "How was this not updated?", "Did this ever
    # work?" and one more, in two million characters
    if CHANGELOG.exists():
        assert faq_headings(_text(CHANGELOG)) == ()
    # three questions in a row without answers between them are not a FAQ's
    asked = "Why?\n\nWhy not?\n\nWho knows?\n\nNobody does.\n"
    assert faq_headings(asked) == ()


def test_a_faq_of_unnumbered_questions() -> None:
    text = "\n\n".join(
        [
            "Pump FAQ",
            "How often is the filter changed?",
            "Every six months.",
            "Who orders spare seals?",
            "The maintenance office, on form M-7.",
            "What does the red lamp mean?",
            "The pressure is too high: stop the pump.",
        ]
    )
    assert [h.text for h in faq_headings(text)] == [
        "How often is the filter changed?",
        "Who orders spare seals?",
        "What does the red lamp mean?",
    ]
    chunks = chunk_text([ParsedPage(text=text)], _words, 200, 20)
    assert [c.text for c in chunks][1:] == [
        "How often is the filter changed?\n\nEvery six months.",
        "Who orders spare seals?\n\nThe maintenance office, on form M-7.",
        "What does the red lamp mean?\n\nThe pressure is too high: stop the pump.",
    ]
    assert re.fullmatch(r"Pump FAQ\s*", chunks[0].text)


@pytest.mark.skipif(not XZ_FAQ.exists(), reason="xz-utils' FAQ is not installed")
def test_questions_written_after_q_are_a_faqs() -> None:
    questions = [h.text for h in faq_headings(_text(XZ_FAQ))]
    assert questions[:2] == ["Q: What do the letters XZ mean?", "Q: What are LZMA and LZMA2?"]
