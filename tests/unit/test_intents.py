"""The intent classifier (kgrag/planner/intent.py) with the real all-MiniLM-L6-v2: the shipped
weights are those the shipped training set produces; accuracy on the held-out phrasings (other
wording styles, never trained or tuned on) and on issue 15's phrasings; unsure questions fall back
to the content plan with the class and its score in the cues; the document plans each intent
leads to."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.errors import ConfigError
from kgrag.eval.intents import run_intent_eval
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.analysis import QueryClass, analyse
from kgrag.planner.document_plans import document_plan
from kgrag.planner.intent import (
    MODEL_FILE,
    Intent,
    IntentClassifier,
    IntentModel,
    data_fingerprint,
    data_path,
    features,
    frame,
    load_phrasings,
    train_model,
    unpunctuated,
)
from kgrag.planner.models import Step
from kgrag.planner.params import ListDocumentsParams, MetadataSearchParams

#: Measured 2026-11-26: 96.4% class accuracy on fresh.jsonl (written before the last training
#: set was, never trained or tuned on; the issue's goal is 95%), 93.0% on heldout.jsonl (older,
#: looked at while the first training set was written; 93.7% before the imperative phrasings were
#: trained on) and 90.0% on imperative.jsonl (commands, "List the manual pages.", written before
#: the imperative training phrasings; 82.5% before them; the goal of 95% is not met there).
#: counts.jsonl (how-many questions: a quantity a document states, or a count over the store;
#: written before the count phrasings of the training set, 90.6% before them) 100% after.
FRESH_FLOOR = 0.95
HELD_OUT_FLOOR = 0.92
IMPERATIVE_FLOOR = 0.9
COUNTS_FLOOR = 0.95


def test_shipped_weights_come_from_the_shipped_training_set() -> None:
    shipped = IntentModel.load(data_path(MODEL_FILE))
    assert shipped.data_sha256 == data_fingerprint(), "run scripts/train_intents.py"
    retrained = train_model(default_text_embedder().embed)
    assert retrained.threshold == shipped.threshold
    assert np.allclose(retrained.weights, shipped.weights, atol=1e-3)
    held_out = [p.text for p in load_phrasings("heldout.jsonl")]
    vectors = features(default_text_embedder().embed, held_out)
    assert [p.predicted for p in retrained.predict(vectors)] == [
        p.predicted for p in shipped.predict(vectors)
    ]


def test_every_intent_has_training_and_held_out_phrasings_and_the_sets_are_disjoint() -> None:
    train = load_phrasings("train.jsonl")
    held_out = load_phrasings("heldout.jsonl")
    fresh = load_phrasings("fresh.jsonl")
    for phrasings in (train, held_out, fresh):
        assert {p.label for p in phrasings} == set(Intent)
    texts = {p.text.lower() for p in train}
    assert not texts & {p.text.lower() for p in held_out}
    assert not texts & {p.text.lower() for p in fresh}
    assert not texts & {p.text.lower() for p in load_phrasings("issue.jsonl")}
    commands = {unpunctuated(p.text).lower() for p in load_phrasings("imperative.jsonl")}
    assert not {unpunctuated(t) for t in texts} & commands
    counts = {unpunctuated(p.text).lower() for p in load_phrasings("counts.jsonl")}
    assert not {unpunctuated(t) for t in texts} & counts
    unseen = {unpunctuated(p.text).lower() for p in load_phrasings("unseen.jsonl")}
    assert {p.label for p in load_phrasings("unseen.jsonl")} == set(Intent)
    assert not {unpunctuated(t).lower() for t in texts} & unseen
    for name in ("folders.jsonl", "filewords.jsonl"):
        written = {unpunctuated(p.text).lower() for p in load_phrasings(name)}
        assert not {unpunctuated(t).lower() for t in texts} & written, name
        assert not written & unseen, name
    assert {p.label for p in load_phrasings("folders.jsonl")} == set(Intent)


def test_held_out_and_issue_accuracy() -> None:
    report = {r.name: r for r in run_intent_eval().sets}
    assert report["heldout.jsonl"].size >= 140
    assert report["heldout.jsonl"].accuracy >= HELD_OUT_FLOOR
    assert report["fresh.jsonl"].size >= 140
    assert report["fresh.jsonl"].accuracy >= FRESH_FLOOR, report["fresh.jsonl"].misses
    assert report["issue.jsonl"].plan_accuracy == 1.0, report["issue.jsonl"].misses
    commands = report["imperative.jsonl"]
    assert commands.size >= 40
    assert commands.accuracy >= IMPERATIVE_FLOOR, commands.misses
    counts = report["counts.jsonl"]
    assert counts.size >= 32
    assert counts.accuracy >= COUNTS_FLOOR, counts.misses


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("list what is stored", QueryClass.LISTING),
        ("what have you got on the installer?", QueryClass.LISTING),
        ("what is the Debian installation guide about?", QueryClass.DOCUMENT_SUMMARY),
        ("what does asn1_der_decoding return?", QueryClass.CONTENT_SEARCH),
        ("list the steps to configure the firewall", QueryClass.CONTENT_SEARCH),
        # a quantity a document states is content; a count over the store is not (it was a
        # listing at margin 0.01)
        ("How many instances does the wine dataset have?", QueryClass.CONTENT_SEARCH),
        ("How many PDFs do you have?", QueryClass.METADATA_SEARCH),
    ],
)
def test_issue_phrasings_get_their_class_and_the_cue_says_why(
    question: str, expected: QueryClass
) -> None:
    analysis = analyse(question)
    assert analysis.query_class is expected
    assert analysis.intent is not None
    assert analysis.cues[0].startswith(f"class {expected}: intent classifier")
    assert f"p={analysis.intent.probability:.2f}" in analysis.cues[0]


def test_a_listing_without_a_topic_lists_every_document_and_with_one_lists_by_topic() -> None:
    everything = document_plan("list what is stored", analyse("list what is stored"))
    assert everything is not None
    step = everything.plan[0]
    assert step.type == "metadata_search"
    assert isinstance(step.parameters, MetadataSearchParams)
    assert set(step.parameters.modalities or ()) == {"text", "pdf", "image", "audio"}

    question = "what have you got on package management?"
    topical = document_plan(question, analyse(question))
    assert topical is not None and topical.plan[0].type == "list_documents"
    assert isinstance(topical.plan[0].parameters, ListDocumentsParams)
    assert set(topical.plan[0].parameters.about) == {"package", "management"}


def test_a_count_of_the_documents_lists_them_all() -> None:
    """ "How many documents do you have?" listed the documents about "how" and "many"."""
    question = "How many documents do you have?"
    plan = document_plan(question, analyse(question))
    assert plan is not None and plan.plan[0].type == "metadata_search"
    assert isinstance(plan.plan[0].parameters, MetadataSearchParams)
    assert set(plan.plan[0].parameters.modalities or ()) == {"text", "pdf", "image", "audio"}
    assert not plan.plan[0].parameters.about


def test_summary_targets_come_from_what_is_x_about_and_from_plain_requests() -> None:
    assert analyse("what is jfk.flac about?").target == "jfk.flac"
    assert analyse("What is the Debian installation guide about?").target == (
        "Debian installation guide"
    )


def test_an_unsure_classifier_falls_back_to_the_content_plan_and_says_so() -> None:
    model = IntentModel.load(data_path(MODEL_FILE))
    vectors = features(default_text_embedder().embed, ["what docs r there"])
    sure = IntentModel(
        model.classes, model.weights, model.bias, threshold=0.0, data_sha256=model.data_sha256
    ).predict(vectors)[0]
    unsure = IntentModel(
        model.classes, model.weights, model.bias, threshold=1.01, data_sha256=model.data_sha256
    ).predict(vectors)[0]
    assert sure.intent is sure.predicted and sure.confident
    assert unsure.intent is Intent.CONTENT and not unsure.confident
    assert unsure.predicted is sure.predicted
    assert "unsure" in unsure.describe() and "content plan" in unsure.describe()


def test_the_classifier_refuses_an_embedder_of_another_space() -> None:
    class Other:
        model_name = "text-embedding-3-small"

    with pytest.raises(ConfigError, match="all-MiniLM-L6-v2"):
        IntentClassifier(Other())  # type: ignore[arg-type]


def test_the_frame_keeps_the_request_and_hides_the_topic() -> None:
    assert frame("What is the maintenance roster about?") == "what is the something about ?"
    assert frame("what have you got on asn1_der_decoding?") == "what have you got on something ?"


@pytest.mark.parametrize(
    "question",
    ["List the manual pages.", "List the man pages!", "Show me all the manual pages."],
)
def test_a_command_to_list_a_kind_lists_that_kind(question: str) -> None:
    """Issue 15: "List the manual pages." was read as a content question (its closing full stop
    and the hidden "manual pages" left "list the something"), while "Which man pages do you
    have?" was a listing."""
    analysis = analyse(question)
    assert analysis.query_class is QueryClass.METADATA_SEARCH, analysis.cues
    assert analysis.document_types == ("man",)
    plan = document_plan(question, analysis)
    assert plan is not None and plan.plan[0].type == "metadata_search"


def test_a_closing_full_stop_is_dropped_and_a_question_mark_kept() -> None:
    assert unpunctuated("List the PDFs.") == "List the PDFs"
    assert unpunctuated("Compare A and B!! ") == "Compare A and B"
    assert unpunctuated("What is X?") == "What is X?"
    assert unpunctuated("...") == "..."
    assert frame("List the manual pages.") == "list the manual pages"


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        # issue 15 item 2's weak points (each was read as another class before)
        ("when did the security policy get added?", Intent.METADATA),
        ("Weigh apt against snap.", Intent.COMPARISON),
        ("Sum up the grep man page.", Intent.SUMMARY),
        ("What is said in the recording about the budget?", Intent.RECORDING),
        ("What does the speaker say about the deadline?", Intent.RECORDING),
    ],
)
def test_the_weak_points_of_the_issue_get_their_intent(question: str, intent: Intent) -> None:
    analysis = analyse(question)
    assert analysis.intent is not None
    assert analysis.intent.predicted is intent, analysis.cues


def test_the_frame_keeps_the_words_of_speakers_comparisons_and_types() -> None:
    assert frame("what did the lecturer say about entropy?") == (
        "what did the lecturer say about something ?"
    )
    assert frame("Weigh apt against snap") == "weigh something against something"
    assert frame("what kinds of files are there?") == "what kinds of files are there ?"


def _document_step(question: str) -> Step:
    """The one step of the document plan of ``question``, which the classifier reads as a
    listing or a metadata question."""
    analysis = analyse(question)
    assert analysis.query_class in (QueryClass.LISTING, QueryClass.METADATA_SEARCH)
    plan = document_plan(question, analysis)
    assert plan is not None
    (step,) = plan.plan
    return step


@pytest.mark.parametrize(
    ("question", "step_type", "target"),
    [
        ("What types of files do you have?", "document_types", None),
        ("What kinds of documents are stored?", "document_types", None),
        ("give me a breakdown of the files by format", "document_types", None),
        ("When was the security policy ingested?", "document_dates", "security policy"),
        ("when did the release checklist get uploaded?", "document_dates", "release checklist"),
        ("What date was the Riverside report added?", "document_dates", "Riverside report"),
    ],
)
def test_types_and_dates_of_documents_get_their_tools(
    question: str, step_type: str, target: str | None
) -> None:
    step = _document_step(question)
    assert step.type == step_type
    assert getattr(step.parameters, "target", None) == target


def test_when_something_was_built_is_still_a_content_question() -> None:
    analysis = analyse("When was the Eiffel Tower built?")
    assert analysis.query_class is QueryClass.CONTENT_SEARCH
    assert document_plan("When was the Eiffel Tower built?", analysis) is None


@pytest.mark.parametrize(
    "question",
    [
        # the tenth real folder's: read as a listing ("at least 20 documents")
        "Where should grep bug reports be sent?",
        "Where do I report bugs in sed?",
    ],
)
def test_where_to_send_something_is_a_content_question(question: str) -> None:
    analysis = analyse(question)
    assert analysis.query_class is QueryClass.CONTENT_SEARCH, analysis.cues
    assert document_plan(question, analysis) is None


@pytest.mark.parametrize(
    ("question", "target"),
    [
        ("When was the turbine overhaul log added?", "turbine overhaul log"),
        ("when did the pump manual get uploaded?", "pump manual"),
        ("When was the chiller report added to the collection?", "chiller report"),
    ],
)
def test_when_a_document_was_added_gets_its_dates_whatever_the_class(
    question: str, target: str
) -> None:
    """ "When was the turbine overhaul log added?" was read as a content question (p 0.59) and
    searched the passages: a verb only a store does ends it, so it asks for the document's
    dates; a thing added to something else is still content."""
    plan = document_plan(question, analyse(question))
    assert plan is not None
    (step,) = plan.plan
    assert step.type == "document_dates"
    assert getattr(step.parameters, "target", None) == target


def test_what_was_added_to_something_else_is_still_content() -> None:
    for question in ("When was salt added to the soup?", "When was fluoride added to water?"):
        analysis = analyse(question)
        assert document_plan(question, analysis) is None, question


@pytest.mark.parametrize(
    ("question", "target"),
    [
        ("Who wrote the release notes?", "release notes"),
        ("who is the author of the installation guide?", "installation guide"),
        ("Who authored the harbour dredging report?", "harbour dredging report"),
        ("By whom was the kiln firing schedule written?", "kiln firing schedule"),
    ],
)
def test_who_wrote_a_document_asks_for_its_stored_authors(question: str, target: str) -> None:
    step = _document_step(question)
    assert step.type == "document_authors"
    assert getattr(step.parameters, "target", None) == target


@pytest.mark.parametrize(
    ("question", "author"),
    [
        ("Which documents did Maria write?", "Maria"),
        ("files by Ken Thompson", "Ken Thompson"),
        ("list what Jane authored", "Jane"),
        ("List the documents by Debian's FTP masters.", "Debian's FTP masters"),
        ("What has Ken Thompson authored here?", "Ken Thompson"),
        ("documents written by Alice Chen", "Alice Chen"),
        ("which reports has the platform team authored?", "platform team"),
    ],
)
def test_a_listing_by_author_filters_on_the_author_and_not_on_the_topic(
    question: str, author: str
) -> None:
    step = _document_step(question)
    assert step.type == "metadata_search"
    assert isinstance(step.parameters, MetadataSearchParams)
    assert step.parameters.authors == (author,)
    assert not set(step.parameters.about) & set(author.lower().split())


def test_a_listing_by_type_or_date_names_no_author() -> None:
    """A "by" or "from" naming an order or a period is no author ("documents from 2023")."""
    questions = (
        "list the documents by type",
        "show the files sorted by date",
        "Show me the documents from 2023",
        "Show me the documents from June 2025",
    )
    for question in questions:
        plan = document_plan(question, analyse(question))
        params = plan.plan[0].parameters if plan is not None else None
        assert getattr(params, "authors", None) is None, question
