"""Name seeds of bridge retrieval: the passage about each thing the question names.

*An experiment, off unless ``Settings.name_seeds`` (``KGRAG_NAME_SEEDS=1``)* (BENCHMARKS.md,
"Name seeds of the bridge hop" and "Name seeds: the clause of the second hop"): on MuSiQue dev
it raises recall@2 / @5 from 58.3 / 76.5 to 59.8 / 82.8 and, held out, unanswerable abstention
from 90% to 92%, and lowers false abstention from 8% to 6%, short of the 5% goal; one gold
answer fewer is found (20 of 50), so it is not the default.

The bridge hop (:func:`kgrag.executor.handlers._bridge_hops`) takes its bridges from the best
two passages of the first dense search. A multi-hop question's first hop is the passage about
what it names, and dense search blurs a rare name among the question's other words: "the most
popular hotel in Gisvi's city of birth" brings hotels first and Gisvi's passage fourth; "the
usual average snowfall in the city where the performers of Brother were formed" brings snowfall
and no passage naming "Brother". Their bridges (Windhoek, Pearl Jam) are then never searched.

So, for every name phrase of the question (:func:`kgrag.agent.names.written_phrases`) that the
two seed passages do not hold, the passage holding it that is nearest the question joins the
seeds: among the first search's passages (at their similarity) and the lexical search's for
that phrase alone (BM25 over the full-text index's readable candidates,
kgrag/executor/lexical.py; their similarity computed from the text the chunk was embedded from).
A passage holds a name when it writes it as the question does (its case: "Brother", not "a
brother") and not as a part of a longer name ("Big Brother"). Nothing is added when no readable
passage holds the phrase. The handler keeps a first-search passage's similarity and scores one
only the lexical search found as the first search's best passage (a passage holding what the
question names is as good a first hop as the nearest one), and the seeds lead the hop's result:
chosen on folds of the MuSiQue dev questions against their own similarity, the first search's
lowest, and the seeds' chains alone (BENCHMARKS.md). A name phrase without a letter (a year,
"1930") seeds nothing: every passage of that year holds it, and the nearest of them is no first
hop.

A seed's bridges are searched with the clause of the question around the name the seed holds
(:func:`clause_of`), not with the whole question: "the performers of Brother were formed Pearl
Jam" finds Pearl Jam's passage (formed in Seattle), where "What is the usual average snowfall
in the city where the performers of Brother were formed Pearl Jam" finds snowfall passages. A
composed question asks the hop after a name in the words around it; its other clauses ask the
hops after that one. The first search's seeds keep the whole question."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from kgrag.agent.names import written_phrases
from kgrag.core import Hit
from kgrag.text.folding import fold
from kgrag.text.stopwords import FUNCTION_WORDS


def name_seeds(
    query: str,
    seeds: Sequence[Hit],
    first_search: Sequence[Hit],
    search: Callable[[str], Sequence[Hit]],
    nearness: Callable[[Sequence[Hit]], Sequence[float]],
) -> list[Hit]:
    """For each name phrase of ``query`` no passage of ``seeds`` holds, the passage holding it
    that is nearest the question: among those of ``first_search`` (at their similarity) and of
    ``search(phrase)`` (a lexical search for the phrase as written; ``nearness`` gives their
    similarity to the question); each passage once, none of ``seeds``, scored by its
    similarity."""
    have = {h.id for h in seeds}
    out: list[Hit] = []
    for written in dict.fromkeys(written_phrases(query)):
        if not any(c.isalpha() for w in written for c in w):
            continue  # a number alone ("1930") names no thing a passage is about
        phrase = _as_written(written)
        if any(_holds(phrase, h) for h in [*seeds, *out]):
            continue
        dense = [h for h in first_search if h.id not in have and _holds(phrase, h)]
        known = {h.id for h in dense}
        lexical = [
            h
            for h in search(" ".join(written))
            if h.id not in have and h.id not in known and _holds(phrase, h)
        ]
        scored = [
            *dense,
            *(
                h.model_copy(update={"score": float(s)})
                for h, s in zip(lexical, nearness(lexical) if lexical else [], strict=True)
            ),
        ]
        if scored:
            found = max(scored, key=lambda h: h.score)
            out.append(found)
            have.add(found.id)
    return out


#: Words that start a clause of a question ("the city *where* the performers of Brother were
#: formed"): the clause around a name asks the hop that name leads to.
CLAUSE_WORDS = frozenset(
    {"who", "whom", "whose", "which", "what", "where", "when", "that", "how", "why"}
)


_WORD = re.compile(r"\w+")


def clause_of(query: str, hit: Hit) -> str | None:
    """The clause of ``query`` around the first of its name phrases ``hit`` holds (as
    :func:`_holds` reads it): its words from the clause word or punctuation before the name to
    the one after it ("the performers of Brother were formed" in "... the city where the
    performers of Brother were formed"); None when ``hit`` holds none of them."""
    folded = fold(query)
    for written in dict.fromkeys(written_phrases(query)):
        phrase = _as_written(written)
        if not _holds(phrase, hit):
            continue
        found = phrase.search(folded)
        if found is None:
            continue
        head = re.split(r"[,.;:?!]", folded[: found.start()])[-1]
        tail = re.split(r"[,.;:?!]", folded[found.end() :])[0]
        starts = [m.end() for m in _WORD.finditer(head) if m.group(0).lower() in CLAUSE_WORDS]
        stops = [m.start() for m in _WORD.finditer(tail) if m.group(0).lower() in CLAUSE_WORDS]
        clause = head[max(starts, default=0) :] + found.group(0) + tail[: min(stops, default=None)]
        return " ".join(clause.split())
    return None


def _as_written(words: Sequence[str]) -> re.Pattern[str]:
    """The name phrase ``words`` as whole words, written as the question writes them (its case:
    "Brother" the song, not a brother), anything but a letter or digit between them."""
    return re.compile(r"(?<!\w)" + r"\W+".join(re.escape(w) for w in words) + r"(?!\w)")


def _holds(phrase: re.Pattern[str], hit: Hit) -> bool:
    """Does ``hit`` (its title or its text, accents folded) hold ``phrase`` as a name of its
    own, not as a part of a longer one ("Brother" in "Big Brother")?"""
    text = fold(f"{hit.title or ''}\n{hit.text or ''}")
    return any(_alone(text, m.start(), m.end()) for m in phrase.finditer(text))


_BEFORE = re.compile(r"(\w+)[ \t]+$")
_AFTER = re.compile(r"[ \t]+(\w+)")


def _alone(text: str, start: int, end: int) -> bool:
    """Whether the words of ``text`` at ``start:end`` are neither preceded nor followed (across
    a space) by a capitalised word that is no function word ("The", "In" at a sentence's
    start are no part of a name)."""
    before = _BEFORE.search(text[max(0, start - 40) : start])
    after = _AFTER.match(text, end)
    return not any(
        m is not None and m.group(1)[0].isupper() and m.group(1).lower() not in FUNCTION_WORDS
        for m in (before, after)
    )
