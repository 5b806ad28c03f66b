"""What a question asks for (kgrag.agent.asked): the noun phrase of its question word, stemmed,
its head last; none for questions that name no such thing."""

from __future__ import annotations

import pytest

from kgrag.agent.asked import asked_for, names_phrase


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Under which licenses is kmod released?", ("licens",)),
        ("What are the ownership rules in Rust?", ("ownership", "rul")),
        ("How much memory does bunzip2 need?", ("memory",)),
        ("Which hash functions does the Nettle manual recommend?", ("hash", "function")),
        ("Which company acquired Avahi?", ("company",)),
        ("What is the name of the waterfall in the country where it flows?", ("waterfall",)),
        ("What kind of university did she attend?", ("university",)),
        ("What is the country where Baure is located named after?", ("country",)),
        ("What is kmod?", ()),
        ("How do I remove a kernel module with modprobe?", ()),
        ("What year did the company dissolve?", ()),
        ("Is telemetry turned on by default?", ()),
    ],
)
def test_asked_for(question: str, asked: tuple[str, ...]) -> None:
    assert asked_for(question) == asked


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        # the ninth real folder's question (it was read as asking for "environment")
        (
            "Which environment variable changes where the OpenCL ICD loader looks for ICDs?",
            ("environment", "variabl"),
        ),
        (
            "Which environment variable sets the default editor for crontab?",
            ("environment", "variabl"),
        ),
        ("Which environment variables change the default editor?", ("environment", "variabl")),
        ("Which configuration file lists the APT sources?", ("configuration", "fil")),
        ("Which system call returns the process ID?", ("system", "call")),
        ("Which user process handles the signal?", ("user", "proces")),
        # one noun, then the verb, as before
        ("Which company acquired Avahi?", ("company",)),
        ("Which tool lets users change the password?", ("tool",)),
        ("Which files access the network?", ("fil",)),
        # the real folders' questions with "does" keep their phrase
        ("Which NTP servers does systemd-timesyncd use as fallback?", ("ntp", "server")),
    ],
)
def test_a_noun_noun_compound_before_the_verb_is_asked_for(
    question: str, asked: tuple[str, ...]
) -> None:
    assert asked_for(question) == asked


def test_names_phrase_needs_the_words_together_and_in_order() -> None:
    phrase = asked_for("What are the ownership rules in Rust?")
    assert names_phrase("First, let's take a look at the ownership rules.", phrase)
    assert names_phrase("Ownership Rules", phrase)
    assert not names_phrase("the rules of the ownership system", phrase)
    assert not names_phrase("Ownership is a set of rules", phrase)
