"""Accent folding (kgrag.text.folding) and the full-text query it folds."""

from __future__ import annotations

from kgrag.planner.rule import fulltext_query
from kgrag.text.folding import fold, folded


def test_accents_are_folded_and_letters_without_a_decomposition_spelled_in_ascii() -> None:
    assert (
        fold("Aschenbrödel, Zürich, São Paulo, résumé") == "Aschenbrodel, Zurich, Sao Paulo, resume"
    )
    assert (
        fold("Björk Guðmundsdóttir, Søren, Łódź, Straße")
        == "Bjork Gudmundsdottir, Soren, Lodz, Strasse"
    )


def test_ascii_text_stores_no_folded_copy_and_other_scripts_keep_their_letters() -> None:
    assert folded("plain ASCII text") is None
    assert folded(None) is None
    assert folded("Zürich") == "Zurich"
    assert fold("北京 Москва") == "北京 Москва"


def test_the_full_text_query_asks_for_an_accented_word_whole_and_folded() -> None:
    # before: "zürich" was cut at the "ü" into "z" and "rich"
    assert fulltext_query("Where is Zürich?") == "zurich"
    assert fulltext_query("Who wrote Aschenbrödel?") == fulltext_query("Who wrote Aschenbrodel?")
