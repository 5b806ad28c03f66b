"""Is a quoted passage about a namesake of what the question names?

"Which region is Corey Taylor's city of birth located?" quoted "John H. Taylor (Mormon) Born in
Salt Lake City, Utah Territory, Taylor was the son of ..."; "... the place of birth of David
Morse" quoted "Morse Bluff Township is one of twenty-four townships ..."; "Who is the spouse of
Big Eye's main director?" quoted a passage naming "The Eye of the Beholder". Each quote holds a
word of one of the question's name phrases, so the quoted-names gate (kgrag.agent.support)
lets it through, but the word is part of *another* name: the passage is about someone or
something else that shares a word with what is asked about.

:func:`namesake` is true when, for a name phrase of the question of two words or more
("Corey Taylor"; numbers and joining words left out), none of the cited passages holds the
phrase whole (as consecutive words, in its title, its section's headings or its text, or in an
evidence passage of its document: a manual's chapter says "make" where another says "GNU
make"), and a cited passage

- writes a word of the phrase inside a name of its own that holds a capitalised word the phrase
  does not ("John H. Taylor", "Morse Bluff Township", "The Eye of the Beholder"): a *different
  name*, which the passage's bare mentions ("Taylor was baptized") then refer to;
- and that shared word is no ordinary word: the evidence never writes it in lower case ("river"
  of "Nam Khan River" for "Bubye River", "make" of "POSIX Make" for "GNU Make", "union" of
  "European Union" tell nothing apart; "Taylor", "Morse" are only names);
- and does not write, capitalised, the phrase's other word ("Corey", "David", "Big"): the word
  that tells the two apart is missing ("big - budget" is not the name "Big"). Ordinary words
  ending the phrase name the kind of thing it is and tell nothing apart: "PCI ID Repository"
  over pci.ids' "PCI ID Project" is no namesake. Honorifics ("Sir R.A. Fisher") and initials
  ("R.A. Fisher" for "Ronald Fisher") are no other name.

A passage that shortens the name without naming anyone else ("sed" for "GNU sed", "Taylor" for
"Corey Taylor", "the Make utility") is no namesake: nothing in it names another thing with the
shared word. It reads only the cited passages, their headings and the answer's evidence, no
corpus statistics, and has no constant: the same rule reads any folder. Measured in
BENCHMARKS.md "Answers and abstention" (the namesake gate).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kgrag.agent.names import JOINING, content_word, holds, name_phrases, raw_words, words
from kgrag.core import Hit
from kgrag.text import stem
from kgrag.text.folding import fold
from kgrag.text.sentences import sentence_texts

#: A name of a passage: capitalised words (or numbers), joined by spaces and the joining words
#: of :data:`kgrag.agent.names.JOINING` ("The Eye of the Beholder"), never across a comma (a
#: list of places "Salt Lake City, Utah Territory, Taylor" is three names).
_NAME = re.compile(
    r"\b[A-Z][\w'.-]*"
    r"(?:[ \t]+(?:(?:of|the|de|la|le|von|van|der|du|del|and|&)[ \t]+)*[A-Z][\w'.-]*)*"
)


#: Words before a name that are no part of it ("Sir R.A. Fisher" is "R.A. Fisher").
HONORIFICS = frozenset(
    {"sir", "dame", "dr", "mr", "mrs", "ms", "prof", "professor", "lord", "lady"}
)


def namesake(question: str, cited: Sequence[Hit], evidence: Sequence[Hit] = ()) -> bool:
    """Does a ``cited`` passage name a namesake of one of ``question``'s name phrases, none of
    the cited passages holding that phrase whole (see the module doc)? ``evidence``: the
    answer's evidence passages; one of a cited passage's own document holding the phrase
    counts as the cited passage holding it, and a word they write in lower case is an ordinary
    word, whose sharing tells nothing."""
    ordinary = _lower_case(evidence or cited)
    for phrase in _multi_word(question):
        if any(_holds_whole(phrase, hit, evidence) for hit in cited):
            continue
        if any(_names_another(phrase, hit, ordinary) for hit in cited):
            return True
    return False


def _lower_case(hits: Sequence[Hit]) -> set[str]:
    """The words ``hits`` write in lower case (stemmed): ordinary words ("river", "make",
    "union"), which many names share ("Nam Khan River", "POSIX Make", "European Union")."""
    return {stem(w) for h in hits for w in raw_words(h.text or "") if w[:1].islower()}


def _multi_word(question: str) -> list[tuple[str, ...]]:
    """The question's name phrases of two words or more, stemmed, without their joining words
    ("Journal of Psychotherapy Integration" -> journal, psychotherapi, integr) and numbers: a
    version or a year is written apart from its name as often as beside it ("Release 3.19.0"
    under a Valgrind heading), and a passage names no one with it."""
    out = []
    for phrase in name_phrases(question):
        kept = tuple(w for w in phrase if w not in JOINING and not w.isdigit())
        if len(set(kept)) >= 2:
            out.append(kept)
    return out


def _texts(hit: Hit) -> list[str]:
    """Where a passage says what it names: its title, its section's headings, its text."""
    return [hit.title or "", *hit.section, hit.text or ""]


def _holds_whole(phrase: tuple[str, ...], hit: Hit, evidence: Sequence[Hit]) -> bool:
    """Does ``hit`` (or a copy of it, or an evidence passage of its document) hold ``phrase``
    as consecutive words?"""
    same = [
        h
        for h in evidence
        if h.id == hit.id or (hit.document_id is not None and h.document_id == hit.document_id)
    ]
    return any(
        holds([w for w in words(text) if w not in JOINING and not w.isdigit()], phrase)
        for h in (*hit.and_copies(), *same)
        for text in _texts(h)
    )


def _names_another(phrase: tuple[str, ...], hit: Hit, ordinary: set[str]) -> bool:
    """Does ``hit`` write a word of ``phrase`` that is no ``ordinary`` word inside a name of
    its own holding a capitalised word ``phrase`` does not, and miss, capitalised, another word
    of ``phrase``?"""
    wanted = {w for w in phrase if w not in JOINING}
    capitalised: set[str] = set()
    other = False
    sentences = [s for text in _texts(hit) for s in sentence_texts(text, min_chars=1)]
    for sentence in sentences:
        for match in _NAME.finditer(fold(sentence)):
            said = [w for w in raw_words(match.group(0)) if w.lower() not in JOINING]
            # a leading sentence word ("Later Taylor moved") is no part of the name
            while said and not content_word(said[0]):
                said = said[1:]
            stems = [stem(w) for w in said]
            capitalised.update(stems)
            extra = [
                w
                for s, w in zip(stems, said, strict=True)
                if s not in wanted and w.lower() not in HONORIFICS
            ]
            # an initial ("R.A. Fisher" for "Ronald Fisher", "Ronald A. Fisher") or an
            # honorific ("Sir") is no other name
            if (wanted & set(stems)) - ordinary and any(
                w[:1].isupper() and len(w) > 1 for w in extra
            ):
                other = True
    return other and bool(_telling(phrase, wanted - capitalised, ordinary))


def _telling(phrase: tuple[str, ...], missing: set[str], ordinary: set[str]) -> set[str]:
    """The ``missing`` words of ``phrase`` that tell a name apart: not those of its last run of
    ordinary words, the kind of thing it names ("Repository" of "PCI ID Repository", which a
    file calls the "PCI ID Project")."""
    kind: set[str] = set()
    for word in reversed(phrase):
        if word not in missing or word not in ordinary:
            break
        kind.add(word)
    return missing - kind
