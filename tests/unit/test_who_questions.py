"""Questions asking who, and quoted sentences that name someone (kgrag.agent.someone)."""

from __future__ import annotations

import pytest

from kgrag.agent.someone import asks_who, names_someone


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Who designed the FreeType logo?", True),
        ("who wrote the original Hyphen library?", True),
        ("Whose key signs the archive?", True),
        ("By whom was the project started?", True),
        ("Which users who are in the sudo group can log in?", False),
        ("What is the default compression level of gzip?", False),
    ],
)
def test_who_is_asked_by_its_first_word(question: str, asks: bool) -> None:
    assert asks_who(question) is asks


QUESTION = "Who designed the FreeType logo?"


@pytest.mark.parametrize(
    "sentence",
    [
        # FreeType's README, quoted for the question on the seventeenth folder
        "It is written in C, designed to be small, efficient, highly customizable, and portable",
        "FreeType is a freely available software library to render fonts.",
        "The logo was drawn by a volunteer.",
    ],
)
def test_a_sentence_naming_only_the_question_names_no_one(sentence: str) -> None:
    assert not names_someone(sentence, QUESTION)


@pytest.mark.parametrize(
    "sentence",
    [
        "The FreeType logo was designed by Manuel Colom.",
        "Hall, who was the first president, designed it.",
        "Please send your designs to freetype@nongnu.org.",
    ],
)
def test_a_name_or_an_address_names_someone(sentence: str) -> None:
    assert names_someone(sentence, QUESTION)
