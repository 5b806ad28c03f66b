"""Extractive summaries of long documents skip headings and never repeat a sentence.

The Apache License's summary was '"License" shall mean ... Grant of Copyright License. Grant of
Copyright License.': two headings the text repeats (sections 2 and 3 begin alike) were among its
most central "sentences". A comparison of two licences quoted that summary."""

from __future__ import annotations

from kgrag.ingest.summaries import extractive_summary
from kgrag.modalities.text import default_text_embedder

SENTENCES = [
    "Terms and conditions for use, reproduction and distribution of the licensed work.",
    "Grant of Copyright License.",
    "Each contributor grants you a perpetual, worldwide, royalty-free copyright license.",
    "Grant of Copyright License.",
    "The license covers reproduction, derivative works, public display and distribution.",
    "Redistribution.",
    "You may reproduce and distribute copies of the work in any medium, with or without changes.",
    "You must give other recipients of the work a copy of this license.",
    "Disclaimer of Warranty.",
    "The licensor provides the work on an as is basis, without warranties of any kind.",
]


def test_a_long_documents_summary_has_no_heading_and_no_repeat() -> None:
    summary = extractive_summary(SENTENCES, default_text_embedder())
    assert summary is not None
    for heading in ("Grant of Copyright License.", "Redistribution.", "Disclaimer of Warranty."):
        assert heading not in summary, summary
    assert all(summary.count(s) <= 1 for s in SENTENCES)


def test_a_document_of_headings_only_still_has_a_summary() -> None:
    headings = [f"Section {n} heading." for n in range(1, 10)]
    summary = extractive_summary(headings, default_text_embedder())
    assert summary and summary.startswith("Section")
