"""Name anchors: a passage holding a name the question asks about, when the evidence holds none.

Dense search blurs rare names ("Signmark", "Nugegoda", "Hans Edler"): a question about one often
retrieves passages about similar things and none naming it, and the support test
(kgrag.agent.support) then cannot tell that question from one about a thing no readable document
names. The lexical stage of the same plan (kgrag/executor/lexical.py: BM25 over the full-text
index's readable candidates) ranks the passages naming it first, but its ranking comes after the
dense one in the fusion (kgrag.planner.rule.LEXICAL_WEIGHT). So, for every name phrase of the
question (:func:`kgrag.agent.support.name_phrases`) that no evidence passage holds, the best
lexical hit holding the whole phrase joins the evidence, in place of its last passages.

A question that names nothing ("What does sponge do?", "how do I use vidir?": a tool or a term
written in lower case) has its content words for subject. When no evidence passage holds some
of them, the best lexical hit holding all of its content words (a word in any of its forms, an
irregular verb's too: :func:`kgrag.text.verb_forms.verb_forms`, "sent" held by "Send"; a modal
verb such as "should" is no word of the subject) joins the evidence, first: the
dense passages are then about other things. One passage must hold every word, so a question
about something absent ("what is the boiling point of mercury?") is not anchored by a passage
that happens to hold one of its words, nor one whose evidence lacks only a common word ("use"
in "Which licence does pandas use?") by a passage that holds that word alone.

Nothing is added when no readable passage holds the phrase (the lexical stage reads only what the
asker may read), so a question about a thing that is not there still lacks it. Measured with the
abstention folds (BENCHMARKS.md "Answers and abstention"); no constant here was tuned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgrag.agent.names import name_phrases, phrase_in
from kgrag.agent.support import EVIDENCE_HITS
from kgrag.core import Hit
from kgrag.executor.lexical import LEXICAL_TEMPLATE
from kgrag.planner.params import GraphQueryParams
from kgrag.text import key_terms, stem
from kgrag.text.folding import fold
from kgrag.text.stopwords import MODAL_VERBS
from kgrag.text.verb_forms import verb_forms

if TYPE_CHECKING:
    from kgrag.agent.loop import Iteration

#: Anchors at most (one per missing name phrase); the evidence keeps its size.
MAX_ANCHORS = 3


def lexical_hits(iterations: Sequence[Iteration]) -> list[Hit]:
    """The lexical stage's hits of every iteration, best first within each, repeats dropped."""
    out: dict[str, Hit] = {}
    for iteration in iterations:
        for step in iteration.planned.plan.plan:
            params = step.parameters
            if not isinstance(params, GraphQueryParams) or params.template != LEXICAL_TEMPLATE:
                continue
            outcome = iteration.outcomes.get(step.step_id)
            if outcome is None or outcome.status != "ok":
                continue
            for hit in outcome.result:
                if hit.kind in ("chunk", "segment"):
                    out.setdefault(hit.id, hit)
    return list(out.values())


def anchors(question: str, evidence: Sequence[Hit], candidates: Sequence[Hit]) -> list[Hit]:
    """For each name phrase of ``question`` no ``evidence`` passage holds, the first of
    ``candidates`` that holds it (at most :data:`MAX_ANCHORS`)."""
    have = {h.id for h in evidence}
    out: list[Hit] = []
    for phrase in name_phrases(question):
        if any(phrase_in(phrase, h) for h in [*evidence, *out]):
            continue
        found = next((h for h in candidates if h.id not in have and phrase_in(phrase, h)), None)
        if found is not None:
            out.append(found)
            have.add(found.id)
        if len(out) == MAX_ANCHORS:
            break
    return out


def word_anchor(question: str, evidence: Sequence[Hit], candidates: Sequence[Hit]) -> Hit | None:
    """For a question that names nothing (no name phrase), some of whose content words no
    ``evidence`` passage holds: the first of ``candidates`` that holds all its content words."""
    if name_phrases(question):
        return None
    # a word is held in any of its forms: an irregular verb's ("sent" is held by "Send ...")
    terms = list(
        dict.fromkeys(
            tuple(dict.fromkeys((stem(f),) for f in verb_forms(w)))
            for w in key_terms(fold(question))
            if w not in MODAL_VERBS  # "should", "can": no subject's words
        )
    )

    def held(forms: tuple[tuple[str, ...], ...], hit: Hit) -> bool:
        return any(phrase_in(f, hit) for f in forms)

    missing = [t for t in terms if not any(held(t, h) for h in evidence)]
    if not missing:
        return None
    have = {h.id for h in evidence}
    return next(
        (h for h in candidates if h.id not in have and all(held(t, h) for t in terms)),
        None,
    )


def anchored(question: str, evidence: Sequence[Hit], iterations: Sequence[Iteration]) -> list[Hit]:
    """``evidence`` with the question's name anchors after its best passages, or a nameless
    question's word anchor before them (at most ``EVIDENCE_HITS`` in all, the passages the
    support test reads; unchanged when every name phrase or word is already there)."""
    candidates = lexical_hits(iterations)
    word = word_anchor(question, evidence, candidates)
    if word is not None:
        return [word, *evidence[: max(0, EVIDENCE_HITS - 1)]]
    added = anchors(question, evidence, candidates)
    if not added:
        return list(evidence)
    keep = min(len(evidence), max(0, EVIDENCE_HITS - len(added)))
    return [*evidence[:keep], *added]
