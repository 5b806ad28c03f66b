"""The extractive answer does not stop at a heading: "Installation" alone answers nothing, the
sentence after it does (found on a real README: "What does README.md say about installation?"
was answered "Installation"). Real MiniLM embedder, no store needed."""

from __future__ import annotations

from functools import cache

import pytest

from kgrag.agent.synthesis import is_heading, select_sentences
from kgrag.config import Settings
from kgrag.core import Hit
from kgrag.modalities import factory
from kgrag.modalities.base import TextEmbedder

README = (
    "Introduction\n\nhttplib2 is a comprehensive HTTP client library.\n\n"
    "Installation\n\n$ pip install httplib2\n\nUsage\n\nA simple retrieval:\n\n"
    "import httplib2\n"
)


@cache
def _embedder() -> TextEmbedder:
    return factory.text_embedder(Settings())


@pytest.mark.parametrize(
    ("text", "heading"),
    [
        ("Installation", True),
        ("2.1 Getting started", True),
        ("A simple retrieval:", True),
        ("$ pip install httplib2", False),
        ("import httplib2", False),
        ("The library caches responses.", False),
    ],
)
def test_headings_are_told_from_sentences(text: str, heading: bool) -> None:
    assert is_heading(text) is heading


def test_a_chosen_heading_brings_the_sentence_it_introduces() -> None:
    hit = Hit(id="readme:c0", kind="chunk", score=1.0, text=README, title="Introduction")
    chosen = [
        s for s, _ in select_sentences("What does it say about installation?", [hit], _embedder())
    ]
    assert chosen[:2] == ["Installation", "$ pip install httplib2"], chosen
    assert "A simple retrieval:" not in chosen, "a heading does not lead into another heading"
