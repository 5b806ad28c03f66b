"""Name phrases of a question and the name anchors they bring into the evidence (pure parts;
the lexical stage that supplies the candidates runs in tests/integration/test_abstention.py)."""

from __future__ import annotations

from kgrag.agent.anchors import MAX_ANCHORS, anchors, word_anchor
from kgrag.agent.support import EVIDENCE_HITS, assess, name_phrases, phrase_in
from kgrag.core import Hit


def _hit(text: str, title: str = "", n: int = 0) -> Hit:
    return Hit(id=f"c{n}-{abs(hash(text))}", kind="chunk", score=1.0, text=text, title=title)


def test_name_phrases_are_capitalised_runs_without_question_words() -> None:
    question = "Which region is Corey Taylor's city of birth, near the Journal of Psychotherapy?"
    assert name_phrases(question) == [("corey", "taylor"), ("journal", "of", "psychotherapy")]
    assert name_phrases("The 1920 Summer Olympics: where?") == [("1920", "summer", "olympic")]
    assert name_phrases("what does the valve do?") == []


def test_a_phrase_is_found_whole_in_the_title_or_text_without_accents() -> None:
    (phrase,) = name_phrases("Who composed Aschenbrödel Suite?")
    assert phrase_in(phrase, _hit("Aschenbrodel Suite is an opera."))
    assert phrase_in(phrase, _hit("An opera.", title="Aschenbrödel Suite"))
    assert not phrase_in(phrase, _hit("The Suite of Aschenbrodel."))


def test_a_missing_name_is_anchored_by_the_first_candidate_holding_it() -> None:
    question = "When did the country containing Nugegoda leave the British Empire?"
    evidence = [_hit("The British Empire ended its rule in many colonies.", n=i) for i in range(3)]
    other = _hit("Colombo is the capital.", n=7)
    naming = _hit("Nugegoda is a suburb of Colombo, Sri Lanka.", n=8)
    added = anchors(question, evidence, [other, naming, _hit("Nugegoda again.", n=9)])
    assert added == [naming]  # one per phrase; "British Empire" is already there
    assert anchors(question, [*evidence, naming], [naming]) == []
    assert anchors(question, evidence, [other]) == []  # nothing readable names it: no anchor


def test_anchors_are_bounded() -> None:
    question = "Did Alpha meet Beta before Gamma or Delta?"
    pool = [_hit(f"{n} signed.", n=i) for i, n in enumerate(["Alpha", "Beta", "Gamma", "Delta"])]
    assert len(anchors(question, [], pool)) == MAX_ANCHORS


def test_the_support_model_reads_only_the_judged_evidence() -> None:
    question = "Who maintains the Pressure Valve PV-7?"
    filler = [_hit("The plant canteen serves lentil soup.", n=i) for i in range(EVIDENCE_HITS)]
    answering = _hit("The Pressure Valve PV-7 is maintained by Ada Lovelace.", n=99)
    assert assess(question, [answering], [answering, *filler]).supported
    late = assess(question, [answering], [*filler, answering])
    assert not late.supported and late.evidence_names == 0.0
    assert 0.0 <= late.probability < assess(question, [answering], [answering]).probability


def test_a_nameless_question_is_anchored_by_a_passage_holding_every_missing_word() -> None:
    """moreutils' README: "What does sponge do?" names nothing; the dense passages were about
    other tools and held no word of it."""
    evidence = [_hit("Tesseract supports various output formats.", n=i) for i in range(3)]
    listing = _hit("chronic: runs a command quietly\nsponge: soak up standard input", n=7)
    assert word_anchor("What does sponge do?", evidence, [listing]) == listing
    assert word_anchor("What does sponge do?", [*evidence, listing], [listing]) is None
    # a question with a name keeps the name anchors; one passage must hold every missing word
    assert word_anchor("What does Sponge Bob do?", evidence, [listing]) is None
    mercury = _hit("Freddie mercury sang.", n=8)
    assert word_anchor("What is the boiling point of mercury?", evidence, [mercury]) is None


def test_a_word_anchor_holds_every_content_word_of_the_question() -> None:
    """pandas' pyproject.toml: the evidence held "pandas" and "license" but no "use"; a chunk
    holding "Use a fixed datetime" alone came first."""
    evidence = [_hit("[project] name = 'pandas' license = 'BSD-3-Clause'", n=1)]
    lint = _hit('"datetime.datetime.now".msg = "Use a fixed datetime"', n=2)
    assert word_anchor("Which licence does pandas use?", evidence, [lint]) is None
