"""Near-duplicate passages: the same text stored from several files. Real folders hold one
document in several formats (a manual as HTML pages and as a PDF, a README as Markdown and as
HTML, a file and its ``.gz`` copy), so a search's best hits can be copies of one passage that
crowd out the next distinct one. Here a passage counts once: a ranking step looks deep enough to
find ``k`` distinct passages (:func:`nearest_distinct`, :func:`until_distinct`), and fusion
gives each passage one slot, held by its best-ranked copy (:func:`copy_groups` with
:func:`kgrag.executor.fusion.fuse`, :func:`collapse`).

Two hits are copies when they are text passages of different documents and at least
:data:`MIN_CONTAINMENT` of the word :data:`SHINGLE_WORDS`-grams of the shorter one are in the
other. Both numbers are those Lee et al. (2022, "Deduplicating Training Data Makes Language
Models Better", NearDup) used to find near-duplicate documents: word 5-grams and a similarity of
0.8, taken as published, not tuned here. Their similarity is Jaccard's, of two whole documents;
two formats cut the same passage into chunks at different places (page breaks, headings, a
table of contents before it), so the shorter chunk is compared with the longer one by
containment (Broder 1997), which a shift of the cut does not lower: its union with the other
grows, its share in it does not. Passages of one document are never copies of each other: the
chunker repeats up to 32 tokens of a chunk at the start of the next by design
(kgrag.ingest.chunking), which is not a second copy of the text.

Every hit compared here was read through the reader's ACL filter, so a copy the reader may not
read never stands in for one they may.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from kgrag.core import Hit
from kgrag.executor.nearest import BEAM, GROWTH

__all__ = [
    "MAX_DEPTH",
    "MIN_CONTAINMENT",
    "SHINGLE_WORDS",
    "CopyFinder",
    "collapse",
    "copy_groups",
    "nearest_distinct",
    "shingles",
    "until_distinct",
    "with_copies",
]

#: Words per shingle (Lee et al. 2022).
SHINGLE_WORDS = 5
#: The share of the shorter passage's shingles the other must hold (Lee et al. 2022's 0.8).
MIN_CONTAINMENT = 0.8
#: How deep a search looks for ``k`` distinct passages at most: the pool the vector statements
#: search anyway (:data:`kgrag.executor.nearest.BEAM`), so looking deeper costs no wider search.
MAX_DEPTH = BEAM

_WORD = re.compile(r"\w+")
_PASSAGES = ("chunk", "segment")

_H = TypeVar("_H", bound=Hit)


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    """The word :data:`SHINGLE_WORDS`-grams of ``text``, lower case, punctuation and layout
    ignored (a text of fewer words is one shingle of them all; no words, none)."""
    words = _WORD.findall(text.lower())
    if len(words) <= SHINGLE_WORDS:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(
        tuple(words[i : i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)
    )


class CopyFinder:
    """Tells whether two hits are copies of one passage (see the module doc), computing each
    hit's shingles once."""

    def __init__(self) -> None:
        self._shingles: dict[str, frozenset[tuple[str, ...]]] = {}

    def _of(self, hit: Hit) -> frozenset[tuple[str, ...]]:
        found = self._shingles.get(hit.id)
        if found is None:
            found = self._shingles[hit.id] = shingles(hit.text or "")
        return found

    def are_copies(self, a: Hit, b: Hit) -> bool:
        if a.id == b.id:
            return True
        if a.kind not in _PASSAGES or b.kind not in _PASSAGES:
            return False
        if a.document_id is not None and a.document_id == b.document_id:
            return False
        sa, sb = self._of(a), self._of(b)
        if not sa or not sb:
            return False
        shared = len(sa & sb) if len(sa) <= len(sb) else len(sb & sa)
        return shared >= MIN_CONTAINMENT * min(len(sa), len(sb))


def _passages(hits: Iterable[_H], finder: CopyFinder) -> Iterable[tuple[_H, _H]]:
    """Each hit of ``hits`` in order, with the first hit of its passage (itself when it is the
    first): a hit is compared with the first hit of each passage seen before it."""
    firsts: list[_H] = []
    for hit in hits:
        first = next((f for f in firsts if finder.are_copies(hit, f)), None)
        if first is None:
            firsts.append(hit)
            first = hit
        yield hit, first


def copy_groups(hits: Iterable[Hit]) -> dict[str, str]:
    """Hit id -> the id of the first hit (in the order given) of the passage it is a copy of;
    its own id when it is the first."""
    groups: dict[str, str] = {}
    for hit, first in _passages(hits, CopyFinder()):
        groups.setdefault(hit.id, first.id)
    return groups


def with_copies(shown: Iterable[_H], hits: Iterable[Hit], groups: Mapping[str, str]) -> list[_H]:
    """Each hit of ``shown`` (one per passage) carrying, in :attr:`~kgrag.core.Hit.copies`, the
    other hits of ``hits`` of its passage (``groups``: :func:`copy_groups`) in their order, and
    the copies these carried."""
    pool = list(hits)
    out: list[_H] = []
    for hit in shown:
        key = groups.get(hit.id, hit.id)
        copies: dict[str, Hit] = {c.id: c for c in hit.copies}
        for other in pool:
            if other.id != hit.id and groups.get(other.id, other.id) == key:
                for c in (other.model_copy(update={"copies": ()}), *other.copies):
                    if c.id != hit.id:
                        copies.setdefault(c.id, c)
        out.append(hit.model_copy(update={"copies": tuple(copies.values())}) if copies else hit)
    return out


def collapse(hits: Iterable[_H], k: int | None = None) -> list[_H]:
    """The best-ranked copy of each passage of ``hits`` (best first), in their order, at most
    ``k`` of them, each carrying its other copies (:func:`with_copies`)."""
    pool = list(hits)
    groups = copy_groups(pool)
    firsts = list({h.id: h for h in reversed(pool) if groups[h.id] == h.id}.values())[::-1]
    return with_copies(firsts if k is None else firsts[: max(k, 0)], pool, groups)


def _distinct(hits: Iterable[Hit], k: int) -> int:
    """How many distinct passages ``hits`` hold, counting up to ``k``."""
    count = 0
    for hit, first in _passages(hits, CopyFinder()):
        count += first is hit
        if count >= k:
            break
    return count


def until_distinct(hits: Iterable[_H], k: int) -> list[_H]:
    """The hits of ``hits`` (best first) down to the ``k``-th distinct passage: every copy
    ranked above it stays in its place, so a later step can still keep a file's own copy (a
    filter to the files a question names)."""
    out: list[_H] = []
    distinct = 0
    for hit, first in _passages(hits, CopyFinder()):
        if first is hit:
            if distinct >= k:
                break
            distinct += 1
        out.append(hit)
    return out


def nearest_distinct(fetch: Callable[[int], Sequence[_H]], k: int) -> list[_H]:
    """The nearest hits down to the ``k``-th distinct passage. ``fetch(n)`` returns the ``n``
    nearest (fewer when there are no more); when copies fill part of them, the search is asked
    again :data:`~kgrag.executor.nearest.GROWTH` times deeper, up to :data:`MAX_DEPTH` (or ``k``
    when larger)."""
    depth = max(k, MAX_DEPTH)
    n = k
    hits = list(fetch(n))
    while len(hits) >= n and n < depth and _distinct(hits, k) < k:
        n = min(n * GROWTH, depth)
        hits = list(fetch(n))
    return until_distinct(hits, k)
