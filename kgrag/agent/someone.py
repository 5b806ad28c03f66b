"""Questions that ask who, and sentences that name someone.

"Who designed the FreeType logo?", "Who wrote the original Hyphen library?", "By whom was ...
founded?": the answer names a person or a body ("Raph Levien", "the Free Software Foundation",
"rms@gnu.org"). A quoted answer that names nothing the question does not name itself ("It is
written in C, designed to be small ...", "FreeType is a freely available software library")
does not answer it, however many of the question's words it holds: the support test abstains
(:mod:`kgrag.agent.answering`), as for a quantity no quote states (:mod:`kgrag.agent.quantity`).

A name here is a capitalised word of two letters or more that is no common word (a sentence's
"It", "The", "This") and no word of the question, or an e-mail address. It does not tell a
person from a product ("LibYAML bindings" names something): the gate only stops answers that
name nothing at all.
"""

from __future__ import annotations

import re

from kgrag.text import terms
from kgrag.text.stopwords import NAME_STOP_WORDS

__all__ = ["asks_who", "names_someone"]

#: "Who ...", "Whom ...", "Whose ...", "... by whom?": not "who's who" inside a title, nor a
#: relative "who" ("the users who can ..."), which follows a noun.
_ASKS = re.compile(r"^\W*(?:who|whom|whose)\b|\bby\s+whom\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_][\w'’.-]*")
#: An e-mail address; its local part starts where no other such character stands (without the
#: look-behind, a long run of letters was scanned again from each of its letters).
_ADDRESS = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+")


def asks_who(question: str) -> bool:
    """Whether ``question`` asks who did or is something."""
    return bool(_ASKS.search(question))


def names_someone(sentence: str, question: str) -> bool:
    """Whether ``sentence`` names someone or something ``question`` does not name: a
    capitalised word that is no common word and no word of the question, or an e-mail
    address."""
    if _ADDRESS.search(sentence):
        return True
    asked = set(terms(question))
    for word in _WORD.findall(sentence):
        bare = word.strip("'’.-")
        if len(bare) < 2 or not bare[0].isupper() or bare.lower() in NAME_STOP_WORDS:
            continue
        if set(terms(bare)) <= asked:
            continue
        return True
    return False
