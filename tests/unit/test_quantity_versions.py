"""A release's number is no amount (kgrag/agent/quantity.py), read in a real manual.

Found on a real folder: "since Ninja 1.2" was read as a quantity, so a sentence dating a
feature answered a "How many ...?" question. The sentences of Ninja's manual
(tests/data/versions/SOURCE.md), read by kgrag's own HTML reader, that date a feature by release
state no quantity; a number after "version" or a "v", or after a product's name inside a sentence,
is a release too; an amount stays one, after a capitalised word that is no name included."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kgrag.agent.quantity import states_quantity
from kgrag.ingest.containers.expand import parse_all
from kgrag.ingest.sources import expand_inputs
from kgrag.text.sentences import sentence_texts

MANUAL = Path(__file__).parents[1] / "data" / "versions" / "ninja-manual.html.gz"
QUESTION = "How many jobs does Ninja run in parallel?"


def _sentences() -> list[str]:
    (item,) = expand_inputs([str(MANUAL)]).items
    (doc,) = parse_all(item, 10_000_000).documents
    return [s for page in doc.pages for s in sentence_texts(page.text, min_chars=1)]


def test_sentences_dating_a_feature_by_release_state_no_quantity() -> None:
    dated = [s for s in _sentences() if re.search(r"\bsince Ninja \d", s)]
    assert len(dated) >= 10, dated
    assert [s for s in dated if states_quantity(s, QUESTION)] == []


def test_amounts_of_the_manual_are_still_quantities() -> None:
    stated = [s for s in _sentences() if re.search(r"\bdepth of 1\b", s)]
    assert stated and all(states_quantity(s, QUESTION) for s in stated), stated


@pytest.mark.parametrize(
    "sentence",
    [
        "Changed in version 3.",
        "The v1.2 release renamed the option.",
        "It needs Python 3 or later.",
        "Ninja 1.2 added the console pool.",
    ],
)
def test_a_release_is_no_amount(sentence: str) -> None:
    assert not states_quantity(sentence, QUESTION)


@pytest.mark.parametrize(
    "sentence",
    [
        "About 40 jobs run at once.",
        "Over 1.5 million builds ran.",
        "It costs USD 40.",
        "The build ran 12 jobs.",
        "The Top 10 list has 30 entries.",
    ],
)
def test_an_amount_is_still_one(sentence: str) -> None:
    assert states_quantity(sentence, QUESTION)
