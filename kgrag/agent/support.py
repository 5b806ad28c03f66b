"""Does the evidence answer the question at all? The support test behind abstention.

An answer is supported when the passages its sentences come from contain the question's salient
terms: its names (capitalised words, numbers and identifiers, what a question is *about*) and its
other content terms. A question whose subject is in no readable document (a capital city, a
recipe, a passage removed from the corpus) still retrieves the nearest text, but that text lacks
the names the question asks about. Measured features:

- ``names``: share of the question's names (stemmed) found in the cited passages;
- ``terms``: share of the question's content terms found in the cited passages;
- ``similarity``: cosine of the question and the best chosen sentence (reported, not decided on).

The decision is ``score = (names + terms) / 2 >= SUPPORT_THRESHOLD`` (``names`` counts as
``terms`` when the question names nothing). The threshold was chosen on folds of the MuSiQue dev
questions and reported on the held-out fold (BENCHMARKS.md, "Abstention"; ``bench/abstention.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from kgrag.agent.text import stem, terms
from kgrag.executor.hits import Hit
from kgrag.planner.rule import key_terms

#: Below this score the agent abstains (chosen on folds; see the module doc).
SUPPORT_THRESHOLD = 0.75

ABSTENTION = "Nothing in the documents you can read answers this."
NOT_FOUND_MARK = "NOT_FOUND"
"""What the LLM is told to reply when the evidence does not answer the question."""

_NAME = re.compile(r"\b(?:[A-Z][\w'-]*|[\w-]*\d[\w-]*|\w+_\w+)")


class Support(BaseModel):
    """The support test's features and decision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    names: float
    terms: float
    similarity: float | None = None
    score: float
    supported: bool


def question_names(question: str) -> set[str]:
    """Stemmed names of the question: capitalised words (not only the first word), numbers,
    identifiers; words the key-term filter drops (question words, stop words) are not names."""
    keys = {stem(w) for w in key_terms(question)}
    words = [m.group(0) for m in _NAME.finditer(question)]
    first = question.split(maxsplit=1)[0] if question.split() else ""
    return {stem(w) for w in words if w != first or not w[:1].isupper()} & keys


def assess(
    question: str,
    cited: Sequence[Hit],
    *,
    similarity: float | None = None,
    threshold: float = SUPPORT_THRESHOLD,
) -> Support:
    """Score how well the passages ``cited`` cover ``question`` (see the module doc)."""
    wanted = set(terms(question))
    found: set[str] = set()
    for hit in cited:
        found.update(terms(f"{hit.title or ''} {hit.text or ''}"))
    names = question_names(question)
    term_cov = len(wanted & found) / len(wanted) if wanted else 0.0
    name_cov = len(names & found) / len(names) if names else term_cov
    score = (term_cov + name_cov) / 2
    return Support(
        names=round(name_cov, 4),
        terms=round(term_cov, 4),
        similarity=None if similarity is None else round(similarity, 4),
        score=round(score, 4),
        supported=bool(cited) and score >= threshold,
    )


def is_not_found(text: str) -> bool:
    """Did the LLM say the evidence does not answer (its reply starts with or is NOT_FOUND)?"""
    body = text.strip().strip("*_`\"' ").upper()
    return body.startswith(NOT_FOUND_MARK) or body.rstrip(".") == NOT_FOUND_MARK
