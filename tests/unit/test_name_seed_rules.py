"""The name seeds' two rules that read the question alone (kgrag/executor/name_seeds.py): a
number is no name a passage is about, and a seed's bridge is searched with the clause of the
question around the name it holds. The searches are plain functions over real passages' text."""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.core import Hit
from kgrag.executor.name_seeds import clause_of, name_seeds


def _passage(title: str, text: str) -> Hit:
    return Hit(id=title, kind="chunk", score=0.6, title=title, text=text)


SONG = _passage(
    "Brother (Pearl Jam song)", '"Brother" is a song by the American rock band Pearl Jam.'
)
MARCH = _passage(
    "Salt March", "The 24-day march began from 12 March 1930 and continued until 6 April 1930."
)
SAILOR = _passage(
    "Leopold Standaert",
    "Leopold Standaert was a sailor from Belgium, who represented his native country.",
)
LABEL = _passage(
    "Great Big Mouth Records",
    "A record label founded by Slipknot frontman Corey Taylor and Denny Harvey.",
)


def _near(hits: Sequence[Hit]) -> list[float]:
    return [0.5 for _ in hits]


def test_a_number_alone_seeds_no_passage() -> None:
    """ "1930" is held by any passage of that year: its nearest holder is no first hop."""
    question = (
        "What is the native language of the person who broke the salt law in Belgium in 1930?"
    )
    found = name_seeds(question, [], [MARCH, SAILOR], lambda _phrase: [MARCH, SAILOR], _near)
    assert [h.title for h in found] == ["Leopold Standaert"]


def test_the_clause_around_the_name_the_passage_holds() -> None:
    question = (
        "What is the usual average snowfall in the city where the performers of Brother were "
        "formed?"
    )
    assert clause_of(question, SONG) == "the performers of Brother were formed"
    # the passage holds none of the question's names
    assert clause_of("Which region is Corey Taylor's city of birth located?", SAILOR) is None


def test_the_clause_stops_at_punctuation_and_keeps_a_possessive() -> None:
    corey = "Which region is Corey Taylor's city of birth located?"
    assert clause_of(corey, LABEL) == "region is Corey Taylor's city of birth located"
    nile = _passage("The Jewel of the Nile", "A film.")
    question = (
        "What movie stars Morgan Freeman, Robert De Niro and the producer of The Jewel of the Nile?"
    )
    assert clause_of(question, nile) == "Robert De Niro and the producer of The Jewel of the Nile"
