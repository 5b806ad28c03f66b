"""A name the question misspells is read as the evidence writes it (kgrag.agent.misspellings),
and only then: a short name, a name two edits away, or one with two near spellings in the
evidence stays as written, and the support test still abstains when the evidence lacks it."""

from __future__ import annotations

import pytest

from kgrag.agent.misspellings import one_edit_apart, respelled
from kgrag.agent.support import assess
from kgrag.core import Hit


def _hit(text: str, title: str = "") -> Hit:
    return Hit(id=f"c{abs(hash(text))}", kind="chunk", score=1.0, text=text, title=title)


# Wikipedia's opening sentence of "Margraviate of Austria" (MuSiQue's question writes it
# "Margaraviate")
MARGRAVIATE = _hit(
    "The Margraviate of Austria was a medieval frontier march of the Duchy of Bavaria.",
    "Margraviate of Austria",
)


@pytest.mark.parametrize(
    ("a", "b", "apart"),
    [
        ("margaraviate", "margraviate", True),  # a letter added
        ("margraviate", "margaraviate", True),
        ("kubernetes", "kubernetis", True),  # changed
        ("wittgenstein", "wittgenstien", True),  # two neighbours swapped
        ("wittgenstein", "wittgenstein", False),  # the same word
        ("wittgenstein", "witgenstien", False),  # two edits
        ("anderson", "andersonville", False),
    ],
)
def test_one_edit(a: str, b: str, apart: bool) -> None:
    assert one_edit_apart(a, b) is apart


def test_a_misspelt_name_is_written_as_the_evidence_writes_it() -> None:
    question = "What is the Margaraviate of Austria an instance of?"
    assert (
        respelled(question, [MARGRAVIATE]) == "What is the Margraviate of Austria an instance of?"
    )


def test_names_the_evidence_holds_short_names_and_far_names_stay() -> None:
    evidence = [_hit("Wittgenstein and Hansen met in Cambridge in 1929.")]
    for question in (
        "When did Wittgenstein meet Hansen?",  # held as written
        "When did Hanson meet Wittgenstein?",  # six letters: another family, not a typo
        "When did Witgenstien arrive?",  # two edits
    ):
        assert respelled(question, evidence) == question


def test_two_near_spellings_in_the_evidence_leave_the_name_as_written() -> None:
    evidence = [_hit("Marianne Andersson and Marianne Anderssen both sang.")]
    question = "What did Marianne Anderssan sing?"
    assert respelled(question, evidence) == question


def test_the_support_test_finds_the_misspelt_name_and_still_needs_the_evidence() -> None:
    question = "Which duchy was the Margaraviate of Austria a frontier march of?"
    found = assess(question, [MARGRAVIATE], [MARGRAVIATE])
    assert found.evidence_names == 1.0 and found.supported
    elsewhere = _hit("The Duchy of Styria was a duchy of the Holy Roman Empire.", "Styria")
    assert not assess(question, [elsewhere], [elsewhere]).supported
