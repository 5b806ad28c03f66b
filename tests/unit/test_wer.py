"""Word error rate: normalisation and word-level edit distance."""

from __future__ import annotations

import pytest

from tests.support.wer import normalise_text, word_edit_distance, word_error_rate


def test_normalise_lowercases_and_strips_punctuation() -> None:
    assert normalise_text("And so, my fellow-Americans: ask NOT!") == (
        "and so my fellow americans ask not"
    )
    assert normalise_text("Don't  stop\tbelieving.\n") == "dont stop believing"
    assert normalise_text("  ...  ") == ""


def test_edit_distance_counts_each_kind_of_edit() -> None:
    ref = ["a", "b", "c", "d"]
    assert word_edit_distance(ref, ref) == 0
    assert word_edit_distance(ref, ["a", "x", "c", "d"]) == 1  # substitution
    assert word_edit_distance(ref, ["a", "b", "d"]) == 1  # deletion
    assert word_edit_distance(ref, ["a", "b", "c", "c", "d"]) == 1  # insertion
    assert word_edit_distance(ref, []) == 4
    assert word_edit_distance([], ["x", "y"]) == 2
    assert word_edit_distance(["kitten", "sitting", "on"], ["sitting", "on", "kitten"]) == 2


def test_word_error_rate_is_edits_per_reference_word() -> None:
    ref = "Ask not what your country can do for you."
    assert word_error_rate(ref, "ask not what your country can do for you") == 0.0
    assert word_error_rate(ref, "ask not what the country can do for you") == pytest.approx(1 / 9)
    assert word_error_rate(ref, "ask what your country can do") == pytest.approx(3 / 9)
    # Insertions can push the rate past 1.
    assert word_error_rate("yes", "no no no") == pytest.approx(3.0)


def test_word_error_rate_refuses_an_empty_reference() -> None:
    with pytest.raises(ValueError, match="no words"):
        word_error_rate(" , . ", "anything")
