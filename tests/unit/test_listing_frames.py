"""A question naming files asks the collection for them, or asks what something else does with
them (kgrag/planner/listing_frame.py): only the second is a content question whatever the intent
classifier reads."""

from __future__ import annotations

import pytest

from kgrag.planner.analysis import QueryClass, analyse
from kgrag.planner.document_plans import document_plan
from kgrag.planner.listing_frame import asks_about_the_world


@pytest.mark.parametrize(
    "question",
    [
        "Which files does the cron daemon read when it starts?",
        "what directories should the backup job skip",
        "Which ports must the firewall open for the mail server?",
        "What kernel modules does the installer load?",
        "how do I mount an ISO image",
        "Where should we store the signing keys?",
        "why do I get a permission error when writing logs",
    ],
)
def test_what_something_else_does_with_files_is_about_the_world(question: str) -> None:
    assert asks_about_the_world(question)


@pytest.mark.parametrize(
    "question",
    [
        "Which files talk about the cron daemon?",
        "what files do you have on backups?",
        "Which documents does the archive hold about mail servers?",
        "which files did the support team upload?",
        "what tags do the documents have?",
        "which reports did Maria add last week?",
        "List the documents about the installer.",
        "how many PDFs are there?",
    ],
)
def test_asking_the_collection_is_not_about_the_world(question: str) -> None:
    assert not asks_about_the_world(question)


def test_a_listing_read_of_an_object_question_is_planned_as_content() -> None:
    """The classifier reads it as a listing (the words of "which files ... read"), so without
    the frame the plan was a list of the documents about "daemon read startup"."""
    question = "Which files does the avahi daemon read at startup?"
    analysis = analyse(question)
    assert analysis.query_class is QueryClass.LISTING
    assert document_plan(question, analysis) is None
    listing = "Which files talk about the avahi daemon?"
    plan = document_plan(listing, analyse(listing))
    assert plan is not None and plan.plan[0].type == "list_documents"
