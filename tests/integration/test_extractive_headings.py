"""The extractive answer does not stop at a heading: "Installation" alone answers nothing, the
sentence after it does (found on a real README: "What does README.md say about installation?"
was answered "Installation"). Real MiniLM embedder, no store needed."""

from __future__ import annotations

from functools import cache

import pytest

from kgrag.agent.answering import pointed_at
from kgrag.agent.synthesis import is_heading, select_sentences
from kgrag.config import Settings
from kgrag.core import Hit
from kgrag.modalities import factory
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.rule import identifiers

README = (
    "Introduction\n\nhttplib2 is a comprehensive HTTP client library.\n\n"
    "Installation\n\n$ pip install httplib2\n\nUsage\n\nA simple retrieval:\n\n"
    "import httplib2\n"
)


@cache
def _embedder() -> TextEmbedder:
    return factory.text_embedder(Settings())


@pytest.mark.parametrize(
    ("text", "heading"),
    [
        ("Installation", True),
        ("2.1 Getting started", True),
        ("A simple retrieval:", True),
        ("$ pip install httplib2", False),
        ("import httplib2", False),
        ("The library caches responses.", False),
        ("* ==================== CORE CHANGES ===================", True),  # Valgrind's NEWS
        ("## Usage", True),
        ("* Fix Rust v0 name demangling.", False),
        ("* arm64:", False),
    ],
)
def test_headings_are_told_from_sentences(text: str, heading: bool) -> None:
    assert is_heading(text) is heading


def test_a_chosen_heading_brings_the_sentence_it_introduces() -> None:
    hit = Hit(id="readme:c0", kind="chunk", score=1.0, text=README, title="Introduction")
    chosen = [
        s for s, _ in select_sentences("What does it say about installation?", [hit], _embedder())
    ]
    assert chosen[:2] == ["Installation", "$ pip install httplib2"], chosen
    assert "A simple retrieval:" not in chosen, "a heading does not lead into another heading"


NEWS = (
    "Release 3.19.0 (11 Apr 2022)\n\n"
    "This release supports X86/Linux, AMD64/Linux and ARM64/Linux.\n\n"
    "* ==================== CORE CHANGES ===================\n\n"
    "* Fix Rust v0 name demangling.\n"
    "* The Linux rseq syscall is now implemented as (silently) returning ENOSYS.\n\n"
    "* ================== PLATFORM CHANGES =================\n\n"
    "* s390: Fix sys_ipc semtimedop syscall.\n"
)


def test_a_heading_brings_what_it_introduces_even_when_other_sentences_hold_more_terms() -> None:
    """Valgrind's NEWS (tests/data/valgrind_news): "CORE CHANGES" matched "changed" and was
    followed by a sentence of another passage that held "Valgrind"; what it heads comes next."""
    news = Hit(id="news:c0", kind="chunk", score=1.0, text=NEWS, title="changelog (valgrind)")
    other = Hit(
        id="debian:c0",
        kind="chunk",
        score=0.9,
        text="valgrind (1.9.6-1) unstable; urgency=low\n\n* New upstream release.",
        title="changelog.Debian (valgrind)",
    )
    question = "What changed in Valgrind 3.19?"
    # as the agent asks: passages headed by the version the question names come first
    pointed = pointed_at(frozenset(), (), identifiers(question))
    assert pointed(news) and not pointed(other)
    bugs = Hit(  # Valgrind 3.17.0's list of fixed bugs names the Linux kernel 3.19 in passing
        id="news:c9",
        kind="chunk",
        score=0.8,
        text="140178 open(/proc/self/exe) does not quite work 140939 --track-fds reports "
        "leakage of stdout 217695 malloc failure does not set errno 338633 nlcontrolc hangs "
        "on arm64 345077 linux syscall execveat support (linux 3.19) 361770 Missing F_ADD_SEALS",
        title="changelog (valgrind)",
    )
    assert not pointed(bugs)
    chosen = [s for s, _ in select_sentences(question, [news, other], _embedder(), prefer=pointed)]
    lines = [line for line in NEWS.splitlines() if line]
    assert is_heading(chosen[0]) and chosen[0] in lines, chosen
    assert chosen[1] == lines[lines.index(chosen[0]) + 1], chosen  # what the heading introduces
