"""Answers from a passage and its copies in other files (kgrag.executor.duplicates): the
extractive answer may quote the copy that cuts its sentences better and cites that file, and
the support test reads a copy's title. The texts are one chunk of Valgrind's manual as kgrag read
it from the two copies Debian installs, `valgrind_manual.pdf.gz` (p. 55) and
`html/manual-core-adv.html` (tests/data/valgrind_copies)."""

from __future__ import annotations

from pathlib import Path

from kgrag.agent.support import assess
from kgrag.agent.synthesis import extractive_answer
from kgrag.core import Hit
from kgrag.modalities.text import default_text_embedder

DATA = Path(__file__).resolve().parents[1] / "data" / "valgrind_copies"
PDF_TEXT = (DATA / "pdf_p55.txt").read_text(encoding="utf-8")
HTML_TEXT = (DATA / "manual-core-adv.txt").read_text(encoding="utf-8")
QUESTION = "How do I debug a program running under Valgrind with GDB?"


def _pdf() -> Hit:
    return Hit(
        id="pdf:55",
        kind="chunk",
        score=0.92,
        text=PDF_TEXT,
        document_id="pdf",
        title="Valgrind Documentation",
        uri="/doc/valgrind/valgrind_manual.pdf.gz",
        page=55,
    )


def _html() -> Hit:
    return Hit(
        id="html:3",
        kind="chunk",
        score=0.91,
        text=HTML_TEXT,
        document_id="html",
        title="3. Using and understanding the Valgrind core: Advanced Topics",
        uri="/doc/valgrind/html/manual-core-adv.html",
    )


def test_the_answer_quotes_the_copy_that_keeps_the_command_apart() -> None:
    # the PDF joins the command to the lines around it; its HTML copy keeps it a paragraph
    alone, _ = extractive_answer(QUESTION, [_pdf()], [], default_text_embedder())
    assert "- valgrind --vgdb=yes --vgdb-error=0 prog [" not in alone
    evidence = [_pdf().model_copy(update={"copies": (_html(),)})]
    text, citations = extractive_answer(QUESTION, evidence, [], default_text_embedder())
    assert "- valgrind --vgdb=yes --vgdb-error=0 prog [" in text, text
    assert "/doc/valgrind/html/manual-core-adv.html" in [c.uri for c in citations]


def test_the_support_test_reads_a_copys_title() -> None:
    question = "What is Callgrind used for?"
    text = (
        "Callgrind is a profiling tool that records the call history among functions in a "
        "program's run as a call-graph."
    )
    pdf = Hit(
        id="p",
        kind="chunk",
        score=0.9,
        text=text,
        document_id="pdf",
        title="Valgrind Documentation",
    )
    html = pdf.model_copy(
        update={
            "id": "h",
            "document_id": "html",
            "title": "6. Callgrind: a call-graph generating cache and branch prediction profiler",
        }
    )
    assert assess(question, [pdf], [pdf]).title_names == 0.0
    with_copy = pdf.model_copy(update={"copies": (html,)})
    assert assess(question, [with_copy], [with_copy]).title_names == 1.0
