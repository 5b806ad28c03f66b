"""The auxiliary verbs are written once (kgrag.text.stopwords); each reader keeps the set it had
before they were: the asked-for phrase's end (kgrag.agent.asked, without "shall"), the modal
verbs of the word anchor (kgrag.agent.anchors), the verbs of possession a row need not write
(kgrag.agent.rows), the finite auxiliaries of an embedded clause (kgrag.planner.analysis) and
the words a FAQ's question starts with (kgrag.ingest.faq)."""

from __future__ import annotations

from kgrag.agent import anchors, asked, rows
from kgrag.ingest import faq
from kgrag.planner import analysis
from kgrag.text.stemming import stem
from kgrag.text.stopwords import AUXILIARY_VERBS, FINITE_AUXILIARIES, HAVE_FORMS, MODAL_VERBS
from kgrag.text.words import word_set


def test_each_reader_keeps_its_auxiliaries() -> None:
    read = {
        "asked": asked._AUXILIARIES,
        "anchors": anchors.MODAL_VERBS,
        "rows": rows.HAVING,
        "analysis": analysis.FINITE_AUXILIARIES,
        "faq": faq._ASKING,
    }
    assert read == {
        "asked": word_set(
            "is are was were does do did has have had can could should will would may might must"
        ),
        "anchors": word_set("can could may might must shall should will would"),
        "rows": {stem(w) for w in ("has", "have", "had", "having")},
        "analysis": word_set("is was are were did does do has have had"),
        "faq": word_set(
            """what which who whom whose why where when how can could is are was were do does did
            will would should shall may might must has have had isn't aren't doesn't don't can't
            won't wouldn't shouldn't"""
        ),
    }


def test_the_smaller_sets_are_named_parts_of_one() -> None:
    parts = (FINITE_AUXILIARIES, MODAL_VERBS, HAVE_FORMS)
    assert parts[0] | parts[1] == AUXILIARY_VERBS
    assert not parts[0] & parts[1]
    assert parts[2] - AUXILIARY_VERBS == {"having"}
