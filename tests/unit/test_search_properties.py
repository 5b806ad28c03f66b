"""A chunk's search properties (kgrag.text.search_properties): the one function ingestion and
migrations 0010/0011 compute them with."""

from __future__ import annotations

from kgrag.text.search_properties import ChunkSearchProperties, chunk_search_properties


def test_words_are_the_text_with_line_breaks_as_spaces_and_ascii_has_no_folded_copy() -> None:
    text = "errno: look up errno names\r\nifdata: get network interface info"
    assert chunk_search_properties(text) == ChunkSearchProperties(
        words="errno: look up errno names  ifdata: get network interface info", text_folded=None
    )


def test_accented_text_stores_its_folded_words() -> None:
    text = "The ferry crosses the lake towards\nGenève and stops at Nyon."
    assert chunk_search_properties(text) == ChunkSearchProperties(
        words="The ferry crosses the lake towards Genève and stops at Nyon.",
        text_folded="The ferry crosses the lake towards Geneve and stops at Nyon.",
    )
