"""Abbreviations, one named set per purpose (lower case, without their period).

They differ on purpose: a sentence splitter over documents knows many (months, streets, Latin), a
question's sentence test few, and the entity extractor those that sit inside a name.
"""

from __future__ import annotations

from kgrag.text.words import word_set

__all__ = [
    "CORPORATE_ABBREVIATIONS",
    "HONORIFICS",
    "NAME_ABBREVIATIONS",
    "NUMBERED_ABBREVIATIONS",
    "QUESTION_ABBREVIATIONS",
    "SENTENCE_ABBREVIATIONS",
]

SENTENCE_ABBREVIATIONS = frozenset(
    {
        *("mr", "mrs", "ms", "mx", "dr", "prof", "sr", "jr", "st", "mt", "ft", "rev", "hon"),
        *("gen", "col", "lt", "sgt", "capt", "cmdr", "adm", "gov", "pres", "vs", "cf", "eg"),
        *("ie", "viz", "al", "approx", "dept", "inc", "ltd", "corp", "bros", "assn", "univ"),
        *("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
        *("ave", "blvd", "rd"),
    }
)
"""Words that, followed by ".", never end a sentence of a document (titles, Latin, months)."""

NUMBERED_ABBREVIATIONS = frozenset(
    {"no", "nos", "vol", "vols", "p", "pp", "fig", "figs", "eq", "eqs", "ch", "sec", "art"}
    | {"ref", "refs", "ca", "op", "tab", "ex"}
)
"""Abbreviations that do not end a sentence when a number follows: "Fig. 3", "No. 5", "p. 12"."""

QUESTION_ABBREVIATIONS = word_set("mr mrs ms dr st jr sr vs etc e.g i.e u.s prof gen col lt mt ft")
"""Words whose period does not start a new sentence of a question."""

HONORIFICS = word_set("mr mrs ms mx dr prof professor rev reverend")
"""Titles written before a person's name, abbreviated or not."""

NAME_ABBREVIATIONS = HONORIFICS | word_set("st mt ft gen col lt sgt capt hon sen gov no vs")
"""Abbreviations whose period neither ends a sentence nor an entity name ("St. Louis")."""

CORPORATE_ABBREVIATIONS = word_set("inc corp ltd co jr sr bros")
"""Abbreviations whose period belongs to the name they end ("Acme Inc.")."""
