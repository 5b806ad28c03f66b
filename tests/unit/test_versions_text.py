"""How a version is written (:mod:`kgrag.text.versions`), the one reading every stage shares."""

from __future__ import annotations

import pytest

from kgrag.agent.names import raw_words
from kgrag.planner.rule import fulltext_query, identifiers
from kgrag.text.tokens import lexical_tokens
from kgrag.text.versions import is_dotted_number, is_version, shorter_versions, without_v


@pytest.mark.parametrize(
    ("word", "dotted", "version"),
    [
        ("3.19", True, True),
        ("2.6.32", True, True),
        ("v2.39", False, True),
        ("V1.0.2", False, True),
        ("v2", False, False),
        ("3", False, False),
        ("3.19.0-1", False, False),
        ("a.b", False, False),
    ],
)
def test_what_is_a_version(word: str, dotted: bool, version: bool) -> None:
    assert is_dotted_number(word) is dotted
    assert is_version(word) is version


def test_a_release_belongs_to_its_shorter_versions() -> None:
    assert without_v("v2.39.5") == "2.39.5" and without_v("valgrind") == "valgrind"
    assert shorter_versions("3.19.0") == ["3.19"]
    assert shorter_versions("1.2.3.4") == ["1.2.3", "1.2"]
    assert shorter_versions("3.19") == []


def test_every_stage_reads_a_version_alike() -> None:
    assert lexical_tokens("Release v2.39.5") == [
        "release",
        "v2.39.5",
        "v2",
        "39",
        "5",
        "2.39.5",
        "2.39",
    ]
    assert lexical_tokens("3.19.0") == ["3.19.0", "3", "19", "0", "3.19"]
    assert identifiers("What changed in Valgrind 3.19?") == ("3.19",)
    assert fulltext_query("What changed in Valgrind 3.19?") == "changed | valgrind | 3.19* | 3 | 19"
    assert raw_words("Git v2.39 Release Notes") == ["Git", "2", "39", "Release", "Notes"]
