"""kgrag.agent.namesakes: a quoted passage naming another thing with a word of the question's
name phrase, and missing the word that tells them apart, is a namesake's."""

from __future__ import annotations

from kgrag.agent.namesakes import namesake
from kgrag.core import Hit


def _hit(text: str, title: str = "", document: str | None = None) -> Hit:
    return Hit(
        id=f"c{abs(hash(text))}",
        kind="chunk",
        score=1.0,
        text=text,
        title=title,
        document_id=document,
    )


TAYLOR = _hit(
    "Born in Salt Lake City, Utah Territory, Taylor was the son of Thomas E. Taylor.",
    title="John H. Taylor",
)


def test_another_name_with_the_shared_word_is_a_namesake() -> None:
    assert namesake("Where was Corey Taylor born?", [TAYLOR])
    township = _hit("Morse Bluff Township is one of twenty-four townships in Saunders County.")
    assert namesake("Where was David Morse born?", [township])
    # "big - budget" is not the name "Big"
    film = _hit("It will be a big - budget story based on ``The Eye of the Beholder''.")
    assert namesake("Who directed Big Eye?", [film])


def test_a_quote_holding_the_phrase_whole_clears_it() -> None:
    band = _hit("Corey Taylor sings in Stone Sour, an American rock band.")
    assert not namesake("Where was Corey Taylor born?", [TAYLOR, band])
    assert not namesake("Where was Corey Taylor born?", [band])


def test_an_ordinary_word_shared_tells_nothing() -> None:
    # "river" is written in lower case: "Nam Khan River" is no namesake of "Bubye River"
    falls = _hit("The falls are on the Nam Khan River, a river of Laos.")
    assert not namesake("Where is the Bubye River found?", [falls])
    assert namesake(
        "Where is the Bubye River found?", [_hit("The falls are on the Nam Khan River.")]
    )


def test_a_shortened_name_is_no_namesake() -> None:
    # initials of the phrase's words: the same name written short
    iris = _hit("The Iris flower data set was introduced by R.A. Fisher in 1936.")
    assert not namesake("Which data set did Ronald Fisher introduce?", [iris])
    assert namesake("Which data set did Ronald Fisher introduce?", [_hit("James Fisher wrote it.")])
    # the bare shared word, or a name made only of the phrase's words
    assert not namesake("Where was Corey Taylor born?", [_hit("Taylor was born in Des Moines.")])
    assert not namesake("What does GNU Make do?", [_hit("The Make utility reads a makefile.")])
    # one name phrase word: nothing to tell apart ("GNU sed" asks about "GNU")
    assert not namesake("What does GNU sed do?", [_hit("POSIX sed prints nothing here.")])
    # numbers are no name words: "Ubuntu 23.10" is one word
    assert not namesake("When does Ubuntu 23.10 reach end of life?", [_hit("Ubuntu LTS ...")])


def test_the_documents_own_passage_naming_the_phrase_clears_it() -> None:
    posix = _hit("POSIX Make is specified by the standard.", document="d1")
    heading = _hit("GNU Make NEWS", document="d1")
    assert namesake("What does GNU Make do?", [posix])
    assert not namesake("What does GNU Make do?", [posix], [posix, heading])
    titled = _hit("POSIX Make is specified by the standard.", title="GNU Make manual")
    assert not namesake("What does GNU Make do?", [titled])


def test_honorifics_and_a_trailing_kind_word_tell_nothing_apart() -> None:
    iris = _hit("This is the data set of Sir R.A. Fisher, the best known in the literature.")
    assert not namesake("Which data set did Ronald Fisher introduce?", [iris])
    # "repository" is an ordinary word ending the phrase: the kind of thing, not its name
    pci = _hit("List of PCI ID's, maintained by the PCI ID Project; a repository of IDs.")
    assert not namesake("Who maintains the PCI ID Repository?", [pci])
    # a leading word is the name's own, ordinary or not ("big - budget", "Big Eye")
    film = _hit("A big - budget film based on The Eye of the Beholder.")
    assert namesake("Who directed Big Eye?", [film])
