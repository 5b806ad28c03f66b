"""Evidence chains: does a chain of linked evidence sentences, starting at what the question
names, cover what it asks?

The support test's coverage features (kgrag.agent.support) pool the question's terms over the
best ten passages: a multi-hop question whose last hop is missing ("Who is the spouse of Big
Eye's main director?" with the director's own passage unreadable) still finds "spouse" in some
unrelated passage and "director" in another. Here the evidence is read as sentences, each with
its passage's title (a Wikipedia-style passage's sentences are about its title: "It was
established in 1991"), and a *chain* is grown from a sentence holding one of the question's
name phrases (:func:`kgrag.agent.support.name_parts`, its *subject*):

- two sentences are *linked* when they are in the same passage, or share a name phrase (a run
  of capitalised words or numbers, :func:`names_of`): the bridge entity of a multi-hop answer
  ("published by the American Psychological Association" and the passage titled "American
  Psychological Association");
- the chain grows greedily, one linked sentence at a time, by the one adding most of the
  question's content terms not yet covered, up to :data:`MAX_CHAIN` sentences;
- ``chain_terms`` is the best chain's share of the question's content terms, over every subject
  sentence (over every sentence when the question names no phrase).

No corpus statistics: it reads any corpus. Measured on folds of the MuSiQue
dev questions (bench/abstention.py, BENCHMARKS.md "Answers and abstention").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kgrag.agent.names import holds, name_parts, name_phrases, words
from kgrag.core import Frozen, Hit
from kgrag.text import terms
from kgrag.text.folding import fold
from kgrag.text.sentences import sentence_texts

#: Sentences in a chain at most: a subject sentence and up to three hops (a round value, the
#: most hops MuSiQue's questions have; not tuned).
MAX_CHAIN = 4


def names_of(text: str) -> frozenset[tuple[str, ...]]:
    """The name phrases of ``text`` (:func:`kgrag.agent.names.name_phrases`: runs of capitalised
    words or numbers, stemmed, leading stop words dropped)."""
    return frozenset(name_phrases(text))


@dataclass(frozen=True)
class _Sentence:
    passage: int
    text: str
    words: tuple[str, ...]
    terms: frozenset[str]
    names: frozenset[tuple[str, ...]]


def _sentences(hits: Sequence[Hit]) -> list[_Sentence]:
    out: list[_Sentence] = []
    for n, hit in enumerate(hits):
        title = hit.title or ""
        title_names = names_of(title)
        for sentence in sentence_texts(hit.text or "", min_chars=1) or [""]:
            both = f"{title} \0 {sentence}"
            out.append(
                _Sentence(
                    passage=n,
                    text=sentence,
                    words=tuple(words(both)),
                    terms=frozenset(terms(fold(both))),
                    names=names_of(sentence) | title_names,
                )
            )
    return out


class Chain(Frozen):
    """The best evidence chain's coverage of a question."""

    terms: float
    """The share of the question's content terms the best chain holds."""
    sentences: tuple[str, ...] = ()
    """The best chain's sentences, subject first."""


def chain(question: str, hits: Sequence[Hit], *, subject: bool = True) -> Chain:
    """The best chain of ``hits``' sentences for ``question`` (see the module doc). ``subject``
    False (a question heard from speech, whose names may be misheard): any sentence may start
    the chain."""
    wanted = frozenset(terms(fold(question)))
    sentences = _sentences(hits)
    if not wanted or not sentences:
        return Chain(terms=0.0)
    phrases = name_parts(question) if subject else []
    if phrases:
        seeds = [
            i
            for i, s in enumerate(sentences)
            if any(holds(s.words, part) for parts in phrases for part in parts)
        ]
    else:
        seeds = list(range(len(sentences)))
    best: tuple[int, tuple[int, ...]] = (0, ())
    for seed in seeds:
        members = [seed]
        covered = set(sentences[seed].terms & wanted)
        names = set(sentences[seed].names)
        passages = {sentences[seed].passage}
        while len(members) < MAX_CHAIN:
            pick, gain = -1, 0
            for i, s in enumerate(sentences):
                if i in members or not (s.passage in passages or s.names & names):
                    continue
                g = len((s.terms & wanted) - covered)
                if g > gain:
                    pick, gain = i, g
            if pick < 0:
                break
            members.append(pick)
            covered |= sentences[pick].terms & wanted
            names |= sentences[pick].names
            passages.add(sentences[pick].passage)
        if len(covered) > best[0]:
            best = (len(covered), tuple(members))
    return Chain(
        terms=round(best[0] / len(wanted), 4),
        sentences=tuple(sentences[i].text for i in best[1]),
    )
