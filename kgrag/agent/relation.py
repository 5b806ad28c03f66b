"""Does the evidence say anything of what a question asks about the one thing it names?

"What is the capital of Australia?" over the tz database's rows ("AU -4253+14719
Australia/Hobart Tasmania") and "Who founded NVIDIA?" over pci.ids' vendor line ("10de NVIDIA
Corporation") retrieve passages that hold the name and nothing of what is asked about it: with
one name found and one other word missing the evidence scores 0.75, over the support floor, and
the row is quoted. :func:`asks_beyond_names` is false there: the question names one thing, and
no word it asks with besides that name is in the evidence, written as in the question (stemmed)
or otherwise:

- *inflected otherwise* ("Who keeps the Spare Pump SP-4?" over "... is kept by Hedy Lamarr"): a
  word of a sentence holding the question's name whose MiniLM embedding is at least
  :data:`WORD_MATCH` similar to the question's word counts as it (kept / keeps 0.81, wrote /
  written 0.89, founded / founder 0.81; but fixed / replaced 0.47, capital / territory 0.43:
  a paraphrase is not caught, and a gate on it would not be this one);
- *not asked with at all*: "What happened to the Feed Pump FP-2?" asks for whatever is said
  about it, so a question holding one of :data:`ANYTHING_ABOUT` ("happened", "occurred") is
  answered by any passage about its subject, with or without its other words ("... and who
  fixed it?" over "... Grace Hopper replaced the seal");
- *asking what it is* ("What does FFI mean?", "What does PCI stand for?", :data:`DEFINITION`):
  answered like "What is FFI?", by any passage about it.

A question naming two things or more is left to the other support features: evidence holding
them all relates them, and a relation's words are often not written ("What is the Edsa
Shangri-La an instance of in the birthplace of the person who made The Oddventures of Mr.
Cool?", answered from passages that write neither "instance" nor "birthplace").
"""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.agent.names import fold, name_phrases, question_names, raw_words
from kgrag.agent.word_vectors import word_vectors
from kgrag.core import Hit
from kgrag.modalities.base import TextEmbedder
from kgrag.text import key_terms, stem, terms
from kgrag.text.sentences import sentence_texts

#: Two words whose MiniLM embeddings (all-MiniLM-L6-v2, one word each) are at least this similar
#: are one word written otherwise. Chosen on the MuSiQue corpus's words, not its questions
#: (BENCHMARKS.md "Answers and abstention": 1,500 pairs of words one stem groups, 1,500 pairs of
#: two words of one passage): the lowest value at which at most 0.5% of the co-occurring pairs
#: match (0.47%: "west" / "east" 0.80, "michigan" / "lansing" 0.73), where 79% of the inflected
#: pairs do (the stemmer's groups include non-inflections, "main" / "maine").
WORD_MATCH = 0.7
#: Words that ask for whatever is said about the subject, not for one relation of it ("What
#: happened to the Feed Pump FP-2?"): no answering passage need write them.
ANYTHING_ABOUT = frozenset(
    stem(w) for w in ("happen", "happened", "happens", "occur", "occurred", "occurs")
)
#: Words that ask what the subject is, like "What is X?", which asks with no other word ("What
#: does FFI mean?", "What does PCI stand for?"): a passage defining it need not write them.
#: Added by the lead after the names-alone gate's held-out probe abstained on "What does FFI
#: mean?" over "FFI stands for Foreign Function Interface" (BENCHMARKS.md, so that probe is in
#: sample for this list).
DEFINITION = frozenset(
    stem(w)
    for w in ("mean", "means", "meaning", "stand", "stands", "define", "definition", "acronym")
)


def asks_beyond_names(
    question: str,
    evidence: Sequence[Hit],
    found: set[str],
    embedder: TextEmbedder | None,
) -> bool:
    """Does ``evidence`` hold one of the content words a question naming one thing asks with
    besides that name? ``found``: the evidence's stemmed terms (kgrag.agent.support). True when
    the question names no thing or several, asks with no other word, or asks for anything said
    about its subject (:data:`ANYTHING_ABOUT`); else one of its other words must be in
    ``found`` or, inflected otherwise, in a sentence of ``evidence`` holding one of its names
    (:func:`written_otherwise`; not tried without an ``embedder``)."""
    if len(name_phrases(question)) != 1:
        return True
    names = question_names(question)
    wanted = set(terms(fold(question))) - names
    if not wanted or wanted & (found | ANYTHING_ABOUT | DEFINITION):
        return True
    if embedder is None:
        return False
    asked = [w.lower() for w in raw_words(question) if set(terms(fold(w))) & wanted]
    return written_otherwise(asked, _near_words(names, evidence), embedder)


def _near_words(names: set[str], evidence: Sequence[Hit]) -> list[str]:
    """The content words (lower case, no numbers, not the names) of the sentences of
    ``evidence`` (titles included) that hold one of ``names``."""
    out: dict[str, None] = {}
    for hit in evidence:
        for sentence in [hit.title or "", *sentence_texts(hit.text or "", min_chars=1)]:
            said = terms(fold(sentence))
            if not names & set(said):
                continue
            for word in raw_words(sentence):
                low = word.lower()
                if key_terms(low) and not low.isdigit() and stem(low) not in names:
                    out[low] = None
    return list(out)


def written_otherwise(asked: Sequence[str], near: Sequence[str], embedder: TextEmbedder) -> bool:
    """Is one of the ``asked`` words one of the ``near`` words written otherwise (their
    embeddings at least :data:`WORD_MATCH` similar: "keeps" and "kept")? Each word is embedded
    once per text model (:mod:`kgrag.agent.word_vectors`)."""
    if not asked or not near:
        return False
    similarity = word_vectors(asked, embedder) @ word_vectors(near, embedder).T
    return bool(similarity.max() >= WORD_MATCH)
