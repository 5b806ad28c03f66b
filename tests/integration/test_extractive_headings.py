"""The extractive answer does not stop at a heading: "Installation" alone answers nothing, the
sentence after it does (found on a real README: "What does README.md say about installation?"
was answered "Installation"). Real MiniLM embedder, no store needed."""

from __future__ import annotations

from functools import cache

import pytest

from kgrag.agent.answering import pointed_at
from kgrag.agent.synthesis import defined_subject, defines, is_heading, select_sentences
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


# Debian's /usr/share/doc/jq/README and cscope's README and contrib/webcscope/INSTALL, the
# passages as ingested (BENCHMARKS.md, "A sixth folder")
JQ_README = (
    "jq\n==\n\njq is a lightweight and flexible command-line JSON processor.\n\n"
    "[![Coverage Status](https://coveralls.io/repos/stedolan/jq/badge.svg?branch=master)]"
    "(https://coveralls.io/github/stedolan/jq?branch=master),\n"
)
JQ_USAGE = (
    "If you want to learn to use jq, read the documentation at "
    "[https://stedolan.github.io/jq](https://stedolan.github.io/jq).  This\n"
    "documentation is generated from the docs/ folder of this repository.\n"
    "You can also try it online at [jqplay.org](https://jqplay.org).\n"
)
JQ_MAN = (
    "jq 1.6 changes: If you run jq with --arg foo bar, then $foo is available in the program "
    'and has the value "bar". Note that jq\'s --arg treats the value as a string.'
)


def test_a_what_is_question_is_answered_by_the_sentence_saying_what_it_is() -> None:
    """ "What is jq?" quoted "If you want to learn to use jq, read the documentation at ..."
    (the passage nearest in meaning) though a lower-ranked one says "jq is a lightweight and
    flexible command-line JSON processor."; the definition is now chosen, from any hit."""
    hits = [
        Hit(id="readme:c1", kind="chunk", score=0.9, text=JQ_USAGE, title="jq"),
        *(
            Hit(id=f"man:c{n}", kind="chunk", score=0.85 - n / 100, text=JQ_MAN, title="jq(1)")
            for n in range(6)
        ),
        Hit(id="readme:c0", kind="chunk", score=0.8, text=JQ_README, title="jq"),
    ]
    chosen = [s for s, _ in select_sentences("What is jq?", hits, _embedder())]
    assert chosen[0] == "jq is a lightweight and flexible command-line JSON processor.", chosen
    man_name = Hit(
        id="zstd:c0",
        kind="chunk",
        score=0.9,
        text="NAME\n\nzstd - zstd, zstdmt, unzstd, zstdcat - Compress or decompress .zst files",
        title="zstd(1)",
    )
    assert defines(
        "zstd - zstd, zstdmt, unzstd, zstdcat - Compress or decompress .zst files", "zstd"
    )
    assert (
        "Compress or decompress" in select_sentences("What is zstd?", [man_name], _embedder())[0][0]
    )


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("What is jq?", "jq"),
        ("Who was Ada Lovelace?", "ada lovelace"),
        ("What are the tides", "tides"),
        ("What is cscope designed for in large projects?", None),  # more than a thing
        ("Which Ubuntu release is codenamed Jammy Jellyfish?", None),
        # what a thing is for, or does, is said by the sentence that says what it is
        ("What is Callgrind used for?", "callgrind"),
        ("What does jq do?", "jq"),
        ("What is the Feed Pump FP-2 for?", "feed pump fp-2"),
        ("What is this used for?", None),  # a pronoun starts many sentences
        ("What does Memcheck detect?", None),
    ],
)
def test_the_thing_a_definition_question_asks_about(question: str, subject: str | None) -> None:
    assert defined_subject(question) == subject


CSCOPE_README = (
    "Cscope is a text screen based source browsing tool.  Although it is\n"
    "primarily designed to search C code (including lex and yacc files), it\n"
    "can also be used for C++ code.\n\n"
    "Using cscope, you can easily search for where symbols are used and\n"
    "defined.  Cscope is designed to answer questions like:\n\n"
    "        Where is this variable used?\n"
    "        What is the value of this preprocessor symbol?\n"
)
WEBCSCOPE_INSTALL = (
    "WebCScope Installation\n\nQuick Install\n\n"
    "0. Create a directory called cscope under your /cgi-bin (virtual) directory.\n"
    "\tCopy all the files in the distribution to this directory.\n"
)


def test_a_sentence_announcing_a_list_brings_its_first_item() -> None:
    hit = Hit(id="cscope:c0", kind="chunk", score=1.0, text=CSCOPE_README, title="README")
    chosen = [
        s for s, _ in select_sentences("What questions can cscope answer?", [hit], _embedder())
    ]
    at = chosen.index("Cscope is designed to answer questions like:")
    assert chosen[at + 1] == "Where is this variable used?", chosen


def test_a_heading_over_a_heading_brings_what_they_introduce() -> None:
    """ "How do I install WebCScope?" quoted "WebCScope Installation" alone: the next sentence,
    "Quick Install", is a heading too; the first step comes after both."""
    hit = Hit(id="install:c0", kind="chunk", score=1.0, text=WEBCSCOPE_INSTALL, title="INSTALL")
    chosen = [s for s, _ in select_sentences("How do I install WebCScope?", [hit], _embedder())]
    assert chosen[:2] == [
        "WebCScope Installation",
        "0. Create a directory called cscope under your /cgi-bin (virtual) directory.",
    ], chosen
