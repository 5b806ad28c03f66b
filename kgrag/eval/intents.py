"""``kgrag eval intents``: accuracy of the intent classifier on phrasings it was never trained or
tuned on: ``fresh.jsonl`` (written before the last training additions, never looked at while
training), ``heldout.jsonl`` (other wording styles than the training set; looked at once) and
``issue.jsonl`` (the phrasings issue 15 reported as misrouted), ``imperative.jsonl``
(commands, "List the manual pages.", written before the imperative training phrasings) and
``counts.jsonl`` (how-many questions: a quantity a document states, or a count over the store;
written before the how-many training phrasings) and ``unseen.jsonl`` (99 phrasings of every
class in styles the training set lacks: terse keyword queries, polite long requests, typos,
lower case, questions about file types and dates added; written 2026-11-27 before any change of
that day, never trained or tuned on), ``folders.jsonl`` (88 questions of every class as users of
real folders of software documentation, configuration and data files ask them) and
``filewords.jsonl`` (40 questions whose words name files, dates, formats or storing, most of
them content questions: "Where are core dump files written?"; both written 2026-11-27, never
trained or tuned on)."""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.core import Frozen
from kgrag.planner.analysis import analyse
from kgrag.planner.document_plans import document_plan
from kgrag.planner.intent import (
    Intent,
    IntentClassifier,
    IntentPrediction,
    Phrasing,
    default_intent_classifier,
    load_phrasings,
    plan_value,
    shipped_model,
    training_phrasings,
)

__all__ = ["IntentReport", "SetReport", "run_intent_eval"]

SETS = (
    "fresh.jsonl",
    "heldout.jsonl",
    "issue.jsonl",
    "imperative.jsonl",
    "counts.jsonl",
    "unseen.jsonl",
    "folders.jsonl",
    "filewords.jsonl",
)


#: The steps that answer a question of each intent: what the planner must build for it (the
#: content plan, ``"content"``, for the content family). A listing or metadata question may be
#: answered by any tool that reads document metadata ("Show me the CSV files.", labelled metadata,
#: is a listing of one type).
RIGHT_TOOLS: dict[Intent, frozenset[str]] = {
    Intent.LISTING: frozenset({"list_documents", "metadata_search", "document_types"}),
    Intent.METADATA: frozenset(
        {
            "metadata_search",
            "document_types",
            "document_dates",
            "document_authors",
            "list_documents",
        }
    ),
    Intent.SUMMARY: frozenset({"document_summary"}),
    Intent.COMPARISON: frozenset({"compare"}),
    Intent.CONTENT: frozenset({"content"}),
    Intent.PICTURE: frozenset({"content"}),
    Intent.RECORDING: frozenset({"content"}),
}


class Miss(Frozen):
    text: str
    label: str
    predicted: str
    acted_on: str
    margin: float
    tool: str
    """The first step the planner builds for the question (``content``: the content plan)."""


class SetReport(Frozen):
    name: str
    size: int
    accuracy: float
    """Share whose most probable intent is the label."""
    plan_accuracy: float
    """Share whose acted-on intent leads to the right plan (an unsure fallback to the content
    plan counts as right for content, picture and recording questions)."""
    tool_accuracy: float
    """Share for which the planner builds a right first step (:data:`RIGHT_TOOLS`): the class
    read, then the parameters the document tools need (a document tool given nothing to work
    with, or a question that is not of its frame, falls back to the content plan)."""
    fallbacks: int
    misses: tuple[Miss, ...]


class IntentReport(Frozen):
    threshold: float
    """The fallback margin, chosen on the training folds."""
    training_phrasings: int
    cv_accuracy: float
    """Class accuracy on the training folds (grouped by frame)."""
    sets: tuple[SetReport, ...]


def _plan_right(prediction: IntentPrediction, phrasing: Phrasing) -> bool:
    return plan_value(prediction.intent, phrasing.label) == 1.0


def planned_tool(question: str, classifier: IntentClassifier) -> str:
    """The first step the planner builds for ``question`` without an LLM or a store (no entity
    is resolved): a document tool's name, or ``content`` for the content plan."""
    analysis = analyse(question, intents=classifier)
    plan = document_plan(analysis.text, analysis)
    return plan.plan[0].type if plan is not None else "content"


def _report(name: str, phrasings: Sequence[Phrasing], classifier: IntentClassifier) -> SetReport:
    predictions = classifier.classify_many([p.text for p in phrasings])
    tools = [planned_tool(p.text, classifier) for p in phrasings]
    pairs = list(zip(phrasings, predictions, strict=True))
    tool_right = [t in RIGHT_TOOLS[p.label] for p, t in zip(phrasings, tools, strict=True)]
    misses = tuple(
        Miss(
            text=p.text,
            label=p.label,
            predicted=r.predicted,
            acted_on=r.intent,
            margin=r.margin,
            tool=tool,
        )
        for (p, r), tool, right in zip(pairs, tools, tool_right, strict=True)
        if r.predicted != p.label or not _plan_right(r, p) or not right
    )
    n = max(1, len(pairs))
    return SetReport(
        name=name,
        size=len(pairs),
        accuracy=round(sum(r.predicted == p.label for p, r in pairs) / n, 4),
        plan_accuracy=round(sum(_plan_right(r, p) for p, r in pairs) / n, 4),
        tool_accuracy=round(sum(tool_right) / n, 4),
        fallbacks=sum(not r.confident for _, r in pairs),
        misses=misses,
    )


def run_intent_eval(classifier: IntentClassifier | None = None) -> IntentReport:
    classifier = classifier or default_intent_classifier()
    reports = tuple(_report(name, load_phrasings(name), classifier) for name in SETS)
    model = shipped_model(classifier.embedder)
    return IntentReport(
        threshold=model.threshold,
        training_phrasings=len(training_phrasings()),
        cv_accuracy=model.cv_accuracy,
        sets=reports,
    )
