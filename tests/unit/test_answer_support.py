"""The answer-level metric (SQuAD normalisation, gold or alias contained) and the support test's
pure parts: names of a question, coverage, the LLM's NOT_FOUND reply."""

from __future__ import annotations

from pathlib import Path

from kgrag.agent.support import (
    SUBJECT_MODEL,
    SUBJECT_PROBABILITY,
    SUPPORT_THRESHOLD,
    assess,
    initialised,
    is_not_found,
    name_parts,
    probability,
    question_names,
)
from kgrag.core import Hit
from kgrag.eval.answers import contains_answer, normalise
from kgrag.text import terms


def _hit(text: str, title: str = "") -> Hit:
    return Hit(id=f"c{abs(hash(text))}", kind="chunk", score=1.0, text=text, title=title)


def test_normalise_is_squad_style() -> None:
    assert normalise("The  Eiffel-Tower, in Paris!") == "eiffeltower in paris"
    assert normalise("An Apple a day") == "apple day"


def test_contains_answer_matches_whole_words_and_aliases() -> None:
    answer = "- G. Stanley Hall was its first president. [1] (Source: APA)"
    assert contains_answer(answer, ["G. Stanley Hall"])
    assert contains_answer(answer, ["nobody", "Stanley Hall"])
    assert not contains_answer(answer, ["Hal"])  # a word inside another is no match
    assert not contains_answer(answer, ["", "William James"])


def test_question_names_are_capitalised_words_numbers_and_identifiers() -> None:
    assert question_names("Who maintains the Pressure Valve PV-7?") == {"pressur", "valv", "pv-7"}
    assert question_names("What does asn1_der_decoding return?") == {"asn1", "der", "decod"}
    assert question_names("Which part did the meeting agree to replace?") == set()


def test_support_needs_the_names_of_the_question_in_the_evidence() -> None:
    question = "Who maintains the Pressure Valve PV-7?"
    answering = [_hit("The Pressure Valve PV-7 is maintained by Ada Lovelace.")]
    nearby = [_hit("The Feed Pump FP-2 is maintained by Grace Hopper.")]
    assert assess(question, answering, answering).supported
    found = assess(question, nearby, nearby)
    assert not found.supported and found.evidence_names == 0.0
    assert not assess(question, [], []).supported


def test_a_question_naming_nothing_needs_half_of_its_terms() -> None:
    question = "Which part did the meeting agree to replace?"
    hits = [_hit("The team agreed to replace the pressure valve.", title="meeting")]
    assert assess(question, hits, hits).supported
    assert not assess(question, [_hit("Lunch is at noon.")], [_hit("Lunch is at noon.")]).supported


def test_not_found_reply_is_recognised() -> None:
    assert is_not_found("NOT_FOUND") and is_not_found(" **NOT_FOUND.** ")
    assert not is_not_found("Ada Lovelace maintains it [1].")


def test_names_match_without_accents_either_way() -> None:
    plain = [_hit("Aschenbrodel is an opera composed by Leopold Hofmann.")]
    accented = [_hit("Aschenbrödel is an opera composed by Leopold Hofmann.")]
    assert assess("Who composed Aschenbrödel?", plain, plain).supported
    found = assess("Who composed Aschenbrodel?", accented, accented)
    assert found.supported and found.evidence_names == 1.0  # unfolded: "aschenbr" + "del"


def test_a_heard_question_is_judged_by_its_terms_not_its_misheard_names() -> None:
    """Speech recognition heard "Ada Lovelace" as "Aida Lovelace": the names miss, the terms
    (half of them) are in the evidence."""
    question = "which part is maintained by Aida Lovelace"
    evidence = [_hit("The Pressure Valve PV-7 is maintained by Ada Lovelace.")]
    assert not assess(question, evidence, evidence).supported
    assert assess(question, evidence, evidence, heard=True).supported
    nearby = [_hit("The plant canteen serves lentil soup on Fridays.")]
    assert not assess(question, nearby, nearby, heard=True).supported


def test_a_name_mentioned_only_in_passing_is_no_subject() -> None:
    question = "Who is the spouse of Big Eye's main director?"
    about = _hit("Big Eye is a 2015 comedy film directed by Johnnie To. It stars Sammi Cheng.")
    passing = _hit(
        "Sammi Cheng is a singer. She starred in Love Undercover. Her film Big Eye was a hit."
    )
    titled = _hit("It was directed by Johnnie To and released in 2015.", title="Big Eye")
    assert assess(question, [about], [about]).subject_phrases == 1.0  # its first sentence
    assert assess(question, [titled], [titled]).subject_phrases == 1.0  # its title
    found = assess(question, [passing], [passing])
    assert found.evidence_names == 1.0 and found.subject_phrases == 0.0
    assert not found.supported  # every name is there, but nothing is about Big Eye


def test_a_version_is_held_apart_from_its_name_and_by_a_longer_version() -> None:
    """ "Valgrind 3.19": a changelog entry's heading names the program and "3.19.0" (a version
    with one more component); a release of another version is no subject."""
    question = "What changed in Valgrind 3.19?"
    assert name_parts(question) == [(("valgrind",), ("3", "19"))]
    entry = _hit(
        "New upstream release. Remove x32 from architectures list.",
        title="valgrind (1:3.19.0-1) unstable; urgency=medium",
    )
    assert assess(question, [entry], [entry]).subject_phrases == 1.0
    notes = _hit("Release 3.19.0 (11 Apr 2022)\n\nValgrind now supports more distros.")
    assert assess(question, [notes], [notes]).subject_phrases == 1.0  # two first sentences
    other = _hit("Release 3.18.0 (15 Oct 2021)\n\nValgrind now supports more distros.")
    assert assess(question, [other], [other]).subject_phrases == 0.0
    later = _hit("Release 13.19 of Valgrind (2031)\n\nValgrind now supports more distros.")
    assert assess(question, [later], [later]).subject_phrases == 0.0  # 13.19 is not 3.19


def test_a_table_row_is_its_own_first_sentence_and_holds_a_phrase_in_parts() -> None:
    question = "What is the Salary 2023 of Zebulon Quartermaine?"
    assert name_parts(question) == [(("salary",), ("2023",), ("zebulon", "quartermain"))]
    row = _hit("Payroll Employee: Zebulon Quartermaine; Salary 2023: 98765", title="payroll")
    found = assess(question, [row], [row])
    assert found.subject_phrases == 1.0 and found.supported
    other = _hit("Payroll Employee: Ada Lovelace; Salary 2023: 12345", title="payroll")
    assert assess(question, [other], [other]).subject_phrases == 0.0


def test_the_subject_model_trades_evidence_coverage_for_subject_phrases() -> None:
    """The decision: ``evidence_score >= SUPPORT_THRESHOLD`` and the subject model's probability
    over (evidence_score, subject_phrases) at least ``SUBJECT_PROBABILITY``: half of the
    question's name phrases in a heading or topic sentence suffice when the evidence holds nearly
    all its names and terms, not when it holds only three quarters (the previous rule,
    ``subject_phrases >= 0.35``, answered both)."""
    assert probability([1.0, 0.5], SUBJECT_MODEL) >= SUBJECT_PROBABILITY
    assert probability([0.75, 0.5], SUBJECT_MODEL) < SUBJECT_PROBABILITY
    assert probability([0.75, 1.0], SUBJECT_MODEL) >= SUBJECT_PROBABILITY
    question = "Which river flows through the capital of Freedonia near Mount Osgood?"
    about = [
        _hit(
            "Freedonia is a small country. Its capital lies on the Blue River, which flows past "
            "Mount Osgood to the sea."
        )
    ]
    found = assess(question, about, about)
    assert found.subject_phrases == 0.5 and found.evidence_score > 0.85
    assert found.subject_probability >= SUBJECT_PROBABILITY and found.supported


def test_a_passage_about_the_subject_lacking_most_of_the_question_is_no_support() -> None:
    """The ``evidence_score`` floor: the subject model alone would answer (the passage is about
    the tower), but it holds a third of what the question asks."""
    question = "Which architect designed the Tower of Marvella and which firm restored it?"
    about = [_hit("The Tower of Marvella stands on a hill above the harbour.")]
    found = assess(question, about, about)
    assert found.subject_phrases == 1.0 and found.subject_probability >= SUBJECT_PROBABILITY
    assert found.evidence_score < SUPPORT_THRESHOLD and not found.supported


def test_words_of_the_question_written_as_an_initialism_are_found() -> None:
    """Debian's /usr/share/distro-info/ubuntu.csv names its column "eol": "When does Ubuntu 23.10
    reach end of life?" found the row but abstained, "end" and "life" being in no passage."""
    row = _hit(
        "version: 23.10; codename: Mantic Minotaur; series: mantic; created: 2023-04-20; "
        "release: 2023-10-12; eol: 2024-07-11",
        title="ubuntu",
    )
    support = assess("When does Ubuntu 23.10 reach end of life?", [row], [row])
    assert support.supported and support.evidence_terms == 0.75, support
    faq = initialised("Where is the list of frequently asked questions?", {"faq"})
    assert faq == set(terms("frequently asked questions"))
    # two letters are words too often; a run starts and ends with a content word
    assert initialised("Which state is it in?", {"si", "sii"}) == set()
    assert initialised("What is the end of the line?", {"eotl", "ie"}) == {"end", "lin"}


def test_a_last_hop_passage_naming_the_bridge_is_quoted_support() -> None:
    """A multi-hop answer quotes its last hop, which names the bridge ("Zorbatown"), not the
    question's names: it is supported when an evidence passage holding the question's names
    mentions the quoted passage's subject (it abstained before: the quoted passage holds none of
    the question's names). A quote
    from a passage no such passage mentions still abstains (the PostgreSQL question answered
    from lsof's quick start, tests/integration/test_near_miss.py)."""
    question = "What is the average snowfall in the city where the band Brother was formed?"
    band = _hit("Brother is a rock band formed in Zorbatown in 1998.", title="Brother (band)")
    city = _hit("The city averages 43 inches of snowfall a year.", title="Zorbatown")
    found = assess(question, [city], [band, city])
    assert found.names == 0.0 and found.quoted_names and found.supported
    question = "What is the default port of PostgreSQL?"
    listing = _hit("postgresql = ['SQLAlchemy>=2.0.42', 'psycopg2>=2.9.10']", title="pyproject")
    lsof = _hit("-P list port numbers instead of port service names.", title="Quick Start Lsof")
    found = assess(question, [lsof], [listing, lsof])
    assert not found.quoted_names and not found.supported


def test_a_file_the_question_names_in_lower_case_is_its_subject() -> None:
    """The seventeenth folder: "dconf" is no name (lower case), "GHashTable" is one, mentioned
    in passing in dconf's README; the question is about the file it names."""
    question = "How fast are dconf reads compared to GHashTable?"
    text = (Path(__file__).parents[1] / "data" / "seventeenth_folder" / "dconf README").read_text()
    readme = _hit(text).model_copy(update={"uri": "/docs/system/dconf README"})
    other = _hit(text).model_copy(update={"uri": "/docs/system/notes.txt"})
    assert assess(question, [readme], [readme]).subject_phrases == 0.5
    assert assess(question, [other], [other]).subject_phrases == 0.0
    assert assess(question, [readme], [readme]).supported


def test_a_hyphenated_word_holds_its_parts() -> None:
    question = "Which Rust components are installed?"
    row = _hit('[[components]] pkg = "rust-docs" target = "x86_64-unknown-linux-gnu"')
    assert assess(question, [row], [row]).names == 1.0
