"""Whether a question that names files asks the collection for them, or asks what the files do.

"Which files talk about the scheduler?" and "what files do you have on logrotate?" ask which
documents the collection holds (a listing); "Which files does the daemon read at startup?",
"What permissions should the private key files have?" and "Where should I put extra
configuration files?" ask what a document says (the files are things of the world the
documents describe). The intent classifier reads both as listings: their words are alike, and
an embedding of the question weighs words, not who does what. Grammar tells them apart:

- an object question, "which/what <noun> <auxiliary> <another subject> <verb>": the files are
  what another subject (the daemon, the private key files) does something with, unless that
  subject is the collection ("which files does the archive hold?") or its items ("what tags do
  the documents have?"), or the verb is one of storing
  ("which files did the support team upload?");
- a how-to or where-to question of the asker, "how do I ...", "where should we ...".

:func:`asks_about_the_world` reads these two frames; a listing or metadata question in one of
them is planned as a content question (kgrag/planner/document_plans.py).
"""

from __future__ import annotations

import re

from kgrag.text.words import word_set

__all__ = ["asks_about_the_world"]

_OBJECT_QUESTION = re.compile(
    r"^\s*(?:which|what)\s+(?:[\w-]+\s+){1,4}?"
    r"(?:do|does|did|should|must|can|could|will|would|might|may|shall)\s+"
    r"(?:the|a|an|this|that|these|those|its|their|his|her|each|every)\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_ASKERS_HOW_TO = re.compile(
    r"^\s*(?:how|where|why)\s+(?:do|does|should|can|could|must|would|shall|may)\s+(?:i|we)\b",
    re.IGNORECASE,
)
#: Subjects that are the collection itself: "which files does the archive hold?".
_COLLECTION = word_set(
    """collection library archive store folder corpus index database system repository
    knowledge base"""
)
#: The collection's items, when they are the subject unqualified: "what tags do the documents
#: have?" asks about the collection; "the private key files" are things of the world.
_ITEMS = word_set(
    """documents document files file docs doc pdfs pdf pictures images photos recordings notes
    manuals pages spreadsheets texts items entries"""
)
#: Verbs of storing: "which files did the support team upload?" asks the collection.
_STORING = word_set(
    """upload uploaded add added ingest ingested index indexed import imported store stored
    save saved submit submitted contribute contributed"""
)


def asks_about_the_world(question: str) -> bool:
    """Whether ``question`` asks what something other than the collection does with the files it
    names, or how the asker should do something: a content question, whatever its words."""
    if _ASKERS_HOW_TO.match(question):
        return True
    match = _OBJECT_QUESTION.match(question)
    if match is None:
        return False
    words = re.findall(r"[a-z]+", match.group("rest").lower())
    if not words or words[0] in _ITEMS:
        return False
    return not any(w in _COLLECTION or w in _STORING for w in words)
