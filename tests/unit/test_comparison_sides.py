"""The sides a comparison question names (kgrag.planner.comparison): the frames English
comparisons take, and look-alikes that compare nothing."""

from __future__ import annotations

import pytest

from kgrag.planner.comparison import compared_sides


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        ("Which is faster, gzip or xz?", ("gzip", "xz")),
        ("How do bzip2 and gzip compare in compression ratio?", ("bzip2", "gzip")),
        ("How do bzip2 and gzip compare?", ("bzip2", "gzip")),
        ("Is xz better than bzip2 at compressing?", ("xz", "bzip2")),
        ("Is the Acme offer cheaper than the Globex one?", ("Acme offer", "Globex offer")),
        (
            "What distinguishes the Apache License from the BSD license?",
            ("Apache License", "BSD license"),
        ),
        (
            "Contrast the Apache License with the BSD license on patents.",
            ("Apache License", "BSD license"),
        ),
        ("How are bzip2 and xz different in recovering data?", ("bzip2", "xz")),
        ("zstd vs gzip: which compresses faster?", ("zstd", "gzip")),
        ("What is the difference between cp and mv?", ("cp", "mv")),
        ("What do ext3 and ext4 have in common?", ("ext3", "ext4")),
        ("How do the old pump and the new one compare?", ("old pump", "new pump")),
        ("Compare the 2022 and 2023 budgets", ("2022 budgets", "2023 budgets")),
        ("Debian or Fedora for a server?", ("Debian", "Fedora")),
        ("Which vendor offers the better warranty, Acme or Globex?", ("Acme", "Globex")),
    ],
)
def test_the_sides_of_a_comparison(question: str, sides: tuple[str, ...]) -> None:
    assert compared_sides(question) == sides


@pytest.mark.parametrize(
    "question",
    [
        "Did we compare notes with the team?",
        "Compare notes with the team before the review.",
        "Which is the default, gzip or xz?",  # a choice: nothing is compared
        "Which file holds the key, id_rsa or id_ed25519?",
        "Compare the two offers.",  # the sides are not named
        "Which of the vendors is cheaper?",
        "How does gzip work?",
        "What is faster than light?",
    ],
)
def test_look_alikes_name_no_sides(question: str) -> None:
    assert compared_sides(question) == ()


def test_a_very_long_question_is_not_read_for_sides() -> None:
    assert compared_sides("Which is faster, " + "gzip " * 100_000 + "or xz?") == ()
