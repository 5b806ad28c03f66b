"""``kgrag eval answers``: is the gold answer (or an alias) in the agent's final answer?

Per question and overall, on the same corpus and store as ``kgrag eval retrieval``: the answer
the agent gives (``KnowledgeAgent.ask``, no LLM unless configured), whether the normalised gold
answer or one of its aliases appears in it (SQuAD normalisation: lower case, punctuation and
articles removed, whitespace collapsed), the passage recall@2/@5 of its retrieval beside it, and
abstention figures:

- answerable: each question as it is; an abstention there is a *false* abstention;
- unanswerable (``--unanswerable``): each question asked by a reader who cannot read its
  supporting passages (their ACL is changed for the question and restored after it): nothing
  the reader can read answers it, so the agent should abstain;
- out of domain: questions about things no passage is about (:data:`OUT_OF_DOMAIN`).

The support test's features (kgrag.agent.support) are kept per question, so its model can be
fitted on some questions and reported on others (bench/abstention.py).
"""

from __future__ import annotations

import re
import string
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from kgrag.agent.support import Support
from kgrag.agent.synthesis import answer_body
from kgrag.config import Settings
from kgrag.core import OPERATOR, Frozen
from kgrag.eval.datasets import Dataset, EvalQuestion
from kgrag.eval.metrics import recall_at_k
from kgrag.eval.retrieval import (
    IngestSummary,
    Recall,
    _one_question,
    ingest_corpus,
    open_eval_agent,
)

if TYPE_CHECKING:
    from kgrag.agent.agent import KnowledgeAgent as _Agent

Setting = Literal["answerable", "unanswerable", "out_of_domain"]

#: Questions about things the MuSiQue passages are not about (out of domain).
OUT_OF_DOMAIN = (
    "What is the capital city of Australia?",
    "How do I make a sourdough bread starter at home?",
    "What is the recipe for a classic French onion soup?",
    "Show me a picture of a giraffe eating leaves.",
    "What is the boiling point of water at the top of Mount Everest?",
    "Which programming language was created by Guido van Rossum?",
    "How many moons does Jupiter have?",
    "What is the best way to remove red wine stains from a carpet?",
    "Who won the 2018 FIFA World Cup final?",
    "What does the function asn1_der_decoding return on error?",
)

#: The reader of the unanswerable setting; gold passages are hidden from it.
EVAL_READER = "kgrag-eval-reader"
_HIDDEN_ACL = ["user:kgrag-eval-nobody"]


def normalise(text: str) -> str:
    """SQuAD answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def contains_answer(answer: str, gold: Sequence[str]) -> bool:
    """Does the normalised ``answer`` contain a normalised gold answer (as whole words)?"""
    body = f" {normalise(answer)} "
    return any(g and f" {g} " in body for g in (normalise(x) for x in gold))


class AnswerResult(Frozen):
    id: str
    setting: Setting
    question: str
    gold: tuple[str, ...]
    answer: str
    correct: bool
    abstained: bool
    exit_reason: str
    support: Support | None
    recall_at_2: float | None = None
    recall_at_5: float | None = None
    latency_ms: float


class SettingSummary(Frozen):
    questions: int
    abstained: int
    abstention_rate: float
    correct: int | None = None
    answer_accuracy: float | None = None
    recall: Recall | None = None


class AnswersReport(Frozen):
    """What ``kgrag eval answers --json`` prints."""

    format: str
    corpus_fingerprint: str
    embedder: str
    mode: str
    answerable: SettingSummary
    unanswerable: SettingSummary | None = None
    out_of_domain: SettingSummary | None = None
    ingest: IngestSummary
    per_question: tuple[AnswerResult, ...] = ()


def evaluate_answers(
    dataset: Dataset,
    agent: _Agent,
    *,
    unanswerable: bool = True,
    out_of_domain: bool = True,
    on_question: Callable[[int, int], None] | None = None,
) -> AnswersReport:
    """Ingest (or reuse) the corpus in ``agent``'s store and ask every question."""
    ingest = ingest_corpus(agent, dataset)
    doc_ids = _document_ids(agent)
    jobs: list[tuple[Setting, EvalQuestion]] = [("answerable", q) for q in dataset.questions]
    if unanswerable:
        jobs += [("unanswerable", q) for q in dataset.questions]
    if out_of_domain:
        jobs += [
            ("out_of_domain", EvalQuestion(id=f"ood-{n}", question=text, gold_titles=("-",)))
            for n, text in enumerate(OUT_OF_DOMAIN, start=1)
        ]
    results = []
    for n, (setting, q) in enumerate(jobs, start=1):
        results.append(_ask(agent, setting, q, doc_ids))
        if on_question is not None:
            on_question(n, len(jobs))
    by = {s: [r for r in results if r.setting == s] for s in ("answerable", "unanswerable")}
    ood = [r for r in results if r.setting == "out_of_domain"]
    return AnswersReport(
        format=dataset.format,
        corpus_fingerprint=dataset.fingerprint,
        embedder=agent.text_embedder.model_name,
        mode="llm" if agent.llm is not None else "extractive",
        answerable=_summary(by["answerable"], scored=True),
        unanswerable=_summary(by["unanswerable"], scored=False) if unanswerable else None,
        out_of_domain=_summary(ood, scored=False) if out_of_domain else None,
        ingest=IngestSummary.of(ingest),
        per_question=tuple(results),
    )


def _document_ids(agent: _Agent) -> dict[str, list[tuple[str, list[str]]]]:
    """Title -> [(document id, ACL)] of the stored passages."""
    rows = agent.store.read("document_acl_list", OPERATOR.params())
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for r in rows:
        out.setdefault(str(r["title"]), []).append((str(r["id"]), list(r["acl"] or [])))
    return out


@contextmanager
def _hidden(agent: _Agent, docs: Sequence[tuple[str, list[str]]]) -> Iterator[None]:
    """The documents ``docs`` readable by nobody the eval asks as, restored afterwards."""

    def set_acl(rows: list[dict[str, object]]) -> None:
        agent.store.write_rows("document_set_acl", rows)

    now = time.time()
    set_acl(
        [
            {
                "id": d,
                "acl": _HIDDEN_ACL,
                "change_id": uuid.uuid4().hex,
                "actor": "kgrag eval",
                "at": now,
                "old_acl": acl,
            }
            for d, acl in docs
        ]
    )
    try:
        yield
    finally:
        set_acl(
            [
                {
                    "id": d,
                    "acl": acl,
                    "change_id": uuid.uuid4().hex,
                    "actor": "kgrag eval",
                    "at": time.time(),
                    "old_acl": _HIDDEN_ACL,
                }
                for d, acl in docs
            ]
        )


def _ask(
    agent: _Agent,
    setting: Setting,
    q: EvalQuestion,
    doc_ids: dict[str, list[tuple[str, list[str]]]],
) -> AnswerResult:
    gold = tuple(x for x in (q.answer, *q.aliases) if x)
    r2 = r5 = None
    t0 = time.perf_counter()
    if setting == "unanswerable":
        docs = [d for t in q.gold_titles for d in doc_ids.get(t, [])]
        with _hidden(agent, docs):
            answer = agent.ask(q.question, user=EVAL_READER)
    elif setting == "answerable":
        retrieval, _ = _one_question(agent, q, 10)
        r2 = recall_at_k(retrieval.kgrag, q.gold_titles, 2)
        r5 = recall_at_k(retrieval.kgrag, q.gold_titles, 5)
        t0 = time.perf_counter()
        answer = agent.ask(q.question, admin=True)
    else:
        answer = agent.ask(q.question, user=EVAL_READER)
    abstained = answer.exit_reason == "not_found"
    body = answer_body(answer.answer)
    return AnswerResult(
        id=q.id,
        setting=setting,
        question=q.question,
        gold=gold,
        answer=body,
        correct=bool(gold) and not abstained and contains_answer(body, gold),
        abstained=abstained,
        exit_reason=answer.exit_reason,
        support=answer.support,
        recall_at_2=r2,
        recall_at_5=r5,
        latency_ms=round((time.perf_counter() - t0) * 1000, 1),
    )


def _summary(results: Sequence[AnswerResult], *, scored: bool) -> SettingSummary:
    n = len(results)
    abstained = sum(r.abstained for r in results)
    base = SettingSummary(
        questions=n, abstained=abstained, abstention_rate=round(abstained / n, 4) if n else 0.0
    )
    if not scored or not n:
        return base
    correct = sum(r.correct for r in results)
    r2 = sum(r.recall_at_2 or 0.0 for r in results) / n
    r5 = sum(r.recall_at_5 or 0.0 for r in results) / n
    return base.model_copy(
        update={
            "correct": correct,
            "answer_accuracy": round(correct / n, 4),
            "recall": Recall(**{"recall@2": round(r2, 4), "recall@5": round(r5, 4)}),
        }
    )


def run_answers_eval(
    questions: Path,
    corpus: Path,
    settings: Settings,
    *,
    store: str | None = None,
    limit: int | None = None,
    unanswerable: bool = True,
    out_of_domain: bool = True,
    on_question: Callable[[int, int], None] | None = None,
) -> AnswersReport:
    """Load the dataset, open its eval store (as ``kgrag eval retrieval`` does) and ask."""
    with open_eval_agent(questions, corpus, settings, store=store, limit=limit) as (agent, data):
        return evaluate_answers(
            data,
            agent,
            unanswerable=unanswerable,
            out_of_domain=out_of_domain,
            on_question=on_question,
        )
