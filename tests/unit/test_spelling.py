"""British spellings fold to American ones for matching (kgrag.text.spelling), and words that
only look like a British spelling stay as they are."""

from __future__ import annotations

import pytest

from kgrag.planner.rule import fulltext_query
from kgrag.text import stem
from kgrag.text.spelling import MAX_TERM_SPELLINGS, american, spellings, term_spellings
from kgrag.text.tokens import lexical_tokens
from kgrag.text.words import word_set


@pytest.mark.parametrize(
    ("british", "us"),
    [
        ("licence", "license"),
        ("licences", "licenses"),
        ("colour", "color"),
        ("coloured", "colored"),
        ("behaviour", "behavior"),
        ("favourite", "favorite"),
        ("organise", "organize"),
        ("organisation", "organization"),
        ("normalising", "normalizing"),
        ("analyse", "analyze"),
        ("paralysed", "paralyzed"),
        ("centre", "center"),
        ("centred", "centered"),
        ("theatres", "theaters"),
        ("kilometre", "kilometer"),
        ("catalogue", "catalog"),
        ("catalogued", "cataloged"),
        ("grey", "gray"),
        ("travelled", "traveled"),
        ("modelling", "modeling"),
        ("practised", "practiced"),
        ("defence", "defense"),
        ("judgement", "judgment"),
        ("programme", "program"),
    ],
)
def test_a_british_spelling_is_folded_to_the_american_one(british: str, us: str) -> None:
    assert american(british) == us
    assert american(us) == us
    assert stem(british) == stem(us)
    assert british in spellings(us) and us in spellings(british)


@pytest.mark.parametrize(
    "word",
    sorted(
        word_set(
            # -ise belonging to the root, a short root, -wise; -our and -re words not listed
            "rise wise noise raise advise revise precise concise exercise promise premises "
            "surprise enterprise compromise expertise paradise franchise otherwise likewise "
            "sunrise this basis crisis four your hour tour pour acre genre ogre mediocre litter"
        )
    ),
)
def test_words_that_only_look_british_are_kept(word: str) -> None:
    assert american(word) == word
    assert spellings(word) == (word,)


def test_bm25_tokens_and_the_full_text_query_meet_across_spellings() -> None:
    assert "license" in lexical_tokens("Which licence does requests use?")
    assert lexical_tokens("colour-map") == ["colour-map", "color", "map"]
    assert fulltext_query("Which licence does requests use?").split(" | ")[:2] == [
        "licence",
        "license",
    ]
    assert "centre" in fulltext_query("Where is the data center?").split(" | ")


def test_a_document_term_is_looked_for_in_every_spelling_first_as_written() -> None:
    assert term_spellings("colour") == ("colour", "color")
    assert term_spellings("color") == ("color", "colour")
    assert term_spellings("licence") == ("licence", "license")
    assert term_spellings("pump") == ("pump",)
    assert term_spellings("colour management") == ("colour management", "color management")
    many = term_spellings("colour centre licence organisation")
    assert many[0] == "colour centre licence organisation" and len(many) == MAX_TERM_SPELLINGS
