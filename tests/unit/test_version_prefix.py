"""A version written with its "v" ("Git v2.39 Release Notes", "v0.0.2") is the version a question
asks for without it ("Git 2.39"): the fifth real folder's release-notes questions abstained.
The passage is the real head of Git's 2.39 release notes (tests/data/text, from
/usr/share/doc/git/RelNotes/2.39.0.txt), titled as kgrag titles it."""

from __future__ import annotations

from pathlib import Path

from kgrag.agent.names import words
from kgrag.agent.support import assess
from kgrag.core import Hit

NOTES = Path(__file__).parents[1] / "data" / "text" / "git-2.39.0-relnotes.txt"


def _head() -> Hit:
    text = NOTES.read_text(encoding="utf-8")[:1500]
    return Hit(id="c0", kind="chunk", score=1.0, text=text, title="Git v2.39 Release Notes")


def test_a_version_with_its_v_is_the_version_asked_for() -> None:
    head = _head()
    for question in (
        "Which option did git symbolic-ref learn in Git 2.39?",
        "What new option was added to git patch-id in Git 2.39?",
    ):
        found = assess(question, [head], [head])
        assert found.supported, (question, found)


def test_another_version_is_still_no_support() -> None:
    head = _head()
    found = assess("Which option did git symbolic-ref learn in Git 2.38?", [head], [head])
    assert not found.supported


def test_only_a_v_before_a_dotted_number_is_dropped() -> None:
    assert words("Git v2.39 and V1.0.2") == ["git", "2", "39", "and", "1", "0", "2"]
    assert words("the V8 engine, v1 of vim2.0") == ["the", "v8", "engin", "v1", "of", "vim2", "0"]
