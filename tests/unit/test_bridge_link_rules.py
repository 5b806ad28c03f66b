"""When a passage found through a bridge names it, and how its chain scores
(kgrag/executor/bridge_links.py)."""

from __future__ import annotations

import pytest

from kgrag.executor.bridge_links import chain_score, names_bridge


def test_a_passage_names_its_bridge_in_its_text_or_title_folded() -> None:
    assert names_bridge("Mirela Vastok", {"title": "X", "text": "painted by Mirela Vastok."})
    assert names_bridge("Zürich", {"title": "Zurich Airport", "text": "An airport."})
    assert names_bridge("zurich", {"title": "Airport", "text": "It serves ZÜRICH."})


def test_a_name_alike_does_not_name_the_bridge() -> None:
    assert not names_bridge("Mirela Vastok", {"title": "Mirela Vasko", "text": "A painter."})
    assert not names_bridge("Mirela Vastok", {"title": "Vastok Gallery", "text": "Paintings."})


def test_a_name_counts_as_whole_words_only() -> None:
    assert not names_bridge("Ford", {"title": "Prices", "text": "Few could afford it."})
    assert names_bridge("Ford", {"title": "Cars", "text": "Built by Ford, in 1908."})
    assert not names_bridge("Anna Karenina (film)", {"title": "Ann", "text": "A name."})


def test_the_article_of_what_the_bridge_names_counts() -> None:
    # the title less its bracketed disambiguation is part of the bridge's name
    row = {"title": "Planet of the Apes (2001 film)", "text": "A film directed by Tim Burton."}
    assert names_bridge("Dawn of the Planet of the Apes", row)
    assert names_bridge("Tim Burton", row)
    assert not names_bridge("Planet Hollywood", row)
    assert not names_bridge("", row)
    assert not names_bridge("Tomas Brenn", {"title": "", "text": "Another painter."})


def test_a_chain_scores_as_the_mean_of_its_links() -> None:
    assert chain_score(0.9, 0.7) == pytest.approx(0.8)
    assert chain_score(0.7, 0.7) == pytest.approx(0.7)
