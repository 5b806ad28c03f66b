"""Query analysis: what kind of question this is, how complex, which modalities it wants back,
which entities it names.

The kind of question (its class) comes from the intent classifier over the question's MiniLM
embedding (:mod:`kgrag.planner.intent`); when it is unsure, the question is a content search.
Rules over the text only extract parameters: years, document types, the summarised document, the
sides of a comparison, name-like spans, complexity cues, the modalities a question names.

:func:`analyse` returns a :class:`QueryAnalysis` the rule planner builds its plan from. Entity
mentions are resolved by a callback (the agent looks the candidate spans up in the graph's
full-text index); without one, ``entity_mentions`` is empty and only the candidates are reported.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Literal

from kgrag.core import Frozen
from kgrag.errors import PlanError
from kgrag.planner.comparison import compared_sides
from kgrag.planner.intent import (
    Intent,
    IntentClassifier,
    IntentPrediction,
    default_intent_classifier,
)
from kgrag.planner.params import MAX_FILE_NAME_CHARS, MAX_FILE_NAMES, Modality
from kgrag.planner.periods import Period, named_period
from kgrag.text.stopwords import FINITE_AUXILIARIES, FUNCTION_WORDS
from kgrag.text.tokens import (
    QuestionToken,
    content_words,
    is_content_word,
    normalise_question,
    question_sentence_starts,
    tokenise_question,
)
from kgrag.text.words import word_set

__all__ = [
    "DocumentType",
    "QueryAnalysis",
    "QueryClass",
    "ResolvedEntity",
    "analyse",
    "mention_candidates",
    "named_document_types",
    "named_spans",
    "resolve_mentions",
]

logger = logging.getLogger(__name__)

DocumentType = Literal[
    "pdf",
    "text",
    "image",
    "audio",
    "man",
    "csv",
    "spreadsheet",
    "html",
    "markdown",
    "json",
    "yaml",
    "xml",
    "toml",
]
"""A document type a question names: a stored modality, or a text format ("man": man pages,
:data:`~kgrag.planner.params.DocumentFormat`)."""
MAX_CANDIDATES = 48
"""At most this many candidate spans are passed to the entity resolver."""


class QueryClass(StrEnum):
    LISTING = "listing"
    CONTENT_SEARCH = "content_search"
    DOCUMENT_SUMMARY = "document_summary"
    METADATA_SEARCH = "metadata_search"
    COMPARISON = "comparison"


class ResolvedEntity(Frozen):
    """A graph entity a span of the question was matched to."""

    id: str
    name: str
    score: float
    surface: str
    """The span of the question that matched (one of the candidates)."""


class QueryAnalysis(Frozen):
    """What the rules found in one question."""

    text: str
    query_class: QueryClass
    complexity: Literal["simple", "complex"]
    modalities: frozenset[Modality]
    """What the user wants back; always contains "text"."""
    entity_mentions: tuple[ResolvedEntity, ...] = ()
    """Resolved entities, one per entity id, best score first."""
    key_terms: tuple[str, ...] = ()
    """Content words, lowercased, stop words removed, in question order, no repeats."""
    candidates: tuple[str, ...] = ()
    """The candidate mention spans that were passed to the resolver."""
    named_spans: tuple[str, ...] = ()
    """The spans that look like names: quoted, capitalised, or holding digits ("X-200")."""
    cues: tuple[str, ...] = ()
    """Why the rules decided as they did (for the plan's trace)."""
    period: Period | None = None
    """The period a metadata search names ("reports from 2023", "added last week")."""
    document_types: tuple[DocumentType, ...] = ()
    """Document types named in a metadata search ("pdfs", "recordings")."""
    target: str | None = None
    """The document a summary request names ("summarise the onboarding guide")."""
    compared: tuple[str, ...] = ()
    """The sides of a comparison ("compare A and B", "A vs B")."""
    intent: IntentPrediction | None = None
    """The intent classifier's decision (class, probability, margin) behind ``query_class``."""
    file_names: tuple[str, ...] = ()
    """File names the question names ("what is in jfk.flac?"), lower case: the rule plan looks
    in the documents of that name first."""

    @property
    def is_complex(self) -> bool:
        return self.complexity == "complex"

    @property
    def asks_about_recordings(self) -> bool:
        """The intent classifier read the question as one about recordings ("what is said in
        the recording?"), not one that merely names the word ("who recorded the song?")."""
        return self.intent is not None and self.intent.intent is Intent.RECORDING


# --------------------------------------------------------------------------- vocabulary


_COMMON_WORDS = word_set(
    """reports report documents document files file pdfs pdf recordings recording images image
    pictures picture photos photo notes emails meetings meeting slides transcripts find search
    look explain describe summarise summarize compare tell give list show get"""
)
"""Words that are capitalised at the start of a sentence or as a file type, but are no names."""
_CONNECTORS = word_set(
    "of the and de del della der den van von la le du di da y for with on & al bin ibn"
)
"""Lowercase words that may sit inside a capitalised name ("Journal of Physics")."""
_SPLIT_CONNECTORS = frozenset({"and", "with", "&"})
_REL_PRONOUNS = frozenset({"that", "which", "who", "whom", "whose", "where"})
_TIME_NOUNS = frozenset({"year", "day", "time", "date", "month", "period", "era", "moment", "week"})
_PREPOSITIONS = word_set(
    "in at on of from for by with to during under into onto over about after before"
)
_DETERMINERS = word_set(
    "the a an this that these those each every any its their his her our my your another other some"
)
_NOT_RELATIVE_AFTER = word_set(
    """say says said know knows knew think thinks thought mean means meant claim claims claimed
    show shows showed state states stated true sure so such believe believes note notes noted
    mention mentions mentioned indicate indicates indicated confirm confirms confirmed is was
    are were"""
)
_COPULAS = word_set("is was are were")
_ARTICLES = frozenset({"the", "a", "an"})
_WH_WORDS = word_set("who what where when which whom whose how")

# ----------------------------------------------------------------------------- patterns

_QUOTED = re.compile(r"\"([^\"]{1,120})\"|(?<!\w)'([^']{1,120})'(?!\w)")
_ABOUT_DOC = re.compile(r"^what(?:'s| is| are| was)\s+(.{1,120}?)\s+(?:about|on)\s*[?.!]*$")
"""A "what is X about" question: X is the document to summarise."""
_SUMMARY_FRAME = word_set(
    """what what's whats is are was the a an me us please can could would you tell give
    summarise summarize summary overview gist recap about briefly brief short shortly in
    nutshell main key points of for cover covers covered does do say says overall broadly
    generally describe contents content topic topics subject idea highlights takeaways sum up
    outline explain quick one-paragraph synopsis executive document file"""
)
"""Words that frame a summary request rather than name its document."""
_FILE_NOUNS = (
    r"(?:(?:data|config(?:uration)?|settings?)\s+)?(?:files?|documents?|docs|data|records|"
    r"manifests?|configs?|configurations?)\b"
)
_DOC_TYPES: tuple[tuple[re.Pattern[str], DocumentType], ...] = (
    (re.compile(r"\bpdfs?\b|\.pdf\b"), "pdf"),
    (re.compile(r"\b(?:recordings?|audio|podcasts?|voicemails?|calls)\b"), "audio"),
    (re.compile(r"\b(?:images?|pictures?|photos?|photographs?|drawings?|diagrams?)\b"), "image"),
    (re.compile(r"\b(?:text files?|notes|txt)\b"), "text"),
    (re.compile(r"\b(?:man(?:ual)?[ -]?pages?)\b"), "man"),
    (re.compile(r"\b(?:csvs?|tsvs?)\b"), "csv"),
    (re.compile(r"\b(?:spreadsheets?|workbooks?)\b"), "spreadsheet"),
    (re.compile(r"\b(?:html (?:pages?|files?|documents?)|web ?pages?)\b"), "html"),
    (re.compile(r"\b(?:markdown|md files?)\b"), "markdown"),
    # a data format is named with a noun of files ("the YAML files", ".json documents"): "which
    # notes mention JSON?" asks about JSON, not for JSON files
    (re.compile(rf"(?:\b|\.)json\s+{_FILE_NOUNS}"), "json"),
    (re.compile(rf"(?:\b|\.)ya?ml\s+{_FILE_NOUNS}"), "yaml"),
    (re.compile(rf"(?:\b|\.)xml\s+{_FILE_NOUNS}"), "xml"),
    (re.compile(rf"(?:\b|\.)toml\s+{_FILE_NOUNS}"), "toml"),
)


_IMAGE = re.compile(
    r"\b(?:pictures?|images?|drawings?|photos?|photographs?|diagrams?|illustrations?|"
    r"screenshots?|sketch(?:es)?|charts?|logos?|figures?(?! out)|look(?:s|ed)? like|"
    r"what does .{1,60}? look like|shown in|depicted|depicts?)\b"
)
_AUDIO = re.compile(
    r"\b(?:recordings?|recorded|audio|podcasts?|voicemails?|transcripts?|spoken|speaker)\b|"
    r"\b(?:in|during|from|on|at)\s+(?:the|a|an|this|that|our|my|their|last|yesterday's|"
    r"today's|monday's|friday's)?\s*(?:[\w-]+\s+){0,2}?(?:meetings?|calls?|conversations?|"
    r"interviews?|stand-?ups?|webinars?|hearings?)\b|"
    r"\bwhat (?:was|were|is being|has been) (?:said|discussed|mentioned)\b|"
    r"\bwho (?:said|says|mentioned|asked|spoke|talked|was speaking)\b|"
    r"\b(?:said|say|says|mentioned|discussed) (?:in|during|on) (?:the|a|this|that|our)\b"
)

_COMPLEX_CUES = re.compile(
    r"\b(?:compare[sd]?|comparing|comparison|versus|vs\.?|differences? between|both|and then|"
    r"as well as|in common|relationship between|relation between|link between|"
    r"connection between|connected to|related to|and (?:who|what|when|where|which|how))\b"
)
_OF_RELATION = re.compile(
    r"\b(?:the|a|an|its|their|his|her)\s+(?:[\w-]+\s+){0,2}?[\w-]+\s+of\b(?!\s+(?:the\s+)?"
    r"(?:type|kind|sort)\b)"
)
_STRANDED = re.compile(r"\b(?:of|from|in|for|with|to|at|on)\s*[?.!]*\s*$")
_PARTICIPLES = word_set(
    """named called located based known founded made produced written directed published owned
    played born formed created designed built developed maintained operated managed run released
    composed performed sung recorded situated headquartered installed used"""
)
_ING_PARTICIPLES = word_set(
    """containing including featuring starring having playing owning using allowing producing
    making connecting linking covering serving hosting holding running operating managing
    supplying manufacturing building writing directing"""
)
_PASSIVE_AUX = word_set("is was are were be been being get got gets")
_PARTICIPLE_FOLLOWERS = word_set("by in at after as from for under on to with near into")


# ----------------------------------------------------------------------------------- API


_CLASS_OF_INTENT = {
    Intent.LISTING: QueryClass.LISTING,
    Intent.SUMMARY: QueryClass.DOCUMENT_SUMMARY,
    Intent.METADATA: QueryClass.METADATA_SEARCH,
    Intent.COMPARISON: QueryClass.COMPARISON,
    Intent.CONTENT: QueryClass.CONTENT_SEARCH,
    Intent.PICTURE: QueryClass.CONTENT_SEARCH,
    Intent.RECORDING: QueryClass.CONTENT_SEARCH,
}


def analyse(
    question: str,
    resolve_entities: Callable[[Sequence[str]], Sequence[ResolvedEntity]] | None = None,
    intents: IntentClassifier | None = None,
    today: date | None = None,
) -> QueryAnalysis:
    """Analyse one question. ``resolve_entities`` receives the candidate mention spans (capitalised
    spans, quoted spans, tokens with digits, then key-term n-grams of 1-3 words) and returns the
    graph entities they match; each result's ``surface`` should be the candidate it came from.
    ``intents`` classifies the question (default: over the bundled all-MiniLM-L6-v2); relative
    periods ("added last week") count from ``today`` (default: today in UTC)."""
    text = normalise_question(question)
    if not text:
        raise PlanError("the question is empty; there is nothing to plan")
    lowered = text.lower()
    tokens = tokenise_question(text)
    cues: list[str] = []

    named = _named_spans(text, tokens)
    terms = content_words(tokens)
    candidates = _candidates(text, tokens, named)

    entities: tuple[ResolvedEntity, ...] = ()
    if resolve_entities is not None and candidates:
        entities = _dedupe_entities(resolve_entities(candidates))

    intent = (intents or default_intent_classifier()).classify(text)
    query_class = _CLASS_OF_INTENT[intent.intent]
    cues.append(f"class {query_class}: {intent.describe()}")

    complexity_cues = _complexity_cues(text, lowered, tokens, named, entities)
    cues.extend(complexity_cues)

    modalities: set[Modality] = {"text"}
    if intent.intent is Intent.PICTURE:
        modalities.add("image")
    if intent.intent is Intent.RECORDING:
        modalities.add("audio")
    if match := _IMAGE.search(lowered):
        modalities.add("image")
        cues.append(f"modality image: {match.group(0)!r}")
    if match := _AUDIO.search(lowered):
        modalities.add("audio")
        cues.append(f"modality audio: {match.group(0)!r}")

    period: Period | None = None
    document_types: tuple[DocumentType, ...] = ()
    if query_class is QueryClass.METADATA_SEARCH:
        period = named_period(lowered, today or datetime.now(UTC).date())
        document_types = named_document_types(lowered)

    analysis = QueryAnalysis(
        text=text,
        query_class=query_class,
        complexity="complex" if complexity_cues else "simple",
        modalities=frozenset(modalities),
        entity_mentions=entities,
        key_terms=terms,
        candidates=candidates,
        named_spans=named,
        cues=tuple(cues),
        period=period,
        document_types=document_types,
        target=_summary_target(text) if query_class is QueryClass.DOCUMENT_SUMMARY else None,
        compared=compared_sides(text) if query_class is QueryClass.COMPARISON else (),
        intent=intent,
        file_names=named_files(text),
    )
    logger.debug(
        "query analysed: class=%s complexity=%s modalities=%s entities=%d",
        analysis.query_class,
        analysis.complexity,
        sorted(analysis.modalities),
        len(analysis.entity_mentions),
    )
    return analysis


#: A file name, or a path whose last part is one: a word (letters, digits, ``_ - .``) then a dot
#: and an extension of 2-8 characters that starts with a letter (``jfk.flac``, ``README.md``,
#: ``docs/users-and-groups.html``); not a version (``2.13``), an abbreviation (``e.g.``, ``U.S.``)
#: or a sentence's end.
_FILE_NAME = re.compile(r"(?<![\w.-])([\w][\w./-]*\.[A-Za-z][A-Za-z0-9]{1,7})(?![\w-])")


def named_files(text: str) -> tuple[str, ...]:
    """The file names ``text`` names, lower case, in order (of a path, its last part): at most
    :data:`MAX_FILE_NAMES`, none longer than a file name can be (:data:`MAX_FILE_NAME_CHARS`)."""
    matches = _FILE_NAME.finditer(text.replace("\\", "/"))
    names = (m.group(1).rsplit("/", 1)[-1].lower() for m in matches)
    kept = (n for n in names if "." in n and len(n) <= MAX_FILE_NAME_CHARS)
    return tuple(dict.fromkeys(kept))[:MAX_FILE_NAMES]


def named_document_types(text: str) -> tuple[DocumentType, ...]:
    """The document types a question names ("pdfs", "recordings", "pictures"), in a fixed order."""
    lowered = text.lower()
    return tuple(dict.fromkeys(kind for pattern, kind in _DOC_TYPES if pattern.search(lowered)))


def named_spans(text: str) -> tuple[str, ...]:
    """The spans of ``text`` that look like names: quoted, capitalised, or holding digits."""
    normalised = normalise_question(text)
    return _named_spans(normalised, tokenise_question(normalised))


def resolve_mentions(
    question: str, resolve_entities: Callable[[Sequence[str]], Sequence[ResolvedEntity]]
) -> tuple[ResolvedEntity, ...]:
    """The graph entities ``question`` names (as in :func:`analyse`, without classifying it)."""
    candidates = mention_candidates(question)
    return _dedupe_entities(resolve_entities(candidates)) if candidates else ()


def mention_candidates(question: str) -> tuple[str, ...]:
    """The spans of ``question`` worth looking up as entities, most name-like first: quoted and
    capitalised spans and tokens with digits, then key-term n-grams (3, 2, then 1 words). Case is
    kept; repeats (ignoring case) are dropped; at most :data:`MAX_CANDIDATES`."""
    text = normalise_question(question)
    tokens = tokenise_question(text)
    return _candidates(text, tokens, _named_spans(text, tokens))


# ------------------------------------------------------------------------------- helpers


def _named_spans(text: str, tokens: Sequence[QuestionToken]) -> tuple[str, ...]:
    """Quoted spans, capitalised spans (with connectors inside), tokens holding digits."""
    spans: list[str] = []
    for match in _QUOTED.finditer(text):
        quoted = (match.group(1) or match.group(2) or "").strip()
        if quoted:
            spans.append(quoted)

    starts = question_sentence_starts(text, tokens)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        sentence_initial_stop = i in starts and token.lower in FUNCTION_WORDS
        if not token.capitalised or sentence_initial_stop or token.lower in {"i"}:
            i += 1
            continue
        j = i  # last token of the span
        k = i + 1
        while not tokens[j].possessive and k < len(tokens):
            gap = text[tokens[k - 1].end : tokens[k].start]
            if gap.strip() not in ("", "-", "&") or k in starts:
                break
            if tokens[k].capitalised:
                j = k
                k += 1
            elif tokens[k].lower in _CONNECTORS:
                k += 1
            else:
                break
        span_tokens = tokens[i : j + 1]
        span = text[span_tokens[0].start : span_tokens[-1].end]
        lone = len(span_tokens) == 1 and not token.text.isupper()
        if not (lone and (token.lower in FUNCTION_WORDS or token.lower in _COMMON_WORDS)):
            spans.append(span)
            if span_tokens[0].lower in {"the", "a", "an"} and len(span_tokens) > 1:
                spans.append(text[span_tokens[1].start : span_tokens[-1].end])
            pieces: list[list[QuestionToken]] = [[]]
            for t in span_tokens:
                if t.lower in _SPLIT_CONNECTORS:
                    pieces.append([])
                else:
                    pieces[-1].append(t)
            if len(pieces) > 1:
                for piece in pieces:
                    while piece and piece[0].lower in _CONNECTORS:
                        piece.pop(0)
                    if piece and any(t.capitalised for t in piece):
                        spans.append(text[piece[0].start : piece[-1].end])
        i = j + 1

    seen: dict[str, str] = {}
    for span in spans:
        seen.setdefault(span.lower(), span)
    return tuple(seen.values())


def _candidates(
    text: str, tokens: Sequence[QuestionToken], named: Sequence[str]
) -> tuple[str, ...]:
    ordered: dict[str, str] = {}
    for span in [*named, *_ngrams(text, tokens)]:
        ordered.setdefault(span.lower(), span)
    return tuple(ordered.values())[:MAX_CANDIDATES]


def _ngrams(text: str, tokens: Sequence[QuestionToken]) -> list[str]:
    """Key-term n-grams (3, 2, 1 words) within runs of adjacent content words."""
    runs: list[list[QuestionToken]] = []
    current: list[QuestionToken] = []
    for token in tokens:
        contiguous = (
            bool(current)
            and not current[-1].possessive
            and (text[current[-1].end : token.start].strip() in ("", "-"))
        )
        if is_content_word(token):
            if not contiguous:
                if current:
                    runs.append(current)
                current = []
            current.append(token)
        else:
            if current:
                runs.append(current)
            current = []
    if current:
        runs.append(current)
    grams: list[str] = []
    for n in (3, 2, 1):
        for run in runs:
            for start in range(len(run) - n + 1):
                grams.append(text[run[start].start : run[start + n - 1].end])
    return grams


def _dedupe_entities(found: Sequence[ResolvedEntity]) -> tuple[ResolvedEntity, ...]:
    best: dict[str, ResolvedEntity] = {}
    for entity in found:
        kept = best.get(entity.id)
        if kept is None or entity.score > kept.score:
            best[entity.id] = entity
    return tuple(sorted(best.values(), key=lambda e: -e.score))


def _complexity_cues(
    text: str,
    lowered: str,
    tokens: Sequence[QuestionToken],
    named: Sequence[str],
    entities: Sequence[ResolvedEntity],
) -> list[str]:
    """The reasons to call the question complex (none: simple)."""
    cues: list[str] = []
    if match := _COMPLEX_CUES.search(lowered):
        cues.append(f"complex: relational cue {match.group(0)!r}")

    relative = _relative_clause(tokens)
    if relative:
        cues.append(f"complex: relative clause {relative!r}")
    if reduced := _reduced_relative(tokens):
        cues.append(f"complex: reduced relative clause {reduced!r}")
    elif _embedded_clause(tokens):
        cues.append("complex: a clause inside the question (two finite verbs)")

    possessives = [t for t in tokens if t.possessive]
    ofs = len(_OF_RELATION.findall(lowered)) + (1 if _STRANDED.search(lowered) else 0)
    if len(possessives) >= 2:
        cues.append("complex: possessive chain")
    elif possessives and (ofs or not _simple_possessive(tokens)):
        cues.append(f'complex: possessive "{possessives[0].text}\'s" inside a relation')
    elif ofs >= 2:
        cues.append("complex: chained 'of' relations")

    if len(question_sentence_starts(text, tokens)) >= 2:
        cues.append("complex: several sentences")

    distinct = _distinct_named(named, entities)
    if distinct >= 2:
        cues.append(f"complex: {distinct} entities named")
    return cues


def _relative_clause(tokens: Sequence[QuestionToken]) -> str | None:
    """A relative pronoun after a noun phrase ("the country where", "the county in which")."""
    lowered = [t.lower for t in tokens]
    leading = 0  # the question's first words that are prepositions ("In which ...")
    while leading < len(lowered) and lowered[leading] in _PREPOSITIONS:
        leading += 1
    for i, word in enumerate(lowered):
        is_when = word == "when" and i > 0 and lowered[i - 1] in _TIME_NOUNS
        if (word not in _REL_PRONOUNS and not is_when) or i == 0:
            continue
        if i <= leading:
            continue  # "In which country ...": the question's own wh-word
        last = lowered[i - 1]
        if last in _NOT_RELATIVE_AFTER:
            continue
        if i - (last in _PREPOSITIONS) == 0:  # no noun before the pronoun
            continue
        window = tokens[max(0, i - 6) : i]
        if any(t.lower in _DETERMINERS for t in window[:-1]) or any(
            t.capitalised for t in window if t.lower not in _WH_WORDS
        ):
            return " ".join(t.text for t in tokens[max(0, i - 3) : i + 1])
    return None


def _reduced_relative(tokens: Sequence[QuestionToken]) -> str | None:
    """A participle after a noun phrase ("the country containing X", "the book named after X",
    "the pump located in hall 3"), but not a passive main clause ("when was the tower built")."""
    for i, token in enumerate(tokens):
        word = token.lower
        if i + 1 >= len(tokens) or (word not in _PARTICIPLES and word not in _ING_PARTICIPLES):
            continue
        determiners = [j for j in range(max(0, i - 5), i - 1) if tokens[j].lower in _ARTICLES]
        if not determiners:
            continue
        j = determiners[-1]
        before = tokens[j - 1].lower if j > 0 else ""
        after = tokens[i + 1]
        if word in _ING_PARTICIPLES:
            ok = after.lower not in _PREPOSITIONS or word in {"including", "featuring"}
        else:
            ok = after.lower in _PARTICIPLE_FOLLOWERS and before not in _PASSIVE_AUX
        if ok:
            return " ".join(t.text for t in tokens[j : i + 2])
    return None


def _embedded_clause(tokens: Sequence[QuestionToken]) -> bool:
    """A wh-question with a second finite verb ("What year did the company X is part of
    dissolve?"): a clause inside the question."""
    words = [t.lower for t in tokens]
    if not words or words[0] not in _WH_WORDS:
        return False
    return sum(1 for w in words if w in FINITE_AUXILIARIES) >= 2


def _simple_possessive(tokens: Sequence[QuestionToken]) -> bool:
    """ "Who is Corey Taylor's wife?": the possessive phrase is all the question asks for."""
    words = [t.lower for t in tokens]
    if len(words) < 3 or words[0] not in _WH_WORDS or words[1] not in _COPULAS:
        return False
    index = next(i for i, t in enumerate(tokens) if t.possessive)
    owner = tokens[2 : index + 1]
    if not all(t.capitalised or t.lower == "the" for t in owner):
        return False
    rest = tokens[index + 1 :]
    return 0 < len(rest) <= 4 and all(
        t.lower == "of" or t.lower not in FUNCTION_WORDS or t.lower in {"name", "kind", "type"}
        for t in rest
    )


def _distinct_named(named: Sequence[str], entities: Sequence[ResolvedEntity]) -> int:
    """How many distinct entities the question names: resolved entities whose surface is a
    name-like span when a resolver ran, else the name-like spans not contained in another."""
    spans = [s.lower() for s in named]
    if entities:
        ids = {e.id for e in entities if e.surface.lower() in spans}
        if ids:
            return len(ids)
    outer = [s for s in spans if not any(s != o and s in o for o in spans)]
    return len(outer)


def _summary_target(text: str) -> str | None:
    """The document a summary request names: after "summarise"/"overview of"/..., the X of
    "what is X about", else the request without its framing words."""
    match = re.search(
        r"\b(?:summari[sz]e|summary of|summary for|overview of|gist of|tl;?dr of|"
        r"(?:main|key) points of|recap of)\s*:?\s+(.+)$",
        text,
        flags=re.IGNORECASE,
    )
    if match is not None:
        target = match.group(1)
    elif about := _ABOUT_DOC.search(text):
        target = about.group(1)
    else:
        words = [w for w in text.split() if w.lower().strip("?.!,:;\"'") not in _SUMMARY_FRAME]
        target = " ".join(words)
    target = re.sub(r"^(?:the|a|an|me)\s+", "", target.strip(" ?.!\"'"), flags=re.IGNORECASE)
    return target or None
