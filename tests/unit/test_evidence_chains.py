"""Evidence chains (kgrag.agent.chains): the question's terms must be held by sentences linked to
its subject (same passage, or a shared name: the bridge entity), not scattered over unrelated
passages."""

from __future__ import annotations

from kgrag.agent.chains import chain
from kgrag.agent.support import assess
from kgrag.core import Hit

QUESTION = (
    "Who was the first president of the association which published "
    "Journal of Psychotherapy Integration?"
)
JOURNAL = Hit(
    id="journal",
    kind="chunk",
    score=1.0,
    title="Journal of Psychotherapy Integration",
    text="The Journal of Psychotherapy Integration is a peer-reviewed academic journal published "
    "by the American Psychological Association. It was established in 1991.",
)
ASSOCIATION = Hit(
    id="apa",
    kind="chunk",
    score=1.0,
    title="American Psychological Association",
    text="The American Psychological Association is the largest organization of psychologists in "
    "the United States. G. Stanley Hall was its first president.",
)
#: The last hop's words, about something else: no name links it to the journal.
UNRELATED = Hit(
    id="club",
    kind="chunk",
    score=1.0,
    title="Royal Chess Club",
    text="Henry Bird was the first president of the Royal Chess Club, founded in 1850.",
)


def test_a_chain_through_the_bridge_entity_covers_the_question() -> None:
    found = chain(QUESTION, [JOURNAL, UNRELATED, ASSOCIATION])
    assert found.terms == 1.0
    assert found.sentences[0].startswith("The Journal of Psychotherapy Integration")
    assert any("Stanley Hall" in s for s in found.sentences)
    assert not any("Henry Bird" in s for s in found.sentences)


def test_terms_in_an_unlinked_passage_do_not_complete_the_chain() -> None:
    """The last hop's terms ("first president") are in the evidence, but only in a passage no
    name links to the subject: pooled coverage is complete, the chain's is not."""
    with_bridge = chain(QUESTION, [JOURNAL, ASSOCIATION])
    without = chain(QUESTION, [JOURNAL, UNRELATED])
    assert without.terms < with_bridge.terms
    support = assess(QUESTION, [JOURNAL, UNRELATED], [JOURNAL, UNRELATED])
    assert support.evidence_terms == 1.0  # the pooled feature cannot tell
    assert support.chain_terms == without.terms < 1.0


def test_no_sentence_holding_the_subject_means_no_chain() -> None:
    found = chain(QUESTION, [ASSOCIATION, UNRELATED])
    assert found.terms == 0.0 and found.sentences == ()
    assert chain(QUESTION, []).terms == 0.0


def test_a_question_heard_from_speech_may_start_anywhere() -> None:
    """Its names may be misheard ("Churnel of Sykotherapy"), so with ``subject=False`` no
    sentence holding them is needed to start the chain."""
    misheard = (
        "Who was the first president of the association which published Churnel of Sykotherapy?"
    )
    assert chain(misheard, [JOURNAL, ASSOCIATION]).terms == 0.0
    assert chain(misheard, [JOURNAL, ASSOCIATION], subject=False).terms > 0.5
