"""The offline extractor (:class:`RuleEntityExtractor`: rules plus corpus statistics, no model)
and :func:`split_by_document`."""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations, pairwise

from kgrag.core import PUBLIC
from kgrag.ingest.entities.models import EntityType, ExtractionResult, Mention, Relation
from kgrag.ingest.entities.names import normalise_name
from kgrag.ingest.entities.resolver import MentionMerger, is_shouting
from kgrag.ingest.entities.tokens import (
    PUNCT,
    WORD,
    Tokens,
    tokenise,
)
from kgrag.ingest.entities.wordlists import (
    ADVERB_RE,
    CONNECTORS,
    CORP_SUFFIXES,
    ERAS,
    FIRST_NAMES,
    KNOWN_PLACES,
    MONTHS,
    NOT_BEFORE_NUMBER,
    ORG_CUES,
    PLACE_ACRONYMS,
    PLACE_CUES,
    PREP_PLACE,
    ROMAN_RE,
    TITLE_SMALL,
    TITLE_WORDS,
    WEEKDAYS,
)
from kgrag.text.abbreviations import CORPORATE_ABBREVIATIONS, HONORIFICS, NAME_ABBREVIATIONS
from kgrag.text.stopwords import NAME_FUNCTION_WORDS, NAME_STOP_WORDS

log = logging.getLogger(__name__)


_DATE_TEXT_RE = re.compile(
    r"\b(?:"
    r"\d{1,2}(?:st|nd|rd|th)?\s+(?:January|February|March|April|May|June|July|August|September"
    r"|October|November|December)\s*,?\s+\d{4}"
    r"|(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?\s*,?)?\s+\d{4}"
    r")\b"
)
_QUOTE_OPEN = {'"', "\u201c"}
_QUOTE_CLOSE = {'"', "\u201d"}


@dataclass(slots=True)
class _Candidate:
    surface: str
    hint: EntityType
    first: int  # token range [first, last]
    last: int
    single_acronym: bool = False


@dataclass(slots=True)
class _Lexicon:
    """Counts, over everything seen, of each word in lower case and capitalised mid-sentence."""

    lower: Counter[str] = field(default_factory=Counter)
    capital: Counter[str] = field(default_factory=Counter)

    def update(self, tk: Tokens) -> None:
        for tok, kind, cap, init in zip(tk.toks, tk.kinds, tk.caps, tk.initial, strict=True):
            if kind != WORD:
                continue
            if cap:
                if not init and tok[0].isupper():
                    self.capital[tok.lower()] += 1
            elif tok[0].isalpha():
                self.lower[tok] += 1

    def common(self, word: str, *, strict: bool) -> bool:
        """Is a sentence-initial capitalised ``word`` an ordinary word rather than a name?"""
        lw = word.lower()
        if "-" in lw and lw.split("-", 1)[0] in NAME_STOP_WORDS | self.lower.keys():
            return True  # "Private-sector", "Well-known"
        if (
            not strict
            and not self.capital[lw]
            and (lw.endswith("ing") or (lw.endswith("ed") and len(lw) >= 7))
            and lw not in FIRST_NAMES
        ):
            return True  # "Participating", "Sustained": a verb form, not a name
        if strict:  # first word of a multi-word name: only clear evidence strips it
            if lw in FIRST_NAMES:
                return False
            return lw in NAME_STOP_WORDS
        if lw in NAME_STOP_WORDS:
            return True
        lo = self.lower[lw]
        return lo > 0 and lo >= self.capital[lw]


def _guess_type(words: list[str], surface: str, prev_word: str) -> EntityType:
    lows = [w.rstrip(".").lower() for w in words]
    if not lows:
        return "OTHER"
    if lows[0] in HONORIFICS or lows[0] in ("sir", "dame", "lord", "lady"):
        return "PERSON"
    if any(low in ORG_CUES for low in lows) or lows[-1] in CORP_SUFFIXES:
        return "ORG"
    if any(low in PLACE_CUES for low in lows):
        return "PLACE"
    if any(any(c.isdigit() for c in w) for w in words):
        return "PRODUCT"
    if len(words) == 1 and is_shouting(surface):
        return "PLACE" if normalise_name(surface) in PLACE_ACRONYMS else "ORG"
    if len(words) >= 2 and (
        lows[0] in FIRST_NAMES
        or any(len(w) == 2 and w[0].isupper() and w[1] == "." for w in words[1:-1])
        or lows[-1] in ("jr", "sr")
    ):
        return "PERSON"
    if len(words) == 1 and lows[0] in KNOWN_PLACES:
        return "PLACE"
    if prev_word in PREP_PLACE:
        return "PLACE"
    return "OTHER"


def _schwartz_hearst(short: str, long: str) -> bool:
    """Does ``short`` abbreviate ``long`` (Schwartz & Hearst 2003, right-to-left char match)?"""
    s = [c.lower() for c in short if c.isalnum()]
    lf = long.lower()
    if len(s) < 2 or len(lf.split()) < 2 or not lf or lf[0] != s[0]:
        return False
    si, li = len(s) - 1, len(lf) - 1
    while si >= 0:
        c = s[si]
        while li >= 0 and (lf[li] != c or (si == 0 and li > 0 and lf[li - 1].isalnum())):
            li -= 1
        if li < 0:
            return False
        li -= 1
        si -= 1
    return len(lf.split()) <= min(len(s) + 5, 2 * len(s))


def _looks_acronym(tok: str) -> bool:
    uppers = sum(1 for c in tok if c.isupper())
    return 2 <= len(tok) <= 10 and uppers >= 2 and tok[0].isupper() and not ROMAN_RE.match(tok)


class RuleEntityExtractor:
    """The offline extractor: rules plus corpus statistics, no model.

    It keeps an :class:`MentionMerger` (``resolver``) and word statistics across calls, so the
    same entity gets the same id in every batch. Seed the resolver with
    ``MentionMerger.from_existing(...)`` for an incremental ingest.
    """

    def __init__(self, resolver: MentionMerger | None = None, *, max_run_tokens: int = 10) -> None:
        self.resolver = resolver if resolver is not None else MentionMerger()
        self.max_run_tokens = max_run_tokens
        self._lexicon = _Lexicon()
        self._observed = False

    def observe(self, texts: Iterable[str]) -> None:
        """Count the words of ``texts`` (a whole job) once; later extractions stop learning."""
        for text in texts:
            self._lexicon.update(tokenise(text))
        self._observed = True

    def extract(
        self,
        chunks: Sequence[tuple[str, str]],
        *,
        document_ids: Sequence[str] | None = None,
        document_acls: Mapping[str, Sequence[str]] | None = None,
    ) -> ExtractionResult:
        if document_ids is not None and len(document_ids) != len(chunks):
            raise ValueError(
                f"document_ids has {len(document_ids)} items but chunks has {len(chunks)}; "
                "pass one document id per chunk or none"
            )
        tokenised = [tokenise(text) for _, text in chunks]
        if not self._observed:
            for tk in tokenised:
                self._lexicon.update(tk)

        # group chunk indexes by document, in order of first appearance
        groups: dict[str, list[int]] = {}
        for i in range(len(chunks)):
            groups.setdefault(document_ids[i] if document_ids is not None else "", []).append(i)

        per_chunk: list[Counter[str]] = [Counter() for _ in chunks]
        acls = document_acls or {}
        for doc_id, indexes in groups.items():
            surfaces, owners, acronyms = self._document_mentions(
                [chunks[i][1] for i in indexes], [tokenised[i] for i in indexes]
            )
            owners = [indexes[j] for j in owners]
            ids = self.resolver.resolve_document(
                surfaces, acronyms, acl=acls.get(doc_id) or (PUBLIC,)
            )
            for owner, eid in zip(owners, ids, strict=True):
                if eid is not None:
                    per_chunk[owner][eid] += 1

        mention_counts: dict[tuple[str, str], int] = {}
        chunk_sets: dict[str, set[str]] = {}
        for (chunk_id, _), counts in zip(chunks, per_chunk, strict=True):
            for eid, n in counts.items():
                mention_counts[(chunk_id, eid)] = mention_counts.get((chunk_id, eid), 0) + n
            chunk_sets.setdefault(chunk_id, set()).update(counts)
        pair_counts: Counter[tuple[str, str]] = Counter()
        for ids_in_chunk in chunk_sets.values():
            pair_counts.update(combinations(sorted(ids_in_chunk), 2))

        touched = {eid for _, eid in mention_counts}
        result = ExtractionResult(
            entities=self.resolver.records(touched),
            mentions=tuple(
                Mention(chunk_id=c, entity_id=e, count=n)
                for (c, e), n in sorted(mention_counts.items())
            ),
            relations=tuple(
                Relation(source_id=a, target_id=b, weight=float(n))
                for (a, b), n in sorted(pair_counts.items())
            ),
        )
        log.debug(
            "extracted %d entities, %d mentions, %d relations from %d chunks",
            len(result.entities),
            len(result.mentions),
            len(result.relations),
            len(chunks),
        )
        return result

    # -- candidates ---------------------------------------------------------------------------

    def _document_mentions(
        self, texts: Sequence[str], tokenised: Sequence[Tokens]
    ) -> tuple[list[tuple[str, EntityType]], list[int], list[tuple[str, str]]]:
        """The ``(surface, type hint)`` mentions of one document's chunks, the index (into
        ``texts``) of the chunk each comes from, and the acronyms the document defines.
        The one place a different source of mentions (an LLM) plugs in; resolution,
        de-duplication, counts and relations stay the same."""
        surfaces: list[tuple[str, EntityType]] = []
        owners: list[int] = []
        acronyms: list[tuple[str, str]] = []
        for j, tk in enumerate(tokenised):
            cands, defs = self._candidates(tk)
            surfaces.extend((c.surface, c.hint) for c in cands)
            owners.extend([j] * len(cands))
            acronyms.extend(defs)
        return surfaces, owners, acronyms

    def _candidates(self, tk: Tokens) -> tuple[list[_Candidate], list[tuple[str, str]]]:
        n = len(tk.toks)
        consumed = [False] * n
        cands: list[_Candidate] = []
        starts = tk.starts

        # dates (by character span)
        for m in _DATE_TEXT_RE.finditer(tk.text):
            first = last = -1
            for i in range(n):
                if starts[i] >= m.start() and tk.ends[i] <= m.end():
                    consumed[i] = True
                    first = i if first < 0 else first
                    last = i
            if first >= 0:
                cands.append(_Candidate(m.group(), "DATE", first, last))

        # quoted title-case names
        i = 0
        while i < n:
            if tk.kinds[i] == PUNCT and tk.toks[i] in _QUOTE_OPEN:
                close = next(
                    (j for j in range(i + 1, min(n, i + 12)) if tk.toks[j] in _QUOTE_CLOSE), -1
                )
                if close > i + 1 and self._title_case(tk, i + 1, close - 1):
                    for j in range(i + 1, close):
                        consumed[j] = True
                    surface = tk.text[starts[i + 1] : tk.ends[close - 1]]
                    cands.append(_Candidate(surface, "OTHER", i + 1, close - 1))
                    i = close + 1
                    continue
                if close > i:
                    i = close + 1
                    continue
            i += 1

        # capitalised runs
        i = 0
        while i < n:
            if consumed[i] or not tk.caps[i]:
                i += 1
                continue
            end = self._run_end(tk, i, consumed)
            cand = self._make_candidate(tk, i, end)
            if cand is not None:
                cands.append(cand)
            i = end + 1

        cands.sort(key=lambda c: c.first)
        return self._acronym_definitions(tk, cands)

    @staticmethod
    def _title_case(tk: Tokens, first: int, last: int) -> bool:
        words = 0
        for j in range(first, last + 1):
            tok = tk.toks[j]
            if tk.kinds[j] != WORD:
                if tok not in ("'", "-", "\u2019", "&", ":"):
                    return False
                continue
            words += 1
            if words == 1 and not tk.caps[j]:
                return False
            if not tk.caps[j] and tok.lower() not in TITLE_SMALL:
                return False
        return 1 <= words <= 8

    def _run_end(self, tk: Tokens, i: int, consumed: list[bool]) -> int:
        """Index of the last token of the capitalised run starting at ``i``."""
        n, toks, kinds, caps = len(tk.toks), tk.toks, tk.kinds, tk.caps

        def word_cap(k: int) -> bool:
            return k < n and kinds[k] == WORD and caps[k] and not consumed[k]

        end = i
        while True:
            cur = toks[end]
            if cur.endswith(("'s", "\u2019s")) and len(cur) > 2 and end > i:
                break  # "Ada Lovelace's Analytical Engine"; but "King's College" stays whole
            k = end + 1
            if k >= n or consumed[k]:
                break
            if toks[k] == "." and kinds[k] == PUNCT:
                low = cur.lower()
                if (low in NAME_ABBREVIATIONS or (len(cur) == 1 and cur.isupper())) and word_cap(
                    k + 1
                ):
                    end = k + 1
                    continue
                if low in CORPORATE_ABBREVIATIONS:
                    end = k  # keep the abbreviation's period in the surface
                break
            if tk.starts[k] - tk.ends[end] > 1 and tk.text[tk.ends[end] : tk.starts[k]].count("\n"):
                break
            if word_cap(k):
                end = k
                continue
            if (kinds[k] == WORD and toks[k].lower() in CONNECTORS) or toks[k] == "&":
                j = k
                while (
                    j < n
                    and j - k < 2
                    and (
                        (kinds[j] == WORD and toks[j].lower() in CONNECTORS and not caps[j])
                        or toks[j] == "&"
                    )
                ):
                    j += 1
                if word_cap(j):
                    end = j
                    continue
                break
            if (
                kinds[k] == WORD
                and toks[k].isdigit()
                and len(toks[k]) <= 3
                and cur.isalpha()
                and cur.lower() not in MONTHS
                and cur.lower() not in NOT_BEFORE_NUMBER
                and not (
                    k + 1 < n and toks[k + 1] in (",", ".") and k + 2 < n and toks[k + 2].isdigit()
                )
            ):
                end = k
            break
        return end

    def _make_candidate(self, tk: Tokens, i: int, end: int) -> _Candidate | None:
        toks, kinds = tk.toks, tk.kinds
        idx = [j for j in range(i, end + 1) if kinds[j] == WORD]
        # sentence-initial ordinary words are not names
        if idx and tk.initial[idx[0]]:
            first = toks[idx[0]]
            if (
                not _looks_acronym(first)
                and not any(c.isdigit() for c in first)
                and (
                    self._lexicon.common(first, strict=len(idx) > 1)
                    # "Shares of Acme": a common word before a connector is not part of the name
                    or (
                        len(idx) > 1
                        and toks[idx[1]].lower() in CONNECTORS
                        and self._lexicon.common(first, strict=False)
                    )
                    # "Historically, ...": a sentence adverb
                    or (len(idx) == 1 and ADVERB_RE.search(first) is not None)
                )
            ):
                idx = idx[1:]
        # leading stop words / connectors left over ("In The Hague" keeps "The")
        while idx and (
            toks[idx[0]].lower() in CONNECTORS - {"the"}
            or (toks[idx[0]].lower() in NAME_FUNCTION_WORDS and not _looks_acronym(toks[idx[0]]))
            or not tk.caps[idx[0]]
        ):
            idx = idx[1:]
        while idx and (
            toks[idx[-1]].lower() in CONNECTORS
            or toks[idx[-1]] == "&"
            or (toks[idx[-1]].lower() in NAME_FUNCTION_WORDS and not _looks_acronym(toks[idx[-1]]))
        ):
            idx = idx[:-1]
            end = idx[-1] if idx else end  # "Alphons Kannanthanam Since": drop the tail
        if not idx or len(idx) > self.max_run_tokens:
            return None
        words = [toks[j] for j in idx]
        cut = 0
        head, _, tail = words[-1].rpartition("-")
        if (
            head
            and tail.isalpha()
            and tail.islower()
            and (tail in NAME_STOP_WORDS or self._lexicon.lower[tail] > 0)
        ):
            cut = len(tail) + 1  # "New York-based", "Trinidadian-born": drop the suffix
            words[-1] = head
        if len(words) == 1:
            w = words[0]
            low = w.lower().rstrip(".")
            if (
                (low in NAME_STOP_WORDS and not _looks_acronym(w))
                or low in MONTHS
                or low in WEEKDAYS
                or low in TITLE_WORDS
                or low in CORP_SUFFIXES
                or low.replace(".", "") in ERAS
                or len(w) == 1
                or (ROMAN_RE.match(w) and len(w) <= 4)
            ):
                return None
        elif all(w.lower() in NAME_STOP_WORDS or w.lower() in CONNECTORS for w in words):
            return None
        elif (
            len(words) == 2
            and words[1].isdigit()
            and self._lexicon.lower[words[0].lower()] > self._lexicon.capital[words[0].lower()]
        ):
            return None  # "Length 37", "Chapter 11": an ordinary word and a number
        surface = tk.text[tk.starts[idx[0]] : tk.ends[end] - cut if cut else tk.ends[end]]
        prev = idx[0] - 1
        prev_word = toks[prev].lower() if prev >= 0 and kinds[prev] == WORD else ""
        hint = _guess_type(words, surface, prev_word)
        return _Candidate(
            surface, hint, idx[0], end, single_acronym=len(words) == 1 and _looks_acronym(words[0])
        )

    @staticmethod
    def _acronym_definitions(
        tk: Tokens, cands: list[_Candidate]
    ) -> tuple[list[_Candidate], list[tuple[str, str]]]:
        """Find ``Long Form (LF)`` and ``LF (Long Form)``; drop the parenthesised mention."""
        toks = tk.toks
        defs: list[tuple[str, str]] = []
        drop: set[int] = set()
        for a, (c, d) in enumerate(pairwise(cands)):
            paren = c.last + 1
            if paren >= len(toks) or toks[paren] != "(" or d.first != paren + 1:
                continue
            closer = d.last + 1
            if closer < len(toks) and toks[closer] not in (")", ";", ","):
                continue
            if d.single_acronym and not c.single_acronym and _schwartz_hearst(d.surface, c.surface):
                defs.append((d.surface, c.surface))
                drop.add(a + 1)
            elif (
                c.single_acronym and not d.single_acronym and _schwartz_hearst(c.surface, d.surface)
            ):
                defs.append((c.surface, d.surface))
                drop.add(a + 1)
        return [c for a, c in enumerate(cands) if a not in drop], defs


def split_by_document(
    result: ExtractionResult, chunk_documents: dict[str, str]
) -> dict[str, ExtractionResult]:
    """Cut one batch's extraction into one result per document (``chunk id -> document id``).

    Each document gets its chunks' mentions, the entities they mention and, as relations, the
    pairs of entities mentioned together in one of its chunks (weight: how many of its chunks).
    """
    records = {e.id: e for e in result.entities}
    mentions: dict[str, list[Mention]] = {}
    per_chunk: dict[str, set[str]] = {}
    for m in result.mentions:
        mentions.setdefault(chunk_documents[m.chunk_id], []).append(m)
        per_chunk.setdefault(m.chunk_id, set()).add(m.entity_id)
    pairs: dict[str, Counter[tuple[str, str]]] = {}
    for chunk_id, ids in per_chunk.items():
        pairs.setdefault(chunk_documents[chunk_id], Counter()).update(combinations(sorted(ids), 2))
    out: dict[str, ExtractionResult] = {}
    for doc in dict.fromkeys(chunk_documents.values()):
        doc_mentions = mentions.get(doc, [])
        mentioned = sorted({m.entity_id for m in doc_mentions})
        out[doc] = ExtractionResult(
            entities=tuple(records[i] for i in mentioned),
            mentions=tuple(doc_mentions),
            relations=tuple(
                Relation(source_id=a, target_id=b, weight=float(n))
                for (a, b), n in sorted(pairs.get(doc, Counter()).items())
            ),
        )
    return out
