"""How a passage found through a bridge entity counts for the next hop of bridge retrieval
(:func:`kgrag.executor.handlers._bridge_hops`).

The next hop searches the vector index for "question + bridge name", once per bridge (up to 32).
The best of many such searches also lifts passages that only share the question's relations
(films, birthplaces, spouses), which a larger corpus holds more of: at 8,008 passages they took
the places of next-hop passages (BENCHMARKS.md, "Growth"). Two rules, no constant:

- **The passage names its bridge** (:func:`names_bridge`): a passage found by the search for
  "question + B" counts for that search only when its title or text holds B's name as whole
  words, or when its title (less a bracketed disambiguation, "Planet of the Apes (2001 film)")
  is part of B's name (the passage is the article of what B names: "Dawn of the Planet of the
  Apes"). Names are folded (accents, case) on both sides. A passage the first search found
  keeps its own score.
- **A chain scores as the mean of its links** (:func:`chain_score`): the passage's similarity to
  "question + B" and the similarity to the question of the seed passage that mentions B. A
  bridge of a weak seed (a near miss of the first search, often a distractor in a large corpus)
  lifts its passages less than a bridge of the best seed.

Chosen on folds 1-3 of the MuSiQue dev questions at 8,008 passages and reported on folds 4-5
(bench/growth_diagnosis.py, BENCHMARKS.md)."""

from __future__ import annotations

import re
from typing import Any

from kgrag.text.folding import fold

_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")


def _folded(text: str) -> str:
    return fold(text).lower()


def names_bridge(bridge_name: str, row: dict[str, Any]) -> bool:
    """Whether the passage of ``row`` (its ``title`` and ``text``) names the bridge
    ``bridge_name``: the name is in its title or text, or its title, less a bracketed
    disambiguation, is part of the name."""
    name = _folded(bridge_name).strip()
    if not name:
        return False
    title = str(row.get("title") or "")
    if _holds_words(_folded(f"{title}\n{row.get('text') or ''}"), name):
        return True
    base = _folded(_DISAMBIGUATION.sub("", title)).strip()
    return bool(base) and _holds_words(name, base)


def _holds_words(text: str, phrase: str) -> bool:
    """Whether ``text`` holds ``phrase`` as whole words ("Ford" is not in "afford")."""
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def chain_score(seed_score: float, hop_score: float) -> float:
    """The score of a passage reached through a bridge: the mean of the seed passage's
    similarity to the question and the passage's similarity to "question + bridge"."""
    return (seed_score + hop_score) / 2.0
