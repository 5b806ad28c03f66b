"""An irregular verb's other forms in the lexical query and the word anchor: "Where should grep
bug reports be sent?" asks for ``send`` too, and the passage "Send bug reports to ..." holds its
words (the stage on both engines: tests/integration/test_lexical_forms.py)."""

from __future__ import annotations

from kgrag.agent.anchors import word_anchor
from kgrag.core import Hit
from kgrag.planner.rule import fulltext_query
from kgrag.text.verb_forms import verb_forms

QUESTION = "Where should grep bug reports be sent?"


def _hit(text: str, n: int, title: str = "grep") -> Hit:
    return Hit(id=f"c{n}", kind="chunk", score=1.0, text=text, title=title)


def test_an_irregular_verb_has_its_principal_parts() -> None:
    assert verb_forms("sent") == ("sent", "send")
    assert verb_forms("send") == ("send", "sent")
    assert verb_forms("written") == ("written", "write", "wrote")
    assert verb_forms("built") == ("built", "build")
    # a regular verb, a noun: the word alone (the stemmers join regular forms)
    assert verb_forms("report") == ("report",)
    assert verb_forms("reports") == ("reports",)
    # a form more often another word ("found" a project, "left" a side): not widened
    assert verb_forms("found") == ("found",)
    assert verb_forms("left") == ("left",)


def test_the_full_text_query_asks_for_the_verbs_other_forms() -> None:
    terms = fulltext_query(QUESTION).split(" | ")
    assert terms[-2:] == ["sent", "send"]
    assert "send" not in fulltext_query("Where are grep bug reports filed?").split(" | ")


def test_the_word_anchor_holds_a_word_in_another_form_and_skips_function_words() -> None:
    """Before, no passage held "sent" nor "should", so the README's line was no anchor."""
    evidence = [_hit("grep -z would match strings it should not. [bug introduced]", 1)]
    readme = _hit("See the file NEWS.\n\nSend bug reports to bug-grep@gnu.org.", 2)
    news = _hit("A bug in grep reports a false match.", 3)
    assert word_anchor(QUESTION, evidence, [news, readme]) == readme
    # every word must still be held: a passage without "grep" is no anchor
    assert word_anchor(QUESTION, evidence, [_hit("Send bug reports to us.", 4, "gzip")]) is None
