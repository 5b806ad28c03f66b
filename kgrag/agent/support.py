"""Does the evidence answer the question at all? The support test behind abstention.

An answer is supported when the evidence retrieved for it (its best ``EVIDENCE_HITS`` hits)
contains the question's salient terms: its names (capitalised words, numbers and identifiers,
what a question is *about*) and its other content terms. A question whose subject is in no
readable document (a capital city, a recipe, a passage removed from the corpus or hidden by its
ACL) still retrieves the nearest text, but that text lacks the names the question asks about.
Features (each a share in [0, 1]):

- ``evidence_names`` / ``evidence_terms``: the question's names / content terms found in the
  evidence; ``evidence_score`` is their mean (``names`` counts as ``terms`` when the question
  names nothing);
- ``names`` / ``terms`` / ``score``: the same over the passages the answer cites.

Names and terms are compared without accents ("Aschenbrodel" finds "Aschenbrödel"); a question
heard from an attached recording is judged by its terms (speech recognition may mishear a name);
an image counts as support only when found as showing what the question asks about (the CLIP
depicts filter, a named entity's image, an attached image's likes), not for sitting near the
evidence passages (kgrag.agent.answering, kgrag.agent.loop.depicting). The test
runs on extractive answers and, with an LLM configured, on the evidence before the model is asked
(kgrag.agent.answering), so a model is never handed evidence the offline rule would abstain on.

The decision is ``evidence_score >= SUPPORT_THRESHOLD`` (``evidence_terms >=
NAMELESS_THRESHOLD`` for a question that names nothing). Feature and threshold were chosen on
folds of the MuSiQue dev questions (each asked as it is, and with its supporting passages hidden)
and reported on the held-out fold: ``bench/abstention.py``, BENCHMARKS.md "Abstention". Lexical
coverage cannot tell a multi-hop question whose second hop was not retrieved from one whose
answer is absent, so no threshold met both goals there (>= 90% abstention on unanswerable,
<= 5% false abstention); the rule weighs both errors the same.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from kgrag.core import Hit
from kgrag.text import key_terms, stem, terms

#: Below this score the agent abstains (chosen on folds; see the module doc).
SUPPORT_THRESHOLD = 0.75
#: A question that names nothing ("which part did the meeting agree to replace?") describes its
#: subject in generic words an answering passage need not use: it is supported when the evidence
#: holds at least half of its content terms. Not calibrated (2 of the 50 dev questions name
#: nothing); a round value, reported with the fold figures.
NAMELESS_THRESHOLD = 0.5
#: The evidence features read the best hits the judge reads (kgrag.agent.evaluate.JUDGED_HITS).
EVIDENCE_HITS = 10

ABSTENTION = "Nothing in the documents you can read answers this."
NOT_FOUND_MARK = "NOT_FOUND"
"""What the LLM is told to reply when the evidence does not answer the question."""

_NAME = re.compile(r"\b(?:[A-Z][\w'-]*|[\w-]*\d[\w-]*|\w+_\w+)")


class Support(BaseModel):
    """The support test's features and decision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    named: bool = True
    """Whether the question names something (else ``NAMELESS_THRESHOLD`` applies)."""
    names: float
    terms: float
    score: float
    evidence_names: float = 0.0
    evidence_terms: float = 0.0
    evidence_score: float = 0.0
    supported: bool


def fold(text: str) -> str:
    """``text`` without accents ("Aschenbrödel" -> "Aschenbrodel"): a question typed without
    them still finds the name in a passage that has them, and the other way round."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def question_names(question: str) -> set[str]:
    """Stemmed names of the question: capitalised words (not only the first word), numbers,
    identifiers; words the key-term filter drops (question words, stop words) are not names."""
    question = fold(question)
    keys = {stem(w) for w in key_terms(question)}
    words = [m.group(0) for m in _NAME.finditer(question)]
    first = question.split(maxsplit=1)[0] if question.split() else ""
    named = [w for w in words if w != first or not w[:1].isupper()]
    return {stem(t) for w in named for t in key_terms(w)} & keys


def _coverage(question: str, hits: Sequence[Hit]) -> tuple[float, float]:
    """(names, terms): shares of the question's names and content terms in ``hits``."""
    wanted = set(terms(fold(question)))
    found: set[str] = set()
    for hit in hits:
        found.update(terms(fold(f"{hit.title or ''} {hit.text or ''}")))
    names = question_names(question)
    term_cov = len(wanted & found) / len(wanted) if wanted else 0.0
    name_cov = len(names & found) / len(names) if names else term_cov
    return name_cov, term_cov


def assess(
    question: str,
    cited: Sequence[Hit],
    evidence: Sequence[Hit] = (),
    *,
    threshold: float = SUPPORT_THRESHOLD,
    heard: bool = False,
) -> Support:
    """Score how well ``evidence`` (and the passages ``cited`` of it) cover ``question``.
    ``heard``: the question was (partly) recognised from speech, whose names may be misheard
    ("Aida Lovelace"): it is judged by its terms, as a question that names nothing is."""
    named = bool(question_names(question)) and not heard
    names, term_cov = _coverage(question, cited)
    ev_names, ev_terms = _coverage(question, evidence[:EVIDENCE_HITS])
    score = (names + term_cov) / 2
    ev_score = (ev_names + ev_terms) / 2
    return Support(
        names=round(names, 4),
        terms=round(term_cov, 4),
        score=round(score, 4),
        evidence_names=round(ev_names, 4),
        evidence_terms=round(ev_terms, 4),
        evidence_score=round(ev_score, 4),
        named=named,
        supported=bool(cited)
        and bool(evidence)
        and (round(ev_score, 4) >= threshold if named else ev_terms >= NAMELESS_THRESHOLD),
    )


def is_not_found(text: str) -> bool:
    """Did the LLM say the evidence does not answer (its reply starts with or is NOT_FOUND)?"""
    body = text.strip().strip("*_`\"' ").upper()
    return body.startswith(NOT_FOUND_MARK) or body.rstrip(".") == NOT_FOUND_MARK
