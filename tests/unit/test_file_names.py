"""A picture's file name says what it shows, word for word (kgrag/text/file_names.py): the words a
question can match in it, none in a camera's name, and the question's words a name must have."""

from __future__ import annotations

import pytest

from kgrag.text.file_names import name_matches, name_words, picture_query_terms


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("flower", {"flower"}),
        ("red_rose-2019", {"red", "ros"}),
        ("BoardLayout", {"boardlayout", "board", "layout"}),
        ("Eiffel tower at night", {"eiffel", "tower", "night"}),
        ("nrf52-memory-map", {"nrf52", "nrf", "memory", "map"}),
        ("IMG_2041_flower", {"flower"}),
    ],
)
def test_a_descriptive_name_gives_its_stemmed_words(name: str, words: set[str]) -> None:
    assert name_words(name) == words


@pytest.mark.parametrize(
    "name",
    [
        "IMG_2041",
        "DSC0001",
        "DSCN4411",
        "PXL_20240101_123456789",
        "MVIMG_20230612_101010",
        "WhatsApp Image 2024-03-01 at 12.00.01",
        "Screenshot 2024-01-01 at 10.22.33",
        "photo_2019",
        "f3",
    ],
)
def test_a_cameras_name_says_nothing(name: str) -> None:
    assert name_words(name) == frozenset()
    assert not name_matches(("flower",), name)


def test_a_question_names_what_it_wants_not_the_kind_of_picture() -> None:
    assert picture_query_terms("Show me a photo of a flower.") == ("flower",)
    assert picture_query_terms("Show me photos of flowers") == ("flower",)
    assert picture_query_terms("Show me the memory map picture.") == ("memory", "map")
    assert picture_query_terms("What does deps.png show?") == ("dep",)
    assert picture_query_terms("Show me a picture of it.") == ()
    assert picture_query_terms("Show me a picture.") == ()


def test_a_name_matches_only_when_it_has_every_word_of_the_question_whole() -> None:
    flower = picture_query_terms("Show me pictures of flowers.")
    assert name_matches(flower, "flower")
    assert name_matches(flower, "IMG_2041_flower")
    assert not name_matches(flower, "cauliflower_soup")  # a word, not a substring
    assert not name_matches(flower, "IMG_2041")
    roses = picture_query_terms("Show me a photo of red roses")
    assert name_matches(roses, "red_rose-2019")
    assert not name_matches(roses, "rose_garden")  # "red" is missing
    assert name_matches(picture_query_terms("a picture of the board layout"), "BoardLayout")
    assert not name_matches((), "flower")


def test_words_written_together_in_a_name_match_the_question_s_two_words() -> None:
    """libjs-rickshaw's screenshots/scatterplot.png: "Show me a picture of a scatter plot." was
    not found, "scatter" and "plot" being no words of the name."""
    terms = picture_query_terms("Show me a picture of a scatter plot.")
    assert terms == ("scatter", "plot")
    assert name_matches(terms, "scatterplot")
    assert name_matches(picture_query_terms("Show me the pie charts"), "piechart-2019")
    # both words, next to each other in the question; not one of them alone
    assert not name_matches(("scatter", "plot"), "scatter")
    assert not name_matches(("plot", "red", "scatter"), "scatterplot")
    assert name_matches(("red", "scatter", "plot"), "red_scatterplot")
